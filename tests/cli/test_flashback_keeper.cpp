// SPDX-License-Identifier: Apache-2.0
// The flashback keeper's life end to end: its priority, one keeper per name, a full or closed
// stderr, `flashback status`, `flashback stop`, and `clean` of the stores it leaves.

#include <catch2/catch.hpp>

#include <csignal>
#include <sched.h>
#include <sstream>

#include "flashback_helpers.hpp"

using namespace cerulion::test;
using namespace std::chrono_literals;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

/// The scheduling policy of the thread of `pid` named `thread` (-1 when there is none).
int scheduling_policy(pid_t pid, const std::string& thread) {
  const std::string tasks = "/proc/" + std::to_string(pid) + "/task";
  std::error_code ec;
  for (const auto& task : fs::directory_iterator(tasks, ec)) {
    std::string name = slurp((task.path() / "comm").string());
    while (!name.empty() && name.back() == '\n') name.pop_back();
    if (name != thread) continue;
    const std::string stat = slurp((task.path() / "stat").string());
    const auto after_name = stat.rfind(')');
    if (after_name == std::string::npos) return -1;
    std::istringstream fields(stat.substr(after_name + 2));  // from field 3, the state
    std::string field;
    for (int i = 3; i <= 41 && fields >> field; ++i) {
      if (i == 41) return std::stoi(field);
    }
  }
  return -1;
}

}  // namespace

TEST_CASE("A flashback keeper compresses at idle priority unless asked for normal or lockstep, and its taps, "
          "trigger watch and dumps keep normal priority",
          "[cli][flashback]") {
  FlashbackDomain d("fb_priority");
  // Its store is alive before an idle keeper has had the CPU to start all its threads.
  auto policy = [](pid_t pid, const std::string& thread) {
    int found = -1;
    eventually([&] { return (found = scheduling_policy(pid, thread)) != -1; }, 10s);
    return found;
  };
  // Its control thread stands for the taps, started the same way: on a saturated machine they must
  // still read every ring in time.
  auto by_default = d.start_keeper({"/prio"}, "by_default", false);
  CHECK(policy(by_default->pid(), "fb-compress") == SCHED_IDLE);
  CHECK(policy(by_default->pid(), "fb-control") == SCHED_OTHER);
  CHECK(policy(by_default->pid(), "fb-dump") == SCHED_OTHER);
  auto lockstep = d.start_keeper({"/prio", "--lockstep"}, "lockstep", false);
  CHECK(policy(lockstep->pid(), "fb-compress") == SCHED_OTHER);
  auto normal = d.start_keeper({"/prio", "--priority", "normal"}, "normal", false);
  CHECK(policy(normal->pid(), "fb-compress") == SCHED_OTHER);
  auto idle_lockstep = d.start_keeper({"/prio", "--lockstep", "--priority", "idle"}, "idle_lockstep", false);
  CHECK(policy(idle_lockstep->pid(), "fb-compress") == SCHED_IDLE);
  CHECK(policy(idle_lockstep->pid(), "fb-dump") == SCHED_OTHER);
}

TEST_CASE("A second flashback keeper of the same name refuses and names the running one's pid", "[cli][flashback]") {
  FlashbackDomain d("fb_twice");
  auto keeper = d.start_keeper({"/twice"}, "cam");
  auto r = d.run({"flashback", "start", "/twice", "--name", "cam", "--memory", "16MiB", "--dir", d.dir});
  INFO(r.err);
  CHECK(r.exit_code == 1);
  CHECK(one_line(r.err));
  CHECK(r.err.find(std::to_string(keeper->pid())) != std::string::npos);
  auto st = d.status("cam");
  CHECK(st["alive"] == true);
  CHECK(st["keeper_pid"] == keeper->pid());
  // Another name in the same domain is another keeper.
  auto other = d.start_keeper({"/twice"}, "lidar");
  CHECK(d.status("lidar")["keeper_pid"] == other->pid());
}

