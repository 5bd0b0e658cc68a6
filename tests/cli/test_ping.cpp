// SPDX-License-Identifier: Apache-2.0
// `cerulion ping` / `pong` through the real binary.

#include <catch2/catch.hpp>

#include <algorithm>
#include <csignal>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sched.h>
#include <sys/stat.h>
#include <thread>

#include "process.hpp"

using namespace cerulion::test;
using namespace std::chrono_literals;
using nlohmann::json;

namespace {

json parse_last_line(const std::string& out) {
  auto end = out.find_last_not_of('\n');
  auto start = out.rfind('\n', end);
  return json::parse(out.substr(start == std::string::npos ? 0 : start + 1, end + 1));
}

}  // namespace

TEST_CASE("Ping measures round trips in every mode and layout", "[ping]") {
  const std::string prefix = unique_topic("ping");
  std::vector<std::string> args{"ping", "--topic", prefix, "-c", "40", "--warmup", "5", "-r", "500", "--json"};
  std::string process = "multi", mode = "lockstep", wait = "adaptive";
  SECTION("multi-process lockstep adaptive (the defaults)") {}
  SECTION("single process") { process = "single"; }
  SECTION("free run") { mode = "free-run"; }
  SECTION("spin") { wait = "spin"; }
  SECTION("block") { wait = "block"; }
  SECTION("16 MiB payload") {
    args.push_back("-s");
    args.push_back("16MiB");
  }
  args.insert(args.end(), {"--process", process, "--mode", mode, "--wait", wait});
  auto r = run_cerulion(args, {}, 60s);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  json j = parse_last_line(r.out);
  CHECK(j["count"] == 40);
  CHECK(j["lost"] == 0);
  CHECK(j["process"] == process);
  CHECK(j["mode"] == mode);
  CHECK(j["wait"] == wait);
  CHECK(j["rtt_us"]["min"].get<double>() > 0);
  CHECK(j["rtt_us"]["median"].get<double>() >= j["rtt_us"]["min"].get<double>());
  CHECK(j["rtt_us"]["max"].get<double>() >= j["rtt_us"]["median"].get<double>());
  CHECK(j["rtt_us"]["p99"].is_null());  // 40 round trips: nowhere near 20 beyond the 99th percentile
  CHECK(j.contains("cpu_pct"));
  // Both topics of this run are gone once ping and its pong have left.
  std::string segment_prefix = "cerulion.default" + prefix;
  std::replace(segment_prefix.begin(), segment_prefix.end(), '/', ':');
  CHECK(count_shm_entries(segment_prefix + ":") == 0);
}

TEST_CASE("Ping pins its workers to the CPUs asked", "[ping]") {
  const std::string prefix = unique_topic("ping_cpus");
  std::vector<std::string> args{"ping", "--topic", prefix, "-c", "20", "--warmup", "2", "-r", "1000", "--json"};
  std::string process = "multi";
  json want_ping, want_pong;
  SECTION("none: left to the scheduler") {
    args.insert(args.end(), {"--cpus", "none"});
  }
  SECTION("both on CPU 0, two processes") {
    args.insert(args.end(), {"--cpus", "0,0"});
    want_ping = 0;
    want_pong = 0;
  }
  SECTION("both on CPU 0, one process") {
    args.insert(args.end(), {"--cpus", "0,0"});
    process = "single";
    want_ping = 0;
    want_pong = 0;
  }
  args.insert(args.end(), {"--process", process});
  auto r = run_cerulion(args, {}, 60s);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  json j = parse_last_line(r.out);
  CHECK(j["count"] == 20);
  CHECK(j["cpus"]["ping"] == want_ping);
  CHECK(j["cpus"]["pong"] == want_pong);
}

