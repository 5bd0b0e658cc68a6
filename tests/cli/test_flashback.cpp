// SPDX-License-Identifier: Apache-2.0
// `cerulion flashback` end to end: the keeper, its store in /dev/shm (which outlives the keeper and
// the publishers), dumps on request and by trigger (signal, trigger topic, death, stall, post
// window, rate limit), status and stop, and dumps read back byte by byte, by `cerulion info` and by
// the independent @mcap/core reader.

#include <catch2/catch.hpp>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <random>
#include <sched.h>
#include <sstream>
#include <sys/stat.h>
#include <tuple>

#include <nlohmann/json.hpp>

#include "cerulion/core/options.hpp"
#include "cerulion/recorder/reader.hpp"
#include "everyday_helpers.hpp"
#include "official_mcap_reader.hpp"
#include "process.hpp"
#include "test_record_helpers.hpp"

using namespace cerulion::test;
using namespace std::chrono_literals;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

/// The rate of the tests that count every message a keeper's tap took. A tap reads behind its
/// publisher and misses what the ring (16 deep by default) overwrites first; at 50 Hz that takes a
/// keeper off the CPU for 320 ms, which a loaded 2-core machine stays under.
const std::string kTapSafeRate = "50";

/// A domain and a dump directory of the test's own. At the end its keepers are stopped, its stores
/// removed, and every /dev/shm file of the domain (stores, topic segments) unlinked.
class FlashbackDomain {
 public:
  explicit FlashbackDomain(const std::string& stem) : name(unique_domain(stem)), dir(record_temp_path(stem)) {
    fs::create_directories(dir);
  }
  FlashbackDomain(const FlashbackDomain&) = delete;
  FlashbackDomain& operator=(const FlashbackDomain&) = delete;
  ~FlashbackDomain() {
    for (const auto& keeper : keepers_) {
      run_cerulion(with({"flashback", "stop", "--discard", "--name", keeper}), {}, 20s);
    }
    const std::string segment = shm_file("/x", name);  // "cerulion.<domain>:x"
    const std::string prefixes[] = {"cerulion-flashback." + name + ".", segment.substr(0, segment.size() - 1)};
    std::error_code ec;
    for (fs::directory_iterator it("/dev/shm", ec), end; !ec && it != end; it.increment(ec)) {
      const std::string file = it->path().filename().string();
      for (const auto& prefix : prefixes) {
        if (file.rfind(prefix, 0) == 0) fs::remove(it->path(), ec);
      }
    }
    fs::remove_all(dir, ec);  // the per-process temp folder itself goes when the process ends
  }

  /// `--domain D args...`.
  std::vector<std::string> with(std::vector<std::string> args) const {
    args.insert(args.begin(), {"--domain", name});
    return args;
  }
  /// The whole command line of `cerulion --domain D args...`.
  std::vector<std::string> command(std::vector<std::string> args) const {
    args = with(std::move(args));
    args.insert(args.begin(), cerulion_binary());
    return args;
  }
  ProcessResult run(std::vector<std::string> args, const std::string& input = {}) const {
    return run_cerulion(with(std::move(args)), input, 30s);
  }

  /// `flashback start ARGS --name NAME --dir DIR` (and `--memory 16MiB` unless ARGS say) in the
  /// background, once its store says it is alive. At normal priority unless told to leave it to
  /// the keeper: its default, idle, gives the keeper only CPU time nobody else wants, and what
  /// these tests count must not depend on a machine otherwise idle.
  std::unique_ptr<BackgroundProcess> start_keeper(std::vector<std::string> args, const std::string& keeper = "default",
                                                  bool normal_priority = true, const std::string& stderr_redirection = {}) {
    if (std::find(keepers_.begin(), keepers_.end(), keeper) == keepers_.end()) keepers_.push_back(keeper);
    if (normal_priority) args.insert(args.end(), {"--priority", "normal"});
    const bool memory = std::find(args.begin(), args.end(), "--memory") != args.end();
    args.insert(args.begin(), {"flashback", "start"});
    for (const char* a : {"--name", keeper.c_str(), "--dir", dir.c_str()}) args.emplace_back(a);
    if (!memory) args.insert(args.end(), {"--memory", "16MiB"});
    auto process = std::make_unique<BackgroundProcess>(
        stderr_redirection.empty() ? command(args) : redirected(command(args), stderr_redirection));
    const bool alive = eventually(
        [&] {
          auto st = status(keeper);
          return st.value("alive", false) && st["keeper_pid"].is_number() && st["keeper_pid"] == process->pid();
        },
        10s);
    REQUIRE(alive);
    return process;
  }

