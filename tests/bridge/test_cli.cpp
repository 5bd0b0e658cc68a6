// SPDX-License-Identifier: Apache-2.0
// `cerulion bridge` through the real binary: two bridges carry a topic between two domains,
// `bridge status` reads them, a bridge killed with -9 and started again resumes, and bad input
// gets one clear line.

#include <catch2/catch.hpp>

#include <csignal>

#include <nlohmann/json.hpp>

#include "bridge_helpers.hpp"

using namespace cerulion;
using namespace cerulion::test;

namespace {

std::vector<std::string> bridge_args(const std::string& domain, std::uint32_t dds, std::vector<std::string> more) {
  std::vector<std::string> argv{cerulion_binary(), "--domain", domain, "bridge", "--dds-domain", std::to_string(dds)};
  argv.insert(argv.end(), more.begin(), more.end());
  return argv;
}

/// Publishes a line every 50 ms in `domain` until `echo` in `far` prints `count` messages.
bool carried(const std::string& domain, const std::string& far, const std::string& topic, int count = 3) {
  BackgroundProcess pub({cerulion_binary(), "--domain", domain, "pub", topic, "tick", "-r", "20"});
  auto echo = run_cerulion({"--domain", far, "echo", topic, "-n", std::to_string(count), "--raw"}, {},
                           std::chrono::seconds(40));
  return echo.exit_code == 0 && echo.out.find("tick") != std::string::npos;
}

}  // namespace

TEST_CASE("Two bridge processes carry a topic between two domains and report it", "[bridge][cli]") {
  const std::string a = unique_domain("clia"), b = unique_domain("clib"), topic = unique_topic("cli");
  const std::uint32_t dds = test_dds_domain();
  BackgroundProcess out(bridge_args(a, dds, {"-a", "--export"}));
  BackgroundProcess in(bridge_args(b, dds, {"-a", "--import"}));
  REQUIRE(carried(a, b, topic));

  // The status files are replaced once a second: what was carried shows within a few.
  ProcessResult status;
  CHECK(eventually([&] {
    status = run_cerulion({"--domain", b, "bridge", "status"});
    return status.exit_code == 0 && status.out.find("import rt" + topic + " -> " + topic + " (") != std::string::npos &&
           status.out.find(" 0 messages,") == std::string::npos;
  }, std::chrono::seconds(10)));
  INFO(status.out);
  nlohmann::json parsed;
  CHECK(eventually([&] {
    auto json = run_cerulion({"--domain", a, "bridge", "status", "--json"});
    if (json.exit_code != 0) return false;
    parsed = nlohmann::json::parse(json.out);
    for (const auto& t : parsed["bridges"][0]["topics"])
      if (t["topic"] == topic && t["direction"] == "export" && t["messages"].get<int>() > 0) return true;
    return false;
  }, std::chrono::seconds(10)));
  CHECK(parsed["domain"] == a);
  REQUIRE(parsed["bridges"].size() == 1);
  CHECK(parsed["bridges"][0]["direction"] == "export");
  // topic info names the bridge that imported the topic, with what it carried and lost.
  auto info = run_cerulion({"--domain", b, "topic", "info", topic});
  CHECK(info.out.find("bridged:") != std::string::npos);
  CHECK(info.out.find("imported from DDS rt" + topic + " (std_msgs::msg::dds_::UInt8MultiArray_) by bridge " +
                      std::to_string(in.pid())) != std::string::npos);

  // SIGINT stops it, with its summary, exit 0; SIGTERM too, exit 143.
  out.signal(SIGINT);
  auto stopped = out.wait(std::chrono::seconds(20));
  CHECK_FALSE(stopped.timed_out);
  CHECK(stopped.exit_code == 0);
  CHECK(stopped.err.find("export " + topic) != std::string::npos);
  in.signal(SIGTERM);
  auto terminated = in.wait(std::chrono::seconds(20));
  CHECK_FALSE(terminated.timed_out);
  CHECK(terminated.exit_code == 143);
  // A bridge that stopped removes its status file.
  CHECK(run_cerulion({"--domain", b, "bridge", "status"}).exit_code == 1);
}

TEST_CASE("A bridge killed with -9 and started again resumes carrying", "[bridge][cli]") {
  const std::string a = unique_domain("clia"), b = unique_domain("clib"), topic = unique_topic("restart");
  const std::uint32_t dds = test_dds_domain();
  const auto fastdds_before = fastdds_shm_files();
  BackgroundProcess out(bridge_args(a, dds, {topic, "--export"}));
  {
    BackgroundProcess in(bridge_args(b, dds, {topic, "--import"}));
    REQUIRE(carried(a, b, topic));
    in.signal(SIGKILL);
    (void)in.wait(std::chrono::seconds(10));
  }
  // Its status file named a dead process: status says no bridge runs there.
  auto none = run_cerulion({"--domain", b, "bridge", "status"});
  CHECK(none.exit_code == 1);
  CHECK(none.err == "cerulion: no bridge is running in domain '" + b + "'\n");
  BackgroundProcess again(bridge_args(b, dds, {topic, "--import"}));
  CHECK(carried(a, b, topic));
  // The killed bridge's Fast DDS segment stays in /dev/shm (Fast DDS does not reclaim it): remove it.
  remove_abandoned_fastdds_files(fastdds_before);
}

