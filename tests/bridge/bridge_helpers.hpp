// SPDX-License-Identifier: Apache-2.0
#pragma once
// Two "machines" on one: two cerulion domains, each with its bridge, on a DDS domain of the test's
// own. Bridges keep the last --depth messages for a reader that matches late, but a test that
// wants to know the far side carries a topic first repeats a warm-up message until it arrives.

#include <atomic>
#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <functional>
#include <future>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <sys/file.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include <catch2/catch.hpp>

#include "cerulion/bridge/bridge.hpp"
#include "cerulion/core/publisher.hpp"
#include "cerulion/core/subscriber.hpp"
#include "process.hpp"

namespace cerulion::test {

/// A DDS domain id (1..230) that no other test process holds, different per call. Test processes
/// run in parallel and an importer following every topic would take another test's traffic, so
/// each id is claimed with a lock file held until this process exits (231 and 232 stay for tests
/// that name a fixed id).
inline std::uint32_t test_dds_domain() {
  static std::atomic<std::uint32_t> counter{0};
  constexpr std::uint32_t kIds = 230;
  const auto dir = std::filesystem::temp_directory_path() / ("cerulion-test-dds-" + std::to_string(::getuid()));
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  const std::uint32_t first = static_cast<std::uint32_t>(::getpid()) * 7 + counter++ * 31;
  for (std::uint32_t k = 0; k < kIds; ++k) {
    const std::uint32_t id = 1 + (first + k) % kIds;
    const int fd = ::open((dir / (std::to_string(id) + ".lock")).c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) break;
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) return id;  // the fd stays open: the claim lasts until exit
    ::close(fd);
  }
  return 1 + first % kIds;  // every id claimed (or no temp directory): share one, as before
}

/// Every topic, including later ones.
inline recording::TopicSelection all_topics() {
  recording::TopicSelection s;
  s.all = true;
  return s;
}

/// A bridge made and started with `o`.
inline bridge::Bridge start_bridge(const bridge::BridgeOptions& o) {
  auto b = bridge::Bridge::create(o);
  INFO(b.message());
  REQUIRE(b.ok());
  REQUIRE(b->start().ok());
  return std::move(*b);
}

/// An exporting bridge in domain `from` and an importing one in domain `to`, over DDS domain
/// `dds`, following every topic, with `tune` applied to both bridges' options.
template <typename Tune>
std::vector<bridge::Bridge> start_export_import(const std::string& from, const std::string& to, std::uint32_t dds,
                                                Tune&& tune) {
  std::vector<bridge::Bridge> bridges;
  for (auto [domain, direction] : {std::pair{from, bridge::Direction::Export}, std::pair{to, bridge::Direction::Import}}) {
    bridge::BridgeOptions o;
    o.domain = domain;
    o.dds_domain = dds;
    o.direction = direction;
    o.selection = all_topics();
    tune(o);
    bridges.push_back(start_bridge(o));
  }
  return bridges;
}

inline bridge::Bridge start_bridge(const std::string& domain, std::uint32_t dds_domain, bridge::Direction direction,
                                   recording::TopicSelection selection = all_topics()) {
  bridge::BridgeOptions o;
  o.domain = domain;
  o.dds_domain = dds_domain;
  o.direction = direction;
  o.selection = std::move(selection);
  return start_bridge(o);
}

/// Marks a warm-up message: its first byte.
inline constexpr std::byte kWarmup{0xff};

/// A message of `size` bytes (at least 9): byte 0 is 0 (not a warm-up), 1..8 the index, the rest
/// a pattern of the index.
inline std::vector<std::byte> numbered(std::uint64_t index, std::size_t size) {
  std::vector<std::byte> m(size);
  std::memcpy(m.data() + 1, &index, 8);
  for (std::size_t i = 9; i < size; ++i) m[i] = static_cast<std::byte>((i * 31 + index) & 0xff);
  return m;
}
inline std::uint64_t index_of(std::span<const std::byte> m) {
  std::uint64_t index = 0;
  std::memcpy(&index, m.data() + 1, 8);
  return index;
}

/// Publishes warm-up messages on `pub` until `sub` receives one (then drains what arrives within
/// a moment): the bridges have matched. False if nothing came within `timeout`.
inline bool warm_up(Publisher& pub, Subscriber& sub, std::chrono::seconds timeout = std::chrono::seconds(30)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::vector<std::byte> w(16, kWarmup);
  while (std::chrono::steady_clock::now() < deadline) {
    if (!pub.publish_copy(w).ok()) return false;
    auto got = sub.receive(std::chrono::milliseconds(100));
    if (got.ok()) {
      while (sub.receive(std::chrono::milliseconds(300)).ok()) {
      }
      return true;
    }
  }
  return false;
}

/// The next numbered message `sub` receives within `timeout`, passing over warm-ups: on a busy
/// machine a warm-up repeated before the first crossed can arrive after warm_up stopped draining.
inline Result<Sample> receive_numbered(Subscriber& sub, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    auto got = sub.receive(std::max(left, std::chrono::milliseconds(0)));
    if (!got.ok() || got->data().empty() || got->data()[0] != kWarmup) return got;
  }
}