TEST_CASE("A flashback keeper whose stderr is full or closed still dumps on SIGUSR1 and stops cleanly", "[cli][flashback]") {
  // A full device, and a pipe whose reader left after the start line.
  for (const std::string redirection : {"2>/dev/full", "2> >(head -1 >/dev/null)"}) {
    INFO(redirection);
    FlashbackDomain d("fb_lost_stderr");
    const std::string topic = "/lost_stderr";
    auto keeper = d.start_keeper({topic}, "default", true, redirection);
    REQUIRE(tap_attached(topic, d.name));
    REQUIRE(d.run({"pub", topic, "hello", "-n", "20", "-r", kTapSafeRate}).exit_code == 0);
    REQUIRE(eventually([&] { return d.kept(topic) == 20; }));
    keeper->signal(SIGUSR1);
    REQUIRE(eventually([&] { return d.dumps().size() == 1; }));
    keeper->signal(SIGINT);
    auto done = keeper->wait(20s);
    CHECK_FALSE(done.timed_out);
    CHECK(done.killed_by == 0);
    CHECK(done.exit_code == 0);
    CHECK(info_json(d.dumps()[0])["finalized"] == true);
  }
}

TEST_CASE("flashback status json reports the keeper and the window and memory and per-topic counts",
          "[cli][flashback]") {
  FlashbackDomain d("fb_status");
  const std::string topic = "/counted";
  auto keeper = d.start_keeper({topic, "--window", "20"});
  REQUIRE(tap_attached(topic, d.name));
  REQUIRE(d.run({"pub", topic, "--size", "2000", "-n", "100", "-r", kTapSafeRate}).exit_code == 0);
  REQUIRE(eventually([&] { return d.kept(topic) == 100; }));
  // Zeros compress: once the open chunk closed (at least once a second), the ratio shows it.
  REQUIRE(eventually([&] { return d.status().value("compression_ratio", 0.0) > 2; }, 5s));
  auto st = d.status();
  INFO(st.dump(2));
  for (const char* key : {"keeper_pid", "alive", "window_s", "memory_bytes", "memory_limit_bytes", "compression_ratio",
                          "dumps", "dumps_refused", "topics"}) {
    CHECK(st.contains(key));
  }
  CHECK(st["keeper_pid"] == keeper->pid());
  CHECK(st["alive"] == true);
  CHECK(st["window_s"].get<double>() > 0.2);
  CHECK(st["window_s"].get<double>() <= 20);
  CHECK(st["window_limit_s"] == 20);
  CHECK(st["memory_limit_bytes"] == 16u << 20);
  CHECK(st["memory_bytes"].get<std::uint64_t>() > 0);
  CHECK(st["memory_bytes"].get<std::uint64_t>() < 200'000);  // 200 kB of zeros, compressed
  CHECK(st["dumps"] == 0);
  CHECK(st["dumps_refused"] == 0);
  REQUIRE(st["topics"].size() == 1);
  CHECK(st["topics"][0]["topic"] == topic);
  CHECK(st["topics"][0]["messages"] == 100);
  CHECK(st["topics"][0]["bytes"] == 200'000);
  CHECK(st["topics"][0]["lost"] == 0);
  // The store is not a topic.
  auto listed = json::parse(d.run({"topic", "list", "--json"}).out);
  REQUIRE(listed["topics"].size() == 1);
  CHECK(listed["topics"][0]["name"] == topic);
  CHECK(st["dump_dir"] == fs::path(d.dir).lexically_normal().string());
  CHECK(st["window_cut"].is_null());
  CHECK(st["last_dump"].is_null());
  // The plain form says the same in words.
  auto text = d.run({"flashback", "status"});
  CHECK(text.exit_code == 0);
  CHECK(text.out.find("pid " + std::to_string(keeper->pid()) + ", alive") != std::string::npos);
  CHECK(text.out.find(topic + ": 100 messages") != std::string::npos);
  CHECK(text.out.find("0 dumps made") != std::string::npos);

  keeper->signal(SIGKILL);
  keeper->wait();
  st = d.status();
  CHECK(st["alive"] == false);
  CHECK(st["keeper_pid"] == keeper->pid());
  CHECK(st["topics"][0]["messages"] == 100);
  CHECK(d.run({"flashback", "status"}).out.find("not running: it died") != std::string::npos);
}

TEST_CASE("flashback stop stops the keeper and keeps the store and discard removes it", "[cli][flashback]") {
  FlashbackDomain d("fb_stop");
  const std::string topic = "/stopped";
  const std::string store = "cerulion-flashback." + d.name + ".default";
  auto keeper = d.start_keeper({topic});
  REQUIRE(tap_attached(topic, d.name));
  REQUIRE(d.run({"pub", topic, "kept", "-n", "30", "-r", kTapSafeRate}).exit_code == 0);
  REQUIRE(eventually([&] { return d.kept(topic) == 30; }));

  auto r = d.run({"flashback", "stop"});
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.err.find(std::to_string(keeper->pid())) != std::string::npos);
  // It returned once the keeper had exited, as it says.
  CHECK_FALSE(keeper->running());
  auto done = keeper->wait(5s);
  CHECK_FALSE(done.timed_out);
  CHECK_FALSE(keeper->running());
  CHECK(d.status()["alive"] == false);
  CHECK(count_shm_entries(store) == 1);
  // The store stays: a later dump has what the keeper took (its open chunk included).
  auto file = d.path("after-stop.mcap");
  REQUIRE(d.run({"flashback", "dump", "-o", file}).exit_code == 0);
  CHECK(topic_count(info_json(file), topic) == 30);

  r = d.run({"flashback", "stop"});
  CHECK(r.exit_code == 1);
  CHECK(one_line(r.err));
  r = d.run({"flashback", "stop", "--discard"});
  CHECK(r.exit_code == 0);
  CHECK(count_shm_entries(store) == 0);
  // A keeper did run there: status says nothing runs now, not that none ever did.
  r = d.run({"flashback", "status"});
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("no keeper runs there now") != std::string::npos);
  CHECK(r.err.find("ever") == std::string::npos);
  r = d.run({"flashback", "stop"});
  CHECK(r.exit_code == 1);
  r = d.run({"flashback", "dump", "-o", d.path("gone.mcap")});
  CHECK(r.exit_code == 1);
  CHECK_FALSE(fs::exists(d.path("gone.mcap")));

  // --discard on a running keeper stops it and removes its store.
  auto second = d.start_keeper({topic});
  r = d.run({"flashback", "stop", "--discard"});
  CHECK(r.exit_code == 0);
  CHECK_FALSE(second->running());
  CHECK(count_shm_entries(store) == 0);
}

