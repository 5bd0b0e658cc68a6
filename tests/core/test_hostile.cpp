// SPDX-License-Identifier: Apache-2.0
// What an unfriendly local user, or damage to the shared state, can do to a topic: entries planted
// under a segment's name, topics created by another user, damaged counters and damaged headers.

#include <catch2/catch.hpp>

#include <chrono>
#include <cstring>
#include <sys/stat.h>
#include <unistd.h>

#include "child.hpp"
#include "helpers.hpp"
#include "process.hpp"
#include "segment.hpp"  // white box: offsets of the fields to damage
#include "shm_objects.hpp"
#include "within.hpp"

using namespace cerulion;
using namespace cerulion::test;
using namespace std::chrono_literals;

namespace {

constexpr uid_t kOtherUser = 65534;   // nobody
constexpr gid_t kOtherGroup = 65534;  // nogroup

std::uint64_t published_offset() {
  return detail::kControlOffset + offsetof(detail::Control, published);
}

}  // namespace

TEST_CASE("Hostile entries in place of a topic segment are refused or reported, never followed or waited on",
          "[hostile][shm]") {
  check_hostile_entries(topic_segment_kind());
}

TEST_CASE("Hostile entries in place of a wait set's bell are refused, never followed or waited on",
          "[hostile][shm][bell]") {
  check_hostile_entries(bell_kind());
}

TEST_CASE("Hostile entries in place of a domain's log of removed topics are refused, never followed or waited on",
          "[hostile][shm][removed]") {
  check_hostile_entries(removed_log_kind());
}

TEST_CASE("A FIFO named like a segment is described without blocking and clean removes it", "[hostile]") {
  const std::string domain = "fifo" + std::to_string(getpid());
  const std::string path = shm_path("/planted", domain);
  REQUIRE(::mkfifo(path.c_str(), 0666) == 0);

  auto info = within(5s, [&] { return inspect_topic("/planted", domain); });
  REQUIRE(info.has_value());
  CHECK(info->code() == ErrorCode::Corrupted);

  auto dry = within(5s, [&] { return clean_domain(domain, true); });
  REQUIRE(dry.has_value());
  REQUIRE(dry->ok());
  REQUIRE((*dry)->size() == 1);
  CHECK((**dry)[0].reason == "not a topic segment: a FIFO");
  CHECK(exists(path));
  auto done = clean_domain(domain, false);
  REQUIRE(done.ok());
  REQUIRE(done->size() == 1);
  CHECK((*done)[0].removed);
  CHECK_FALSE(exists(path));
}

TEST_CASE("A directory or a link named like a segment is removed by clean and never followed", "[hostile]") {
  const std::string domain = "dir" + std::to_string(getpid());
  const std::string dir = shm_path("/dir", domain);
  const std::string link = shm_path("/link", domain);
  const std::string target = "/dev/shm/cerulion-test-link-target-" + std::to_string(getpid());
  REQUIRE(::mkdir(dir.c_str(), 0700) == 0);
  REQUIRE(::mkdir((dir + "/inside").c_str(), 0700) == 0);
  REQUIRE(::symlink(target.c_str(), link.c_str()) == 0);
  int fd = ::open(target.c_str(), O_CREAT | O_WRONLY, 0600);
  REQUIRE(fd >= 0);
  ::close(fd);

  auto done = clean_domain(domain, false);
  REQUIRE(done.ok());
  REQUIRE(done->size() == 2);
  CHECK((*done)[0].removed);
  CHECK((*done)[1].removed);
  CHECK_FALSE(exists(dir));
  struct stat st {};
  CHECK(::lstat(link.c_str(), &st) != 0);
  CHECK(exists(target));  // what the link pointed at is not touched
  ::unlink(target.c_str());
}

TEST_CASE("A topic another user created is refused even to root naming its owner", "[hostile]") {
  if (::geteuid() != 0) {
    WARN("skipped: needs root to act as another user");
    return;
  }
  const std::string topic = unique_topic("squat");
  Child squatter([&](Child& self) {
    if (::setresgid(kOtherGroup, kOtherGroup, kOtherGroup) != 0 || ::setresuid(kOtherUser, kOtherUser, kOtherUser) != 0) {
      return 10;
    }
    auto sub = Subscriber::create(topic);
    if (!sub.ok()) return 1;
    self.signal_ready();
    ::pause();
    return 0;
  });
  REQUIRE(squatter.wait_ready());

  auto pub = Publisher::create(topic);
  CHECK(pub.code() == ErrorCode::PermissionDenied);
  CHECK(pub.message().find("belongs to user '" + detail::user_name(kOtherUser) + "'") != std::string::npos);
  auto sub = Subscriber::create(topic);
  CHECK(sub.code() == ErrorCode::PermissionDenied);

  auto info = inspect_topic(topic);  // looking is allowed; joining is not
  REQUIRE(info.ok());
  CHECK(info->foreign);
  CHECK(info->owner_uid == kOtherUser);
  squatter.kill9();
  ::unlink(shm_path(topic).c_str());
}

