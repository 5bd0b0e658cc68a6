// SPDX-License-Identifier: Apache-2.0
#pragma once
// The one comparison of `cerulion verify` and `cerulion diff`: two sets of messages, topic by
// topic, message by message. A topic's type (message encoding, schema name and text) must be
// the same on both sides; bytes must be equal, except on json topics and ROS 2 topics (cdr with
// a ros2msg schema, decoded with it), which are compared field by field: a number may differ by a
// tolerance given for its field's path.
//
//   cerulion::verify::CompareOptions o;
//   o.tolerances.push_back(*cerulion::verify::parse_tolerance("pose.*=1e-6"));
//   auto c = cerulion::verify::compare(expected, got, o);
//   if (!c.same()) for (const auto& d : c.differences) ...;
//
// A field's path joins its keys with dots, an array's items by their index: "pose.position.x",
// "ranges.3". A tolerance's path is a glob over those (fnmatch(3), where '*' also matches dots):
// "pose.*" is every field under pose, "*" every number.

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "cerulion/core/status.hpp"
#include "cerulion/verify/messages.hpp"

namespace cerulion::verify {

/// How far a number may be from its expected value, for the fields a glob names.
struct Tolerance {
  std::string field;  ///< a glob over field paths
  double epsilon = 0;
};

/// "pose.x=1e-6" (FIELD=EPS, EPS a non-negative number); InvalidArgument saying what is wrong.
Result<Tolerance> parse_tolerance(std::string_view text);

/// Settings of a comparison; defaults are the recommendation.
struct CompareOptions {
  /// The first tolerance whose glob matches a field's path applies to it.
  std::vector<Tolerance> tolerances;
  /// Differences kept at most (the counts in the summary go on regardless).
  std::size_t max_differences = std::numeric_limits<std::size_t>::max();
};

/// How a message differs.
enum class DifferenceKind : std::uint8_t {
  Bytes,    ///< the payloads differ (a topic compared byte by byte)
  Field,    ///< a field of a json or ROS 2 message differs (or is absent on one side)
  Missing,  ///< expected, but the other side has no message at this index
  Extra,    ///< the other side has a message more than expected
  Undecodable,  ///< a message of a json topic that does not parse, of a ROS 2 topic that does not decode
  Type,     ///< the topic's message encoding or schema differs (field: "encoding", "schema", "schema text")
};
/// "bytes", "field", "missing", "extra", "undecodable", "type".
const char* to_string(DifferenceKind kind) noexcept;

/// One difference, as a person reads it.
struct Difference {
  DifferenceKind kind = DifferenceKind::Bytes;
  std::string topic;
  std::size_t index = 0;    ///< of the message in its topic (0 = the first); 0 for a Type difference
  std::string after_input;  ///< the input that preceded it ("/imu #12"), "" when not known
  std::string field;        ///< json path, "byte 12", "size"; "" for a whole message
  std::string expected;     ///< short renderings; "(none)" for an absent message or field
  std::string got;
  /// For Undecodable: true when the expected side (the recording) does not decode.
  bool in_expected = false;
  /// For Missing and Extra: the topic's messages after that input (of all, without inputs), on
  /// each side.
  std::size_t expected_count = 0;
  std::size_t got_count = 0;
};

/// Counts of one topic.
struct TopicComparison {
  std::string topic;
  std::size_t expected = 0;   ///< messages on the expected side
  std::size_t got = 0;        ///< on the other side
  std::size_t differing = 0;  ///< indexes at which they differ (missing and extra included)
  bool type_differs = false;  ///< the encoding or schema differs (each aspect is a Type difference)

  bool same() const noexcept { return differing == 0 && !type_differs; }
};

/// What a comparison found.
struct Comparison {
  /// Every topic of either side, expected's first, in their order.
  std::vector<TopicComparison> topics;
  /// In topic order, then message order; at most CompareOptions::max_differences.
  std::vector<Difference> differences;
  /// Differences found, kept or not.
  std::size_t total_differences = 0;
  /// tolerance_matched[t]: whether CompareOptions::tolerances[t] matched a number field of a json
  /// message compared (one that matches none is likely mistyped).
  std::vector<bool> tolerance_matched;

  bool same() const noexcept { return total_differences == 0; }
  /// Whether a message of the expected side does not decode (the recording cannot serve).
  bool expected_undecodable() const noexcept;
};

/// The globs of the tolerances of `options` that matched no number field in any of `comparisons`
/// (each made with those options): likely mistyped, since they tolerate nothing.
std::vector<std::string> unmatched_tolerances(const CompareOptions& options, const std::vector<const Comparison*>& comparisons);

/// Compares `got` with `expected`. Messages are compared input by input: those that followed the
/// same input (ObservedMessage::inputs_before) in order, so that an extra or a missing message
/// after one input is that one difference, not a shift of every later comparison.
Comparison compare(const MessageSet& expected, const MessageSet& got, const CompareOptions& options = {});

}  // namespace cerulion::verify
