// SPDX-License-Identifier: Apache-2.0
#include "cerulion/verify/compare.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <span>
#include <fnmatch.h>

#include <nlohmann/json.hpp>

#include "message_fields.hpp"

namespace cerulion::verify {
namespace {

using Json = nlohmann::json;

// A rendering of a value short enough for one line of a report.
constexpr std::size_t kShownChars = 80;
constexpr std::size_t kShownBytes = 16;

std::string shortened(std::string text) {
  if (text.size() <= kShownChars) return text;
  // Cut before a character, never inside one: the reports must stay UTF-8 (JSON, JUnit XML).
  std::size_t cut = kShownChars - 3;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return text.substr(0, cut) + "...";
}

std::string shown(const Json& value) { return shortened(value.dump(-1, ' ', false, Json::error_handler_t::replace)); }

std::string hex_bytes(std::span<const std::byte> bytes, std::size_t from) {
  std::string out;
  char buf[4];
  for (std::size_t i = from; i < bytes.size() && i < from + kShownBytes; ++i) {
    std::snprintf(buf, sizeof buf, "%02x", static_cast<unsigned>(bytes[i]));
    out += (out.empty() ? "" : " ") + std::string(buf);
  }
  if (bytes.size() > from + kShownBytes) out += " ...";
  return out;
}

std::string bytes_counted(std::size_t n) { return std::to_string(n) + (n == 1 ? " byte" : " bytes"); }

using detail::MessageFields;

// Whether `bytes` are text a person reads as it is: UTF-8 without control characters.
bool printable(std::span<const std::byte> bytes) {
  const std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) return false;
  }
  try {
    (void)Json(std::string(text)).dump();  // throws on a byte that is not UTF-8
  } catch (const Json::exception&) {
    return false;
  }
  return true;
}

// Bytes from `from` on as a report shows them: quoted text when printable ("...", with "..." in
// front when cut), else in hex.
std::string shown_bytes(std::span<const std::byte> bytes, std::size_t from) {
  if (!printable(bytes)) return hex_bytes(bytes, from);
  // Never from inside a character.
  while (from > 0 && from < bytes.size() && (static_cast<unsigned char>(bytes[from]) & 0xC0) == 0x80) --from;
  const std::string text(reinterpret_cast<const char*>(bytes.data()) + from, bytes.size() - from);
  return (from > 0 ? "..." : "") + shortened(Json(text).dump());
}

// A json message that does not parse, as the report shows it.
std::string not_json(const std::vector<std::byte>& data) {
  return printable(data) ? shown_bytes(data, 0) : "not json: " + hex_bytes(data, 0);
}

// A message of a structured topic that does not decode, as the report shows it.
std::string undecoded(const std::vector<std::byte>& data, const MessageFields& fields) {
  return fields.kind() == "json" ? not_json(data) : "not " + fields.kind() + ": " + hex_bytes(data, 0);
}

// A message missing on one side, as the report shows it: a json one as its text (the parse has
// checked it is UTF-8), a ROS 2 one as its fields, one that does not decode as not_json() says
// (in hex for ROS 2); any other as its text when it is printable, else by its size.
std::string whole_message(const std::vector<std::byte>& data, const MessageFields& fields) {
  if (!fields.structured()) return printable(data) ? shown_bytes(data, 0) : bytes_counted(data.size());
  auto value = fields(data);
  if (!value) return undecoded(data, fields);
  return shown(*value);
}

std::string child_path(const std::string& parent, const std::string& key) {
  return parent.empty() ? key : parent + "." + key;
}

// Compares one message pair; adds what differs to `out`.
class MessageComparer {
 public:
  MessageComparer(const CompareOptions& options, Difference base, std::vector<Difference>& out,
                  std::vector<bool>* matched = nullptr)
      : options_(options), base_(std::move(base)), out_(out), matched_(matched) {}

  void bytes(const std::vector<std::byte>& expected, const std::vector<std::byte>& got) {
    if (expected == got) return;
    // Short text is shown whole, as text: "17" against "seventeen".
    if (printable(expected) && printable(got) && expected.size() <= kShownChars && got.size() <= kShownChars) {
      add(DifferenceKind::Bytes, "", shown_bytes(expected, 0), shown_bytes(got, 0));
      return;
    }
    std::size_t at = 0;
    while (at < expected.size() && at < got.size() && expected[at] == got[at]) ++at;
    if (at == expected.size() || at == got.size()) {
      add(DifferenceKind::Bytes, "size", bytes_counted(expected.size()), bytes_counted(got.size()));
    } else {
      add(DifferenceKind::Bytes, "byte " + std::to_string(at), shown_bytes(expected, at), shown_bytes(got, at));
    }
  }

