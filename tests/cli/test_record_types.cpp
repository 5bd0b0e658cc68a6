// SPDX-License-Identifier: Apache-2.0
// `cerulion record` of a typed topic: `info` shows its message encoding and schema, and the
// independent reader Foxglove uses (@mcap/core, via scripts/check-mcap-js.mjs) finds a json channel
// with a jsonschema schema and JSON messages. That check runs when `node` is installed and
// $CERULION_MCAP_JS_MODULES names a folder holding @mcap/core, @mcap/support and @mcap/nodejs;
// otherwise it says it skipped (nothing is downloaded by tests).

#include <catch2/catch.hpp>

#include <csignal>
#include <cstdlib>

#include <nlohmann/json.hpp>

#include "cerulion/core/publisher.hpp"
#include "everyday_helpers.hpp"
#include "process.hpp"
#include "test_record_helpers.hpp"
#include "topic_types.hpp"

using namespace cerulion::test;
using namespace std::chrono_literals;

namespace {

constexpr int kSkipped = 77;  // check-mcap-js.mjs: its modules are not there

// Records `count` messages {"x":i} of a topic typed imu_json_type() with `cerulion record`.
std::string record_json_topic(const std::string& topic, int count) {
  cerulion::PublisherOptions options;
  options.topic.type = imu_json_type();
  auto publisher = cerulion::Publisher::create(topic, options);
  REQUIRE(publisher.ok());
  auto file = record_temp_path("json.mcap");
  BackgroundProcess rec({cerulion_binary(), "record", topic, "--lockstep", "-o", file});
  REQUIRE(eventually([&] { return live_readers(topic_snapshot(topic), "subscriber") >= 1; }, 10s));
  for (int i = 0; i < count; ++i) {
    const std::string json = "{\"x\":" + std::to_string(i) + ".5}";
    REQUIRE(publisher->publish_copy(std::as_bytes(std::span(json))).ok());
  }
  REQUIRE(eventually([&] { return subscribers_caught_up(topic_snapshot(topic)); }, 10s));
  rec.signal(SIGINT);
  REQUIRE(rec.wait(20s).exit_code == 0);
  return file;
}

}  // namespace

TEST_CASE("A recording of a JSON topic shows its message encoding and schema in info", "[cli][record][types]") {
  const auto topic = unique_topic("rec_json");
  const auto file = record_json_topic(topic, 10);
  auto text = run_cerulion({"info", file});
  REQUIRE(text.exit_code == 0);
  CHECK(text.out.find("[json]  schema Imu (jsonschema)") != std::string::npos);
  auto json = run_cerulion({"info", file, "--json"});
  REQUIRE(json.exit_code == 0);
  auto j = nlohmann::json::parse(json.out);
  REQUIRE(j["channels"].size() == 1);
  CHECK(j["channels"][0]["message_encoding"] == "json");
  CHECK(j["channels"][0]["schema"]["name"] == "Imu");
  CHECK(j["channels"][0]["schema"]["encoding"] == "jsonschema");
  CHECK(j["channels"][0]["schema"]["bytes"].get<std::uint64_t>() > 0);
  CHECK(j["channels"][0]["message_count"] == 10);
}

TEST_CASE("A recording of a JSON topic reads in @mcap/core as Foxglove needs: json, jsonschema, JSON messages",
          "[cli][record][types][npm]") {
  if (std::system("command -v node > /dev/null 2>&1") != 0) {
    WARN("skipped: node is not installed");
    return;
  }
  if (!std::getenv("CERULION_MCAP_JS_MODULES")) {
    WARN("skipped: CERULION_MCAP_JS_MODULES is not set (a node_modules folder with @mcap/core, @mcap/support, "
         "@mcap/nodejs)");
    return;
  }
  const auto topic = unique_topic("rec_json_js");
  const auto file = record_json_topic(topic, 20);
  auto checked = run_process({"node", std::string(CERULION_SOURCE_DIR) + "/scripts/check-mcap-js.mjs", file}, {}, 60s);
  if (checked.exit_code == kSkipped) {
    WARN(checked.err);
    return;
  }
  INFO(checked.err << checked.out);
  REQUIRE(checked.exit_code == 0);
  auto j = nlohmann::json::parse(checked.out);
  CHECK(j["failures"].empty());
  REQUIRE(j["channels"].size() == 1);
  const auto& ch = j["channels"][0];
  CHECK(ch["topic"] == topic);
  CHECK(ch["message_encoding"] == "json");
  CHECK(ch["schema"] == "Imu");
  CHECK(ch["schema_encoding"] == "jsonschema");
  CHECK(ch["messages"] == 20);
  CHECK(ch["json_objects"] == 20);
  REQUIRE(j["schemas"].size() == 1);
  CHECK(j["schemas"][0]["object"] == true);
  CHECK(j["schemas"][0]["bytes"] == std::string(kImuJsonSchema).size());
}
