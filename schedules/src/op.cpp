#include "schedules/op.hpp"

#include <fmt/format.h>

namespace pipesim {

std::string_view pass_name(Pass pass) {
    switch (pass) {
        case Pass::F:
            return "F";
        case Pass::B:
            return "B";
        case Pass::W:
            return "W";
        case Pass::BW:
            return "BW";
    }
    return "?";
}

bool parse_pass(std::string_view text, Pass& pass) {
    for (Pass candidate : {Pass::F, Pass::B, Pass::W, Pass::BW}) {
        if (text == pass_name(candidate)) {
            pass = candidate;
            return true;
        }
    }
    return false;
}

std::string to_string(const Op& op) {
    return fmt::format("{}(mb {}, stage {})", pass_name(op.pass), op.microbatch, op.stage);
}

}  // namespace pipesim
