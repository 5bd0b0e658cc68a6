// SPDX-License-Identifier: Apache-2.0
// Helpers every subcommand uses: sizes, groups, counts.

#include <grp.h>
#include <cmath>
#include <cctype>
#include <string>

#include <fmt/core.h>

#include "command.hpp"

namespace cerulion::cli {

std::optional<std::uint64_t> parse_size(std::string_view text) {
  std::string s(text);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  if (s.empty()) return std::nullopt;
  std::size_t pos = 0;
  double value = 0;
  try {
    value = std::stod(s, &pos);
  } catch (...) {
    return std::nullopt;
  }
  if (!(value >= 0) || std::isinf(value)) return std::nullopt;
  std::string unit = s.substr(pos);
  while (!unit.empty() && unit.front() == ' ') unit.erase(unit.begin());
  std::string u;
  for (char c : unit) u.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  double mult = 0;
  if (u.empty() || u == "b") mult = 1;
  else if (u == "k" || u == "kib" || u == "ki") mult = 1024.0;
  else if (u == "kb") mult = 1e3;
  else if (u == "m" || u == "mib" || u == "mi") mult = 1024.0 * 1024;
  else if (u == "mb") mult = 1e6;
  else if (u == "g" || u == "gib" || u == "gi") mult = 1024.0 * 1024 * 1024;
  else if (u == "gb") mult = 1e9;
  else if (u == "t" || u == "tib" || u == "ti") mult = 1024.0 * 1024 * 1024 * 1024;
  else if (u == "tb") mult = 1e12;
  else return std::nullopt;
  double bytes = value * mult;
  if (bytes > 1.8e19 || bytes != std::floor(bytes)) return std::nullopt;
  return static_cast<std::uint64_t>(bytes);
}

CLI::Validator group_validator() {
  return CLI::Validator(
      [](std::string& input) -> std::string {
        return ::getgrnam(input.c_str()) ? std::string() : "no group named '" + input + "'";
      },
      "GROUP", "group");
}

std::string counted(std::uint64_t count, std::string_view noun, std::string_view plural_noun) {
  if (count == 1) return fmt::format("1 {}", noun);
  if (!plural_noun.empty()) return fmt::format("{} {}", count, plural_noun);
  return fmt::format("{} {}s", count, noun);
}

std::string format_bytes(double bytes) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int i = 0;
  while (bytes >= 1024 && i < 4) {
    bytes /= 1024;
    ++i;
  }
  if (i == 0) return fmt::format("{:.0f} B", bytes);
  return fmt::format("{:.1f} {}", bytes, units[i]);
}

}  // namespace cerulion::cli
