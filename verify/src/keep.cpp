// SPDX-License-Identifier: Apache-2.0
// A run written as a recording (--keep): the inputs as recorded, each output right after the input
// that preceded it, so that the file plans later runs exactly as this one went.

#include <algorithm>
#include <map>
#include <optional>

#include "cerulion/recorder/profile.hpp"
#include "cerulion/recorder/writer.hpp"
#include "cerulion/verify/runner.hpp"

namespace cerulion::verify {
namespace {

struct KeptOutput {
  std::uint16_t channel = 0;
  std::uint32_t sequence = 0;
  const ObservedMessage* message = nullptr;
};

}  // namespace

Status write_run(const RunPlan& plan, const RunResult& run, const std::string& path) {
  auto reader = recorder::Reader::open(plan.recording);
  if (!reader) return reader.status();
  auto writer = recorder::Writer::create(path);
  if (!writer) return Status(writer.code(), path + ": " + writer.message(), Subject::path(path));
  recorder::profile::SchemaIds schema_ids;
  std::map<std::uint16_t, std::uint16_t> input_channels;  // recording's channel id -> the file's
  std::map<std::uint16_t, std::uint32_t> input_sequences;
  const auto& summary = reader->summary();
  for (const auto& [id, ch] : summary.channels) {
    bool input = false;
    for (const auto& t : plan.inputs) input = input || t == ch.topic;
    if (!input) continue;
    std::optional<recorder::Schema> schema;
    if (auto s = summary.schemas.find(ch.schema_id); ch.schema_id != 0 && s != summary.schemas.end()) {
      schema = s->second;
      schema->id = 0;
    }
    auto sid = recorder::profile::schema_id(*writer, schema_ids, schema);
    if (!sid) return sid.status();
    auto cid = writer->add_channel(ch.topic, ch.message_encoding, *sid, ch.metadata);
    if (!cid) return cid.status();
    input_channels[id] = *cid;
  }
  // Outputs in the order they came, grouped by the input that preceded them.
  std::map<std::string, std::vector<KeptOutput>> after;
  std::vector<KeptOutput> all;
  for (const auto& t : run.outputs) {
    const auto type = recorder::profile::channel_type(t.type);
    auto sid = recorder::profile::schema_id(*writer, schema_ids, type.schema);
    if (!sid) return sid.status();
    auto cid = writer->add_channel(t.topic, type.message_encoding, *sid);
    if (!cid) return cid.status();
    std::uint32_t sequence = 0;
    for (const auto& m : t.messages) all.push_back({*cid, sequence++, &m});
  }
  std::stable_sort(all.begin(), all.end(),
                   [](const KeptOutput& a, const KeptOutput& b) { return a.message->log_time < b.message->log_time; });
  for (const auto& k : all) after[k.message->after_input].push_back(k);

  Status failed;
  std::map<std::string, std::uint64_t> input_counts;
  bool first = true;
  auto write_outputs = [&](const std::string& label, std::uint64_t log_time, std::uint64_t publish_time) {
    auto it = after.find(label);
    if (it == after.end()) return true;
    for (const auto& k : it->second) {
      // At the input's own times, after it in the file: a plan places it after that input again
      // (ties stay in file order), and before the next.
      failed = writer->write(k.channel, k.sequence, log_time, publish_time, k.message->data);
      if (!failed) return false;
    }
    return true;
  };
  recorder::ReadMessagesOptions read;
  read.order = recorder::ReadOrder::LogTime;
  read.channel_filter = [&](const recorder::Channel& ch) { return input_channels.count(ch.id) > 0; };
  Status st = reader->read_messages(read, [&](const recorder::MessageView& m) {
    // What came before the first input goes just before it.
    if (first && !write_outputs("", m.message.log_time > 0 ? m.message.log_time - 1 : 0,
                                m.message.publish_time > 0 ? m.message.publish_time - 1 : 0)) {
      return false;
    }
    first = false;
    failed = writer->write(input_channels.at(m.channel.id), input_sequences[m.channel.id]++, m.message.log_time,
                           m.message.publish_time, m.message.data);
    if (!failed) return false;
    return write_outputs(input_label(m.channel.topic, input_counts[m.channel.topic]++), m.message.log_time,
                         m.message.publish_time);
  });
  if (!failed) return failed;
  if (!st) return st;
  if (Status closed = writer->close(); !closed) return Status(closed.code(), path + ": " + closed.message(), Subject::path(path));
  return {};
}

}  // namespace cerulion::verify
