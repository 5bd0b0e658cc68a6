// SPDX-License-Identifier: Apache-2.0
#pragma once
// The mapped store and what its keeper and its readers do with it.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cerulion/core/detail/shm_file.hpp"
#include "cerulion/core/topic_type.hpp"
#include "cerulion/flashback/store.hpp"
#include "cerulion/recorder/chunk.hpp"
#include "cerulion/recorder/message_record.hpp"
#include "store_layout.hpp"

namespace cerulion::flashback::detail {

/// A channel's lost counter as of its first and last message in some messages, how many, and the
/// last one's sequence (where a dump catching up from the topic's ring goes on).
struct ChannelLoss {
  std::uint64_t messages = 0;
  std::uint64_t first_lost = 0;
  std::uint64_t last_lost = 0;
  std::uint32_t last_sequence = 0;
};
using LossTable = std::map<std::uint16_t, ChannelLoss>;

/// A channel's messages taken and lost.
struct ChannelCounts {
  std::uint64_t messages = 0;
  std::uint64_t lost = 0;
};

/// A committed chunk copied out of the store.
struct CopiedChunk {
  std::uint64_t number = 0;
  std::uint64_t start_ns = 0;
  std::uint64_t end_ns = 0;
  std::uint64_t messages = 0;
  std::uint64_t damaged_messages = 0;  ///< staged messages left out of it, failing their CRC
  std::vector<std::byte> bytes;   ///< the encoded chunk
  LossTable losses;
};

/// The staging area as copied out of the store, consistent with the chunks before it.
struct CopiedOpenChunk {
  std::uint64_t generation = 0;   ///< chunks [tail, generation) come before it
  std::vector<std::byte> staged;  ///< staged records (store_layout.hpp), oldest first
};

/// What reading staged records found damaged, and left out.
struct StagedDamage {
  std::uint64_t messages = 0;          ///< records that failed their CRC
  std::uint64_t unreadable_bytes = 0;  ///< at the end: bytes that do not read as sound records
  bool any() const { return messages > 0 || unreadable_bytes > 0; }
  /// "2 damaged messages (failing their CRC) left out; the last 512 bytes do not read as messages: left out".
  std::string describe() const;
};

/// What unstage() read: the messages kept, their first and last log times, and the damage.
struct Unstaged {
  std::uint64_t messages = 0;
  std::uint64_t start_ns = 0;
  std::uint64_t end_ns = 0;
  StagedDamage damage;
};

/// Splits staged records into Message records (those logged at `cutoff` or later) and their loss
/// table. A record that fails its CRC is left out; where none can be trusted after it (its length
/// is wrong, or a record older than the one before it follows), the rest is.
Unstaged unstage(std::span<const std::byte> staged, std::uint64_t cutoff, std::vector<std::byte>& records, LossTable& losses);

/// A staging buffer read for compression: the chunk is in `bytes` (the encoding scratch's output).
struct StagedChunk {
  Status encoded;
  LossTable losses;
  Unstaged read;
  std::uint64_t left_out = 0;  ///< messages left out as damaged (an estimate past unreadable bytes)
  std::span<const std::byte> bytes;
  std::uint64_t uncompressed = 0;  ///< its Message records' bytes
};

/// What turns a staging buffer into a chunk, and the buffers it does so in: one per kind of
/// caller, so that a tap storing a buffer uncompressed never writes where the compressing thread
/// is writing.
struct ChunkScratch {
  explicit ChunkScratch(recorder::Compression compression) : encoder(compression) {}
  recorder::ChunkEncoder encoder;
  std::vector<std::byte> records;
  std::vector<std::byte> encoded;
};

/// CRC-32 of `bytes`, as chunks and staged records store it.
std::uint32_t stored_crc(std::span<const std::byte> bytes);
/// The CRC-32 of two spans one after the other, from theirs (`second_length`: the second's size).
std::uint32_t stored_crc_combined(std::uint32_t first, std::uint32_t second, std::uint64_t second_length);
/// Writes one staged record into `out` (exactly kStagedPrefix + message_record_size(data.size())
/// bytes), its CRC made of `payload_crc` (stored_crc(data), taken beforehand) and its head's.
void write_staged(std::span<std::byte> out, std::uint64_t lost, std::uint32_t payload_crc,
                  const recorder::MessageFields& fields, std::span<const std::byte> data);
/// A chunk's loss table (store_layout.hpp), appended to `out`, and read back (nullopt: damaged).
void append_loss_table(const LossTable& losses, std::vector<std::byte>& out);
std::optional<LossTable> read_loss_table(std::span<const std::byte> bytes);

class StoreImpl {
 public:
  StoreImpl(cerulion::detail::ShmFile file, cerulion::detail::MappedRegion map, std::string path);
  ~StoreImpl();