  void json(const Json& expected, const Json& got, const std::string& path) {
    if (expected.is_number() && got.is_number()) {
      note_matches(path);
      const double e = expected.get<double>();
      const double g = got.get<double>();
      if (e == g || (std::isnan(e) && std::isnan(g))) return;
      if (const Tolerance* t = tolerance_for(path); t != nullptr && std::fabs(e - g) <= t->epsilon) return;
      add(DifferenceKind::Field, path, shown(expected), shown(got));
      return;
    }
    if (expected.is_object() && got.is_object()) {
      for (const auto& [key, value] : expected.items()) {
        auto other = got.find(key);
        if (other == got.end()) {
          add(DifferenceKind::Field, child_path(path, key), shown(value), "(none)");
        } else {
          json(value, *other, child_path(path, key));
        }
      }
      for (const auto& [key, value] : got.items()) {
        if (!expected.contains(key)) add(DifferenceKind::Field, child_path(path, key), "(none)", shown(value));
      }
      return;
    }
    if (expected.is_array() && got.is_array()) {
      const std::size_t common = std::min(expected.size(), got.size());
      for (std::size_t i = 0; i < common; ++i) json(expected[i], got[i], child_path(path, std::to_string(i)));
      if (expected.size() != got.size()) {
        add(DifferenceKind::Field, path.empty() ? "length" : path + ".length", std::to_string(expected.size()) + " items",
            std::to_string(got.size()) + " items");
      }
      return;
    }
    if (expected != got) add(DifferenceKind::Field, path, shown(expected), shown(got));
  }

  std::size_t added() const { return added_; }

 private:
  void note_matches(const std::string& path) {
    if (matched_ == nullptr) return;
    for (std::size_t t = 0; t < options_.tolerances.size(); ++t) {
      if (!(*matched_)[t] && ::fnmatch(options_.tolerances[t].field.c_str(), path.c_str(), 0) == 0) (*matched_)[t] = true;
    }
  }
  const Tolerance* tolerance_for(const std::string& path) const {
    for (const auto& t : options_.tolerances) {
      if (::fnmatch(t.field.c_str(), path.c_str(), 0) == 0) return &t;
    }
    return nullptr;
  }
  void add(DifferenceKind kind, std::string field, std::string expected, std::string got) {
    ++added_;
    Difference d = base_;
    d.kind = kind;
    d.field = std::move(field);
    d.expected = std::move(expected);
    d.got = std::move(got);
    out_.push_back(std::move(d));
  }

  const CompareOptions& options_;
  Difference base_;
  std::vector<Difference>& out_;
  std::vector<bool>* matched_;
  std::size_t added_ = 0;
};

const std::vector<ObservedMessage> kNoMessages;

std::string encoding_label(const TopicType& type) {
  return type.message_encoding.empty() ? "raw bytes" : type.message_encoding;
}

std::string schema_label(const Schema& schema) {
  if (schema.empty()) return "none";
  return schema.name + " (" + schema.encoding + ", " + bytes_counted(schema.data.size()) + ")";
}

// What differs between the types of one topic's two sides, each aspect a Type difference: a
// topic whose encoding or schema changed carries other messages, even where their bytes agree.
void compare_types(const TopicType& expected, const TopicType& got, const Difference& base, std::vector<Difference>& out) {
  auto add = [&](std::string field, std::string want, std::string have) {
    Difference d = base;
    d.kind = DifferenceKind::Type;
    d.field = std::move(field);
    d.expected = std::move(want);
    d.got = std::move(have);
    out.push_back(std::move(d));
  };
  if (expected.message_encoding != got.message_encoding) add("encoding", encoding_label(expected), encoding_label(got));
  const Schema& e = expected.schema;
  const Schema& g = got.schema;
  if (e.name != g.name || e.encoding != g.encoding) {
    add("schema", schema_label(e), schema_label(g));
  } else if (e.data != g.data) {
    std::size_t at = 0;
    while (at < e.data.size() && at < g.data.size() && e.data[at] == g.data[at]) ++at;
    add("schema text", schema_label(e), schema_label(g) + ", differing from byte " + std::to_string(at));
  }
}

bool all_matched(const std::vector<bool>& matched) {
  return std::find(matched.begin(), matched.end(), false) == matched.end();
}

// Which messages of a topic are extra (on the got side) or missing (on the expected side), found
// input by input. After each input, the surplus is the got side's messages so far less the
// expected side's. A run may answer earlier than a recording shows (a recording of a node that
// lagged its inputs), which raises the surplus for a while; an extra message raises it for good.
// So the extras are where the surplus's lowest value from then on rises (a missing message is
// where its highest value from then on falls), and they are the last messages after that input.
// Everything else is paired in order.
struct Alignment {
  std::vector<bool> extra;    // per got message
  std::vector<bool> missing;  // per expected message
};

