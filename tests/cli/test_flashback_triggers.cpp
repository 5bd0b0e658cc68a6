// SPDX-License-Identifier: Apache-2.0
// What makes a flashback keeper dump by itself, end to end: SIGUSR1, the trigger topic, a
// publisher's death, a stall, and the rate limit and post window around them.

#include <catch2/catch.hpp>

#include <csignal>

#include "cerulion/core/options.hpp"
#include "flashback_helpers.hpp"

using namespace cerulion::test;
using namespace std::chrono_literals;
using nlohmann::json;
namespace fs = std::filesystem;

TEST_CASE("SIGUSR1 makes the flashback keeper write one dump into its dir marked as a signal", "[cli][flashback]") {
  FlashbackDomain d("fb_usr1");
  const std::string topic = "/usr1";
  auto keeper = d.start_keeper({topic});
  REQUIRE(tap_attached(topic, d.name));
  REQUIRE(d.run({"pub", topic, "hello", "-n", "20", "-r", kTapSafeRate}).exit_code == 0);
  REQUIRE(eventually([&] { return d.kept(topic) == 20; }));
  keeper->signal(SIGUSR1);
  REQUIRE(eventually([&] { return d.dumps().size() == 1; }));
  std::this_thread::sleep_for(500ms);
  REQUIRE(d.dumps().size() == 1);
  auto info = info_json(d.dumps()[0]);
  CHECK(info["finalized"] == true);
  CHECK(topic_count(info, topic) == 20);
  auto md = flashback_metadata(info);
  REQUIRE(md.is_object());
  CHECK(md["trigger"] == "signal");
  CHECK(md["keeper_pid"] == std::to_string(keeper->pid()));
  CHECK(md["domain"] == d.name);
  CHECK(md["name"] == "default");
  CHECK(d.status()["dumps"] == 1);
  for (const auto& m : dumped_messages(d.dumps()[0])) CHECK(m.data == "hello");
  keeper->signal(SIGINT);
  auto done = keeper->wait(20s);
  CHECK(done.exit_code == 0);
  CHECK(done.err.find("cerulion: wrote " + d.dumps()[0]) != std::string::npos);
}

TEST_CASE("A message on the flashback trigger topic makes a dump whose note is its text", "[cli][flashback]") {
  FlashbackDomain d("fb_trigger");
  auto keeper = d.start_keeper({"-a", "--trigger-topic", "/fb/trigger"});
  REQUIRE(tap_attached("/fb/trigger", d.name));
  // Every topic is kept, the trigger topic too, through one tap (the keeper lists the domain's
  // topics at least once a second: it has seen this one by now).
  std::this_thread::sleep_for(1500ms);
  CHECK(live_readers(topic_snapshot("/fb/trigger", d.name), "tap") == 1);
  REQUIRE(d.run({"pub", "/data", "reading", "-n", "10", "-r", "200"}).exit_code == 0);
  REQUIRE(eventually([&] { return d.kept("/data") == 10; }));
  REQUIRE(d.run({"pub", "/fb/trigger", "e-stop pressed", "--once"}).exit_code == 0);
  REQUIRE(eventually([&] { return d.dumps().size() == 1; }));
  std::this_thread::sleep_for(300ms);
  REQUIRE(d.dumps().size() == 1);
  auto info = info_json(d.dumps()[0]);
  auto md = flashback_metadata(info);
  REQUIRE(md.is_object());
  CHECK(md["trigger"] == "topic");
  CHECK(md["note"] == "e-stop pressed");
  CHECK(md["details"].get<std::string>().find("/fb/trigger") != std::string::npos);
  CHECK(topic_count(info, "/data") == 10);
}

TEST_CASE("A publisher killed with SIGKILL gives exactly one flashback dump naming its pid and topic", "[cli][flashback]") {
  FlashbackDomain d("fb_death");
  auto keeper = d.start_keeper({"-a", "--on-death"});
  BackgroundProcess pub(d.command({"pub", "/victim", "alive", "-r", "100"}));
  REQUIRE(eventually([&] { return d.kept("/victim") >= 10; }));
  CHECK(d.dumps().empty());
  pub.signal(SIGKILL);
  REQUIRE(pub.wait().exit_code == 128 + SIGKILL);
  REQUIRE(eventually([&] { return d.dumps().size() == 1; }));
  std::this_thread::sleep_for(1500ms);  // several death checks later: still one
  REQUIRE(d.dumps().size() == 1);
  auto info = info_json(d.dumps()[0]);
  auto md = flashback_metadata(info);
  REQUIRE(md.is_object());
  CHECK(md["trigger"] == "death");
  const std::string details = md["details"];
  CHECK(details.find(std::to_string(pub.pid())) != std::string::npos);
  CHECK(details.find("/victim") != std::string::npos);
  CHECK(topic_count(info, "/victim") >= 10);
}

