// SPDX-License-Identifier: Apache-2.0
#pragma once
// Keeping a waiting thread's next message warm.
//
// Why (said here once; the figures are in docs/performance.md): a core that has not touched a
// line for a while misses on it (on a shared VM other tenants evict our caches between two
// messages at robot rates), and a message's path touches some dozen lines: the topic's publish
// line, a slot, the participant record, the objects behind a Publisher. Missed in a row, they
// cost several times the transfer that carries the message itself.
// Each thread therefore keeps a small set of the lines its publishers and subscribers touch on
// their next message, and its wait loops prefetch them while polling.
//
// Addresses in the set may outlive what they point to (a participant destroyed on another thread,
// a segment unmapped): prefetching never faults, so a stale entry only wastes a prefetch until
// the entry is reused.

#include <cstdint>
#include <type_traits>

#include "cerulion/core/warm.hpp"  // CERULION_HOT_PATH
#include "prefetch.hpp"

// The linker's bounds of the section CERULION_HOT_PATH puts code in.
extern "C" const char __start_cerulion_hot_text[];
extern "C" const char __stop_cerulion_hot_text[];

namespace cerulion::detail {

/// Where an owner's lines sit in a thread's WarmSet; stale once that entry went to another owner.
struct WarmTicket {
  const void* set = nullptr;
  std::uint32_t index = 0;
  std::uint32_t generation = 0;
};

class WarmSet {
 public:
  static constexpr std::uint32_t kEntries = 16;  ///< owners per thread kept warm
  static constexpr std::uint32_t kLines = 10;    ///< lines per owner

  /// The calling thread's set.
  static WarmSet& of_this_thread() noexcept;

  /// True while `ticket` still names its owner's entry in this set.
  bool holds(const WarmTicket& ticket) const noexcept {
    return ticket.set == this && entries_[ticket.index].generation == ticket.generation;
  }
  /// Gives the owner an empty entry (reusing the oldest one when all are taken) and fills in
  /// `ticket`; the owner then names its lines with set_line.
  void enroll(WarmTicket& ticket) noexcept;
  /// Sets the owner's line `name` (an enumerator of the owner's own enum of its lines, each below
  /// kLines) to `address` (nullptr clears it), fetched for `access`.
  template <typename LineName>
  void set_line(const WarmTicket& ticket, LineName name, const void* address, Access access) noexcept {
    static_assert(std::is_enum_v<LineName>, "lines are named by an enum of their owner's");
    const auto k = static_cast<std::uint32_t>(name);
    Entry& e = entries_[ticket.index];
    e.lines[k % kLines] = address;
    const auto bit = static_cast<std::uint16_t>(1u << (k % kLines));
    e.write_mask = static_cast<std::uint16_t>(access == Access::Write ? e.write_mask | bit : e.write_mask & ~bit);
  }
  /// Frees the owner's entry if `ticket` still holds it (an owner leaving on this thread).
  void release(const WarmTicket& ticket) noexcept;

  /// Prefetches every line of every entry. Some dozens of prefetches; never blocks or faults.
  void warm() const noexcept;

  /// Owners enrolled now (for tests and diagnostics).
  std::uint32_t enrolled() const noexcept;
  /// Whether some owner's line is `address` (for tests and diagnostics).
  bool has_line(const void* address) const noexcept;

 private:
  struct Entry {
    const void* lines[kLines] = {};
    std::uint32_t generation = 0;
    std::uint16_t write_mask = 0;
    bool used = false;
  };
  Entry entries_[kEntries];
  std::uint32_t next_ = 0;
};

}  // namespace cerulion::detail
