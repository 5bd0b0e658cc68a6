// SPDX-License-Identifier: Apache-2.0
// ROS 2 types of any kind through the bridge, both ways, against a plain Fast DDS participant set up
// as rmw_fastrtps sets up a ROS 2 node (type pkg::msg::dds_::T_, keyless, XCDR1, USER_DATA
// "typehash=...;", reliable / volatile / keep last 10): byte for byte, with the type's hash and
// definition.

#include <catch2/catch.hpp>

#include "bridge_helpers.hpp"
#include "cerulion/core/discovery.hpp"
#include "cerulion/recording/events.hpp"
#include "cerulion/ros2/cdr.hpp"
#include "cerulion/ros2/msg_path.hpp"
#include "cerulion/ros2/type_hash.hpp"
#include "ros2_msgs.hpp"
#include "ros2_node.hpp"

using namespace cerulion;
using namespace cerulion::test;

namespace {

struct Ros2Type {
  Schema schema;
  ros2::CdrCodec codec;
  std::string hash;
};

Ros2Type ros2_type(const std::string& name) {
  auto schema = ros2::load_schema(ros2::MsgPath{{ros2_msg_path()}}, name);
  REQUIRE(schema.ok());
  auto set = ros2::parse_schema(schema->name, schema->data);
  REQUIRE(set.ok());
  auto codec = ros2::CdrCodec::create(*set);
  REQUIRE(codec.ok());
  return {*schema, *codec, ros2::type_hash(*set)};
}

RawCdr raw(const std::vector<std::byte>& bytes) {
  RawCdr m;
  for (auto b : bytes) m.bytes.push_back(static_cast<std::uint8_t>(b));
  return m;
}

/// A bridge's options following every topic one way, saying what it does to `events`.
bridge::BridgeOptions following_all(const std::string& domain, std::uint32_t dds_domain, bridge::Direction direction,
                                    recording::EventQueue& events) {
  bridge::BridgeOptions o;
  o.domain = domain;
  o.dds_domain = dds_domain;
  o.direction = direction;
  o.selection = all_topics();
  o.events = &events;
  return o;
}

std::vector<std::byte> pose_bytes(const Ros2Type& t, double x) {
  auto bytes = t.codec.encode({{"header", {{"stamp", {{"sec", 3}, {"nanosec", 4}}}, {"frame_id", "map"}}},
                               {"pose", {{"position", {{"x", x}, {"y", 2.0}, {"z", 3.0}}}}}});
  REQUIRE(bytes.ok());
  return *bytes;
}

}  // namespace

TEST_CASE("A cdr topic of a ROS 2 type goes out as that DDS type with its CDR as it is and its type hash",
          "[bridge][ros2]") {
  const std::string domain = unique_domain("brty"), topic = unique_topic("pose");
  const std::uint32_t dds_domain = test_dds_domain();
  const auto pose = ros2_type("geometry_msgs/msg/PoseStamped");
  auto b = start_bridge(domain, dds_domain, bridge::Direction::Export);
  PlainNode node(dds_domain);
  auto* reader = node.subscriber->create_datareader(node.topic("rt" + topic, "geometry_msgs::msg::dds_::PoseStamped_"),
                                                    node.reader_qos());
  REQUIRE(reader);

  PublisherOptions po;
  po.topic.domain = domain;
  po.topic.type = TopicType{"cdr", pose.schema};
  auto pub = Publisher::create(topic, po);
  REQUIRE(pub.ok());
  const auto sent = pose_bytes(pose, 1.5);
  RawCdr got;
  bool received = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!received && std::chrono::steady_clock::now() < deadline) {
    REQUIRE(pub->publish_copy(sent).ok());
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    fdds::SampleInfo info;
    while (reader->take_next_sample(&got, &info) == ReturnCode_t::RETCODE_OK)
      if (info.valid_data) received = true;
  }
  REQUIRE(received);
  CHECK(got.bytes == raw(sent).bytes);
  auto writer = node.writers.writer("rt" + topic);
  REQUIRE(writer);
  CHECK(writer->type == "geometry_msgs::msg::dds_::PoseStamped_");
  CHECK(pose.hash == "RIHS01_10f3786d7d40fd2b54367835614bff85d4ad3b5dab62bf8bca0cc232d73b4cd8");
  CHECK(writer->user_data.starts_with("typehash=" + pose.hash + ";"));
  const auto status = b.status();
  REQUIRE(status.topics.size() == 1);
  CHECK(status.topics[0].dds_type == "geometry_msgs::msg::dds_::PoseStamped_");
}

