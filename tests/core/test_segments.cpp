// SPDX-License-Identifier: Apache-2.0
// Segment lifecycle: naming, removal by the last participant, corruption, permissions, clean.

#include <catch2/catch.hpp>

#include <csignal>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include "helpers.hpp"
#include "process.hpp"
#include "segment.hpp"

using namespace cerulion;
using namespace cerulion::test;
using namespace std::chrono_literals;


TEST_CASE("Segment is named after domain and topic and private to its user", "[segment]") {
  const std::string topic = unique_topic("naming");
  auto pub = Publisher::create(topic);
  REQUIRE(pub.ok());
  struct stat st {};
  REQUIRE(::stat(shm_path(topic).c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  auto info = inspect_topic(topic);
  REQUIRE(info.ok());
  CHECK(info->permissions == 0600);
  CHECK(info->segment == segment_name(default_domain(), topic));
}

TEST_CASE("Last participant out removes the segment", "[segment]") {
  const std::string topic = unique_topic("cleanup");
  {
    auto pub = Publisher::create(topic);
    auto sub = Subscriber::create(topic);
    REQUIRE(pub.ok());
    REQUIRE(sub.ok());
    CHECK(exists(shm_path(topic)));
  }
  CHECK_FALSE(exists(shm_path(topic)));
  // And the topic can be created afresh.
  auto again = Publisher::create(topic);
  CHECK(again.ok());
}

TEST_CASE("Joining a segment its last participant just removed is refused so nobody joins an orphan", "[segment]") {
  const std::string topic = unique_topic("rejoin");
  auto pub = Publisher::create(topic);
  REQUIRE(pub.ok());
  auto name = normalize_topic_name(topic);
  REQUIRE(name.ok());
  const detail::TopicSegment::OpenRequest request{*name, TopicOptions{}, detail::TopicSegment::Access::Subscribe};
  auto opened = detail::TopicSegment::open(request);  // mapped, not joined yet...
  REQUIRE(opened.ok());
  { Publisher last = std::move(*pub); }  // ...when the last participant leaves and removes it
  REQUIRE_FALSE(exists(shm_path(topic)));

  SECTION("attaching to the removed segment says it is gone") {
    auto index = (*opened)->attach(Role::Subscriber, std::nullopt, std::nullopt);
    CHECK(index.code() == ErrorCode::NotFound);
  }
  SECTION("joining opens a fresh segment, which a later publisher shares") {
    auto joined = detail::TopicSegment::join(request, Role::Subscriber, std::nullopt, std::nullopt);
    REQUIRE(joined.ok());
    CHECK(joined->segment.get() != opened->get());
    CHECK(exists(shm_path(topic)));
    auto late = Publisher::create(topic);
    REQUIRE(late.ok());
    CHECK(late->subscriber_count() == 1);
    joined->segment->detach(joined->index);
  }
  CHECK_FALSE(exists(shm_path(topic)));
}

TEST_CASE("Corrupted segment is reported never trusted", "[segment]") {
  const std::string topic = unique_topic("corrupt");
  auto keeper = Subscriber::create(topic);  // keeps the segment alive while we damage it
  REQUIRE(keeper.ok());
  SECTION("wrong magic") {
    scribble(topic, 0, "GARBAGE!");
    auto pub = Publisher::create(topic);
    CHECK(pub.code() == ErrorCode::Corrupted);
    CHECK(pub.message().find("magic") != std::string::npos);
  }
  SECTION("wrong layout version") {
    scribble(topic, 8, std::string("\x63\x00\x00\x00", 4));
    auto pub = Publisher::create(topic);
    CHECK(pub.code() == ErrorCode::Corrupted);
    CHECK(pub.message().find("layout version") != std::string::npos);
  }
  SECTION("damaged sizes") {
    scribble(topic, 16, std::string("\xff\xff\x00\x00", 4));
    auto sub = Subscriber::create(topic);
    CHECK(sub.code() == ErrorCode::Corrupted);
  }
  SECTION("listing names the damaged topic instead of failing") {
    scribble(topic, 0, "GARBAGE!");
    auto listing = list_topics();
    REQUIRE(listing.ok());
    bool mentioned = std::any_of(listing->problems.begin(), listing->problems.end(),
                                 [&](const std::string& p) { return p.find(topic) != std::string::npos; });
    CHECK(mentioned);
  }
  // Repair so the keeper's destructor can remove it normally.
  ::unlink(shm_path(topic).c_str());
}

TEST_CASE("Foreign file in the namespace is reported as corrupted", "[segment]") {
  const std::string topic = unique_topic("foreign");
  int fd = ::shm_open(segment_name(default_domain(), topic).c_str(), O_CREAT | O_RDWR, 0600);
  REQUIRE(fd >= 0);
  REQUIRE(::ftruncate(fd, 8192) == 0);
  ::close(fd);
  auto sub = Subscriber::create(topic);
  CHECK(sub.code() == ErrorCode::Corrupted);
  ::shm_unlink(segment_name(default_domain(), topic).c_str());
}

TEST_CASE("Another user gets permission denied", "[segment]") {
  if (::geteuid() != 0) {
    WARN("skipped: needs root to switch to another user");
    return;
  }
  const std::string topic = unique_topic("permission");
  auto pub = Publisher::create(topic);
  REQUIRE(pub.ok());
  pid_t pid = fork();
  if (pid == 0) {
    if (::setgid(65534) != 0 || ::setuid(65534) != 0) _exit(10);
    auto sub = Subscriber::create(topic);
    if (sub.ok()) _exit(1);
    if (sub.code() != ErrorCode::PermissionDenied) _exit(2);
    if (sub.message().find("permission denied") == std::string::npos) _exit(3);
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("Clean removes only what dead processes left", "[segment]") {
  const std::string domain = "cleantest" + std::to_string(getpid());
  const std::string dead_topic = "/left/behind";
  const std::string live_topic = "/still/used";
  pid_t pid = fork();
  if (pid == 0) {
    PublisherOptions o;
    o.topic.domain = domain;
    auto pub = Publisher::create(dead_topic, o);
    if (!pub.ok()) _exit(1);
    ::kill(::getpid(), SIGKILL);
    _exit(2);
  }
  waitpid(pid, nullptr, 0);
  PublisherOptions o;
  o.topic.domain = domain;
  auto live = Publisher::create(live_topic, o);
  REQUIRE(live.ok());
  REQUIRE(exists(shm_path(dead_topic, domain)));

  auto dry = clean_domain(domain, true);
  REQUIRE(dry.ok());
  REQUIRE(dry->size() == 1);
  CHECK((*dry)[0].topic == dead_topic);
  CHECK_FALSE((*dry)[0].removed);
  CHECK((*dry)[0].reason.find(std::to_string(pid)) != std::string::npos);
  CHECK(exists(shm_path(dead_topic, domain)));

  auto done = clean_domain(domain, false);
  REQUIRE(done.ok());
  REQUIRE(done->size() == 1);
  CHECK((*done)[0].removed);
  CHECK_FALSE(exists(shm_path(dead_topic, domain)));
  CHECK(exists(shm_path(live_topic, domain)));

  auto forced = clean_domain(domain, false, live_topic);
  REQUIRE(forced.ok());
  REQUIRE(forced->size() == 1);
  CHECK_FALSE(exists(shm_path(live_topic, domain)));
  CHECK(clean_domain(domain, false, "/no/such").code() == ErrorCode::NotFound);
}

TEST_CASE("Listing shows live participants and marks dead ones", "[segment]") {
  const std::string domain = "listtest" + std::to_string(getpid());
  PublisherOptions po;
  po.topic.domain = domain;
  SubscriberOptions so;
  so.topic.domain = domain;
  auto pub = Publisher::create("/list/me", po);
  auto sub = Subscriber::create("/list/me", so);
  SubscriberOptions tap_options = so;
  tap_options.role = Role::Tap;
  auto tap = Subscriber::create("/list/me", tap_options);
  REQUIRE(pub.ok());
  REQUIRE(sub.ok());
  REQUIRE(tap.ok());
  pid_t pid = fork();
  if (pid == 0) {
    auto dead = Subscriber::create("/list/me", so);
    ::kill(::getpid(), SIGKILL);
    _exit(1);
  }
  waitpid(pid, nullptr, 0);
  REQUIRE(pub->publish_copy(bytes_of("x"), 0ms).ok());
  auto listing = list_topics(domain);
  REQUIRE(listing.ok());
  REQUIRE(listing->topics.size() == 1);
  const TopicInfo& t = listing->topics[0];
  CHECK(t.name == "/list/me");
  CHECK(t.count(Role::Publisher) == 1);
  CHECK(t.count(Role::Subscriber) == 1);
  CHECK(t.count(Role::Subscriber, false) == 2);
  CHECK(t.count(Role::Tap) == 1);
  CHECK(t.published == 1);
  CHECK_FALSE(t.abandoned());
  CHECK(inspect_topic("/nope", domain).code() == ErrorCode::NotFound);
}

TEST_CASE("Topic info measures the rate over the messages the ring keeps and forgets it when idle", "[segment]") {
  const std::string domain = "ratetest" + std::to_string(getpid());
  PublisherOptions po = publisher_options(Mode::FreeRun, 4);
  po.topic.domain = domain;
  auto pub = Publisher::create("/rate/me", po);
  REQUIRE(pub.ok());
  auto info = inspect_topic("/rate/me", domain);
  REQUIRE(info.ok());
  CHECK(info->rate_hz == 0);
  CHECK(info->last_publish_realtime_ns == 0);
  const std::uint64_t before = realtime_ns();
  // Ten messages at least 10 ms apart: more than the ring's depth, so its entries have wrapped.
  for (int i = 0; i < 10; ++i) {
    REQUIRE(pub->publish_copy(bytes_of("x"), 0ms).ok());
    std::this_thread::sleep_for(10ms);
  }
  info = inspect_topic("/rate/me", domain);
  REQUIRE(info.ok());
  CHECK(info->published == 10);
  CHECK(info->rate_hz > 0);
  CHECK(info->rate_hz <= 100.5);  // sleeps last at least what they ask
  CHECK(info->last_publish_realtime_ns >= before);
  CHECK(info->last_publish_realtime_ns <= realtime_ns());
  std::this_thread::sleep_for(250ms);  // idle for over two periods and over 100 ms
  info = inspect_topic("/rate/me", domain);
  REQUIRE(info.ok());
  CHECK(info->rate_hz == 0);
  CHECK(info->last_publish_realtime_ns >= before);
}

TEST_CASE("A new object is made by one call: unnamed, sized, its first bytes committed, and named only when asked",
          "[segments]") {
  using detail::NewObject;
  using detail::ShmFile;
  const std::string name = "cerulion-test-create." + std::to_string(::getpid());
  auto made = ShmFile::create(NewObject{.mode = 0600, .group = std::nullopt, .size = 3 * 4096, .committed = 4096}, "a test object");
  REQUIRE(made.ok());
  struct stat st {};
  REQUIRE(::fstat(made->fd(), &st) == 0);
  CHECK(st.st_size == 3 * 4096);
  CHECK((st.st_mode & 07777) == 0600);
  CHECK(static_cast<std::uint64_t>(st.st_blocks) * 512 >= 4096);  // committed: writing it cannot fault
  CHECK(static_cast<std::uint64_t>(st.st_blocks) * 512 < 3 * 4096);  // the rest is not
  CHECK(count_shm_entries(name) == 0);                               // nobody can open it yet
  auto named = made->publish_as(name, "a test object");
  REQUIRE(named.ok());
  CHECK(*named);
  CHECK(count_shm_entries(name) == 1);
  auto again = made->publish_as(name, "a test object");
  REQUIRE(again.ok());
  CHECK_FALSE(*again);  // never replaces what has the name
  ::unlink(detail::shm_path(name).c_str());
}