  // Layout access.
  StoreHeader& header() const { return *reinterpret_cast<StoreHeader*>(base()); }
  KeeperRecord& keeper_record() const {
    return *reinterpret_cast<KeeperRecord*>(base() + header().keeper_record_offset);
  }
  DumpRecord& dump_record(std::uint64_t number) const {
    return reinterpret_cast<DumpRecord*>(base() + header().dump_records_offset)[number % kDumpRecords];
  }
  ChannelEntry& channel(std::uint32_t id) const {
    return reinterpret_cast<ChannelEntry*>(base() + header().channels_offset)[id];
  }
  ChunkSlot& slot(std::uint64_t number) const {
    return reinterpret_cast<ChunkSlot*>(base() + header().slots_offset)[number % header().chunk_slots];
  }
  std::byte* staging_area(std::uint64_t buffer) const {
    return base() + header().staging_offset + (buffer % kStagingBuffers) * header().staging_capacity;
  }
  std::byte* data_area() const { return base() + header().data_offset; }
  std::byte* types_area() const { return base() + header().types_offset; }
  std::byte* base() const { return static_cast<std::byte*>(map_.address()); }

  // Reading (any process).
  /// The channels registered so far (ready ones, in id order).
  std::vector<TopicStatus> channels() const;
  /// A consistent copy of the staging area; its generation tells which chunks precede it.
  CopiedOpenChunk copy_open_chunk() const;
  /// A channel's counters as a reader should take them: what `channel(id)` says, plus an append
  /// a dead keeper published but had not counted yet.
  ChannelCounts channel_counts(std::uint32_t id) const;
  /// Copies committed chunk `number`; false when it was evicted (before or during the copy) or its
  /// bytes do not match their CRC.
  bool copy_chunk(std::uint64_t number, CopiedChunk& out) const;
  /// Why chunk `number`, still in the ring, could not be copied, for a dump's skipped list: ""
  /// when it has nothing to say (dropped for room: its messages are counted lost).
  std::string why_left_out(std::uint64_t number) const;
  StoreStatus status() const;
  bool keeper_alive() const;
  /// What the last keeper to start said of itself (empty while one writes it, or if none did).
  KeeperSettings keeper_settings() const;
  /// The newest dump recorded whole, if any.
  std::optional<WrittenDump> last_dump() const;
  /// Records a dump just written (any process: each dump has a record of its own).
  void record_dump(const WrittenDump& dump);
  /// The type of channel `id`: raw bytes when none was declared, nullopt when it did not fit the
  /// types area (store_layout.hpp), Corrupted when its record is damaged.
  Result<std::optional<TopicType>> channel_type(std::uint16_t id) const;

  // Writing (the keeper only; any thread of its process).
  /// Counts all `messages` of `channel` lost: a topic that came and went before the keeper's taps
  /// could open it. A channel that never had a message takes `removed_realtime_ns` as its last
  /// time, so that a dump whose window holds that moment shows the loss.
  void count_lost_unread(std::uint16_t channel, std::uint64_t messages, std::uint64_t removed_realtime_ns);
  /// The channel id of a topic, registering it on first use; nullopt when the table is full.
  std::optional<std::uint16_t> channel_for(const std::string& topic, const std::string& mode, std::uint32_t depth,
                                           std::uint64_t max_payload, const TopicType& type = {});
  /// Takes one message into the staging area, counting first the `lost_before` it missed before
  /// it. False: the staging area was full (compression is behind), and the message was dropped
  /// and counted lost. A message larger than a staging buffer is compressed here, as a chunk of
  /// its own, after what was staged before it. With compression in the background, a sealed
  /// buffer waits for compress_sealed(); without, it is compressed here.
  [[nodiscard]] Result<bool> take(std::uint16_t channel, std::uint32_t sequence, std::uint64_t log_time,
                                  std::uint64_t publish_time, std::span<const std::byte> data,
                                  std::uint64_t lost_before = 0);
  /// With compression in the background and no waiting for room, a message that finds both
  /// staging buffers full does not wait for the compressing thread (at idle priority it may get no
  /// CPU for seconds): the sealed buffer is committed uncompressed, by the tap, at its own
  /// priority, and the compressing thread's work on it is thrown away. Memory, not messages, is
  /// what a machine too busy to compress pays.
  /// take() for callers that need every message kept (tests, no background compression).
  [[nodiscard]] Status append(std::uint16_t channel, std::uint32_t sequence, std::uint64_t log_time,
                              std::uint64_t publish_time, std::span<const std::byte> data);
  /// Who compresses sealed buffers: a thread of the keeper calling compress_sealed() (true), or
  /// take() itself. `wait_for_room`: take() waits for that thread rather than dropping
  /// (lockstep: the publishers wait for the keeper).
  void compress_in_background(bool background, bool wait_for_room = false);
  /// Compresses and commits the sealed buffer, if any (the compressing thread); false when none.
  [[nodiscard]] Result<bool> compress_sealed();
  /// Blocks until a buffer is sealed, `timeout` passes, or wake() is called.
  void wait_for_sealed(std::chrono::milliseconds timeout);
  void wake();
  /// Seals the active buffer when it holds a message logged `interval_ns` before `now` or more,
  /// and the other buffer is free.
  void seal_if_older(std::uint64_t now_realtime_ns, std::uint64_t interval_ns);
  /// Compresses and commits everything staged (nothing when empty). With compression in the
  /// background, commits it uncompressed instead, without waiting for the compressing thread.
  [[nodiscard]] Status close_open_chunk();
  /// Evicts chunks whose newest message is older than the window.
  void evict_expired(std::uint64_t now_realtime_ns);
  /// Makes the store consistent after a keeper died at any instruction (see store_layout.hpp), and
  /// sets aside what is damaged (damage_found says how much).
  [[nodiscard]] Status recover_after_keeper();
  /// Makes this process the store's keeper (its lock is held): pid, settings, clean-stop marker.
  void claim(const StoreLimits& limits);
  /// Says where the keeper's dumps go and what triggers them (status shows it).
  void set_keeper_settings(const KeeperSettings& settings);
  /// Ends this process's keeping: closes the open chunk into the store, marks the keeper stopped
  /// cleanly and lets go of its lock, so that the store may be removed or taken over while this
  /// process still reads it. Nothing for a reader, or once done.
  void release();

