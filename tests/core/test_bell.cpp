// SPDX-License-Identifier: Apache-2.0
// A wait set's bell (core/src/bell.hpp): the one futex word that the publishers of all its members
// ring, made, given up and cleaned away.

#include <catch2/catch.hpp>

#include <dirent.h>
#include <fcntl.h>
#include <memory>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

#include "bell.hpp"
#include "child.hpp"
#include "helpers.hpp"
#include "process.hpp"

using namespace cerulion;
using namespace cerulion::test;
using namespace std::chrono_literals;

namespace {

/// The names of the bells in /dev/shm that process `pid` made.
std::vector<std::string> bells_of(pid_t pid) {
  std::vector<std::string> found;
  std::unique_ptr<DIR, int (*)(DIR*)> dir(::opendir("/dev/shm"), ::closedir);
  REQUIRE(dir);
  while (dirent* e = ::readdir(dir.get())) {
    const std::string name = e->d_name;
    if (!detail::is_bell_name(name)) continue;
    int fd = ::open(("/dev/shm/" + name).c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW);
    if (fd < 0) continue;
    detail::BellPage page{};
    const bool read = ::pread(fd, &page, sizeof page, 0) == static_cast<ssize_t>(sizeof page);
    ::close(fd);
    if (read && detail::check_header(&page, detail::kBellRule, name).ok() && page.pid == static_cast<std::uint32_t>(pid)) {
      found.push_back(name);
    }
  }
  return found;
}

WaitOptions block_wait() {
  WaitOptions o;
  o.strategy = WaitStrategy::Block;
  return o;
}

/// Subscribers of `count` new topics named after `stem`, in `domain`.
struct Members {
  std::vector<std::string> topics;
  std::vector<Subscriber> subscribers;
  Members(const std::string& stem, std::size_t count, const std::string& domain = default_domain()) {
    SubscriberOptions options;
    options.topic.domain = domain;
    for (std::size_t i = 0; i < count; ++i) {
      topics.push_back(unique_topic(stem + std::to_string(i)));
      subscribers.push_back(Subscriber::create(topics.back(), options).value());
    }
  }
  void join(WaitSet& set) {
    for (auto& s : subscribers) REQUIRE(set.add(s).ok());
  }
};

/// Publishes one message to `topic` once the wait set has had time to fall asleep; sets `published`
/// when it did (Catch2's assertions belong to the test's thread, which checks it after the join).
std::thread publish_later(const std::string& topic, bool& published) {
  return std::thread([topic, &published] {
    auto pub = Publisher::create(topic);
    if (!pub.ok()) return;
    std::this_thread::sleep_for(20ms);
    published = pub->publish(std::uint64_t{7}).ok();
  });
}

}  // namespace

TEST_CASE("A wait set of several subscribers sleeps on one bell, which goes with the set", "[wait_set][bell]") {
  auto set = std::make_unique<WaitSet>(block_wait());
  Members members("bell_made", 3);
  SECTION("several members: a bell") {
    members.join(*set);
    REQUIRE(set->wait(10ms).code() == ErrorCode::Timeout);
    CHECK(bells_of(::getpid()).size() == 1);
    set.reset();
    CHECK(bells_of(::getpid()).empty());
  }
  SECTION("one member: its own word, no bell") {
    REQUIRE(set->add(members.subscribers.front()).ok());
    REQUIRE(set->wait(10ms).code() == ErrorCode::Timeout);
    CHECK(bells_of(::getpid()).empty());
  }
  SECTION("a member removed: a new bell for the rest") {
    members.join(*set);
    REQUIRE(set->wait(10ms).code() == ErrorCode::Timeout);
    const auto before = bells_of(::getpid());
    set->remove(members.subscribers.back());
    REQUIRE(set->wait(10ms).code() == ErrorCode::Timeout);
    const auto after = bells_of(::getpid());
    REQUIRE(before.size() == 1);
    REQUIRE(after.size() == 1);
    CHECK(before != after);
  }
}

