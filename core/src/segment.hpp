// SPDX-License-Identifier: Apache-2.0
#pragma once
// A mapped topic segment: creation, validation, joining and leaving, the topic lock, and the
// eviction of participants whose process died.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <sys/stat.h>
#include <vector>

#include "cerulion/core/options.hpp"
#include "cerulion/core/status.hpp"
#include "layout.hpp"
#include "cerulion/core/detail/shm_file.hpp"
#include "cerulion/core/detail/shm_owner.hpp"

namespace cerulion::detail {

/// Shortest time between two unforced dead-participant scans of one topic by one process.
inline constexpr std::uint64_t kEvictionScanIntervalNs = 50'000'000;

/// Pure layout arithmetic for a topic of `depth` messages and a `max_payload` ceiling.
struct LayoutPlan {
  std::uint32_t depth;
  std::uint32_t slot_count;
  std::uint32_t hot_slots;
  std::uint32_t generations;
  std::uint64_t max_payload;
  std::uint64_t participants_offset, log_offset, slots_offset, header_bytes, type_offset, payload_offset, total_bytes;
};
LayoutPlan plan_layout(std::uint32_t depth, std::uint64_t max_payload);

/// Where payload generation `g` (< plan.generations) starts in the file, how far apart its slots
/// are, and how many bytes it spans (page-rounded, so the next one starts on a page).
std::uint64_t generation_offset(const LayoutPlan& plan, std::uint32_t g);
std::uint64_t generation_stride(const LayoutPlan& plan, std::uint32_t g);
std::uint64_t generation_bytes(const LayoutPlan& plan, std::uint32_t g);
/// The smallest generation whose stride holds `size` bytes (size <= plan.max_payload).
std::uint32_t generation_for(const LayoutPlan& plan, std::uint64_t size);

/// The configuration of a new segment laid out as `plan`, created now by this process, checksum
/// included.
Config make_config(const LayoutPlan& plan, std::uint64_t max_payload, std::string_view topic);

/// Ok if `config` describes a sane layout of a segment `file_bytes` long; Corrupted otherwise.
Status validate_config(const Config& config, std::uint64_t file_bytes, std::string_view what);

/// A death log record read out of the segment (layout.hpp, DeathRecord).
struct DeathRecordCopy {
  std::uint64_t number;
  std::uint64_t noticed_realtime_ns;
  std::uint64_t start_time;
  std::uint32_t pid;
  std::uint32_t role;
  std::uint32_t noticed_by;
};

class TopicSegment {
 public:
  /// What a segment is opened for.
  enum class Access : std::uint8_t {
    Publish,    ///< joins; creates the topic if missing; payloads writable
    Subscribe,  ///< joins; creates the topic if missing; payloads read-only
    Inspect,    ///< an existing topic, read-only, payloads unmapped (discovery)
    Maintain,   ///< an existing topic, control writable (to take its lock), payloads unmapped (clean)
  };
  /// How to open a segment.
  struct OpenRequest {
    std::string topic;  ///< normalized
    TopicOptions options;
    Access access = Access::Subscribe;
  };

  static Result<std::shared_ptr<TopicSegment>> open(const OpenRequest& request);
  ~TopicSegment();
  TopicSegment(const TopicSegment&) = delete;
  TopicSegment& operator=(const TopicSegment&) = delete;

  const Config& config() const { return *config_; }
  Control& control() { return *control_; }
  Participant& participant(std::uint32_t index) { return participants_[index]; }
  // The hot-path accessors read private copies of the configuration, never the shared Config: one
  // cache line fewer to miss on a core gone cold.
  LogEntry& log(std::uint64_t seq) { return log_[seq % ring_]; }
  /// The entry after `entry`, the ring's first after its last: log(seq + 1) without a division.
  LogEntry* log_after(LogEntry* entry) { return entry + 1 == log_ + ring_ ? log_ : entry + 1; }
  SlotControl& slot(std::uint32_t index) { return slots_[index]; }
  /// Slot `index`'s payload in the current generation: the one this process's publisher loans
  /// from, or the newest its subscriber has read.
  std::byte* slot_data(std::uint32_t index) { return data_ + std::uint64_t(index) * stride_; }
  std::uint32_t generation() const { return generation_; }
  std::uint64_t stride() const { return stride_; }
  /// Slot `index`'s payload in `generation`, mapping the generation on first sight; nullptr when
  /// `size` bytes do not fit there or the generation cannot be mapped (payload_failure() says why).
  std::byte* payload(std::uint32_t generation, std::uint32_t index, std::uint64_t size) {
    if (generation == generation_ && size <= stride_) [[likely]] return slot_data(index);
    return payload_elsewhere(generation, index, size);
  }
  /// Why payload(generation, index, size) returned nullptr.
  [[gnu::cold]] Status payload_failure(std::uint32_t generation, std::uint64_t size) const;
  /// Makes the generation `size` bytes need the current one: extends the file to hold it (the
  /// first publisher to need it) and maps it. Publishers only.
  [[gnu::cold]] Status use_generation_for(std::uint64_t size);
  /// The topic's depth as this process knows it: fixed for a publisher's segment (attach() reads it
  /// once a publisher fixed it); a reader's may be a provisional one that a publisher changed since,
  /// which current_depth() reads.
  std::uint32_t depth() const { return depth_; }
  std::uint32_t current_depth() const { return control_->depth.load(std::memory_order_acquire); }
  /// The ring's room, in log entries (Config::depth): the most the depth can be.
  std::uint32_t ring() const { return ring_; }
  std::uint32_t slot_count() const { return slot_count_; }
  std::uint32_t hot_slots() const { return hot_slots_; }
  std::uint64_t max_payload() const { return max_payload_; }
  /// The process that opened this segment (a segment, like its participants, belongs to it).
  std::uint32_t own_pid() const { return own_pid_; }
  const std::string& topic() const { return topic_; }
  const std::string& name() const { return name_; }
  /// The domain, from the name ("cerulion.<domain>:<topic>"; ':' is in no domain).
  std::string_view domain() const {
    std::string_view name = name_;
    name.remove_prefix(std::min(name.size(), sizeof("cerulion.") - 1));
    return name.substr(0, name.find(':'));
  }
  int fd() const;
  /// The segment file's attributes when it was opened (owner, group, mode).
  const struct stat& file_status() const { return file_status_; }

