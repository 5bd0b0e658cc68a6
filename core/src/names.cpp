// SPDX-License-Identifier: Apache-2.0
#include "cerulion/core/names.hpp"

#include <cstdlib>

namespace cerulion {
namespace {

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
         c == '.';
}

void append_hex(std::string& out, unsigned char c) {
  static const char* digits = "0123456789abcdef";
  out += "\\x";
  out.push_back(digits[c >> 4]);
  out.push_back(digits[c & 0xF]);
}

/// `text` fit for a one-line message: bytes outside printable ASCII as \xHH, a backslash doubled,
/// so a tab or a stray UTF-8 byte is seen for what it is and cannot break the line.
std::string escaped(std::string_view text) {
  std::string out;
  for (char ch : text) {
    auto c = static_cast<unsigned char>(ch);
    if (c == '\\') {
      out += "\\\\";
    } else if (c >= 0x20 && c < 0x7F) {
      out.push_back(ch);
    } else {
      append_hex(out, c);
    }
  }
  return out;
}

/// The character starting at `i`, escaped: a UTF-8 lead byte takes its continuation bytes along,
/// so 'é' is named as '\xc3\xa9' rather than half of it.
std::string escaped_character(std::string_view text, std::size_t i) {
  std::size_t end = i + 1;
  if (static_cast<unsigned char>(text[i]) >= 0xC0) {
    while (end < text.size() && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) ++end;
  }
  return escaped(text.substr(i, end - i));
}

Status bad_topic(std::string_view name, const std::string& why) {
  return {ErrorCode::InvalidTopicName, "invalid topic name '" + escaped(name) + "': " + why,
          Subject::topic(std::string(name))};
}

}  // namespace

Result<std::string> normalize_topic_name(std::string_view name) {
  if (name.empty()) return bad_topic(name, "it is empty");
  std::string topic = name.front() == '/' ? std::string(name) : "/" + std::string(name);
  if (topic.size() > kMaxTopicNameLength) {
    return bad_topic(name, "longer than " + std::to_string(kMaxTopicNameLength) + " characters");
  }
  if (topic.size() == 1) return bad_topic(name, "it has no name after '/'");
  if (topic.back() == '/') return bad_topic(name, "it ends with '/'");
  std::size_t start = 1;
  while (start <= topic.size()) {
    std::size_t end = topic.find('/', start);
    if (end == std::string::npos) end = topic.size();
    std::string_view part(topic.data() + start, end - start);
    if (part.empty()) return bad_topic(name, "empty component ('//')");
    if (part == "." || part == "..") return bad_topic(name, "'" + std::string(part) + "' components are not allowed");
    for (std::size_t i = 0; i < part.size(); ++i) {
      if (!is_name_char(part[i])) {
        return bad_topic(name, "character '" + escaped_character(part, i) +
                                   "' is not allowed (use A-Z a-z 0-9 _ . - and /)");
      }
    }
    start = end + 1;
  }
  return topic;
}

Status validate_domain(std::string_view domain) {
  if (domain.empty()) return {ErrorCode::InvalidTopicName, "the domain name is empty", Subject::domain({})};
  if (domain.size() > kMaxDomainLength) {
    return {ErrorCode::InvalidTopicName,
            "domain '" + escaped(domain) + "' is longer than " + std::to_string(kMaxDomainLength) + " characters",
            Subject::domain(std::string(domain))};
  }
  for (std::size_t i = 0; i < domain.size(); ++i) {
    char c = domain[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    if (!ok) {
      return {ErrorCode::InvalidTopicName, "invalid domain '" + escaped(domain) + "': character '" +
                                               escaped_character(domain, i) +
                                               "' is not allowed (use A-Z a-z 0-9 _ and -)",
              Subject::domain(std::string(domain))};
    }
  }
  return Status::success();
}

Status validate_segment_name(std::string_view domain, std::string_view normalized_topic) {
  const std::size_t length = segment_name(domain, normalized_topic).size() - 1;  // without its '/'
  if (length <= kMaxSegmentFileNameLength) return Status::success();
  const std::size_t room = kMaxSegmentFileNameLength - (segment_name("", "").size() - 1);
  return {ErrorCode::InvalidArgument,
          "topic '" + escaped(normalized_topic) + "' (" + std::to_string(normalized_topic.size()) +
              " characters) and domain '" + escaped(domain) + "' (" + std::to_string(domain.size()) +
              " characters) are too long together: their shared-memory file name would be " +
              std::to_string(length) + " bytes, over the limit of " + std::to_string(kMaxSegmentFileNameLength) +
              " (topic and domain may have " + std::to_string(room) + " characters together)",
          Subject::topic(std::string(normalized_topic))};
}

std::string default_domain() {
  const char* env = std::getenv("CERULION_DOMAIN");
  return (env && *env) ? std::string(env) : std::string("default");
}

std::string segment_prefix(std::string_view domain) { return "cerulion." + std::string(domain) + ":"; }

std::string segment_name(std::string_view domain, std::string_view normalized_topic) {
  // '/' cannot appear in a shm name; ':' cannot appear in a topic, so the mapping reverses exactly.
  std::string name = "/cerulion." + std::string(domain);
  for (char c : normalized_topic) name.push_back(c == '/' ? ':' : c);
  return name;
}

std::string topic_from_segment_file(std::string_view domain, std::string_view file_name) {
  const std::string prefix = segment_prefix(domain);
  if (file_name.substr(0, prefix.size()) != prefix) return {};
  std::string topic;
  for (char c : file_name.substr(prefix.size() - 1)) topic.push_back(c == ':' ? '/' : c);
  auto normalized = normalize_topic_name(topic);
  return normalized.ok() ? *normalized : std::string();
}

}  // namespace cerulion
