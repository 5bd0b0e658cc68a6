// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the tests of keepers over real topics share: a keeper in a child process, asked for its own
// dumps by SIGUSR1 as `cerulion flashback start` is; numbered traffic that keeps its first failure
// (it may run on a thread, where Catch2 must not assert); the newest sequence a dump holds.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <functional>
#include <thread>

#include "cerulion/flashback/keeper.hpp"
#include "child.hpp"
#include "helpers.hpp"

namespace fbtest {

/// SIGUSR1s a keeper child received and has not yet turned into a trigger.
inline std::atomic<int> keeper_child_dump_requests{0};
inline void keeper_child_on_dump_signal(int) { keeper_child_dump_requests.fetch_add(1); }

/// A keeper child's settings besides its domain and topic.
struct KeeperChildOptions {
  std::uint64_t memory_bytes = 16 << 20;
  /// Where its own dumps go ("" = the current directory).
  std::string dump_dir{};
  /// Every topic of the domain (as `flashback start -a`), besides `topic`.
  bool all = false;
};

/// A keeper of `topic` in a child process, ready once it has started tapping. SIGUSR1 asks it for
/// a dump, turned into a trigger on its main thread, as `cerulion flashback start` does.
inline test::Child keeper_child(const std::string& domain, const std::string& topic, KeeperChildOptions settings = {}) {
  return test::Child([=](test::Child& self) {
    struct sigaction sa {};
    sa.sa_handler = keeper_child_on_dump_signal;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGUSR1, &sa, nullptr);
    flashback::KeeperOptions options;
    options.domain = domain;
    options.selection.topics = {topic};
    options.selection.all = settings.all;
    options.limits.memory_bytes = settings.memory_bytes;
    options.dump_dir = settings.dump_dir;
    options.dumps_on_signal = true;
    auto keeper = flashback::Keeper::start(options);
    if (!keeper) return 1;
    self.signal_ready();
    for (;;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      for (int n = keeper_child_dump_requests.exchange(0); n > 0; --n) keeper->trigger("signal", "SIGUSR1", "");
    }
  });
}

/// Messages numbered from 0, payload(n, size(n)) each, on one publisher.
struct Traffic {
  Publisher& publisher;
  std::function<std::size_t(std::uint64_t)> size = [](std::uint64_t) { return std::size_t{100}; };
  std::uint64_t published = 0;
  /// The next `n`; the first failure, rather than an assertion.
  Status publish(std::uint64_t n) {
    for (std::uint64_t i = 0; i < n; ++i, ++published) {
      if (auto sent = publisher.publish_copy(payload(published, size(published))); !sent) return sent.status();
    }
    return {};
  }
};

/// The newest sequence of `topic` in a dump (0 when none).
inline std::uint32_t newest_of(const ReadDump& dump, const std::string& topic) {
  std::uint32_t newest = 0;
  for (const auto& m : dump.messages) {
    if (m.topic == topic) newest = std::max(newest, m.sequence);
  }
  return newest;
}

}  // namespace fbtest