  /// Commits the memory of slot `index`'s payload bytes [from, to) before anyone writes them, so a
  /// full /dev/shm is an OutOfMemory error here and never a SIGBUS later (in any participant).
  Status reserve_payload(std::uint32_t generation, std::uint32_t index, std::uint64_t from, std::uint64_t to);
  /// Gives back the memory of slot `index`'s first `bytes` in `generation` (whole pages of its own
  /// only): the slot moved to another generation, and nobody reads a free slot.
  void release_payload(std::uint32_t generation, std::uint32_t index, std::uint64_t bytes);

  /// The type a participant declared for the topic; nullopt while none has (raw bytes). Corrupted
  /// when the stored type fails its checksum.
  Result<std::optional<TopicType>> declared_type() const;
  /// Declares the topic's type (check_topic_type() first): Ok if it is undeclared (then it is
  /// `type` from now on) or already `type`; Incompatible if it carries another. Takes the lock.
  Status declare_type(const TopicType& type);

  /// Takes the topic lock (recovering it, and repairing the ring, if its holder died). A segment
  /// belongs to the process that opened it: the lock records that process's identity.
  Status lock();
  void unlock();

  /// The single-publisher fast path (sole_publisher.cpp). A publisher that publishes as the sole
  /// publisher (participant `index`) brackets its publish with these instead of lock/unlock;
  /// enter_sole_publish is false when it is not (or no longer) the sole publisher.
  bool enter_sole_publish(std::uint32_t index) {
    Control& ctl = *control_;
    if (ctl.sole_publisher.load(std::memory_order_relaxed) != index + 1) return false;
    ctl.sole_busy.store(1, std::memory_order_relaxed);
    // Only a compiler barrier: whoever ends the fast path issues a barrier on every CPU
    // (membarrier) between clearing sole_publisher and reading sole_busy, which orders this store
    // before the load below as a fence here would, without its cost on every publish.
    std::atomic_signal_fence(std::memory_order_seq_cst);
    if (ctl.sole_publisher.load(std::memory_order_relaxed) == index + 1) return true;
    ctl.sole_busy.store(0, std::memory_order_release);
    return false;
  }
  void leave_sole_publish() { control_->sole_busy.store(0, std::memory_order_release); }
  /// Under the lock, by publisher `index`: makes it the sole publisher if it is the topic's only
  /// publisher and this process can take part (membarrier).
  void offer_sole_publishing_locked(std::uint32_t index);

  /// A segment joined: the mapping, and the participant's index in it.
  struct Membership {
    std::shared_ptr<TopicSegment> segment;
    std::uint32_t index = 0;
  };
  /// Opens the topic as `request` says and joins it as attach() does. A segment that its last
  /// participant removed between the opening and the joining is left for a fresh one, so nobody
  /// ends up alone in a segment that no longer has a name.
  static Result<Membership> join(const OpenRequest& request, Role role, std::optional<Mode> explicit_mode,
                                 std::optional<std::uint32_t> explicit_depth, StartAt start = StartAt::Next);

  /// Joins as `role`. A publisher with `explicit_mode` or `explicit_depth` sets a provisional mode
  /// or depth (a depth up to the ring's room) or must match a fixed one; any publisher fixes them.
  /// NotFound if the segment was removed since it was opened (join() then opens a fresh one).
  /// Must be called without the lock held.
  Result<std::uint32_t> attach(Role role, std::optional<Mode> explicit_mode,
                               std::optional<std::uint32_t> explicit_depth, StartAt start = StartAt::Next);
  /// Leaves; the last participant out removes the segment name.
  void detach(std::uint32_t index);

