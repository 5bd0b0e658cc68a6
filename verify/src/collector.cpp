// SPDX-License-Identifier: Apache-2.0
#include "collector.hpp"

#include "cerulion/core/options.hpp"

namespace cerulion::verify {

OutputCollector::OutputCollector(const std::vector<std::string>& outputs) {
  for (const auto& topic : outputs) outputs_.push_back({topic, {}, {}});
}

void OutputCollector::on_topic(const recording::TopicDescription& topic) {
  std::lock_guard lock(mutex_);
  for (std::size_t o = 0; o < outputs_.size(); ++o) {
    if (outputs_[o].topic != topic.topic) continue;
    outputs_[o].type = topic.type;
    by_tap_index_[topic.index] = o;
  }
}

bool OutputCollector::on_sample(const recording::TappedSample& sample) {
  {
    std::lock_guard lock(mutex_);
    auto it = by_tap_index_.find(sample.topic_index);
    if (it == by_tap_index_.end()) return false;
    outputs_[it->second].messages.push_back(
        {realtime_ns(), std::vector<std::byte>(sample.data.begin(), sample.data.end()), input_, inputs_before_});
    last_activity_ = Clock::now();
  }
  changed_.notify_all();
  return true;
}

void OutputCollector::set_input(std::string input, std::uint64_t inputs_before) {
  std::lock_guard lock(mutex_);
  input_ = std::move(input);
  inputs_before_ = inputs_before;
  last_activity_ = Clock::now();
}

std::optional<std::size_t> OutputCollector::wait_for_counts(const std::vector<std::uint64_t>& counts,
                                                            Clock::time_point deadline) {
  std::unique_lock lock(mutex_);
  std::optional<std::size_t> short_of;
  changed_.wait_until(lock, deadline, [&] {
    short_of.reset();
    for (std::size_t o = 0; o < counts.size() && o < outputs_.size(); ++o) {
      if (outputs_[o].messages.size() < counts[o]) {
        short_of = o;
        return false;
      }
    }
    return true;
  });
  return short_of;
}

bool OutputCollector::wait_quiet(std::chrono::milliseconds quiet, Clock::time_point deadline) {
  std::unique_lock lock(mutex_);
  for (;;) {
    const auto quiet_at = last_activity_ + quiet;
    const auto now = Clock::now();
    if (now >= quiet_at) return true;
    if (now >= deadline) return false;
    changed_.wait_until(lock, std::min(quiet_at, deadline));
  }
}

std::uint64_t OutputCollector::count(std::size_t o) const {
  std::lock_guard lock(mutex_);
  return o < outputs_.size() ? outputs_[o].messages.size() : 0;
}

MessageSet OutputCollector::take() {
  std::lock_guard lock(mutex_);
  return std::move(outputs_);
}

}  // namespace cerulion::verify
