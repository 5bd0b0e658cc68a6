// SPDX-License-Identifier: Apache-2.0
// `cerulion view` spoken to by the official client library, npm @foxglove/ws-protocol (pinned in
// tests/view/npm/package.json, installed into the build tree the way the recorder tests install
// @mcap/core). Skips, with a clear message, when node or the npm registry is not there.

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "cerulion/core/base64.hpp"

#include "npm_packages.hpp"
#include "protobuf_descriptors.hpp"
#include "temp_dir.hpp"
#include "topic_types.hpp"
#include "view_helpers.hpp"

using namespace viewtest;
namespace fs = std::filesystem;

namespace {

std::string big_message(int k) {
  std::string bytes(1u << 20, '\0');
  bytes[0] = static_cast<char>(k);
  for (std::size_t j = 1; j < bytes.size(); ++j) bytes[j] = static_cast<char>((j * 31 + static_cast<std::size_t>(k)) & 0xff);
  return bytes;
}

}  // namespace

TEST_CASE("The official client gets the channels, 1,000 json messages, 1 MiB messages byte for byte, and a topic coming and going",
          "[view][npm]") {
  const fs::path npm = fs::path(CERULION_TEST_BINARY_DIR) / "npm";
  if (!test::node_and_npm()) {
    WARN("skipped: node/npm not installed");
    return;
  }
  if (!test::npm_install(CERULION_NPM_TEST_DIR, npm, {"package.json", "official_client.mjs"}, {"@foxglove/ws-protocol", "ws"})) {
    WARN("skipped: npm registry unreachable (could not install @foxglove/ws-protocol; see " << (npm / "npm-install.log").string() << ")");
    return;
  }
  const std::string domain = test::unique_domain("viewnpm");
  const std::uint16_t port = free_port();
  test::BackgroundProcess view({test::cerulion_binary(), "--domain", domain, "view", "--port", std::to_string(port)});

  const std::string prefix = test::unique_topic("npm");
  const json topics = {{"json", prefix + "/json"}, {"pb", prefix + "/pb"}, {"cdr", prefix + "/cdr"},
                       {"raw", prefix + "/raw"}, {"big", prefix + "/big"}, {"later", prefix + "/later"}};
  const fs::path dir = test::fresh_temp_path("npm-client");
  fs::create_directories(dir);
  std::ofstream(dir / "topics.json") << topics.dump();

  const std::string descriptor = test::pb::imu_descriptor_set();
  const std::string msg = "float64 x\nfloat64 y\n";
  auto pj = publisher_in(domain, topics["json"], test::imu_json_type());
  auto pp = publisher_in(domain, topics["pb"], TopicType{"protobuf", {"fb.Imu", "protobuf", descriptor}});
  auto pc = publisher_in(domain, topics["cdr"], TopicType{"cdr", {"geometry_msgs/msg/Point", "ros2msg", msg}});
  auto pr = publisher_in(domain, topics["raw"], std::nullopt);
  auto pb = publisher_in(domain, topics["big"], std::nullopt);
  REQUIRE(pj.publish_text(R"({"i":-1})").ok());
  REQUIRE(pp.publish_text("").ok());
  REQUIRE(pc.publish_text(std::string("\x00\x01\x00\x00", 4)).ok());
  REQUIRE(pr.publish_text("raw").ok());
  REQUIRE(pb.publish_text(std::string(1, '\xff')).ok());

  test::BackgroundProcess client({"node", (npm / "official_client.mjs").string(), "ws://127.0.0.1:" + std::to_string(port), dir.string()});
  // Warm-up messages until the client has one of each: then the server has its subscriptions.
  const std::string warm_big = std::string(1, '\xff');
  (void)test::eventually([&] {
    if (fs::exists(dir / "subscribed") || !client.running()) return true;
    (void)pj.publish_text(R"({"i":-1})");
    (void)pb.publish_text(warm_big);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    return false;
  }, std::chrono::seconds(60));
  if (!fs::exists(dir / "subscribed")) {
    client.signal(SIGTERM);
    const auto r = client.wait(std::chrono::seconds(10));
    FAIL("the client never had its warm-up messages; it saw: " << r.out << r.err);
  }
  const auto tap_read = [&](const std::string& topic, std::uint64_t n) { REQUIRE(tap_has_read(topic, domain, n)); };
  const auto published = [&](const std::string& topic) { return inspect_topic(topic, domain)->published; };
  const std::uint64_t json_before = published(topics["json"]), big_before = published(topics["big"]);
  for (int i = 0; i < 1000; ++i) {
    REQUIRE(pj.publish_text(json{{"i", i}, {"x", i * 0.5}}.dump()).ok());
    if (i % 8 == 7) tap_read(topics["json"], json_before + 1 + i);
  }
  for (int k = 0; k < 10; ++k) {
    REQUIRE(pb.publish_text(big_message(k)).ok());
    tap_read(topics["big"], big_before + 1 + k);
  }
  {
    auto later = publisher_in(domain, topics["later"], test::pose_json_type());
    REQUIRE(later.publish_text(R"({"y":1})").ok());
    REQUIRE(test::eventually([&] { return fs::exists(dir / "later-advertised") || !client.running(); }, std::chrono::seconds(30)));
  }
  const auto seen = client.wait(std::chrono::seconds(120));
  INFO(seen.out << seen.err);
  REQUIRE(seen.exit_code == 0);
  const auto got = json::parse(seen.out);
  CHECK(got["serverInfo"]["name"] == "cerulion view");
  const auto& channels = got["channels"];
  CHECK(channels[topics["json"].get<std::string>()]["encoding"] == "json");
  CHECK(channels[topics["json"].get<std::string>()]["schemaEncoding"] == "jsonschema");
  CHECK(channels[topics["json"].get<std::string>()]["schema"] == test::kImuJsonSchema);
  CHECK(channels[topics["pb"].get<std::string>()]["encoding"] == "protobuf");
  CHECK(channels[topics["pb"].get<std::string>()]["schemaName"] == "fb.Imu");
  CHECK(channels[topics["pb"].get<std::string>()]["schema"] ==
        base64_encode(std::as_bytes(std::span(descriptor.data(), descriptor.size()))));
  CHECK(channels[topics["cdr"].get<std::string>()]["encoding"] == "cdr");
  CHECK(channels[topics["cdr"].get<std::string>()]["schemaEncoding"] == "ros2msg");
  CHECK(channels[topics["cdr"].get<std::string>()]["schema"] == msg);
  CHECK(channels[topics["raw"].get<std::string>()]["encoding"] == "x-cerulion-bytes");
  CHECK(got["json_count"] == 1000);
  CHECK(got["json_in_order"] == true);
  CHECK(got["big_count"] == 10);
  CHECK(got["big_exact"] == true);
  CHECK(got["later_advertised"] == true);
  CHECK(got["later_unadvertised"] == true);

  view.signal(SIGTERM);
  const auto ended = view.wait(std::chrono::seconds(20));
  INFO(ended.err);
  CHECK_FALSE(ended.timed_out);
  CHECK(ended.err.find("served 1 client connection") != std::string::npos);
}
