// SPDX-License-Identifier: Apache-2.0
// The log of removed topics: a reader following a domain hears of every topic that came and went
// with messages in it while it listened, and nothing is noted (or left in /dev/shm) while nobody
// listens.

#include <catch2/catch.hpp>

#include <csignal>
#include <filesystem>
#include <optional>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.hpp"
#include "process.hpp"
#include "cerulion/core/detail/shm_file.hpp"
#include "removed_topics.hpp"  // white box: where the log lives

using namespace cerulion;
using namespace cerulion::test;

namespace {

std::string log_path(const std::string& domain) { return detail::shm_path(detail::removed_log_name(domain)); }

/// Creates `topic`, publishes `count` messages and leaves it: its last participant.
void come_and_go(const std::string& domain, const std::string& topic, int count) {
  PublisherOptions o;
  o.topic.domain = domain;
  o.topic.mode = Mode::FreeRun;
  auto pub = Publisher::create(topic, o);
  REQUIRE(pub.ok());
  for (int i = 0; i < count; ++i) REQUIRE(pub->publish_text("m").ok());
}

}  // namespace

TEST_CASE("A topic that comes and goes while a listener listens is heard of with the messages it held", "[removed]") {
  const std::string domain = unique_domain("removed");
  auto log = RemovedTopicLog::listen(domain);
  REQUIRE(log.ok());
  const std::uint64_t before = realtime_ns();
  come_and_go(domain, "/flash", 3);
  come_and_go(domain, "/empty", 0);  // nothing published: nothing to account for
  come_and_go(domain, "/flash", 2);  // the same name again: another topic
  auto heard = log->take();
  REQUIRE(heard.size() == 2);
  CHECK(heard[0].topic == "/flash");
  CHECK(heard[0].published == 3);
  CHECK(heard[1].published == 2);
  CHECK(heard[0].created_realtime_ns >= before);
  CHECK(heard[0].removed_realtime_ns >= heard[0].created_realtime_ns);
  CHECK(heard[1].created_realtime_ns >= heard[0].created_realtime_ns);
  CHECK(log->take().empty());  // each once
  CHECK(log->overrun() == 0);
}

TEST_CASE("A listener tells a topic it read from one of the same name that came and went", "[removed]") {
  const std::string domain = unique_domain("removed_same");
  auto log = RemovedTopicLog::listen(domain);
  REQUIRE(log.ok());
  std::uint64_t read_created = 0;
  {
    PublisherOptions o;
    o.topic.domain = domain;
    auto pub = Publisher::create("/t", o);
    REQUIRE(pub.ok());
    SubscriberOptions so;
    so.topic.domain = domain;
    so.role = Role::Tap;
    auto tap = Subscriber::create("/t", so);
    REQUIRE(tap.ok());
    REQUIRE(pub->publish_text("x").ok());
    read_created = tap->created_realtime_ns();
  }
  come_and_go(domain, "/t", 1);
  auto heard = log->take();
  REQUIRE(heard.size() == 2);
  CHECK(heard[0].created_realtime_ns == read_created);  // the one read
  CHECK(heard[1].created_realtime_ns > read_created);   // another of the same name
}

TEST_CASE("While nobody listens, removing a topic notes nothing and leaves no log", "[removed]") {
  const std::string domain = unique_domain("removed_none");
  come_and_go(domain, "/a", 1);
  CHECK_FALSE(std::filesystem::exists(log_path(domain)));
  {
    auto first = RemovedTopicLog::listen(domain);
    auto second = RemovedTopicLog::listen(domain);
    REQUIRE(first.ok());
    REQUIRE(second.ok());
    CHECK(first->take().empty());  // what was removed before it listened is not its business
    come_and_go(domain, "/b", 1);
    CHECK(first->take().size() == 1);  // each listener hears every removal
    CHECK(second->take().size() == 1);
    CHECK(std::filesystem::exists(log_path(domain)));
  }
  // The last listener removed it.
  CHECK_FALSE(std::filesystem::exists(log_path(domain)));
}

TEST_CASE("More removals than the log holds between two looks are counted as overrun", "[removed]") {
  const std::string domain = unique_domain("removed_overrun");
  auto log = RemovedTopicLog::listen(domain);
  REQUIRE(log.ok());
  const int extra = 10;
  for (int i = 0; i < static_cast<int>(RemovedTopicLog::kCapacity) + extra; ++i) come_and_go(domain, "/t" + std::to_string(i), 1);
  auto heard = log->take();
  CHECK(heard.size() == RemovedTopicLog::kCapacity);
  CHECK(log->overrun() == extra);
  CHECK(heard.front().topic == "/t" + std::to_string(extra));  // the newest are kept
}

TEST_CASE("clean removes a log whose listeners were killed, and leaves one that is listened to", "[removed]") {
  const std::string domain = unique_domain("removed_clean");
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    auto log = RemovedTopicLog::listen(domain);
    if (!log.ok()) ::_exit(1);
    ::pause();
    ::_exit(0);
  }
  const bool appeared = eventually([&] { return std::filesystem::exists(log_path(domain)); });
  {
    auto live = RemovedTopicLog::listen(domain);
    REQUIRE(live.ok());
    auto kept = clean_domain(domain, false);
    REQUIRE(kept.ok());
    CHECK(kept->empty());  // listened to
  }
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  REQUIRE(appeared);
  REQUIRE(std::filesystem::exists(log_path(domain)));  // its killed listener could not remove it
  auto cleaned = clean_domain(domain, false);
  REQUIRE(cleaned.ok());
  REQUIRE(cleaned->size() == 1);
  CHECK((*cleaned)[0].removed);
  CHECK((*cleaned)[0].reason.find("log of removed topics") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(log_path(domain)));
}

TEST_CASE("A topic clean removes with messages in it is heard of once, like any removed topic", "[removed]") {
  const std::string domain = unique_domain("removed_forced");
  auto log = RemovedTopicLog::listen(domain);
  REQUIRE(log.ok());
  PublisherOptions o;
  o.topic.domain = domain;
  std::optional<Result<Publisher>> newer;
  {
    auto pub = Publisher::create("/forced", o);
    REQUIRE(pub.ok());
    REQUIRE(pub->publish_text("m").ok());
    REQUIRE(pub->publish_text("n").ok());
    auto cleaned = clean_domain(domain, false, "/forced");
    REQUIRE(cleaned.ok());
    REQUIRE(cleaned->size() == 1);
    CHECK((*cleaned)[0].removed);
    newer.emplace(Publisher::create("/forced", o));
    REQUIRE(newer->ok());
  }
  // Its publisher, leaving the removed topic, neither noted it again nor removed the newer topic.
  auto listing = list_topics(domain);
  REQUIRE(listing.ok());
  CHECK(listing->topics.size() == 1);
  auto heard = log->take();
  REQUIRE(heard.size() == 1);
  CHECK(heard[0].topic == "/forced");
  CHECK(heard[0].published == 2);
  // A dry run removes nothing and notes nothing.
  REQUIRE((*newer)->publish_text("m").ok());
  REQUIRE(clean_domain(domain, true, "/forced").ok());
  CHECK(log->take().empty());
}
