// SPDX-License-Identifier: Apache-2.0
#pragma once
// The flashback store: recent traffic of a domain, kept zstd-compressed in shared memory by one
// keeper, readable by anyone of the same user at any time, even after the keeper died. One store
// per keeper name; it lives at /dev/shm/cerulion-flashback.<domain>.<name>, mode 0600, so
// `ls /dev/shm` shows it and `topic list` never mistakes it for a topic.
//
//   auto store = cerulion::flashback::Store::open("default", "default");
//   auto status = store->status();   // window covered, memory, topics...

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cerulion/core/discovery.hpp"
#include "cerulion/core/status.hpp"
#include "cerulion/recording/topic_selection.hpp"

namespace cerulion::flashback {

/// Longest keeper name accepted (names are [A-Za-z0-9_-]).
inline constexpr std::size_t kMaxKeeperName = 64;

/// Ok, or InvalidArgument saying what is wrong with a keeper name.
Status validate_keeper_name(std::string_view name);
/// "cerulion-flashback.<domain>.<name>" (the file name in /dev/shm).
std::string store_file_name(std::string_view domain, std::string_view name);

/// How much a store keeps. Defaults are the recommendation.
struct StoreLimits {
  /// Chunks whose newest message is older than this are evicted (seconds).
  double window_s = 30;
  /// Shared memory for closed chunks, bytes; the oldest chunks are evicted to stay within it.
  std::uint64_t memory_bytes = 512ull << 20;
  /// Uncompressed bytes after which the open chunk is compressed and closed.
  std::uint64_t chunk_size = 1u << 20;
};

/// One topic as the store counts it.
struct TopicStatus {
  /// Its name; "/flashback-damaged-channel-<id>" when the name kept fails its CRC (name_damaged).
  std::string topic;
  bool name_damaged = false;
  std::uint16_t channel_id = 0;
  std::string mode;
  std::uint32_t depth = 0;
  std::uint64_t max_payload = 0;
  std::uint64_t messages = 0;   ///< taken since the store was created (each in shared memory once counted)
  std::uint64_t bytes = 0;
  /// Missed by the tap or dropped by the store since it was created, counted when known.
  std::uint64_t lost = 0;
  double rate_hz = 0;           ///< recent, as the keeper measured it
  std::uint64_t last_realtime_ns = 0;
};

/// What the keeper that started last said of itself when it started.
struct KeeperSettings {
  std::string dump_dir;        ///< where its own dumps go, absolute; "" when no keeper said
  bool on_signal = false;      ///< its process dumps on SIGUSR1 (as `cerulion flashback start`)
  std::string trigger_topic;   ///< "" = none
  bool on_death = false;
  double on_stall_s = 0;       ///< 0 = off
  double post_s = 0;
  unsigned max_dumps_per_hour = 0;
  std::uint64_t max_disk_bytes = 0;
  /// The topics it takes (its trigger topic among them): a dump reads the rings of those it never
  /// attached too. nullopt when no keeper said, or it was too long to record.
  std::optional<recording::TopicSelection> selection;
};

/// A dump written from a store, by its keeper or by anyone else.
struct WrittenDump {
  std::string path;            ///< absolute for a file
  std::string trigger;         ///< "request", "signal", "topic", "death", "stall"
  std::uint64_t realtime_ns = 0;
  std::uint64_t messages = 0;
};

/// Why a store holds less than its window: chunks still inside the window were evicted to make room.
enum class WindowCut : std::uint8_t {
  None,
  Memory,      ///< the memory limit (or what /dev/shm could give) was reached
  ChunkSlots,  ///< the table of chunks was full (very many small chunks)
};

/// A store at one moment.
struct StoreStatus {
  std::string domain;
  std::string name;
  std::string path;
  std::uint32_t keeper_pid = 0;     ///< the last keeper's; 0: no keeper ever ran
  bool alive = false;
  std::uint64_t keeper_started_realtime_ns = 0;
  std::uint64_t keeper_stopped_realtime_ns = 0;  ///< when it stopped cleanly; 0 while it runs, or if it died
  KeeperSettings keeper;
  std::uint64_t window_start_ns = 0;  ///< oldest message held (realtime), 0 if none
  std::uint64_t window_end_ns = 0;    ///< newest message held
  double window_limit_s = 0;
  WindowCut window_cut = WindowCut::None;
  /// Held by the committed chunks: at most the limit (memory_limit_bytes).
  std::uint64_t memory_bytes = 0;
  /// Taken by the taps and not yet committed, in the staging buffers: a fixed area beside the
  /// limit (a few chunks' worth), uncompressed.
  std::uint64_t staged_bytes = 0;
  std::uint64_t memory_limit_bytes = 0;
  std::uint64_t memory_usable_bytes = 0;  ///< less than the limit when /dev/shm ran out
  std::uint64_t memory_committed_bytes = 0;  ///< of the limit, taken in /dev/shm so far (it grows as it fills)
  std::uint64_t shm_free_bytes = 0;         ///< free in /dev/shm now, for the rest to grow into
  std::uint64_t uncompressed_bytes = 0;   ///< what memory_bytes holds, uncompressed
  double compression_ratio = 1;           ///< of the committed chunks
  std::uint64_t chunks = 0;
  std::uint64_t messages = 0;          ///< held now
  std::uint64_t dumps = 0;
  std::uint64_t dumps_refused = 0;
  std::optional<WrittenDump> last_dump;
  std::uint64_t chunks_evicted = 0;
  std::uint64_t chunks_dropped = 0;
  /// Committed uncompressed by the taps because compression (at idle priority, on a busy machine)
  /// was behind the input: kept, at the cost of memory.
  std::uint64_t chunks_stored_raw = 0;
  /// Taken, then dropped because the staging area was full (compression behind the input);
  /// counted in their topics' `lost` when dropped.
  std::uint64_t messages_dropped = 0;
  /// Damage found and left out since the store was made: chunks whose bytes failed their CRC, set
  /// aside by keepers taking it over, and staged messages that failed theirs.
  std::uint64_t damaged_chunks = 0;
  std::uint64_t damaged_messages = 0;
  std::vector<TopicStatus> topics;
};

/// What a keeper taking a store over found damaged in it, and left out (dumps name it while it is
/// in the window).
struct StoreDamage {
  std::uint64_t chunks = 0;    ///< chunks whose bytes failed their CRC: set aside
  std::uint64_t messages = 0;  ///< staged messages that failed their CRC: left out of the history
  bool any() const noexcept { return chunks > 0 || messages > 0; }
};
/// One line saying what a keeper taking a store over found damaged, and what it did with it.
std::string describe(const StoreDamage& damage);

namespace detail {
class StoreImpl;
struct StoreAccess;
}  // namespace detail

/// A mapped store. Move-only.
class Store {
 public:
  /// Opens an existing store to read it. NotFound ("no flashback store named ..."),
  /// PermissionDenied (another user's), Corrupted (not a store, another version, damaged).
  static Result<Store> open(std::string_view domain, std::string_view name);

