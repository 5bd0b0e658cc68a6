// SPDX-License-Identifier: Apache-2.0
#pragma once
// What keeps a bridge from sending back what it imported: the import side publishes each message
// under its topic's lock and remembers the sequence number it got; the export side, reading the
// same topic, skips a sample of this process whose sequence is remembered. Exact (a local
// publisher of the same process on the same topic is still exported) and race-free (a tap that
// reads the sample before publish() returned waits for the lock).

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace cerulion::bridge::detail {

class LoopGuard {
 public:
  /// One topic's lock and the sequences the bridge published on it.
  struct Entry {
    std::mutex mutex;
    std::deque<std::uint64_t> published;  ///< ascending; the last kRemembered
    void remember(std::uint64_t sequence);
  };
  /// Sequences remembered per topic: more than a tap's ring can hold (kMaxDepth).
  static constexpr std::size_t kRemembered = 8192;

  /// The entry of `topic`, created on first use; lives as long as the guard.
  Entry& entry(const std::string& topic);
  /// Whether the sample (publisher pid, sequence) of `topic` is one this bridge imported.
  bool imported(const std::string& topic, std::uint32_t publisher_pid, std::uint64_t sequence);

 private:
  std::mutex mutex_;
  std::map<std::string, std::unique_ptr<Entry>> entries_;
};

}  // namespace cerulion::bridge::detail