// A waiting reader evicts a dead publisher within moments, long before the keeper looks: the
// keeper must learn of the death from the record the eviction leaves, whoever reads the topic.
TEST_CASE("Each publisher killed with SIGKILL gives a flashback dump naming its pid, whatever else reads its topic",
          "[cli][flashback]") {
  bool lockstep_reader = false, tap = false;
  SECTION("nobody else") {}
  SECTION("a lockstep subscriber") { lockstep_reader = true; }
  SECTION("a tap") { tap = true; }
  SECTION("a lockstep subscriber and a tap") { lockstep_reader = tap = true; }
  FlashbackDomain d("fb_deaths");
  auto keeper = d.start_keeper({"/victim", "--on-death"});
  REQUIRE(tap_attached("/victim", d.name));
  std::unique_ptr<BackgroundProcess> echo, hz;
  if (lockstep_reader) echo = std::make_unique<BackgroundProcess>(redirected(d.command({"echo", "/victim"}), ">/dev/null"));
  if (tap) hz = std::make_unique<BackgroundProcess>(redirected(d.command({"topic", "hz", "/victim"}), ">/dev/null"));
  REQUIRE(eventually([&] {
    const auto snapshot = topic_snapshot("/victim", d.name);
    return live_readers(snapshot, "subscriber") == (lockstep_reader ? 1 : 0) && live_readers(snapshot, "tap") == (tap ? 2 : 1);
  }));
  constexpr int kDeaths = 4;
  for (int i = 0; i < kDeaths; ++i) {
    const std::uint64_t before = d.kept("/victim");
    BackgroundProcess pub(d.command({"pub", "/victim", "alive", "-r", "100"}));
    REQUIRE(eventually([&] { return d.kept("/victim") >= before + 5; }, 20s));
    pub.signal(SIGKILL);
    REQUIRE(pub.wait().exit_code == 128 + SIGKILL);
    INFO("death " << i + 1 << " of " << kDeaths << ", pid " << pub.pid());
    REQUIRE(eventually([&] { return d.dumps().size() == static_cast<std::size_t>(i + 1); }, 20s));
    auto md = flashback_metadata(info_json(d.dumps().back()));
    REQUIRE(md.is_object());
    CHECK(md["trigger"] == "death");
    CHECK(md["details"].get<std::string>().find("publisher " + std::to_string(pub.pid()) + " of /victim died") !=
          std::string::npos);
  }
  // Every death is in the topic's record, as `topic info` shows it, but for a last one that no
  // reader has evicted yet (nobody else reads the topic: the keeper's tap only looks).
  const auto snapshot = topic_snapshot("/victim", d.name);
  REQUIRE(snapshot.is_object());
  int unevicted = 0;
  for (const auto& p : snapshot["participants"]) unevicted += p["role"] == "publisher" && p["alive"] == false;
  CHECK(snapshot["deaths_total"].get<int>() + unevicted == kDeaths);
  CHECK(snapshot["deaths"].size() == snapshot["deaths_total"].get<std::size_t>());
  for (const auto& death : snapshot["deaths"]) CHECK(death["role"] == "publisher");
  CHECK(d.dumps().size() == static_cast<std::size_t>(kDeaths));  // one dump per death, never two
}

// A publisher that finished and left its topic did not die: --on-death is about crashes.
TEST_CASE("A publisher that exits normally gives no flashback death dump", "[cli][flashback]") {
  FlashbackDomain d("fb_normalexit");
  auto keeper = d.start_keeper({"/finished", "--on-death"});
  REQUIRE(tap_attached("/finished", d.name));
  REQUIRE(d.run({"pub", "/finished", "done", "-n", "20", "-r", kTapSafeRate}).exit_code == 0);
  REQUIRE(eventually([&] { return d.kept("/finished") == 20; }));
  std::this_thread::sleep_for(1000ms);  // several death checks
  CHECK(d.dumps().empty());
}

