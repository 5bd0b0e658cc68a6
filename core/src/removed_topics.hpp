// SPDX-License-Identifier: Apache-2.0
#pragma once
// Inside RemovedTopicLog: the log's layout in /dev/shm, and how a topic's last participant notes
// its removal.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "cerulion/core/detail/shm_header.hpp"
#include "cerulion/core/removed_topics.hpp"
#include "layout.hpp"

namespace cerulion::detail {

struct alignas(64) RemovedLogHeader {
  ShmStamp stamp;
  std::uint32_t capacity;
  std::uint32_t checksum;  ///< over the stamp and the capacity
  alignas(64) std::atomic<std::uint64_t> next;  ///< the number of removals noted so far
};

/// One removal. `state` is 2i+1 while removal i is written into it, 2i+2 once it is complete: a
/// reader copies the fields between two loads of it that agree.
struct alignas(64) RemovedLogEntry {
  std::atomic<std::uint64_t> state;
  std::atomic<std::uint64_t> published;
  std::atomic<std::uint64_t> created_realtime_ns;
  std::atomic<std::uint64_t> removed_realtime_ns;
  char topic[kTopicNameCapacity];
};

inline constexpr HeaderRule kRemovedLogRule{"CERUGONE", 1, sizeof(RemovedLogHeader),
                                            offsetof(RemovedLogHeader, checksum), "log of removed topics"};
inline constexpr std::uint64_t kRemovedLogBytes =
    sizeof(RemovedLogHeader) + RemovedTopicLog::kCapacity * sizeof(RemovedLogEntry);

/// "cerulion-removed.<domain>".
std::string removed_log_name(std::string_view domain);

/// Notes that `topic` of `domain` was removed with `published` messages in it, when a listener
/// holds the domain's log; otherwise does nothing. Never fails: a log it cannot use (damaged,
/// another user's) is left as it is.
void note_removed_topic(std::string_view domain, std::string_view topic, std::uint64_t published,
                        std::uint64_t created_realtime_ns);

/// For clean: the domain's log of removed topics when no process listens to it any more (its
/// listeners were killed), removed unless `dry_run`: why, or nullopt when there is none to remove.
std::optional<std::string> clean_removed_log(std::string_view domain, bool dry_run);

}  // namespace cerulion::detail
