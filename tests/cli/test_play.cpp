// `cerulion play` end to end: a recording made by `record` is republished in order.

#include <catch2/catch.hpp>

#include <csignal>

#include <nlohmann/json.hpp>

#include "everyday_helpers.hpp"
#include "process.hpp"
#include "test_record_helpers.hpp"

using namespace cerulion::test;
using namespace std::chrono_literals;

namespace {

// Records `count` lines "m0".."m{count-1}" published on `topic` into a new file.
std::string make_recording(const std::string& topic, int count) {
  auto file = record_temp_path("play-src.mcap");
  BackgroundProcess rec({cerulion_binary(), "record", topic, "-o", file});
  REQUIRE(eventually([&] { return live_readers(topic_snapshot(topic), "tap") >= 1; }, 10s));
  std::string input;
  for (int i = 0; i < count; ++i) input += "m" + std::to_string(i) + "\n";
  REQUIRE(run_cerulion({"pub", topic, "-r", "200"}, input).exit_code == 0);
  std::this_thread::sleep_for(300ms);
  rec.signal(SIGINT);
  REQUIRE(rec.wait(20s).exit_code == 0);
  return file;
}

}  // namespace

TEST_CASE("play republishes every recorded message in order", "[cli][play]") {
  auto topic = unique_topic("play_order");
  auto file = make_recording(topic, 40);
  for (bool lockstep : {false, true}) {
    INFO("lockstep " << lockstep);
    BackgroundProcess echo({cerulion_binary(), "echo", topic, "--json", "-n", "40"});
    REQUIRE(eventually([&] { return live_readers(topic_snapshot(topic), "subscriber") >= 1; }, 10s));
    std::vector<std::string> args{"play", file, "--json", "-r", "4"};
    if (lockstep) args.push_back("--lockstep");
    auto play = run_cerulion(args, {}, 30s);
    REQUIRE(play.exit_code == 0);
    auto summary = nlohmann::json::parse(play.out);
    CHECK(summary["messages_published"] == 40);
    auto got = echo.wait(20s);
    REQUIRE(got.exit_code == 0);
    auto lines = json_lines(got.out);
    REQUIRE(lines.size() == 40);
    for (int i = 0; i < 40; ++i) CHECK(lines[i]["data"] == "m" + std::to_string(i));
  }
}

TEST_CASE("play honours --topics, --start-offset and --rate", "[cli][play]") {
  auto topic = unique_topic("play_filter");
  auto file = make_recording(topic, 40);  // about 0.2 s at 200 Hz
  auto none = run_cerulion({"play", file, "--json", "--topics", "/not/there"}, {}, 20s);
  REQUIRE(none.exit_code == 0);
  CHECK(nlohmann::json::parse(none.out)["messages_published"] == 0);
  auto later = run_cerulion({"play", file, "--json", "--start-offset", "0.1"}, {}, 20s);
  REQUIRE(later.exit_code == 0);
  auto n = nlohmann::json::parse(later.out)["messages_published"].get<int>();
  CHECK(n > 5);
  CHECK(n < 35);
  auto slow = run_cerulion({"play", file, "--json", "-r", "0.5"}, {}, 20s);
  REQUIRE(slow.exit_code == 0);
  CHECK(nlohmann::json::parse(slow.out)["duration_s"].get<double>() > 0.3);
}

TEST_CASE("play on bad input prints one line and exits non-zero", "[cli][play]") {
  auto empty = record_temp_path("empty.mcap");
  spit(empty, "");
  auto r = run_cerulion({"play", empty}, {}, 20s);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("empty file") != std::string::npos);
  r = run_cerulion({"play", empty, "-r", "0"}, {}, 20s);
  CHECK(r.exit_code == 2);
}

TEST_CASE("play --loop starts over until interrupted", "[cli][play]") {
  auto topic = unique_topic("play_loop");
  auto file = make_recording(topic, 10);
  BackgroundProcess play({cerulion_binary(), "play", file, "--loop", "--json", "-r", "10"});
  std::this_thread::sleep_for(1500ms);
  play.signal(SIGINT);
  auto done = play.wait(20s);
  REQUIRE(done.exit_code == 0);
  auto j = nlohmann::json::parse(done.out);
  CHECK(j["loops"].get<int>() >= 2);
  CHECK(j["interrupted"] == true);
  CHECK(j["messages_published"].get<int>() > 10);
}
