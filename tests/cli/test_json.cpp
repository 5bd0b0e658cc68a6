// SPDX-License-Identifier: Apache-2.0
// One convention for --json (docs/json.md): a summary is one JSON object on one line, a stream one
// object per line; keys are snake_case; something not there is null and an empty list is [].

#include <catch2/catch.hpp>

#include <ctime>
#include <regex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cerulion/recorder/writer.hpp"
#include "process.hpp"
#include "temp_dir.hpp"

using namespace cerulion::test;
using nlohmann::json;

namespace {

// Keys of `value` at any depth, but not inside "metadata" (a file's or a channel's own keys).
void check_keys(const json& value, const std::string& where) {
  static const std::regex snake("^[a-z][a-z0-9_]*$");
  if (value.is_array()) {
    for (const auto& item : value) check_keys(item, where + "[]");
  } else if (value.is_object()) {
    for (const auto& [key, item] : value.items()) {
      INFO(where << "." << key);
      CHECK(std::regex_match(key, snake));
      if (key != "metadata") check_keys(item, where + "." + key);
    }
  }
}

// The single JSON object of a summary command's stdout, checked to stand on one line.
json one_object(const ProcessResult& r) {
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  REQUIRE(!r.out.empty());
  CHECK(r.out.back() == '\n');
  CHECK(r.out.find('\n') == r.out.size() - 1);
  const json j = json::parse(r.out);
  REQUIRE(j.is_object());
  check_keys(j, "");
  return j;
}

std::string small_recording() {
  const std::string path = fresh_temp_path("json.mcap");
  auto w = cerulion::recorder::Writer::create(path);
  REQUIRE(w.ok());
  auto channel = w->add_channel("/json/one", "x-cerulion-bytes");
  REQUIRE(channel.ok());
  const std::byte payload[2] = {std::byte{'h'}, std::byte{'i'}};
  REQUIRE(w->write(*channel, 0, 1'000, 1'000, payload).ok());
  REQUIRE(w->write(*channel, 1, 2'000, 2'000, payload).ok());
  REQUIRE(w->close().ok());
  return path;
}

}  // namespace

TEST_CASE("A listing's --json prints one object on one line with empty lists when nothing is there", "[json]") {
  const std::string domain = unique_domain("json_empty");
  const json topics = one_object(run_cerulion({"--domain", domain, "topic", "list", "--json"}));
  CHECK(topics["domain"] == domain);
  CHECK(topics["topics"] == json::array());
  const json clean = one_object(run_cerulion({"--domain", domain, "clean", "--dry-run", "--json"}));
  CHECK(clean["segments"] == json::array());
  CHECK(clean["flashback_stores"] == json::array());
}

TEST_CASE("info, recover and play --json print one object on one line, times named by their clock", "[json]") {
  const std::string file = small_recording();
  const json info = one_object(run_cerulion({"info", "--json", file}));
  CHECK(info["start_log_time_ns"] == 1'000);
  CHECK(info["end_log_time_ns"] == 2'000);
  REQUIRE(info["channels"].size() == 1);
  CHECK(info["channels"][0]["schema"].is_null());  // raw bytes: no schema

  const json recovered = one_object(run_cerulion({"recover", file, "-o", fresh_temp_path("out.mcap"), "--json"}));
  CHECK(recovered["messages"] == 2);

  const std::string domain = unique_domain("json_play");
  const json played = one_object(run_cerulion({"--domain", domain, "play", file, "--json"}));
  CHECK(played["messages_published"] == 2);
}

TEST_CASE("A topic that never had a message says null for its last publish time", "[json]") {
  const std::string domain = unique_domain("json_topic");
  const std::string topic = unique_topic("json_quiet");
  BackgroundProcess echo({cerulion_binary(), "--domain", domain, "echo", topic, "--timeout", "20"});
  json info;
  REQUIRE(eventually([&] {
    auto r = run_cerulion({"--domain", domain, "topic", "info", topic, "--json"});
    if (r.exit_code != 0) return false;
    info = one_object(r);
    return true;
  }));
  CHECK(info["published"] == 0);
  CHECK(info["last_publish_realtime_ns"].is_null());
}

TEST_CASE("Echo --json gives a message's publish time on both clocks, each key naming its own", "[json][echo]") {
  const std::string domain = unique_domain("json_clocks");
  const std::string topic = unique_topic("json_clocks");
  auto now_ns = [](clockid_t clock) {
    timespec ts{};
    ::clock_gettime(clock, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<std::uint64_t>(ts.tv_nsec);
  };
  const std::uint64_t real_before = now_ns(CLOCK_REALTIME), mono_before = now_ns(CLOCK_MONOTONIC);
  BackgroundProcess echo({cerulion_binary(), "--domain", domain, "echo", topic, "--json", "-n", "1", "--timeout", "20"});
  REQUIRE(run_cerulion({"--domain", domain, "pub", topic, "hi", "--once", "--wait-subscribers", "1", "--timeout", "20"})
              .exit_code == 0);
  auto echoed = echo.wait();
  const std::uint64_t real_after = now_ns(CLOCK_REALTIME), mono_after = now_ns(CLOCK_MONOTONIC);
  REQUIRE(echoed.exit_code == 0);
  const json line = json::parse(echoed.out);
  check_keys(line, "");
  CHECK(line["publish_realtime_ns"].get<std::uint64_t>() >= real_before);
  CHECK(line["publish_realtime_ns"].get<std::uint64_t>() <= real_after);
  CHECK(line["publish_monotonic_ns"].get<std::uint64_t>() >= mono_before);
  CHECK(line["publish_monotonic_ns"].get<std::uint64_t>() <= line["receive_monotonic_ns"].get<std::uint64_t>());
  CHECK(line["receive_monotonic_ns"].get<std::uint64_t>() <= mono_after);
}
