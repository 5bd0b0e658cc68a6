// SPDX-License-Identifier: Apache-2.0
#pragma once
// Looking at what runs in a domain without joining it: list topics, inspect one, clean up what dead
// processes left behind. None of these calls attaches to a topic or holds a publisher back.

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
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

/// A participant whose process died, as whoever evicted it from the topic recorded it. Readers
/// evict the dead within moments, so this record, not the participant list, is where a watcher
/// that looks now and then learns of a death.
struct DeathInfo {
  std::uint64_t number = 0;     ///< the topic's 1st, 2nd, ... death
  Role role = Role::Publisher;
  std::uint32_t pid = 0;
  std::uint64_t noticed_realtime_ns = 0;  ///< when it was evicted (soon after it died)
  std::uint32_t noticed_by = 0;           ///< the pid of the process that evicted it
};

/// A snapshot of one topic.
struct TopicInfo {
  std::string name;              ///< e.g. "/robot/camera"
  std::string domain;
  std::string segment;           ///< shared-memory object name, e.g. "/cerulion.default:robot:camera"
  Mode mode = Mode::Lockstep;
  /// false while only subscribers have joined: mode and depth are provisional, and the first
  /// publisher may set them.
  bool mode_fixed = false;
  std::uint32_t depth = 0;
  std::uint32_t slot_count = 0;
  TopicType type;                ///< what its messages are (raw bytes until declared)
  bool type_declared = false;    ///< false: nobody declared a type (raw bytes)
  std::uint64_t max_payload = 0; ///< Payload ceiling, bytes.
  std::uint64_t largest_payload = 0;  ///< Largest payload published so far, bytes.
  std::uint64_t published = 0;   ///< Messages published so far.
  std::uint64_t last_publish_realtime_ns = 0;
  double rate_hz = 0;            ///< Recent publish rate (0 when idle for over 2 periods).
  std::uint32_t creator_pid = 0;
  std::uint64_t created_realtime_ns = 0;
  /// The segment file's size (sparse): it grows as messages need wider payload generations.
  std::uint64_t segment_bytes = 0;
  std::uint64_t resident_bytes = 0;  ///< Memory actually committed in /dev/shm.
  std::uint32_t owner_uid = 0;
  std::string owner;                 ///< the owner's user name
  std::string group;                 ///< the group it is shared with (mode 0660), "" if private
  std::uint32_t permissions = 0;     ///< e.g. 0600
  /// Owned by another user and not shared with a group of ours: joining it is refused.
  bool foreign = false;
  /// "" while the shared counters agree with each other; otherwise what contradicts what (the
  /// segment is damaged: publishers report it as an error rather than wait for ever).
  std::string damage;
  std::vector<ParticipantInfo> participants;
  /// The most recent deaths (participants evicted because their process died), oldest first;
  /// the topic keeps the last kMaxParticipants of them.
  std::vector<DeathInfo> deaths;
  std::uint64_t deaths_total = 0;  ///< deaths since the topic was created (deaths holds the last ones)

  std::uint32_t count(Role role, bool alive_only = true) const noexcept;
  /// True when no live process takes part (what `clean` removes).
  bool abandoned() const noexcept;
};

/// Every topic of a domain (sorted by name). Entries that cannot be read, and entries named like a
/// segment that are not one (a FIFO, a directory...), are reported by `problems`, one line each,
/// rather than failing the whole listing.
struct TopicListing {
  std::vector<TopicInfo> topics;
  std::vector<std::string> problems;
};
Result<TopicListing> list_topics(std::string_view domain = default_domain());

/// The domains that have a topic segment in /dev/shm, sorted (what `clean --all-domains` walks:
/// the private domains a `verify` killed with -9 left behind are among them).
std::vector<std::string> list_domains();

/// One topic; NotFound if it does not exist.
Result<TopicInfo> inspect_topic(std::string_view topic, std::string_view domain = default_domain());

/// How much of a topic to_json writes.
enum class TopicDetail : std::uint8_t {
  Summary,  ///< what `cerulion topic list --json` gives per topic
  Full,     ///< and its creator, memory, permissions, participants and deaths (`topic info --json`)
};
/// A topic as one JSON object, its keys in docs/json.md; what is not there (no schema, no group)
/// is null.
std::string to_json(const TopicInfo& info, TopicDetail detail = TopicDetail::Full);
/// A listing as one JSON object: {domain, topics (each a Summary), problems}.
std::string to_json(const TopicListing& listing, std::string_view domain);

/// Notices topics appearing in a domain as they appear (inotify on the shared-memory directory),
/// so that a recorder joins a new topic before its first messages have left the ring, where
/// polling list_topics() every so often would come too late for a fast topic. Move-only.
class TopicWatch {
 public:
  /// Starts watching; SystemError if the operating system cannot (then poll list_topics()).
  static Result<TopicWatch> create(std::string_view domain = default_domain());
  TopicWatch(TopicWatch&& other) noexcept;
  TopicWatch& operator=(TopicWatch&& other) noexcept;
  TopicWatch(const TopicWatch&) = delete;
  TopicWatch& operator=(const TopicWatch&) = delete;
  ~TopicWatch();

  /// Waits up to `timeout`; true as soon as a topic of the domain appeared since the last call
  /// (or too much happened to tell: list_topics() then says what is there), false at the timeout.
  bool wait(std::chrono::milliseconds timeout);

 private:
  TopicWatch(int fd, std::string prefix) : fd_(fd), prefix_(std::move(prefix)) {}
  int fd_ = -1;
  std::string prefix_;
};

/// What clean did (or would do) to one segment.
struct CleanedSegment {
  std::string topic;  ///< empty for a wait set's bell
  std::string segment;
  std::string reason;   ///< e.g. "no live participant (dead: 1234, 1240)", "corrupted: bad magic"
  bool removed = false;
  /// Damaged, but live processes still use it: left in place (removed is false) unless forced.
  bool in_use = false;
};

/// Removes segments of the domain that only dead processes use (pid and start time checked),
/// damaged ones that no live process uses, and entries named like a segment that are not one. A
/// damaged segment's participants are still read where they can be: a live one keeps it (it is
/// reported, with removed = false). With `force_topic` set, removes that topic whatever is
/// attached. `dry_run` reports without removing. Never touches a topic with a live participant
/// otherwise. Without `force_topic`, also removes the bells of the domain's wait sets (those whose
/// first member is in the domain) whose process died; they are reported with an empty `topic`.
Result<std::vector<CleanedSegment>> clean_domain(std::string_view domain, bool dry_run,
                                                 std::string_view force_topic = {});

}  // namespace cerulion
