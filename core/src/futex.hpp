// SPDX-License-Identifier: Apache-2.0
#pragma once
// Raw futex calls on 32-bit words in shared memory. Not FUTEX_PRIVATE (the waiter and the waker are
// different processes) and not std::atomic::wait (which does not promise a cross-process wake).

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <ctime>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace cerulion::detail {

static_assert(sizeof(std::atomic<std::uint32_t>) == 4 && std::atomic<std::uint32_t>::is_always_lock_free,
              "futex words must be plain lock-free 32-bit atomics");

/// Sleeps while *word == expected, at most `timeout_ns` (< 0: no limit). Returns on wake, value
/// change, timeout or signal; the caller re-checks its condition either way.
inline void futex_wait(std::atomic<std::uint32_t>* word, std::uint32_t expected, std::int64_t timeout_ns) {
  timespec ts{};
  timespec* tsp = nullptr;
  if (timeout_ns >= 0) {
    ts.tv_sec = static_cast<time_t>(timeout_ns / 1'000'000'000);
    ts.tv_nsec = static_cast<long>(timeout_ns % 1'000'000'000);
    tsp = &ts;
  }
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), FUTEX_WAIT, expected, tsp, nullptr, 0);
}

/// Wakes every process sleeping on `word`.
inline void futex_wake_all(std::atomic<std::uint32_t>* word) {
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), FUTEX_WAKE, INT32_MAX, nullptr, nullptr, 0);
}

/// A futex word plus the set of participants asleep on it (one bit per participant index), so a
/// waker only makes the syscall when someone sleeps, and a dead sleeper's bit can be cleared.
/// Eight bytes, so it can share a line with the state it signals.
struct WakeChannel {
  std::atomic<std::uint32_t> sequence{0};
  std::atomic<std::uint32_t> sleepers{0};

  /// Called after the state a sleeper waits for has changed (that store must precede this call).
  void notify() {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (sleepers.load(std::memory_order_relaxed) != 0) {
      sequence.fetch_add(1, std::memory_order_seq_cst);
      futex_wake_all(&sequence);
    }
  }
};

/// Between two reads of a word another process will write: nothing but a compiler barrier. A
/// PAUSE here would cost its own latency on every check, and on a VM a long run of PAUSEs makes
/// the hypervisor take the vCPU away (pause-loop exiting): a round trip spun with PAUSE is slower
/// than one without (measured in docs/performance.md).
inline void poll_relax() { asm volatile("" ::: "memory"); }

/// Inside a spin on a lock held by another thread: let the sibling hyperthread run.
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

}  // namespace cerulion::detail
