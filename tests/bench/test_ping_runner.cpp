// SPDX-License-Identifier: Apache-2.0
// The runner `cerulion bench` measures with, over a stand-in for `cerulion ping` (a shell script
// given as the program): the summary and raw samples read back, a failing ping's last words, and
// a stop that leaves nothing of the ping's process group running.

#include <catch2/catch.hpp>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <thread>

#include "cerulion/bench/ping_runner.hpp"
#include "cerulion/measurement/ping_summary.hpp"
#include "process.hpp"
#include "temp_dir.hpp"

using namespace cerulion;
using namespace cerulion::bench;
using namespace std::chrono_literals;

namespace {

/// An executable script standing in for the cerulion binary.
std::string script(const std::string& body) {
  const std::string path = test::fresh_temp_path("fake-cerulion.sh");
  std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
  std::filesystem::permissions(path, std::filesystem::perms::owner_all);
  return path;
}

RepetitionRequest request(const Lane& lane) {
  RepetitionRequest q;
  q.lane = &lane;
  q.samples = 2;
  q.warmup = 0;
  q.rate_hz = 100;
  q.wait = "adaptive";
  q.flashback = false;
  return q;
}

std::string summary_json(std::uint64_t skipped) {
  measurement::PingReport r;
  r.samples_ns = {1000, 2000};
  r.skipped = skipped;
  r.cpu_pct_ping = 5;
  r.rss_pong = 4096;
  return measurement::to_json(measurement::summary_of(r, measurement::figures_of(r)));
}

}  // namespace

TEST_CASE("The ping runner reads back the ping's summary and its raw samples", "[bench][runner]") {
  const Lane lane = known_lanes()[0];
  // Two samples, 1000 and 2000 ns, little-endian u64, into the file ping was told to write.
  PingRunner runner({.program = script("out=\"\"; while [ $# -gt 0 ]; do [ \"$1\" = --samples-out ] && out=$2; shift; done\n"
                                       "printf '\\350\\003\\0\\0\\0\\0\\0\\0\\320\\007\\0\\0\\0\\0\\0\\0' > \"$out\"\n"
                                       "echo 'PING a text line first'\n"
                                       "echo '" + summary_json(1) + "'"),
                     .domain = "default"});
  auto rep = runner.run(request(lane));
  REQUIRE(rep.ok());
  CHECK(rep->samples_ns == std::vector<std::uint64_t>{1000, 2000});
  CHECK(rep->skipped_slots == 1);
  CHECK(rep->cpu_pct_ping == Approx(5));
  CHECK(rep->rss_pong == 4096);
  CHECK(rep->achieved_rate_hz == Approx(100.0 * 2 / 3));
}

TEST_CASE("A ping that fails without a summary fails the repetition with its last words", "[bench][runner]") {
  const Lane lane = known_lanes()[0];
  PingRunner runner({.program = script("echo 'cerulion: ping: the pong worker did not start' >&2; exit 1")});
  auto rep = runner.run(request(lane));
  REQUIRE_FALSE(rep.ok());
  CHECK(rep.message() == "ping: the pong worker did not start");
}

TEST_CASE("A stopped ping runner returns Interrupted and leaves nothing of the ping's group running",
          "[bench][runner]") {
  const Lane lane = known_lanes()[0];
  const std::string pid_file = test::fresh_temp_path("grandchild");
  std::atomic<bool> cancel{false};
  // A ping that ignores SIGTERM, with a helper of its own (as a pong is).
  PingRunner runner({.program = script("trap '' TERM; sleep 1000 & echo $! > " + pid_file + "; wait"),
                     .cancel = &cancel,
                     .stop_grace = 200ms});
  std::thread stopper([&] {
    test::eventually([&] { return std::ifstream(pid_file).peek() != EOF; });
    cancel = true;
  });
  auto rep = runner.run(request(lane));
  stopper.join();
  REQUIRE_FALSE(rep.ok());
  CHECK(rep.code() == ErrorCode::Interrupted);
  pid_t helper = 0;
  std::ifstream(pid_file) >> helper;
  REQUIRE(helper > 0);
  CHECK(test::eventually([&] { return test::process_gone(helper); }));
}
