// SPDX-License-Identifier: Apache-2.0
#pragma once
// Export: the local readers hand each local sample here, and it is written to the topic's DDS writer
// (created with the first sample that is not the bridge's own import).
//
// A new writer's keep-last history holds only `depth` samples, and discovery of a new participant
// (a restarted bridge) by the importing bridges takes longer than that many samples of a busy
// topic: written straight away, its first messages would leave the history before an importing
// reader matched the writer. So a new writer's samples are held here until a reader of another
// participant matched it and acknowledged the first of them (proof that it matched the writer
// too), or a while after the match, or longer without any reader; then they are written in order,
// and from then on each as it comes. While held, the oldest beyond a bound go to the writer
// (whose history keeps them as it would have). What is lost anyway shows at the importing bridge,
// which counts the gaps in the writer's sequence numbers.
//
// Each sample carries where it comes from: its topic here (an identity of the host, the cerulion
// domain, the topic and when it was created) and its sequence number there, as the DDS sample's
// related sample identity. A bridge restarted on a running topic starts reading at the oldest
// message its ring still holds; the importing bridge leaves out what it had already, and counts
// as lost the gap it sees in those sequence numbers, whatever bridge process wrote them.

#include <atomic>
#include <chrono>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include <fastdds/dds/publisher/DataWriter.hpp>
#include <fastdds/dds/publisher/DataWriterListener.hpp>

#include "cerulion/bridge/status.hpp"
#include "cerulion/recording/events.hpp"
#include "cerulion/recording/tap_set.hpp"
#include "loop_guard.hpp"
#include "participant.hpp"
#include "topic_wire.hpp"

namespace cerulion::bridge::detail {

class Exporter final : public recording::SampleSink {
 public:
  /// Says each topic it starts exporting, and each it cannot, to `events`. `started_ns`: when the
  /// bridge started (realtime ns): the messages of an older topic that went before what its ring
  /// holds are not this bridge's to count as lost.
  Exporter(Participant& participant, LoopGuard& guard, recording::EventSink& events, std::uint64_t started_ns)
      : participant_(participant), guard_(guard), events_(events), started_ns_(started_ns) {}
  ~Exporter() override { close(); }

  void on_topic(const recording::TopicDescription& topic) override;
  bool on_sample(const recording::TappedSample& sample) override;

  /// The exported topics (those with a DDS writer), with the readers' counts folded in.
  std::vector<BridgedTopic> topics(const std::vector<recording::TopicCounts>& counts) const;
  /// Writes what new writers held once they may (the control thread's, called often: a topic
  /// that goes quiet still sends what it held).
  void service();
  /// Writes what is still held, waits a moment for remote readers to acknowledge, and deletes the
  /// writers (after the tap set stopped).
  void close();

 private:
  struct Topic final : eprosima::fastdds::dds::DataWriterListener {
    std::string name;
    TopicType type;
    TopicWire wire;  ///< how it goes out (set when its writer is made)
    bool refused_said = false;  ///< a message it could not send was reported (once)
    const Participant* participant = nullptr;
    std::mutex mutex;
    eprosima::fastdds::dds::DataWriter* writer = nullptr;
    bool unusable = false;
    bool opened = false;  ///< a writer was created (still counted after close())
    /// Where its samples come from (see above).
    eprosima::fastrtps::rtps::GUID_t origin;
    /// The topic is older than the bridge: the first sample's lost_before is history, not a loss.
    bool older = false;
    bool first_read = false;
    std::atomic<std::uint64_t> history{0};
    /// Samples not yet written, oldest first (copies); written as they come once `direct`.
    struct Held {
      std::uint64_t sequence = 0;
      std::vector<std::byte> data;
    };
    std::deque<Held> held;
    std::size_t held_bytes = 0;
    bool direct = false;
    bool probed = false;  ///< the first held samples were written, for a matched reader to acknowledge
    std::chrono::steady_clock::time_point opened_at, probed_at;
    /// Readers of other participants matched now (the bridge's own importing readers not counted).
    std::atomic<int> remote_readers{0};
    std::atomic<std::uint64_t> messages{0}, bytes{0};
    std::atomic<std::uint64_t> failed{0};  ///< held samples the writer refused (the tap counts the rest)
    void on_publication_matched(eprosima::fastdds::dds::DataWriter*,
                                const eprosima::fastdds::dds::PublicationMatchedStatus& status) override;
  };
  Topic* at(std::size_t index) const;
  bool open_writer(Topic& t);
  /// Whether a sample of a topic of a ROS 2 type is CDR that ROS 2 nodes read; says once when not.
  bool ros2_ready(Topic& t, const recording::TappedSample& sample);
  /// Writes one sample, counting it (a failure is for the caller to count). With the topic's lock held.
  bool write(Topic& t, std::uint64_t sequence, std::span<const std::byte> data);
  /// Writes the oldest held sample, counting a failure as lost.
  void write_held(Topic& t);
  /// Writes what the topic held once it may, and then lets samples through as they come. With the
  /// topic's lock held.
  void release(Topic& t);

  Participant& participant_;
  LoopGuard& guard_;
  recording::EventSink& events_;
  const std::uint64_t started_ns_;
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<Topic>> topics_;  ///< by the tap set's topic index
};

}  // namespace cerulion::bridge::detail