TEST_CASE("flashback stop returns once the keeper has exited, so a keeper of the same name starts right after",
          "[cli][flashback]") {
  FlashbackDomain d("fb_restart");
  for (int round = 0; round < 3; ++round) {
    INFO("round " << round);
    // A keeper still exiting holds its store: this start would be refused, naming its pid.
    auto keeper = d.start_keeper({"/restart"});
    auto r = d.run({"flashback", "stop"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK_FALSE(keeper->running());
  }
}

TEST_CASE("clean keeps a dead flashback keeper's store as evidence and removes it only when asked", "[cli][flashback]") {
  FlashbackDomain d("fb_clean");
  const std::string store = "cerulion-flashback." + d.name + ".default";
  auto keeper = d.start_keeper({"/evidence"});
  REQUIRE(tap_attached("/evidence", d.name));
  // A running keeper's store is never touched, not even with --flashback.
  auto r = d.run({"clean", "--flashback"});
  CHECK(r.exit_code == 0);
  CHECK(count_shm_entries(store) == 1);
  CHECK(d.status()["alive"] == true);
  REQUIRE(d.run({"pub", "/evidence", "x", "-n", "10", "-r", "200"}).exit_code == 0);
  REQUIRE(eventually([&] { return d.kept("/evidence") == 10; }));
  keeper->signal(SIGKILL);
  keeper->wait();

  r = d.run({"clean"});
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("flashback store 'default'") != std::string::npos);
  CHECK(count_shm_entries(store) == 1);
  auto file = d.path("evidence.mcap");
  REQUIRE(d.run({"flashback", "dump", "-o", file}).exit_code == 0);
  CHECK(topic_count(info_json(file), "/evidence") == 10);
  r = d.run({"clean", "--flashback"});
  CHECK(r.exit_code == 0);
  CHECK(count_shm_entries(store) == 0);
}

TEST_CASE("clean removes the store of a ping --flashback that is gone: scratch, not evidence", "[cli][flashback][ping]") {
  FlashbackDomain d("fb_pingstore");
  // A pid that is gone: a process of ours, started and reaped.
  BackgroundProcess dead_child({"true"});
  const pid_t ping = dead_child.pid();
  REQUIRE(dead_child.wait().exit_code == 0);
  const std::string name = "ping-" + std::to_string(ping);
  const std::string store = "cerulion-flashback." + d.name + "." + name;
  auto keeper = d.start_keeper({"/measured"}, name);
  REQUIRE(tap_attached("/measured", d.name));
  keeper->signal(SIGKILL);
  keeper->wait();
  // Its keeper and its ping are both gone: nothing will read it.
  auto r = d.run({"clean"});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("removed flashback store '" + name + "'") != std::string::npos);
  CHECK(count_shm_entries(store) == 0);
}

