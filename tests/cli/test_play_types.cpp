// SPDX-License-Identifier: Apache-2.0
// `cerulion play` restores each recorded topic's type: a channel's message encoding and schema are
// declared by the topic's publisher, a raw channel declares nothing, an encoding cerulion does not
// know plays as raw bytes with one warning, and a topic of another type refuses in one line.

#include <catch2/catch.hpp>

#include "cerulion/core/discovery.hpp"
#include "cerulion/core/publisher.hpp"
#include "cerulion/core/subscriber.hpp"
#include "cerulion/recorder/profile.hpp"
#include "cerulion/recorder/writer.hpp"
#include "process.hpp"
#include "test_record_helpers.hpp"
#include "topic_types.hpp"

using namespace cerulion::test;
using namespace std::chrono_literals;
namespace recorder = cerulion::recorder;
namespace profile = cerulion::recorder::profile;

namespace {

// A file with one channel per (topic, type), three messages each.
std::string write_typed_recording(const std::vector<std::pair<std::string, cerulion::TopicType>>& channels) {
  const auto file = record_temp_path("typed.mcap");
  auto w = recorder::Writer::create(file);
  REQUIRE(w.ok());
  profile::SchemaIds schemas;
  std::vector<std::uint16_t> ids;
  for (const auto& [topic, type] : channels) {
    const auto channel_type = profile::channel_type(type);
    auto schema = profile::schema_id(*w, schemas, channel_type.schema);
    REQUIRE(schema.ok());
    auto ch = w->add_channel(topic, channel_type.message_encoding, *schema);
    REQUIRE(ch.ok());
    ids.push_back(*ch);
  }
  const std::string json = R"({"x":1})";
  const std::span<const std::byte> payload(reinterpret_cast<const std::byte*>(json.data()), json.size());
  for (std::uint32_t i = 0; i < 3; ++i) {
    for (auto id : ids) REQUIRE(w->write(id, i, 1000 + i, 1000 + i, payload).ok());
  }
  REQUIRE(w->close().ok());
  return file;
}

// A tap on `topic`, so that the topic outlives play (the last participant to leave removes it).
cerulion::Subscriber hold(const std::string& topic) {
  cerulion::SubscriberOptions options;
  options.role = cerulion::Role::Tap;
  auto tap = cerulion::Subscriber::create(topic, options);
  REQUIRE(tap.ok());
  return std::move(*tap);
}

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("play declares each recorded topic's type: a played JSON topic carries its schema", "[cli][play][types]") {
  const auto imu = unique_topic("play_type_imu");
  const auto raw = unique_topic("play_type_raw");
  const auto ros = unique_topic("play_type_cdr");
  const cerulion::TopicType cdr{"cdr", {"geometry_msgs/msg/Point", "ros2msg", "float64 x\nfloat64 y\nfloat64 z\n"}};
  const auto file = write_typed_recording({{imu, imu_json_type()}, {raw, {}}, {ros, cdr}});
  auto imu_tap = hold(imu);
  auto raw_tap = hold(raw);
  auto ros_tap = hold(ros);
  auto played = run_cerulion({"play", file}, {}, 20s);
  INFO(played.err);
  REQUIRE(played.exit_code == 0);
  CHECK(played.err.find("warning") == std::string::npos);
  auto imu_info = cerulion::inspect_topic(imu);
  REQUIRE(imu_info.ok());
  CHECK(imu_info->type_declared);
  CHECK(imu_info->type == imu_json_type());
  auto ros_info = cerulion::inspect_topic(ros);
  REQUIRE(ros_info.ok());
  CHECK(ros_info->type == cdr);
  auto raw_info = cerulion::inspect_topic(raw);
  REQUIRE(raw_info.ok());
  CHECK_FALSE(raw_info->type_declared);
}

TEST_CASE("play into an existing topic of another type says so in one line and exits 1", "[cli][play][types]") {
  const auto topic = unique_topic("play_type_clash");
  const auto file = write_typed_recording({{topic, imu_json_type()}});
  cerulion::PublisherOptions options;
  options.topic.type = pose_json_type();
  auto other = cerulion::Publisher::create(topic, options);
  REQUIRE(other.ok());
  auto played = run_cerulion({"play", file}, {}, 20s);
  CHECK(played.exit_code == 1);
  CHECK(text_lines(played.err).size() == 1);
  CHECK(played.err.find(topic) != std::string::npos);
  CHECK(played.err.find("Pose") != std::string::npos);
  CHECK(played.err.find("Imu") != std::string::npos);
}

TEST_CASE("play replays a channel whose encoding cerulion does not know as raw bytes, with one warning",
          "[cli][play][types]") {
  const auto topic = unique_topic("play_type_foreign");
  const auto file = write_typed_recording({{topic, cerulion::TopicType{"mystery-encoding", {}}}});
  auto tap = hold(topic);
  auto played = run_cerulion({"play", file}, {}, 20s);
  INFO(played.err);
  REQUIRE(played.exit_code == 0);
  CHECK(count_of(played.err, "warning: '" + topic + "'") == 1);
  CHECK(played.err.find("played as raw bytes") != std::string::npos);
  CHECK(played.err.find("played 3 messages on 1 topic") != std::string::npos);
  auto info = cerulion::inspect_topic(topic);
  REQUIRE(info.ok());
  CHECK_FALSE(info->type_declared);
}
