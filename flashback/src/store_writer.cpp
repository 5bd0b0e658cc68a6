// SPDX-License-Identifier: Apache-2.0
// What the keeper does to its store: register channels, commit chunks into the ring, evict the
// oldest, and pick up after a dead keeper. Taking messages is in store_staging.cpp.

#include <algorithm>
#include <atomic>
#include <cstring>
#include <sys/file.h>
#include <unistd.h>

#include <zlib.h>

#include "cerulion/core/detail/liveness.hpp"
#include "cerulion/core/options.hpp"
#include "store_impl.hpp"

namespace cerulion::flashback::detail {

namespace {
// The data area is committed in steps, so a store's memory grows with what it holds.
constexpr std::uint64_t kReserveStep = 8ull << 20;

std::uint32_t crc_of(std::span<const std::byte> bytes) {
  uLong crc = ::crc32(0L, Z_NULL, 0);
  const auto* p = reinterpret_cast<const Bytef*>(bytes.data());
  std::size_t left = bytes.size();
  while (left > 0) {
    const uInt n = static_cast<uInt>(std::min<std::size_t>(left, 1u << 30));
    crc = ::crc32(crc, p, n);
    p += n;
    left -= n;
  }
  return static_cast<std::uint32_t>(crc);
}
}  // namespace

std::uint32_t stored_crc(std::span<const std::byte> bytes) { return crc_of(bytes); }

std::uint32_t stored_crc_combined(std::uint32_t first, std::uint32_t second, std::uint64_t second_length) {
  return static_cast<std::uint32_t>(::crc32_combine(first, second, static_cast<z_off_t>(second_length)));
}

StoreImpl::StoreImpl(cerulion::detail::ShmFile file, cerulion::detail::MappedRegion map, std::string path)
    : file_(std::move(file)), map_(std::move(map)), path_(std::move(path)) {}

StoreImpl::~StoreImpl() { release(); }

void StoreImpl::release() {
  if (!keeper_) return;
  // A keeper that stops cleanly says so; one that dies leaves its pid for status to judge.
  (void)close_open_chunk();
  {
    // A compressing thread still running (starved, left behind by its keeper) leaves the store be.
    std::lock_guard lock(staging_mutex_);
    keeper_ = false;
  }
  header().keeper_stopped_realtime_ns.store(realtime_ns());
  ::flock(fd(), LOCK_UN);
}

namespace {
template <std::size_t N>
void copy_text(char (&out)[N], std::string_view text) {
  std::memset(out, 0, N);
  std::memcpy(out, text.data(), std::min(text.size(), N - 1));
}
}  // namespace

void StoreImpl::set_keeper_settings(const KeeperSettings& settings) {
  auto& r = keeper_record();
  const std::uint64_t version = r.version.load(std::memory_order_relaxed) | 1;  // odd: being written
  r.version.store(version, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  copy_text(r.dump_dir, settings.dump_dir);
  copy_text(r.trigger_topic, settings.trigger_topic);
  r.post_ns = static_cast<std::uint64_t>(settings.post_s * 1e9);
  r.on_stall_ns = static_cast<std::uint64_t>(settings.on_stall_s * 1e9);
  r.max_disk_bytes = settings.max_disk_bytes;
  r.max_dumps_per_hour = settings.max_dumps_per_hour;
  r.flags = (settings.on_death ? kOnDeath : 0) | (settings.on_signal ? kOnSignal : 0);
  std::string selection;
  if (settings.selection) {
    if (settings.selection->all) selection += "a\n";
    for (const auto& t : settings.selection->topics) selection += "t" + t + "\n";
    for (const auto& p : settings.selection->include) selection += "i" + p + "\n";
    for (const auto& p : settings.selection->exclude) selection += "x" + p + "\n";
  }
  if (selection.size() >= sizeof r.selection || selection.find('\0') != std::string::npos) {
    selection.clear();
    r.flags |= kSelectionTooLong;
  }
  copy_text(r.selection, selection);
  r.version.store(version + 1, std::memory_order_release);
}

void StoreImpl::record_dump(const WrittenDump& dump) {
  // Each dump has a number of its own, so dumps written at once never share a record.
  const std::uint64_t n = header().dumps.fetch_add(1);
  auto& r = dump_record(n);
  r.state.store(writing_state(n), std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  r.realtime_ns = dump.realtime_ns;
  r.messages = dump.messages;
  copy_text(r.trigger, dump.trigger);
  copy_text(r.path, dump.path);
  r.state.store(committed_state(n), std::memory_order_release);
}

void StoreImpl::claim(const StoreLimits& limits) {
  keeper_ = true;
  auto& h = header();
  h.window_ns.store(static_cast<std::uint64_t>(limits.window_s * 1e9));
  h.chunk_size.store(std::min<std::uint64_t>(limits.chunk_size, h.staging_capacity / 2));
  h.keeper_pid.store(static_cast<std::uint32_t>(::getpid()));
  h.keeper_pid_namespace.store(cerulion::detail::own_pid_namespace());
  h.keeper_start_time.store(cerulion::detail::own_start_time());
  h.keeper_started_realtime_ns.store(realtime_ns());
  h.keeper_stopped_realtime_ns.store(0);
}

Status StoreImpl::recover_after_keeper() {
  auto& h = header();
  std::lock_guard compressing(compress_mutex_);
  std::lock_guard lock(staging_mutex_);
  // An append published but not counted is counted; a change left half done is over.
  count_pending_locked();
  if (h.staging_seq.load() % 2 != 0) h.staging_seq.fetch_add(1);
  const std::uint32_t a = h.active.load() % kStagingBuffers;
  const std::uint32_t sealed = (a + 1) % kStagingBuffers;
  auto& s = h.staging[sealed];
  if (s.length.load() > 0 && s.generation.load() < h.head.load()) {
    // It died after committing the sealed buffer, before freeing it: that content is a chunk now.
    s.length.store(0);
    s.messages.store(0);
  }
  // Damage is set aside before anything new is written, and what it left staged becomes chunks of
  // the history, less the records that fail their CRC.
  damage_found.chunks = set_aside_damaged_chunks();
  const std::uint64_t damaged_before = h.damaged_messages.load();
  Status status = flush_locked();
  damage_found.messages = h.damaged_messages.load() - damaged_before;
  return status;
}

std::optional<std::uint16_t> StoreImpl::channel_for(const std::string& topic, const std::string& mode,
                                                    std::uint32_t depth, std::uint64_t max_payload,
                                                    const TopicType& type) {
  auto& h = header();
  // Taps of different topics register theirs at once.
  std::lock_guard lock(staging_mutex_);
  const std::uint32_t count = h.channel_count.load();
  for (std::uint32_t id = 0; id < count; ++id) {
    auto& c = channel(id);
    if (c.ready.load(std::memory_order_acquire) && topic == std::string(c.topic, ::strnlen(c.topic, kTopicCapacity))) {
      // A topic keeps its id across keepers; its settings are today's.
      std::memset(c.mode, 0, sizeof c.mode);
      std::memcpy(c.mode, mode.data(), std::min(mode.size(), sizeof c.mode - 1));
      c.depth = depth;
      c.max_payload = max_payload;
      c.type_ref.store(keep_type(type), std::memory_order_release);
      return static_cast<std::uint16_t>(id);
    }
  }
  if (count >= h.max_channels || topic.size() >= kTopicCapacity) return std::nullopt;
  auto& c = channel(count);
  std::memset(c.topic, 0, sizeof c.topic);
  std::memcpy(c.topic, topic.data(), topic.size());
  c.topic_crc = crc_of(std::as_bytes(std::span(topic)));
  std::memset(c.mode, 0, sizeof c.mode);
  std::memcpy(c.mode, mode.data(), std::min(mode.size(), sizeof c.mode - 1));
  c.depth = depth;
  c.max_payload = max_payload;
  c.type_ref.store(keep_type(type), std::memory_order_release);
  c.ready.store(1, std::memory_order_release);
  h.channel_count.store(count + 1, std::memory_order_release);
  return static_cast<std::uint16_t>(count);
}

void StoreImpl::count_lost_unread(std::uint16_t id, std::uint64_t messages, std::uint64_t removed_realtime_ns) {
  // Under the staging lock, as a tap's own counting of the channel is.
  std::lock_guard lock(staging_mutex_);
  auto& c = channel(id);
  c.lost.fetch_add(messages, std::memory_order_relaxed);
  if (c.messages.load(std::memory_order_relaxed) == 0 && c.last_realtime_ns.load() < removed_realtime_ns) {
    c.last_realtime_ns.store(removed_realtime_ns, std::memory_order_relaxed);
  }
}

void StoreImpl::note_evicted(std::uint64_t number) {
  auto& h = header();
  auto& s = slot(number);
  if (s.state.load(std::memory_order_relaxed) != committed_state(number)) return;
  const std::uint64_t offset = s.offset.load(std::memory_order_relaxed);
  const std::uint64_t length = s.length.load(std::memory_order_relaxed);
  const std::uint64_t chunk_length = s.chunk_length.load(std::memory_order_relaxed);
  if (length == 0 || chunk_length > length || offset > h.reserved_bytes.load() || length > h.reserved_bytes.load() - offset) {
    return;
  }
  const auto losses = read_loss_table(std::span<const std::byte>(data_area() + offset + chunk_length, length - chunk_length));
  if (!losses) return;
  for (const auto& [id, loss] : *losses) {
    if (id >= h.max_channels) continue;
    auto& c = channel(id);
    if (loss.last_lost > c.lost_evicted.load(std::memory_order_relaxed)) c.lost_evicted.store(loss.last_lost, std::memory_order_relaxed);
  }
}

bool StoreImpl::make_room(std::uint64_t offset, std::uint64_t length) {
  auto& h = header();
  const std::uint64_t head = h.head.load(std::memory_order_relaxed);
  // What was evicted for room is remembered: while it is inside the window, status says the window
  // was cut short.
  auto evict_oldest = [&](std::atomic<std::uint64_t>& evicted_end_ns) {
    const std::uint64_t t = h.tail.load(std::memory_order_relaxed);
    evicted_end_ns.store(std::max(evicted_end_ns.load(std::memory_order_relaxed),
                                  slot(t).end_ns.load(std::memory_order_relaxed)),
                         std::memory_order_relaxed);
    note_evicted(t);
    h.tail.store(t + 1, std::memory_order_seq_cst);
    h.chunks_evicted.fetch_add(1, std::memory_order_relaxed);
  };
  while (head - h.tail.load(std::memory_order_relaxed) >= h.chunk_slots) evict_oldest(h.evicted_for_slots_end_ns);
  // Whole chunks go, oldest first, until none overlaps the bytes about to be written.
  for (;;) {
    bool overlaps = false;
    for (std::uint64_t n = h.tail.load(std::memory_order_relaxed); n < head && !overlaps; ++n) {
      auto& s = slot(n);
      const std::uint64_t o = s.offset.load(std::memory_order_relaxed), l = s.length.load(std::memory_order_relaxed);
      overlaps = l > 0 && o < offset + length && offset < o + l;
    }
    if (!overlaps) break;
    evict_oldest(h.evicted_for_memory_end_ns);
  }
  // Readers that copied bytes of an evicted chunk see the new tail when they check.
  std::atomic_thread_fence(std::memory_order_release);
  return true;
}

Status StoreImpl::commit_chunk(std::span<const std::byte> chunk, const LossTable& losses, std::uint64_t start_ns,
                               std::uint64_t end_ns, std::uint64_t messages, std::uint64_t uncompressed,
                               std::uint64_t damaged_messages) {
  auto& h = header();
  // The chunk and its loss table go into the ring together.
  std::vector<std::byte>& encoded = commit_bytes_;
  encoded.assign(chunk.begin(), chunk.end());
  const std::uint64_t chunk_length = encoded.size();
  append_loss_table(losses, encoded);
  std::uint64_t length = encoded.size();
  auto place = [&] {
    std::uint64_t off = h.write_offset.load(std::memory_order_relaxed);
    if (off + length > h.usable_bytes.load(std::memory_order_relaxed)) off = 0;
    return off;
  };
  std::uint64_t offset = place();
  Status status;
  const bool bytes = !chunk.empty();
  if (!bytes || length > h.usable_bytes.load(std::memory_order_relaxed)) {
    length = 0;
  } else if (const std::uint64_t reserved = h.reserved_bytes.load(); offset + length > reserved) {
    const std::uint64_t want = std::min(h.data_capacity, std::max(offset + length, reserved + kReserveStep));
    if (auto st = cerulion::detail::reserve(fd(), h.data_offset + reserved, want - reserved, path_); st) {
      h.reserved_bytes.store(want);
    } else {
      // /dev/shm is full: the store stays the size it reached and wraps earlier.
      h.usable_bytes.store(reserved);
      status = st;
      offset = place();
      if (length > reserved) length = 0;
    }
  }
  const std::uint64_t n = h.head.load(std::memory_order_relaxed);
  if (length > 0) {
    make_room(offset, length);
  } else if (!bytes) {
    while (n - h.tail.load(std::memory_order_relaxed) >= h.chunk_slots) note_evicted(h.tail.fetch_add(1));
  } else {
    // No room for it at all: its messages are lost, and counted so at once.
    h.chunks_dropped.fetch_add(1, std::memory_order_relaxed);
    for (const auto& [id, loss] : losses) channel(id).lost.fetch_add(loss.messages, std::memory_order_relaxed);
    while (n - h.tail.load(std::memory_order_relaxed) >= h.chunk_slots) note_evicted(h.tail.fetch_add(1));
  }
  auto& s = slot(n);
  s.state.store(writing_state(n), std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  s.offset.store(offset, std::memory_order_relaxed);
  s.length.store(length, std::memory_order_relaxed);
  s.chunk_length.store(length ? chunk_length : 0, std::memory_order_relaxed);
  s.start_ns.store(start_ns, std::memory_order_relaxed);
  s.end_ns.store(end_ns, std::memory_order_relaxed);
  s.messages.store(length ? messages : 0, std::memory_order_relaxed);
  s.uncompressed_bytes.store(length ? uncompressed : 0, std::memory_order_relaxed);
  s.quarantined.store(0, std::memory_order_relaxed);
  s.damaged_messages.store(static_cast<std::uint32_t>(std::min<std::uint64_t>(damaged_messages, UINT32_MAX)),
                           std::memory_order_relaxed);
  if (length > 0) {
    std::memcpy(data_area() + offset, encoded.data(), length);
    s.crc.store(crc_of(encoded), std::memory_order_relaxed);
    h.write_offset.store(offset + length, std::memory_order_relaxed);
  }
  s.state.store(committed_state(n), std::memory_order_release);
  h.head.store(n + 1, std::memory_order_release);
  return status;
}

void StoreImpl::evict_expired(std::uint64_t now_realtime_ns) {
  auto& h = header();
  // Taps commit chunks too (uncompressed, when the compressing thread is behind).
  std::lock_guard lock(staging_mutex_);
  if (!keeper_) return;
  const std::uint64_t window = h.window_ns.load(std::memory_order_relaxed);
  if (now_realtime_ns < window) return;
  const std::uint64_t cutoff = now_realtime_ns - window;
  const std::uint64_t head = h.head.load(std::memory_order_relaxed);
  for (std::uint64_t t = h.tail.load(); t < head && slot(t).end_ns.load(std::memory_order_relaxed) < cutoff; ++t) {
    note_evicted(t);
    h.tail.store(t + 1, std::memory_order_seq_cst);
    h.chunks_evicted.fetch_add(1, std::memory_order_relaxed);
  }
}

}  // namespace cerulion::flashback::detail
