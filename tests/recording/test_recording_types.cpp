// SPDX-License-Identifier: Apache-2.0
// A recording carries each topic's type: its message encoding, and its schema as an MCAP Schema
// record (one per distinct schema); raw topics stay "x-cerulion-bytes" without a schema.

#include <catch2/catch.hpp>

#include <thread>

#include "cerulion/recorder/profile.hpp"
#include "cerulion/recorder/reader.hpp"
#include "helpers.hpp"
#include "topic_types.hpp"

using namespace cerulion;
using namespace cerulion::recording;
using namespace cerulion::test;
using namespace std::chrono_literals;
namespace profile = cerulion::recorder::profile;

namespace {

PublisherOptions typed_publisher_in(const std::string& domain, std::optional<TopicType> type) {
  PublisherOptions o = publisher_in(domain);
  o.topic.type = std::move(type);
  return o;
}

/// Records one message on each topic (created by typed publishers) and reads the file back.
recorder::FileSummary record_one_each(const std::string& domain,
                                      const std::vector<std::pair<std::string, std::optional<TopicType>>>& topics) {
  std::vector<Publisher> publishers;
  RecordingOptions o;
  o.taps.domain = domain;
  for (const auto& [topic, type] : topics) {
    auto pub = Publisher::create(topic, typed_publisher_in(domain, type));
    REQUIRE(pub.ok());
    publishers.push_back(std::move(*pub));
    o.taps.selection.topics.push_back(topic);
  }
  std::deque<recorder::ByteVector> files;
  auto rec = Recording::create(o, memory_sinks(files));
  REQUIRE(rec.ok());
  REQUIRE(rec->start().ok());
  for (auto& pub : publishers) REQUIRE(pub.publish_copy(bytes_of(R"({"x":1.5})")).ok());
  REQUIRE(eventually([&] {
    std::uint64_t n = 0;
    for (const auto& c : rec->counts()) n += c.written;
    return n == publishers.size();
  }));
  REQUIRE(rec->finish().ok());
  REQUIRE(files.size() == 1);
  auto reader = recorder::Reader::open_memory(files[0]);
  REQUIRE(reader.ok());
  CHECK(reader->problems().empty());
  return reader->summary();
}

const recorder::Channel& channel_of(const recorder::FileSummary& summary, const std::string& topic) {
  for (const auto& [id, ch] : summary.channels) if (ch.topic == topic) return ch;
  FAIL("no channel for " << topic);
  throw;
}

std::string text_of_bytes(const recorder::ByteVector& bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

}  // namespace

TEST_CASE("A recording of a JSON topic carries its schema and message encoding", "[recording][types]") {
  TestDomain domain("rec_types");
  auto summary = record_one_each(domain.name, {{"/imu", imu_json_type()}});
  const auto& ch = channel_of(summary, "/imu");
  CHECK(ch.message_encoding == "json");
  REQUIRE(ch.schema_id != 0);
  REQUIRE(summary.schemas.count(ch.schema_id) == 1);
  const auto& schema = summary.schemas.at(ch.schema_id);
  CHECK(schema.name == "Imu");
  CHECK(schema.encoding == "jsonschema");
  CHECK(text_of_bytes(schema.data) == kImuJsonSchema);
  CHECK(profile::topic_type(ch, &schema) == imu_json_type());
}

TEST_CASE("A recording of a raw topic keeps x-cerulion-bytes and no schema", "[recording][types]") {
  TestDomain domain("rec_types_raw");
  auto summary = record_one_each(domain.name, {{"/raw", std::nullopt}, {"/typed", imu_json_type()}});
  const auto& ch = channel_of(summary, "/raw");
  CHECK(ch.message_encoding == profile::kMessageEncoding);
  CHECK(ch.schema_id == 0);
  CHECK(profile::topic_type(ch, nullptr).raw());
}

TEST_CASE("Two topics with the same schema share one Schema record, another schema gets its own", "[recording][types]") {
  TestDomain domain("rec_types_shared");
  auto summary = record_one_each(domain.name,
                                 {{"/imu/a", imu_json_type()}, {"/imu/b", imu_json_type()}, {"/pose", pose_json_type()}});
  const auto& a = channel_of(summary, "/imu/a");
  const auto& b = channel_of(summary, "/imu/b");
  const auto& pose = channel_of(summary, "/pose");
  CHECK(a.schema_id != 0);
  CHECK(a.schema_id == b.schema_id);
  CHECK(pose.schema_id != a.schema_id);
  CHECK(summary.schemas.size() == 2);
  CHECK(summary.schemas.at(pose.schema_id).name == "Pose");
}

TEST_CASE("A topic whose publisher declares its type after the recording opened it is recorded with that type",
          "[recording][types]") {
  TestDomain domain("rec_types_late");
  RecordingOptions o;
  o.taps.domain = domain.name;
  o.taps.selection.all = true;
  std::deque<recorder::ByteVector> files;
  auto rec = Recording::create(o, memory_sinks(files));
  REQUIRE(rec.ok());
  REQUIRE(rec->start().ok());
  // A subscriber creates the topic before anyone declares what it carries.
  SubscriberOptions so;
  so.topic.domain = domain.name;
  auto early = Subscriber::create("/late", so);
  REQUIRE(early.ok());
  REQUIRE(eventually([&] { return !rec->counts().empty(); }));
  auto pub = Publisher::create("/late", typed_publisher_in(domain.name, imu_json_type()));
  REQUIRE(pub.ok());
  REQUIRE(pub->publish_copy(bytes_of(R"({"x":2})")).ok());
  REQUIRE(eventually([&] { return !rec->counts().empty() && rec->counts()[0].written == 1; }));
  REQUIRE(rec->finish().ok());
  auto reader = recorder::Reader::open_memory(files[0]);
  REQUIRE(reader.ok());
  const auto& ch = channel_of(reader->summary(), "/late");
  CHECK(ch.message_encoding == "json");
  REQUIRE(ch.schema_id != 0);
  CHECK(reader->summary().schemas.at(ch.schema_id).name == "Imu");
}

TEST_CASE("The profile maps a topic type to a channel's encoding and schema and back, raw as x-cerulion-bytes",
          "[recording][types][profile]") {
  for (const TopicType& type : {TopicType{}, imu_json_type(), TopicType{"json", {}},
                                TopicType{"cdr", {"geometry_msgs/msg/Point", "ros2msg", "float64 x\n"}}}) {
    INFO(type.message_encoding << " " << type.schema.name);
    const auto channel_type = profile::channel_type(type);
    recorder::Channel ch;
    ch.message_encoding = channel_type.message_encoding;
    CHECK(channel_type.schema.has_value() == !type.schema.empty());
    CHECK(profile::topic_type(ch, channel_type.schema ? &*channel_type.schema : nullptr) == type);
  }
  CHECK(profile::channel_type({}).message_encoding == profile::kMessageEncoding);
  const auto json = profile::channel_type(imu_json_type());
  CHECK(json.message_encoding == "json");
  REQUIRE(json.schema);
  CHECK(json.schema->name == "Imu");
  CHECK(json.schema->encoding == "jsonschema");
  CHECK(text_of_bytes(json.schema->data) == kImuJsonSchema);
}
