// SPDX-License-Identifier: Apache-2.0
#pragma once
// Helpers of the record/play/info/recover tests: temp files and the shared MCAP samples.

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "everyday_helpers.hpp"
#include "process.hpp"
#include "temp_dir.hpp"

namespace cerulion::test {

/// A fresh path in this process's own temp folder (ctest -j2 safe).
inline std::string record_temp_path(const std::string& stem) { return fresh_temp_path(stem); }

/// ../shared/reference/mcap-samples next to the repository (read in place), "" when absent.
inline std::string mcap_sample(const std::string& name) {
  auto repo = std::filesystem::path(__FILE__).parent_path().parent_path().parent_path();
  auto path = repo.parent_path() / "shared" / "reference" / "mcap-samples" / name;
  return std::filesystem::exists(path) ? path.string() : std::string();
}

inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
inline void spit(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

/// `cerulion info --json FILE`.
inline nlohmann::json info_json(const std::string& file) {
  auto r = run_cerulion({"info", "--json", file});
  REQUIRE(r.exit_code == 0);
  return nlohmann::json::parse(r.out);
}

inline std::uint64_t topic_count(const nlohmann::json& info, const std::string& topic) {
  for (const auto& c : info["channels"]) if (c["topic"] == topic) return c["message_count"];
  return 0;
}

/// Waits until a tap is attached to `topic` in `domain`.
inline bool tap_attached(const std::string& topic, const std::string& domain = {}) {
  return eventually([&] { return live_readers(topic_snapshot(topic, domain), "tap") >= 1; }, std::chrono::seconds(10));
}


}  // namespace cerulion::test
