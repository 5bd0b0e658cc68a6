// SPDX-License-Identifier: Apache-2.0
// `clean` removes what dead processes left behind, and nothing a live process uses.

#include <csignal>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "everyday_helpers.hpp"
#include "process.hpp"

using namespace cerulion::test;
using nlohmann::json;

namespace {

/// Leaves `topic` behind as a kill -9'd publisher would: a segment nobody alive uses.
void leave_abandoned_topic(const std::string& domain, const std::string& topic) {
  BackgroundProcess pub({cerulion_binary(), "--domain", domain, "pub", topic, "x", "-r", "100"});
  REQUIRE(eventually([&] {
    auto snapshot = topic_snapshot(topic, domain);
    return !snapshot.is_null() && snapshot["published"].get<int>() > 0;
  }));
  pub.signal(SIGKILL);
  REQUIRE(pub.wait().exit_code == 128 + SIGKILL);
  REQUIRE(count_shm_entries(shm_file(topic, domain)) == 1);
}

}  // namespace

TEST_CASE("Clean dry run finds a segment left by a killed process and clean removes it", "[cli][clean]") {
  const std::string domain = unique_domain("clean_killed");
  const std::string topic = unique_topic("killed");
  leave_abandoned_topic(domain, topic);

  auto listed = json::parse(run_cerulion(in_domain(domain, {"topic", "list", "--json"})).out);
  REQUIRE(listed["topics"].size() == 1);
  CHECK(listed["topics"][0]["publishers"]["count"] == 0);  // the dead one is not counted...
  CHECK(listed["topics"][0]["publishers"]["pids"][0]["alive"] == false);  // ...but shown, marked dead

  auto dry = run_cerulion(in_domain(domain, {"clean", "--dry-run"}));
  CHECK(dry.exit_code == 0);
  CHECK(dry.out.rfind("would remove " + topic + " (", 0) == 0);
  CHECK(count_shm_entries(shm_file(topic, domain)) == 1);

  auto cleaned = run_cerulion(in_domain(domain, {"clean"}));
  CHECK(cleaned.exit_code == 0);
  CHECK(cleaned.out.rfind("removed " + topic + " (", 0) == 0);
  CHECK(count_shm_entries(shm_file(topic, domain)) == 0);

  auto again = run_cerulion(in_domain(domain, {"clean"}));
  CHECK(again.exit_code == 0);
  CHECK(again.out == "nothing to clean in domain '" + domain + "'\n");
}

TEST_CASE("Clean never touches a topic with a live participant unless forced", "[cli][clean]") {
  const std::string domain = unique_domain("clean_live");
  const std::string live_topic = unique_topic("live");
  const std::string dead_topic = unique_topic("dead");
  BackgroundProcess echo({cerulion_binary(), "--domain", domain, "echo", live_topic});
  REQUIRE(eventually([&] { return live_readers(topic_snapshot(live_topic, domain), "subscriber") == 1; }));
  leave_abandoned_topic(domain, dead_topic);

  auto cleaned = run_cerulion(in_domain(domain, {"clean", "--json"}));
  REQUIRE(cleaned.exit_code == 0);
  auto report = json::parse(cleaned.out);
  REQUIRE(report["segments"].size() == 1);
  CHECK(report["segments"][0]["topic"] == dead_topic);
  CHECK(report["segments"][0]["removed"] == true);
  CHECK(count_shm_entries(shm_file(dead_topic, domain)) == 0);
  CHECK(count_shm_entries(shm_file(live_topic, domain)) == 1);

  auto forced = run_cerulion(in_domain(domain, {"clean", "--force", live_topic}));
  CHECK(forced.exit_code == 0);
  CHECK(forced.out.rfind("removed " + live_topic + " (", 0) == 0);
  CHECK(count_shm_entries(shm_file(live_topic, domain)) == 0);
  echo.signal(SIGINT);
  echo.wait();
}

TEST_CASE("Clean force of an unknown topic exits one", "[cli][clean]") {
  const std::string domain = unique_domain("clean_unknown");
  auto result = run_cerulion(in_domain(domain, {"clean", "--force", "/no/such/topic"}));
  CHECK(result.exit_code == 1);
  CHECK(result.err == "cerulion: no topic '/no/such/topic' in domain '" + domain + "'\n");
}

TEST_CASE("The last participant's normal exit unlinks the segment", "[cli][clean]") {
  const std::string topic = unique_topic("normal_exit");
  BackgroundProcess echo({cerulion_binary(), "echo", topic, "-n", "1"});
  REQUIRE(eventually([&] { return count_shm_entries(shm_file(topic)) == 1; }));
  REQUIRE(run_cerulion({"pub", topic, "bye", "--once", "--wait-subscribers", "1", "--timeout", "20"}).exit_code == 0);
  REQUIRE(echo.wait().exit_code == 0);
  CHECK(count_shm_entries(shm_file(topic)) == 0);
}

