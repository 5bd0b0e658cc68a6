// SPDX-License-Identifier: Apache-2.0
// A full /dev/shm (Docker's default is 64 MiB) is one clear error for whoever asked for memory, and
// nothing else: no SIGBUS anywhere, no segment left half made, and the other participants, `topic
// list` and `clean` keep working.

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <thread>
#include <unistd.h>

#include "cerulion/core.hpp"
#include "full_shm.hpp"
#include "process.hpp"
#include "segment.hpp"  // white box: a header whose pages were never written

using namespace cerulion;
using namespace cerulion::test;
using namespace std::chrono_literals;

namespace {

/// One line on stderr, naming the problem and the memory asked for.
void require_clear_full_error(const ProcessResult& r) {
  INFO("stderr: " << r.err);
  CHECK(r.killed_by == 0);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("/dev/shm is full") != std::string::npos);
  CHECK(r.err.find("needed") != std::string::npos);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
}

/// `topic list` and `clean` still work.
void require_tools_work() {
  auto list = run_cerulion({"topic", "list"}, {}, 10s);
  INFO("topic list: " << list.err);
  CHECK(list.killed_by == 0);
  CHECK(list.exit_code == 0);
  auto clean = run_cerulion({"clean"}, {}, 10s);
  INFO("clean: " << clean.out << clean.err);
  CHECK(clean.killed_by == 0);
}

}  // namespace

TEST_CASE("Publishing into a full /dev/shm fails with one line and leaves nothing behind", "[full]") {
  REQUIRE(mount_small_shm(64));
  fill_shm();
  auto r = run_cerulion({"pub", "/x", "hello", "--once"}, {}, 10s);
  require_clear_full_error(r);
  CHECK(count_shm_entries("cerulion.") == 0);
  require_tools_work();
  CHECK(run_cerulion({"echo", "/x", "--timeout", "0.2"}, {}, 10s).killed_by == 0);
}

TEST_CASE("A segment whose header was never written is reported never mapped", "[full]") {
  REQUIRE(mount_small_shm(64));
  // A segment with a valid first page and holes after it: what a creator that died half way
  // through, or a hostile user, leaves. Mapping its header would need memory that is not there.
  const detail::LayoutPlan plan = detail::plan_layout(kDefaultDepth, kDefaultMaxPayload);
  REQUIRE(plan.header_bytes > 2 * detail::kPageBytes);
  alignas(64) unsigned char page[detail::kPageBytes] = {};
  const detail::Config cfg = detail::make_config(plan, kDefaultMaxPayload, "/half");
  std::memcpy(page, &cfg, sizeof cfg);
  const std::uint32_t initialized = 1;
  std::memcpy(page + detail::kControlOffset + offsetof(detail::Control, initialized), &initialized, sizeof initialized);
  const std::string path = "/dev/shm" + segment_name(default_domain(), "/half");
  int fd = ::open(path.c_str(), O_CREAT | O_RDWR, 0600);
  REQUIRE(fd >= 0);
  REQUIRE(::ftruncate(fd, static_cast<off_t>(plan.total_bytes)) == 0);
  REQUIRE(::pwrite(fd, page, sizeof page, 0) == static_cast<ssize_t>(sizeof page));
  ::close(fd);
  fill_shm();

  auto list = run_cerulion({"topic", "list"}, {}, 10s);
  CHECK(list.killed_by == 0);
  CHECK(list.exit_code == 0);
  CHECK(list.err.find("never completely written") != std::string::npos);
  auto info = run_cerulion({"topic", "info", "/half"}, {}, 10s);
  CHECK(info.killed_by == 0);
  CHECK(info.exit_code == 1);
  auto echo = run_cerulion({"echo", "/half", "--timeout", "0.2"}, {}, 10s);
  CHECK(echo.killed_by == 0);
  CHECK(echo.exit_code == 1);
  auto clean = run_cerulion({"clean"}, {}, 10s);
  CHECK(clean.killed_by == 0);
  CHECK(clean.exit_code == 0);
  CHECK(count_shm_entries("cerulion.") == 0);
}

