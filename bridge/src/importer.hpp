// SPDX-License-Identifier: Apache-2.0
#pragma once
// Import: for each "rt/..." topic of a ROS 2 type that another participant writes, DDS readers
// whose samples a local publisher (the bridge's) publishes under the local name: std_msgs String
// and UInt8MultiArray unwrapped as they always were, any other type whole, as cdr.
//
// A durable (transient-local) reader matches only durable writers, and a volatile one gets no
// history from them, so a topic has a reader of each kind its writers need: a durable one for
// durable writers (other bridges: their history brings a new topic's first messages), a volatile
// one for volatile writers (ROS 2's default). The volatile reader matches durable writers too; it
// leaves their samples to the durable reader, so that none is published twice.
//
// What DDS did not deliver is counted from the writers' sequence numbers: a gap between two
// samples of one writer, and the first messages of a writer whose bridge started after the
// topic's durable reader was made (a bridge restarted while this one ran: everything it wrote
// was meant for this reader; an older writer's history before the reader came is not).
//
// A bridge's samples also say their origin: the topic they were published on and their sequence
// number there (exporter.hpp). Once an origin was seen, its sequence numbers are followed across
// the writers of every bridge process that exports it: what comes again (a restarted bridge
// resends what its topic's ring holds) is left out, and a gap (messages published while no bridge
// exported them, or lost on the way) is counted as lost.

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <fastdds/dds/subscriber/DataReader.hpp>
#include <fastdds/dds/subscriber/DataReaderListener.hpp>

#include "cerulion/bridge/status.hpp"
#include "cerulion/core/publisher.hpp"
#include "cerulion/recording/events.hpp"
#include "cerulion/recording/topic_selection.hpp"
#include "cerulion/ros2/msg_path.hpp"
#include "dds_types.hpp"
#include "loop_guard.hpp"
#include "participant.hpp"
#include "topic_wire.hpp"

namespace cerulion::bridge::detail {

class Importer {
 public:
  /// `lockstep`: topics it creates are lockstep, and a publish waits longer for local readers.
  /// Each topic it starts importing, and each it cannot, is said to `events`.
  Importer(Participant& participant, LoopGuard& guard, const recording::TopicMatcher& matcher, std::string domain,
           bool lockstep, recording::EventSink& events)
      : participant_(participant), guard_(guard), matcher_(matcher), domain_(std::move(domain)),
        lockstep_(lockstep), events_(events) {}
  ~Importer() { close(); }

  /// Where the definitions of ROS 2 types that writers do not announce are looked for.
  void use_msg_path(ros2::MsgPath path) { msg_path_ = std::move(path); }
  /// Follows a writer discovery found: a new bridged topic that the selection takes gets its
  /// reader and local publisher.
  void discovered(const DiscoveredWriter& writer);
  std::vector<BridgedTopic> topics() const;
  /// Deletes the readers; no listener runs once it returns.
  void close();

 private:
  struct Topic final : eprosima::fastdds::dds::DataReaderListener {
    std::string name, dds_topic;
    TopicWire wire;
    const Participant* participant = nullptr;
    LoopGuard::Entry* guard = nullptr;
    std::optional<Publisher> publisher;
    /// Made when the first writer of its kind appears (each once: a second try is not made).
    eprosima::fastdds::dds::DataReader* durable_reader = nullptr;
    eprosima::fastdds::dds::DataReader* volatile_reader = nullptr;
    bool durable_tried = false, volatile_tried = false;
    WireMessage message;
    std::mutex receiving;
    std::chrono::milliseconds publish_wait{100};
    std::atomic<std::uint64_t> messages{0}, bytes{0}, failed{0};
    /// Messages missing from the writers' sequences (see above).
    std::atomic<std::uint64_t> skipped{0};
    /// The last sequence number taken from each writer, and from each origin (under `receiving`).
    std::map<eprosima::fastrtps::rtps::GUID_t, std::uint64_t> last_sequence, last_origin_sequence;
    /// Whether samples with an origin came: then their sequences count what was lost, and DDS's
    /// own count (which sees a restarted writer's resent samples it dropped as lost) is not used.
    std::atomic<bool> origins{false};
    /// When the durable reader was made (realtime ns); 0 before.
    std::atomic<std::uint64_t> durable_since_ns{0};
    std::uint64_t dds_lost = 0;  ///< lost and rejected as DDS last reported them
    std::uint32_t peers = 0;
    void on_data_available(eprosima::fastdds::dds::DataReader* reader) override;
    /// Counts what is missing before sample `sequence` of `writer`.
    void follow_sequence(const eprosima::fastrtps::rtps::GUID_t& writer, std::uint64_t sequence, bool durable);
    /// Counts what is missing before a sample of `writer` whose origin `info` says; false when it
    /// was taken before (not to be published again).
    bool follow_origin(const eprosima::fastdds::dds::SampleInfo& info, bool durable);
  };
  /// The local publisher of a new topic, of the type the exporting bridge announced (raw bytes for
  /// writers that announce none). What it cannot take of that type is said as a warning.
  Status open_publisher(Topic& t, const TypeAnnouncement& announced);
  /// The type a new topic is created with.
  std::optional<TopicType> imported_type(const Topic& t, const TypeAnnouncement& announced);
  /// The type of a topic of a ROS 2 type (Cdr): the announced schema, else the msg path's, else
  /// the type's name alone (said once). ros2_import.cpp.
  TopicType ros2_type(const Topic& t, const TypeAnnouncement& announced);
  /// The topic's reader of that kind.
  Status open_reader(Topic& t, bool durable);

  Participant& participant_;
  LoopGuard& guard_;
  const recording::TopicMatcher& matcher_;
  std::string domain_;
  bool lockstep_;
  recording::EventSink& events_;
  ros2::MsgPath msg_path_;
  mutable std::mutex mutex_;
  std::map<std::string, std::unique_ptr<Topic>> topics_;  ///< by DDS topic name
};

}  // namespace cerulion::bridge::detail
