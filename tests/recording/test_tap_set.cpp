// SPDX-License-Identifier: Apache-2.0
// Taps as a set over real topics: many topics on a fixed number of threads (or a thread each),
// topics that appear later read from their first message, what a tap misses counted, and what it
// cannot read said once.

#include <catch2/catch.hpp>

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <map>
#include <thread>

#include "cerulion/core/names.hpp"
#include "cerulion/recording/events.hpp"
#include "helpers.hpp"

using namespace cerulion;
using namespace cerulion::recording;
using namespace cerulion::test;
using namespace std::chrono_literals;

namespace {

/// A set following every topic of `domain`, saying what it has to say to `events`.
TapSetOptions every_topic_of(const TestDomain& domain, EventQueue& events) {
  TapSetOptions o;
  o.domain = domain.name;
  o.selection.all = true;
  o.events = &events;
  return o;
}

int thread_count() {
  int n = 0;
  if (DIR* dir = ::opendir("/proc/self/task")) {
    while (dirent* e = ::readdir(dir)) if (e->d_name[0] != '.') ++n;
    ::closedir(dir);
  }
  return n;
}

}  // namespace

TEST_CASE("A tap set reads every message of ten topics with two threads, or a thread each, however it waits",
          "[recording][taps]") {
  const Readers readers = GENERATE(Readers::Pooled, Readers::PerTopic);
  const WaitStrategy wait = GENERATE(WaitStrategy::Adaptive, WaitStrategy::Block);
  TestDomain domain("taps_ten");
  std::vector<std::string> names;
  std::vector<Publisher> publishers;
  for (int i = 0; i < 10; ++i) {
    names.push_back("/ten/t" + std::to_string(i));
    publishers.push_back(std::move(Publisher::create(names.back(), publisher_in(domain.name)).value()));
  }
  KeepingSink sink;
  TapSetOptions o;
  o.selection.topics = names;
  o.domain = domain.name;
  o.threads = 2;
  o.readers = readers;
  o.wait = wait;
  auto taps = TapSet::create(o, sink);
  REQUIRE(taps.ok());
  taps->start();
  for (int n = 0; n < 20; ++n) {
    for (int i = 0; i < 10; ++i) {
      REQUIRE(publishers[i].publish_copy(bytes_of(std::to_string(i) + ":" + std::to_string(n))).ok());
    }
    std::this_thread::sleep_for(1ms);
  }
  CHECK(eventually([&] { return sink.count() == 200; }));
  taps->stop();
  auto counts = taps->counts();
  REQUIRE(counts.size() == 10);
  for (std::size_t i = 0; i < 10; ++i) {
    CHECK(counts[i].topic == names[i]);
    CHECK(counts[i].received == 20);
    CHECK(counts[i].missed == 0);
    CHECK(counts[i].dropped == 0);
  }
  // Each topic's samples arrive in order, its description first.
  CHECK(sink.topics.size() == 10);
  std::vector<std::uint64_t> next(10, 0);
  for (const auto& s : sink.samples) {
    CHECK(s.sequence == next[s.topic_index]++);
    CHECK(s.text == std::to_string(s.topic_index) + ":" + std::to_string(s.sequence));
  }
}

TEST_CASE("A tap set runs as many threads for fifty topics as for one", "[recording][taps]") {
  TestDomain domain("taps_fifty");
  KeepingSink sink;
  auto threads_with = [&](int topics) {
    TapSetOptions o;
    o.domain = domain.name;
    for (int i = 0; i < topics; ++i) o.selection.topics.push_back("/many/t" + std::to_string(topics) + "_" + std::to_string(i));
    const int before = thread_count();
    auto taps = TapSet::create(o, sink);
    REQUIRE(taps.ok());
    taps->start();
    const int during = thread_count();
    REQUIRE(taps->topics().size() == static_cast<std::size_t>(topics));
    taps->stop();
    return during - before;
  };
  const int one = threads_with(1);
  const int fifty = threads_with(50);
  CHECK(one == 2);
  CHECK(fifty == one);
}

