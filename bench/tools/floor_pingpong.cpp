// SPDX-License-Identifier: Apache-2.0
// The machine's floor for a round trip between two processes: they share one anonymous page and
// nothing else (no segment, no ring, no wait strategy). The requester stores a round-trip number
// in one cache line and the responder answers with it in another. With --wait futex the waiting
// side sleeps in the kernel, as a subscriber waiting for a 100 Hz topic must; with --wait spin it
// polls, and only the cache-line transfer is left. cerulion's figures are read against it
// (docs/benchmark-method.md, docs/performance.md). A developer's tool; not installed.
//   floor-pingpong [--wait futex|spin] [--rate HZ] [--samples N] [--cpus auto|none|A,B]
// Prints one line: the wait, the rate, the round trips and their min/median/p99 in µs. One round
// trip before them is not measured; scripts/footprint.sh counts on there being samples + 1.
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <linux/futex.h>
#include <string>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include "cerulion/measurement/cpu_pinning.hpp"
#include "cerulion/measurement/statistics.hpp"

namespace {

// Each side writes its own line, so a store by one never invalidates what the other polls.
struct alignas(64) Word {
  std::atomic<std::uint32_t> value{0};
};
struct Page {
  Word request;
  Word reply;
};

// Each loop is compiled once per way of waiting, so the spinning one is a load, a compare and a
// jump: no PAUSE (cerulion's own polling has none either: docs/performance.md says why).
template <bool Spin>
void wait_for(std::atomic<std::uint32_t>& word, std::uint32_t wanted) {
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
void post(std::atomic<std::uint32_t>& word, std::uint32_t value) {
  word.store(value, std::memory_order_release);
  if constexpr (!Spin) syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAKE, 1, nullptr, nullptr, 0);
}

template <bool Spin>
void respond(Page& page, std::uint32_t round_trips) {
  for (std::uint32_t n = 1; n <= round_trips; ++n) {
    wait_for<Spin>(page.request.value, n);
    post<Spin>(page.reply.value, n);
  }
}

using Clock = std::chrono::steady_clock;

template <bool Spin>
std::vector<double> request(Page& page, std::uint32_t round_trips, Clock::duration period) {
  std::vector<double> rtt_us;
  rtt_us.reserve(round_trips);
  auto slot = Clock::now();
  for (std::uint32_t n = 1; n <= round_trips; ++n) {
    if (period.count() > 0) std::this_thread::sleep_until(slot += period);
    const auto start = Clock::now();
    post<Spin>(page.request.value, n);
    wait_for<Spin>(page.reply.value, n);
    const auto end = Clock::now();
    if (n > 1) rtt_us.push_back(std::chrono::duration<double, std::micro>(end - start).count());
  }
  return rtt_us;
}

int usage(const std::string& why) {
  std::fprintf(stderr, "floor-pingpong: %s\nusage: floor-pingpong [--wait futex|spin] [--rate HZ] [--samples N] [--cpus auto|none|A,B]\n",
               why.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  bool spin = false;
  double rate = 100;
  long samples = 1000;
  std::string cpus = "auto";
  for (int i = 1; i < argc; ++i) {
    const std::string option = argv[i];
    if (option == "--help" || option == "-h") {
      std::printf("usage: floor-pingpong [--wait futex|spin] [--rate HZ] [--samples N] [--cpus auto|none|A,B]\n");
      return 0;
    }
    if (i + 1 >= argc) return usage("'" + option + "' needs a value");
    const std::string value = argv[++i];
    char* end = nullptr;
    if (option == "--wait" && (value == "futex" || value == "spin")) {
      spin = value == "spin";
    } else if (option == "--rate") {
      rate = std::strtod(value.c_str(), &end);
      if (end == value.c_str() || *end != '\0' || rate < 0) return usage("--rate is a number of Hz (0: back to back)");
    } else if (option == "--samples") {
      samples = std::strtol(value.c_str(), &end, 10);
      if (end == value.c_str() || *end != '\0' || samples < 1) return usage("--samples is a positive count");
    } else if (option == "--cpus") {
      cpus = value;
    } else {
      return usage("bad option or value: " + option + " " + value);
    }
  }
  auto plan = cerulion::measurement::parse_cpu_plan(cpus);
  if (!plan) return usage(plan.message());

  void* shared = mmap(nullptr, sizeof(Page), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (shared == MAP_FAILED) {
    std::fprintf(stderr, "floor-pingpong: cannot map shared memory: %s\n", std::strerror(errno));
    return 1;
  }
  auto* page = new (shared) Page;
  const auto round_trips = static_cast<std::uint32_t>(samples) + 1;
  const pid_t responder = fork();
  if (responder < 0) {
    std::fprintf(stderr, "floor-pingpong: cannot fork: %s\n", std::strerror(errno));
    return 1;
  }
  if (responder == 0) {
    if (plan->pong) (void)cerulion::measurement::pin_current_thread(*plan->pong);
    spin ? respond<true>(*page, round_trips) : respond<false>(*page, round_trips);
    _exit(0);
  }
  if (plan->ping) (void)cerulion::measurement::pin_current_thread(*plan->ping);
  const auto period = rate > 0 ? std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1 / rate))
                               : Clock::duration::zero();
  auto rtt_us = spin ? request<true>(*page, round_trips, period) : request<false>(*page, round_trips, period);
  waitpid(responder, nullptr, 0);
  const auto s = cerulion::measurement::summarize(std::move(rtt_us));
  std::printf("floor wait=%s rate=%g cpus=%s samples=%zu min_us=%.3f median_us=%.3f p99_us=%.3f\n",
              spin ? "spin" : "futex", rate, cerulion::measurement::describe(*plan).c_str(), s.count, s.min, s.median,
              s.p99);
  return 0;
}
