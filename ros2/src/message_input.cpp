// SPDX-License-Identifier: Apache-2.0
#include "cerulion/ros2/message_input.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace cerulion::ros2 {
namespace {

class FlowParser {
 public:
  explicit FlowParser(std::string_view text) : text_(text) {}

  Result<nlohmann::json> document() {
    skip();
    nlohmann::json out;
    // Braces are optional around the top mapping: "data: hi".
    if (pos_ < text_.size() && text_[pos_] != '{' && text_[pos_] != '[' && bare_mapping()) {
      if (!mapping_body(out, '\0')) return error();
    } else if (!value(out)) {
      return error();
    }
    skip();
    if (pos_ != text_.size()) {
      why_ = "unexpected '" + std::string(1, text_[pos_]) + "'";
      return error();
    }
    return out;
  }

 private:
  Status error() const {
    return Status(ErrorCode::InvalidArgument,
                  "not JSON or YAML flow: column " + std::to_string(pos_ + 1) + ": " + why_);
  }
  void skip() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' || text_[pos_] == '\r')) ++pos_;
  }
  /// Whether the text is `key: ...` at the top (a colon followed by a space before any bracket).
  bool bare_mapping() const {
    for (std::size_t i = pos_; i < text_.size(); ++i) {
      const char c = text_[i];
      if (c == '{' || c == '[' || c == ',' || c == '"' || c == '\'') return false;
      if (c == ':' && (i + 1 == text_.size() || text_[i + 1] == ' ')) return true;
    }
    return false;
  }
  bool value(nlohmann::json& out) {
    skip();
    if (pos_ >= text_.size()) {
      why_ = "a value is missing";
      return false;
    }
    const char c = text_[pos_];
    if (c == '{') {
      ++pos_;
      return mapping_body(out, '}');
    }
    if (c == '[') {
      ++pos_;
      out = nlohmann::json::array();
      skip();
      if (pos_ < text_.size() && text_[pos_] == ']') {
        ++pos_;
        return true;
      }
      for (;;) {
        nlohmann::json item;
        if (!value(item)) return false;
        out.push_back(std::move(item));
        skip();
        if (pos_ < text_.size() && text_[pos_] == ',') {
          ++pos_;
          continue;
        }
        if (pos_ < text_.size() && text_[pos_] == ']') {
          ++pos_;
          return true;
        }
        why_ = "expected ',' or ']'";
        return false;
      }
    }
    if (c == '"' || c == '\'') {
      std::string s;
      if (!quoted(s)) return false;
      out = std::move(s);
      return true;
    }
    out = plain_scalar(plain(",]}"));
    return true;
  }
  /// Pairs up to `close` ('\0': the end of the text).
  bool mapping_body(nlohmann::json& out, char close) {
    out = nlohmann::json::object();
    skip();
    if (close && pos_ < text_.size() && text_[pos_] == close) {
      ++pos_;
      return true;
    }
    for (;;) {
      skip();
      std::string key;
      if (pos_ < text_.size() && (text_[pos_] == '"' || text_[pos_] == '\'')) {
        if (!quoted(key)) return false;
      } else {
        key = plain(":,}");
      }
      skip();
      if (key.empty() || pos_ >= text_.size() || text_[pos_] != ':') {
        why_ = "expected 'key: value'";
        return false;
      }
      ++pos_;
      nlohmann::json v;
      if (!value(v)) return false;
      out[key] = std::move(v);
      skip();
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (close ? (pos_ < text_.size() && text_[pos_] == close) : pos_ == text_.size()) {
        if (close) ++pos_;
        return true;
      }
      why_ = close ? std::string("expected ',' or '") + close + "'" : std::string("expected ','");
      return false;
    }
  }
  bool quoted(std::string& out) {
    const char quote = text_[pos_++];
    for (; pos_ < text_.size(); ++pos_) {
      char c = text_[pos_];
      if (quote == '\'' && c == '\'' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '\'') {
        out += '\'';  // '' is a quote in single quotes
        ++pos_;
      } else if (c == quote) {
        ++pos_;
        return true;
      } else if (quote == '"' && c == '\\' && pos_ + 1 < text_.size()) {
        c = text_[++pos_];
        out += c == 'n' ? '\n' : c == 't' ? '\t' : c == 'r' ? '\r' : c;
      } else {
        out += c;
      }
    }
    why_ = "a quoted string is not closed";
    return false;
  }
  /// A plain scalar up to one of `stops`, trimmed.
  std::string plain(std::string_view stops) {
    const std::size_t start = pos_;
    while (pos_ < text_.size() && stops.find(text_[pos_]) == std::string_view::npos) ++pos_;
    std::string_view s = text_.substr(start, pos_ - start);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return std::string(s);
  }
  static nlohmann::json plain_scalar(const std::string& s) {
    if (s == "true" || s == "True" || s == "TRUE") return true;
    if (s == "false" || s == "False" || s == "FALSE") return false;
    if (s.empty() || s == "null" || s == "Null" || s == "~") return nullptr;
    if (s == ".inf" || s == "+.inf") return std::numeric_limits<double>::infinity();
    if (s == "-.inf") return -std::numeric_limits<double>::infinity();
    if (s == ".nan") return std::numeric_limits<double>::quiet_NaN();
    const char* end = s.data() + s.size();
    if (s[0] == '-') {
      std::int64_t i = 0;
      if (auto r = std::from_chars(s.data(), end, i); r.ec == std::errc{} && r.ptr == end) return i;
    } else {
      std::uint64_t u = 0;
      const char* begin = s[0] == '+' ? s.data() + 1 : s.data();
      if (auto r = std::from_chars(begin, end, u); r.ec == std::errc{} && r.ptr == end && begin != end) return u;
    }
    char* stop = nullptr;
    const double d = std::strtod(s.c_str(), &stop);
    if (stop == s.c_str() + s.size() && (std::isdigit(static_cast<unsigned char>(s.back())) || s.back() == '.')) return d;
    return s;
  }

  std::string_view text_;
  std::size_t pos_ = 0;
  std::string why_;
};

}  // namespace

Result<nlohmann::json> parse_message_input(std::string_view text) {
  auto json = nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
  if (!json.is_discarded()) return json;
  return FlowParser(text).document();
}

}  // namespace cerulion::ros2
