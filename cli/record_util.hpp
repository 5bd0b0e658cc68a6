// SPDX-License-Identifier: Apache-2.0
#pragma once
// Small helpers the recording subcommands (record, play, info, recover) share.

#include <cstdint>
#include <string>

namespace cerulion::cli {

/// ns since the epoch as "2026-11-29T19:33:00.123456789Z".
std::string format_time_ns(std::uint64_t ns);
/// Seconds with 3 decimals, e.g. "12.345 s".
std::string format_duration_ns(std::uint64_t ns);

}  // namespace cerulion::cli
