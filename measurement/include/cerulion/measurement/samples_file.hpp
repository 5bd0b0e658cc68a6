// SPDX-License-Identifier: Apache-2.0
#pragma once
// Raw round trips on disk: little-endian u64 nanoseconds, one after another, no header, so a
// script reads them with numpy.fromfile(path, "<u8").

#include <cstdint>
#include <string>
#include <vector>

#include "cerulion/core/status.hpp"

namespace cerulion::measurement {

/// Writes `samples_ns` to `path` (replacing it). SystemError with errno's text on failure.
[[nodiscard]] Status write_samples_le_u64(const std::string& path, const std::vector<std::uint64_t>& samples_ns);

/// Reads a file written by write_samples_le_u64(). NotFound / SystemError / Corrupted (a length
/// that is not a multiple of 8).
[[nodiscard]] Result<std::vector<std::uint64_t>> read_samples_le_u64(const std::string& path);

}  // namespace cerulion::measurement
