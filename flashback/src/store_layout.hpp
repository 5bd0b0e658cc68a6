// SPDX-License-Identifier: Apache-2.0
#pragma once
// The flashback store as it lies in shared memory. One keeper writes it; any number of readers
// (dumps, status) copy from it without locks and without ever holding the keeper back:
//
//   [StoreHeader | KeeperRecord | DumpRecord x kDumpRecords | ChannelEntry x max_channels
//    | ChunkSlot x chunk_slots | open chunk | chunk data | topic types]
//
// Closed chunks are encoded MCAP chunks (Chunk record + MessageIndex records, zstd-compressed) in
// a ring of bytes; each has a slot whose `state` is 2n+1 while chunk n is written and 2n+2 once it
// is committed. Chunks are evicted oldest first by advancing `tail` before their bytes are reused,
// so a reader that copied chunk n checks afterwards that its slot still says 2n+2 and that tail is
// not past n: a chunk evicted during the copy is left out, never written torn.
//
// What a tap has taken goes at once into shared memory: the staging area, two buffers of staged
// records, each [u32 crc | u32 zero | u64 lost | Message record], `lost` being the channel's lost
// counter as of that message (its gap before it included) and `crc` the CRC-32 (the chunks' own)
// of every byte after it: whoever reads staged records (a dump, the compressing thread, a keeper
// taking over) leaves out a record that fails it, and names it, rather than pass on wrong bytes. One buffer is `active` (taps append to it, `length`
// covering whole records only, published after their bytes); the other is free (length 0) or
// sealed: full or old enough, it waits there, immutable, for the keeper's compressing thread,
// which turns it into chunk number `generation` (a Chunk record and MessageIndex records, then a
// loss table: u32 entries, u32 pad, then per channel {u16 channel, u16 pad, u32 messages,
// u64 first lost, u64 last lost, u32 last sequence, u32 pad}), commits it (head = generation + 1) and frees it. A seal flips
// `active`; a commit advances head and frees the buffer; both happen with `staging_seq` odd, so a
// reader that saw the same even value before and after copying has a consistent picture: chunks
// [tail, head), then the sealed buffer, then the active one. A keeper killed mid-way leaves a
// sealed buffer whose generation is below head (committed already: dropped) or not (committed by
// the next keeper). A keeper taking a store over also sets aside every chunk whose bytes fail
// their CRC (its slot keeps no bytes and says `quarantined`), and a chunk made of staged records
// says in `damaged_messages` how many were left out; dumps name both while they are in the ring. When both buffers are taken the tap drops the message and counts it lost at
// once; a dump's loss for a topic is the difference of the `lost` of its last and first message.
//
// Counters follow the content: a message dropped is counted lost at once; a message staged moves
// `lost` (by what the tap missed before it) and `messages` after its record is published, the
// append said first in `pending_*`, so that a reader of a keeper killed in between counts it.
//
// The keeper's record says where its dumps go and what triggers them; its keeper writes it once,
// when it starts, with `version` odd meanwhile, and a reader that saw the same even version before
// and after copying it has it whole. Dump records are a ring of the last few dumps, written by
// whoever dumps: dump n (counted by `dumps`) takes record n % kDumpRecords, whose `state` is 2n+1
// while it is written and 2n+2 once written, as a chunk slot's.
//
// Topic types (message encoding and schema, a schema up to 16 MiB) are records appended to their
// own area and never changed: [u32 length | u32 crc | core's encode_topic_type() bytes].
// `types_length` covers whole records only and is published after their bytes; a channel names its
// type by `type_ref` (offset + 1; 0 = raw bytes), stored after the record is. Identical types share
// a record. Like the data area, the types area is committed in /dev/shm only as it fills, so its
// size is address space, not memory.

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "cerulion/core/detail/shm_header.hpp"

