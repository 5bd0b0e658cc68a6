// SPDX-License-Identifier: Apache-2.0
// A topic's type crosses with it: the exporting bridge announces the encoding and the schema in its
// DDS writer's user data, the importing bridge creates the local topic with them, and a recording
// made on the far side has the schema. A schema too large for discovery is said by both bridges.

#include <catch2/catch.hpp>

#include "bridge_helpers.hpp"
#include "cerulion/bridge/type_announcement.hpp"
#include "cerulion/recorder/reader.hpp"
#include "cerulion/recording/events.hpp"
#include "cerulion/recording/recording.hpp"
#include "protobuf_descriptors.hpp"
#include "temp_dir.hpp"
#include "topic_types.hpp"

using namespace cerulion;
using namespace cerulion::test;
using recording::EventKind;

namespace {

std::vector<unsigned char> bytes_of(std::string_view text) { return {text.begin(), text.end()}; }

TopicType protobuf_imu_type() { return TopicType{"protobuf", {"fb.Imu", "protobuf", pb::imu_descriptor_set()}}; }
TopicType ros2_string_type() { return TopicType{"cdr", {"std_msgs/msg/String", "ros2msg", "string data\n"}}; }

/// A JSON Schema of `bytes` bytes (a description padded out).
TopicType json_type_of_size(std::size_t bytes) {
  const std::string head = R"({"description":")", tail = R"("})";
  return TopicType{"json", {"Big", "jsonschema", head + std::string(bytes - head.size() - tail.size(), 'x') + tail}};
}

/// The largest JSON Schema whose announcement fits kMaxAnnouncementBytes whole.
TopicType largest_announced_json_type() {
  std::size_t bytes = bridge::kMaxAnnouncementBytes;
  while (bridge::read_type_announcement(bridge::announce_type(json_type_of_size(bytes))).type.schema.empty()) --bytes;
  return json_type_of_size(bytes);
}

/// A message `type`'s topic accepts: JSON for json, bytes otherwise.
std::vector<std::byte> message_of(const TopicType& type) {
  if (type.message_encoding != "json") return numbered(1, 64);
  const std::string text = R"({"x": 1})";
  return {reinterpret_cast<const std::byte*>(text.data()), reinterpret_cast<const std::byte*>(text.data()) + text.size()};
}

/// Publishes a message of `type` on `topic` in `from` (the publisher declaring the type) until `far`,
/// a subscriber in the other domain, receives one: the importing bridge has created the topic there.
Publisher publish_until_crossed(const std::string& from, const std::string& topic, const TopicType& type,
                                Subscriber& far) {
  PublisherOptions po;
  po.topic.domain = from;
  po.topic.type = type;
  auto pub = Publisher::create(topic, po);
  INFO(pub.message());
  REQUIRE(pub.ok());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  bool crossed = false;
  while (!crossed && std::chrono::steady_clock::now() < deadline) {
    REQUIRE(pub->publish_copy(message_of(type)).ok());
    crossed = far.receive(std::chrono::milliseconds(100)).ok();
  }
  REQUIRE(crossed);
  return std::move(*pub);
}

/// The events about `topic` of `kind`.
std::vector<std::string> said(recording::EventQueue& events, EventKind kind, const std::string& topic) {
  std::vector<std::string> lines;
  for (const auto& e : events.drain()) {
    if (e.kind == kind && e.subject == topic) lines.push_back(e.message);
  }
  return lines;
}

}  // namespace

TEST_CASE("A topic's type announcement reads back as it was, whatever its schema", "[bridge][schema]") {
  std::string binary("\0:1:\0cerulion.schema=", 21);
  for (const TopicType& type : {TopicType{"json", {}}, imu_json_type(), protobuf_imu_type(), ros2_string_type(),
                                TopicType{"x-mine", {"T", "x-idl", binary}}, TopicType{"cbor", {}}}) {
    INFO(describe(type));
    CHECK(bridge::read_type_announcement(bridge::announce_type(type)) == bridge::TypeAnnouncement{type, {}, 0, {}});
  }
  CHECK(bridge::announce_type(TopicType{}).empty());
  // What bridges said before schemas travelled still reads.
  CHECK(bridge::read_type_announcement(bytes_of("cerulion.encoding=json")).type == TopicType{"json", {}});
}