/// Runs `send` on a thread while the test reads. Should the test end early (a failed REQUIRE), it
/// reads `sub` until the sender is done, so a lockstep chain of bridges never leaves the sender
/// waiting for room forever.
class SenderThread {
 public:
  SenderThread(Subscriber& sub, std::function<void()> send)
      : sub_(sub), thread_([this, send = std::move(send)] {
          send();
          done_ = true;
        }) {}
  ~SenderThread() {
    while (!done_) (void)sub_.receive(std::chrono::milliseconds(100));
    thread_.join();
  }
  SenderThread(const SenderThread&) = delete;
  SenderThread& operator=(const SenderThread&) = delete;

 private:
  Subscriber& sub_;
  std::atomic<bool> done_{false};
  std::thread thread_;
};

/// A publisher of `topic` in `domain`, with the topic's default settings.
inline Publisher open_publisher(const std::string& domain, const std::string& topic) {
  PublisherOptions po;
  po.topic.domain = domain;
  auto pub = Publisher::create(topic, po);
  REQUIRE(pub.ok());
  return std::move(*pub);
}

/// A subscriber of `topic` in `domain` (creating the topic `depth` deep, if given, when it is new).
inline Subscriber open_subscriber(const std::string& domain, const std::string& topic,
                                  std::optional<std::uint32_t> depth = std::nullopt) {
  SubscriberOptions so;
  so.topic.domain = domain;
  so.topic.depth = depth;
  auto sub = Subscriber::create(topic, so);
  REQUIRE(sub.ok());
  return std::move(*sub);
}

/// A publisher of `topic` in domain `from` and a subscriber of it in domain `to`, once the bridges
/// between them carry it (warm_up): how every test that carries messages starts.
struct Crossing {
  Result<Publisher> pub;
  Result<Subscriber> sub;
};
inline Crossing open_crossing(const std::string& from, const std::string& to, const std::string& topic) {
  Crossing c{open_publisher(from, topic), open_subscriber(to, topic)};
  REQUIRE(warm_up(*c.pub, *c.sub));
  return c;
}

/// Every message a subscriber gets within `quiet` of the last one: index -> copies; warm-ups apart.
struct Tally {
  std::map<std::uint64_t, int> copies;
  int warmups = 0;
};
inline Tally drain(Subscriber& sub, std::chrono::milliseconds quiet) {
  Tally t;
  for (;;) {
    auto got = sub.receive(quiet);
    if (!got.ok()) return t;
    if (got->data()[0] == kWarmup) ++t.warmups;
    else ++t.copies[index_of(got->data())];
  }
}

/// Receives until `count` distinct messages arrived (or `timeout` passed), then whatever else comes
/// within `quiet`: a second copy of any would show.
inline Tally collect(Subscriber& sub, std::size_t count, std::chrono::seconds timeout = std::chrono::seconds(30),
                     std::chrono::milliseconds quiet = std::chrono::milliseconds(1000)) {
  Tally t;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (t.copies.size() < count && std::chrono::steady_clock::now() < deadline) {
    auto got = sub.receive(std::chrono::milliseconds(100));
    if (!got.ok()) continue;
    if (got->data()[0] == kWarmup) ++t.warmups;
    else ++t.copies[index_of(got->data())];
  }
  const Tally more = drain(sub, quiet);
  for (const auto& [index, n] : more.copies) t.copies[index] += n;
  t.warmups += more.warmups;
  return t;
}

/// Whether `count` distinct messages arrived, each exactly once.
inline bool each_once(const Tally& t, std::size_t count) {
  if (t.copies.size() != count) return false;
  for (const auto& [index, n] : t.copies)
    if (n != 1) return false;
  return true;
}

/// `count` distinct messages arrived, each exactly once.
inline void check_each_once(const Tally& t, std::size_t count) {
  CHECK(t.copies.size() == count);
  for (const auto& [index, n] : t.copies) {
    INFO("message " << index);
    CHECK(n == 1);
  }
}

/// Drains `sub` in a thread of its own while the test publishes; two seconds of silence end it.
inline std::future<Tally> drain_async(Subscriber& sub) {
  return std::async(std::launch::async, [&sub] { return drain(sub, std::chrono::seconds(2)); });
}

/// Fast DDS's shared-memory files in /dev/shm now.
inline std::set<std::string> fastdds_shm_files() {
  std::set<std::string> names;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/dev/shm", ec)) {
    const std::string name = e.path().filename().string();
    if (name.starts_with("fastrtps_")) names.insert(name);
  }
  return names;
}

/// Removes the Fast DDS segments that appeared since `before` and that no process holds any more
/// (a participant killed with -9 leaves its segment behind; a live one holds its "_el" lock file),
/// as Fast DDS's `fastdds shm clean` would.
inline void remove_abandoned_fastdds_files(const std::set<std::string>& before) {
  for (const auto& name : fastdds_shm_files()) {
    if (before.count(name) || !name.ends_with("_el")) continue;
    const std::string lock = "/dev/shm/" + name;
    const int fd = ::open(lock.c_str(), O_RDONLY);
    if (fd < 0) continue;
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) {
      const std::string base = name.substr(0, name.size() - 3);
      std::error_code ec;
      std::filesystem::remove("/dev/shm/" + base, ec);
      std::filesystem::remove("/dev/shm/sem." + base + "_mutex", ec);
      std::filesystem::remove(lock, ec);
    }
    ::close(fd);
  }
}

}  // namespace cerulion::test
