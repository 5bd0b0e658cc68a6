// SPDX-License-Identifier: Apache-2.0
#pragma once
// The byte layout of a topic segment. Everything another process may read lives here; every index
// read from it is bounds-checked before use, because the segment is shared and may be damaged.
//
//   [ Config (immutable, checksummed) | Control | Participant x32 | LogEntry x depth |
//     SlotControl x slot_count | padding to a page | topic type (kTypeCapacity) |
//     payload generation 0 | generation 1 | ... ]
//
// The payload area grows with the messages, in generations: generation g lays out slot_count
// slots of generation_stride(g) bytes (128 B doubling up to the ceiling, 128 B more from a page on),
// and a message lives in the smallest generation its size fits. Small messages thus sit side by
// side on a few pages, and a topic's address space is what its messages need, not slot_count
// times the ceiling. The file is sized up to generation 0 at creation and extended by the
// publisher that first needs a wider generation; every participant maps a generation the first
// time a message names it. Within a generation only the pages a slot's largest payload so far
// needs are committed (reserved with fallocate as the slot grows, so that a full /dev/shm refuses
// a loan instead of faulting).
// Everything before the type area is committed and written before the segment gets its name.

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "cerulion/core/detail/shm_header.hpp"
#include "cerulion/core/options.hpp"
#include "cerulion/core/topic_type.hpp"
#include "futex.hpp"