  /// `flashback status --json`, or an empty object when it fails.
  json status(const std::string& keeper = "default") const {
    auto r = run_cerulion(with({"flashback", "status", "--json", "--name", keeper}), {}, 20s);
    return r.exit_code == 0 ? json::parse(r.out) : json::object();
  }

  /// Messages the store counts for `topic` (0 when it does not know the topic).
  std::uint64_t kept(const std::string& topic, const std::string& keeper = "default") const {
    auto st = status(keeper);
    for (const auto& t : st.value("topics", json::array())) {
      if (t["topic"] == topic) return t["messages"];
    }
    return 0;
  }

  /// The dumps in `dir`, oldest name first.
  std::vector<std::string> dumps() const {
    std::vector<std::string> out;
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      const std::string file = it->path().filename().string();
      if (file.rfind("flashback-", 0) == 0 && file.size() > 5 && file.substr(file.size() - 5) == ".mcap") {
        out.push_back(it->path().string());
      }
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  /// A path in `dir` for an explicit `dump -o`.
  std::string path(const std::string& file) const { return (fs::path(dir) / file).string(); }

  const std::string name;
  const std::string dir;

 private:
  std::vector<std::string> keepers_;
};

struct DumpedMessage {
  std::string topic;
  std::uint32_t sequence = 0;
  std::uint64_t log_time = 0;
  std::string data;
};

/// Every message of a dump in file order, read with the recorder library (CRCs checked).
std::vector<DumpedMessage> dumped_messages(const std::string& file) {
  auto reader = cerulion::recorder::Reader::open(file);
  INFO(reader.message());
  REQUIRE(reader.ok());
  std::vector<DumpedMessage> out;
  auto st = reader->read_messages({}, [&](const cerulion::recorder::MessageView& m) {
    out.push_back({m.channel.topic, m.message.sequence, m.message.log_time,
                   std::string(reinterpret_cast<const char*>(m.message.data.data()), m.message.data.size())});
    return true;
  });
  REQUIRE(st.ok());
  CHECK(reader->problems().empty());
  return out;
}

std::vector<DumpedMessage> on_topic(const std::vector<DumpedMessage>& messages, const std::string& topic) {
  std::vector<DumpedMessage> out;
  for (const auto& m : messages) {
    if (m.topic == topic) out.push_back(m);
  }
  return out;
}

/// The Metadata record "flashback" of `cerulion info --json`, or null.
json flashback_metadata(const json& info) {
  for (const auto& m : info["metadata"]) {
    if (m["name"] == "flashback") return m["metadata"];
  }
  return json();
}

/// What `pub --fill counter` sends as message `n`: n little-endian, repeated.
std::string counter_payload(std::uint64_t n, std::size_t size) {
  std::string out(size, '\0');
  for (std::size_t i = 0; i < size; ++i) out[i] = static_cast<char>((n >> (8 * (i % 8))) & 0xFF);
  return out;
}

/// Messages the topic's segment says were published.
std::uint64_t published(const std::string& topic, const std::string& domain) {
  auto snapshot = topic_snapshot(topic, domain);
  return snapshot.is_null() ? 0 : snapshot["published"].get<std::uint64_t>();
}

bool one_line(const std::string& text) {
  return !text.empty() && text.back() == '\n' && std::count(text.begin(), text.end(), '\n') == 1;
}

}  // namespace