TEST_CASE("clean calls a zero-filled segment never initialized and a random-filled one not a cerulion segment",
          "[cli][clean]") {
  const std::string domain = unique_domain("clean_garbage");
  const std::string zeros = unique_topic("zeros");
  const std::string short_zeros = unique_topic("short_zeros");
  const std::string garbage = unique_topic("garbage");
  auto fill = [&](const std::string& topic, std::size_t size, bool random) {
    std::string bytes(size, '\0');
    std::uint32_t x = 2463534242u;  // xorshift: garbage that never starts with the magic
    for (auto& c : bytes) {
      if (!random) break;
      x ^= x << 13;
      x ^= x >> 17;
      x ^= x << 5;
      c = static_cast<char>(x);
    }
    std::ofstream("/dev/shm/" + shm_file(topic, domain), std::ios::binary) << bytes;
  };
  fill(zeros, 4096, false);
  fill(short_zeros, 16, false);
  fill(garbage, 4096, true);
  auto dry = run_cerulion(in_domain(domain, {"clean", "--dry-run", "--json"}));
  REQUIRE(dry.exit_code == 0);
  std::map<std::string, std::string> reasons;
  const json listed = json::parse(dry.out);  // named: a range-for over a temporary's member dangles
  for (const auto& s : listed["segments"]) reasons[s["topic"]] = s["reason"];
  REQUIRE(reasons.size() == 3);
  CHECK(reasons[zeros].find("never initialized") != std::string::npos);
  CHECK(reasons[short_zeros].find("never initialized") != std::string::npos);
  CHECK(reasons[garbage].find("not a cerulion segment") != std::string::npos);
  for (const auto& [topic, reason] : reasons) {
    INFO(reason);
    CHECK(reason.find("cerulion clean") == std::string::npos);  // no advice to run what is running
  }
  auto cleaned = run_cerulion(in_domain(domain, {"clean"}));
  CHECK(cleaned.exit_code == 0);
  for (const auto& topic : {zeros, short_zeros, garbage}) CHECK(count_shm_entries(shm_file(topic, domain)) == 0);
}

TEST_CASE("Clean removes the bell of a killed wait set and says so in one line", "[cli][clean][wait_set]") {
  const std::string domain = unique_domain("clean_bell");
  // A pong waiting through a set of three sleeps on its bell once it has nothing to do.
  BackgroundProcess pong({cerulion_binary(), "--domain", domain, "pong", "--wait", "block", "--wait-set", "3"});
  const std::string died = "a wait set's bell whose process died (" + std::to_string(pong.pid()) + ")";
  REQUIRE(eventually([&] {  // its three topics are there, and the set waits on them
    auto listed = run_cerulion(in_domain(domain, {"topic", "list", "--json"}));
    return listed.exit_code == 0 && json::parse(listed.out)["topics"].size() >= 3;
  }));
  std::this_thread::sleep_for(std::chrono::seconds(1));  // asleep by now: the bell is made
  pong.signal(SIGKILL);
  REQUIRE(pong.wait().exit_code == 128 + SIGKILL);

  auto dry = run_cerulion(in_domain(domain, {"clean", "--dry-run"}));
  CHECK(dry.exit_code == 0);
  INFO("dry run: " << dry.out);
  CHECK(dry.out.find(": " + died + "\n") != std::string::npos);
  CHECK(dry.out.find("would remove /cerulion-bell.") != std::string::npos);

  auto cleaned = run_cerulion(in_domain(domain, {"clean"}));
  CHECK(cleaned.exit_code == 0);
  INFO("clean: " << cleaned.out);
  CHECK(cleaned.out.find("removed /cerulion-bell.") != std::string::npos);
  CHECK(cleaned.out.find(": " + died + "\n") != std::string::npos);

  auto again = run_cerulion(in_domain(domain, {"clean"}));
  CHECK(again.out == "nothing to clean in domain '" + domain + "'\n");
}

TEST_CASE("Clean --all-domains finds what dead processes left in every domain, a killed verify's private one too",
          "[cli][clean]") {
  // A dry run only: a real one would clean what other tests running beside this one left on purpose.
  const std::string verify_like = "verify-" + unique_domain("alldomains");
  const std::string other = unique_domain("alldomains");
  const std::string topic = unique_topic("left");
  leave_abandoned_topic(verify_like, topic);
  leave_abandoned_topic(other, topic);
  auto dry = run_cerulion({"clean", "--all-domains", "--dry-run", "--json"});
  INFO(dry.out << dry.err);
  CHECK(dry.exit_code == 0);
  const auto report = json::parse(dry.out);
  std::map<std::string, json> by_domain;
  for (const auto& d : report["domains"]) by_domain[d["domain"].get<std::string>()] = d;
  for (const auto& domain : {verify_like, other}) {
    INFO(domain);
    REQUIRE(by_domain.count(domain) == 1);
    REQUIRE(by_domain[domain]["segments"].size() == 1);
    CHECK(by_domain[domain]["segments"][0]["topic"] == topic);
    CHECK(by_domain[domain]["segments"][0]["removed"] == false);
  }
  auto text = run_cerulion({"clean", "--all-domains", "--dry-run"});
  CHECK(text.out.find("would remove " + topic + " (/cerulion." + other + ":") != std::string::npos);
  CHECK(run_cerulion({"clean", "--all-domains", "--force", topic}).exit_code == 2);
  for (const auto& domain : {verify_like, other}) CHECK(run_cerulion(in_domain(domain, {"clean"})).exit_code == 0);
}
