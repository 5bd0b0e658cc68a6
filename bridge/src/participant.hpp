// SPDX-License-Identifier: Apache-2.0
#pragma once
// The bridge's one DDS participant: transports sized for large messages, the two ROS 2 types
// registered, ROS 2's default QoS for writers and readers, and what discovery found (remote
// participants, and writers of other participants) queued for the bridge to act on outside Fast
// DDS's callbacks.

#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <fastdds/dds/domain/DomainParticipant.hpp>
#include <fastdds/dds/domain/DomainParticipantListener.hpp>
#include <fastdds/dds/publisher/Publisher.hpp>
#include <fastdds/dds/publisher/qos/DataWriterQos.hpp>
#include <fastdds/dds/subscriber/Subscriber.hpp>
#include <fastdds/dds/subscriber/qos/DataReaderQos.hpp>
#include <fastdds/dds/topic/Topic.hpp>

#include "cerulion/bridge/bridge.hpp"
#include "cerulion/bridge/ros_types.hpp"

namespace cerulion::bridge::detail {

/// A writer another participant announced (or withdrew).
struct DiscoveredWriter {
  std::string dds_topic;
  std::string dds_type;
  /// The cerulion message encoding a remote bridge announced in the writer's user data ("json"),
  /// "" when none (ROS 2 nodes, or raw bytes).
  std::string encoding;
  bool removed = false;
};

/// The writer user data that announces a cerulion topic's message encoding.
std::vector<unsigned char> encoding_user_data(const std::string& encoding);

class Participant final : public eprosima::fastdds::dds::DomainParticipantListener {
 public:
  static Result<std::unique_ptr<Participant>> create(const BridgeOptions& options);
  ~Participant() override;

  eprosima::fastdds::dds::DomainParticipant* get() const noexcept { return participant_; }
  eprosima::fastdds::dds::Publisher* publisher() const noexcept { return publisher_; }
  eprosima::fastdds::dds::Subscriber* subscriber() const noexcept { return subscriber_; }
  /// Whether a sample's writer belongs to this participant.
  bool own(const eprosima::fastrtps::rtps::GUID_t& writer) const noexcept;

  /// The DDS topic of that name and type, created on first use. SystemError when the name is
  /// already a topic of the other type here.
  Result<eprosima::fastdds::dds::Topic*> topic(const std::string& name, WireType type);
  eprosima::fastdds::dds::DataWriterQos writer_qos(const std::string& encoding) const;
  eprosima::fastdds::dds::DataReaderQos reader_qos() const;

  /// What discovery found since the last call.
  std::vector<DiscoveredWriter> take_discoveries();
  /// Names of the other participants seen now.
  std::vector<std::string> remote_participants() const;

  void on_participant_discovery(eprosima::fastdds::dds::DomainParticipant*,
                                eprosima::fastrtps::rtps::ParticipantDiscoveryInfo&& info) override;
  void on_publisher_discovery(eprosima::fastdds::dds::DomainParticipant*,
                              eprosima::fastrtps::rtps::WriterDiscoveryInfo&& info) override;

 private:
  explicit Participant(const BridgeOptions& options) : options_(options) {}
  BridgeOptions options_;
  eprosima::fastdds::dds::DomainParticipant* participant_ = nullptr;
  eprosima::fastdds::dds::Publisher* publisher_ = nullptr;
  eprosima::fastdds::dds::Subscriber* subscriber_ = nullptr;
  eprosima::fastrtps::rtps::GuidPrefix_t prefix_;
  mutable std::mutex mutex_;
  std::vector<DiscoveredWriter> discoveries_;
  std::vector<std::pair<eprosima::fastrtps::rtps::GuidPrefix_t, std::string>> peers_;
  std::mutex topics_mutex_;
};

}  // namespace cerulion::bridge::detail