TEST_CASE("flashback usage errors exit 2 with one line and a dump without a store names the keeper",
          "[cli][flashback]") {
  FlashbackDomain d("fb_usage");
  const std::vector<std::vector<std::string>> usage = {
      {"flashback"},
      {"flashback", "start"},
      {"flashback", "start", "/t", "--name", "a/b"},
      {"flashback", "start", "/t", "--window", "0"},
      {"flashback", "start", "/t", "--window", "5x"},
      {"flashback", "start", "/t", "--post", "-1s"},
      {"flashback", "start", "-e", "(["},
      {"flashback", "start", "-a", "-x", "*bad"},
      {"flashback", "dump", "--last", "-1"},
      {"flashback", "status", "--name", ""},
  };
  for (const auto& args : usage) {
    auto r = d.run(args);
    std::string line;
    for (const auto& a : args) line += " " + a;
    INFO("cerulion" << line);
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK(one_line(r.err));
    CHECK(r.out.empty());
  }
  // No keeper ever ran in the domain: nothing was created by the refusals above.
  CHECK(count_shm_entries("cerulion-flashback." + d.name + ".") == 0);

  auto r = d.run({"flashback", "dump"});
  CHECK(r.exit_code == 1);
  CHECK(one_line(r.err));
  CHECK(r.err.find("'default'") != std::string::npos);
  CHECK(r.err.find(d.name) != std::string::npos);
  r = d.run({"flashback", "dump", "--name", "nobody_here", "-o", d.path("never.mcap")});
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("'nobody_here'") != std::string::npos);
  CHECK_FALSE(fs::exists(d.path("never.mcap")));
  CHECK(d.dumps().empty());
  for (const char* sub : {"status", "stop"}) {
    r = d.run({"flashback", sub, "--name", "nobody_here"});
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("'nobody_here'") != std::string::npos);
  }
  // For a program, nothing there is still an object (every figure null, no topics), and a failure.
  r = d.run({"flashback", "status", "--json", "--name", "nobody_here"});
  CHECK(r.exit_code == 1);
  CHECK(one_line(r.err));
  REQUIRE(one_line(r.out));
  auto nothing = json::parse(r.out);
  CHECK(nothing["name"] == "nobody_here");
  CHECK(nothing["domain"] == d.name);
  CHECK(nothing["alive"] == false);
  for (const char* key : {"store", "keeper_pid", "uptime_s", "dump_dir", "triggers", "window_s", "memory_bytes",
                          "messages", "dumps", "last_dump"}) {
    INFO(key);
    REQUIRE(nothing.contains(key));
    CHECK(nothing[key].is_null());
  }
  CHECK(nothing["topics"] == json::array());
}

