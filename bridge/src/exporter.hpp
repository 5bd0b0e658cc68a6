// SPDX-License-Identifier: Apache-2.0
#pragma once
// Export: the local readers hand each local sample here, and it is written to the topic's DDS writer
// (created with the first sample that is not the bridge's own import).

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <fastdds/dds/publisher/DataWriter.hpp>

#include "cerulion/bridge/status.hpp"
#include "cerulion/recording/events.hpp"
#include "cerulion/recording/tap_set.hpp"
#include "loop_guard.hpp"
#include "participant.hpp"

namespace cerulion::bridge::detail {

class Exporter final : public recording::SampleSink {
 public:
  /// Says each topic it starts exporting, and each it cannot, to `events`.
  Exporter(Participant& participant, LoopGuard& guard, recording::EventSink& events)
      : participant_(participant), guard_(guard), events_(events) {}
  ~Exporter() override { close(); }

  void on_topic(const recording::TopicDescription& topic) override;
  bool on_sample(const recording::TappedSample& sample) override;

  /// The exported topics (those with a DDS writer), with the readers' counts folded in.
  std::vector<BridgedTopic> topics(const std::vector<recording::TopicCounts>& counts) const;
  /// Deletes the writers (after the tap set stopped).
  void close();

 private:
  struct Topic {
    std::string name;
    TopicType type;
    std::mutex mutex;
    eprosima::fastdds::dds::DataWriter* writer = nullptr;
    bool unusable = false;
    bool opened = false;  ///< a writer was created (still counted after close())
    std::atomic<std::uint64_t> messages{0}, bytes{0}, failed{0};
  };
  Topic* at(std::size_t index) const;
  bool open_writer(Topic& t);

  Participant& participant_;
  LoopGuard& guard_;
  recording::EventSink& events_;
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<Topic>> topics_;  ///< by the tap set's topic index
};

}  // namespace cerulion::bridge::detail