TEST_CASE("A steady topic that goes silent gives one flashback stall dump", "[cli][flashback]") {
  FlashbackDomain d("fb_stall");
  const std::string topic = "/steady";
  auto keeper = d.start_keeper({topic, "--on-stall", "0.5"});
  REQUIRE(tap_attached(topic, d.name));
  // 50 Hz for 2 s, then the publisher exits normally.
  REQUIRE(d.run({"pub", topic, "tick", "-n", "100", "-r", "50"}).exit_code == 0);
  CHECK(d.dumps().empty());
  REQUIRE(eventually([&] { return d.dumps().size() == 1; }, 5s));
  std::this_thread::sleep_for(1500ms);  // silent still, but it stalled once
  REQUIRE(d.dumps().size() == 1);
  auto info = info_json(d.dumps()[0]);
  auto md = flashback_metadata(info);
  REQUIRE(md.is_object());
  CHECK(md["trigger"] == "stall");
  CHECK(md["details"].get<std::string>().find(topic) != std::string::npos);
  CHECK(topic_count(info, topic) == 100);
}

TEST_CASE("flashback max-dumps refuses the dump past the limit with a line on stderr and a counter in status",
          "[cli][flashback]") {
  FlashbackDomain d("fb_maxdumps");
  const std::string topic = "/limited";
  auto keeper = d.start_keeper({topic, "--max-dumps", "2"});
  REQUIRE(tap_attached(topic, d.name));
  REQUIRE(d.run({"pub", topic, "x", "-n", "5", "-r", "100"}).exit_code == 0);
  // Each signal once the previous one is done with, so none joins another's dump.
  for (std::size_t i = 0; i < 3; ++i) {
    keeper->signal(SIGUSR1);
    std::this_thread::sleep_for(300ms);
    if (i < 2) REQUIRE(eventually([&] { return d.dumps().size() == i + 1; }));
  }
  REQUIRE(eventually([&] { return d.status().value("dumps_refused", 0) == 1; }));
  CHECK(d.dumps().size() == 2);
  CHECK(d.status()["dumps"] == 2);
  keeper->signal(SIGINT);
  auto done = keeper->wait(20s);
  CHECK(done.exit_code == 0);
  INFO(done.err);
  CHECK(std::count(done.err.begin(), done.err.end(), '\n') >= 4);  // start line, 2 dumps, 1 refusal
  auto refused = done.err.find("refused");
  REQUIRE(refused != std::string::npos);
  CHECK(done.err.find("2 dumps in the last hour") != std::string::npos);
  CHECK(done.err.find("refused", refused + 1) == std::string::npos);
  CHECK(d.dumps().size() == 2);
}

TEST_CASE("flashback post includes the messages published during the second after the trigger", "[cli][flashback]") {
  FlashbackDomain d("fb_post");
  const std::string topic = "/post";
  auto keeper = d.start_keeper({topic, "--post", "1"});
  REQUIRE(tap_attached(topic, d.name));
  BackgroundProcess pub(d.command({"pub", topic, "--size", "64", "--fill", "counter", "-r", "100"}));
  REQUIRE(eventually([&] { return d.kept(topic) >= 20; }));
  const std::uint64_t triggered = cerulion::realtime_ns();
  keeper->signal(SIGUSR1);
  std::this_thread::sleep_for(500ms);
  CHECK(d.dumps().empty());  // still gathering what comes after
  REQUIRE(eventually([&] { return d.dumps().size() == 1; }));
  auto messages = on_topic(dumped_messages(d.dumps()[0]), topic);
  REQUIRE(!messages.empty());
  // Messages from before the trigger, and from most of the second after it.
  CHECK(messages.front().log_time < triggered);
  CHECK(messages.back().log_time >= triggered + 800'000'000ull);
  std::size_t after = 0;
  for (const auto& m : messages) after += m.log_time > triggered;
  CHECK(after >= 50);
  auto md = flashback_metadata(info_json(d.dumps()[0]));
  CHECK(md["trigger"] == "signal");
  CHECK(std::stoull(md["window_end_ns"].get<std::string>()) >= triggered + 800'000'000ull);
}