Alignment align(const std::vector<ObservedMessage>& want, const std::vector<ObservedMessage>& have) {
  std::vector<std::uint64_t> inputs;
  for (const auto* side : {&want, &have}) {
    for (const auto& m : *side) inputs.push_back(m.inputs_before);
  }
  std::sort(inputs.begin(), inputs.end());
  inputs.erase(std::unique(inputs.begin(), inputs.end()), inputs.end());
  const std::size_t n = inputs.size();
  auto at = [&](std::uint64_t input) { return std::lower_bound(inputs.begin(), inputs.end(), input) - inputs.begin(); };
  std::vector<std::int64_t> wanted(n, 0), had(n, 0);
  for (const auto& m : want) ++wanted[at(m.inputs_before)];
  for (const auto& m : have) ++had[at(m.inputs_before)];
  std::vector<std::int64_t> surplus(n);
  std::int64_t so_far = 0;
  for (std::size_t k = 0; k < n; ++k) surplus[k] = so_far += had[k] - wanted[k];
  // The lowest and highest surplus from each input on.
  std::vector<std::int64_t> lowest(n), highest(n);
  for (std::size_t k = n; k-- > 0;) {
    lowest[k] = k + 1 < n ? std::min(surplus[k], lowest[k + 1]) : surplus[k];
    highest[k] = k + 1 < n ? std::max(surplus[k], highest[k + 1]) : surplus[k];
  }
  std::vector<std::int64_t> extras(n), missing(n);
  std::int64_t extra_before = 0, missing_before = 0;
  for (std::size_t k = 0; k < n; ++k) {
    const std::int64_t extra_now = std::max<std::int64_t>(0, lowest[k]);
    const std::int64_t missing_now = std::max<std::int64_t>(0, -highest[k]);
    extras[k] = std::max<std::int64_t>(0, extra_now - extra_before);
    missing[k] = std::max<std::int64_t>(0, missing_now - missing_before);
    extra_before = std::max(extra_before, extra_now);
    missing_before = std::max(missing_before, missing_now);
  }
  Alignment out{std::vector<bool>(have.size(), false), std::vector<bool>(want.size(), false)};
  // The last ones after their input: walked backwards, each input's count taken from its end.
  for (std::size_t i = have.size(); i-- > 0;) {
    auto& left = extras[at(have[i].inputs_before)];
    if (left > 0) {
      out.extra[i] = true;
      --left;
    }
  }
  for (std::size_t i = want.size(); i-- > 0;) {
    auto& left = missing[at(want[i].inputs_before)];
    if (left > 0) {
      out.missing[i] = true;
      --left;
    }
  }
  return out;
}

// How many messages of `side` followed the same input as message `i`.
std::size_t after_same_input(const std::vector<ObservedMessage>& side, std::size_t i) {
  return static_cast<std::size_t>(std::count_if(side.begin(), side.end(), [&](const ObservedMessage& m) {
    return m.inputs_before == side[i].inputs_before;
  }));
}