TEST_CASE("A tap set with a thread per topic runs one reader for each topic, new ones included", "[recording][taps]") {
  TestDomain domain("taps_per_topic");
  KeepingSink sink;
  auto first = Publisher::create("/per/first", publisher_in(domain.name));
  REQUIRE(first.ok());
  TapSetOptions o;
  o.domain = domain.name;
  o.readers = Readers::PerTopic;
  o.selection.topics = {"/per/first"};
  o.selection.include = {"^/per/"};
  const int before = thread_count();
  auto taps = TapSet::create(o, sink);
  REQUIRE(taps.ok());
  taps->start();
  CHECK(thread_count() - before == 2);  // the named topic's reader and the discovery thread
  auto second = Publisher::create("/per/second", publisher_in(domain.name));
  REQUIRE(second.ok());
  REQUIRE(eventually([&] { return taps->topics().size() == 2; }));
  CHECK(thread_count() - before == 3);
  REQUIRE(first->publish_copy(bytes_of("one")).ok());
  REQUIRE(second->publish_copy(bytes_of("two")).ok());
  REQUIRE(eventually([&] { return sink.count() == 2; }));
  taps->stop();
  CHECK(thread_count() == before);
  for (const auto& c : taps->counts()) {
    INFO(c.topic);
    CHECK(c.received == 1);
  }
}

TEST_CASE("A tap set over every topic reads a topic that appears later from its first message", "[recording][taps]") {
  const Readers readers = GENERATE(Readers::Pooled, Readers::PerTopic);
  TestDomain domain("taps_later");
  KeepingSink sink;
  TapSetOptions o;
  o.domain = domain.name;
  o.readers = readers;
  o.selection.all = true;
  o.selection.exclude = {"^/skip"};
  EventQueue events;
  o.events = &events;
  auto taps = TapSet::create(o, sink);
  REQUIRE(taps.ok());
  taps->start();
  std::this_thread::sleep_for(100ms);
  auto skipped = Publisher::create("/skip/me", publisher_in(domain.name));
  auto publisher = Publisher::create("/later", publisher_in(domain.name));
  REQUIRE(publisher.ok());
  REQUIRE(skipped.ok());
  // Published at once, before the set can have noticed the topic: the ring still holds them.
  for (int i = 0; i < 10; ++i) REQUIRE(publisher->publish_copy(bytes_of("m" + std::to_string(i))).ok());
  REQUIRE(skipped->publish_copy(bytes_of("no")).ok());
  REQUIRE(eventually([&] { return sink.count() == 10; }));
  std::this_thread::sleep_for(50ms);
  taps->stop();
  REQUIRE(sink.count() == 10);
  for (std::uint64_t i = 0; i < 10; ++i) {
    CHECK(sink.samples[i].sequence == i);
    CHECK(sink.samples[i].lost_before == 0);
  }
  auto topics = taps->topics();
  REQUIRE(topics.size() == 1);
  CHECK(topics[0].topic == "/later");
  // It says what it reads, and nothing about what it was told to skip.
  const auto said = events.drain();
  REQUIRE(said.size() == 1);
  CHECK(said[0].kind == EventKind::Info);
  CHECK(said[0].subject == "/later");
  CHECK(said[0].realtime_ns > 0);
}

TEST_CASE("A tap set says once, as a problem, an entry of its domain it cannot read, and reads the others",
          "[recording][taps]") {
  TestDomain domain("taps_fifo");
  const std::string planted = "/dev/shm" + segment_name(domain.name, "/planted");
  REQUIRE(::mkfifo(planted.c_str(), 0600) == 0);
  KeepingSink sink;
  EventQueue events;
  auto taps = TapSet::create(every_topic_of(domain, events), sink);
  REQUIRE(taps.ok());
  taps->start();
  // A topic that appears after start() is found by a second listing, which sees the FIFO again.
  auto publisher = Publisher::create("/good", publisher_in(domain.name));
  REQUIRE(publisher.ok());
  REQUIRE(publisher->publish_copy(bytes_of("m")).ok());
  REQUIRE(eventually([&] { return sink.count() == 1; }));
  taps->stop();
  ::unlink(planted.c_str());
  std::vector<Event> problems;
  for (auto& e : events.drain()) {
    if (e.kind == EventKind::Problem) problems.push_back(std::move(e));
  }
  REQUIRE(problems.size() == 1);
  INFO(problems[0].message);
  CHECK(problems[0].message.find("/planted") != std::string::npos);
  CHECK(problems[0].message.find("FIFO") != std::string::npos);
}