namespace cerulion::flashback::detail {

// 2: topic types; 3: core's header stamp and checksum; 4: the keeper's record, dump records, and
// the newest chunk evicted for room; 5: the staging area in place of one open chunk, loss tables;
// 6: a CRC per staged record and per topic name, damage found set aside and counted.
inline constexpr std::uint32_t kStoreVersion = 7;
/// Buffers of the staging area.
inline constexpr std::uint32_t kStagingBuffers = 2;
/// Room of a staging buffer beyond two chunks, when the memory limit is four times as large.
inline constexpr std::uint64_t kStagingRoom = 8ull << 20;
/// Bytes before each staged Message record: its CRC, then the channel's lost counter.
inline constexpr std::uint64_t kStagedPrefix = 16;
/// Where in a staged record its CRC's bytes start (the CRC and nothing before it is left out).
inline constexpr std::uint64_t kStagedCrcFrom = 4;
inline constexpr std::uint32_t kMaxChannels = 1024;
inline constexpr std::uint32_t kChunkSlots = 16384;
inline constexpr std::size_t kTopicCapacity = 256;   // topic names are at most 200 characters
inline constexpr std::uint64_t kStorePage = 4096;
/// Longest path kept (a dump directory, a dump's file), with its terminating zero: PATH_MAX.
inline constexpr std::size_t kPathCapacity = 4096;
inline constexpr std::size_t kSelectionCapacity = 8192;
/// Dumps whose records are kept (status shows the last one).
inline constexpr std::uint32_t kDumpRecords = 4;
/// Room for topic types: four schemas of the largest size a topic holds, or thousands of small ones.
inline constexpr std::uint64_t kTypesCapacity = 64ull << 20;
/// A channel's `type_ref` when its type did not fit the types area: a dump asks the topic itself.
inline constexpr std::uint64_t kTypeNotKept = ~0ull;

constexpr std::uint64_t round_to_page(std::uint64_t n) { return (n + kStorePage - 1) / kStorePage * kStorePage; }

struct StagingBuffer {
  std::atomic<std::uint64_t> generation;  // the chunk it becomes (set when sealed)
  std::atomic<std::uint64_t> length;
  std::atomic<std::uint64_t> messages;
  std::atomic<std::uint64_t> start_ns;
  std::atomic<std::uint64_t> end_ns;
};

struct StoreHeader {
  // Fixed at creation, covered by `layout_checksum`.
  cerulion::detail::ShmStamp stamp;  // kStoreRule's
  std::uint64_t total_bytes;
  std::uint64_t keeper_record_offset;
  std::uint64_t dump_records_offset;
  std::uint64_t channels_offset;
  std::uint64_t slots_offset;
  std::uint64_t staging_offset;
  std::uint64_t staging_capacity;  // of each buffer
  std::uint64_t data_offset;
  std::uint64_t data_capacity;
  std::uint64_t types_offset;
  std::uint64_t types_capacity;
  std::uint32_t max_channels;
  std::uint32_t chunk_slots;
  char domain[72];
  char name[72];
  std::uint64_t created_realtime_ns;
  std::uint32_t layout_checksum;  // of every byte before it
  std::uint32_t pad1;

  // The keeper's settings and identity (a later keeper replaces them).
  std::atomic<std::uint64_t> window_ns;
  std::atomic<std::uint64_t> chunk_size;
  std::atomic<std::uint32_t> keeper_pid;
  std::atomic<std::uint32_t> keeper_pid_namespace;
  std::atomic<std::uint64_t> keeper_start_time;     // /proc start time, for pid reuse
  std::atomic<std::uint64_t> keeper_started_realtime_ns;
  std::atomic<std::uint64_t> keeper_stopped_realtime_ns;  // non-zero once it stopped cleanly

  // The chunk ring.
  std::atomic<std::uint64_t> head;          // next chunk number
  std::atomic<std::uint64_t> tail;          // oldest chunk still held
  std::atomic<std::uint64_t> write_offset;  // where in the data area the next chunk goes
  std::atomic<std::uint64_t> reserved_bytes;  // of the data area committed in /dev/shm
  std::atomic<std::uint64_t> usable_bytes;    // of the data area usable (less when /dev/shm ran out)

  // The staging area (see above).
  std::atomic<std::uint64_t> staging_seq;
  std::atomic<std::uint32_t> active;
  std::atomic<std::uint32_t> pending_channel;  // id + 1 of the append under way; 0: none
  std::atomic<std::uint64_t> pending_buffer;
  std::atomic<std::uint64_t> pending_end;      // its buffer's length once its record is published
  std::atomic<std::uint64_t> pending_messages; // its channel's count once it is counted
  std::atomic<std::uint64_t> pending_lost;     // its channel's lost counter then
  std::atomic<std::uint64_t> pending_next_sequence;
  StagingBuffer staging[kStagingBuffers];
  std::atomic<std::uint64_t> messages_dropped_staging;  // all channels: the staging area was full

