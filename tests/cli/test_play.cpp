// SPDX-License-Identifier: Apache-2.0
// `cerulion play` end to end: a recording made by `record` is republished in order.

#include <catch2/catch.hpp>

#include <csignal>
#include <map>
#include <thread>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cerulion/core/publisher.hpp"
#include "cerulion/recorder/reader.hpp"
#include "everyday_helpers.hpp"
#include "overlapping_mcap.hpp"
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

// Plays `file` with `options` while an echo listens on `topic`, and checks that play published
// `count` messages and the echo received "m0".."m<count-1>" in that order; returns play's result.
ProcessResult play_into_echo(const std::string& topic, const std::string& file, const std::vector<std::string>& options,
                             int count) {
  BackgroundProcess echo({cerulion_binary(), "echo", topic, "--json", "-n", std::to_string(count)});
  REQUIRE(eventually([&] { return live_readers(topic_snapshot(topic), "subscriber") >= 1; }, 10s));
  std::vector<std::string> args{"play", file, "--json"};
  args.insert(args.end(), options.begin(), options.end());
  auto play = run_cerulion(args, {}, 30s);
  REQUIRE(play.exit_code == 0);
  CHECK(nlohmann::json::parse(play.out)["messages_published"] == count);
  auto got = echo.wait(20s);
  REQUIRE(got.exit_code == 0);
  auto lines = json_lines(got.out);
  REQUIRE(lines.size() == static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) CHECK(lines[i]["data"] == "m" + std::to_string(i));
  return play;
}

}  // namespace

TEST_CASE("play republishes every recorded message in order", "[cli][play]") {
  auto topic = unique_topic("play_order");
  auto file = make_recording(topic, 40);
  for (bool lockstep : {false, true}) {
    INFO("lockstep " << lockstep);
    std::vector<std::string> options{"-r", "4"};
    if (lockstep) options.push_back("--lockstep");
    play_into_echo(topic, file, options, 40);
  }
}