void compare_topic(const std::string& topic, const TopicMessages* expected, const TopicMessages* got,
                   const CompareOptions& options, Comparison& result) {
  const auto& want = expected ? expected->messages : kNoMessages;
  const auto& have = got ? got->messages : kNoMessages;
  // The expected side says what a topic is; a topic only the other side has is compared as bytes.
  const MessageFields fields(expected ? expected->type : got->type);
  TopicComparison counts{topic, want.size(), have.size(), 0};
  std::vector<Difference> found;
  // A type is known of a side that has messages (a run learns it from the first one).
  if (!want.empty() && !have.empty()) {
    Difference base;
    base.topic = topic;
    compare_types(expected->type, got->type, base, found);
    counts.type_differs = !found.empty();
  }
  // Each difference with the input it came after, to list them in that order.
  std::vector<std::pair<std::uint64_t, Difference>> ordered;
  auto take_found = [&](std::uint64_t input) {
    for (auto& d : found) ordered.emplace_back(input, std::move(d));
    found.clear();
  };
  take_found(0);
  const Alignment alignment = align(want, have);
  auto base_of = [&](const std::vector<ObservedMessage>& side, std::size_t i, const std::vector<ObservedMessage>& other,
                     bool expected_side) {
    Difference base;
    base.topic = topic;
    base.index = i;
    base.after_input = side[i].after_input;
    const std::size_t here = after_same_input(side, i);
    std::size_t there = 0;
    for (const auto& m : other) there += m.inputs_before == side[i].inputs_before ? 1 : 0;
    base.expected_count = expected_side ? here : there;
    base.got_count = expected_side ? there : here;
    return base;
  };
  for (std::size_t i = 0; i < want.size(); ++i) {
    if (!alignment.missing[i]) continue;
    Difference base = base_of(want, i, have, true);
    base.kind = DifferenceKind::Missing;
    base.expected = whole_message(want[i].data, fields);
    base.got = "(none)";
    found.push_back(std::move(base));
    ++counts.differing;
    take_found(want[i].inputs_before);
  }
  for (std::size_t j = 0; j < have.size(); ++j) {
    if (!alignment.extra[j]) continue;
    Difference base = base_of(have, j, want, false);
    base.kind = DifferenceKind::Extra;
    base.expected = "(none)";
    base.got = whole_message(have[j].data, fields);
    found.push_back(std::move(base));
    ++counts.differing;
    take_found(have[j].inputs_before);
  }
  // The rest in pairs, in order.
  std::size_t i = 0, j = 0;
  for (;;) {
    while (i < want.size() && alignment.missing[i]) ++i;
    while (j < have.size() && alignment.extra[j]) ++j;
    if (i >= want.size() || j >= have.size()) break;
    Difference base;
    base.topic = topic;
    base.index = i;
    base.after_input = want[i].after_input;
    const auto& e_data = want[i].data;
    const auto& g_data = have[j].data;
    if (!fields.structured()) {
      MessageComparer(options, base, found).bytes(e_data, g_data);
    } else if (e_data == g_data) {
      // Equal: nothing to compare, but a tolerance that names its fields is not mistyped.
      if (!all_matched(result.tolerance_matched)) {
        if (auto e = fields(e_data)) MessageComparer(options, base, found, &result.tolerance_matched).json(*e, *e, "");
      }
    } else {
      auto e = fields(e_data);
      auto g = fields(g_data);
      if (!e || !g) {
        base.kind = DifferenceKind::Undecodable;
        base.in_expected = !e;
        base.expected = e ? fields.kind() : undecoded(e_data, fields);
        base.got = g ? fields.kind() : undecoded(g_data, fields);
        found.push_back(base);
      } else {
        MessageComparer(options, base, found, &result.tolerance_matched).json(*e, *g, "");
      }
    }
    if (!found.empty()) ++counts.differing;
    take_found(want[i].inputs_before);
    ++i;
    ++j;
  }
  std::stable_sort(ordered.begin(), ordered.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  result.total_differences += ordered.size();
  for (auto& [input, d] : ordered) {
    if (result.differences.size() >= options.max_differences) break;
    result.differences.push_back(std::move(d));
  }
  result.topics.push_back(std::move(counts));
}

}  // namespace

const char* to_string(DifferenceKind kind) noexcept {
  switch (kind) {
    case DifferenceKind::Bytes: return "bytes";
    case DifferenceKind::Field: return "field";
    case DifferenceKind::Missing: return "missing";
    case DifferenceKind::Extra: return "extra";
    case DifferenceKind::Undecodable: return "undecodable";
    case DifferenceKind::Type: return "type";
  }
  return "?";
}

Result<Tolerance> parse_tolerance(std::string_view text) {
  const auto eq = text.rfind('=');
  if (eq == std::string_view::npos || eq == 0 || eq + 1 == text.size()) {
    return Status(ErrorCode::InvalidArgument, "tolerance '" + std::string(text) + "' is not FIELD=EPS (pose.x=1e-6)",
                  Subject::option("tolerance"));
  }
  const std::string eps(text.substr(eq + 1));
  char* end = nullptr;
  const double value = std::strtod(eps.c_str(), &end);
  if (end == eps.c_str() || *end != '\0' || !(value >= 0) || std::isinf(value)) {
    return Status(ErrorCode::InvalidArgument,
                  "tolerance '" + std::string(text) + "': '" + eps + "' is not a non-negative number",
                  Subject::option("tolerance"));
  }
  return Tolerance{std::string(text.substr(0, eq)), value};
}

bool Comparison::expected_undecodable() const noexcept {
  for (const auto& d : differences) {
    if (d.kind == DifferenceKind::Undecodable && d.in_expected) return true;
  }
  return false;
}

std::vector<std::string> unmatched_tolerances(const CompareOptions& options, const std::vector<const Comparison*>& comparisons) {
  std::vector<std::string> unmatched;
  for (std::size_t t = 0; t < options.tolerances.size(); ++t) {
    const bool matched = std::any_of(comparisons.begin(), comparisons.end(), [&](const Comparison* c) {
      return t < c->tolerance_matched.size() && c->tolerance_matched[t];
    });
    if (!matched) unmatched.push_back(options.tolerances[t].field);
  }
  return unmatched;
}

Comparison compare(const MessageSet& expected, const MessageSet& got, const CompareOptions& options) {
  Comparison result;
  result.tolerance_matched.assign(options.tolerances.size(), false);
  for (const auto& t : expected) compare_topic(t.topic, &t, find_topic(got, t.topic), options, result);
  for (const auto& t : got) {
    if (find_topic(expected, t.topic) == nullptr) compare_topic(t.topic, nullptr, &t, options, result);
  }
  return result;
}

}  // namespace cerulion::verify