TEST_CASE("A flashback keeper started without --dir says, and records, its absolute directory", "[cli][flashback]") {
  FlashbackDomain d("fb_nodir");
  const std::string here = d.path("here");
  fs::create_directories(here);
  // In a directory of its own, with no --dir and no $CERULION_FLASHBACK_DIR.
  std::vector<std::string> start = {"env", "-u", "CERULION_FLASHBACK_DIR", "sh", "-c", "cd \"$0\" && exec \"$@\"", here};
  for (const auto& a : d.command({"flashback", "start", "/nodir", "--name", "nodir", "--memory", "16MiB", "--priority", "normal"})) {
    start.push_back(a);
  }
  BackgroundProcess keeper(start);
  REQUIRE(eventually([&] { return d.status("nodir").value("alive", false); }, 10s));
  CHECK(d.status("nodir")["dump_dir"] == here);
  auto r = d.run({"flashback", "dump", "--name", "nodir"});
  REQUIRE(r.exit_code == 0);
  CHECK(fs::path(r.out.substr(0, r.out.size() - 1)).parent_path() == fs::path(here));
  REQUIRE(d.run({"flashback", "stop", "--name", "nodir", "--discard"}).exit_code == 0);
  auto done = keeper.wait(10s);
  INFO(done.err);
  CHECK(done.err.find("dumps go to " + here + "\n") != std::string::npos);
  CHECK(done.err.find("dumps go to .") == std::string::npos);
}