TEST_CASE("A ROS 2 node's writer of any type comes in as cdr with the definition found on the msg path",
          "[bridge][ros2]") {
  const std::string domain = unique_domain("brty"), topic = unique_topic("image"), unknown = unique_topic("unknown");
  const std::uint32_t dds_domain = test_dds_domain();
  const auto image = ros2_type("sensor_msgs/msg/Image");
  recording::EventQueue events;
  auto o = following_all(domain, dds_domain, bridge::Direction::Import, events);
  o.msg_path = {ros2_msg_path()};
  auto b = start_bridge(o);

  PlainNode node(dds_domain);
  fdds::DataWriterQos wq = node.writer_qos();
  const std::string typehash = "typehash=" + image.hash + ";";
  wq.user_data().data_vec(std::vector<rtps::octet>(typehash.begin(), typehash.end()));
  auto* image_writer = node.publisher->create_datawriter(node.topic("rt" + topic, "sensor_msgs::msg::dds_::Image_"), wq);
  auto* unknown_writer =
      node.publisher->create_datawriter(node.topic("rt" + unknown, "robot_msgs::msg::dds_::Secret_"), node.writer_qos());
  REQUIRE(image_writer);
  REQUIRE(unknown_writer);
  auto sent = image.codec.encode({{"height", 1}, {"width", 4}, {"encoding", "mono8"}, {"step", 4}, {"data", {1, 2, 3, 4}}});
  REQUIRE(sent.ok());
  RawCdr image_sample = raw(*sent);
  RawCdr secret{{0, 1, 0, 0, 42, 0, 0, 0}};

  SubscriberOptions so;
  so.topic.domain = domain;
  std::optional<Subscriber> image_sub, unknown_sub;
  std::optional<Sample> image_got, unknown_got;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while ((!image_got || !unknown_got) && std::chrono::steady_clock::now() < deadline) {
    REQUIRE(image_writer->write(&image_sample));
    REQUIRE(unknown_writer->write(&secret));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    // Subscribing before the bridge made the topic would make it a raw topic of the subscriber's.
    if (!image_sub && inspect_topic(topic, domain).ok()) image_sub.emplace(std::move(*Subscriber::create(topic, so)));
    if (!unknown_sub && inspect_topic(unknown, domain).ok()) unknown_sub.emplace(std::move(*Subscriber::create(unknown, so)));
    if (image_sub && !image_got)
      if (auto s = image_sub->receive(std::chrono::milliseconds(10)); s.ok()) image_got = std::move(*s);
    if (unknown_sub && !unknown_got)
      if (auto s = unknown_sub->receive(std::chrono::milliseconds(10)); s.ok()) unknown_got = std::move(*s);
  }
  REQUIRE(image_got);
  REQUIRE(unknown_got);
  CHECK(std::vector<std::byte>(image_got->data().begin(), image_got->data().end()) == *sent);
  auto type = image_sub->type();
  REQUIRE(type.ok());
  CHECK(type->message_encoding == "cdr");
  CHECK(type->schema.name == "sensor_msgs/msg/Image");
  CHECK(type->schema.encoding == "ros2msg");
  CHECK(type->schema.data == image.schema.data);
  auto unknown_type = unknown_sub->type();
  REQUIRE(unknown_type.ok());
  CHECK(unknown_type->message_encoding == "cdr");
  CHECK(unknown_type->schema.name == "robot_msgs/msg/Secret");
  CHECK(unknown_type->schema.data.empty());
  bool said = false;
  for (const auto& e : events.drain())
    said = said || (e.subject == unknown && e.message.find("robot_msgs/msg/Secret is unknown") != std::string::npos);
  CHECK(said);
}

TEST_CASE("A cdr message that is not XCDR1 little-endian is not exported and is said once", "[bridge][ros2]") {
  const std::string domain = unique_domain("brty"), topic = unique_topic("xcdr2");
  const std::uint32_t dds_domain = test_dds_domain();
  const auto pose = ros2_type("geometry_msgs/msg/PoseStamped");
  recording::EventQueue events;
  auto b = start_bridge(following_all(domain, dds_domain, bridge::Direction::Export, events));
  PublisherOptions po;
  po.topic.domain = domain;
  po.topic.type = TopicType{"cdr", pose.schema};
  auto pub = Publisher::create(topic, po);
  REQUIRE(pub.ok());
  auto xcdr2 = pose.codec.encode({}, ros2::Encapsulation::Xcdr2Le);
  REQUIRE(xcdr2.ok());
  std::size_t problems = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (problems == 0 && std::chrono::steady_clock::now() < deadline) {
    REQUIRE(pub->publish_copy(*xcdr2).ok());
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    for (const auto& e : events.drain()) {
      if (e.kind == recording::EventKind::Problem && e.message.find("XCDR2 little-endian") != std::string::npos) ++problems;
    }
  }
  CHECK(problems == 1);
  for (int i = 0; i < 3; ++i) REQUIRE(pub->publish_copy(*xcdr2).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  for (const auto& e : events.drain()) CHECK(e.kind != recording::EventKind::Problem);
}

TEST_CASE("A cdr topic of a ROS 2 type crosses two bridges with its type and bytes", "[bridge][ros2]") {
  const std::string a = unique_domain("brtya"), c = unique_domain("brtyb"), topic = unique_topic("pose2");
  const auto pose = ros2_type("geometry_msgs/msg/PoseStamped");
  auto bridges = start_export_import(a, c, test_dds_domain(), [](bridge::BridgeOptions&) {});
  PublisherOptions po;
  po.topic.domain = a;
  po.topic.type = TopicType{"cdr", pose.schema};
  auto pub = Publisher::create(topic, po);
  REQUIRE(pub.ok());
  SubscriberOptions so;
  so.topic.domain = c;
  std::optional<Subscriber> sub;
  std::optional<Sample> got;
  const auto sent = pose_bytes(pose, -7.25);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!got && std::chrono::steady_clock::now() < deadline) {
    REQUIRE(pub->publish_copy(sent).ok());
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (!sub && inspect_topic(topic, c).ok()) sub.emplace(std::move(*Subscriber::create(topic, so)));
    if (sub)
      if (auto s = sub->receive(std::chrono::milliseconds(10)); s.ok()) got = std::move(*s);
  }
  REQUIRE(got);
  CHECK(std::vector<std::byte>(got->data().begin(), got->data().end()) == sent);
  auto type = sub->type();
  REQUIRE(type.ok());
  CHECK(*type == TopicType{"cdr", pose.schema});
}
