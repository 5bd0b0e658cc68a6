// SPDX-License-Identifier: Apache-2.0
#pragma once
// Durations in nanoseconds, as the library's clocks count them, for tests that build made-up times.

#include <cstdint>

namespace cerulion::test {

inline constexpr std::uint64_t kSecondNs = 1'000'000'000ull;

}  // namespace cerulion::test
