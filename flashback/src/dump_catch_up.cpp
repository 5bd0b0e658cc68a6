// SPDX-License-Identifier: Apache-2.0
#include "dump_catch_up.hpp"

#include <algorithm>
#include <map>

#include "cerulion/core/discovery.hpp"
#include "cerulion/recorder/message_record.hpp"
#include "cerulion/recording/tap_set.hpp"

namespace cerulion::flashback::detail {

namespace {

class CatchUpSink final : public recording::SampleSink {
 public:
  CatchUpSink(const std::vector<CatchUpChannel>& channels, std::uint64_t cutoff, std::uint64_t min_log_time,
              std::vector<std::byte>& records, LossTable& losses)
      : channels_(channels), cutoff_(cutoff), min_log_time_(min_log_time), records_(records), losses_(losses) {
    for (const auto& c : channels_) {
      state_[c.topic] = {&c, c.next_sequence, c.lost};
    }
  }

  void on_topic(const recording::TopicDescription& topic) override {
    if (by_index_.size() <= topic.index) by_index_.resize(topic.index + 1, nullptr);
    auto it = state_.find(topic.topic);
    by_index_[topic.index] = it == state_.end() ? nullptr : &it->second;
  }

  bool on_sample(const recording::TappedSample& sample) override {
    State* s = sample.topic_index < by_index_.size() ? by_index_[sample.topic_index] : nullptr;
    if (s == nullptr || sample.publish_time < cutoff_) return true;
    const auto sequence = static_cast<std::uint32_t>(sample.sequence);
    if (s->next) {
      // Sequences are kept in 32 bits: what is "behind" the store's next is stored already.
      const std::uint32_t gap = sequence - *s->next;
      if (gap >= (1u << 31)) return true;
      s->lost += gap;  // overwritten in the ring before this dump read it
    }
    s->next = sequence + 1;
    const std::size_t at = records_.size();
    records_.resize(at + recorder::message_record_size(sample.data.size()));
    recorder::encode_message_record(std::span(records_).subspan(at), s->channel->channel_id, sequence,
                                    std::max(sample.log_time, min_log_time_), sample.publish_time, sample.data);
    auto [it, fresh] = losses_.try_emplace(s->channel->channel_id);
    if (fresh) it->second.first_lost = s->lost;
    it->second.last_lost = s->lost;
    it->second.last_sequence = sequence;
    ++it->second.messages;
    ++read_;
    return true;
  }

  std::uint64_t read() const { return read_; }

 private:
  struct State {
    const CatchUpChannel* channel = nullptr;
    std::optional<std::uint32_t> next;
    std::uint64_t lost = 0;
  };
  const std::vector<CatchUpChannel>& channels_;
  const std::uint64_t cutoff_;
  const std::uint64_t min_log_time_;
  std::vector<std::byte>& records_;
  LossTable& losses_;
  std::map<std::string, State> state_;
  std::vector<State*> by_index_;
  std::uint64_t read_ = 0;
};

}  // namespace

std::uint64_t catch_up(const std::vector<CatchUpChannel>& channels, const std::string& domain, std::uint64_t cutoff,
                       std::uint64_t min_log_time, std::vector<std::byte>& records, LossTable& losses) {
  recording::TapSetOptions options;
  options.domain = domain;
  // From the oldest message each ring holds: what the store lacks may be anywhere in it.
  options.start = StartAt::First;
  for (const auto& c : channels) {
    // A tap would make a topic that is gone (its publishers exited and it was cleaned): left out.
    if (inspect_topic(c.topic, domain).ok()) options.selection.topics.push_back(c.topic);
  }
  if (options.selection.topics.empty()) return 0;
  auto read_from = [&](const recording::TapSetOptions& o) -> std::optional<std::uint64_t> {
    CatchUpSink sink(channels, cutoff, min_log_time, records, losses);
    auto taps = recording::TapSet::create(o, sink);
    if (!taps) return std::nullopt;
    (void)taps->read_ready();  // what read before an error is kept
    return sink.read();
  };
  if (auto read = read_from(options)) return *read;
  // One topic that cannot be read now (gone since, no participant slot left) leaves the others.
  std::uint64_t read = 0;
  for (const auto& topic : std::vector<std::string>(options.selection.topics)) {
    options.selection.topics = {topic};
    read += read_from(options).value_or(0);
  }
  return read;
}

}  // namespace cerulion::flashback::detail