TEST_CASE("Bad bridge input gets one clear line and exit 2", "[bridge][cli][usage]") {
  const std::vector<std::vector<std::string>> mistakes = {
      {"bridge"},                                  // nothing to bridge
      {"bridge", "-a", "--dds-domain", "233"},     // out of range
      {"bridge", "-a", "--dds-domain", "-1"},
      {"bridge", "-a", "--dds-domain", "seven"},
      {"bridge", "-e", "("},                       // not a regular expression
      {"bridge", "-a", "-x", "[z-a]"},
      {"bridge", "-a", "--export", "--import"},    // one direction
      {"bridge", "-a", "--depth", "0"},
      {"bridge", "-a", "--no-such-option"},
      {"bridge", "/a/../b"},                       // escapes its namespace
      {"bridge", "status", "--bogus"},
  };
  for (const auto& args : mistakes) {
    std::string line;
    for (const auto& w : args) line += w + " ";
    INFO("cerulion " << line);
    auto r = run_cerulion(args, {}, std::chrono::seconds(30));
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK(r.err.rfind("cerulion: ", 0) == 0);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
  auto none = run_cerulion({"--domain", unique_domain("nobridge"), "bridge", "status"});
  CHECK(none.exit_code == 1);
  CHECK(std::count(none.err.begin(), none.err.end(), '\n') == 1);
}

TEST_CASE("Over UDP only, as between two machines, 16 MiB messages arrive whole", "[bridge][cli][udp]") {
  const std::string a = unique_domain("udpa"), b = unique_domain("udpb"), topic = unique_topic("udp");
  const std::uint32_t dds = test_dds_domain();
  BackgroundProcess out(bridge_args(a, dds, {topic, "--export", "--no-shared-memory"}));
  BackgroundProcess in(bridge_args(b, dds, {topic, "--import", "--no-shared-memory"}));
  // 16 MiB messages of a counter pattern, twice a second, until the far side has three of them.
  BackgroundProcess pub(
      {cerulion_binary(), "--domain", a, "pub", topic, "--size", "16MiB", "--fill", "counter", "-r", "2"});
  SubscriberOptions so;
  so.topic.domain = b;
  auto sub = Subscriber::create(topic, so);
  REQUIRE(sub.ok());
  int whole = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (whole < 3 && std::chrono::steady_clock::now() < deadline) {
    auto got = sub->receive(std::chrono::seconds(5));
    if (!got.ok()) continue;
    REQUIRE(got->size() == std::size_t{16} << 20);
    // A counter fill is the message's number (8 bytes) repeated: every byte of every fragment
    // must be where it belongs.
    const auto* d = reinterpret_cast<const unsigned char*>(got->data().data());
    bool whole_pattern = true;
    for (std::size_t i = 8; i < got->size(); ++i)
      if (d[i] != d[i % 8]) whole_pattern = false;
    CHECK(whole_pattern);
    ++whole;
  }
  CHECK(whole == 3);
}

TEST_CASE("A bridge whose stderr reader went away goes on carrying and stops cleanly", "[bridge][cli]") {
  const std::string a = unique_domain("clsa"), b = unique_domain("clsb"), topic = unique_topic("closed_stderr");
  const std::uint32_t dds = test_dds_domain();
  // The exporting bridge's stderr reader leaves after the start line (as `2>&1 | head -1` does);
  // the bridge runs under its own pid, for the signal below.
  BackgroundProcess out(redirected(bridge_args(a, dds, {"-a", "--export"}), "2> >(head -1 >/dev/null)"));
  BackgroundProcess in(bridge_args(b, dds, {"-a", "--import"}));
  REQUIRE(carried(a, b, topic));
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // progress lines into the closed pipe
  REQUIRE(carried(a, b, topic));
  out.signal(SIGTERM);
  auto done = out.wait(std::chrono::seconds(20));
  CHECK_FALSE(done.timed_out);
  CHECK(done.killed_by == 0);
  CHECK(done.exit_code == 128 + SIGTERM);
}

TEST_CASE("Bridges started with their standard fds closed carry a topic and hold /dev/null there, not a socket",
          "[bridge][cli][stdio]") {
  const std::string a = unique_domain("clca"), b = unique_domain("clcb"), topic = unique_topic("closed_stdio");
  const std::uint32_t dds = test_dds_domain();
  // One with stderr closed, the other with all three.
  BackgroundProcess out(redirected(bridge_args(a, dds, {"-a", "--export"}), "2>&-"));
  BackgroundProcess in(with_stdio_closed(bridge_args(b, dds, {"-a", "--import"})));
  REQUIRE(carried(a, b, topic));
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // progress lines said
  REQUIRE(carried(a, b, topic));
  CHECK(standard_fds(out.pid())[2] == "/dev/null");
  CHECK(standard_fds(in.pid()) == std::vector<std::string>(3, "/dev/null"));
  for (auto* bridge : {&out, &in}) {
    bridge->signal(SIGINT);
    auto done = bridge->wait(std::chrono::seconds(20));
    CHECK_FALSE(done.timed_out);
    CHECK(done.killed_by == 0);
    CHECK(done.exit_code == 0);
  }
}
