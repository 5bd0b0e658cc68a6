// SPDX-License-Identifier: Apache-2.0
#pragma once
// The bridge's one DDS participant: transports sized for large messages, the types of the topics
// bridged registered as they come, the QoS of the bridge's writers and readers, and what discovery found (remote
// participants, and writers of other participants) queued for the bridge to act on outside Fast
// DDS's callbacks.

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
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
#include "cerulion/bridge/type_announcement.hpp"

namespace cerulion::bridge::detail {

/// A writer another participant announced (or withdrew).
struct DiscoveredWriter {
  std::string dds_topic;
  std::string dds_type;
  /// The topic's type a remote bridge announced in the writer's user data; raw bytes when none
  /// (ROS 2 nodes, or raw topics).
  TypeAnnouncement announced;
  /// The writer keeps history for late-joining readers (transient local or more): other bridges,
  /// and ROS 2 nodes that ask for it. A volatile writer (ROS 2's default) does not.
  bool durable = false;
  bool removed = false;
};

class Participant final : public eprosima::fastdds::dds::DomainParticipantListener {
 public:
  static Result<std::unique_ptr<Participant>> create(const BridgeOptions& options);
  ~Participant() override;

  eprosima::fastdds::dds::DomainParticipant* get() const noexcept { return participant_; }
  eprosima::fastdds::dds::Publisher* publisher() const noexcept { return publisher_; }
  eprosima::fastdds::dds::Subscriber* subscriber() const noexcept { return subscriber_; }
  /// Whether a sample's writer belongs to this participant.
  bool own(const eprosima::fastrtps::rtps::GUID_t& writer) const noexcept;

  /// The DDS topic of that name and DDS type, created (and its type registered) on first use.
  /// Incompatible when the name is already a topic of another type here.
  Result<eprosima::fastdds::dds::Topic*> topic(const std::string& name, const std::string& dds_type);
  /// Reliable (unless best effort was asked), keep last `depth`, transient local: a reader that
  /// matches late (a bridge, a ROS 2 node asking for transient local) gets the last `depth`
  /// samples; one with ROS 2's default volatile QoS matches too and gets only new ones.
  /// `user_data`: the topic's type announcement (announce_type()).
  eprosima::fastdds::dds::DataWriterQos writer_qos(const std::vector<unsigned char>& user_data) const;
  /// As the writers, durable (transient local: matches only durable writers, and gets their
  /// history) or volatile (matches every writer, and gets only new samples).
  eprosima::fastdds::dds::DataReaderQos reader_qos(bool durable) const;
  /// Whether `writer`, of another participant, is durable (DiscoveredWriter::durable). Known from
  /// its discovery, which Fast DDS reports before it matches the writer with any reader, so before
  /// any of its samples arrives; still known for a while after the writer is gone.
  bool durable_writer(const eprosima::fastrtps::rtps::GUID_t& writer) const;

  /// When the participant of `writer` (another process's bridge) started, in realtime ns, as its
  /// discovery said; nullopt for participants that are no bridge (or of a version that did not
  /// say). A writer is at most as old as its participant.
  std::optional<std::uint64_t> started_ns(const eprosima::fastrtps::rtps::GUID_t& writer) const;

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
  /// When other bridges' participants started, as they announced (kept while the bridge runs).
  std::map<eprosima::fastrtps::rtps::GuidPrefix_t, std::uint64_t> started_;
  /// Durable writers of others, with when they were removed (forgotten some time after).
  std::map<eprosima::fastrtps::rtps::GUID_t, std::optional<std::chrono::steady_clock::time_point>> durable_;
  std::mutex topics_mutex_;
};

}  // namespace cerulion::bridge::detail
