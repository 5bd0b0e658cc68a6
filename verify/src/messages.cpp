// SPDX-License-Identifier: Apache-2.0
#include "cerulion/verify/messages.hpp"

#include <map>

#include "cerulion/recorder/profile.hpp"

namespace cerulion::verify {

const TopicMessages* find_topic(const MessageSet& set, std::string_view topic) {
  for (const auto& t : set) {
    if (t.topic == topic) return &t;
  }
  return nullptr;
}

TopicMessages* find_topic(MessageSet& set, std::string_view topic) {
  for (auto& t : set) {
    if (t.topic == topic) return &t;
  }
  return nullptr;
}

std::string input_label(std::string_view topic, std::uint64_t index) {
  return std::string(topic) + " #" + std::to_string(index);
}

const recorder::Channel* find_channel(const recorder::Reader& reader, std::string_view topic) {
  for (const auto& [id, ch] : reader.summary().channels) {
    if (ch.topic == topic) return &ch;
  }
  return nullptr;
}

Result<MessageSet> read_topics(recorder::Reader& reader, const recording::TopicSelection& take,
                               const recording::TopicSelection& inputs) {
  auto taken = recording::TopicMatcher::compile(take);
  if (!taken) return taken.status();
  auto input = recording::TopicMatcher::compile(inputs);
  if (!input) return input.status();

  MessageSet set;
  std::map<std::string, std::uint64_t> input_counts;
  std::string last_input;
  std::uint64_t inputs_seen = 0;
  recorder::ReadMessagesOptions read;
  read.order = recorder::ReadOrder::LogTime;
  read.channel_filter = [&](const recorder::Channel& ch) { return taken->matches(ch.topic) || input->matches(ch.topic); };
  const auto& schemas = reader.summary().schemas;
  Status st = reader.read_messages(read, [&](const recorder::MessageView& m) {
    const std::string& topic = m.channel.topic;
    if (input->matches(topic)) {
      last_input = input_label(topic, input_counts[topic]++);
      ++inputs_seen;
    }
    if (!taken->matches(topic)) return true;
    TopicMessages* t = find_topic(set, topic);
    if (t == nullptr) {
      auto schema = schemas.find(m.channel.schema_id);
      const bool has_schema = m.channel.schema_id != 0 && schema != schemas.end();
      set.push_back({topic, recorder::profile::topic_type(m.channel, has_schema ? &schema->second : nullptr), {}});
      t = &set.back();
    }
    // An input that is also compared (diff of everything) did not precede itself.
    const bool self = input->matches(topic);
    if (self) {
      t->messages.push_back({m.message.log_time, m.message.data, std::string(), 0});
    } else {
      t->messages.push_back({m.message.log_time, m.message.data, last_input, inputs_seen});
    }
    return true;
  });
  if (!st) return st;
  return set;
}

}  // namespace cerulion::verify