TEST_CASE("A flashback dump holds every message a killed publisher sent in order and byte-exact",
          "[cli][flashback]") {
  FlashbackDomain d("fb_exact");
  const std::string topic = "/exact";
  // Lockstep: the publisher waits for the keeper, so "every message" is a guarantee, not luck.
  auto keeper = d.start_keeper({topic, "--lockstep"});
  REQUIRE(eventually([&] { return live_readers(topic_snapshot(topic, d.name), "subscriber") == 1; }));

  // Lines of different lengths and contents, published from stdin at 1 kHz, killed part way.
  std::vector<std::string> lines;
  std::string input;
  for (int i = 0; i < 5000; ++i) {
    std::string line = "message " + std::to_string(i) + " " + std::string((i * 37) % 300, static_cast<char>('a' + i % 26));
    input += line + "\n";
    lines.push_back(std::move(line));
  }
  // stdin from a file of our own through sh: BackgroundProcess unlinks its input file right after
  // fork, possibly before the child opened it.
  const std::string input_file = d.path("lines.txt");
  spit(input_file, input);
  auto pub_command = d.command({"pub", topic, "-r", "1000"});
  pub_command.insert(pub_command.begin(), {"/bin/sh", "-c", "exec \"$0\" \"$@\" < '" + input_file + "'"});
  BackgroundProcess pub(pub_command);
  REQUIRE(eventually([&] { return published(topic, d.name) >= 300; }));
  pub.signal(SIGKILL);
  REQUIRE(pub.wait().exit_code == 128 + SIGKILL);
  const std::uint64_t sent = published(topic, d.name);
  REQUIRE(sent >= 300);
  REQUIRE(sent < lines.size());
  REQUIRE(eventually([&] { return d.kept(topic) == sent; }));

  auto check_dump = [&](const std::string& file) {
    auto r = d.run({"flashback", "dump", "-o", file});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.out == file + "\n");
    auto messages = dumped_messages(file);
    REQUIRE(messages.size() == sent);
    for (std::size_t i = 0; i < messages.size(); ++i) {
      INFO("message " << i);
      REQUIRE(messages[i].topic == topic);
      REQUIRE(messages[i].sequence == i);
      REQUIRE(messages[i].data == lines[i]);
      if (i > 0) REQUIRE(messages[i].log_time >= messages[i - 1].log_time);
    }
    auto info = info_json(file);
    CHECK(info["finalized"] == true);
    CHECK(info["problems"].empty());
    auto md = flashback_metadata(info);
    REQUIRE(md.is_object());
    CHECK(md["trigger"] == "request");
    CHECK(md["messages:" + topic] == std::to_string(sent));
    CHECK(md["lost:" + topic] == "0");
  };
  check_dump(d.path("while-running.mcap"));
  // Publisher and keeper gone: the store still has all of it.
  keeper->signal(SIGKILL);
  keeper->wait();
  check_dump(d.path("after-keeper-killed.mcap"));
}

TEST_CASE("A flashback keeper killed with SIGKILL at random moments leaves a store that dumps whole and a new keeper keeps its history",
          "[cli][flashback]") {
  FlashbackDomain d("fb_killkeeper");
  const std::string topic = "/busy";
  constexpr std::size_t kSize = 300;
  BackgroundProcess pub(d.command({"pub", topic, "--size", std::to_string(kSize), "--fill", "counter", "-r", "2000"}));
  std::mt19937 rng(Catch::rngSeed());
  std::uint32_t first_sequence = 0;
  std::size_t previous_count = 0;
  for (int round = 0; round < 5; ++round) {
    INFO("round " << round);
    auto keeper = d.start_keeper({topic, "--window", "60"});
    REQUIRE(tap_attached(topic, d.name));
    // Killed once it has taken something of its own (a starved keeper may not have yet), at a
    // random moment after that.
    REQUIRE(eventually([&] { return d.kept(topic) > previous_count; }));
    std::this_thread::sleep_for(std::chrono::milliseconds(rng() % 700));
    keeper->signal(SIGKILL);
    REQUIRE(keeper->wait().exit_code == 128 + SIGKILL);
    CHECK(d.status()["alive"] == false);

    const std::string file = d.path("round" + std::to_string(round) + ".mcap");
    auto r = d.run({"flashback", "dump", "-o", file});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    auto info = info_json(file);
    CHECK(info["finalized"] == true);
    CHECK(info["problems"].empty());
    auto messages = dumped_messages(file);
    REQUIRE(!messages.empty());
    CHECK(info["message_count"] == messages.size());
    for (std::size_t i = 0; i < messages.size(); ++i) {
      INFO("message " << i << " sequence " << messages[i].sequence);
      REQUIRE(messages[i].data == counter_payload(messages[i].sequence, kSize));  // nothing torn
      if (i > 0) REQUIRE(messages[i].sequence > messages[i - 1].sequence);     // in order, no duplicates
    }
    // Each keeper took the store over: the first round's messages are all still there.
    if (round == 0) first_sequence = messages.front().sequence;
    CHECK(messages.front().sequence == first_sequence);
    CHECK(messages.size() > previous_count);
    previous_count = messages.size();
  }
}

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

