// SPDX-License-Identifier: Apache-2.0
#pragma once
// Topics that came and went. A reader that follows a domain (every topic, or patterns) finds new
// topics as they appear, but a topic can be created, published and removed between two of its
// looks (`cerulion pub /t x --once`). While such a reader listens, the last participant to leave a
// topic with messages in it notes the topic in the domain's log, so the reader can tell what it
// never saw, and how much of it.
//
//   auto removed = cerulion::RemovedTopicLog::listen("default");
//   for (const auto& t : removed->take()) { /* t.topic came and went with t.published messages */ }

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cerulion/core/options.hpp"
#include "cerulion/core/status.hpp"

namespace cerulion {

/// A topic removed with messages in it: its last participant left it.
struct RemovedTopic {
  std::string topic;
  /// Messages published in it, all told.
  std::uint64_t published = 0;
  /// With the name, tells this topic from an earlier or later one of the same name
  /// (Subscriber::created_realtime_ns()).
  std::uint64_t created_realtime_ns = 0;
  std::uint64_t removed_realtime_ns = 0;
};

namespace detail {
struct RemovedTopicLogImpl;
}

/// Listens for topics removed from one domain. Move-only; listening ends with the object.
class RemovedTopicLog {
 public:
  /// Holds the last this many removals: more between two take() calls are counted as overrun.
  static constexpr std::uint32_t kCapacity = 256;

  /// Starts listening in `domain`. The log is a file in /dev/shm (cerulion-removed.<domain>), made
  /// by the first listener and removed by the last; while none listens, removing a topic costs
  /// nothing more. Errors as for opening a topic: InvalidArgument (a bad domain), Corrupted (a
  /// FIFO, a link or a damaged log in its place), PermissionDenied (another user's log),
  /// OutOfMemory (a full /dev/shm).
  static Result<RemovedTopicLog> listen(std::string_view domain = default_domain());

  RemovedTopicLog(RemovedTopicLog&&) noexcept;
  RemovedTopicLog& operator=(RemovedTopicLog&&) noexcept;
  RemovedTopicLog(const RemovedTopicLog&) = delete;
  RemovedTopicLog& operator=(const RemovedTopicLog&) = delete;
  ~RemovedTopicLog();

  /// The topics removed since the last call (since listen() for the first), oldest first.
  std::vector<RemovedTopic> take();
  /// Removals noted but overwritten before take() reached them (more than kCapacity between two
  /// calls), or whose noting process died half way: topics that came and went, unnamed.
  std::uint64_t overrun() const noexcept;

 private:
  explicit RemovedTopicLog(std::unique_ptr<detail::RemovedTopicLogImpl> impl);
  std::unique_ptr<detail::RemovedTopicLogImpl> impl_;
};

}  // namespace cerulion
