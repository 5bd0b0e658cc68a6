// SPDX-License-Identifier: Apache-2.0
#pragma once
// A ROS 2 node without ROS 2: a plain Fast DDS participant that knows only ROS 2's type names and
// writes and reads the CDR itself, as a ROS 2 node would put it on the wire.

#include <catch2/catch.hpp>

#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <fastdds/dds/domain/DomainParticipant.hpp>
#include <fastdds/dds/domain/DomainParticipantFactory.hpp>
#include <fastdds/dds/domain/DomainParticipantListener.hpp>
#include <fastdds/dds/publisher/DataWriter.hpp>
#include <fastdds/dds/publisher/Publisher.hpp>
#include <fastdds/dds/subscriber/DataReader.hpp>
#include <fastdds/dds/subscriber/SampleInfo.hpp>
#include <fastdds/dds/subscriber/Subscriber.hpp>
#include <fastdds/dds/topic/TopicDataType.hpp>
#include <fastdds/dds/topic/TypeSupport.hpp>
#include <fastdds/rtps/common/SerializedPayload.h>

namespace cerulion::test {

namespace fdds = eprosima::fastdds::dds;
namespace rtps = eprosima::fastrtps::rtps;

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

inline void put_u32(std::vector<std::uint8_t>& v, std::uint32_t x) {
  while (v.size() % 4) v.push_back(0);  // CDR alignment (the 4-byte header keeps offsets aligned)
  for (int i = 0; i < 4; ++i) v.push_back(static_cast<std::uint8_t>(x >> (8 * i)));
}
inline std::uint32_t get_u32(const std::vector<std::uint8_t>& v, std::size_t at) {
  return v[at] | v[at + 1] << 8 | v[at + 2] << 16 | static_cast<std::uint32_t>(v[at + 3]) << 24;
}

/// What a node's discovery saw of other participants' writers: DDS type and user data by topic.
class WriterLog final : public fdds::DomainParticipantListener {
 public:
  struct Writer {
    std::string type;
    std::string user_data;
  };
  void on_publisher_discovery(fdds::DomainParticipant*, rtps::WriterDiscoveryInfo&& info) override {
    if (info.status != rtps::WriterDiscoveryInfo::DISCOVERED_WRITER) return;
    const auto& data = info.info.m_qos.m_userData.data_vec();
    std::lock_guard lock(mutex_);
    writers_[info.info.topicName().to_string()] = {info.info.typeName().to_string(), std::string(data.begin(), data.end())};
  }
  std::optional<Writer> writer(const std::string& topic) const {
    std::lock_guard lock(mutex_);
    auto it = writers_.find(topic);
    if (it == writers_.end()) return std::nullopt;
    return it->second;
  }

 private:
  mutable std::mutex mutex_;
  std::map<std::string, Writer> writers_;
};

/// A ROS 2-like node: one participant on the default transports, ROS 2's default QoS.
struct PlainNode {
  WriterLog writers;
  fdds::DomainParticipant* participant = nullptr;
  fdds::Publisher* publisher = nullptr;
  fdds::Subscriber* subscriber = nullptr;
  /// `user_data`: the participant's (as a bridge says when it started), none by default.
  explicit PlainNode(std::uint32_t domain, const std::vector<unsigned char>& user_data = {}) {
    auto* factory = fdds::DomainParticipantFactory::get_instance();
    fdds::DomainParticipantQos qos = factory->get_default_participant_qos();
    if (!user_data.empty()) qos.user_data().data_vec(user_data);
    participant = factory->create_participant(domain, qos, &writers, fdds::StatusMask::none());
    REQUIRE(participant);
    for (const char* name : {"std_msgs::msg::dds_::String_", "std_msgs::msg::dds_::UInt8MultiArray_"}) {
      REQUIRE(fdds::TypeSupport(new RawCdrType(name)).register_type(participant) == ReturnCode_t::RETCODE_OK);
    }
    publisher = participant->create_publisher(fdds::PUBLISHER_QOS_DEFAULT);
    subscriber = participant->create_subscriber(fdds::SUBSCRIBER_QOS_DEFAULT);
  }
  ~PlainNode() {
    participant->set_listener(nullptr);
    participant->delete_contained_entities();
    fdds::DomainParticipantFactory::get_instance()->delete_participant(participant);
  }
  /// The topic, its type registered first when it is neither of the two std_msgs ones.
  fdds::Topic* topic(const std::string& name, const std::string& type) {
    if (!participant->find_type(type).get()) {
      REQUIRE(fdds::TypeSupport(new RawCdrType(type.c_str())).register_type(participant) == ReturnCode_t::RETCODE_OK);
    }
    return participant->create_topic(name, type, fdds::TOPIC_QOS_DEFAULT);
  }
  /// ROS 2's default reader QoS (reliable, keep last 10, volatile), or transient local.
  fdds::DataReaderQos reader_qos(bool transient_local = false) const {
    fdds::DataReaderQos q = subscriber->get_default_datareader_qos();
    ros_defaults(q.reliability(), q.history(), q.durability(), transient_local);
    return q;
  }
  /// ROS 2's default writer QoS, or transient local (Fast DDS's own default writer is transient
  /// local, which a ROS 2 node's is not).
  fdds::DataWriterQos writer_qos(bool transient_local = false) const {
    fdds::DataWriterQos q = publisher->get_default_datawriter_qos();
    ros_defaults(q.reliability(), q.history(), q.durability(), transient_local);
    return q;
  }

 private:
  static void ros_defaults(fdds::ReliabilityQosPolicy& r, fdds::HistoryQosPolicy& h, fdds::DurabilityQosPolicy& d,
                           bool transient_local) {
    r.kind = fdds::RELIABLE_RELIABILITY_QOS;
    h.kind = fdds::KEEP_LAST_HISTORY_QOS;
    h.depth = 10;
    d.kind = transient_local ? fdds::TRANSIENT_LOCAL_DURABILITY_QOS : fdds::VOLATILE_DURABILITY_QOS;
  }
};

/// std_msgs/msg/String as CDR: encapsulation CDR_LE, length counting the NUL, characters, NUL.
inline RawCdr ros_string(const std::string& text) {
  RawCdr m{{0, 1, 0, 0}};
  put_u32(m.bytes, static_cast<std::uint32_t>(text.size() + 1));
  for (char c : text) m.bytes.push_back(static_cast<std::uint8_t>(c));
  m.bytes.push_back(0);
  return m;
}
/// The text of a std_msgs/msg/String, "" when malformed.
inline std::string ros_text(const RawCdr& m) {
  if (m.bytes.size() < 9) return {};
  const std::uint32_t length = get_u32(m.bytes, 4);
  if (length == 0 || m.bytes.size() < 8 + std::size_t{length}) return {};
  return std::string(m.bytes.begin() + 8, m.bytes.begin() + 8 + length - 1);
}

}  // namespace cerulion::test
