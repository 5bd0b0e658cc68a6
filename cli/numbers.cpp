// SPDX-License-Identifier: Apache-2.0
// Checks for numbers given on the command line (see numbers.hpp).

#include "numbers.hpp"

#include <charconv>
#include <cctype>
#include <cmath>
#include <optional>
#include <limits>

#include <fmt/core.h>

#include "command.hpp"

namespace cerulion::cli {
namespace {

constexpr std::uint64_t kU64Max = std::numeric_limits<std::uint64_t>::max();

std::optional<std::uint64_t> parse_whole(const std::string& text) {
  std::uint64_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end || text.front() == '+') return std::nullopt;
  return value;
}

std::optional<double> parse_real(const std::string& text) {
  try {
    std::size_t used = 0;
    double value = std::stod(text, &used);
    if (used != text.size() || !std::isfinite(value)) return std::nullopt;
    return value;
  } catch (const std::exception&) {
    return std::nullopt;  // not a number at all, or out of double's range
  }
}

// "1e+09" reads badly in a message; integral bounds print as integers.
std::string show(double value) {
  if (value == std::floor(value) && std::fabs(value) < 1e15) return fmt::format("{:.0f}", value);
  return fmt::format("{}", value);
}

}  // namespace

CLI::Validator count_in(std::uint64_t min, std::uint64_t max) {
  std::string expected = max == kU64Max ? fmt::format("a whole number of at least {}", min)
                                        : fmt::format("a whole number from {} to {}", min, max);
  return CLI::Validator(
      [min, max, expected](std::string& input) -> std::string {
        auto value = parse_whole(input);
        if (value && *value >= min && *value <= max) return {};
        return fmt::format("must be {}, got '{}'", expected, input);
      },
      "N", "count");
}

CLI::Validator positive_count() { return count_in(1, kU64Max); }
CLI::Validator non_negative_count() { return count_in(0, kU64Max); }

CLI::Validator integer_in(std::int64_t min, std::int64_t max) {
  return CLI::Validator(
      [min, max](std::string& input) -> std::string {
        std::int64_t value = 0;
        const char* end = input.data() + input.size();
        auto [ptr, ec] = std::from_chars(input.data(), end, value);
        if (!input.empty() && ec == std::errc() && ptr == end && value >= min && value <= max) return {};
        return fmt::format("must be a whole number from {} to {}, got '{}'", min, max, input);
      },
      "N", "integer");
}

namespace {

// Seconds, with a unit or without: "30", "1.5s", "500ms", "250us", "2m", "1h".
std::optional<double> parse_duration_s(const std::string& text) {
  std::size_t digits = text.size();
  while (digits > 0 && std::isalpha(static_cast<unsigned char>(text[digits - 1]))) --digits;
  const std::string unit = text.substr(digits);
  double scale = 0;
  if (unit.empty() || unit == "s") scale = 1;
  else if (unit == "ms") scale = 1e-3;
  else if (unit == "us") scale = 1e-6;
  else if (unit == "m" || unit == "min") scale = 60;
  else if (unit == "h") scale = 3600;
  else return std::nullopt;
  auto value = parse_real(text.substr(0, digits));
  if (!value) return std::nullopt;
  return *value * scale;
}

CLI::Validator duration_validator(bool zero_allowed) {
  return CLI::Validator(
      [zero_allowed](std::string& input) -> std::string {
        auto value = parse_duration_s(input);
        if (value && (*value > 0 || (zero_allowed && *value == 0)) && *value < 1e9) {
          input = fmt::format("{}", *value);
          return {};
        }
        const char* sign = zero_allowed ? "a non-negative" : "a positive";
        return fmt::format("must be {} duration such as 30 (seconds), 5s, 500ms or 2m, got '{}'", sign, input);
      },
      "SEC", "seconds");
}
}  // namespace

CLI::Validator positive_duration() { return duration_validator(false); }
CLI::Validator non_negative_duration() { return duration_validator(true); }

CLI::Validator rate_hz(double max) {
  return CLI::Validator(
      [max](std::string& input) -> std::string {
        auto value = parse_real(input);
        if (value && *value >= 0 && *value <= max) return {};
        return fmt::format("must be a rate from 0 (as fast as possible) to {} per second, got '{}'", show(max),
                           input);
      },
      "HZ", "rate");
}

CLI::Validator number_in(double min, double max, std::string what) {
  return CLI::Validator(
      [min, max, what](std::string& input) -> std::string {
        auto value = parse_real(input);
        if (value && *value >= min && *value <= max) return {};
        return fmt::format("must be {} from {} to {}, got '{}'", what, show(min), show(max), input);
      },
      "NUM", "number");
}

CLI::Validator positive_number(double max, std::string what) {
  return CLI::Validator(
      [max, what](std::string& input) -> std::string {
        auto value = parse_real(input);
        if (value && *value > 0 && *value <= max) return {};
        return fmt::format("must be {} greater than 0 and at most {}, got '{}'", what, show(max), input);
      },
      "NUM", "number");
}

CLI::Validator size_at_most(std::uint64_t max) {
  return CLI::Validator(
      [max](std::string& input) -> std::string {
        auto bytes = parse_size(input);
        if (!bytes) return fmt::format("must be a size such as 64, 4KiB, 1MiB or 16MiB, got '{}'", input);
        if (*bytes > max) return fmt::format("must be at most {}, got '{}'", format_bytes(static_cast<double>(max)), input);
        input = std::to_string(*bytes);
        return {};
      },
      "SIZE", "size");
}

CLI::Validator size_validator() { return size_at_most(kU64Max); }

}  // namespace cerulion::cli
