// SPDX-License-Identifier: Apache-2.0
// The kernel's own cost of sleeping on several futexes: two processes ping-pong through 32-bit
// words in shared memory, each sleeping with futex_wait on one word or with futex_waitv on N
// (the first is the one woken; the others stand for a wait set's idle members). No cerulion code:
// it is the floor a block-mode wait set stands on (docs/performance.md).
//   futex-waitv-floor [--call wait|waitv] [--words N] [--rate HZ] [--samples N]
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <linux/futex.h>
#include <string>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#ifndef SYS_futex_waitv
#define SYS_futex_waitv 449
#endif

namespace {

struct Waitv {  // struct futex_waitv, absent from kernel headers before 5.16
  std::uint64_t val;
  std::uint64_t uaddr;
  std::uint32_t flags;
  std::uint32_t reserved;
};
constexpr std::uint32_t kSize32 = 2;  // FUTEX2_SIZE_U32, shared
constexpr std::size_t kMaxWords = 8;
constexpr std::size_t kPage = 4096;

std::uint64_t now_ns() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<std::uint64_t>(t.tv_sec) * 1'000'000'000u + static_cast<std::uint64_t>(t.tv_nsec);
}

/// One side's words, each on its own page as separate topics' channels are in separate segments.
struct Side {
  std::atomic<std::uint32_t>* words[kMaxWords];
};

/// Sleeps until words[0] differs from `seen`.
void wait_for_change(const Side& side, std::size_t count, bool waitv, std::uint32_t seen) {
  while (side.words[0]->load() == seen) {
    if (!waitv) {
      syscall(SYS_futex, side.words[0], FUTEX_WAIT, seen, nullptr, nullptr, 0);
      continue;
    }
    Waitv v[kMaxWords] = {};
    for (std::size_t i = 0; i < count; ++i) {
      v[i].val = i == 0 ? seen : side.words[i]->load();
      v[i].uaddr = reinterpret_cast<std::uintptr_t>(side.words[i]);
      v[i].flags = kSize32;
    }
    if (syscall(SYS_futex_waitv, v, static_cast<unsigned>(count), 0u, nullptr, CLOCK_MONOTONIC) < 0 && errno == ENOSYS) {
      std::fprintf(stderr, "futex-waitv-floor: this kernel has no futex_waitv (Linux 5.16+)\n");
      _exit(1);
    }
  }
}

void post(const Side& side) {
  side.words[0]->fetch_add(1);
  syscall(SYS_futex, side.words[0], FUTEX_WAKE, 1, nullptr, nullptr, 0);
}

bool parse(const char* text, long& out) {
  char* end = nullptr;
  out = std::strtol(text, &end, 10);
  return end != text && *end == '\0' && out > 0;
}

int usage(const std::string& why) {
  std::fprintf(stderr, "futex-waitv-floor: %s\nusage: futex-waitv-floor [--call wait|waitv] [--words N] [--rate HZ] [--samples N]\n",
               why.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  bool waitv = false;
  long words = 1, rate = 100, samples = 300;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::printf("usage: futex-waitv-floor [--call wait|waitv] [--words N] [--rate HZ] [--samples N]\n");
      return 0;
    }
    if (i + 1 >= argc) return usage("'" + a + "' needs a value");
    const char* v = argv[++i];
    if (a == "--call" && std::strcmp(v, "wait") == 0) {
      waitv = false;
    } else if (a == "--call" && std::strcmp(v, "waitv") == 0) {
      waitv = true;
    } else if (a == "--call") {
      return usage("--call is wait or waitv, not '" + std::string(v) + "'");
    } else if (a == "--words" ? !parse(v, words) || words > static_cast<long>(kMaxWords)
               : a == "--rate" ? !parse(v, rate)
               : a == "--samples" ? !parse(v, samples)
                                  : true) {
      return usage("bad option or value: " + a + " " + v);
    }
  }
  if (!waitv && words != 1) return usage("futex_wait sleeps on one word: --words 1, or --call waitv");

  const std::size_t pages = 2 * kMaxWords;
  void* shared = mmap(nullptr, pages * kPage, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (shared == MAP_FAILED) {
    std::fprintf(stderr, "futex-waitv-floor: cannot map shared memory: %s\n", std::strerror(errno));
    return 1;
  }
  Side requests{}, replies{};
  for (std::size_t i = 0; i < kMaxWords; ++i) {
    requests.words[i] = new (static_cast<char*>(shared) + i * kPage) std::atomic<std::uint32_t>(0);
    replies.words[i] = new (static_cast<char*>(shared) + (kMaxWords + i) * kPage) std::atomic<std::uint32_t>(0);
  }
  const auto count = static_cast<std::size_t>(words);
  const long warmup = 20;
  const long total = samples + warmup;
  const pid_t child = fork();
  if (child < 0) {
    std::fprintf(stderr, "futex-waitv-floor: cannot fork: %s\n", std::strerror(errno));
    return 1;
  }
  if (child == 0) {
    for (long i = 0; i < total; ++i) {
      wait_for_change(requests, count, waitv, static_cast<std::uint32_t>(i));
      post(replies);
    }
    _exit(0);
  }
  std::vector<double> rtt_us;
  const long gap_ns = 1'000'000'000L / rate;
  for (long i = 0; i < total; ++i) {
    const timespec gap{gap_ns / 1'000'000'000L, gap_ns % 1'000'000'000L};
    nanosleep(&gap, nullptr);
    const std::uint64_t start = now_ns();
    post(requests);
    wait_for_change(replies, count, waitv, static_cast<std::uint32_t>(i));
    if (i >= warmup) rtt_us.push_back(static_cast<double>(now_ns() - start) / 1000.0);
  }
  waitpid(child, nullptr, 0);
  std::sort(rtt_us.begin(), rtt_us.end());
  std::printf("%s, %ld word%s, %ld Hz, %ld round trips: median %.2f us, p90 %.2f us\n", waitv ? "futex_waitv" : "futex_wait",
              words, words == 1 ? "" : "s", rate, samples, rtt_us[rtt_us.size() / 2], rtt_us[rtt_us.size() * 9 / 10]);
  return 0;
}
