// Memory sizes with units ("60GiB"), as --mem-limit takes them.
#include <catch2/catch.hpp>

#include <stdexcept>

#include "models/byte_size.hpp"

using pipesim::models::parse_byte_size;

TEST_CASE("sizes with binary and decimal units", "[models][units]") {
    const auto [text, bytes] = GENERATE(table<const char*, double>({
        {"512B", 512.0},
        {"1KiB", 1024.0},
        {"1.5MiB", 1.5 * 1048576.0},
        {"60GiB", 60.0 * 1073741824.0},
        {"60 GiB", 60.0 * 1073741824.0},
        {"2TiB", 2.0 * 1099511627776.0},
        {"1KB", 1e3},
        {"250MB", 2.5e8},
        {"80GB", 8e10},
        {"1e1GB", 1e10},
        {"3TB", 3e12},
    }));
    CAPTURE(text);
    const auto parsed = parse_byte_size(text);
    REQUIRE(parsed.has_value());
    CHECK(*parsed == Approx(bytes));
}

TEST_CASE("a plain number has no unit and is left to the caller", "[models][units]") {
    CHECK_FALSE(parse_byte_size("3.5").has_value());
    CHECK_FALSE(parse_byte_size("8").has_value());
}

TEST_CASE("bad sizes are refused naming the text", "[models][units]") {
    for (const char* text : {"", "GiB", "60XB", "60gib", "-1GiB", "0GiB", "1..2GB", "inf GB",
                             "60 GiB extra", "1e999GB"}) {
        CAPTURE(text);
        CHECK_THROWS_AS(parse_byte_size(text), std::invalid_argument);
    }
    CHECK_THROWS_WITH(parse_byte_size("60XB"),
                      Catch::Contains("'60XB'") && Catch::Contains("unknown unit 'XB'"));
    // A number the unit's first letter ends: the unit is what is wrong (it said "a size must
    // be > 0" of '0x10GiB').
    CHECK_THROWS_WITH(parse_byte_size("0x10GiB"), Catch::Contains("unknown unit 'x10GiB'"));
    // Past 1e30 bytes, where plain numbers stop: "1e297TiB" was infinite.
    CHECK_THROWS_WITH(parse_byte_size("1e297TiB"),
                      Catch::Contains("'1e297TiB': a size must be at most 1e+30 bytes"));
    CHECK_THROWS_WITH(parse_byte_size("1e30 TiB"), Catch::Contains("at most 1e+30 bytes"));
    CHECK(*parse_byte_size("1e18 TB") == Approx(1e30));
    // Numbers past a double's range are sizes too large or too small, not "not a size" (which
    // told a user without a model to add a unit he may not give).
    CHECK_THROWS_WITH(parse_byte_size("1e999GB"), "'1e999GB': a size must be at most 1e+30 bytes");
    CHECK_THROWS_WITH(parse_byte_size("1e-400GiB"), "'1e-400GiB': a size must be > 0");
    CHECK_FALSE(parse_byte_size("1e400").has_value());  // a plain number: the caller's range
}
