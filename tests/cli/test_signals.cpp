// SPDX-License-Identifier: Apache-2.0
// Stopping commands by signal: SIGINT (Ctrl-C), SIGTERM (a supervisor) and SIGHUP (a closed
// terminal or ssh session) all end a command cleanly, with exit code 128 + the signal.

#include <catch2/catch.hpp>

#include <csignal>

#include <nlohmann/json.hpp>

#include "everyday_helpers.hpp"
#include "overlapping_mcap.hpp"
#include "process.hpp"
#include "test_record_helpers.hpp"

using namespace cerulion::test;
using namespace std::chrono_literals;

namespace {

struct StopSignal {
  int number;
  const char* name;
};
constexpr StopSignal kStopSignals[] = {{SIGHUP, "SIGHUP"}, {SIGTERM, "SIGTERM"}, {SIGINT, "SIGINT"}};

// Starts `cerulion <args>` on a fresh topic, waits until it is attached as `role`, sends each stop
// signal to a fresh run and checks the exit code, that the topic's segment went with it and that
// stderr holds only what the command says before any signal (`said`, TOPIC standing for the topic).
void check_stops_cleanly(const std::string& stem, const std::vector<std::string>& args, const std::string& role,
                         const std::string& said = {}) {
  for (const auto& sig : kStopSignals) {
    INFO(stem << " stopped by " << sig.name);
    auto topic = unique_topic(stem);
    std::vector<std::string> argv{cerulion_binary()};
    for (const auto& a : args) argv.push_back(a == "TOPIC" ? topic : a);
    BackgroundProcess command(argv);
    REQUIRE(eventually([&] {
      auto snapshot = topic_snapshot(topic);
      if (snapshot.is_null()) return false;
      for (const auto& p : snapshot["participants"]) {
        if (p["role"] == role && p["alive"] == true) return true;
      }
      return false;
    }));
    REQUIRE(count_shm_entries(shm_file(topic)) == 1);
    command.signal(sig.number);
    auto done = command.wait(20s);
    CHECK_FALSE(done.timed_out);
    CHECK(done.killed_by == 0);
    CHECK(done.exit_code == 128 + sig.number);
    std::string expected = said;
    if (auto at = expected.find("TOPIC"); at != std::string::npos) expected.replace(at, 5, topic);
    CHECK(done.err == expected);
    CHECK(count_shm_entries(shm_file(topic)) == 0);
  }
}

}  // namespace

TEST_CASE("SIGHUP, SIGTERM and SIGINT end pub with 128 plus the signal and remove its segment", "[cli][pub][signals]") {
  check_stops_cleanly("signal_pub", {"pub", "TOPIC", "x", "-r", "10"}, "publisher");
}

TEST_CASE("SIGHUP, SIGTERM and SIGINT end echo with 128 plus the signal and remove its segment", "[cli][echo][signals]") {
  check_stops_cleanly("signal_echo", {"echo", "TOPIC"}, "subscriber",
                      "cerulion: warning: topic 'TOPIC' does not exist yet; echo waits for it to be published (Ctrl-C "
                      "stops)\n");
}

TEST_CASE("SIGTERM and SIGHUP end play after its summary with 128 plus the signal, Ctrl-C with 0", "[cli][play][signals]") {
  auto topic = unique_topic("signal_play");
  auto file = record_temp_path("signal-play.mcap");
  REQUIRE(write_overlapping_chunks(file, {topic}, 2, 10, 1'700'000'000'000'000'000, 1'000'000).ok());
  for (const auto& sig : kStopSignals) {
    INFO("play stopped by " << sig.name);
    BackgroundProcess play({cerulion_binary(), "play", file, "--loop", "--json"});
    REQUIRE(eventually([&] { return count_shm_entries(shm_file(topic)) == 1; }));
    play.signal(sig.number);
    auto done = play.wait(20s);
    CHECK_FALSE(done.timed_out);
    CHECK(done.killed_by == 0);
    CHECK(done.exit_code == (sig.number == SIGINT ? 0 : 128 + sig.number));
    REQUIRE_FALSE(done.out.empty());
    CHECK(nlohmann::json::parse(done.out)["interrupted"] == true);
    CHECK(count_shm_entries(shm_file(topic)) == 0);
  }
}
