// SPDX-License-Identifier: Apache-2.0
// The topic's death log: whoever evicts a participant whose process died records who it was, so
// that a watcher polling now and then (a flashback keeper, `topic info`) still learns of a death
// that a reader's eviction erased from the participant table within milliseconds.

#include "segment.hpp"

namespace cerulion::detail {

void TopicSegment::note_death_locked(std::uint32_t index) {
  const Participant& p = participants_[index];
  DeathLog& log = control_->deaths;
  const std::uint64_t number = log.count.load(std::memory_order_relaxed) + 1;
  DeathRecord& r = log.records[(number - 1) % kDeathLogLength];
  // Cleared first, set last: a reader copying the record meanwhile sees a number that changed.
  r.number.store(0, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  r.noticed_realtime_ns = realtime_ns();
  r.start_time = p.start_time;
  r.pid = p.pid;
  r.role = p.role;
  r.noticed_by = own_pid_;
  r.number.store(number, std::memory_order_release);
  log.count.store(number, std::memory_order_release);
}

std::vector<DeathRecordCopy> TopicSegment::recent_deaths() const {
  std::vector<DeathRecordCopy> out;
  const DeathLog& log = control_->deaths;
  const std::uint64_t count = log.count.load(std::memory_order_acquire);
  const std::uint64_t first = count > kDeathLogLength ? count - kDeathLogLength + 1 : 1;
  for (std::uint64_t n = first; n <= count; ++n) {
    const DeathRecord& r = log.records[(n - 1) % kDeathLogLength];
    if (r.number.load(std::memory_order_acquire) != n) continue;  // being rewritten by a newer death
    DeathRecordCopy copy{n, r.noticed_realtime_ns, r.start_time, r.pid, r.role, r.noticed_by};
    std::atomic_thread_fence(std::memory_order_acquire);
    if (r.number.load(std::memory_order_relaxed) != n) continue;
    out.push_back(copy);
  }
  return out;
}

}  // namespace cerulion::detail