namespace cerulion::detail {

/// Bump whenever any struct below changes: a process of another version refuses the segment.
inline constexpr std::uint32_t kLayoutVersion = 10;
inline constexpr std::size_t kTopicNameCapacity = 216;

static_assert(kMaxParticipants <= 32, "participant bits must fit the 32-bit holder mask of a slot");

/// Fixed at creation; config_crc covers every byte before it.
struct alignas(64) Config {
  ShmStamp stamp;  ///< "CERULION", kLayoutVersion, sizeof(Config)
  /// The ring's room (log entries): the depth the topic was created with, and the most its depth
  /// (Control::depth) can be.
  std::uint32_t depth;
  std::uint32_t slot_count;
  std::uint32_t hot_slots;
  std::uint32_t max_participants;
  std::uint64_t max_payload;
  std::uint32_t generations;  ///< payload generations the ceiling needs (generation_stride)
  std::uint32_t reserved;
  std::uint64_t participants_offset;
  std::uint64_t log_offset;
  std::uint64_t slots_offset;
  std::uint64_t header_bytes;  ///< [0, header_bytes): committed, mapped by every participant
  std::uint64_t type_offset;  ///< the declared TopicType, serialized (see Control::type_state)
  std::uint64_t payload_offset;  ///< where generation 0 starts
  std::uint64_t total_bytes;  ///< the file's size at creation: up to the end of generation 0
  std::uint64_t created_realtime_ns;
  std::uint32_t creator_pid;
  std::uint32_t creator_uid;
  char topic[kTopicNameCapacity];
  std::uint32_t config_crc;
};

/// What a segment's Config must say (shm_header.hpp).
inline constexpr HeaderRule kConfigRule{"CERULION", kLayoutVersion, sizeof(Config), offsetof(Config, config_crc),
                                        "cerulion segment"};

/// Participant states.
enum ParticipantState : std::uint32_t { kFree = 0, kActive = 2, kEvicting = 3 };

/// One publisher, subscriber or tap. What its owner writes on every message sits on a line of its
/// own: publishers read the cursor and floor (lockstep room) while their owner moves them.
struct alignas(64) Participant {
  std::atomic<std::uint32_t> state;
  std::uint32_t role;
  std::uint32_t pid;
  std::uint32_t pid_namespace;  ///< inode of its /proc/<pid>/ns/pid: pids mean nothing across namespaces
  std::uint64_t start_time;  ///< /proc/<pid>/stat starttime: tells a reused pid from the original
  /// A subscriber in a wait set that sleeps on a bell (bell.hpp): the bell's id, else 0.
  /// kUnreachableBell once a publisher could not ring it.
  std::atomic<std::uint64_t> bell_id;
  alignas(64) std::atomic<std::uint64_t> cursor;  ///< next sequence this reader takes
  /// Oldest sequence a lockstep subscriber still needs kept: its oldest held sample, else its
  /// cursor. Lockstep publishers never let the ring overtake it.
  std::atomic<std::uint64_t> floor;
  std::atomic<std::uint64_t> messages;  ///< published or received so far
  std::atomic<std::uint64_t> lost;      ///< samples this reader lost (free run, taps)
};

/// One eviction of a participant whose process died. `number` (1 for the topic's first death) is
/// written last and cleared first, so a reader that finds it unchanged around its copy of the rest
/// read a whole record.
struct DeathRecord {
  std::atomic<std::uint64_t> number;  ///< 0: empty, or being written
  std::uint64_t noticed_realtime_ns;  ///< when it was evicted (the death itself is not observable)
  std::uint64_t start_time;           ///< the dead process's start time (tells a reused pid apart)
  std::uint32_t pid;
  std::uint32_t role;                 ///< Role
  std::uint32_t noticed_by;           ///< pid of the process that evicted it
  std::uint32_t reserved;
};

/// Enough for every participant of a topic dying at once.
inline constexpr std::uint32_t kDeathLogLength = kMaxParticipants;

/// A ring of the topic's most recent deaths: record n lives at records[(n - 1) % kDeathLogLength].
struct DeathLog {
  std::atomic<std::uint64_t> count;  ///< deaths recorded so far
  std::uint64_t reserved;
  DeathRecord records[kDeathLogLength];
};

/// Mutable topic state shared by all participants.
struct alignas(64) Control {
  // The publish line: everything a publish writes in Control, so that a publish dirties one line
  // here. A core that has not published for a while finds every line cold (warm.hpp), and each
  // one is a cache miss on the latency path.
  /// The topic lock (publish order, attach/detach, eviction): the holder's pid, bit 31 set when
  /// someone sleeps on it. A plain word rather than a robust pthread mutex, whose glibc code costs
  /// microseconds on a core that has been idle; a dead holder is found by its pid and start time.
  std::atomic<std::uint32_t> lock_word;
  std::uint32_t lock_owner_ns;  ///< the holder's pid namespace (see Participant::pid_namespace)
  std::atomic<std::uint64_t> lock_owner_start;
  std::atomic<std::uint64_t> published;  ///< next sequence number to assign
  WakeChannel data;  ///< readers sleep here for the next message
  /// The single-publisher fast path (sole_publisher.cpp): the participant index + 1 of the one
  /// publisher that publishes without the lock while it is the topic's only one; 0 while every
  /// publish takes the lock. Set by that publisher under the lock, cleared by whoever takes the
  /// lock next.
  std::atomic<std::uint32_t> sole_publisher;
  /// 1 while the sole publisher is inside a publish it started as the sole publisher.
  std::atomic<std::uint32_t> sole_busy;
  /// Readers asleep on their wait set's bell rather than on `data` (one bit per participant index):
  /// a publish rings the bell named by each one's Participant::bell_id.
  std::atomic<std::uint32_t> data_bell_sleepers;
  // Read by everyone, written almost never: kept off the publish line, so reading them costs no
  // cache-line transfer.
  alignas(64) std::atomic<std::uint32_t> mode;
  /// 0 while only subscribers and taps have joined: the mode and the depth are provisional, and the
  /// first publisher that asks for others sets them. 1 once a publisher joined: fixed.
  std::atomic<std::uint32_t> mode_fixed;
  /// The topic's depth, 1..Config::depth: how far a lockstep publisher may run ahead of its
  /// slowest subscriber, and how far behind a free-run reader may fall. Changes only while
  /// provisional, before anything is published.
  std::atomic<std::uint32_t> depth;
  std::atomic<std::uint32_t> unlinked;  ///< set by the last participant before shm_unlink
  std::atomic<std::uint32_t> initialized;
  std::atomic<std::uint64_t> largest_payload;
  std::atomic<std::uint32_t> publishers;  ///< active publishers; changed under the lock
  /// 0: no type declared (raw bytes); 1: type_bytes bytes at Config::type_offset, checksummed by
  /// type_crc, hold the declared TopicType. Written once, under the topic lock: the bytes first,
  /// then the state (release), so a declarer that dies half-way leaves the topic undeclared.
  std::atomic<std::uint32_t> type_state;
  std::uint32_t type_bytes;
  std::uint32_t type_crc;
  alignas(64) WakeChannel room;     ///< lockstep publishers sleep here for a subscriber to move on
  alignas(64) WakeChannel members;  ///< anyone waiting for participants to join
  /// The most recent evictions of participants whose process died (death_log.cpp): whoever evicts
  /// leaves the record, because the eviction erases the participant that watchers (a flashback
  /// keeper, `topic info`) would otherwise have found dead. Written under the topic lock.
  alignas(64) DeathLog deaths;
};
static_assert(offsetof(Control, mode) == 64, "the publish line (lock .. data channel) must fit one cache line");

inline constexpr std::uint64_t kPageBytes = 4096;
/// Generation 0's stride: two cache lines, so that neighbouring slots share neither a line nor the
/// pair of lines the adjacent-line prefetcher fetches together.
inline constexpr std::uint64_t kSmallestStride = 128;
/// The largest payload ceiling a topic may have.
inline constexpr std::uint64_t kMaxCeiling = 1ull << 40;
/// Enough generations for the largest ceiling (kSmallestStride << 33).
inline constexpr std::uint32_t kMaxGenerations = 34;
static_assert((kSmallestStride << (kMaxGenerations - 1)) >= kMaxCeiling);
/// Room for a serialized TopicType: four length-prefixed strings around the largest schema. Never
/// mapped (read and written with pread/pwrite), and committed only as far as a type uses it.
inline constexpr std::uint64_t kTypeCapacity = kMaxSchemaBytes + 4 * kPageBytes;
constexpr std::uint64_t round_up(std::uint64_t v, std::uint64_t a) { return (v + a - 1) / a * a; }
/// Where Control starts.
inline constexpr std::uint64_t kControlOffset = round_up(sizeof(Config), 64);
/// Where the participant table starts: the same for every depth and ceiling, so that the table of
/// a segment whose Config is damaged can still be read (to tell whether anyone still uses it).
inline constexpr std::uint64_t kParticipantsOffset = kControlOffset + round_up(sizeof(Control), 64);

/// One published message in the ring: (sequence + 1) << 24 | slot index; 0 = never written.
/// The metadata beside it is written before seq_slot (release), so a lockstep subscriber gets
/// everything it needs in this one cache line. Free-run readers, whose entry may be overwritten
/// under them, read the copy in SlotControl after taking hold of the slot.
struct alignas(64) LogEntry {
  std::atomic<std::uint64_t> seq_slot;
  std::uint64_t size;
  std::uint64_t publish_mono_ns;
  std::uint64_t publish_real_ns;
  std::uint32_t publisher_pid;
  std::uint32_t mode;  ///< the topic's Mode when published: a reader needs no other line to know it
  std::uint32_t generation;  ///< the payload generation the slot's bytes are in
};

inline constexpr std::uint64_t kSlotIndexBits = 24;
inline constexpr std::uint64_t kSlotIndexMask = (1ull << kSlotIndexBits) - 1;
inline std::uint64_t make_log_entry(std::uint64_t seq, std::uint32_t slot) {
  return ((seq + 1) << kSlotIndexBits) | slot;
}

/// A payload slot's control word: [63:33] tag, [32] in the ring window, [31:0] holder bits (one per
/// participant index). tag = kLoanTag while loaned, else derived from the sequence it carries.
/// The slot is free when neither the window bit nor any holder bit is set.
struct alignas(64) SlotControl {
  std::atomic<std::uint64_t> word;
  std::uint64_t size;
  std::uint64_t publish_mono_ns;
  std::uint64_t publish_real_ns;
  std::uint32_t publisher_pid;
  std::uint32_t generation;  ///< the payload generation of the bytes loaned or published here
  /// Most bytes ever loaned here in generation high_water_generation: what is committed. Only the
  /// loan's holder reads or writes them.
  std::atomic<std::uint64_t> high_water;
  std::atomic<std::uint32_t> high_water_generation;
};

inline constexpr std::uint64_t kHolderMask = 0xFFFF'FFFFull;
inline constexpr std::uint64_t kWindowBit = 1ull << 32;
inline constexpr std::uint64_t kTagShift = 33;
inline constexpr std::uint64_t kLoanTag = (1ull << 31) - 1;

inline std::uint64_t tag_of_sequence(std::uint64_t seq) { return seq % (kLoanTag - 1) + 1; }
inline std::uint64_t tag_of_word(std::uint64_t word) { return word >> kTagShift; }
inline bool slot_is_free(std::uint64_t word) { return (word & (kWindowBit | kHolderMask)) == 0; }

}  // namespace cerulion::detail
