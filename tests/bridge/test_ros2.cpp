// SPDX-License-Identifier: Apache-2.0
// A plain Fast DDS participant that knows only ROS 2's type names and decodes the CDR itself
// (as a ROS 2 node would), with ROS 2's default QoS, reads what a bridge exports, and what it
// writes on rt/ topics appears as local topics. test_ros2_qos.cpp: durability across the two.

#include <catch2/catch.hpp>

#include "bridge_helpers.hpp"
#include "ros2_node.hpp"

using namespace cerulion;
using namespace cerulion::test;

TEST_CASE("A ROS 2 node with default volatile QoS reads an exported JSON topic as std_msgs String on rt/",
          "[bridge][ros2]") {
  const std::string domain = unique_domain("brros"), topic = unique_topic("ros_out");
  const std::uint32_t dds_domain = test_dds_domain();
  auto b = start_bridge(domain, dds_domain, bridge::Direction::Export);
  PlainNode node(dds_domain);
  auto* reader =
      node.subscriber->create_datareader(node.topic("rt" + topic, "std_msgs::msg::dds_::String_"), node.reader_qos());
  REQUIRE(reader);

  PublisherOptions po;
  po.topic.domain = domain;
  po.topic.type = TopicType{"json", {}};
  auto pub = Publisher::create(topic, po);
  REQUIRE(pub.ok());
  RawCdr got;
  bool received = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!received && std::chrono::steady_clock::now() < deadline) {
    REQUIRE(pub->publish_text(R"({"speed": 2})").ok());
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    fdds::SampleInfo info;
    while (reader->take_next_sample(&got, &info) == ReturnCode_t::RETCODE_OK)
      if (info.valid_data) received = true;
  }
  REQUIRE(received);
  // encapsulation CDR_LE, then string length (with NUL), characters, NUL
  const std::string text = R"({"speed": 2})";
  REQUIRE(got.bytes.size() >= 8 + text.size() + 1);
  CHECK(got.bytes[0] == 0x00);
  CHECK(got.bytes[1] == 0x01);
  CHECK(get_u32(got.bytes, 4) == text.size() + 1);
  CHECK(std::string(got.bytes.begin() + 8, got.bytes.begin() + 8 + text.size()) == text);
  CHECK(got.bytes[8 + text.size()] == 0);
}

TEST_CASE("What a ROS 2 node writes on rt topics with its default volatile QoS appears as local topics",
          "[bridge][ros2]") {
  const std::string domain = unique_domain("brros"), text_topic = unique_topic("ros_in"),
                    bytes_topic = unique_topic("ros_bytes");
  const std::uint32_t dds_domain = test_dds_domain();
  auto b = start_bridge(domain, dds_domain, bridge::Direction::Import);
  PlainNode node(dds_domain);
  const fdds::DataWriterQos wq = node.writer_qos();
  auto* text_writer =
      node.publisher->create_datawriter(node.topic("rt" + text_topic, "std_msgs::msg::dds_::String_"), wq);
  auto* bytes_writer =
      node.publisher->create_datawriter(node.topic("rt" + bytes_topic, "std_msgs::msg::dds_::UInt8MultiArray_"), wq);
  REQUIRE(text_writer);
  REQUIRE(bytes_writer);

  RawCdr hello{{0, 1, 0, 0}};
  put_u32(hello.bytes, 6);
  for (char c : std::string("hello")) hello.bytes.push_back(static_cast<std::uint8_t>(c));
  hello.bytes.push_back(0);
  // UInt8MultiArray with one dimension, as a ROS 2 node may fill its layout.
  RawCdr array{{0, 1, 0, 0}};
  put_u32(array.bytes, 1);
  put_u32(array.bytes, 2);
  array.bytes.insert(array.bytes.end(), {'x', 0});
  put_u32(array.bytes, 3);
  put_u32(array.bytes, 3);
  put_u32(array.bytes, 0);
  put_u32(array.bytes, 3);
  array.bytes.insert(array.bytes.end(), {1, 2, 3});

  SubscriberOptions so;
  so.topic.domain = domain;
  auto text_sub = Subscriber::create(text_topic, so);
  auto bytes_sub = Subscriber::create(bytes_topic, so);
  REQUIRE(text_sub.ok());
  REQUIRE(bytes_sub.ok());
  std::optional<Sample> text, bytes;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while ((!text || !bytes) && std::chrono::steady_clock::now() < deadline) {
    REQUIRE(text_writer->write(&hello));
    REQUIRE(bytes_writer->write(&array));
    if (!text)
      if (auto s = text_sub->receive(std::chrono::milliseconds(50)); s.ok()) text = std::move(*s);
    if (!bytes)
      if (auto s = bytes_sub->receive(std::chrono::milliseconds(50)); s.ok()) bytes = std::move(*s);
  }
  REQUIRE(text.has_value());
  REQUIRE(bytes.has_value());
  CHECK(text->text() == "hello");
  REQUIRE(bytes->size() == 3);
  CHECK(bytes->data()[2] == std::byte{3});
}
