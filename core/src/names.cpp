#include "cerulion/core/names.hpp"

#include <cstdlib>

namespace cerulion {
namespace {

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
         c == '.';
}

Status bad_topic(std::string_view name, const std::string& why) {
  return {ErrorCode::InvalidTopicName, "invalid topic name '" + std::string(name) + "': " + why};
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
    for (char c : part) {
      if (!is_name_char(c)) {
        std::string shown = (c >= 32 && c < 127) ? std::string(1, c) : "\\x" + std::to_string(static_cast<unsigned char>(c));
        return bad_topic(name, "character '" + shown + "' is not allowed (use A-Z a-z 0-9 _ . - and /)");
      }
    }
    start = end + 1;
  }
  return topic;
}

Status validate_domain(std::string_view domain) {
  if (domain.empty()) return {ErrorCode::InvalidTopicName, "the domain name is empty"};
  if (domain.size() > kMaxDomainLength) {
    return {ErrorCode::InvalidTopicName, "domain '" + std::string(domain) + "' is longer than " +
                                             std::to_string(kMaxDomainLength) + " characters"};
  }
  for (char c : domain) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    if (!ok) {
      return {ErrorCode::InvalidTopicName,
              "invalid domain '" + std::string(domain) + "': use only A-Z a-z 0-9 _ and -"};
    }
  }
  return Status::success();
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
