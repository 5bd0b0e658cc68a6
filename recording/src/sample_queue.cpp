// SPDX-License-Identifier: Apache-2.0
#include "cerulion/recording/sample_queue.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace cerulion::recording {
namespace detail {

namespace {
/// The consumer's on_idle is called at least this often.
constexpr auto kIdlePeriod = std::chrono::milliseconds(100);
/// Buffers of consumed samples kept for reuse (and at most a quarter of the queue's budget).
constexpr std::size_t kMaxSpareBuffers = 8;
}  // namespace

class SampleQueueImpl {
 public:
  SampleQueueImpl(SampleConsumer& consumer, SampleQueueOptions options) : consumer_(consumer), options_(options) {}

  void on_topic(const TopicDescription& topic) {
    {
      std::lock_guard lock(mutex_);
      if (stopped_) return;
      // Queued like a sample, so the consumer learns of a topic before its first sample.
      queue_.push_back(Item{topic, {}});
    }
    ready_.notify_one();
  }

  bool on_sample(const TappedSample& sample) {
    const std::size_t size = sample.data.size();
    {
      std::unique_lock lock(mutex_);
      // Something already counted: one sample larger than the whole budget still gets through alone.
      auto full = [&] { return queued_bytes_ > 0 && queued_bytes_ + size > options_.max_bytes; };
      if (options_.wait_for_room) {
        // Holding the sample holds lockstep publishers back: the consumer sets the pace.
        room_.wait(lock, [&] { return !full() || stopped_; });
      }
      if (stopped_ || full()) return false;
      // Counted now, copied outside the lock.
      queued_bytes_ += size;
    }
    QueuedSample queued;
    queued.data = take_spare(size);
    queued.topic_index = sample.topic_index;
    queued.sequence = sample.sequence;
    queued.publish_time = sample.publish_time;
    queued.publisher_pid = sample.publisher_pid;
    queued.data.assign(sample.data.begin(), sample.data.end());
    {
      std::lock_guard lock(mutex_);
      if (stopped_) {
        queued_bytes_ -= size;
        return false;
      }
      // Stamped under the lock and never smaller than the one before: the queue is in log-time
      // order whatever thread read what when.
      last_log_time_ = std::max(last_log_time_, sample.log_time);
      queued.log_time = last_log_time_;
      queue_.push_back(Item{std::nullopt, std::move(queued)});
    }
    ready_.notify_one();
    return true;
  }

  void start() {
    std::lock_guard lock(mutex_);
    if (thread_.joinable() || stopped_) return;
    thread_ = std::thread([this] { run(); });
  }

  void finish() {
    {
      std::lock_guard lock(mutex_);
      finishing_ = true;
    }
    ready_.notify_all();
    if (thread_.joinable()) thread_.join();
    std::lock_guard lock(mutex_);
    stopped_ = true;
    room_.notify_all();
  }

  Status error() const {
    std::lock_guard lock(mutex_);
    return error_;
  }

 private:
  struct Item {
    std::optional<TopicDescription> topic;
    QueuedSample sample;
  };

  void run() {
    auto last_idle = std::chrono::steady_clock::now();
    for (;;) {
      std::deque<Item> batch;
      {
        std::unique_lock lock(mutex_);
        ready_.wait_for(lock, kIdlePeriod, [&] { return !queue_.empty() || finishing_; });
        if (queue_.empty() && finishing_) {
          stopped_ = true;  // a late sample is dropped (and counted), not left unconsumed
          break;
        }
        batch.swap(queue_);
      }
      // The batch still counts against the budget until each item is consumed: that is what makes
      // a slow consumer show up as drops (or waits) instead of unbounded memory.
      Status st;
      for (auto& item : batch) {
        const std::size_t size = item.topic ? 0 : item.sample.data.size();
        if (st.ok()) st = item.topic ? consumer_.on_topic(*item.topic) : consumer_.consume(item.sample);
        if (size) release(size, std::move(item.sample.data));
      }
      if (st.ok() && std::chrono::steady_clock::now() - last_idle >= kIdlePeriod) {
        st = consumer_.on_idle(realtime_ns());
        last_idle = std::chrono::steady_clock::now();
      }
      if (!st.ok()) {
        stop_with(st);
        return;
      }
    }
  }

  void release(std::size_t bytes, std::vector<std::byte> buffer) {
    {
      std::lock_guard lock(mutex_);
      queued_bytes_ -= bytes;
      // Kept for the next sample: a fresh buffer for every large message would cost a page fault
      // per page copied, more than the copy itself.
      if (spare_.size() < kMaxSpareBuffers && spare_bytes_ + buffer.capacity() <= options_.max_bytes / 4) {
        spare_bytes_ += buffer.capacity();
        spare_.push_back(std::move(buffer));
      }
    }
    room_.notify_all();
  }

  // A spare buffer that holds `size` bytes without growing, if there is one (else an empty one).
  std::vector<std::byte> take_spare(std::size_t size) {
    std::lock_guard lock(mutex_);
    for (auto it = spare_.begin(); it != spare_.end(); ++it) {
      if (it->capacity() < size) continue;
      std::vector<std::byte> buffer = std::move(*it);
      spare_bytes_ -= buffer.capacity();
      spare_.erase(it);
      buffer.clear();
      return buffer;
    }
    return {};
  }

  /// The consumer failed: nothing more is queued, and whoever waits for room gives up.
  void stop_with(Status st) {
    {
      std::lock_guard lock(mutex_);
      error_ = std::move(st);
      stopped_ = true;
      for (const auto& item : queue_) queued_bytes_ -= item.sample.data.size();
      queue_.clear();
    }
    room_.notify_all();
  }

  SampleConsumer& consumer_;
  const SampleQueueOptions options_;
  mutable std::mutex mutex_;
  std::condition_variable ready_;
  std::condition_variable room_;
  std::deque<Item> queue_;
  std::uint64_t queued_bytes_ = 0;
  std::vector<std::vector<std::byte>> spare_;  // buffers of consumed samples, for reuse
  std::uint64_t spare_bytes_ = 0;
  std::uint64_t last_log_time_ = 0;
  bool finishing_ = false;
  bool stopped_ = false;
  Status error_;
  std::thread thread_;
};

}  // namespace detail

SampleQueue::SampleQueue(SampleConsumer& consumer, SampleQueueOptions options)
    : impl_(std::make_unique<detail::SampleQueueImpl>(consumer, options)) {}
SampleQueue::~SampleQueue() { finish(); }
void SampleQueue::on_topic(const TopicDescription& topic) { impl_->on_topic(topic); }
bool SampleQueue::on_sample(const TappedSample& sample) { return impl_->on_sample(sample); }
void SampleQueue::start() { impl_->start(); }
void SampleQueue::finish() { impl_->finish(); }
Status SampleQueue::error() const { return impl_->error(); }

}  // namespace cerulion::recording
