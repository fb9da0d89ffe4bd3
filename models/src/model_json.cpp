#include "models/model_json.hpp"

#include <array>
#include <limits>

#include <fmt/format.h>

#include "json_source.hpp"
#include "models/presets.hpp"

namespace pipesim::models {

namespace {

using detail::JsonSource;
using json = nlohmann::json;

// clang-format off
constexpr std::array<std::string_view, 19> known_fields = {
    "format", "version", "name", "base", "source", "layers", "hidden", "heads", "kv_heads",
    "ffn_hidden", "vocab", "seq_len", "mlp", "norm", "linear_bias", "learned_positions",
    "tied_embeddings", "dropout", "stated_params"};
// clang-format on

class ModelReader {
  public:
    explicit ModelReader(const JsonSource& doc) : doc_(doc), root_(doc.root()) {}

    TransformerConfig read() {
        if (!root_.is_object()) doc_.fail("", "a model file must be one JSON object");
        for (const auto& [key, value] : root_.items()) {
            bool known = false;
            for (std::string_view k : known_fields)
                known = known || k == key;
            if (!known)
                doc_.fail("/" + key, fmt::format("unknown field '{}' (known: {})", key,
                                                 fmt::join(known_fields, ", ")));
        }
        // The header is optional in model files; when present it must be this one.
        if (root_.contains("format") && root_.at("format") != "pipesim-model")
            doc_.fail("/format", "'format' must be \"pipesim-model\"");
        if (root_.contains("version") && root_.at("version") != 1)
            doc_.fail("/version", "'version' must be 1");
        TransformerConfig c;
        const bool has_base = root_.contains("base");
        if (has_base) {
            try {
                c = find_model(text("base"));
            } catch (const std::invalid_argument& e) {
                doc_.fail("/base", e.what());
            }
            c.stated_params = 0;
        }
        c.name = root_.contains("name") ? text("name") : (has_base ? c.name + "-custom" : "custom");
        c.source = root_.contains("source") ? text("source") : doc_.source();
        for (auto [field, target] : {std::pair{"layers", &c.layers},
                                     {"hidden", &c.hidden},
                                     {"heads", &c.heads},
                                     {"vocab", &c.vocab}}) {
            if (root_.contains(field))
                *target = integer(field, 1);
            else if (!has_base)
                doc_.fail("", fmt::format("missing required field '{}' (a model needs layers, "
                                          "hidden, heads and vocab, or a 'base' preset)",
                                          field));
        }
        if (root_.contains("kv_heads")) c.kv_heads = integer("kv_heads", 0);
        if (root_.contains("ffn_hidden")) c.ffn_hidden = integer("ffn_hidden", 0);
        if (root_.contains("seq_len")) c.seq_len = integer("seq_len", 1);
        if (root_.contains("mlp"))
            c.mlp = choice("mlp", {"gelu", "swiglu"}) == 0 ? Mlp::gelu : Mlp::swiglu;
        if (root_.contains("norm"))
            c.norm =
                choice("norm", {"layernorm", "rmsnorm"}) == 0 ? Norm::layernorm : Norm::rmsnorm;
        flag("linear_bias", c.linear_bias);
        flag("learned_positions", c.learned_positions);
        flag("tied_embeddings", c.tied_embeddings);
        flag("dropout", c.dropout);
        if (root_.contains("stated_params")) {
            const json& v = root_.at("stated_params");
            if (!v.is_number() || v.get<double>() < 0)
                doc_.fail("/stated_params", "'stated_params' must be a number ≥ 0");
            c.stated_params = v.get<double>();
        }
        try {
            check_config(c);
        } catch (const std::invalid_argument& e) {
            doc_.fail("", e.what());
        }
        return c;
    }

  private:
    std::string text(const char* field) {
        const json& v = root_.at(field);
        if (!v.is_string()) doc_.fail(pointer(field), fmt::format("'{}' must be a string", field));
        return v.get<std::string>();
    }

    int integer(const char* field, int min) {
        const json& v = root_.at(field);
        if (!v.is_number_integer() || v.get<long long>() < min ||
            v.get<long long>() > std::numeric_limits<int>::max())
            doc_.fail(pointer(field),
                      fmt::format("'{}' must be an integer ≥ {}, got {}", field, min, v.dump()));
        return v.get<int>();
    }

    int choice(const char* field, std::initializer_list<std::string_view> options) {
        const json& v = root_.at(field);
        int i = 0;
        for (std::string_view o : options) {
            if (v.is_string() && v.get<std::string>() == o) return i;
            ++i;
        }
        doc_.fail(pointer(field), fmt::format("'{}' must be one of {}, got {}", field,
                                              fmt::join(options, ", "), v.dump()));
    }

    void flag(const char* field, bool& target) {
        if (!root_.contains(field)) return;
        const json& v = root_.at(field);
        if (!v.is_boolean())
            doc_.fail(pointer(field), fmt::format("'{}' must be true or false", field));
        target = v.get<bool>();
    }

    static std::string pointer(const char* field) { return std::string("/") + field; }

    const JsonSource& doc_;
    const json& root_;
};

}  // namespace

TransformerConfig parse_model_json(std::string_view text, const std::string& source) {
    const JsonSource doc(text, source);
    return ModelReader(doc).read();
}

TransformerConfig load_model_file(const std::string& path) {
    return parse_model_json(detail::read_text_file(path, "model"), path);
}

}  // namespace pipesim::models
