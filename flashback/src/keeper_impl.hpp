// SPDX-License-Identifier: Apache-2.0
#pragma once
// The keeper's parts: a consumer that writes taken samples into the store (one thread), and a
// control thread that watches for triggers and makes the dumps.

#include <atomic>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <thread>

#include "cerulion/flashback/keeper.hpp"
#include "cerulion/recording/sample_queue.hpp"
#include "stall_watch.hpp"
#include "store_impl.hpp"

namespace cerulion::flashback::detail {

/// Writes samples into the store, on the queue's consumer thread.
class StoreConsumer final : public recording::SampleConsumer {
 public:
  explicit StoreConsumer(StoreImpl& store) : store_(store) {}
  Status on_topic(const recording::TopicDescription& topic) override;
  Status consume(recording::QueuedSample& sample) override;
  Status on_idle(std::uint64_t realtime_ns) override;

  /// The channel of each topic index (for lost counters).
  std::optional<std::uint16_t> channel_of(std::size_t topic_index) const;

 private:
  StoreImpl& store_;
  mutable std::mutex mutex_;  // guards channels_ (read by the control thread)
  std::vector<std::optional<std::uint16_t>> channels_;
  std::uint64_t last_rate_ns_ = 0;
  std::map<std::uint16_t, std::uint64_t> messages_at_last_rate_;
};

class KeeperImpl;

/// Hands the tap set's samples on to the queue, and asks for a dump on each sample of the trigger
/// topic as the tap reads it (before the queue, which may drop under load).
class TriggerTap final : public recording::SampleSink {
 public:
  TriggerTap(KeeperImpl& keeper, recording::SampleSink& next, std::string topic)
      : keeper_(keeper), next_(next), topic_(std::move(topic)) {}
  void on_topic(const recording::TopicDescription& topic) override;
  bool on_sample(const recording::TappedSample& sample) override;

 private:
  KeeperImpl& keeper_;
  recording::SampleSink& next_;
  const std::string topic_;  // canonical; "" = none
  std::atomic<std::size_t> index_{~std::size_t{0}};
};

/// "12.0 MiB": a size as the keeper's events say it.
std::string amount(double bytes);

/// A dump waiting for its post window.
struct PendingDump {
  std::uint64_t due_ns = 0;   // monotonic
  std::string kind;
  std::vector<std::string> details;
  std::vector<std::string> notes;
};

class KeeperImpl {
 public:
  KeeperImpl(KeeperOptions options, Store store);
  ~KeeperImpl();
  Status start();
  void stop();
  void trigger(std::string kind, std::string details, std::string note);
  /// A message on the trigger topic: its text is the note.
  void trigger_on_topic(const std::string& topic, std::span<const std::byte> data);
  Status error() const { return queue_ ? queue_->error() : Status{}; }
  std::optional<DumpSummary> last_dump() const;

  KeeperOptions options;
  Store store;

 private:
  void control_loop();
  void watch_deaths();
  void watch_stalls(std::uint64_t now_realtime);
  void update_losses();
  void run_pending_dump();
  /// "" when a dump may be written now; else why not.
  std::string dump_refusal();
  void say(recording::EventKind kind, std::string subject, std::string message) const;

  StoreConsumer consumer_;
  std::unique_ptr<recording::SampleQueue> queue_;
  std::unique_ptr<TriggerTap> trigger_tap_;
  std::optional<recording::TapSet> taps_;
  std::map<std::string, std::uint64_t> lost_before_start_;  // a dead keeper's counts, per topic
  std::optional<StallWatch> stall_watch_;  // when options.on_stall_s > 0
  std::atomic<bool> stop_{false};
  std::thread control_;
  mutable std::mutex mutex_;  // guards pending_, last_dump_
  std::optional<PendingDump> pending_;
  std::optional<DumpSummary> last_dump_;
  std::deque<std::uint64_t> dump_times_;   // monotonic ns of recent automatic dumps
  std::set<std::pair<std::uint32_t, std::string>> deaths_seen_;
  const std::uint64_t started_realtime_ns_ = realtime_ns();  // deaths recorded before are not ours
  bool stopped_ = false;
};

}  // namespace cerulion::flashback::detail
