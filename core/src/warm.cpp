// SPDX-License-Identifier: Apache-2.0
#include "warm.hpp"

#include "cerulion/core/warm.hpp"

namespace cerulion {
namespace detail {
namespace {

/// Reads a byte of every line of the message path's code. Reads, not prefetches: on a VM a
/// prefetch that misses the TLB does nothing, and code left idle between messages misses it. The
/// read brings the page's translation and the line into the shared caches, so the iTLB miss and
/// the instruction fetch that follow are short (figures in docs/performance.md).
/// (GCC ignores the section attribute on template instantiations: the wait loops' templates are
/// therefore inlined into the marked functions that run them, wait_loop.hpp.)
CERULION_HOT_PATH void warm_hot_code() noexcept {
  unsigned sum = 0;
  for (const char* line = __start_cerulion_hot_text; line < __stop_cerulion_hot_text; line += 64) {
    sum += static_cast<unsigned char>(*static_cast<const volatile char*>(line));
  }
  asm volatile("" ::"r"(sum));
}

}  // namespace

CERULION_HOT_PATH WarmSet& WarmSet::of_this_thread() noexcept {
  static thread_local WarmSet set;
  return set;
}

void WarmSet::enroll(WarmTicket& ticket) noexcept {
  std::uint32_t index = kEntries;
  for (std::uint32_t i = 0; i < kEntries; ++i) {
    if (!entries_[i].used) {
      index = i;
      break;
    }
  }
  if (index == kEntries) index = next_++ % kEntries;  // all taken: the oldest enrolment goes
  Entry& e = entries_[index];
  const std::uint32_t generation = e.generation + 1;
  e = Entry{};
  e.generation = generation;
  e.used = true;
  ticket = WarmTicket{this, index, generation};
}

void WarmSet::release(const WarmTicket& ticket) noexcept {
  if (!holds(ticket)) return;
  Entry& e = entries_[ticket.index];
  const std::uint32_t generation = e.generation + 1;
  e = Entry{};
  e.generation = generation;
}

CERULION_HOT_PATH void WarmSet::warm() const noexcept {
  warm_hot_code();
  for (const Entry& e : entries_) {
    if (!e.used) continue;
    for (std::uint32_t k = 0; k < kLines; ++k) {
      if (e.lines[k] == nullptr) continue;
      prefetch(e.lines[k], (e.write_mask & (1u << k)) != 0 ? Access::Write : Access::Read);
    }
  }
}

std::uint32_t WarmSet::enrolled() const noexcept {
  std::uint32_t n = 0;
  for (const Entry& e : entries_) n += e.used ? 1 : 0;
  return n;
}

bool WarmSet::has_line(const void* address) const noexcept {
  for (const Entry& e : entries_) {
    if (!e.used) continue;
    for (const void* line : e.lines) {
      if (line == address) return true;
    }
  }
  return false;
}

}  // namespace detail

CERULION_HOT_PATH void warm_caches() noexcept { detail::WarmSet::of_this_thread().warm(); }

}  // namespace cerulion
