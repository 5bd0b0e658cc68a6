// SPDX-License-Identifier: Apache-2.0
#include "cerulion/bench/floor.hpp"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <linux/futex.h>
#include <new>
#include <sched.h>
#include <string>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace cerulion::bench {

namespace {

// Each side writes its own line, so a store by one never invalidates what the other polls.
struct alignas(64) FloorWord {
  std::atomic<std::uint32_t> value{0};
};
struct FloorPage {
  FloorWord request;
  FloorWord reply;
};

// Each loop is compiled once per way of waiting, so the spinning one is a load, a compare and a
// jump: no PAUSE (cerulion's own polling has none either: docs/performance.md says why).
template <bool Spin>
void floor_wait_for(std::atomic<std::uint32_t>& word, std::uint32_t wanted) {
  for (std::uint32_t seen = word.load(std::memory_order_acquire); seen != wanted;
       seen = word.load(std::memory_order_acquire)) {
    if constexpr (Spin) {
      asm volatile("" ::: "memory");
    } else {
      syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAIT, seen, nullptr, nullptr, 0);
    }
  }
}

template <bool Spin>
void floor_post(std::atomic<std::uint32_t>& word, std::uint32_t value) {
  word.store(value, std::memory_order_release);
  if constexpr (!Spin) syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAKE, 1, nullptr, nullptr, 0);
}

template <bool Spin>
void floor_respond(FloorPage& page, std::uint32_t round_trips) {
  for (std::uint32_t n = 1; n <= round_trips; ++n) {
    floor_wait_for<Spin>(page.request.value, n);
    floor_post<Spin>(page.reply.value, n);
  }
}

using FloorClock = std::chrono::steady_clock;

template <bool Spin>
std::vector<double> floor_request(FloorPage& page, std::uint32_t round_trips, FloorClock::duration period) {
  std::vector<double> rtt_us;
  rtt_us.reserve(round_trips);
  auto slot = FloorClock::now();
  for (std::uint32_t n = 1; n <= round_trips; ++n) {
    if (period.count() > 0) std::this_thread::sleep_until(slot += period);
    const auto start = FloorClock::now();
    floor_post<Spin>(page.request.value, n);
    floor_wait_for<Spin>(page.reply.value, n);
    const auto end = FloorClock::now();
    if (n > 1) rtt_us.push_back(std::chrono::duration<double, std::micro>(end - start).count());
  }
  return rtt_us;
}

}  // namespace

Result<measurement::Summary> measure_floor(const FloorOptions& options) {
  void* shared = ::mmap(nullptr, sizeof(FloorPage), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (shared == MAP_FAILED) {
    return Status(ErrorCode::SystemError, std::string("cannot map the floor's shared page: ") + std::strerror(errno));
  }
  auto* page = new (shared) FloorPage;
  const std::uint32_t round_trips = options.samples + 1;
  const pid_t parent = ::getpid();
  const pid_t responder = ::fork();
  if (responder < 0) {
    const int err = errno;
    ::munmap(shared, sizeof(FloorPage));
    return Status(ErrorCode::SystemError, std::string("cannot start the floor's responder: ") + std::strerror(err));
  }
  if (responder == 0) {
    // A requester that dies mid-run would leave the responder waiting for ever.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(0);
    if (options.cpus.pong) (void)measurement::pin_current_thread(*options.cpus.pong);
    options.spin ? floor_respond<true>(*page, round_trips) : floor_respond<false>(*page, round_trips);
    ::_exit(0);
  }
  // The requester is this thread: its CPU is given back as it was.
  cpu_set_t before;
  const bool had_mask = ::sched_getaffinity(0, sizeof before, &before) == 0;
  if (options.cpus.ping) (void)measurement::pin_current_thread(*options.cpus.ping);
  const auto period = options.rate_hz > 0 ? std::chrono::duration_cast<FloorClock::duration>(
                                                std::chrono::duration<double>(1 / options.rate_hz))
                                          : FloorClock::duration::zero();
  auto rtt_us = options.spin ? floor_request<true>(*page, round_trips, period)
                             : floor_request<false>(*page, round_trips, period);
  if (options.cpus.ping && had_mask) (void)::sched_setaffinity(0, sizeof before, &before);
  while (::waitpid(responder, nullptr, 0) < 0 && errno == EINTR) {
  }
  ::munmap(shared, sizeof(FloorPage));
  return measurement::summarize(std::move(rtt_us));
}

}  // namespace cerulion::bench
