// SPDX-License-Identifier: Apache-2.0
// The single-publisher fast path. Most topics have one publisher, and one publisher needs no lock
// to order its publishes: while it is the topic's only one it publishes without the lock, and
// whoever takes the lock next (a second publisher joining, a subscriber joining or leaving, an
// eviction, `clean`) ends the fast path first, so everything the lock excluded before it still
// excludes.
//
// Ending it is an asymmetric Dekker handshake. The publisher stores sole_busy = 1 and then reads
// sole_publisher, with only a compiler barrier between (TopicSegment::enter_sole_publish). The
// lock holder clears sole_publisher, makes every CPU running a registered process execute a full
// memory barrier (membarrier(2)), and only then reads sole_busy. If the publisher's read came
// after the barrier on its CPU, it sees the fast path ended and takes the lock; if it came before,
// its store did too, and the barrier made it visible: the holder sees sole_busy set and waits for
// that publish to end. Either way no publish runs unlocked once the holder found sole_busy clear.

#include <ctime>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cerulion/core/detail/liveness.hpp"
#include "holder_watch.hpp"
#include "segment.hpp"

namespace cerulion::detail {
namespace {

long membarrier(int command) { return syscall(__NR_membarrier, command, 0, 0); }

/// Whether this process asked the kernel to include it in expedited barriers (once per process:
/// a child of fork() is a process of its own and asks again).
bool registered_for_barriers() {
  static std::atomic<pid_t> registered_pid{0};
  const pid_t me = ::getpid();
  if (registered_pid.load(std::memory_order_acquire) == me) return true;
  if (membarrier(MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED) != 0) return false;
  registered_pid.store(me, std::memory_order_release);
  return true;
}

/// A full memory barrier on every CPU that runs a thread of a registered process, or failing that
/// on every CPU. Where a seccomp filter refuses membarrier altogether, a wait: a store stays in
/// its CPU's store buffer for nanoseconds, and a preempted thread's is drained by the switch.
void barrier_on_every_cpu() {
  if (membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED) == 0) return;
  if (membarrier(MEMBARRIER_CMD_GLOBAL) == 0) return;
  timespec pause{0, 10'000'000};
  nanosleep(&pause, nullptr);
}

}  // namespace

void TopicSegment::offer_sole_publishing_locked(std::uint32_t index) {
  Control& ctl = *control_;
  if (ctl.sole_publisher.load(std::memory_order_relaxed) != 0) return;
  if (ctl.publishers.load(std::memory_order_relaxed) != 1) return;
  if (!registered_for_barriers()) return;  // nobody could end the fast path safely: keep locking
  ctl.sole_publisher.store(index + 1, std::memory_order_relaxed);  // published by the unlock
}

Status TopicSegment::end_sole_publishing_locked() {
  Control& ctl = *control_;
  const std::uint32_t holder = ctl.sole_publisher.load(std::memory_order_relaxed);
  if (holder == 0) return Status::success();
  ctl.sole_publisher.store(0, std::memory_order_seq_cst);
  barrier_on_every_cpu();
  if (ctl.sole_busy.load(std::memory_order_acquire) == 0) return Status::success();
  // A publish is in progress: it takes microseconds, unless its publisher stopped or died in it.
  const std::uint32_t index = holder - 1;
  HolderWatch watch;
  while (ctl.sole_busy.load(std::memory_order_acquire) != 0) {
    if (watch.check_due()) {
      const bool alive = index < kMaxParticipants &&
                         process_alive(static_cast<pid_t>(participants_[index].pid), participants_[index].start_time,
                                       participants_[index].pid_namespace);
      if (!alive) {
        // It died half way through a publish, as a lock holder may: the same repair.
        ctl.sole_busy.store(0, std::memory_order_relaxed);
        repair_ring_locked();
        return Status::success();
      }
      if (watch.stuck()) {
        return Status(ErrorCode::Corrupted, "topic '" + topic_ + "': its publisher (process " +
                                                std::to_string(participants_[index].pid) +
                                                ") has been in the middle of a publish for over 2 s; if it is "
                                                "stuck, the topic must be removed by force",
                      Subject::topic(topic_));
      }
    }
    if (watch.spun()) {
      timespec pause{0, 50'000};
      nanosleep(&pause, nullptr);
    }
  }
  return Status::success();
}

}  // namespace cerulion::detail
