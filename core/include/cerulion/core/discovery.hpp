#pragma once
// Looking at what runs in a domain without joining it: list topics, inspect one, clean up what dead
// processes left behind. None of these calls attaches to a topic or holds a publisher back.

#include <cstdint>
#include <string>
#include <sys/types.h>
#include <vector>

#include "cerulion/core/options.hpp"
#include "cerulion/core/status.hpp"

namespace cerulion {

/// One participant of a topic as seen in its segment.
struct ParticipantInfo {
  Role role = Role::Subscriber;
  std::uint32_t pid = 0;
  bool alive = true;            ///< false: the process is gone (or its pid was reused).
  std::uint64_t position = 0;   ///< Next sequence this reader will receive (readers only).
  std::uint64_t lost = 0;       ///< Messages this reader lost (free run, taps).
  std::uint64_t messages = 0;   ///< Received (readers) or published (publishers).
};

/// A snapshot of one topic.
struct TopicInfo {
  std::string name;              ///< e.g. "/robot/camera"
  std::string domain;
  std::string segment;           ///< shared-memory object name, e.g. "/cerulion.default:robot:camera"
  Mode mode = Mode::Lockstep;
  bool mode_fixed = false;       ///< false while only subscribers have set it (provisional).
  std::uint32_t depth = 0;
  std::uint32_t slot_count = 0;
  std::uint64_t max_payload = 0; ///< Payload ceiling, bytes.
  std::uint64_t largest_payload = 0;  ///< Largest payload published so far, bytes.
  std::uint64_t published = 0;   ///< Messages published so far.
  std::uint64_t last_publish_realtime_ns = 0;
  double rate_hz = 0;            ///< Recent publish rate (0 when idle for over 2 periods).
  std::uint32_t creator_pid = 0;
  std::uint64_t created_realtime_ns = 0;
  std::uint64_t segment_bytes = 0;   ///< Address space reserved (sparse).
  std::uint64_t resident_bytes = 0;  ///< Memory actually committed in /dev/shm.
  std::uint32_t owner_uid = 0;
  std::uint32_t permissions = 0;     ///< e.g. 0600
  std::vector<ParticipantInfo> participants;

  std::uint32_t count(Role role, bool alive_only = true) const noexcept;
  /// True when no live process takes part (what `clean` removes).
  bool abandoned() const noexcept;
};

/// Every topic of a domain (sorted by name). Segments that cannot be read are reported by
/// `problems`, one line each, rather than failing the whole listing.
struct TopicListing {
  std::vector<TopicInfo> topics;
  std::vector<std::string> problems;
};
Result<TopicListing> list_topics(std::string_view domain = default_domain());

/// One topic; NotFound if it does not exist.
Result<TopicInfo> inspect_topic(std::string_view topic, std::string_view domain = default_domain());

/// What clean did (or would do) to one segment.
struct CleanedSegment {
  std::string topic;
  std::string segment;
  std::string reason;   ///< e.g. "no live participant (dead: 1234, 1240)", "corrupted: bad magic"
  bool removed = false;
};

/// Removes segments of the domain that only dead processes use (pid and start time checked), and
/// corrupted ones. With `force_topic` set, removes that topic whatever is attached. `dry_run`
/// reports without removing. Never touches a topic with a live participant otherwise.
Result<std::vector<CleanedSegment>> clean_domain(std::string_view domain, bool dry_run,
                                                 std::string_view force_topic = {});

}  // namespace cerulion