  /// Evicts participants whose process is gone (pid + start time); returns how many. Takes the
  /// lock itself. Rate-limited to one scan per kEvictionScanIntervalNs per process unless `force`:
  /// each scan reads every participant's /proc entry.
  std::uint32_t evict_dead(bool force = false);

  /// The deaths the log still holds, oldest first (death_log.cpp). Readable without the lock.
  std::vector<DeathRecordCopy> recent_deaths() const;
  /// Deaths recorded on the topic so far (more than recent_deaths() holds once the log wrapped).
  std::uint64_t deaths_recorded() const { return control_->deaths.count.load(std::memory_order_acquire); }

  /// Live participants of a role (state active).
  std::uint32_t count(Role role) const;

  /// Lowest floor (oldest sequence still needed) among active subscribers, or nullopt if none.
  std::optional<std::uint64_t> min_subscriber_floor() const;

  /// The floor of a subscriber joining (under the lock) at the topic's first message: the oldest
  /// message the ring holds if publishers are sure to respect it, else the first they are. Below
  /// it, the subscriber reads as a tap does, counting what is overwritten before it gets there.
  std::uint64_t first_floor(std::uint64_t oldest, std::uint64_t published) const;

  /// "" while the shared counters agree with each other (the ring's newest entry is the message
  /// before `published`; no reader is ahead of `published`); otherwise one line saying what
  /// contradicts what. Only damage to the segment makes them disagree.
  std::string inconsistency() const;
  /// Corrupted, naming the topic: what inconsistency() says, or else that the topic is damaged
  /// because `otherwise` (what the caller found that contradicts the counters).
  [[gnu::cold]] Status damage(const std::string& otherwise) const;

 private:
  TopicSegment() = default;
  /// A complete segment for `request` in a new unnamed file: sized, header reserved and written.
  static Result<ShmFile> build(const OpenRequest& request, const std::string& what);
  /// Checks an opened file (what it is, who owns it, its header) and maps it as `request` says;
  /// `name` is the segment's name in /dev/shm.
  static Result<std::shared_ptr<TopicSegment>> from_file(ShmFile file, const std::string& name,
                                                        const OpenRequest& request,
                                                        const std::string& what);
  void evict_locked(std::uint32_t index);
  /// attach()'s depth, under the lock: a publisher's `explicit_depth` sets a provisional depth (up
  /// to the ring's room) or must match a fixed one; a publisher learns the depth it publishes with.
  Status settle_depth_locked(Role role, std::optional<std::uint32_t> explicit_depth);
  /// Records participant `index`, whose process died, in the death log before its eviction.
  void note_death_locked(std::uint32_t index);
  [[gnu::cold]] std::byte* payload_elsewhere(std::uint32_t generation, std::uint32_t index, std::uint64_t size);
  /// Maps `generation` if it is not yet (checking that the file holds it); false, with
  /// map_failure_ set, when it cannot.
  bool map_generation(std::uint32_t generation);
  void make_current(std::uint32_t generation);
  void repair_ring_locked();
  Status take_lock_word();
  void note_lock_owner();
  /// Just after taking the lock word: ends the single-publisher fast path and waits for a publish
  /// in progress on it to finish (repairing the ring if its publisher died in it).
  [[gnu::cold]] Status end_sole_publishing_locked();
  // What every message uses comes first, within one cache line (see layout.hpp on cold lines);
  // what every publish uses, on the next.
  alignas(64) Control* control_ = nullptr;
  Participant* participants_ = nullptr;
  LogEntry* log_ = nullptr;
  SlotControl* slots_ = nullptr;
  std::byte* data_ = nullptr;  ///< the current generation's first slot
  std::uint64_t stride_ = 0;   ///< the current generation's stride
  std::uint32_t depth_ = 0;
  std::uint32_t ring_ = 0;
  std::uint32_t slot_count_ = 0;
  std::uint32_t generation_ = 0;
  alignas(64) std::uint64_t max_payload_ = 0;
  std::uint32_t hot_slots_ = 0;
  std::uint32_t own_pid_ = 0;  ///< the lock word's value while we hold it
  std::uint64_t own_start_time_ = 0;
  std::uint32_t own_pid_namespace_ = 0;
  bool writable_payloads_ = false;
  LayoutPlan plan_{};
  Status map_failure_;  ///< why the last generation failed to map
  struct Mapping;
  std::unique_ptr<Mapping> mapping_;
  struct stat file_status_ {};
  Config* config_ = nullptr;
  std::string topic_;
  std::string name_;  ///< without leading '/'
  std::uint64_t last_evict_scan_ns_ = 0;
};

}  // namespace cerulion::detail
