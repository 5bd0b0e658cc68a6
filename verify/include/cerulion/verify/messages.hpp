// SPDX-License-Identifier: Apache-2.0
#pragma once
// The messages a comparison looks at: per topic, in order, each with its bytes and the input that
// came just before it. Read from a recording (the expected side, or both sides of `cerulion
// diff`), collected from a run (the side a command gave), or built in memory by a test.
//
//   auto reader = cerulion::recorder::Reader::open("golden.mcap");
//   auto outputs = cerulion::verify::read_topics(*reader, {.topics = {"/imu/filtered"}}, {.topics = {"/imu"}});
//
// Inputs are never held: only their names and counts, to say which one preceded an output.

#include <cstdint>
#include <string>
#include <vector>

#include "cerulion/core/status.hpp"
#include "cerulion/core/topic_type.hpp"
#include "cerulion/recorder/reader.hpp"
#include "cerulion/recording/topic_selection.hpp"

namespace cerulion::verify {

/// One message of a topic.
struct ObservedMessage {
  /// Log time (ns): recorded, or when a run collected it.
  std::uint64_t log_time = 0;
  std::vector<std::byte> data;
  /// The input published just before it, as "/imu #12" (that topic's 13th message); "" when none
  /// came before it or inputs are not known (a diff without inputs).
  std::string after_input;
  /// How many inputs (of every input topic) came before it: 0 with after_input "". Orders the
  /// inputs of several topics, so that outputs are compared input by input.
  std::uint64_t inputs_before = 0;
};

/// One topic's messages, in order, and what they are ("json" is compared field by field).
struct TopicMessages {
  std::string topic;
  TopicType type;
  std::vector<ObservedMessage> messages;
};

/// Several topics' messages, in the order the topics were first seen.
using MessageSet = std::vector<TopicMessages>;

/// The topic `topic` of `set`, or nullptr.
const TopicMessages* find_topic(const MessageSet& set, std::string_view topic);
TopicMessages* find_topic(MessageSet& set, std::string_view topic);

/// "/imu #12": how an input is named in a difference.
std::string input_label(std::string_view topic, std::uint64_t index);

/// Every message of the topics `take` selects, in log-time order, each labelled with the message
/// of `inputs` that preceded it (inputs that are not also taken are not kept). Topics that are
/// selected but absent are absent from the result. An I/O error of the reader; damaged chunks are
/// skipped and said in reader.problems().
Result<MessageSet> read_topics(recorder::Reader& reader, const recording::TopicSelection& take,
                               const recording::TopicSelection& inputs = {});

/// The recording's channel for `topic` (the first when several name it), or nullptr.
const recorder::Channel* find_channel(const recorder::Reader& reader, std::string_view topic);

}  // namespace cerulion::verify
