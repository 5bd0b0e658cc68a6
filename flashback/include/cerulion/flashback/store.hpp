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
#include <string>
#include <vector>

#include "cerulion/core/status.hpp"

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
  std::string topic;
  std::uint16_t channel_id = 0;
  std::string mode;
  std::uint32_t depth = 0;
  std::uint64_t max_payload = 0;
  std::uint64_t messages = 0;   ///< taken since the store was created
  std::uint64_t bytes = 0;
  std::uint64_t lost = 0;
  double rate_hz = 0;           ///< recent, as the keeper measured it
  std::uint64_t last_realtime_ns = 0;
};

/// A store at one moment.
struct StoreStatus {
  std::string domain;
  std::string name;
  std::string path;
  std::uint32_t keeper_pid = 0;     ///< 0: no keeper ever ran (or it stopped cleanly)
  bool alive = false;
  std::uint64_t keeper_started_realtime_ns = 0;
  std::uint64_t window_start_ns = 0;  ///< oldest message held (realtime), 0 if none
  std::uint64_t window_end_ns = 0;    ///< newest message held
  double window_limit_s = 0;
  std::uint64_t memory_bytes = 0;       ///< held by closed chunks and the open one
  std::uint64_t memory_limit_bytes = 0;
  std::uint64_t memory_usable_bytes = 0;  ///< less than the limit when /dev/shm ran out
  std::uint64_t uncompressed_bytes = 0;   ///< what memory_bytes holds, uncompressed
  double compression_ratio = 1;
  std::uint64_t chunks = 0;
  std::uint64_t messages = 0;          ///< held now
  std::uint64_t dumps = 0;
  std::uint64_t dumps_refused = 0;
  std::uint64_t chunks_evicted = 0;
  std::uint64_t chunks_dropped = 0;
  std::vector<TopicStatus> topics;
};

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

/// Removes a store. InvalidArgument naming the pid while a live keeper holds it.
Status remove_store(std::string_view domain, std::string_view name);

}  // namespace cerulion::flashback