TEST_CASE("A tap set over every topic accounts for each topic that came and went before it could open it",
          "[recording][taps][removed]") {
  TestDomain domain("taps_flash");
  KeepingSink sink;
  EventQueue events;
  auto taps = TapSet::create(every_topic_of(domain, events), sink);
  REQUIRE(taps.ok());
  taps->start();
  // Created, published twice and left at once, faster than any discovery: a one-shot publisher.
  const int topics = 20;
  for (int i = 0; i < topics; ++i) {
    auto publisher = Publisher::create("/flash/t" + std::to_string(i), publisher_in(domain.name));
    REQUIRE(publisher.ok());
    REQUIRE(publisher->publish_copy(bytes_of("a")).ok());
    REQUIRE(publisher->publish_copy(bytes_of("b")).ok());
  }
  // Each topic's two messages are read or counted missed, none unaccounted.
  auto accounted = [&] {
    std::map<std::string, std::uint64_t> per_topic;
    for (const auto& c : taps->counts()) per_topic[c.topic] += c.received + c.missed;
    if (per_topic.size() != static_cast<std::size_t>(topics)) return false;
    for (const auto& [topic, n] : per_topic) {
      if (n != 2) return false;
    }
    return true;
  };
  const bool settled = eventually(accounted);
  taps->stop();
  std::map<std::string, std::uint64_t> received, missed;
  for (const auto& c : taps->counts()) {
    received[c.topic] += c.received;
    missed[c.topic] += c.missed;
  }
  std::string summary;
  for (const auto& [topic, n] : received) summary += topic + ": " + std::to_string(n) + " received, " + std::to_string(missed[topic]) + " missed\n";
  INFO(summary);
  REQUIRE(settled);
  // Each topic missed whole is said once, by name, with how many messages it held.
  std::size_t said = 0;
  for (const auto& e : events.drain()) {
    if (e.message.find("came and went before it could be read") == std::string::npos) continue;
    ++said;
    CHECK(e.kind == EventKind::Warning);
    CHECK(missed[e.subject] == 2);
    CHECK(e.message == "'" + e.subject + "' came and went before it could be read: 2 messages missed");
  }
  std::size_t missed_whole = 0;
  for (const auto& [topic, n] : missed) missed_whole += n == 2 ? 1 : 0;
  CHECK(said == missed_whole);
}

TEST_CASE("A tap that falls behind a free-run topic counts what it missed", "[recording][taps]") {
  TestDomain domain("taps_behind");
  auto publisher = Publisher::create("/fast", publisher_in(domain.name, Mode::FreeRun, 4));
  REQUIRE(publisher.ok());
  // A sink that is slow with the first sample: the publisher laps the tap meanwhile.
  struct SlowSink : KeepingSink {
    bool on_sample(const TappedSample& s) override {
      if (s.sequence == 0) std::this_thread::sleep_for(300ms);
      return KeepingSink::on_sample(s);
    }
  } sink;
  TapSetOptions o;
  o.domain = domain.name;
  o.selection.topics = {"/fast"};
  auto taps = TapSet::create(o, sink);
  REQUIRE(taps.ok());
  taps->start();
  REQUIRE(publisher->publish_copy(bytes_of("first")).ok());
  REQUIRE(eventually([&] { return taps->counts()[0].received == 1; }));
  for (int i = 1; i < 100; ++i) REQUIRE(publisher->publish_copy(bytes_of("next")).ok());
  REQUIRE(eventually([&] {
    auto c = taps->counts()[0];
    return c.received + c.missed == 100;
  }));
  taps->stop();
  auto c = taps->counts()[0];
  CHECK(c.missed > 0);
  CHECK(c.received < 100);
  CHECK(c.dropped == 0);
  CHECK(taps->topics()[0].mode == Mode::FreeRun);
}

TEST_CASE("A tap set refuses a bad pattern and names a topic it cannot open", "[recording][taps]") {
  KeepingSink sink;
  TapSetOptions o;
  o.selection.include = {"(["};
  auto bad = TapSet::create(o, sink);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.code() == ErrorCode::InvalidArgument);
  CHECK(bad.message().find("'(['") != std::string::npos);
  CHECK(bad.message().find("--") == std::string::npos);  // no command-line flag names
  TapSetOptions named;
  named.selection.topics = {"a//b"};
  auto refused = TapSet::create(named, sink);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.code() == ErrorCode::InvalidTopicName);
  CHECK(refused.message().find("'a//b'") != std::string::npos);
}