TEST_CASE("A wait set whose bell cannot be rung goes back to its members' own words, losing nothing",
          "[wait_set][bell]") {
  WaitSet set(block_wait());
  Members members("bell_gone", 2);
  members.join(set);
  REQUIRE(set.wait(10ms).code() == ErrorCode::Timeout);
  const auto bells = bells_of(::getpid());
  REQUIRE(bells.size() == 1);
  REQUIRE(::unlink(("/dev/shm/" + bells.front()).c_str()) == 0);  // a publisher can no longer open it
  for (std::size_t round = 0; round < 2; ++round) {
    const std::size_t target = 1 - round;
    bool published = false;
    std::thread publisher = publish_later(members.topics[target], published);
    // The first one is missed by the bell and found by the end of the sleep (the next liveness
    // check, 100 ms); the second wakes the set on its member's word.
    auto ready = set.wait(5s);
    publisher.join();
    REQUIRE(published);
    REQUIRE(ready.ok());
    CHECK(ready->message(target));
    auto sample = members.subscribers[target].try_receive();
    REQUIRE(sample.ok());
    CHECK(sample->has_value());
  }
  CHECK(bells_of(::getpid()).empty());  // and no new bell while the members stay the same
}

TEST_CASE("Clean removes the bell of a wait set whose process died, in its domain only, and keeps a live one's",
          "[wait_set][bell][clean]") {
  const std::string domain = unique_domain("bell_dead");
  Child child([&](Child& self) {
    WaitSet set(block_wait());
    Members members("bell_dead", 2, domain);
    for (auto& s : members.subscribers) {
      if (!set.add(s).ok()) return 1;
    }
    if (set.wait(10ms).code() != ErrorCode::Timeout) return 2;
    self.signal_ready();
    std::this_thread::sleep_for(60s);
    return 0;
  });
  REQUIRE(child.wait_ready());
  const auto bells = bells_of(child.pid());
  REQUIRE(bells.size() == 1);
  const std::string path = "/dev/shm/" + bells.front();
  auto listed = [&](const Result<std::vector<CleanedSegment>>& report) {
    REQUIRE(report.ok());
    for (const auto& item : *report) {
      if (item.segment == "/" + bells.front()) return item.topic.empty() && item.reason.find("died") != std::string::npos;
    }
    return false;
  };
  CHECK_FALSE(listed(clean_domain(domain, false)));  // alive
  CHECK(exists(path));
  child.kill9();
  CHECK_FALSE(listed(clean_domain(unique_domain("bell_other"), false)));  // another domain's
  CHECK(exists(path));
  CHECK(listed(clean_domain(domain, true)));
  CHECK(exists(path));
  CHECK(listed(clean_domain(domain, false)));
  CHECK_FALSE(exists(path));
}

TEST_CASE("A publisher rings only what is a bell", "[wait_set][bell][hostile]") {
  const std::uint64_t id = 0x5eed000000000000ull | static_cast<std::uint64_t>(::getpid());
  const std::string path = "/dev/shm/" + detail::bell_name(id);
  ::unlink(path.c_str());
  SECTION("nothing there") { CHECK_FALSE(detail::ring_bell(id)); }
  // A FIFO, a link, a directory, another user's page: shm_hostile.cpp, as for every kind.
  SECTION("a page without a bell's header") {
    int fd = ::open(path.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
    REQUIRE(fd >= 0);
    const std::vector<char> zeros(detail::kBellBytes, 0);
    REQUIRE(::write(fd, zeros.data(), zeros.size()) == static_cast<ssize_t>(zeros.size()));
    ::close(fd);
    CHECK_FALSE(detail::ring_bell(id));
  }
  SECTION("a file shorter than a page") {
    int fd = ::open(path.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
    REQUIRE(fd >= 0);
    REQUIRE(::write(fd, "bell", 4) == 4);
    ::close(fd);
    CHECK_FALSE(detail::ring_bell(id));
  }
  ::unlink(path.c_str());
}
