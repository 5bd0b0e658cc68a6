// SPDX-License-Identifier: Apache-2.0
// `topic list | info | hz` through the real binary.

#include <csignal>
#include <string>
#include <sys/stat.h>
#include <vector>

#include <catch2/catch.hpp>

#include "everyday_helpers.hpp"
#include "process.hpp"

using namespace cerulion::test;
using nlohmann::json;

namespace {

const json* find_topic(const json& listing, const std::string& name) {
  for (const auto& topic : listing["topics"]) {
    if (topic["name"] == name) return &topic;
  }
  return nullptr;
}

std::vector<std::uint32_t> pids_of(const json& participants) {
  std::vector<std::uint32_t> pids;
  for (const auto& p : participants["pids"]) pids.push_back(p["pid"].get<std::uint32_t>());
  return pids;
}

}  // namespace

TEST_CASE("Topic list JSON shows the live participants", "[cli][topic]") {
  const std::string domain = unique_domain("topic_list");
  const std::string topic = unique_topic("list");
  BackgroundProcess echo({cerulion_binary(), "--domain", domain, "echo", topic});
  BackgroundProcess pub(
      {cerulion_binary(), "--domain", domain, "pub", topic, "x", "-r", "100", "--wait-subscribers", "1"});
  json listing;
  REQUIRE(eventually([&] {
    auto result = run_cerulion(in_domain(domain, {"topic", "list", "--json"}));
    if (result.exit_code != 0) return false;
    listing = json::parse(result.out);
    const json* entry = find_topic(listing, topic);
    return entry != nullptr && (*entry)["published"].get<int>() > 0;
  }));
  const json& entry = *find_topic(listing, topic);
  CHECK(listing["domain"] == domain);
  CHECK(listing["topics"].size() == 1);
  CHECK(entry["publishers"]["count"] == 1);
  CHECK(pids_of(entry["publishers"]) == std::vector<std::uint32_t>{static_cast<std::uint32_t>(pub.pid())});
  CHECK(entry["subscribers"]["count"] == 1);
  CHECK(pids_of(entry["subscribers"]) == std::vector<std::uint32_t>{static_cast<std::uint32_t>(echo.pid())});
  CHECK(entry["taps"]["count"] == 0);
  CHECK(entry["mode"] == "lockstep");
  CHECK(entry["depth"].get<int>() > 0);

  auto text = run_cerulion(in_domain(domain, {"topic", "list"}));
  CHECK(text.exit_code == 0);
  CHECK(text.out.find(topic) != std::string::npos);
  CHECK(text.out.find("1 (" + std::to_string(pub.pid()) + ")") != std::string::npos);

  pub.signal(SIGINT);
  echo.signal(SIGINT);
  CHECK(pub.wait().exit_code == 130);
  CHECK(echo.wait().exit_code == 130);
  CHECK(count_shm_entries(cerulion::segment_prefix(domain)) == 0);
}

TEST_CASE("Topic list of an empty domain says so", "[cli][topic]") {
  const std::string domain = unique_domain("topic_empty");
  auto text = run_cerulion(in_domain(domain, {"topic", "list"}));
  CHECK(text.exit_code == 0);
  CHECK(text.out == "no topics in domain '" + domain + "'\n");
  auto as_json = run_cerulion(in_domain(domain, {"topic", "list", "--json"}));
  CHECK(as_json.exit_code == 0);
  CHECK(json::parse(as_json.out)["topics"].empty());
}

TEST_CASE("Topic info shows each subscriber's position and the segment", "[cli][topic]") {
  const std::string topic = unique_topic("info");
  BackgroundProcess echo({cerulion_binary(), "echo", topic, "--delay", "30"});  // takes one, then dawdles
  REQUIRE(eventually([&] { return live_readers(topic_snapshot(topic), "subscriber") == 1; }));
  auto pub = run_cerulion({"pub", topic, "m", "-n", "4", "-r", "0", "--wait-subscribers", "1", "--timeout", "20"});
  REQUIRE(pub.exit_code == 0);
  json info;
  // The echo takes its first message when its process next runs, which on a loaded machine can
  // be after the publisher has gone: wait for that too, not just for the four to be published.
  REQUIRE(eventually([&] {
    info = topic_snapshot(topic);
    return !info.is_null() && info["published"] == 4 && info["participants"].size() == 1 &&
           info["participants"][0]["position"].get<int>() >= 1;
  }));
  CHECK(info["name"] == topic);
  CHECK(info["segment"] == "/" + shm_file(topic));
  CHECK(info["segment_bytes"].get<std::uint64_t>() >= info["resident_bytes"].get<std::uint64_t>());
  CHECK(info["resident_bytes"].get<std::uint64_t>() > 0);
  CHECK(info["creator_pid"] == echo.pid());
  CHECK(info["permissions"] == "0600");
  REQUIRE(info["participants"].size() == 1);  // the publisher has left
  const json& subscriber = info["participants"][0];
  CHECK(subscriber["role"] == "subscriber");
  CHECK(subscriber["pid"] == echo.pid());
  CHECK(subscriber["alive"] == true);
  CHECK(subscriber["lost"] == 0);
  CHECK(subscriber["position"].get<int>() >= 1);
  CHECK(subscriber["position"].get<int>() <= 4);

  auto text = run_cerulion({"topic", "info", topic});
  CHECK(text.exit_code == 0);
  CHECK(text.out.find("participants:") != std::string::npos);
  CHECK(text.out.find("subscriber") != std::string::npos);
  echo.signal(SIGINT);
  CHECK(echo.wait().exit_code == 130);
}

