// SPDX-License-Identifier: Apache-2.0
#pragma once
// Small helpers the recording subcommands (record, play, info, recover) share.

#include <cstdint>
#include <string>
#include <vector>

namespace cerulion::cli {

/// ns since the epoch as "2026-11-29T19:33:00.123456789Z".
std::string format_time_ns(std::uint64_t ns);
/// Seconds with 3 decimals, e.g. "12.345 s".
std::string format_duration_ns(std::uint64_t ns);
/// Throws Exit{2} naming `flag` when a pattern is not a regular expression (checked here too, so the
/// message names the flag the user typed).
void check_patterns(const std::vector<std::string>& patterns, const char* flag);

}  // namespace cerulion::cli