TEST_CASE("Ping with flashback runs a keeper on its topics and removes its store afterwards", "[ping][flashback]") {
  const std::string prefix = unique_topic("ping_fb");
  const std::string domain = unique_domain("ping_fb");
  auto r = run_cerulion({"--domain", domain, "ping", "--topic", prefix, "-c", "50", "--warmup", "5", "-r", "500",
                         "--flashback", "--json"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  json j = parse_last_line(r.out);
  CHECK(j["flashback"] == true);
  CHECK(j["lost"] == 0);
  // Requests and replies, warm-up included; a tap may miss some, and says how many.
  CHECK(j["keeper"]["messages"].get<std::uint64_t>() + j["keeper"]["lost"].get<std::uint64_t>() >= 100);
  CHECK(j["keeper"]["messages"].get<std::uint64_t>() > 0);
  CHECK(count_shm_entries("cerulion-flashback." + domain + ".") == 0);
  auto plain = run_cerulion({"--domain", domain, "ping", "--topic", prefix, "-c", "5", "--warmup", "1", "--json"});
  CHECK(parse_last_line(plain.out)["flashback"] == false);
}

TEST_CASE("Ping prints statistics like ping(8)", "[ping]") {
  const std::string prefix = unique_topic("ping_text");
  auto r = run_cerulion({"ping", "--topic", prefix, "-c", "10", "--warmup", "2", "-r", "1000"});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("PING " + prefix) == 0);
  CHECK(r.out.find("--- ping statistics ---") != std::string::npos);
  CHECK(r.out.find("10 round trips, 0 lost, ") != std::string::npos);
  CHECK(r.out.find("rtt min/median/p99/max = ") != std::string::npos);
  CHECK(r.out.find("cpu ping ") != std::string::npos);
}

TEST_CASE("Ping writes raw samples as little-endian u64", "[ping]") {
  const std::string prefix = unique_topic("ping_samples");
  const std::string path = "/tmp/cerulion-samples-" + std::to_string(getpid()) + ".bin";
  auto r = run_cerulion({"ping", "--topic", prefix, "-c", "25", "--warmup", "0", "-r", "0", "--samples-out", path});
  REQUIRE(r.exit_code == 0);
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  REQUIRE(bytes.size() == 25 * 8);
  for (std::size_t i = 0; i < 25; ++i) {
    std::uint64_t v = 0;
    for (int b = 7; b >= 0; --b) v = (v << 8) | static_cast<unsigned char>(bytes[i * 8 + b]);
    CHECK(v > 0);
    CHECK(v < 5'000'000'000ull);
  }
  std::remove(path.c_str());
}

TEST_CASE("Ping peer uses a pong already running", "[ping]") {
  const std::string prefix = unique_topic("ping_peer");
  BackgroundProcess pong({cerulion_binary(), "pong", "--topic", prefix});
  auto r = run_cerulion({"ping", "--peer", "--topic", prefix, "-c", "20", "--warmup", "2", "-r", "1000", "--json"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(parse_last_line(r.out)["count"] == 20);
  // The same pong answers a second ping.
  auto again = run_cerulion({"ping", "--peer", "--topic", prefix, "-c", "5", "--warmup", "0", "-r", "1000"});
  CHECK(again.exit_code == 0);
  pong.signal(SIGINT);
  auto done = pong.wait(10s);
  CHECK(done.exit_code == 0);
  CHECK_FALSE(done.timed_out);
}

TEST_CASE("Ping explains its tail: which part of each late round trip was late and why", "[ping]") {
  const std::string prefix = unique_topic("ping_tail");
  SECTION("in JSON, with the pong it starts tracing too") {
    auto r = run_cerulion({"ping", "--topic", prefix, "-c", "60", "--warmup", "5", "-r", "500", "--explain-tail",
                           "--cpu-budget", "10", "--json"},
                          {}, 60s);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const json tail = parse_last_line(r.out).at("tail");
    CHECK(tail["trips"] == 60);
    CHECK(tail["factor"] == 5);
    std::size_t counted = 0;
    for (const auto& row : tail["rows"]) {
      counted += row["count"].get<std::size_t>();
      // A pong that sent its trace is never untraced.
      CHECK(row["cause"] != "untraced");
    }
    CHECK(counted == tail["late"].get<std::size_t>());
    CHECK(tail["futex"].contains("legs"));
  }
  SECTION("as text, after the statistics") {
    auto r = run_cerulion({"ping", "--topic", prefix, "-c", "20", "--warmup", "2", "-r", "500", "--explain-tail"}, {}, 60s);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.find("--- tail: ") > r.out.find("--- ping statistics ---"));
    CHECK(r.out.find("of 20 round trips over 5x the median") != std::string::npos);
    CHECK(r.out.find("futex wake-ups (all round trips): ") != std::string::npos);
  }
  SECTION("a peer pong started without --explain-tail still answers; its side of a late round trip is untraced") {
    BackgroundProcess pong({cerulion_binary(), "pong", "--topic", prefix});
    auto r = run_cerulion({"ping", "--peer", "--topic", prefix, "-c", "20", "--warmup", "2", "-r", "500",
                           "--explain-tail", "--json"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const json tail = parse_last_line(r.out).at("tail");
    CHECK(tail["trips"] == 20);
    for (const auto& row : tail["rows"]) {
      CHECK(row["part"] != "turnaround");  // unknown without the pong's times
      if (row["part"] == "request") CHECK(row["cause"] == "untraced");
    }
    pong.signal(SIGINT);
    CHECK(pong.wait(10s).exit_code == 0);
  }
}

TEST_CASE("Ping says when its peer pong may run on ping's own CPU", "[ping]") {
  cpu_set_t set;
  CPU_ZERO(&set);
  REQUIRE(sched_getaffinity(0, sizeof set, &set) == 0);
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  }
  if (cpus.size() < 2) {
    WARN("skipped: one CPU, so ping runs unpinned");
    return;
  }
  // `--cpus auto` pins ping to the first allowed CPU.
  const bool pinned_apart = GENERATE(false, true);
  const std::string prefix = unique_topic("ping_peer_cpu");
  std::vector<std::string> pong_args = {cerulion_binary(), "pong", "--topic", prefix};
  if (pinned_apart) pong_args.insert(pong_args.end(), {"--cpu", std::to_string(cpus[1])});
  BackgroundProcess pong(pong_args);
  auto r = run_cerulion({"ping", "--peer", "--topic", prefix, "-c", "5", "--warmup", "0", "-r", "1000", "--json"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(parse_last_line(r.out)["peer_may_share_cpu"] == !pinned_apart);
  auto text = run_cerulion({"ping", "--peer", "--topic", prefix, "-c", "5", "--warmup", "0", "-r", "1000"});
  REQUIRE(text.exit_code == 0);
  CHECK((text.out.find("note: the pong may run on CPU " + std::to_string(cpus[0])) != std::string::npos) == !pinned_apart);
  pong.signal(SIGINT);
  CHECK(pong.wait(10s).exit_code == 0);
}

TEST_CASE("Ping without a peer gives up at the timeout", "[ping]") {
  const std::string prefix = unique_topic("ping_nobody");
  auto r = run_cerulion({"ping", "--peer", "--topic", prefix, "--timeout", "0.3", "-c", "5"}, {}, 20s);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("no `cerulion pong` answered") != std::string::npos);
}

TEST_CASE("Ping stops and reports when the pong dies mid run", "[ping]") {
  const std::string prefix = unique_topic("ping_pong_dies");
  BackgroundProcess pong({cerulion_binary(), "pong", "--topic", prefix});
  BackgroundProcess ping({cerulion_binary(), "ping", "--peer", "--topic", prefix, "-c", "1000000", "-r", "200",
                          "--timeout", "1", "--json"});
  std::this_thread::sleep_for(1s);
  pong.signal(SIGKILL);
  auto r = ping.wait(20s);
  CHECK_FALSE(r.timed_out);
  CHECK(r.exit_code == 1);
  auto j = parse_last_line(r.out);
  CHECK(j["pong_gone"] == true);
  CHECK(j["count"].get<int>() > 0);
  CHECK(r.err.find("went missing") != std::string::npos);
}

TEST_CASE("Ping usage errors exit with 2", "[ping][usage]") {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"ping", "--size", "4"},
           {"ping", "--size", "lots"},
           {"ping", "--mode", "sometimes"},
           {"ping", "--wait", "forever"},
           {"ping", "--process", "many"},
           {"ping", "--bogus"},
           {"ping", "-c", "0"},
           {"ping", "--peer", "--process", "single"},
           {"ping", "--topic", "/a/../b", "-c", "1"},
           {"pong", "--mode", "x"},
           {"ping", "--cpus", "fast"},
           {"ping", "--cpus", "0"},
           {"ping", "--cpus", "0,-1"},
           {"ping", "--cpus", "0,99999"},
           {"pong", "--cpu", "99999"},
           {"--domain", "bad.domain", "ping"},
           {"ping", "--explain-tail", "-s", "32"},
           {"ping", "--explain-tail", "--transport", "fastdds"},
           {"ping", "--cpu-budget", "0"},
           {"pong", "--cpu-budget", "101"},
       }) {
    auto r = run_cerulion(args, {}, 20s);
    INFO(args[0] << " " << (args.size() > 1 ? args[1] : "") << ": " << r.err);
    CHECK(r.exit_code == 2);
    CHECK_FALSE(r.err.empty());
    CHECK(r.err.find("cerulion:") == 0);
  }
}

TEST_CASE("Symlinked name acts as the subcommand", "[ping]") {
  const std::string link = cerulion_binary() + "-ping";
  struct stat st {};
  REQUIRE(lstat(link.c_str(), &st) == 0);
  auto r = run_process({link, "--help"});
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("--samples-out") != std::string::npos);
}

TEST_CASE("ping leaves out a tail percentile too few round trips support and rounds its JSON times", "[ping]") {
  const std::string prefix = unique_topic("ping_tail");
  auto text = run_cerulion({"ping", "--topic", prefix, "-c", "10", "--warmup", "2", "-r", "0"});
  REQUIRE(text.exit_code == 0);
  CHECK(text.out.find("/-/") != std::string::npos);
  CHECK(text.out.find("(p99 needs at least 2000 round trips)") != std::string::npos);
  auto r = run_cerulion({"ping", "--topic", prefix, "-c", "250", "--warmup", "2", "-r", "0", "--json"});
  REQUIRE(r.exit_code == 0);
  json rtt = parse_last_line(r.out)["rtt_us"];
  CHECK(rtt.contains("p99"));
  CHECK(rtt["p99"].is_null());
  CHECK(rtt["p90"].is_number());  // 250 round trips: 25 beyond the 90th percentile
  for (const char* key : {"min", "median", "mean", "p90", "max"}) {
    INFO(key << " = " << rtt[key].dump());
    const std::string printed = rtt[key].dump();
    const auto point = printed.find('.');
    CHECK((point == std::string::npos || printed.size() - point - 1 <= 3));  // to the nanosecond
  }
}

TEST_CASE("ping says a pong process's CPU cannot be read from a run of a few milliseconds instead of printing 0", "[ping]") {
  const std::string prefix = unique_topic("ping_spin_cpu");
  auto r = run_cerulion({"ping", "--topic", prefix, "--wait", "spin", "-r", "0", "-c", "500"}, {}, 60s);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("too short to read another process's CPU") != std::string::npos);
  auto j = parse_last_line(
      run_cerulion({"ping", "--topic", prefix, "--wait", "spin", "-r", "0", "-c", "500", "--json"}, {}, 60s).out);
  CHECK(j["cpu_pong_resolved"] == false);
  CHECK(j["cpu_pct"].contains("pong"));  // the key stays, for readers of older output
  // One pong thread is read from its own clock: resolved however short the run.
  auto single = parse_last_line(run_cerulion({"ping", "--topic", prefix, "--wait", "spin", "-r", "0", "-c", "500",
                                              "--process", "single", "--json"}, {}, 60s).out);
  CHECK(single["cpu_pong_resolved"] == true);
  CHECK(single["cpu_pct"]["pong"].get<double>() > 0);
}

