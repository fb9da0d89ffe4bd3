#include "models/model_json.hpp"

#include <cstdint>

#include <fmt/format.h>

#include "fileio/files.hpp"
#include "fileio/json_document.hpp"
#include "fileio/parse_error.hpp"
#include "models/presets.hpp"
#include "names.hpp"

namespace pipesim::models {

namespace {

using L = ModelLimits;

class ModelReader {
  public:
    explicit ModelReader(const fileio::JsonDocument& doc) : doc_(doc) {}

    TransformerConfig read() {
        // The header is optional in model files; when present it must be this one (checked
        // first: another pipesim file is named as such, not by its keys).
        doc_.optional_format("pipesim-model", 1);
        doc_.object("", {"format", "version", "name", "base", "source", "layers", "hidden", "heads",
                         "kv_heads", "ffn_hidden", "vocab", "seq_len", "mlp", "norm", "linear_bias",
                         "learned_positions", "tied_embeddings", "dropout", "stated_params"});
        TransformerConfig c;
        const bool has_base = doc_.has("/base");
        if (has_base) {
            try {
                c = find_model(doc_.text("/base", L::max_text_bytes));
            } catch (const fileio::ParseError&) {
                throw;
            } catch (const std::invalid_argument& e) {
                throw doc_.error_at("/base", e.what());
            }
            c.stated_params = 0;
        }
        c.name = doc_.has("/name") ? detail::own_name(doc_, "/name", L::max_text_bytes,
                                                      model_presets(), "model", "-custom")
                                   : (has_base ? c.name + "-custom" : "custom");
        c.source = doc_.has("/source") ? doc_.text("/source", L::max_text_bytes) : doc_.file();
        for (auto [field, target, max] : {std::tuple{"layers", &c.layers, L::max_layers},
                                          {"hidden", &c.hidden, L::max_hidden},
                                          {"heads", &c.heads, L::max_heads},
                                          {"vocab", &c.vocab, L::max_vocab}}) {
            const std::string pointer = fileio::json_pointer_child("", field);
            if (doc_.has(pointer))
                *target = static_cast<int>(doc_.integer(pointer, 1, max));
            else if (!has_base)
                throw doc_.error_at("", fmt::format("missing required field '{}' (a model needs "
                                                    "layers, hidden, heads and vocab, or a "
                                                    "'base' preset)",
                                                    field));
        }
        optional_int("/kv_heads", 0, L::max_heads, c.kv_heads);
        optional_int("/ffn_hidden", 0, L::max_ffn_hidden, c.ffn_hidden);
        optional_int("/seq_len", 1, L::max_seq_len, c.seq_len);
        if (doc_.has("/mlp"))
            c.mlp = choice("/mlp", {"gelu", "swiglu"}) == 0 ? Mlp::gelu : Mlp::swiglu;
        if (doc_.has("/norm"))
            c.norm =
                choice("/norm", {"layernorm", "rmsnorm"}) == 0 ? Norm::layernorm : Norm::rmsnorm;
        flag("/linear_bias", c.linear_bias);
        flag("/learned_positions", c.learned_positions);
        flag("/tied_embeddings", c.tied_embeddings);
        flag("/dropout", c.dropout);
        if (doc_.has("/stated_params")) c.stated_params = doc_.number("/stated_params", 0, 1e18);
        try {
            check_config(c);
        } catch (const std::invalid_argument& e) {
            throw doc_.error_at("", e.what());
        }
        return c;
    }

  private:
    void optional_int(const char* pointer, int min, int max, int& target) {
        if (doc_.has(pointer)) target = static_cast<int>(doc_.integer(pointer, min, max));
    }

    int choice(const char* pointer, std::initializer_list<std::string_view> options) {
        const fileio::JsonDocument::Value& v = doc_.at(pointer, "a string");
        int i = 0;
        for (std::string_view o : options) {
            if (v.is_string() && v.get_ref<const std::string&>() == o) return i;
            ++i;
        }
        throw doc_.error_at(pointer,
                            fmt::format("{}: expected one of {}, got {}",
                                        fileio::JsonDocument::display_name(pointer),
                                        fmt::join(options, ", "), fileio::quote_excerpt(v.dump())));
    }

    void flag(const char* pointer, bool& target) {
        if (!doc_.has(pointer)) return;
        const fileio::JsonDocument::Value& v = doc_.at(pointer, "true or false");
        if (!v.is_boolean())
            throw doc_.error_at(pointer, fmt::format("{}: expected true or false, got {}",
                                                     fileio::JsonDocument::display_name(pointer),
                                                     fileio::quote_excerpt(v.dump())));
        target = v.get<bool>();
    }

    const fileio::JsonDocument& doc_;
};

}  // namespace

TransformerConfig parse_model_json(std::string_view text, const std::string& source) {
    // A model file is one flat object: depth 1.
    const fileio::JsonDocument doc(source, std::string(text), fileio::JsonLimits{.max_depth = 4});
    return ModelReader(doc).read();
}

TransformerConfig load_model_file(const std::string& path) {
    return parse_model_json(fileio::read_text_file(path, ModelLimits::max_file_bytes), path);
}

}  // namespace pipesim::models
