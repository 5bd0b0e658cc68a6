// SPDX-License-Identifier: Apache-2.0
#pragma once
// The keeper's parts: a sink that puts what the taps take straight into the store's shared memory
// (on the taps' threads), a thread that compresses what they staged, a control thread that
// watches for triggers, and a thread that makes the dumps (at the caller's priority).

#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <thread>

#include "cerulion/flashback/keeper.hpp"
#include "stall_watch.hpp"
#include "store_impl.hpp"

namespace cerulion::flashback::detail {

class KeeperImpl;

/// Takes the tap set's samples into the store, on the taps' threads, and asks for a dump on each
/// sample of the trigger topic as the tap reads it.
class StoreSink final : public recording::SampleSink {
 public:
  StoreSink(KeeperImpl& keeper, StoreImpl& store, std::string trigger_topic)
      : keeper_(keeper), store_(store), trigger_topic_(std::move(trigger_topic)) {}
  void on_topic(const recording::TopicDescription& topic) override;
  bool on_sample(const recording::TappedSample& sample) override;

 private:
  KeeperImpl& keeper_;
  StoreImpl& store_;
  const std::string trigger_topic_;  // canonical; "" = none
  std::atomic<std::size_t> trigger_index_{~std::size_t{0}};
  std::mutex mutex_;  // guards channels_ (taps of different topics register at once)
  std::vector<std::optional<std::uint16_t>> channels_;
  std::vector<bool> seen_;  // a topic's first sample in this keeper was taken
  std::atomic<bool> dropping_{false};
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
  /// Stops `keeper` and deletes it, or leaves it to its compressing thread to delete once that
  /// thread (starved at idle priority) ends.
  static void dispose(std::unique_ptr<KeeperImpl> keeper);
  void trigger(std::string kind, std::string details, std::string note);
  /// A message on the trigger topic: its text is the note.
  void trigger_on_topic(const std::string& topic, std::span<const std::byte> data);
  /// Stops storing on `status`, a store that cannot be written (damaged): said once.
  void fail(Status status);
  Status error() const;
  void say(recording::EventKind kind, std::string subject, std::string message) const;
  std::optional<DumpSummary> last_dump() const;

  KeeperOptions options;
  Store store;

 private:
  /// Taps, compresses and watches (compression at idle priority when asked).
  Status start_keeping();
  void control_loop();
  /// Writes each dump once its post window ends (and one still waiting when the keeper stops).
  void dump_loop();
  /// Compresses what the taps staged, closes a chunk at least every second, evicts, measures rates.
  void compress_loop();
  void measure_rates(std::uint64_t now_realtime);
  void watch_deaths();
  void watch_stalls(std::uint64_t now_realtime);
  /// Counts in the store the topics that came and went before the taps could open them.
  void count_removed_unread();
  void run_pending_dump();
  /// "" when a dump may be written now; else why not.
  std::string dump_refusal();

  std::unique_ptr<StoreSink> sink_;
  std::optional<recording::TapSet> taps_;
  std::optional<StallWatch> stall_watch_;  // when options.on_stall_s > 0
  std::atomic<bool> stop_{false};
  std::atomic<bool> stop_compressing_{false};
  std::thread control_;
  std::thread dumper_;
  std::condition_variable dump_wake_;  // with mutex_: a dump is pending, or the keeper stops
  bool stop_dumping_ = false;          // guarded by mutex_
  std::thread compressor_;
  std::mutex compressor_mutex_;  // guards compressor_running_, self_
  std::condition_variable compressor_done_;
  bool compressor_running_ = false;
  std::unique_ptr<KeeperImpl> self_;  // set when disposed of while the compressor still runs
  std::uint64_t last_rate_ns_ = 0;  // compressor thread
  std::map<std::uint16_t, std::uint64_t> messages_at_last_rate_;
  mutable std::mutex mutex_;  // guards pending_, last_dump_, error_, stop_dumping_
  Status error_;
  std::optional<PendingDump> pending_;
  std::optional<DumpSummary> last_dump_;
  std::deque<std::uint64_t> dump_times_;   // monotonic ns of recent automatic dumps (dump thread)
  std::set<std::pair<std::uint32_t, std::string>> deaths_seen_;
  const std::uint64_t started_realtime_ns_ = realtime_ns();  // deaths recorded before are not ours
  bool stopped_ = false;
};

}  // namespace cerulion::flashback::detail
