// SPDX-License-Identifier: Apache-2.0
// How a wait set sleeps: a set of one on its member's word; a set of several on its bell, which
// the members' publishers ring; where no bell can serve, on all its members' words at once.
#include <cerrno>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "wait_set_impl.hpp"

#ifndef SYS_futex_waitv
#define SYS_futex_waitv 449  // the same number on every architecture (Linux 5.16+)
#endif

namespace cerulion::detail {
namespace {

constexpr std::uint32_t kFutexSize32 = 2;
/// Without futex_waitv, how long a set sleeps on its first member's word before looking at the others.
constexpr std::uint64_t kWaitvFallbackSliceNs = 200'000;  // FUTEX2_SIZE_U32; shared (not FUTEX2_PRIVATE): other processes wake us

timespec to_timespec(std::uint64_t ns) {
  return {static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
}

}  // namespace

CERULION_HOT_PATH bool WaitSetImpl::sleep_on_members(std::uint64_t until) {
  const std::uint64_t now = monotonic_ns();
  if (until <= now) return false;
  if (members_.empty()) {
    timespec ts = to_timespec(until);
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr);  // EINTR: the caller re-checks
    return false;
  }
  if (Bell* bell = bell_for_sleep()) return sleep_on_bell(*bell, now, until);
  waitv_.resize(members_.size());
  for (std::size_t i = 0; i < members_.size(); ++i) {
    WakeChannel& channel = members_[i].impl->data_channel();
    waitv_[i] = {channel.sequence.load(std::memory_order_seq_cst),
                 reinterpret_cast<std::uint64_t>(&channel.sequence), kFutexSize32, 0};
    channel.sleepers.fetch_or(members_[i].impl->sleeper_bit(), std::memory_order_seq_cst);
  }
  // A publish between our check and the registration above bumped no sequence we read: re-check.
  const bool published = poll_members();
  if (!published && members_.size() == 1) {
    // One word to sleep on: futex_wait's path is shorter than futex_waitv's, by microseconds
    // (docs/performance.md).
    const std::int64_t timeout_ns = until == kWaitForever ? -1 : static_cast<std::int64_t>(until - now);
    futex_wait(&members_.front().impl->data_channel().sequence, static_cast<std::uint32_t>(waitv_.front().val),
               timeout_ns);
  } else if (!published) {
    if (!waitv_missing_) {
      timespec ts = to_timespec(until);
      long rc = syscall(SYS_futex_waitv, waitv_.data(), static_cast<unsigned>(waitv_.size()), 0u, &ts, CLOCK_MONOTONIC);
      if (rc < 0 && errno == ENOSYS) waitv_missing_ = true;
    }
    if (waitv_missing_) {
      // Before Linux 5.16: sleep on the first member's word, waking each slice to look at the others.
      const std::uint64_t slice = std::min<std::uint64_t>(until - now, kWaitvFallbackSliceNs);
      futex_wait(&members_.front().impl->data_channel().sequence, static_cast<std::uint32_t>(waitv_.front().val),
                 static_cast<std::int64_t>(slice));
    }
  }
  for (const auto& m : members_) m.impl->data_channel().sleepers.fetch_and(~m.impl->sleeper_bit(), std::memory_order_relaxed);
  return published;
}

Bell* WaitSetImpl::bell_for_sleep() {
  if (members_.size() < 2) return nullptr;
  if (bell_stale_) {
    bell_stale_ = false;
    make_bell();
  }
  if (!bell_) return nullptr;
  for (const auto& m : members_) {
    if (m.impl->bell_id().load(std::memory_order_relaxed) != bell_->id()) {
      drop_bell();  // a publisher could not ring it
      return nullptr;
    }
  }
  return &*bell_;
}

void WaitSetImpl::make_bell() {
  drop_bell();
  // Every member's publishers must be able to open the bell: those of a topic shared with a group
  // may be other users of that group.
  std::optional<gid_t> group;
  for (const auto& m : members_) {
    const struct stat& st = m.impl->segment().file_status();
    if ((st.st_mode & 0060) == 0) continue;
    if (group && *group != st.st_gid) return;
    group = st.st_gid;
  }
  auto bell = Bell::create(members_.front().impl->segment().domain(), group);
  if (!bell) return;
  bell_ = std::move(*bell);
  for (const auto& m : members_) m.impl->bell_id().store(bell_->id(), std::memory_order_release);
}

void WaitSetImpl::drop_bell() {
  if (!bell_) return;
  for (const auto& m : members_) m.impl->bell_id().store(0, std::memory_order_relaxed);
  bell_.reset();
}

CERULION_HOT_PATH bool WaitSetImpl::sleep_on_bell(Bell& bell, std::uint64_t now, std::uint64_t until) {
  const std::uint32_t rung = bell.word().load(std::memory_order_seq_cst);
  for (const auto& m : members_) m.impl->bell_sleepers().fetch_or(m.impl->sleeper_bit(), std::memory_order_seq_cst);
  // A publish between our check and the registration above rang no bell: re-check.
  const bool published = poll_members();
  if (!published) {
    const std::int64_t timeout_ns = until == kWaitForever ? -1 : static_cast<std::int64_t>(until - now);
    futex_wait(&bell.word(), rung, timeout_ns);
  }
  for (const auto& m : members_) m.impl->bell_sleepers().fetch_and(~m.impl->sleeper_bit(), std::memory_order_relaxed);
  return published;
}

}  // namespace cerulion::detail