TEST_CASE("User data that is not an announcement reads as raw bytes, a damaged schema part as the encoding alone",
          "[bridge][schema]") {
  for (std::string_view other : {"", "typehash=RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18;",
                                 "cerulion.encodin", "Cerulion.encoding=json"}) {
    INFO(other);
    CHECK(bridge::read_type_announcement(bytes_of(other)).type.raw());
  }
  const std::string encoding("cerulion.encoding=json\0", 23);
  for (std::string_view tail : {"", "cerulion.schema=", "cerulion.schema=3:Imu", "cerulion.schema=3:Imu10:jsonschema9:{}",
                                "cerulion.schema=3:Imu10:jsonschema2:{}extra", "cerulion.schema=-3:Imu10:jsonschema2:{}",
                                "cerulion.schema=99999999999:Imu", "cerulion.schema-omitted=3:Big10:jsonschema2:1x",
                                "cerulion.schema-omitted=3:Big10:jsonschema20:99999999999999999999", "cerulion.future=1"}) {
    INFO(tail);
    const auto read = bridge::read_type_announcement(bytes_of(encoding + std::string(tail)));
    CHECK(read == bridge::TypeAnnouncement{TopicType{"json", {}}, {}, 0, {}});
  }
  // Every cut of a whole announcement reads as something, never past its end.
  const auto whole = bridge::announce_type(imu_json_type());
  for (std::size_t n = 0; n <= whole.size(); ++n) {
    const auto read = bridge::read_type_announcement(std::span(whole).first(n));
    CHECK((read.type.schema.empty() || read.type == imu_json_type()));
  }
}

TEST_CASE("A schema too large for discovery is announced as left out, with its name, encoding and size",
          "[bridge][schema]") {
  const TopicType largest = largest_announced_json_type();
  CHECK(bridge::announce_type(largest).size() <= bridge::kMaxAnnouncementBytes);
  CHECK(bridge::read_type_announcement(bridge::announce_type(largest)).type == largest);

  const TopicType larger = json_type_of_size(largest.schema.data.size() + 1);
  const auto announced = bridge::announce_type(larger);
  CHECK(announced.size() <= bridge::kMaxAnnouncementBytes);
  CHECK(bridge::read_type_announcement(announced) ==
        bridge::TypeAnnouncement{TopicType{"json", {}}, Schema{"Big", "jsonschema", {}}, larger.schema.data.size(), {}});
  // A ceiling too small for even that: the encoding alone.
  CHECK(bridge::read_type_announcement(bridge::announce_type(imu_json_type(), 30)).type == TopicType{"json", {}});
}

