// SPDX-License-Identifier: Apache-2.0
#pragma once
// How one process fares attached to many topics, as a recorder or a flashback keeper tapping a
// whole robot is: the address space, memory, mappings and descriptors it holds, and whether every
// topic still carries its messages intact.

#include <cstdint>
#include <string>

#include "cerulion/core/options.hpp"
#include "cerulion/core/status.hpp"

namespace cerulion::bench {

struct TopicScaleOptions {
  std::uint32_t topics = 2000;
  /// The payload published on each topic, bytes.
  std::uint64_t payload = 64;
  /// Each topic's payload ceiling: its address space no longer depends on it.
  std::uint64_t max_payload = kDefaultMaxPayload;
  /// The domain the topics are created in; empty = a fresh one of this process's.
  std::string domain;
};

/// This process's figures before attaching and once attached to every topic (publisher and
/// subscriber each), all from /proc/self.
struct TopicScaleReport {
  std::uint32_t topics = 0;
  double attach_seconds = 0;        ///< creating both participants on every topic
  double round_seconds = 0;         ///< one message published and received on every topic
  std::uint64_t address_space_before = 0, address_space_after = 0;  ///< VmSize, bytes
  std::uint64_t resident_before = 0, resident_after = 0;            ///< VmRSS, bytes
  std::uint64_t mappings_before = 0, mappings_after = 0;            ///< lines of /proc/self/maps
  std::uint64_t descriptors_before = 0, descriptors_after = 0;      ///< entries of /proc/self/fd
  std::uint64_t shm_committed = 0;  ///< memory the segments hold in /dev/shm (their blocks)
  std::uint64_t intact = 0;         ///< topics whose message arrived byte-exact
};

/// Attaches a publisher and a subscriber to `options.topics` topics, publishes one message on
/// each and receives it, and measures what that costs; the topics are gone when it returns.
/// The first failure (a full /dev/shm, too few descriptors) is returned as it is.
[[nodiscard]] Result<TopicScaleReport> measure_topic_scale(const TopicScaleOptions& options);

}  // namespace cerulion::bench