TEST_CASE("Topic info on an unknown topic exits one with a clear line", "[cli][topic]") {
  const std::string topic = unique_topic("unknown");
  auto result = run_cerulion({"topic", "info", topic});
  CHECK(result.exit_code == 1);
  CHECK(result.out.empty());
  CHECK(result.err == "cerulion: no topic '" + topic + "' in domain 'default' (see 'cerulion topic list')\n");
  CHECK(count_shm_entries(shm_file(topic)) == 0);  // looking never creates
}

TEST_CASE("Topic hz reports the rate as a tap that holds nobody back", "[cli][topic]") {
  const std::string topic = unique_topic("hz");
  BackgroundProcess pub({cerulion_binary(), "pub", topic, "x", "-r", "50"});
  REQUIRE(eventually([&] { return !topic_snapshot(topic).is_null(); }));
  BackgroundProcess hz({cerulion_binary(), "topic", "hz", topic, "--json", "-n", "3"});
  REQUIRE(eventually([&] { return live_readers(topic_snapshot(topic), "tap") == 1; }));
  CHECK(live_readers(topic_snapshot(topic), "subscriber") == 0);
  auto result = hz.wait();
  REQUIRE(result.exit_code == 0);
  auto reports = json_lines(result.out);
  REQUIRE(reports.size() == 3);
  const json& last = reports.back();
  CHECK(last["topic"] == topic);
  CHECK(last["window"].get<int>() > 0);
  CHECK(last["rate_hz"].get<double>() > 0);
  CHECK(last["min_period_s"].get<double>() <= last["max_period_s"].get<double>());
  pub.signal(SIGINT);
  CHECK(pub.wait().exit_code == 130);
}

TEST_CASE("topic info tells the sparse segment size ls shows from the memory du shows, in words that agree with the count",
          "[cli][topic]") {
  const std::string topic = unique_topic("info_sizes");
  BackgroundProcess echo({cerulion_binary(), "echo", topic});
  REQUIRE(eventually([&] { return live_readers(topic_snapshot(topic), "subscriber") == 1; }));
  REQUIRE(run_cerulion({"pub", topic, "m", "--once", "--wait-subscribers", "1", "--timeout", "20"}).exit_code == 0);
  REQUIRE(eventually([&] { return topic_snapshot(topic)["published"] == 1; }));
  auto text = run_cerulion({"topic", "info", topic});
  REQUIRE(text.exit_code == 0);
  CHECK(text.out.find("of address space (sparse: the size `ls -l` shows)") != std::string::npos);
  CHECK(text.out.find("of /dev/shm (what `du` shows)") != std::string::npos);
  CHECK(text.out.find("1 message,") != std::string::npos);
  CHECK(text.out.find("1 messages") == std::string::npos);
  echo.signal(SIGINT);
  (void)echo.wait();
}

TEST_CASE("A FIFO where a topic's segment should be is one line naming the topic once, for every command",
          "[cli][topic][faults]") {
  const std::string domain = unique_domain("fifo_segment");
  const std::string planted = "/dev/shm/" + shm_file("/planted", domain);
  REQUIRE(::mkfifo(planted.c_str(), 0600) == 0);
  const std::string expected = "cerulion: topic '/planted': " + planted + " is a FIFO, not a topic segment\n";
  for (std::vector<std::string> args : {std::vector<std::string>{"topic", "info", "/planted"},
                                        {"echo", "/planted", "-n", "1", "--timeout", "1"},
                                        {"pub", "/planted", "x", "--once"}}) {
    args.insert(args.begin(), {"--domain", domain});
    INFO(args[2]);
    auto r = run_cerulion(args, {}, std::chrono::seconds(20));
    CHECK(r.exit_code == 1);
    CHECK(r.err == expected);
  }
  ::unlink(planted.c_str());
}