TEST_CASE("flashback status shows where dumps go, the armed triggers, the last dump and a dead publisher",
          "[cli][flashback]") {
  FlashbackDomain d("fb_statusmore");
  auto keeper = d.start_keeper({"-a", "--on-death", "--trigger-topic", "/fb/t", "--post", "200ms", "--on-stall", "1m",
                                "--window", "20s", "--max-dumps", "5"});
  BackgroundProcess pub(d.command({"pub", "/victim", "alive", "-r", "100"}));
  REQUIRE(eventually([&] { return d.kept("/victim") >= 10; }));
  pub.signal(SIGKILL);
  REQUIRE(pub.wait().exit_code == 128 + SIGKILL);
  REQUIRE(eventually([&] { return d.dumps().size() == 1; }));
  auto st = d.status();
  INFO(st.dump(2));
  CHECK(st["dump_dir"] == fs::path(d.dir).lexically_normal().string());
  CHECK(st["window_limit_s"] == 20);
  CHECK(st["triggers"]["signal"] == true);
  CHECK(st["triggers"]["topic"] == "/fb/t");
  CHECK(st["triggers"]["death"] == true);
  CHECK(st["triggers"]["stall_s"] == 60);
  CHECK(st["triggers"]["post_s"] == 0.2);
  CHECK(st["triggers"]["max_dumps_per_hour"] == 5);
  REQUIRE(st["last_dump"].is_object());
  CHECK(st["last_dump"]["path"] == d.dumps()[0]);
  CHECK(st["last_dump"]["trigger"] == "death");
  json victim;
  for (const auto& t : st["topics"]) {
    if (t["topic"] == "/victim") victim = t;
  }
  REQUIRE(victim.is_object());
  CHECK(victim["in_domain"] == true);
  CHECK(victim["publishers"] == json::array());
  CHECK(victim["dead_publishers"] == json::array({pub.pid()}));

  auto text = d.run({"flashback", "status"});
  INFO(text.out);
  CHECK(text.exit_code == 0);
  CHECK(text.out.find("dumps to: " + fs::path(d.dir).lexically_normal().string() + "\n") != std::string::npos);
  CHECK(text.out.find("triggers: SIGUSR1, a message on /fb/t, a publisher's death, a topic silent 60 s; 0.2 s after") !=
        std::string::npos);
  CHECK(text.out.find("1 dump made, 0 refused; last at ") != std::string::npos);
  CHECK(text.out.find("(death, ") != std::string::npos);
  CHECK(text.out.find(d.dumps()[0]) != std::string::npos);
  CHECK(text.out.find("/victim: ") != std::string::npos);
  CHECK(text.out.find("; publisher " + std::to_string(pub.pid()) + " died") != std::string::npos);
}

TEST_CASE("flashback status says a window cut short by memory was cut by its memory limit", "[cli][flashback]") {
  FlashbackDomain d("fb_cutshort");
  const std::string topic = "/big";
  auto keeper = d.start_keeper({topic, "--memory", "2MiB", "--window", "10m"});
  REQUIRE(tap_attached(topic, d.name));
  // 64 KiB of noise each: far more than 2 MiB, so chunks inside the window give way to newer ones.
  REQUIRE(d.run({"pub", topic, "--size", "65536", "--fill", "random", "-n", "300", "-r", "200"}).exit_code == 0);
  REQUIRE(eventually([&] { return d.status().value("window_cut", json()) == "memory"; }));
  auto text = d.run({"flashback", "status"});
  INFO(text.out);
  CHECK(text.out.find(" s of 600 s asked: memory limit 2.0 MiB reached") != std::string::npos);
}

TEST_CASE("A flashback keeper whose --memory is more than /dev/shm has free starts and says so with the free space",
          "[cli][flashback]") {
  FlashbackDomain d("fb_hugememory");
  auto keeper = d.start_keeper({"/huge", "--memory", "64TiB"});
  auto st = d.status();
  CHECK(st["memory_limit_bytes"] == 64ull << 40);
  CHECK(st["shm_free_bytes"].get<std::uint64_t>() < (64ull << 40));
  auto text = d.run({"flashback", "status"});
  CHECK(text.out.find("/dev/shm has ") != std::string::npos);
  CHECK(text.out.find("it cannot grow to the limit") != std::string::npos);
  keeper->signal(SIGINT);
  auto done = keeper->wait(20s);
  INFO(done.err);
  CHECK(done.err.find("warning: memory limit 64.0 TiB, but /dev/shm has ") != std::string::npos);
}