TEST_CASE("A topic shared with a group is joined by its members and nobody else", "[hostile]") {
  if (::geteuid() != 0) {
    WARN("skipped: needs root to act as other users");
    return;
  }
  const std::string topic = unique_topic("shared");
  const std::string group = detail::group_name(kOtherGroup);
  Child owner([&](Child& self) {
    if (::setgroups(0, nullptr) != 0 || ::setresgid(kOtherGroup, kOtherGroup, kOtherGroup) != 0 ||
        ::setresuid(kOtherUser, kOtherUser, kOtherUser) != 0) {
      return 10;
    }
    PublisherOptions options;
    options.topic.group = group;
    auto pub = Publisher::create(topic, options);
    if (!pub.ok()) return 1;
    self.signal_ready();
    ::pause();
    return 0;
  });
  REQUIRE(owner.wait_ready());
  struct stat st {};
  REQUIRE(::stat(shm_path(topic).c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0660);
  CHECK(st.st_gid == kOtherGroup);

  // Another user in the group joins; root, not in it, does not.
  const int member = run_as_user(12345, 12345, {kOtherGroup}, [&] { return Subscriber::create(topic).ok() ? 0 : 1; });
  CHECK(member == 0);
  const int outsider = run_as_user(12346, 12346, {}, [&] { return Subscriber::create(topic).ok() ? 1 : 0; });
  CHECK(outsider == 0);
  auto root = Subscriber::create(topic);
  CHECK(root.code() == ErrorCode::PermissionDenied);
  CHECK(root.message().find("shared only with group '" + group + "'") != std::string::npos);
  owner.kill9();
  ::unlink(shm_path(topic).c_str());
}

TEST_CASE("Clean keeps a damaged segment that live processes still use", "[hostile]") {
  const std::string domain = "damaged" + std::to_string(getpid());
  PublisherOptions po;
  po.topic.domain = domain;
  SubscriberOptions so;
  so.topic.domain = domain;
  auto pub = Publisher::create("/live", po);
  auto sub = Subscriber::create("/live", so);
  REQUIRE(pub.ok());
  REQUIRE(sub.ok());
  const std::string path = shm_path("/live", domain);
  SECTION("one byte of the header checksum") {
    int fd = ::open(path.c_str(), O_RDWR);
    REQUIRE(fd >= 0);
    const char byte = 0x5a;
    REQUIRE(::pwrite(fd, &byte, 1, offsetof(detail::Config, config_crc)) == 1);
    ::close(fd);
  }
  SECTION("the file truncated to half") {
    struct stat st {};
    REQUIRE(::stat(path.c_str(), &st) == 0);
    REQUIRE(::truncate(path.c_str(), st.st_size / 2) == 0);
  }
  auto done = clean_domain(domain, false);
  REQUIRE(done.ok());
  REQUIRE(done->size() == 1);
  CHECK((*done)[0].in_use);
  CHECK_FALSE((*done)[0].removed);
  CHECK((*done)[0].reason.find(std::to_string(getpid())) != std::string::npos);
  CHECK(exists(path));
  // Forcing still removes it.
  auto forced = clean_domain(domain, false, "/live");
  REQUIRE(forced.ok());
  CHECK_FALSE(exists(path));
}

TEST_CASE("A lockstep subscriber reports an overwritten ring entry as damage instead of skipping it", "[hostile]") {
  const std::string topic = unique_topic("skip");
  auto pub = Publisher::create(topic, publisher_options(Mode::Lockstep, 4));
  auto sub = Subscriber::create(topic, subscriber_options());
  REQUIRE(pub.ok());
  REQUIRE(sub.ok());
  for (int i = 0; i < 3; ++i) REQUIRE(pub->publish_copy(bytes_of("m" + std::to_string(i)), 1s).ok());
  {
    auto first = sub->receive(1s);
    REQUIRE(first.ok());
    CHECK(first->sequence() == 0);
  }
  // Ring entry 1 now claims to hold message 1 + depth, a message lockstep could not have published.
  const std::uint64_t entry_offset = detail::plan_layout(4, kDefaultMaxPayload).log_offset + 1 * sizeof(detail::LogEntry);
  const std::uint64_t forged = detail::make_log_entry(1 + 4, 0);
  scribble(topic, entry_offset, std::string(reinterpret_cast<const char*>(&forged), sizeof forged));
  auto next = sub->receive(1s);
  REQUIRE_FALSE(next.ok());
  CHECK(next.code() == ErrorCode::Corrupted);
  CHECK(next.message().find("damaged") != std::string::npos);
  CHECK(sub->lost() == 0);
}

TEST_CASE("A damaged published counter is reported as corruption not as a slow subscriber", "[hostile]") {
  const std::string topic = unique_topic("wedge");
  auto pub = Publisher::create(topic, publisher_options(Mode::Lockstep, 4));
  auto sub = Subscriber::create(topic, subscriber_options());
  REQUIRE(pub.ok());
  REQUIRE(sub.ok());
  for (int i = 0; i < 2; ++i) REQUIRE(pub->publish_copy(bytes_of("m"), 1s).ok());
  scribble(topic, published_offset() + 5, "\xff");

  auto info = inspect_topic(topic);
  REQUIRE(info.ok());
  CHECK(info->damage.find("damaged") != std::string::npos);
  auto later = Publisher::create(topic, publisher_options(Mode::Lockstep, 4));
  REQUIRE(later.ok());
  auto sent = later->publish_copy(bytes_of("m"), 2s);
  REQUIRE_FALSE(sent.ok());
  CHECK(sent.code() == ErrorCode::Corrupted);
  CHECK(sent.message().find("published") != std::string::npos);
  scribble(topic, published_offset() + 5, std::string(1, '\0'));
}

TEST_CASE("Readers waiting on a topic whose counter was damaged are told as its publishers are", "[hostile]") {
  const std::string topic = unique_topic("wedged_readers");
  auto pub = Publisher::create(topic, publisher_options(Mode::Lockstep, 4));
  REQUIRE(pub.ok());
  // Each strategy, a tap and a wait set's member: every way of waiting looks after its ring.
  auto sub = Subscriber::create(topic, subscriber_options(Role::Subscriber, WaitStrategy::Block));
  auto spinner = Subscriber::create(topic, subscriber_options(Role::Subscriber, WaitStrategy::Spin));
  auto tap = Subscriber::create(topic, subscriber_options(Role::Tap));
  auto member = Subscriber::create(topic, subscriber_options());
  REQUIRE(sub.ok());
  REQUIRE(spinner.ok());
  REQUIRE(tap.ok());
  REQUIRE(member.ok());
  WaitSet set(wait_options(WaitStrategy::Block));
  auto other = Subscriber::create(unique_topic("wedged_neighbour"), subscriber_options());
  REQUIRE(other.ok());
  REQUIRE(set.add(*member).ok());
  REQUIRE(set.add(*other).ok());
  for (int i = 0; i < 2; ++i) REQUIRE(pub->publish_copy(bytes_of("m"), 1s).ok());
  for (Subscriber* reader : {&*sub, &*spinner, &*tap}) {
    for (int i = 0; i < 2; ++i) REQUIRE(reader->receive(1s).ok());
  }
  for (int i = 0; i < 2; ++i) REQUIRE(set.receive(1s).ok());
  // Undamaged, a wait that outlasts several looks after the ring is only a wait.
  CHECK(sub->receive(300ms).code() == ErrorCode::Timeout);
  CHECK(set.receive(300ms).code() == ErrorCode::Timeout);

  auto check_told = [&](const char* what) {
    for (Subscriber* reader : {&*sub, &*spinner, &*tap}) {
      auto got = reader->receive(10s);
      REQUIRE_FALSE(got.ok());
      CHECK(got.code() == ErrorCode::Corrupted);
      CHECK_THAT(got.message(), Catch::Contains("damaged") && Catch::Contains(what));
    }
    auto event = set.receive(10s);
    REQUIRE_FALSE(event.ok());
    CHECK(event.code() == ErrorCode::Corrupted);
    auto woken = set.wait(10s);
    REQUIRE_FALSE(woken.ok());
    CHECK(woken.code() == ErrorCode::Corrupted);
  };
  SECTION("counted past what the ring holds") {
    scribble(topic, published_offset() + 5, "\xff");
    check_told("published");
    scribble(topic, published_offset() + 5, std::string(1, '\0'));
  }
  SECTION("counted back behind the readers") {
    scribble(topic, published_offset(), std::string(1, '\0'));
    check_told("reader is at message");
    scribble(topic, published_offset(), "\x02");
  }
}

TEST_CASE("A reader starting at the first message gets what the ring holds and counts the rest as lost", "[hostile]") {
  const std::string topic = unique_topic("first");
  auto pub = Publisher::create(topic, publisher_options(Mode::FreeRun, 4));
  REQUIRE(pub.ok());
  auto publish = [&](int count) {
    for (int i = 0; i < count; ++i) REQUIRE(pub->publish_copy(bytes_of("m" + std::to_string(i))).ok());
  };
  auto tap_from_first = [&] {
    auto options = subscriber_options(Role::Tap);
    options.start = StartAt::First;
    auto tap = Subscriber::create(topic, options);
    REQUIRE(tap.ok());
    return std::move(*tap);
  };
  SECTION("a young topic: nothing lost") {
    publish(3);
    auto tap = tap_from_first();
    auto first = tap.receive(1s);
    REQUIRE(first.ok());
    CHECK(first->sequence() == 0);
    CHECK(first->lost_before() == 0);
    CHECK(text_of(*first) == "m0");
  }
  SECTION("an older topic: the ring's oldest first, the ones before it counted") {
    publish(10);
    auto tap = tap_from_first();
    auto first = tap.receive(1s);
    REQUIRE(first.ok());
    CHECK(first->sequence() == 6);
    CHECK(first->lost_before() == 6);
    CHECK(tap.lost() == 6);
  }
  SECTION("the default starts with the next message") {
    publish(3);
    auto sub = Subscriber::create(topic, subscriber_options(Role::Tap));
    REQUIRE(sub.ok());
    REQUIRE(pub->publish_copy(bytes_of("m3")).ok());
    auto next = sub->receive(1s);
    REQUIRE(next.ok());
    CHECK(next->sequence() == 3);
    CHECK(next->lost_before() == 0);
  }
}

TEST_CASE("A lockstep subscriber starting at the first message holds what publishers respect and counts the rest", "[hostile]") {
  const std::string topic = unique_topic("first_lockstep");
  auto pub = Publisher::create(topic, publisher_options(Mode::Lockstep, 4));
  REQUIRE(pub.ok());
  auto first_options = subscriber_options();
  first_options.start = StartAt::First;
  auto publish = [&](int from, int to, std::chrono::milliseconds timeout) {
    for (int i = from; i < to; ++i) {
      if (!pub->publish_copy(bytes_of("m" + std::to_string(i)), timeout).ok()) return false;
    }
    return true;
  };
  SECTION("beside a lockstep subscriber that holds the ring, it holds it too") {
    auto early = Subscriber::create(topic, subscriber_options());
    REQUIRE(early.ok());
    REQUIRE(publish(0, 3, 1s));
    auto sub = Subscriber::create(topic, first_options);
    REQUIRE(sub.ok());
    REQUIRE(publish(3, 4, 1s));
    for (int i = 0; i < 4; ++i) {
      auto taken = early->receive(1s);
      REQUIRE(taken.ok());
    }
    // The early subscriber moved on; the ring of four is full of what the late one still needs.
    CHECK_FALSE(publish(4, 5, 100ms));
    for (int i = 0; i < 4; ++i) {
      auto s = sub->receive(1s);
      REQUIRE(s.ok());
      CHECK(s->sequence() == static_cast<std::uint64_t>(i));
      CHECK(s->lost_before() == 0);
    }
    CHECK(publish(4, 5, 1s));
  }
  SECTION("alone, it reads what is still there and counts what was overwritten, never calling it damage") {
    REQUIRE(publish(0, 10, 1s));
    auto sub = Subscriber::create(topic, first_options);
    REQUIRE(sub.ok());
    // The publisher may still overwrite 6..9, but not what came after the subscriber joined.
    REQUIRE(publish(10, 14, 1s));
    CHECK_FALSE(publish(14, 15, 100ms));
    auto s = sub->receive(1s);
    REQUIRE(s.ok());
    CHECK(s->sequence() == 10);
    CHECK(s->lost_before() == 10);
    s->release();  // a held sample holds the ring too
    for (std::uint64_t i = 11; i < 14; ++i) {
      auto next = sub->receive(1s);
      REQUIRE(next.ok());
      CHECK(next->sequence() == i);
    }
    CHECK(publish(14, 15, 1s));
  }
}