TEST_CASE("A topic's schema arrives with it in the other domain, and in a recording made there",
          "[bridge][schema]") {
  const TopicType type = GENERATE(imu_json_type(), protobuf_imu_type(), ros2_string_type());
  INFO(describe(type));
  const std::string a = unique_domain("sca"), b = unique_domain("scb"), topic = unique_topic("schema");
  const auto bridges = start_export_import(a, b, test_dds_domain(), [](bridge::BridgeOptions&) {});
  auto far = open_subscriber(b, topic);
  auto pub = publish_until_crossed(a, topic, type, far);
  auto got = far.type();
  REQUIRE(got.ok());
  CHECK(*got == type);

  // As `cerulion record` on the far side: the channel's schema is the one published in domain A.
  const std::string file = fresh_temp_path("far.mcap");
  recording::RecordingOptions o;
  o.taps.domain = b;
  o.taps.selection.topics = {topic};
  auto rec = recording::Recording::create(o, recording::file_sinks(file, false));
  REQUIRE(rec.ok());
  REQUIRE(rec->start().ok());
  REQUIRE(eventually([&] {
    (void)pub.publish_copy(message_of(type));
    for (const auto& c : rec->counts())
      if (c.written > 0) return true;
    return false;
  }, std::chrono::seconds(30)));
  REQUIRE(rec->finish().ok());
  auto reader = recorder::Reader::open(file);
  REQUIRE(reader.ok());
  const auto& summary = reader->summary();
  REQUIRE(summary.channels.size() == 1);
  const auto& channel = summary.channels.begin()->second;
  CHECK(channel.message_encoding == type.message_encoding);
  REQUIRE(summary.schemas.count(channel.schema_id) == 1);
  const auto& schema = summary.schemas.at(channel.schema_id);
  CHECK(schema.name == type.schema.name);
  CHECK(schema.encoding == type.schema.encoding);
  CHECK(std::string(reinterpret_cast<const char*>(schema.data.data()), schema.data.size()) == type.schema.data);
}

TEST_CASE("A schema as large as discovery carries arrives whole, over shared memory and over UDP", "[bridge][schema]") {
  const bool shared_memory = GENERATE(true, false);
  INFO((shared_memory ? "shared memory and UDP" : "UDP only"));
  const TopicType type = largest_announced_json_type();
  const std::string a = unique_domain("sla"), b = unique_domain("slb"), topic = unique_topic("large_schema");
  const auto bridges = start_export_import(a, b, test_dds_domain(), [&](bridge::BridgeOptions& o) {
    o.shared_memory = shared_memory;
  });
  auto far = open_subscriber(b, topic);
  auto pub = publish_until_crossed(a, topic, type, far);
  auto got = far.type();
  REQUIRE(got.ok());
  CHECK(got->schema.data.size() == type.schema.data.size());
  CHECK(*got == type);
}

TEST_CASE("A schema too large for discovery is said by both bridges, naming the topic, which arrives without it",
          "[bridge][schema]") {
  const TopicType large = largest_announced_json_type();
  const std::size_t bytes = large.schema.data.size() + 1000;
  // Without its schema a json topic is still json; a protobuf one, which needs a schema, raw bytes.
  const auto [type, far_type] = GENERATE_COPY(
      std::pair{json_type_of_size(bytes), TopicType{"json", {}}},
      std::pair{TopicType{"protobuf", {"fb.Imu", "protobuf", std::string(bytes, '\x08')}}, TopicType{}});
  INFO(type.message_encoding);
  const std::string a = unique_domain("sta"), b = unique_domain("stb"), topic = unique_topic("too_large");
  recording::EventQueue out_events, in_events;
  const auto bridges = start_export_import(a, b, test_dds_domain(), [&](bridge::BridgeOptions& o) {
    o.events = o.direction == bridge::Direction::Export ? &out_events : &in_events;
  });
  auto far = open_subscriber(b, topic);
  auto pub = publish_until_crossed(a, topic, type, far);
  auto got = far.type();
  REQUIRE(got.ok());
  CHECK(*got == far_type);

  const std::string size = std::to_string(type.schema.data.size());
  const auto exporter = said(out_events, EventKind::Warning, topic);
  REQUIRE(exporter.size() == 1);
  CHECK(exporter[0] == topic + ": schema " + type.schema.name + " (" + type.schema.encoding + ", " + size +
                           " B) does not fit the 60000 B a DDS writer's discovery carries: bridges that import " +
                           topic + " get it without the schema");
  const auto importer = said(in_events, EventKind::Warning, topic);
  REQUIRE(importer.size() == 1);
  CHECK(importer[0] == topic + ": the exporting bridge left out its schema " + type.schema.name + " (" +
                           type.schema.encoding + ", " + size + " B), larger than a DDS writer's discovery carries: " +
                           "imported as " + describe(far_type));
}
