// SPDX-License-Identifier: Apache-2.0
#include "dump_catch_up.hpp"

#include <algorithm>

#include "cerulion/core/discovery.hpp"
#include "cerulion/recorder/message_record.hpp"
#include "cerulion/recording/tap_set.hpp"

namespace cerulion::flashback::detail {

namespace {

class CopySink final : public recording::SampleSink {
 public:
  explicit CopySink(std::map<std::string, RingCopy>& out) : out_(out) {}

  void on_topic(const recording::TopicDescription& topic) override {
    if (by_index_.size() <= topic.index) by_index_.resize(topic.index + 1, nullptr);
    by_index_[topic.index] = &out_[topic.topic];
  }

  bool on_sample(const recording::TappedSample& sample) override {
    RingCopy* copy = sample.topic_index < by_index_.size() ? by_index_[sample.topic_index] : nullptr;
    if (copy == nullptr) return true;
    copy->messages.push_back({static_cast<std::uint32_t>(sample.sequence), sample.publish_time, sample.log_time,
                              std::vector<std::byte>(sample.data.begin(), sample.data.end())});
    return true;
  }

 private:
  std::map<std::string, RingCopy>& out_;
  std::vector<RingCopy*> by_index_;
};

bool read_rings(recording::TapSetOptions options, std::map<std::string, RingCopy>& out) {
  CopySink sink(out);
  auto taps = recording::TapSet::create(options, sink);
  if (!taps) return false;
  // What each topic had published before anything is read: the dump's T for that topic.
  for (const auto& count : taps->counts()) out[count.topic].published = count.published;
  (void)taps->read_ready();  // what read before an error is kept
  return true;
}

}  // namespace

std::map<std::string, RingCopy> copy_rings(const std::vector<std::string>& topics, const std::string& domain) {
  recording::TapSetOptions options;
  options.domain = domain;
  // From the oldest message each ring holds: what the store lacks may be anywhere in it.
  options.start = StartAt::First;
  for (const auto& topic : topics) {
    // A tap would make a topic that is gone (its publishers exited and it was cleaned): left out.
    if (inspect_topic(topic, domain).ok()) options.selection.topics.push_back(topic);
  }
  std::map<std::string, RingCopy> out;
  if (options.selection.topics.empty() || read_rings(options, out)) return out;
  // One topic that cannot be read now (gone since, no participant slot left) leaves the others.
  out.clear();
  for (const auto& topic : std::vector<std::string>(options.selection.topics)) {
    options.selection.topics = {topic};
    (void)read_rings(options, out);
  }
  return out;
}

std::uint64_t catch_up(const std::vector<CatchUpChannel>& channels, const std::map<std::string, RingCopy>& rings,
                       std::uint64_t cutoff, std::uint64_t min_log_time, std::vector<std::byte>& records,
                       LossTable& losses) {
  std::uint64_t taken = 0;
  for (const auto& c : channels) {
    const auto ring = rings.find(c.topic);
    if (ring == rings.end()) continue;
    std::optional<std::uint32_t> next = c.next_sequence;
    std::uint64_t lost = c.lost;
    ChannelLoss* entry = nullptr;
    auto record_loss = [&](std::uint32_t last_sequence, bool message) {
      if (entry == nullptr) {
        auto [it, fresh] = losses.try_emplace(c.channel_id);
        entry = &it->second;
        if (fresh) entry->first_lost = lost;
      }
      entry->last_lost = lost;
      entry->last_sequence = last_sequence;
      if (message) ++entry->messages;
    };
    for (const auto& m : ring->second.messages) {
      if (m.publish_time < cutoff) continue;
      if (next) {
        // Sequences are kept in 32 bits: what is "behind" the dump's next is in it already.
        const std::uint32_t gap = m.sequence - *next;
        if (gap >= (1u << 31)) continue;
        lost += gap;  // overwritten in the ring before anyone read it
      }
      next = m.sequence + 1;
      const std::size_t at = records.size();
      records.resize(at + recorder::message_record_size(m.data.size()));
      recorder::encode_message_record(std::span(records).subspan(at), c.channel_id, m.sequence,
                                      std::max(m.log_time, min_log_time), m.publish_time, m.data);
      record_loss(m.sequence, true);
      ++taken;
    }
    // Published before the request and in neither the store nor the ring: lost, after the last.
    if (const std::uint64_t published = ring->second.published; published > 0 && next) {
      const std::uint32_t after = static_cast<std::uint32_t>(published) - *next;
      if (after > 0 && after < (1u << 31)) {
        lost += after;
        record_loss(static_cast<std::uint32_t>(published - 1), false);
      }
    }
  }
  return taken;
}

}  // namespace cerulion::flashback::detail
