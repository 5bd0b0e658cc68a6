// SPDX-License-Identifier: Apache-2.0
#include "mcap_consumer.hpp"

#include <unistd.h>

namespace cerulion::recording::detail {

namespace profile = recorder::profile;

McapConsumer::McapConsumer(const RecordingOptions& options, SinkFactory sinks,
                           std::function<std::vector<profile::TopicCount>()> closing_counts)
    : options_(options), sinks_(std::move(sinks)), closing_counts_(std::move(closing_counts)) {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  host_ = host;
}

void McapConsumer::fail(const Status& status) {
  std::lock_guard lock(mutex_);
  if (error_.ok()) error_ = status;
}

Status McapConsumer::error() const {
  std::lock_guard lock(mutex_);
  return error_;
}

std::vector<WrittenCounts> McapConsumer::written() const {
  std::lock_guard lock(mutex_);
  return written_;
}

std::vector<std::string> McapConsumer::files() const {
  std::lock_guard lock(mutex_);
  return files_;
}

Status McapConsumer::open_next_file() {
  auto sink = sinks_(file_index_++);
  if (!sink) return sink.status();
  std::string name = (*sink)->name();
  recorder::WriterOptions o = options_.writer;
  auto writer = recorder::Writer::create(std::move(sink.value()), o);
  if (!writer) return writer.status();
  writer_.emplace(std::move(writer.value()));
  channel_of_topic_.clear();
  schema_ids_.clear();
  file_started_ns_ = realtime_ns();
  report(options_.events, EventKind::Info, name, "writing " + name);
  std::lock_guard lock(mutex_);
  files_.push_back(std::move(name));
  return {};
}

void McapConsumer::close_file() {
  if (!writer_) return;
  profile::RecordingSummary summary;
  summary.host = host_;
  summary.cerulion_version = CERULION_RECORDING_VERSION;
  summary.domain = options_.taps.domain;
  summary.topics = closing_counts_();
  Status st = writer_->write_metadata(profile::recording_metadata(summary));
  if (st.ok()) st = writer_->close();
  file_bytes_done_ += writer_->counters().file_bytes;
  current_file_bytes_.store(0);
  writer_.reset();
  if (!st.ok()) fail(st);
}

Status McapConsumer::on_topic(const TopicDescription& topic) {
  topics_[topic.index] = topic;
  std::lock_guard lock(mutex_);
  if (written_.size() <= topic.index) written_.resize(topic.index + 1);
  return {};
}

Status McapConsumer::maybe_split(std::uint64_t log_time) {
  if (!writer_ || writer_->counters().messages == 0) return {};
  const bool full = options_.split_size && current_file_bytes_.load() >= options_.split_size;
  const bool old = options_.split_duration_ns && log_time >= file_started_ns_ &&
                   log_time - file_started_ns_ >= options_.split_duration_ns;
  if (!full && !old) return {};
  close_file();
  return open_next_file();
}

Status McapConsumer::consume(QueuedSample& sample) {
  auto count_failure = [&](const Status& st) {
    fail(st);
    std::lock_guard lock(mutex_);
    if (written_.size() <= sample.topic_index) written_.resize(sample.topic_index + 1);
    ++written_[sample.topic_index].failed;
    return Status{};
  };
  if (!error().ok()) return count_failure(error());
  if (Status st = maybe_split(sample.log_time); !st.ok()) return count_failure(st);
  if (!writer_) return count_failure(Status(ErrorCode::InvalidArgument, "no file is open"));
  auto channel = channel_of_topic_.find(sample.topic_index);
  if (channel == channel_of_topic_.end()) {
    const TopicDescription& topic = topics_[sample.topic_index];
    profile::TopicSettings settings{topic.domain, to_string(topic.mode), topic.depth, topic.max_payload};
    const profile::ChannelType type = profile::channel_type(topic.type);
    auto schema = profile::schema_id(*writer_, schema_ids_, type.schema);
    if (!schema) return count_failure(schema.status());
    auto id = writer_->add_channel(topic.topic, type.message_encoding, *schema, profile::channel_metadata(settings));
    if (!id) return count_failure(id.status());
    channel = channel_of_topic_.emplace(sample.topic_index, *id).first;
  }
  // MCAP sequences are 32 bits; the topic's 64-bit sequence wraps there.
  Status st = writer_->write(channel->second, static_cast<std::uint32_t>(sample.sequence), sample.log_time,
                             sample.publish_time, sample.data);
  if (!st.ok()) return count_failure(st);
  current_file_bytes_.store(writer_->counters().file_bytes);
  std::lock_guard lock(mutex_);
  if (written_.size() <= sample.topic_index) written_.resize(sample.topic_index + 1);
  ++written_[sample.topic_index].written;
  written_[sample.topic_index].bytes += sample.data.size();
  return {};
}

Status McapConsumer::on_idle(std::uint64_t realtime_ns) {
  // A quiet topic still gets its files cut on time.
  if (options_.split_duration_ns && error().ok()) {
    if (Status st = maybe_split(realtime_ns); !st.ok()) fail(st);
  }
  return {};
}

}  // namespace cerulion::recording::detail
