// SPDX-License-Identifier: Apache-2.0
#pragma once
// Asking for a cache line before it is needed: the one way the message path prefetches.

namespace cerulion::detail {

/// What a line is fetched for. For writing, it arrives exclusive: the store that follows needs no
/// second transfer from the core that wrote it last.
enum class Access : bool { Read, Write };

/// Starts fetching the line at `address` into this core's caches and returns at once; the line
/// arrives while other work goes on. Never faults, whatever the address.
inline void prefetch(const void* address, Access access) noexcept {
  if (access == Access::Write) {
    __builtin_prefetch(address, 1, 3);
  } else {
    __builtin_prefetch(address, 0, 3);
  }
}

}  // namespace cerulion::detail
