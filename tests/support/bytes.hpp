// SPDX-License-Identifier: Apache-2.0
#pragma once
// A string's bytes, as the library's payloads take them.

#include <cstddef>
#include <span>
#include <string>

namespace cerulion::test {

/// A view of `s`'s bytes: valid while `s` is.
inline std::span<const std::byte> bytes_of(const std::string& s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

}  // namespace cerulion::test