  const std::string& path() const { return path_; }
  int fd() const { return file_.fd(); }
  bool taken_over = false;
  StoreDamage damage_found;

 private:
  /// Commits chunk `encoded` (empty: a slot without bytes, saying only that `damaged_messages`
  /// were left out).
  Status commit_chunk(std::span<const std::byte> encoded, const LossTable& losses, std::uint64_t start_ns,
                      std::uint64_t end_ns, std::uint64_t messages, std::uint64_t uncompressed,
                      std::uint64_t damaged_messages = 0);
  bool make_room(std::uint64_t offset, std::uint64_t length);
  /// Before chunk `number` leaves the ring: its channels' lost_evicted (store_layout.hpp).
  void note_evicted(std::uint64_t number);
  /// Sets aside every chunk in the ring that is not whole (a slot without bytes that says so);
  /// how many. For a keeper taking the store over, with both locks held.
  std::uint64_t set_aside_damaged_chunks();
  /// The type_ref of `type`, appending its record unless an identical one is kept already;
  /// kTypeNotKept when the types area (or /dev/shm) is full.
  std::uint64_t keep_type(const TopicType& type);
  Result<TopicType> type_at(std::uint64_t offset) const;
  // Staging, with staging_mutex_ held (and compress_mutex_ where they compress).
  void seal_locked();
  Status compress_buffer_locked(std::uint64_t buffer);
  /// Commits `buffer` uncompressed (staging_mutex_ only).
  Status store_raw_locked(std::uint64_t buffer);
  Status publish_locked(std::uint64_t buffer, StagedChunk chunk);
  /// Commits what is staged: compressed (compress_mutex_ held too), or uncompressed when `raw`.
  Status flush_locked(bool raw = false);
  StagedChunk encode_staged(std::uint64_t buffer, ChunkScratch& scratch);
  void count_pending_locked();

  cerulion::detail::ShmFile file_;
  cerulion::detail::MappedRegion map_;
  std::string path_;
  bool keeper_ = false;
  // Keeper-side state. compress_mutex_ (taken first) is held by whoever compresses; staging_mutex_
  // by whoever changes the staging area or the chunk ring.
  std::mutex compress_mutex_;
  std::mutex staging_mutex_;
  std::condition_variable sealed_cv_;
  std::condition_variable freed_cv_;
  bool background_ = false;
  bool wait_for_room_ = false;
  bool woken_ = false;
  std::uint64_t last_log_time_ = 0;
  // Bumped whenever a buffer is committed and freed: the compressing thread, which reads a sealed
  // buffer without the staging lock, throws its chunk away when the buffer was committed
  // uncompressed meanwhile.
  std::uint64_t committed_[kStagingBuffers] = {};
  ChunkScratch compressing_{recorder::Compression::Zstd};  // compress_mutex_
  ChunkScratch raw_{recorder::Compression::None};          // staging_mutex_
  ChunkScratch rescue_{recorder::Compression::None};       // the one tap with rescuing_ set
  bool rescuing_ = false;  // staging_mutex_: a tap is committing the sealed buffer uncompressed
  std::vector<std::byte> commit_bytes_;                     // staging_mutex_: commit_chunk's
  std::vector<std::byte> single_;
};

/// Checks the layout a header (already checked by check_header) describes against the file it came
/// from: "" when sound, else what is wrong.
std::string check_layout(const StoreHeader& h, std::uint64_t file_size);

/// What Store keeps from its users, for the library itself (keeper, dumps) and white-box tests.
struct StoreAccess {
  static StoreImpl& impl(const Store& store) { return *store.impl_; }
};
inline StoreImpl& impl_of(const Store& store) { return StoreAccess::impl(store); }

}  // namespace cerulion::flashback::detail