  /// Opens the store for its keeper: creates it, or takes over a dead keeper's store keeping its
  /// history (the open chunk it left is closed first). Fails with InvalidArgument naming the pid
  /// when a live keeper holds it. `limits` apply to a new store; a store taken over keeps its size
  /// (its window and chunk size follow `limits`). The keeper holds it until the Store is dropped.
  static Result<Store> open_for_keeper(std::string_view domain, std::string_view name, StoreLimits limits);

  Store(Store&&) noexcept;
  Store& operator=(Store&&) noexcept;
  ~Store();

  StoreStatus status() const;
  const std::string& path() const noexcept;
  /// True when this Store came from open_for_keeper and took over a dead keeper's store.
  bool taken_over() const noexcept;
  /// What open_for_keeper found damaged in the store it took over (nothing otherwise).
  StoreDamage damage_found() const noexcept;

 private:
  friend struct detail::StoreAccess;
  explicit Store(std::unique_ptr<detail::StoreImpl> impl);
  std::unique_ptr<detail::StoreImpl> impl_;
};

/// A store found in /dev/shm.
struct StoreEntry {
  std::string domain;
  std::string name;
  std::string path;
  std::uint32_t keeper_pid = 0;
  bool alive = false;
  std::string problem;   ///< "" when it opens; otherwise why it does not
};

/// Every store of `domain` (all domains when empty).
std::vector<StoreEntry> list_stores(std::string_view domain = {});

/// Removes a store. InvalidArgument naming the pid while a live keeper holds it (a keeper that
/// was stopped, Keeper::stop(), holds it no more).
Status remove_store(std::string_view domain, std::string_view name);

/// Asks a store's running keeper to stop (SIGTERM to its process) and waits up to `timeout_s` for
/// that process to exit, so that a new keeper may start as soon as this returns. The pid of the
/// keeper that exited, or 0 when none was running. Errors: NotFound (no store), Timeout (its
/// process still runs after `timeout_s`: asked, not waited for), InvalidArgument (it runs in
/// another pid namespace, a container: stop it there), SystemError (it could not be signalled).
Result<std::uint32_t> stop_keeper(std::string_view domain, std::string_view name, double timeout_s = 10);

/// A kept topic's publishers as the domain lists them now (its segment, not the store).
struct TopicPublishers {
  std::string topic;
  bool listed = false;               ///< false: the topic is gone from the domain
  std::vector<std::uint32_t> alive;
  std::vector<std::uint32_t> dead;   ///< died without leaving it (killed, crashed), not yet evicted
  /// Publishers that died and were evicted since, as the topic's death log recorded them (the
  /// last kMaxParticipants deaths), oldest first.
  std::vector<DeathInfo> died;
};

/// The publishers of each of `topics` (a store's), in their order. A publisher that left cleanly
/// is in no list; one that died stays in `dead` until another participant evicts it, and is in
/// `died` from then on.
std::vector<TopicPublishers> publishers_of(std::string_view domain, const std::vector<TopicStatus>& topics);

/// Those of `p` that died publishing, whether still listed or evicted since: sorted, each once.
std::vector<std::uint32_t> dead_pids(const TopicPublishers& p);

}  // namespace cerulion::flashback