  std::atomic<std::uint32_t> channel_count;
  std::atomic<std::uint32_t> pad0;
  // Counters for status.
  std::atomic<std::uint64_t> dumps;
  std::atomic<std::uint64_t> dumps_refused;
  std::atomic<std::uint64_t> chunks_evicted;
  std::atomic<std::uint64_t> chunks_dropped;    // did not fit at all
  std::atomic<std::uint64_t> chunks_stored_raw; // committed uncompressed: compression was behind
  // The newest message of the newest chunk evicted to make room (not for its age), realtime ns:
  // while it is inside the window, the window held is cut short by memory (or by chunk slots).
  std::atomic<std::uint64_t> evicted_for_memory_end_ns;
  std::atomic<std::uint64_t> evicted_for_slots_end_ns;
  std::atomic<std::uint64_t> messages_dropped;  // more topics than channels
  // Damage found and left out since the store was made: chunks set aside by keepers taking it over,
  // staged records that failed their CRC.
  std::atomic<std::uint64_t> damaged_chunks;
  std::atomic<std::uint64_t> damaged_messages;

  // The types area.
  std::atomic<std::uint64_t> types_length;    // whole records written
  std::atomic<std::uint64_t> types_reserved;  // committed in /dev/shm
};

/// Trigger flags of KeeperRecord.
inline constexpr std::uint32_t kOnDeath = 1;
inline constexpr std::uint32_t kOnSignal = 2;
inline constexpr std::uint32_t kSelectionTooLong = 4;

struct KeeperRecord {
  std::atomic<std::uint64_t> version;  // odd while written
  char dump_dir[kPathCapacity];
  char trigger_topic[kTopicCapacity];
  std::uint64_t post_ns;
  std::uint64_t on_stall_ns;
  std::uint64_t max_disk_bytes;
  std::uint32_t max_dumps_per_hour;
  std::uint32_t flags;
  // The topics it takes, one per line: "a" (every topic), "t<name>", "i<pattern>", "x<pattern>";
  // empty with kSelectionTooLong when they did not fit.
  char selection[kSelectionCapacity];
};

struct DumpRecord {
  std::atomic<std::uint64_t> state;  // 2n+1 while dump n is recorded, 2n+2 once recorded
  std::uint64_t realtime_ns;
  std::uint64_t messages;
  char trigger[16];
  char path[kPathCapacity];
};

struct ChannelEntry {
  std::atomic<std::uint32_t> ready;  // 1 once the fields below are written
  std::uint32_t depth;
  std::uint64_t max_payload;
  char topic[kTopicCapacity];
  std::uint32_t topic_crc;  // of the topic's name (never changed once registered)
  std::uint32_t pad;
  char mode[16];
  std::atomic<std::uint64_t> messages;  // taken since the store was created
  std::atomic<std::uint64_t> bytes;
  std::atomic<std::uint64_t> lost;      // missed by the tap or dropped by the store, when known
  std::atomic<std::uint64_t> last_realtime_ns;
  std::atomic<std::uint64_t> rate_millihertz;  // recent rate, as the keeper measured it
  std::atomic<std::uint64_t> type_ref;  // its type's record in the types area (see above)
  std::atomic<std::uint64_t> next_sequence;  // the topic's sequence after the last one staged or dropped; 0: none
  // Its lost counter as of its newest message evicted from the ring: a dump starting at the ring's
  // tail counts the losses after it, so that it and status agree on what the store holds.
  std::atomic<std::uint64_t> lost_evicted;
};

struct ChunkSlot {
  std::atomic<std::uint64_t> state;
  std::atomic<std::uint64_t> offset;   // in the data area
  std::atomic<std::uint64_t> length;   // bytes in the data area: the chunk, then its loss table
  std::atomic<std::uint64_t> chunk_length;  // the encoded chunk's
  std::atomic<std::uint64_t> start_ns;
  std::atomic<std::uint64_t> end_ns;
  std::atomic<std::uint64_t> messages;
  std::atomic<std::uint64_t> uncompressed_bytes;
  std::atomic<std::uint64_t> crc;      // CRC-32 of all `length` bytes
  std::atomic<std::uint32_t> quarantined;       // 1: found damaged by a keeper taking over; no bytes kept
  std::atomic<std::uint32_t> damaged_messages;  // staged records left out of it (they failed their CRC)
};

static_assert(std::atomic<std::uint64_t>::is_always_lock_free);
static_assert(sizeof(StoreHeader) <= kStorePage);

/// What a store's header must say (core's shm_header.hpp).
inline constexpr cerulion::detail::HeaderRule kStoreRule{"CRLNFLBK", kStoreVersion, sizeof(StoreHeader),
                                                         offsetof(StoreHeader, layout_checksum), "flashback store"};

constexpr std::uint64_t committed_state(std::uint64_t n) { return 2 * n + 2; }
constexpr std::uint64_t writing_state(std::uint64_t n) { return 2 * n + 1; }

}  // namespace cerulion::flashback::detail
