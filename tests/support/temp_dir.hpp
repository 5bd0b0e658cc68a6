// SPDX-License-Identifier: Apache-2.0
#pragma once
// Temp files of a test process, in a folder of its own.

#include <atomic>
#include <filesystem>
#include <stdexcept>
#include <stdlib.h>
#include <string>
#include <system_error>
#include <unistd.h>

namespace cerulion::test {

/// This process's temp folder: made fresh by mkdtemp (a folder named after the pid would be
/// reused by a later process of the same pid, and its files would make "already exists" errors),
/// and removed when the process exits (not by a forked child, which shares it).
class ProcessTempDir {
 public:
  ProcessTempDir() : owner_(::getpid()) {
    std::string pattern = (std::filesystem::temp_directory_path() / "cerulion-test-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp " + pattern + " failed");
    path_ = pattern;
  }
  ~ProcessTempDir() {
    std::error_code ignored;
    if (::getpid() == owner_) std::filesystem::remove_all(path_, ignored);
  }
  ProcessTempDir(const ProcessTempDir&) = delete;
  ProcessTempDir& operator=(const ProcessTempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  pid_t owner_;
  std::filesystem::path path_;
};

/// A path no other call in any process returns, in this process's temp folder (ctest -j2 safe).
inline std::string fresh_temp_path(const std::string& stem) {
  static ProcessTempDir dir;
  static std::atomic<int> counter{0};
  return (dir.path() / (std::to_string(counter++) + "-" + stem)).string();
}

}  // namespace cerulion::test
