// SPDX-License-Identifier: Apache-2.0
// The reader threads of a TapSet. Pooled: a fixed number, each polling its share of the topics, so
// that a set watching 200 topics runs a few threads rather than 200. Per topic: one thread each,
// blocked in the topic's own wait, for a sink that must have each sample at once.

#include <algorithm>
#include <chrono>

#include "cerulion/core/discovery.hpp"
#include "tap_set_impl.hpp"

namespace cerulion::recording::detail {
namespace {

/// Samples taken from one topic per visit: enough to empty a default ring in one go, few enough
/// that a flooded topic leaves its thread's other topics their turn.
constexpr std::size_t kSamplesPerVisit = 64;
/// Idle back-off: a thread that found nothing sleeps this long, doubling up to the maximum, and
/// starts over as soon as anything arrives. 1 ms keeps a 1 kHz topic with a 16-deep ring far from
/// overflowing while idle threads cost a few wake-ups per millisecond.
constexpr auto kFirstBackoff = std::chrono::microseconds(50);
constexpr auto kMaxBackoff = std::chrono::microseconds(1000);
/// How long a per-topic reader waits before it looks at the stop flag again (a stop also cancels
/// the wait, within kWaitRecheckIntervalNs at worst).
constexpr auto kReceiveSlice = std::chrono::milliseconds(200);

}  // namespace

void TapSetImpl::reader_loop(unsigned which) {
  std::vector<Tap*> mine;
  std::size_t seen = 0;
  auto backoff = kFirstBackoff;
  while (!stop_.load(std::memory_order_relaxed)) {
    if (std::size_t count = tap_count_.load(std::memory_order_acquire); count != seen) {
      // Topics are dealt out round robin by their index: every thread gets its share.
      std::lock_guard lock(mutex_);
      for (std::size_t i = seen; i < count; ++i) {
        if (i % options_.threads == which) mine.push_back(taps_[i].get());
      }
      seen = count;
    }
    std::size_t read = 0;
    for (Tap* tap : mine) {
      read += drain(*tap);
      if (stop_.load(std::memory_order_relaxed)) break;
    }
    if (read > 0) {
      backoff = kFirstBackoff;
    } else {
      std::this_thread::sleep_for(backoff);
      backoff = std::min(backoff * 2, kMaxBackoff);
    }
  }
}

void TapSetImpl::start_topic_reader(Tap& tap) {
  readers_.emplace_back([this, &tap] { topic_loop(tap); });
}

void TapSetImpl::topic_loop(Tap& tap) {
  while (!stop_.load(std::memory_order_relaxed)) {
    auto next = tap.subscriber.receive(kReceiveSlice);
    if (!next) {
      if (next.code() == ErrorCode::Timeout) continue;
      if (next.code() != ErrorCode::Interrupted) {
        report(EventKind::Problem, tap.subscriber.topic(), "cannot read '" + tap.subscriber.topic() + "': " + next.message());
      }
      return;
    }
    deliver(tap, *next);
  }
}

std::size_t TapSetImpl::drain(Tap& tap) {
  std::size_t read = 0;
  while (read < kSamplesPerVisit) {
    auto next = tap.subscriber.try_receive();
    if (!next) {
      if (next.code() != ErrorCode::Interrupted) {
        report(EventKind::Problem, tap.subscriber.topic(), "cannot read '" + tap.subscriber.topic() + "': " + next.message());
      }
      break;
    }
    if (!next->has_value()) break;
    ++read;
    deliver(tap, **next);
  }
  return read;
}

Status TapSetImpl::read_ready() {
  std::vector<Tap*> taps;
  {
    std::lock_guard lock(mutex_);
    for (auto& tap : taps_) taps.push_back(tap.get());
  }
  Status first;
  for (Tap* tap : taps) {
    // What was published by now, and no further: a publisher faster than this reader cannot keep
    // it here for ever.
    const std::uint64_t published = tap->subscriber.published();
    for (;;) {
      auto next = tap->subscriber.try_receive();
      if (!next) {
        if (first.ok()) first = Status(next.code(), "'" + tap->subscriber.topic() + "': " + next.message());
        break;
      }
      if (!next->has_value()) break;
      deliver(*tap, **next);
      if ((*next)->sequence() + 1 >= published) break;
    }
  }
  return first;
}

void TapSetImpl::deliver(Tap& tap, const Sample& sample) {
  if (!tap.announced) announce(tap);
  tap.received.fetch_add(1, std::memory_order_relaxed);
  tap.missed.fetch_add(sample.lost_before(), std::memory_order_relaxed);
  TappedSample tapped;
  tapped.topic_index = tap.index;
  tapped.sequence = sample.sequence();
  tapped.publish_time = sample.publish_realtime_ns();
  tapped.log_time = realtime_ns();
  tapped.publisher_pid = sample.publisher_pid();
  tapped.lost_before = sample.lost_before();
  tapped.data = sample.data();
  if (!sink_.on_sample(tapped)) tap.dropped.fetch_add(1, std::memory_order_relaxed);
}

void TapSetImpl::announce(Tap& tap) {
  // A tap that created the topic saw provisional settings; the publisher has fixed them by now.
  TopicDescription d;
  {
    std::lock_guard lock(mutex_);
    d = descriptions_[tap.index];
  }
  d.mode = tap.subscriber.mode();
  if (auto info = inspect_topic(d.topic, options_.domain); info.ok()) {
    d.depth = info->depth;
    d.max_payload = info->max_payload;
  }
  // A publisher declares the type before it publishes, so by the first sample it is known.
  if (auto type = tap.subscriber.type(); type.ok()) {
    d.type = std::move(*type);
  } else {
    report(EventKind::Warning, d.topic, "'" + d.topic + "': " + type.message() + ": its messages are taken as raw bytes");
  }
  {
    std::lock_guard lock(mutex_);
    descriptions_[tap.index] = d;
  }
  tap.announced = true;
  std::string what = to_string(d.mode);
  if (!d.type.raw()) {
    what += ", " + (d.type.message_encoding.empty() ? std::string("raw") : d.type.message_encoding);
    if (!d.type.schema.name.empty()) what += " " + d.type.schema.name;
  }
  report(EventKind::Info, d.topic, "reading '" + d.topic + "' (" + what + ")");
  sink_.on_topic(d);
}

}  // namespace cerulion::recording::detail
