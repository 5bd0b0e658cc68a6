// SPDX-License-Identifier: Apache-2.0
// What a recording holds for a run: the expected outputs, and how many of each output topic come
// before each input. Outputs are placed among the inputs by their publish times, not their log
// times: a recorder's taps read each topic on its own, so an output may be logged before the input
// it answers, but it is always published after it. A file without publish times (0) is placed by
// log time.

#include <algorithm>
#include <map>
#include <set>

#include "cerulion/recorder/profile.hpp"
#include "cerulion/recording/topic_selection.hpp"
#include "cerulion/verify/runner.hpp"
#include "plan_topics.hpp"

namespace cerulion::verify {
namespace {

// A message of the recording as the plan places it.
struct PlannedMessage {
  std::uint64_t publish_time = 0;
  std::uint64_t log_time = 0;
  bool input = false;
  std::size_t index = 0;  // input: its place in log-time order; output: its output topic
  std::string label;      // input: "/imu #3"
  ObservedMessage output;
};

}  // namespace

Result<std::vector<std::string>> normalized_topics(const std::vector<std::string>& topics) {
  auto matcher = recording::TopicMatcher::compile({.topics = topics});
  if (!matcher) return matcher.status();
  return matcher->named();
}

bool RunPlan::has_outputs() const noexcept {
  for (const auto& t : expected) {
    if (!t.messages.empty()) return true;
  }
  return false;
}

Result<RunPlan> RunPlan::read(const std::string& recording, std::vector<std::string> inputs,
                              std::vector<std::string> outputs) {
  auto in = normalized_topics(inputs);
  if (!in) return in.status();
  auto out = normalized_topics(outputs);
  if (!out) return out.status();
  for (const auto& o : *out) {
    if (std::find(in->begin(), in->end(), o) != in->end()) {
      return Status(ErrorCode::InvalidArgument, "'" + o + "' is both an input and an output", Subject::topic(o));
    }
  }
  auto reader = recorder::Reader::open(recording);
  if (!reader) return Status(reader.status()).about(Subject::path(recording));
  for (const auto& topic : *in) {
    if (find_channel(*reader, topic) == nullptr) {
      return Status(ErrorCode::NotFound, recording + " has no input topic '" + topic + "'", Subject::topic(topic));
    }
  }
  RunPlan plan;
  plan.recording = recording;
  plan.inputs = *in;
  plan.outputs = *out;
  const std::set<std::string> input_set(plan.inputs.begin(), plan.inputs.end());
  std::map<std::string, std::size_t> output_index;
  for (std::size_t i = 0; i < plan.outputs.size(); ++i) output_index[plan.outputs[i]] = i;

  std::vector<PlannedMessage> messages;
  std::map<std::string, std::uint64_t> input_counts;
  bool publish_times = true;
  recorder::ReadMessagesOptions read;
  read.order = recorder::ReadOrder::LogTime;
  read.channel_filter = [&](const recorder::Channel& ch) { return input_set.count(ch.topic) || output_index.count(ch.topic); };
  const auto& schemas = reader->summary().schemas;
  std::map<std::uint16_t, std::uint64_t> read_counts;
  Status st = reader->read_messages(read, [&](const recorder::MessageView& m) {
    const std::string& topic = m.channel.topic;
    ++read_counts[m.channel.id];
    PlannedMessage p;
    p.publish_time = m.message.publish_time;
    p.log_time = m.message.log_time;
    publish_times = publish_times && p.publish_time != 0;
    if (input_set.count(topic)) {
      p.input = true;
      p.index = plan.input_count++;
      p.label = input_label(topic, input_counts[topic]++);
    } else {
      p.index = output_index.at(topic);
      p.output = {m.message.log_time, m.message.data, {}};
      if (find_topic(plan.expected, topic) == nullptr) {
        auto schema = schemas.find(m.channel.schema_id);
        const bool has_schema = m.channel.schema_id != 0 && schema != schemas.end();
        plan.expected.push_back({topic, recorder::profile::topic_type(m.channel, has_schema ? &schema->second : nullptr), {}});
      }
    }
    messages.push_back(std::move(p));
    return true;
  });
  if (!st) return Status(st.code(), recording + ": " + st.message(), Subject::path(recording));
  plan.damage = reader->problems();
  plan.intact_before = reader->intact_before();
  if (reader->summary().indexed) {
    // The file's own count of each channel read: what falls short was lost where nothing tells.
    const auto& counted = reader->summary().statistics.channel_message_counts;
    for (const auto& [id, channel] : reader->summary().channels) {
      if (!input_set.count(channel.topic) && !output_index.count(channel.topic)) continue;
      const auto c = counted.find(id);
      const std::uint64_t expected = c == counted.end() ? 0 : c->second;
      const auto r = read_counts.find(id);
      const std::uint64_t got = r == read_counts.end() ? 0 : r->second;
      if (got >= expected) continue;
      plan.damage.push_back("its statistics count " + std::to_string(expected) + " messages on '" + channel.topic +
                            "', " + std::to_string(got) + " could be read");
      if (!plan.partial()) plan.intact_before = 0;
    }
  }
  plan.recorded_inputs = plan.input_count;
  if (reader->summary().indexed) {
    // Those its statistics count, read or not.
    const auto& counted = reader->summary().statistics.channel_message_counts;
    std::uint64_t inputs = 0;
    for (const auto& [id, channel] : reader->summary().channels) {
      if (const auto c = counted.find(id); input_set.count(channel.topic) && c != counted.end()) inputs += c->second;
    }
    plan.recorded_inputs = std::max(plan.recorded_inputs, inputs);
  }
  if (plan.partial()) {
    // Only the intact part: inputs keep their numbers, which count from the recording's first.
    std::erase_if(messages, [&](const PlannedMessage& p) { return p.log_time >= plan.intact_before; });
    plan.input_count = 0;
    for (const auto& p : messages) plan.input_count += p.input ? 1 : 0;
  }
  if (plan.recorded_inputs == 0) {
    return Status(ErrorCode::NotFound, recording + " has no message on its input topics", Subject::path(recording));
  }
  if (publish_times) {
    std::stable_sort(messages.begin(), messages.end(),
                     [](const PlannedMessage& a, const PlannedMessage& b) { return a.publish_time < b.publish_time; });
  }
  plan.expected_before.assign(plan.input_count, std::vector<std::uint64_t>(plan.outputs.size(), 0));
  std::vector<std::uint64_t> counts(plan.outputs.size(), 0);
  std::string last_input;
  std::uint64_t inputs_before = 0;
  for (auto& p : messages) {
    if (p.input) {
      plan.expected_before[p.index] = counts;
      last_input = p.label;
      ++inputs_before;
      continue;
    }
    ++counts[p.index];
    p.output.after_input = last_input;
    p.output.inputs_before = inputs_before;
    find_topic(plan.expected, plan.outputs[p.index])->messages.push_back(std::move(p.output));
  }
  // Inputs are published in log-time order: what one waits for, every later one waits for too.
  for (std::size_t k = 1; k < plan.expected_before.size(); ++k) {
    for (std::size_t o = 0; o < plan.outputs.size(); ++o) {
      plan.expected_before[k][o] = std::max(plan.expected_before[k][o], plan.expected_before[k - 1][o]);
    }
  }
  return plan;
}

}  // namespace cerulion::verify