TEST_CASE("A flashback keeper runs at idle priority unless asked for normal or lockstep; its dumps at normal priority",
          "[cli][flashback]") {
  FlashbackDomain d("fb_priority");
  // Its store is alive before an idle keeper has had the CPU to start all its threads.
  auto policy = [](pid_t pid, const std::string& thread) {
    int found = -1;
    eventually([&] { return (found = scheduling_policy(pid, thread)) != -1; }, 10s);
    return found;
  };
  // Its compressing and control threads stand for the taps, started the same way.
  auto by_default = d.start_keeper({"/prio"}, "by_default", false);
  CHECK(policy(by_default->pid(), "fb-compress") == SCHED_IDLE);
  CHECK(policy(by_default->pid(), "fb-control") == SCHED_IDLE);
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

TEST_CASE("flashback dump without -o writes into the running keeper's directory, named after the keeper",
          "[cli][flashback]") {
  FlashbackDomain d("fb_dumpdir");
  auto keeper = d.start_keeper({"/dirs"}, "cams");
  REQUIRE(tap_attached("/dirs", d.name));
  REQUIRE(d.run({"pub", "/dirs", "x", "-n", "5", "-r", kTapSafeRate}).exit_code == 0);
  REQUIRE(eventually([&] { return d.kept("/dirs", "cams") == 5; }));
  // Asked from elsewhere (this process's directory is not the keeper's), without -o or --dir.
  REQUIRE(fs::current_path() != fs::path(d.dir));
  auto r = d.run({"flashback", "dump", "--name", "cams"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  REQUIRE(d.dumps().size() == 1);
  CHECK(r.out == d.dumps()[0] + "\n");
  const std::string file = fs::path(d.dumps()[0]).filename().string();
  CHECK(file.rfind("flashback-" + d.name + "-cams-", 0) == 0);
  CHECK(topic_count(info_json(d.dumps()[0]), "/dirs") == 5);
  // --dir still says otherwise.
  const std::string other = d.path("other");
  fs::create_directories(other);
  r = d.run({"flashback", "dump", "--name", "cams", "--dir", other});
  REQUIRE(r.exit_code == 0);
  CHECK(fs::path(r.out.substr(0, r.out.size() - 1)).parent_path() == fs::path(other));
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

TEST_CASE("A topic gone before the window is left out of a later flashback dump, and the window takes units",
          "[cli][flashback]") {
  FlashbackDomain d("fb_gone");
  auto keeper = d.start_keeper({"-a", "--window", "1s"});
  CHECK(d.status()["window_limit_s"] == 1);
  REQUIRE(d.run({"pub", "/old", "x", "-n", "5", "-r", kTapSafeRate}).exit_code == 0);
  REQUIRE(eventually([&] { return d.kept("/old") == 5; }));
  // Out of the window: the store holds nothing of it any more.
  REQUIRE(eventually([&] { return d.status().value("messages", 1) == 0; }));
  // A topic that goes on, so that it is in the window whenever the dump is taken.
  BackgroundProcess pub(d.command({"pub", "/new", "y", "-r", kTapSafeRate}));
  REQUIRE(eventually([&] { return d.kept("/new") >= 5; }));
  const std::string file = d.path("later.mcap");
  REQUIRE(d.run({"flashback", "dump", "-o", file}).exit_code == 0);
  auto info = info_json(file);
  REQUIRE(info["channels"].size() == 1);
  CHECK(info["channels"][0]["topic"] == "/new");
  auto md = flashback_metadata(info);
  CHECK_FALSE(md.contains("messages:/old"));
}

TEST_CASE("flashback dump to a path that cannot be written fails with one line and leaves nothing",
          "[cli][flashback]") {
  FlashbackDomain d("fb_badpath");
  auto keeper = d.start_keeper({"/p"});
  REQUIRE(tap_attached("/p", d.name));
  REQUIRE(d.run({"pub", "/p", "x", "-n", "5", "-r", "100"}).exit_code == 0);
  REQUIRE(eventually([&] { return d.kept("/p") == 5; }));  // the keeper reads behind the publisher
  const std::string missing_dir = d.path("no/such/dir");
  auto r = d.run({"flashback", "dump", "-o", missing_dir + "/out.mcap"});
  CHECK(r.exit_code == 1);
  CHECK(one_line(r.err));
  CHECK(r.out.empty());
  CHECK_FALSE(fs::exists(d.path("no")));

  const std::string existing = d.path("precious.mcap");
  spit(existing, "precious");
  r = d.run({"flashback", "dump", "-o", existing});
  CHECK(r.exit_code == 1);
  CHECK(one_line(r.err));
  CHECK(slurp(existing) == "precious");
  // Nothing else appeared, and the store is untouched: the dump can be retried.
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(d.dir)) ++entries;
  CHECK(entries == 1);
  CHECK(d.status()["dumps"] == 0);
  auto retry = d.path("retry.mcap");
  CHECK(d.run({"flashback", "dump", "-o", retry}).exit_code == 0);
  CHECK(topic_count(info_json(retry), "/p") == 5);
}

TEST_CASE("A flashback dump is read back by the indexed and streaming readers of mcap core", "[cli][flashback][npm]") {
  std::string why;
  const auto reader = cerulion::test::official_mcap_reader(why);
  if (!reader) {
    WARN("skipped: " << why);
    return;
  }
  FlashbackDomain d("fb_npm");
  auto keeper = d.start_keeper({"-a"});
  // Two topics, part of it in closed (compressed) chunks and part in the open chunk.
  BackgroundProcess a(d.command({"pub", "/npm/a", "--size", "2000", "--fill", "counter", "-n", "150", "-r", kTapSafeRate}));
  BackgroundProcess b(d.command({"pub", "/npm/b", "--size", "100", "--fill", "random", "-n", "150", "-r", kTapSafeRate}));
  REQUIRE(a.wait(20s).exit_code == 0);
  REQUIRE(b.wait(20s).exit_code == 0);
  REQUIRE(eventually([&] { return d.kept("/npm/a") + d.kept("/npm/b") >= 295; }));
  const std::string file = d.path("npm.mcap");
  REQUIRE(d.run({"flashback", "dump", "-o", file, "--note", "for node"}).exit_code == 0);
  auto ours = dumped_messages(file);
  REQUIRE(ours.size() >= 295);

  const auto read_back = cerulion::test::read_with_official_reader(*reader, {file});
  INFO(read_back.output);
  REQUIRE(read_back.exit_code == 0);
  REQUIRE(read_back.files.size() == 1);
  const auto& got = read_back.files[0];
  CHECK(got["stream_done"] == true);
  CHECK(got["message_count"] == ours.size());
  CHECK(got["streamed_messages"] == ours.size());
  CHECK(got["chunk_count"].get<int>() >= 2);
  // The same messages: topic, sequence, log time and size, one for one (ties in log time may come
  // in either order, so both sides are compared sorted).
  using Row = std::tuple<std::string, std::uint64_t, std::string, std::size_t>;
  std::vector<Row> expected, read;
  for (const auto& m : ours) expected.emplace_back(m.topic, m.sequence, std::to_string(m.log_time), m.data.size());
  for (const auto& m : got["messages"]) read.emplace_back(m[0], m[1], m[2], m[3]);
  std::sort(expected.begin(), expected.end());
  std::sort(read.begin(), read.end());
  CHECK(read == expected);
  json flashback;
  for (const auto& m : got["metadata"]) {
    if (m["name"] == "flashback") flashback = m["metadata"];
  }
  REQUIRE(flashback.is_object());
  CHECK(flashback["note"] == "for node");
}
