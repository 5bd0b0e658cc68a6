// SPDX-License-Identifier: Apache-2.0
#pragma once
// A bounded queue between a tap set's threads and one consumer thread: the sink copies each sample
// and lets go of the slot at once; the consumer (an MCAP writer, a flashback store) takes them in
// order on its own thread. A full queue drops and counts (a tap never waits), unless the queue
// waits for room (a lockstep set: the consumer sets the pace).

#include <cstdint>
#include <memory>
#include <vector>

#include "cerulion/core/status.hpp"
#include "cerulion/recording/tap_set.hpp"

namespace cerulion::recording {

/// A sample as queued: its own copy of the bytes. log_time is never smaller than the previous
/// sample's, so a consumer writes messages in log-time order.
struct QueuedSample {
  std::size_t topic_index = 0;
  std::uint64_t sequence = 0;
  std::uint64_t publish_time = 0;
  std::uint64_t log_time = 0;
  std::uint32_t publisher_pid = 0;
  std::vector<std::byte> data;
};

/// What the consumer thread calls.
class SampleConsumer {
 public:
  virtual ~SampleConsumer() = default;
  /// Before the first sample of a topic.
  virtual Status on_topic(const TopicDescription& topic) = 0;
  /// One sample; an error stops the queue (error() then says it).
  virtual Status consume(QueuedSample& sample) = 0;
  /// At least every 100 ms, also when idle (time-based splitting, chunk closing).
  virtual Status on_idle(std::uint64_t realtime_ns) { (void)realtime_ns; return {}; }
};

struct SampleQueueOptions {
  /// Bytes of payload queued at most (default 256 MiB).
  std::uint64_t max_bytes = 256u << 20;
  /// Wait for room instead of dropping (lockstep).
  bool wait_for_room = false;
};

namespace detail {
class SampleQueueImpl;
}

/// A SampleSink that queues for a consumer thread. Move-only.
class SampleQueue : public SampleSink {
 public:
  SampleQueue(SampleConsumer& consumer, SampleQueueOptions options = {});
  ~SampleQueue() override;
  void on_topic(const TopicDescription& topic) override;
  bool on_sample(const TappedSample& sample) override;
  /// Starts the consumer thread.
  void start();
  /// Lets the consumer drain what is queued, then stops it.
  void finish();
  /// The consumer's error that stopped the queue (ok while fine).
  Status error() const;

 private:
  std::unique_ptr<detail::SampleQueueImpl> impl_;
};

}  // namespace cerulion::recording
