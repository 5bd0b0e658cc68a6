// SPDX-License-Identifier: Apache-2.0
#pragma once
// Conveniences of the recording tests: a sink that keeps what it is given, memory sinks for
// recordings, and a domain of its own that is emptied at the end.

#include <catch2/catch.hpp>

#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include "cerulion/core.hpp"
#include "cerulion/recorder/sink.hpp"
#include "cerulion/recording/recording.hpp"
#include "cerulion/recording/tap_set.hpp"
#include "bytes.hpp"
#include "process.hpp"

namespace cerulion::test {

inline std::string text_of(std::span<const std::byte> bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

/// A domain of its own; topics left in it are removed at the end of the test.
struct TestDomain {
  explicit TestDomain(const std::string& stem) : name(unique_domain(stem)) {}
  ~TestDomain() {
    if (auto listing = list_topics(name); listing.ok()) {
      for (const auto& t : listing->topics) (void)clean_domain(name, false, t.name);
    }
  }
  std::string name;
};

/// One sample as a sink got it.
struct Got {
  std::size_t topic_index;
  std::uint64_t sequence;
  std::uint64_t lost_before;
  std::string text;
};

/// Keeps every sample and topic it is given (from any thread).
struct KeepingSink : recording::SampleSink {
  void on_topic(const recording::TopicDescription& topic) override {
    std::lock_guard lock(mutex);
    topics.push_back(topic);
  }
  bool on_sample(const recording::TappedSample& s) override {
    std::lock_guard lock(mutex);
    samples.push_back({s.topic_index, s.sequence, s.lost_before, text_of(s.data)});
    return true;
  }
  std::size_t count() {
    std::lock_guard lock(mutex);
    return samples.size();
  }
  std::mutex mutex;
  std::vector<recording::TopicDescription> topics;
  std::vector<Got> samples;
};

/// A sink factory recording into buffers the test keeps.
inline recording::SinkFactory memory_sinks(std::deque<recorder::ByteVector>& buffers) {
  return [&buffers](std::size_t) -> Result<std::unique_ptr<recorder::ByteSink>> {
    buffers.emplace_back();
    return std::unique_ptr<recorder::ByteSink>(std::make_unique<recorder::MemorySink>(buffers.back()));
  };
}

inline PublisherOptions publisher_in(const std::string& domain, Mode mode = Mode::Lockstep, std::uint32_t depth = 16) {
  PublisherOptions o;
  o.topic.domain = domain;
  o.topic.mode = mode;
  o.topic.depth = depth;
  return o;
}

}  // namespace cerulion::test