TEST_CASE("ping's pong process is called cerulion in ps, not /proc/self/exe", "[ping]") {
  const std::string prefix = unique_topic("ping_argv0");
  BackgroundProcess ping({cerulion_binary(), "ping", "--topic", prefix, "-c", "400", "-r", "100", "--warmup", "0"});
  std::vector<std::string> argv;
  REQUIRE(eventually([&] {
    const auto children = child_pids(ping.pid());
    if (children.empty()) return false;
    std::ifstream in("/proc/" + std::to_string(children.front()) + "/cmdline");
    argv.clear();
    for (std::string arg; std::getline(in, arg, '\0');) argv.push_back(arg);
    return std::find(argv.begin(), argv.end(), "pong") != argv.end();  // exec'd, not just forked
  }, 10s));
  CHECK(argv.front() == "cerulion");
  ping.signal(SIGINT);
  (void)ping.wait(20s);
}

TEST_CASE("ping --size over the ceiling of a topic that exists already says so in the option's words",
          "[ping][usage]") {
  const std::string prefix = unique_topic("ping_small");
  // Someone else made the request topic with a 16-byte ceiling; ping joins it as it is.
  BackgroundProcess holder({cerulion_binary(), "pub", prefix + "/ping", "x", "--max-payload", "16",
                            "--wait-subscribers", "5", "--timeout", "60"});
  REQUIRE(eventually([&] { return run_cerulion({"topic", "info", prefix + "/ping"}).exit_code == 0; }));
  auto r = run_cerulion({"ping", "--topic", prefix, "-s", "64", "-c", "1", "--timeout", "10"});
  INFO(r.err);
  CHECK(r.exit_code == 2);
  CHECK(r.err == "cerulion: ping: --size 64 is over the topic's ceiling of 16 bytes\n");
  holder.signal(SIGINT);
  holder.wait();
}