TEST_CASE("play honours --topics, --start-offset and --rate", "[cli][play]") {
  auto topic = unique_topic("play_filter");
  auto file = make_recording(topic, 40);  // about 0.2 s at 200 Hz
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

TEST_CASE("play sends the messages of chunks that overlap in time in log-time order, paced by their log times", "[cli][play]") {
  auto topic = unique_topic("play_overlap");
  auto file = record_temp_path("overlapping.mcap");
  // 40 messages 10 ms apart in 4 chunks that each span the whole 0.39 s.
  REQUIRE(write_overlapping_chunks(file, {topic}, 4, 10, 1'700'000'000'000'000'000, 10'000'000).ok());
  auto play = play_into_echo(topic, file, {}, 40);
  CHECK(play.err.find("warning") == std::string::npos);
  CHECK(nlohmann::json::parse(play.out)["duration_s"].get<double>() >= 0.39);
}

TEST_CASE("play prints each warning about a damaged file exactly once", "[cli][play]") {
  auto topic = unique_topic("play_damaged");
  auto whole = record_temp_path("whole.mcap");
  REQUIRE(write_overlapping_chunks(whole, {topic}, 4, 10, 1'700'000'000'000'000'000, 1'000'000).ok());
  // One chunk flipped and the summary cut off: a cut-short file with a bad chunk.
  auto reader = cerulion::recorder::Reader::open(whole);
  REQUIRE(reader.ok());
  const auto& victim = reader->summary().chunk_indexes.at(1);
  std::string bytes = slurp(whole);
  bytes[victim.chunk_start_offset + victim.chunk_length - 3] ^= 0x10;
  auto damaged = record_temp_path("damaged.mcap");
  spit(damaged, bytes.substr(0, reader->summary().valid_data_end));
  auto check_each_warning_once = [](const std::string& err) {
    std::map<std::string, int> seen;
    for (const auto& line : text_lines(err)) {
      if (line.rfind("cerulion: warning: ", 0) == 0) ++seen[line];
    }
    CHECK(seen.size() >= 2);  // the file was cut short, and a chunk is bad
    for (const auto& [line, times] : seen) {
      INFO(line);
      CHECK(times == 1);
    }
  };
  auto once = run_cerulion({"play", damaged, "--json", "-r", "100"}, {}, 30s);
  REQUIRE(once.exit_code == 0);
  CHECK(nlohmann::json::parse(once.out)["messages_published"] == 30);
  check_each_warning_once(once.err);

  BackgroundProcess looping({cerulion_binary(), "play", damaged, "--loop", "--json", "-r", "100"});
  std::this_thread::sleep_for(1500ms);
  looping.signal(SIGINT);
  auto looped = looping.wait(20s);
  REQUIRE(looped.exit_code == 0);
  REQUIRE(nlohmann::json::parse(looped.out)["loops"].get<int>() >= 2);
  check_each_warning_once(looped.err);
}

TEST_CASE("play says when --topics or --regex match nothing in the recording, names its topics, and exits 1",
          "[cli][play]") {
  auto a = unique_topic("play_none_a");
  auto b = unique_topic("play_none_b");
  auto file = record_temp_path("play-none.mcap");
  REQUIRE(write_overlapping_chunks(file, {a, b}, 1, 4, 1'700'000'000'000'000'000, 1'000'000).ok());
  auto none = run_cerulion({"play", file, "--json", "--topics", "/not/there"}, {}, 20s);
  CHECK(none.exit_code == 1);
  CHECK(none.out.empty());
  CHECK(text_lines(none.err).size() == 1);
  CHECK(none.err.find("nothing in " + file + " matches --topics /not/there") != std::string::npos);
  CHECK(none.err.find(a) != std::string::npos);
  CHECK(none.err.find(b) != std::string::npos);
  auto regex = run_cerulion({"play", file, "-e", "^/nowhere"}, {}, 20s);
  CHECK(regex.exit_code == 1);
  CHECK(regex.err.find("matches -e '^/nowhere'") != std::string::npos);
  // One topic that matches is enough: it plays.
  auto some = run_cerulion({"play", file, "--json", "--topics", "/not/there", a}, {}, 20s);
  CHECK(some.exit_code == 0);
  CHECK(some.err.find("nothing in") == std::string::npos);
}

TEST_CASE("play --lockstep into a topic that already runs free says the topic's mode wins", "[cli][play]") {
  auto topic = unique_topic("play_free");
  auto file = record_temp_path("play-free.mcap");
  REQUIRE(write_overlapping_chunks(file, {topic}, 1, 3, 1'700'000'000'000'000'000, 1'000'000).ok());
  cerulion::PublisherOptions options;
  options.topic.mode = cerulion::Mode::FreeRun;
  auto free_run = cerulion::Publisher::create(topic, options);
  REQUIRE(free_run.ok());
  auto lockstep = run_cerulion({"play", file, "--lockstep"}, {}, 20s);
  CHECK(lockstep.exit_code == 0);
  CHECK(lockstep.err.find("warning: '" + topic + "' already runs in free-run mode, which wins over lockstep playback") !=
        std::string::npos);
  CHECK(lockstep.err.find("played 3 messages on 1 topic in") != std::string::npos);
  auto plain = run_cerulion({"play", file}, {}, 20s);
  CHECK(plain.exit_code == 0);
  CHECK(plain.err.find("wins over") == std::string::npos);
}

TEST_CASE("play into a topic with a live publisher of its own warns once naming its pid, and plays anyway",
          "[cli][play]") {
  auto topic = unique_topic("play_interleave");
  auto file = record_temp_path("play-interleave.mcap");
  REQUIRE(write_overlapping_chunks(file, {topic}, 1, 3, 1'700'000'000'000'000'000, 1'000'000).ok());
  // One killed with -9 first: a dead publisher interleaves with nothing, and is not named.
  BackgroundProcess dead({cerulion_binary(), "pub", topic, "x", "-r", "1"});
  REQUIRE(eventually([&] { return !topic_snapshot(topic).is_null(); }));
  const auto dead_pid = dead.pid();
  dead.signal(SIGKILL);
  (void)dead.wait();
  auto quiet = run_cerulion({"play", file}, {}, 20s);
  CHECK(quiet.exit_code == 0);
  CHECK(quiet.err.find("already has") == std::string::npos);

  auto live = cerulion::Publisher::create(topic, {});
  REQUIRE(live.ok());
  // Looping: the topic is opened once, and said once, however many passes there are.
  BackgroundProcess looping({cerulion_binary(), "play", file, "--loop"});
  std::this_thread::sleep_for(1s);
  looping.signal(SIGINT);
  const auto warned = looping.wait(20s);
  CHECK(warned.exit_code == 0);
  const std::string line = "cerulion: warning: '" + topic + "' already has a live publisher (pid " +
                           std::to_string(::getpid()) + "): its messages and the played ones interleave\n";
  INFO(warned.err);
  CHECK(warned.err.find(line) != std::string::npos);
  CHECK(warned.err.find(line) == warned.err.rfind(line));
  CHECK(warned.err.find(std::to_string(dead_pid)) == std::string::npos);
}
