#include "record_session.hpp"

#include <chrono>
#include <cstring>
#include <unistd.h>

#include <fmt/core.h>

#include "cerulion/core/discovery.hpp"
#include "cerulion/core/subscriber.hpp"
#include "command.hpp"

namespace cerulion::cli {

RecordSession::RecordSession(RecordSettings settings, std::string domain)
    : settings_(std::move(settings)), domain_(std::move(domain)) {}

RecordSession::~RecordSession() { stop_threads(); }

void RecordSession::stop_threads() {
  {
    // Under the lock, so that a lockstep tap about to wait for queue room cannot miss it.
    std::lock_guard lock(mutex_);
    stop_taps_.store(true);
  }
  room_.notify_all();
  for (auto& t : tap_threads_) if (t.joinable()) t.join();
  {
    std::lock_guard lock(mutex_);
    writer_done_ = true;
  }
  ready_.notify_all();
  if (writer_thread_.joinable()) writer_thread_.join();
}

std::string RecordSession::file_name(std::size_t index) const {
  if (settings_.split_size == 0 && settings_.split_duration_s <= 0) return settings_.output;
  std::string base = settings_.output;
  std::string ext;
  if (auto dot = base.rfind(".mcap"); dot != std::string::npos && dot + 5 == base.size()) {
    ext = ".mcap";
    base.resize(dot);
  }
  return fmt::format("{}_{}{}", base, index, ext);
}

void RecordSession::start() {
  // Refuse before any tap starts: an existing file is a usage mistake, not a runtime failure.
  if (!open_next_file()) throw Exit{kExitFailure, error()};
  writer_thread_ = std::thread([this] { writer_loop(); });
}

bool RecordSession::open_next_file() {
  recorder::WriterOptions o;
  o.compression = settings_.compression == "none" ? recorder::Compression::None : recorder::Compression::Zstd;
  o.compression_level = settings_.level;
  o.chunk_size = settings_.chunk_size;
  o.overwrite = settings_.force;
  o.library = std::string("cerulion ") + CERULION_VERSION;
  std::string name = file_name(file_index_++);
  auto w = recorder::Writer::create(name, o);
  if (!w) {
    std::lock_guard lock(mutex_);
    error_ = w.message();
    return false;
  }
  writer_.emplace(std::move(w.value()));
  channel_of_topic_.clear();
  file_started_ns_ = realtime_ns();
  std::lock_guard lock(mutex_);
  files_.push_back(name);
  return true;
}

void RecordSession::close_file() {
  if (!writer_) return;
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  recorder::Metadata md;
  md.name = "cerulion.recording";
  md.metadata["host"] = host;
  md.metadata["cerulion_version"] = CERULION_VERSION;
  md.metadata["domain"] = domain_;
  for (const auto& t : counters()) {
    md.metadata["received:" + t->topic] = std::to_string(t->received.load());
    md.metadata["lost:" + t->topic] = std::to_string(t->missed.load() + t->queue_drops.load());
  }
  Status st = writer_->write_metadata(md);
  if (st) st = writer_->close();
  file_bytes_done_ += writer_->counters().file_bytes;
  current_file_bytes_.store(0);
  writer_.reset();
  if (!st) {
    std::lock_guard lock(mutex_);
    if (error_.empty()) error_ = st.message();
  }
}

bool RecordSession::tap(const std::string& topic, std::string& error, StartAt start) {
  {
    std::lock_guard lock(mutex_);
    for (const auto& t : topics_) if (t->topic == topic) return true;
  }
  SubscriberOptions options;
  options.role = settings_.lockstep ? Role::Subscriber : Role::Tap;
  options.start = start;
  options.topic.domain = domain_;
  options.wait.cancel = &stop_taps_;
  auto sub = Subscriber::create(topic, options);
  if (!sub) {
    error = sub.message();
    return false;
  }
  auto counters = std::make_shared<TopicCounters>();
  counters->topic = sub->topic();
  counters->mode = to_string(sub->mode());
  if (auto info = inspect_topic(sub->topic(), domain_); info.ok()) {
    counters->depth = info->depth;
    counters->max_payload = info->max_payload;
  }
  std::size_t index;
  {
    std::lock_guard lock(mutex_);
    index = topics_.size();
    topics_.push_back(counters);
  }
  auto shared_sub = std::make_shared<Subscriber>(std::move(sub.value()));
  tap_threads_.emplace_back([this, index, shared_sub] {
    auto counters = [&] {
      std::lock_guard lock(mutex_);
      return topics_[index];
    }();
    bool first = true;
    while (!stop_taps_.load(std::memory_order_relaxed)) {
      auto sample = shared_sub->receive(std::chrono::milliseconds(100));
      if (!sample) {
        if (sample.code() == ErrorCode::Timeout) continue;
        if (sample.code() == ErrorCode::Interrupted) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        continue;
      }
      if (first) {
        // A tap that created the topic saw provisional settings; the publisher has fixed them now.
        // Written before the first item is queued, so the writer thread reads them after this.
        first = false;
        counters->mode = to_string(shared_sub->mode());
        if (auto info = inspect_topic(counters->topic, domain_); info.ok()) {
          counters->depth = info->depth;
          counters->max_payload = info->max_payload;
        }
      }
      counters->received.fetch_add(1, std::memory_order_relaxed);
      counters->missed.fetch_add(sample->lost_before(), std::memory_order_relaxed);
      Item item{index, static_cast<std::uint32_t>(sample->sequence()), realtime_ns(),
                sample->publish_realtime_ns(), {}};
      const std::size_t size = sample->size();
      {
        std::unique_lock lock(mutex_);
        auto full = [&] { return queued_bytes_ + size > settings_.queue_bytes && !queue_.empty(); };
        if (settings_.lockstep) {
          // Holding the sample holds the publishers back: the disk sets the pace.
          room_.wait(lock, [&] { return !full() || writer_done_ || stop_taps_.load(); });
        } else if (full()) {
          counters->queue_drops.fetch_add(1, std::memory_order_relaxed);
          continue;
        }
      }
      // Copy outside the lock, then let go of the slot before the writer ever sees it.
      item.data.assign(sample->data().begin(), sample->data().end());
      sample->release();
      {
        std::lock_guard lock(mutex_);
        queued_bytes_ += size;
        queue_.push_back(std::move(item));
      }
      ready_.notify_one();
    }
  });
  return true;
}

void RecordSession::writer_loop() {
  for (;;) {
    std::deque<Item> batch;
    {
      std::unique_lock lock(mutex_);
      ready_.wait_for(lock, std::chrono::milliseconds(200), [&] { return !queue_.empty() || writer_done_; });
      if (queue_.empty() && writer_done_) break;
      batch.swap(queue_);
    }
    // The batch still counts against the queue budget until each item is on its way to disk:
    // that is what makes a slow disk show up as drops instead of unbounded memory.
    for (auto& item : batch) {
      struct Release {
        RecordSession* self;
        std::size_t bytes;
        ~Release() {
          {
            std::lock_guard lock(self->mutex_);
            self->queued_bytes_ -= bytes;
          }
          self->room_.notify_all();
        }
      } release{this, item.data.size()};
      if (!writer_) continue;
      std::shared_ptr<TopicCounters> t;
      {
        std::lock_guard lock(mutex_);
        t = topics_[item.topic_index];
      }
      bool split = (settings_.split_size && current_file_bytes_.load() >= settings_.split_size) ||
                   (settings_.split_duration_s > 0 &&
                    item.log_time - file_started_ns_ >= static_cast<std::uint64_t>(settings_.split_duration_s * 1e9));
      if (split && writer_->counters().messages > 0) {
        close_file();
        if (!open_next_file()) return;
      }
      auto ch = channel_of_topic_.find(item.topic_index);
      if (ch == channel_of_topic_.end()) {
        recorder::KeyValueMap md{{"domain", domain_}, {"mode", t->mode}};
        if (t->depth) md["depth"] = std::to_string(t->depth);
        if (t->max_payload) md["max_payload"] = std::to_string(t->max_payload);
        auto id = writer_->add_channel(t->topic, "x-cerulion-bytes", 0, md);
        if (!id) {
          std::lock_guard lock(mutex_);
          error_ = id.message();
          continue;
        }
        ch = channel_of_topic_.emplace(item.topic_index, *id).first;
      }
      Status st = writer_->write(ch->second, item.sequence, item.log_time, item.publish_time, item.data);
      if (!st) {
        std::lock_guard lock(mutex_);
        if (error_.empty()) error_ = st.message();
        t->queue_drops.fetch_add(1);
        continue;
      }
      t->written.fetch_add(1, std::memory_order_relaxed);
      t->bytes.fetch_add(item.data.size(), std::memory_order_relaxed);
      current_file_bytes_.store(writer_->counters().file_bytes);
    }
    if (settings_.split_duration_s > 0 && writer_ && writer_->counters().messages > 0 &&
        realtime_ns() - file_started_ns_ >= static_cast<std::uint64_t>(settings_.split_duration_s * 1e9)) {
      close_file();
      if (!open_next_file()) return;
    }
  }
}

void RecordSession::finish() {
  stop_threads();
  close_file();
}

std::vector<std::shared_ptr<TopicCounters>> RecordSession::counters() const {
  std::lock_guard lock(mutex_);
  return topics_;
}

std::vector<std::string> RecordSession::files() const {
  std::lock_guard lock(mutex_);
  return files_;
}

std::string RecordSession::error() const {
  std::lock_guard lock(mutex_);
  return error_;
}

}  // namespace cerulion::cli
