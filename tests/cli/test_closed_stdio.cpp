// SPDX-License-Identifier: Apache-2.0
// Long-running commands started with stdin, stdout or stderr closed (`2>&-`), or all three, as
// some supervisors start daemons: the binary opens the closed ones on /dev/null before
// anything else, so no file it opens later takes their numbers and gets its lines. Before, a
// recording held "cerulion: writing ..." (its summary CRC failed, recover kept nothing) and a
// flashback keeper wrote its start-up line over its store's header and died of SIGSEGV.
// (bridge and view are tested beside their other command tests.)

#include <catch2/catch.hpp>

#include <csignal>

#include "cerulion/core/subscriber.hpp"
#include "everyday_helpers.hpp"
#include "flashback_helpers.hpp"
#include "process.hpp"
#include "test_record_helpers.hpp"

using namespace cerulion::test;
using namespace std::chrono_literals;

namespace {

/// How the tests start a command: with one of stdin, stdout and stderr closed, and with all three.
struct Closing {
  std::string redirection;
  std::vector<int> fds;
};
const std::vector<Closing> kClosings = {{"<&-", {0}}, {">&-", {1}}, {"2>&-", {2}}, {"<&- >&- 2>&-", {0, 1, 2}}};

/// Whether the fds `how` closed are /dev/null in the running process `pid`.
bool closed_fds_on_dev_null(pid_t pid, const Closing& how) {
  const auto fds = standard_fds(pid);
  for (const int fd : how.fds) {
    if (fds[static_cast<std::size_t>(fd)] != "/dev/null") return false;
  }
  return true;
}

std::string described_fds(pid_t pid) {
  std::string out;
  for (const auto& fd : standard_fds(pid)) out += "[" + fd + "] ";
  return out;
}

/// A command that runs until SIGINT, started so: its closed fds are /dev/null, and SIGINT ends it
/// with 0 or 130 (never a crash).
void check_runs_and_stops(const std::vector<std::string>& argv, const Closing& how) {
  BackgroundProcess process(redirected(argv, how.redirection));
  CHECK(eventually([&] { return closed_fds_on_dev_null(process.pid(), how); }, 10s));
  INFO(described_fds(process.pid()));
  std::this_thread::sleep_for(500ms);  // its first lines said, its files open
  CHECK(process.running());
  CHECK(closed_fds_on_dev_null(process.pid(), how));
  process.signal(SIGINT);
  auto done = process.wait(30s);
  CHECK_FALSE(done.timed_out);
  CHECK(done.killed_by == 0);
  CHECK((done.exit_code == 0 || done.exit_code == 130));
}

}  // namespace

TEST_CASE("record started with its standard fds closed writes a recording that reads whole", "[cli][record][stdio]") {
  for (const auto& how : kClosings) {
    INFO(how.redirection);
    const auto topic = unique_topic("closed_stdio_record");
    const auto file = record_temp_path("closed-stdio-record.mcap");
    BackgroundProcess pub({cerulion_binary(), "pub", topic, "tick", "-r", "50"});
    REQUIRE(eventually([&] { return !topic_snapshot(topic).is_null(); }));
    BackgroundProcess record(redirected({cerulion_binary(), "record", topic, "-o", file, "--duration", "2"}, how.redirection));
    CHECK(eventually([&] { return closed_fds_on_dev_null(record.pid(), how); }, 10s));
    auto done = record.wait(30s);
    CHECK_FALSE(done.timed_out);
    CHECK(done.killed_by == 0);
    CHECK(done.exit_code == 0);
    auto info = info_json(file);
    INFO(info.dump());
    CHECK(info["finalized"] == true);
    CHECK(info["problems"].empty());
    CHECK(topic_count(info, topic) > 0);
    // Every byte is the recording's: recover keeps every message.
    const auto recovered = record_temp_path("closed-stdio-recovered.mcap");
    auto rec = run_cerulion({"recover", file, "-o", recovered});
    INFO(rec.out << rec.err);
    CHECK(rec.exit_code == 0);
    CHECK(topic_count(info_json(recovered), topic) == topic_count(info, topic));
  }
}

TEST_CASE("A flashback keeper started with its standard fds closed keeps an intact store and dumps it",
          "[cli][flashback][stdio]") {
  for (const auto& how : kClosings) {
    INFO(how.redirection);
    FlashbackDomain d("fb_closed_stdio");
    const std::string topic = "/closed_stdio";
    auto keeper = d.start_keeper({topic}, "default", true, how.redirection);
    CHECK(closed_fds_on_dev_null(keeper->pid(), how));
    REQUIRE(tap_attached(topic, d.name));
    REQUIRE(d.run({"pub", topic, "hello", "-n", "20", "-r", kTapSafeRate}).exit_code == 0);
    REQUIRE(eventually([&] { return d.kept(topic) == 20; }));
    // Still alive a while later (its threads died of SIGSEGV within 2 s), with its store readable.
    std::this_thread::sleep_for(2s);
    CHECK(keeper->running());
    CHECK(d.status()["alive"] == true);
    keeper->signal(SIGUSR1);
    REQUIRE(eventually([&] { return d.dumps().size() == 1; }));
    const auto messages = dumped_messages(d.dumps()[0]);
    CHECK(messages.size() == 20);
    keeper->signal(SIGINT);
    auto done = keeper->wait(20s);
    CHECK_FALSE(done.timed_out);
    CHECK(done.killed_by == 0);
    CHECK(done.exit_code == 0);
    // The next keeper of that name starts on the store as it was left.
    auto again = d.start_keeper({topic});
    CHECK(again->running());
  }
}

TEST_CASE("pub started with its standard fds closed publishes intact messages", "[cli][pub][stdio]") {
  for (const auto& how : kClosings) {
    INFO(how.redirection);
    const auto topic = unique_topic("closed_stdio_pub");
    cerulion::SubscriberOptions options;
    options.role = cerulion::Role::Tap;
    BackgroundProcess pub(redirected({cerulion_binary(), "pub", topic, "hello", "-r", "50"}, how.redirection));
    REQUIRE(eventually([&] { return !topic_snapshot(topic).is_null(); }));
    auto tap = cerulion::Subscriber::create(topic, options);
    REQUIRE(tap.ok());
    for (int i = 0; i < 5; ++i) {
      auto sample = tap->receive(std::chrono::seconds(10));
      REQUIRE(sample.ok());
      CHECK(sample->text() == "hello");
    }
    CHECK(closed_fds_on_dev_null(pub.pid(), how));
    pub.signal(SIGINT);
    auto done = pub.wait(30s);
    CHECK(done.killed_by == 0);
    CHECK((done.exit_code == 0 || done.exit_code == 130));
  }
}

TEST_CASE("echo and topic hz and pong started with their standard fds closed run and stop on Ctrl-C",
          "[cli][echo][stdio]") {
  for (const auto& how : kClosings) {
    INFO(how.redirection);
    const auto topic = unique_topic("closed_stdio_reader");
    BackgroundProcess pub({cerulion_binary(), "pub", topic, "hello", "-r", "50"});
    REQUIRE(eventually([&] { return !topic_snapshot(topic).is_null(); }));
    for (const auto& args : std::vector<std::vector<std::string>>{{"echo", topic}, {"topic", "hz", topic}, {"pong"}}) {
      INFO(args[0]);
      std::vector<std::string> argv{cerulion_binary()};
      argv.insert(argv.end(), args.begin(), args.end());
      check_runs_and_stops(argv, how);
    }
  }
}
