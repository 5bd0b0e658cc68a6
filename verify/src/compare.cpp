// SPDX-License-Identifier: Apache-2.0
#include "cerulion/verify/compare.hpp"

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

// A message missing on one side, as the report shows it: a json one as its text (the parse has
// checked it is UTF-8), a ROS 2 one as its fields, one that does not decode in hex, any other by
// its size.
std::string whole_message(const std::vector<std::byte>& data, const MessageFields& fields) {
  if (!fields.structured()) return bytes_counted(data.size());
  auto value = fields(data);
  if (!value) return "not " + fields.kind() + ": " + hex_bytes(data, 0);
  return shown(*value);
}

std::string child_path(const std::string& parent, const std::string& key) {
  return parent.empty() ? key : parent + "." + key;
}

// Compares one message pair; adds what differs to `out`.
class MessageComparer {
 public:
  MessageComparer(const CompareOptions& options, Difference base, std::vector<Difference>& out)
      : options_(options), base_(std::move(base)), out_(out) {}

  void bytes(const std::vector<std::byte>& expected, const std::vector<std::byte>& got) {
    if (expected == got) return;
    std::size_t at = 0;
    while (at < expected.size() && at < got.size() && expected[at] == got[at]) ++at;
    if (at == expected.size() || at == got.size()) {
      add(DifferenceKind::Bytes, "size", bytes_counted(expected.size()), bytes_counted(got.size()));
    } else {
      add(DifferenceKind::Bytes, "byte " + std::to_string(at), hex_bytes(expected, at), hex_bytes(got, at));
    }
  }

  void json(const Json& expected, const Json& got, const std::string& path) {
    if (expected.is_number() && got.is_number()) {
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
  std::size_t added_ = 0;
};

const std::vector<ObservedMessage> kNoMessages;

void compare_topic(const std::string& topic, const TopicMessages* expected, const TopicMessages* got,
                   const CompareOptions& options, Comparison& result) {
  const auto& want = expected ? expected->messages : kNoMessages;
  const auto& have = got ? got->messages : kNoMessages;
  // The expected side says what a topic is; a topic only the other side has is compared as bytes.
  const MessageFields fields(expected ? expected->type : got->type);
  TopicComparison counts{topic, want.size(), have.size(), 0};
  std::vector<Difference> found;
  for (std::size_t i = 0; i < std::max(want.size(), have.size()); ++i) {
    Difference base;
    base.topic = topic;
    base.index = i;
    base.after_input = i < want.size() ? want[i].after_input : have[i].after_input;
    const std::size_t before = found.size();
    if (i >= have.size()) {
      base.kind = DifferenceKind::Missing;
      base.expected = whole_message(want[i].data, fields);
      base.got = "(none)";
      found.push_back(base);
    } else if (i >= want.size()) {
      base.kind = DifferenceKind::Extra;
      base.expected = "(none)";
      base.got = whole_message(have[i].data, fields);
      found.push_back(base);
    } else if (!fields.structured()) {
      MessageComparer(options, base, found).bytes(want[i].data, have[i].data);
    } else if (want[i].data != have[i].data) {
      auto e = fields(want[i].data);
      auto g = fields(have[i].data);
      if (!e || !g) {
        base.kind = DifferenceKind::Undecodable;
        base.in_expected = !e;
        base.expected = e ? fields.kind() : "not " + fields.kind() + ": " + hex_bytes(want[i].data, 0);
        base.got = g ? fields.kind() : "not " + fields.kind() + ": " + hex_bytes(have[i].data, 0);
        found.push_back(base);
      } else {
        MessageComparer(options, base, found).json(*e, *g, "");
      }
    }
    if (found.size() > before) ++counts.differing;
  }
  result.total_differences += found.size();
  for (auto& d : found) {
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

Comparison compare(const MessageSet& expected, const MessageSet& got, const CompareOptions& options) {
  Comparison result;
  for (const auto& t : expected) compare_topic(t.topic, &t, find_topic(got, t.topic), options, result);
  for (const auto& t : got) {
    if (find_topic(expected, t.topic) == nullptr) compare_topic(t.topic, nullptr, &t, options, result);
  }
  return result;
}

}  // namespace cerulion::verify
