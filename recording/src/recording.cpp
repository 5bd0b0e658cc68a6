// SPDX-License-Identifier: Apache-2.0
#include "cerulion/recording/recording.hpp"

#include <optional>

#include "cerulion/core/names.hpp"

#include "cerulion/recording/sample_queue.hpp"
#include "mcap_consumer.hpp"

namespace cerulion::recording {

std::string numbered_file_name(const std::string& output, std::size_t index, bool splitting) {
  if (!splitting) return output;
  std::string base = output;
  std::string ext;
  if (auto dot = base.rfind(".mcap"); dot != std::string::npos && dot + 5 == base.size()) {
    ext = ".mcap";
    base.resize(dot);
  }
  return base + "_" + std::to_string(index) + ext;
}

SinkFactory file_sinks(std::string output, bool splitting, recorder::FileSinkOptions options) {
  return [output = std::move(output), splitting, options](std::size_t index) {
    return recorder::open_file_sink(numbered_file_name(output, index, splitting), options);
  };
}

namespace detail {

class RecordingImpl {
 public:
  RecordingImpl(RecordingOptions options, SinkFactory sinks)
      : options_(std::move(options)),
        consumer_(options_, std::move(sinks), [this] { return closing_counts(); }),
        queue_(consumer_, SampleQueueOptions{.max_bytes = options_.queue_bytes, .wait_for_room = options_.taps.lockstep}) {}

  ~RecordingImpl() { (void)finish(); }

  Status open() { return consumer_.open_next_file(); }

  Status start() {
    if (taps_ || finished_) return Status(ErrorCode::InvalidArgument, "the recording was started already");
    TapSetOptions tap_options = options_.taps;
    tap_options.events = options_.events;
    auto taps = TapSet::create(std::move(tap_options), queue_);
    if (!taps) return taps.status();
    taps_.emplace(std::move(taps.value()));
    queue_.start();
    taps_->start();
    return {};
  }

  Status finish() {
    if (!finished_) {
      finished_ = true;
      if (taps_) {
        taps_->stop();
        // What was published before the stop and not read yet goes in the file too, so that a
        // message published while the recording ran is in it or counted as missed or dropped.
        (void)taps_->read_ready();  // what was read before an error is kept
      }
      queue_.finish();
      consumer_.close_file();
    }
    return error();
  }

  Status error() const {
    if (Status st = consumer_.error(); !st.ok()) return st;
    return queue_.error();
  }

  std::vector<RecordingTopicCounts> counts() const {
    std::vector<RecordingTopicCounts> out;
    if (!taps_) return out;
    const auto written = consumer_.written();
    for (const auto& tap : taps_->counts()) out.push_back({tap.topic, tap.received, tap.missed, tap.dropped, 0, 0});
    for (std::size_t i = 0; i < out.size() && i < written.size(); ++i) {
      out[i].written = written[i].written;
      out[i].bytes = written[i].bytes;
      out[i].dropped += written[i].failed;
    }
    return out;
  }

  std::vector<std::string> files() const { return consumer_.files(); }
  std::uint64_t bytes_written() const { return consumer_.bytes_written(); }

 private:
  // Called on the writing thread as it closes a file: what was read and is still queued for the
  // next file is not counted yet, so "received" is exactly what the files hold plus what was
  // dropped, however far behind the writer is.
  std::vector<recorder::profile::TopicCount> closing_counts() const {
    std::vector<recorder::profile::TopicCount> out;
    for (const auto& t : counts()) out.push_back({t.topic, t.written + t.dropped, t.lost()});
    return out;
  }

  RecordingOptions options_;
  McapConsumer consumer_;
  SampleQueue queue_;
  std::optional<TapSet> taps_;
  bool finished_ = false;
};

}  // namespace detail

Result<Recording> Recording::create(RecordingOptions options, SinkFactory sinks) {
  if (!sinks) return Status(ErrorCode::InvalidArgument, "a recording needs a sink factory");
  if (options.writer.chunk_size == 0) return Status(ErrorCode::InvalidArgument, "the chunk size must be positive");
  if (Status st = validate_domain(options.taps.domain); !st.ok()) return st;
  auto impl = std::make_unique<detail::RecordingImpl>(std::move(options), std::move(sinks));
  if (Status st = impl->open(); !st.ok()) return st;
  return Recording(std::move(impl));
}

Recording::Recording(std::unique_ptr<detail::RecordingImpl> impl) : impl_(std::move(impl)) {}
Recording::Recording(Recording&&) noexcept = default;
Recording& Recording::operator=(Recording&&) noexcept = default;
Recording::~Recording() = default;

Status Recording::start() { return impl_->start(); }
Status Recording::finish() { return impl_->finish(); }
Status Recording::error() const { return impl_->error(); }
std::vector<RecordingTopicCounts> Recording::counts() const { return impl_->counts(); }
std::vector<std::string> Recording::files() const { return impl_->files(); }
std::uint64_t Recording::bytes_written() const { return impl_->bytes_written(); }

}  // namespace cerulion::recording
