// SPDX-License-Identifier: Apache-2.0
#pragma once
// Bytes as text where a text format needs them: `echo --json`'s data_base64, a binary schema in
// the Foxglove protocol's advertise.

#include <cstddef>
#include <span>
#include <string>

namespace cerulion {

/// Standard base64 (RFC 4648, with padding).
std::string base64_encode(std::span<const std::byte> bytes);

}  // namespace cerulion
