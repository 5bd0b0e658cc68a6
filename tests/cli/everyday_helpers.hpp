// SPDX-License-Identifier: Apache-2.0
#pragma once
// Helpers of the pub/echo/topic/clean tests: JSON lines, topic snapshots through the real binary,
// and a domain of its own for tests that look at a whole domain.

#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

#include <nlohmann/json.hpp>

#include "cerulion/core/names.hpp"
#include "process.hpp"

namespace cerulion::test {

/// Every non-empty line of `text` parsed as JSON (throws on a line that is not JSON).
inline std::vector<nlohmann::json> json_lines(const std::string& text) {
  std::vector<nlohmann::json> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) lines.push_back(nlohmann::json::parse(line));
  }
  return lines;
}

/// Non-empty lines of `text`.
inline std::vector<std::string> text_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

/// `args` of a cerulion command run in `domain`: "--domain", domain, args...
inline std::vector<std::string> in_domain(const std::string& domain, std::vector<std::string> args) {
  args.insert(args.begin(), {"--domain", domain});
  return args;
}

/// `cerulion [--domain D] topic info TOPIC --json`, or null when it fails.
inline nlohmann::json topic_snapshot(const std::string& topic, const std::string& domain = {}) {
  std::vector<std::string> args;
  if (!domain.empty()) args = {"--domain", domain};
  for (const char* a : {"topic", "info"}) args.emplace_back(a);
  args.push_back(topic);
  args.emplace_back("--json");
  auto result = run_cerulion(args);
  if (result.exit_code != 0) return nullptr;
  return nlohmann::json::parse(result.out);
}

/// Live readers of `role` ("subscriber", "tap") attached to the topic now.
inline int live_readers(const nlohmann::json& snapshot, const std::string& role) {
  if (snapshot.is_null()) return 0;
  int count = 0;
  for (const auto& p : snapshot["participants"]) {
    if (p["role"] == role && p["alive"] == true) ++count;
  }
  return count;
}

/// True when every live subscriber has received all that was published.
inline bool subscribers_caught_up(const nlohmann::json& snapshot) {
  if (snapshot.is_null()) return false;
  for (const auto& p : snapshot["participants"]) {
    if (p["role"] == "subscriber" && p["alive"] == true && p["position"] != snapshot["published"]) return false;
  }
  return true;
}

/// The /dev/shm file name of a topic (what count_shm_entries() counts).
inline std::string shm_file(const std::string& topic, const std::string& domain = default_domain()) {
  return segment_name(domain, topic).substr(1);
}

}  // namespace cerulion::test