TEST_CASE("A publisher and its subscriber survive /dev/shm filling under them", "[full]") {
  REQUIRE(mount_small_shm(64));
  BackgroundProcess echo({cerulion_binary(), "echo", "/grow"});
  REQUIRE(eventually([] { return count_shm_entries("cerulion.") == 1; }));
  // 1 MiB at 50 Hz: each new slot it cycles through grows by 1 MiB, so it needs memory again and
  // again for its first twenty messages.
  BackgroundProcess pub({cerulion_binary(), "pub", "/grow", "--size", "1MiB", "-r", "50"});
  REQUIRE(eventually([] {
    auto info = inspect_topic("/grow");
    return info.ok() && info->published >= 3;
  }));
  fill_shm();
  auto published = pub.wait(20s);
  require_clear_full_error(published);
  CHECK(echo.running());  // the subscriber is still there, and so are the tools
  require_tools_work();
  echo.signal(SIGINT);
  auto echoed = echo.wait(10s);
  CHECK(echoed.killed_by == 0);
  CHECK(echoed.exit_code == 130);
  INFO("echo: " << echoed.out.substr(0, 300) << echoed.err);
  CHECK(std::count(echoed.out.begin(), echoed.out.end(), '\n') >= 3);  // what was published got through
}

TEST_CASE("Two publishers racing for the last memory get it or a clear error never a signal", "[full]") {
  for (int round = 0; round < 3; ++round) {
    REQUIRE(mount_small_shm(64));
    // Subscribers keep each topic, and so its 40 MiB, after its publisher is done: only one fits.
    BackgroundProcess echo_a({cerulion_binary(), "echo", "/a", "-l", "0"});
    BackgroundProcess echo_b({cerulion_binary(), "echo", "/b", "-l", "0"});
    REQUIRE(eventually([] { return count_shm_entries("cerulion.") == 2; }));
    BackgroundProcess a({cerulion_binary(), "pub", "/a", "--size", "40MiB", "--once"});
    BackgroundProcess b({cerulion_binary(), "pub", "/b", "--size", "40MiB", "--once"});
    auto ra = a.wait(20s);
    auto rb = b.wait(20s);
    INFO("a: " << ra.exit_code << " " << ra.err << "b: " << rb.exit_code << " " << rb.err);
    CHECK(ra.killed_by == 0);
    CHECK(rb.killed_by == 0);
    CHECK(ra.exit_code + rb.exit_code == 1);  // one succeeded, the other failed cleanly
    require_clear_full_error(ra.exit_code == 1 ? ra : rb);
    CHECK(echo_a.running());
    CHECK(echo_b.running());
    require_tools_work();
  }
}

TEST_CASE("A wait set that finds /dev/shm full makes no bell and still wakes for each message", "[full][wait_set]") {
  REQUIRE(mount_small_shm(64));
  auto a = Subscriber::create("/bell/a");
  auto b = Subscriber::create("/bell/b");
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  auto pub = Publisher::create("/bell/b");
  REQUIRE(pub.ok());
  fill_shm();  // no page left for a bell; an empty message needs none
  WaitOptions block;
  block.strategy = WaitStrategy::Block;
  WaitSet set(block);
  REQUIRE(set.add(*a).ok());
  REQUIRE(set.add(*b).ok());
  for (int round = 0; round < 3; ++round) {
    // Catch2's assertions belong to the test's thread: the publisher only says whether it published.
    bool published = false;
    std::thread publisher([&] {
      std::this_thread::sleep_for(20ms);  // the set is asleep by then
      auto loan = pub->loan(0);
      published = loan.ok() && pub->publish(std::move(*loan)).ok();
    });
    const auto start = std::chrono::steady_clock::now();
    auto ready = set.wait(5s);
    publisher.join();
    REQUIRE(published);
    REQUIRE(ready.ok());
    CHECK(ready->message(1));
    // Woken by the publish, on the members' own words: not at the end of a sleep (100 ms).
    CHECK(std::chrono::steady_clock::now() - start < 90ms);
    auto sample = b->try_receive();
    REQUIRE(sample.ok());
    CHECK(sample->has_value());
  }
  CHECK(count_shm_entries("cerulion-bell.") == 0);
  ::unlink("/dev/shm/filler");  // the tests that follow start from this /dev/shm
}
