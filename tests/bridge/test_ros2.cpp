// SPDX-License-Identifier: Apache-2.0
// A plain Fast DDS participant that knows only ROS 2's type names and decodes the CDR itself
// (as a ROS 2 node would) reads what a bridge exports, and what it writes on rt/ topics appears
// as local topics.

#include <catch2/catch.hpp>

#include <cstring>
#include <string>
#include <vector>

#include <fastdds/dds/domain/DomainParticipant.hpp>
#include <fastdds/dds/domain/DomainParticipantFactory.hpp>
#include <fastdds/dds/publisher/DataWriter.hpp>
#include <fastdds/dds/publisher/Publisher.hpp>
#include <fastdds/dds/subscriber/DataReader.hpp>
#include <fastdds/dds/subscriber/SampleInfo.hpp>
#include <fastdds/dds/subscriber/Subscriber.hpp>
#include <fastdds/dds/topic/TopicDataType.hpp>
#include <fastdds/dds/topic/TypeSupport.hpp>
#include <fastdds/rtps/common/SerializedPayload.h>

#include "bridge_helpers.hpp"

using namespace cerulion;
using namespace cerulion::test;
namespace fdds = eprosima::fastdds::dds;
namespace rtps = eprosima::fastrtps::rtps;

namespace {

/// A type that carries its serialized CDR as is: the test writes and checks the bytes itself.
struct RawCdr {
  std::vector<std::uint8_t> bytes;
};
class RawCdrType final : public fdds::TopicDataType {
 public:
  explicit RawCdrType(const char* name) {
    setName(name);
    m_typeSize = 64;
    m_isGetKeyDefined = false;
    auto_fill_type_object(false);
    auto_fill_type_information(false);
  }
  bool serialize(void* data, rtps::SerializedPayload_t* p) override {
    auto* m = static_cast<RawCdr*>(data);
    if (p->max_size < m->bytes.size()) return false;
    std::memcpy(p->data, m->bytes.data(), m->bytes.size());
    p->length = static_cast<std::uint32_t>(m->bytes.size());
    p->encapsulation = CDR_LE;
    return true;
  }
  bool deserialize(rtps::SerializedPayload_t* p, void* data) override {
    static_cast<RawCdr*>(data)->bytes.assign(p->data, p->data + p->length);
    return true;
  }
  std::function<std::uint32_t()> getSerializedSizeProvider(void* data) override {
    return [data] { return static_cast<std::uint32_t>(static_cast<RawCdr*>(data)->bytes.size()); };
  }
  void* createData() override { return new RawCdr; }
  void deleteData(void* data) override { delete static_cast<RawCdr*>(data); }
  bool getKey(void*, rtps::InstanceHandle_t*, bool) override { return false; }
};

void put_u32(std::vector<std::uint8_t>& v, std::uint32_t x) {
  while (v.size() % 4) v.push_back(0);  // CDR alignment (the 4-byte header keeps offsets aligned)
  for (int i = 0; i < 4; ++i) v.push_back(static_cast<std::uint8_t>(x >> (8 * i)));
}
std::uint32_t get_u32(const std::vector<std::uint8_t>& v, std::size_t at) {
  return v[at] | v[at + 1] << 8 | v[at + 2] << 16 | static_cast<std::uint32_t>(v[at + 3]) << 24;
}

/// A ROS 2-like node: one participant on the default transports, ROS 2's default QoS.
struct PlainNode {
  fdds::DomainParticipant* participant = nullptr;
  fdds::Publisher* publisher = nullptr;
  fdds::Subscriber* subscriber = nullptr;
  explicit PlainNode(std::uint32_t domain) {
    participant =
        fdds::DomainParticipantFactory::get_instance()->create_participant(domain, fdds::PARTICIPANT_QOS_DEFAULT);
    REQUIRE(participant);
    for (const char* name : {"std_msgs::msg::dds_::String_", "std_msgs::msg::dds_::UInt8MultiArray_"}) {
      REQUIRE(fdds::TypeSupport(new RawCdrType(name)).register_type(participant) == ReturnCode_t::RETCODE_OK);
    }
    publisher = participant->create_publisher(fdds::PUBLISHER_QOS_DEFAULT);
    subscriber = participant->create_subscriber(fdds::SUBSCRIBER_QOS_DEFAULT);
  }
  ~PlainNode() {
    participant->delete_contained_entities();
    fdds::DomainParticipantFactory::get_instance()->delete_participant(participant);
  }
  fdds::Topic* topic(const std::string& name, const std::string& type) {
    return participant->create_topic(name, type, fdds::TOPIC_QOS_DEFAULT);
  }
  static void ros_defaults(fdds::ReliabilityQosPolicy& r, fdds::HistoryQosPolicy& h) {
    r.kind = fdds::RELIABLE_RELIABILITY_QOS;
    h.kind = fdds::KEEP_LAST_HISTORY_QOS;
    h.depth = 10;
  }
};

}  // namespace

TEST_CASE("A ROS 2 node reads an exported JSON topic as std_msgs String on its rt topic", "[bridge][ros2]") {
  const std::string domain = unique_domain("brros"), topic = unique_topic("ros_out");
  const std::uint32_t dds_domain = test_dds_domain();
  auto b = start_bridge(domain, dds_domain, bridge::Direction::Export);
  PlainNode node(dds_domain);
  fdds::DataReaderQos rq = node.subscriber->get_default_datareader_qos();
  PlainNode::ros_defaults(rq.reliability(), rq.history());
  auto* reader = node.subscriber->create_datareader(node.topic("rt" + topic, "std_msgs::msg::dds_::String_"), rq);
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

TEST_CASE("What a ROS 2 node writes on rt topics appears as local topics", "[bridge][ros2]") {
  const std::string domain = unique_domain("brros"), text_topic = unique_topic("ros_in"),
                    bytes_topic = unique_topic("ros_bytes");
  const std::uint32_t dds_domain = test_dds_domain();
  auto b = start_bridge(domain, dds_domain, bridge::Direction::Import);
  PlainNode node(dds_domain);
  fdds::DataWriterQos wq = node.publisher->get_default_datawriter_qos();
  PlainNode::ros_defaults(wq.reliability(), wq.history());
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
