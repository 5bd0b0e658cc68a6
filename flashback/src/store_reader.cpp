// SPDX-License-Identifier: Apache-2.0
// Reading a store while its keeper writes it (or after it died): copies that are whole or left
// out, never torn, and the figures `flashback status` shows.

#include <atomic>
#include <cstring>
#include <sys/statvfs.h>
#include <thread>

#include <fmt/core.h>

#include "cerulion/core/detail/liveness.hpp"
#include "cerulion/core/options.hpp"
#include "store_impl.hpp"

namespace cerulion::flashback::detail {

namespace {
std::string bounded(const char* s, std::size_t capacity) { return std::string(s, ::strnlen(s, capacity)); }
// A mode name as kept (a word), or "" where damage made it something else.
std::string printable(std::string s) {
  for (char ch : s) {
    if (ch < 0x20 || ch > 0x7e) return "";
  }
  return s;
}
}  // namespace

bool StoreImpl::keeper_alive() const {
  const auto& h = header();
  const auto pid = h.keeper_pid.load();
  if (pid == 0 || h.keeper_stopped_realtime_ns.load() != 0) return false;
  return cerulion::detail::process_alive(static_cast<pid_t>(pid), h.keeper_start_time.load(),
                                         h.keeper_pid_namespace.load());
}

KeeperSettings StoreImpl::keeper_settings() const {
  const auto& r = keeper_record();
  // Written once per keeper, at its start: a copy that raced it is taken again.
  for (int attempt = 0; attempt < 100; ++attempt) {
    const std::uint64_t v1 = r.version.load(std::memory_order_acquire);
    if (v1 % 2 != 0) {
      std::this_thread::yield();
      continue;
    }
    KeeperSettings k;
    k.dump_dir = bounded(r.dump_dir, sizeof r.dump_dir);
    k.trigger_topic = bounded(r.trigger_topic, sizeof r.trigger_topic);
    k.post_s = static_cast<double>(r.post_ns) / 1e9;
    k.on_stall_s = static_cast<double>(r.on_stall_ns) / 1e9;
    k.max_disk_bytes = r.max_disk_bytes;
    k.max_dumps_per_hour = r.max_dumps_per_hour;
    k.on_death = (r.flags & kOnDeath) != 0;
    k.on_signal = (r.flags & kOnSignal) != 0;
    if (const std::string text = bounded(r.selection, sizeof r.selection); !text.empty() && (r.flags & kSelectionTooLong) == 0) {
      recording::TopicSelection s;
      for (std::size_t at = 0; at < text.size();) {
        std::size_t end = text.find('\n', at);
        if (end == std::string::npos) end = text.size();
        const std::string line = text.substr(at, end - at);
        at = end + 1;
        if (line.empty()) continue;
        const std::string rest = line.substr(1);
        switch (line[0]) {
          case 'a': s.all = true; break;
          case 't': s.topics.push_back(rest); break;
          case 'i': s.include.push_back(rest); break;
          case 'x': s.exclude.push_back(rest); break;
          default: break;
        }
      }
      k.selection = std::move(s);
    }
    std::atomic_thread_fence(std::memory_order_acquire);
    if (r.version.load(std::memory_order_relaxed) == v1) return k;
  }
  return {};  // a keeper died while writing it; the next one writes it again
}

std::optional<WrittenDump> StoreImpl::last_dump() const {
  const std::uint64_t count = header().dumps.load(std::memory_order_acquire);
  // The newest record written whole: one still being written (or left half-written by a process
  // that died) gives way to the one before it.
  for (std::uint64_t n = count; n > 0 && count - n < kDumpRecords; --n) {
    const auto& r = dump_record(n - 1);
    if (r.state.load(std::memory_order_acquire) != committed_state(n - 1)) continue;
    WrittenDump d;
    d.realtime_ns = r.realtime_ns;
    d.messages = r.messages;
    d.trigger = bounded(r.trigger, sizeof r.trigger);
    d.path = bounded(r.path, sizeof r.path);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (r.state.load(std::memory_order_relaxed) == committed_state(n - 1)) return d;
  }
  return std::nullopt;
}

std::vector<TopicStatus> StoreImpl::channels() const {
  std::vector<TopicStatus> out;
  const std::uint32_t count = std::min(header().channel_count.load(std::memory_order_acquire), header().max_channels);
  for (std::uint32_t id = 0; id < count; ++id) {
    const auto& c = channel(id);
    if (!c.ready.load(std::memory_order_acquire)) continue;
    TopicStatus t;
    t.topic = bounded(c.topic, sizeof c.topic);
    if (stored_crc(std::as_bytes(std::span(t.topic))) != c.topic_crc) {
      // Its messages are still worth having: under a name that says what happened.
      t.topic = fmt::format("/flashback-damaged-channel-{}", id);
      t.name_damaged = true;
    }
    t.channel_id = static_cast<std::uint16_t>(id);
    t.mode = printable(bounded(c.mode, sizeof c.mode));
    t.depth = c.depth;
    t.max_payload = c.max_payload;
    const auto counts = channel_counts(id);
    t.messages = counts.messages;
    t.bytes = c.bytes.load(std::memory_order_relaxed);
    t.lost = counts.lost;
    t.rate_hz = static_cast<double>(c.rate_millihertz.load(std::memory_order_relaxed)) / 1000.0;
    t.last_realtime_ns = c.last_realtime_ns.load(std::memory_order_relaxed);
    out.push_back(std::move(t));
  }
  return out;
}

CopiedOpenChunk StoreImpl::copy_open_chunk() const {
  const auto& h = header();
  CopiedOpenChunk out;
  auto copy = [&](std::uint64_t buffer) {
    const std::uint64_t length = std::min(h.staging[buffer].length.load(std::memory_order_acquire), h.staging_capacity);
    out.staged.insert(out.staged.end(), staging_area(buffer), staging_area(buffer) + length);
  };
  // A live keeper may seal or commit while we copy; then we copy again. It does so at most once a
  // chunk and the copy is short, so this ends at once in practice. A dead keeper's store does not
  // change: what it left, even half way through a change, is read as it is (recover_after_keeper).
  for (int attempt = 0;; ++attempt) {
    const std::uint64_t s1 = h.staging_seq.load(std::memory_order_acquire);
    if (s1 % 2 != 0 && (attempt < 1000 || keeper_alive())) {
      std::this_thread::yield();
      if (attempt < 100000) continue;
    }
    out.staged.clear();
    const std::uint64_t head = h.head.load(std::memory_order_acquire);
    const std::uint32_t active = h.active.load(std::memory_order_acquire) % kStagingBuffers;
    const std::uint32_t sealed = (active + 1) % kStagingBuffers;
    // A sealed buffer whose chunk is committed already is in the chunks.
    if (h.staging[sealed].generation.load(std::memory_order_relaxed) >= head) copy(sealed);
    copy(active);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (h.staging_seq.load(std::memory_order_relaxed) != s1 && attempt < 100000) continue;
    out.generation = head;
    return out;
  }
}

bool StoreImpl::copy_chunk(std::uint64_t number, CopiedChunk& out) const {
  const auto& h = header();
  const auto& s = slot(number);
  const std::uint64_t state = s.state.load(std::memory_order_acquire);
  if (state != committed_state(number)) return false;
  const std::uint64_t offset = s.offset.load(std::memory_order_relaxed);
  const std::uint64_t length = s.length.load(std::memory_order_relaxed);
  const std::uint64_t chunk_length = s.chunk_length.load(std::memory_order_relaxed);
  const std::uint64_t crc = s.crc.load(std::memory_order_relaxed);
  out.number = number;
  out.start_ns = s.start_ns.load(std::memory_order_relaxed);
  out.end_ns = s.end_ns.load(std::memory_order_relaxed);
  out.messages = s.messages.load(std::memory_order_relaxed);
  out.damaged_messages = s.damaged_messages.load(std::memory_order_relaxed);
  // Never touch bytes outside what was reserved, whatever a damaged slot says.
  const std::uint64_t reserved = std::min(h.reserved_bytes.load(std::memory_order_acquire), h.data_capacity);
  if (length == 0 || chunk_length > length || offset > reserved || length > reserved - offset) return false;
  out.bytes.assign(data_area() + offset, data_area() + offset + length);
  std::atomic_thread_fence(std::memory_order_acquire);
  if (s.state.load(std::memory_order_relaxed) != state) return false;
  if (h.tail.load(std::memory_order_seq_cst) > number) return false;
  if (stored_crc(out.bytes) != crc) return false;
  auto losses = read_loss_table(std::span(out.bytes).subspan(chunk_length));
  if (!losses) return false;
  out.losses = std::move(*losses);
  out.bytes.resize(chunk_length);
  return true;
}

StoreStatus StoreImpl::status() const {
  const auto& h = header();
  StoreStatus s;
  s.domain = bounded(h.domain, sizeof h.domain);
  s.name = bounded(h.name, sizeof h.name);
  s.path = path_;
  s.keeper_pid = h.keeper_pid.load();
  s.alive = keeper_alive();
  s.keeper_started_realtime_ns = h.keeper_started_realtime_ns.load();
  s.keeper_stopped_realtime_ns = h.keeper_stopped_realtime_ns.load();
  s.keeper = keeper_settings();
  s.window_limit_s = static_cast<double>(h.window_ns.load()) / 1e9;
  s.memory_limit_bytes = h.data_capacity;
  s.memory_usable_bytes = h.usable_bytes.load();
  s.memory_committed_bytes = h.reserved_bytes.load();
  if (struct statvfs fs{}; ::fstatvfs(fd(), &fs) == 0) {
    s.shm_free_bytes = static_cast<std::uint64_t>(fs.f_bavail) * fs.f_frsize;
  }
  s.dumps = h.dumps.load();
  s.last_dump = last_dump();
  s.dumps_refused = h.dumps_refused.load();
  s.chunks_evicted = h.chunks_evicted.load();
  s.chunks_dropped = h.chunks_dropped.load();
  s.chunks_stored_raw = h.chunks_stored_raw.load();
  s.messages_dropped = h.messages_dropped_staging.load();
  s.damaged_chunks = h.damaged_chunks.load();
  s.damaged_messages = h.damaged_messages.load();
  const std::uint64_t head = h.head.load(std::memory_order_acquire);
  for (std::uint64_t n = h.tail.load(); n < head; ++n) {
    const auto& slot_n = slot(n);
    if (slot_n.state.load(std::memory_order_acquire) != committed_state(n)) continue;
    const std::uint64_t length = slot_n.length.load(std::memory_order_relaxed);
    if (length == 0) continue;
    ++s.chunks;
    s.memory_bytes += length;
    s.uncompressed_bytes += slot_n.uncompressed_bytes.load(std::memory_order_relaxed);
    s.messages += slot_n.messages.load(std::memory_order_relaxed);
    const std::uint64_t start = slot_n.start_ns.load(std::memory_order_relaxed);
    const std::uint64_t end = slot_n.end_ns.load(std::memory_order_relaxed);
    if (s.window_start_ns == 0 || start < s.window_start_ns) s.window_start_ns = start;
    if (end > s.window_end_ns) s.window_end_ns = end;
  }
  const std::uint32_t active = h.active.load(std::memory_order_acquire) % kStagingBuffers;
  for (std::uint32_t i = 0; i < kStagingBuffers; ++i) {
    const auto& b = h.staging[i];
    const std::uint64_t staged = std::min(b.length.load(std::memory_order_acquire), h.staging_capacity);
    // A sealed buffer whose chunk is committed already (a keeper killed before freeing it) is in the chunks.
    if (staged == 0 || (i != active && b.generation.load() < head)) continue;
    s.staged_bytes += staged;
    s.messages += b.messages.load(std::memory_order_relaxed);
    const std::uint64_t start = b.start_ns.load(), end = b.end_ns.load();
    if (s.window_start_ns == 0 || start < s.window_start_ns) s.window_start_ns = start;
    if (end > s.window_end_ns) s.window_end_ns = end;
  }
  // Cut short when something evicted for room was inside the window that ends at the newest
  // message held (now, while a keeper runs).
  if (s.window_end_ns > 0) {
    const std::uint64_t window_start = s.window_end_ns - std::min(s.window_end_ns, h.window_ns.load());
    if (h.evicted_for_memory_end_ns.load() >= window_start) {
      s.window_cut = WindowCut::Memory;
    } else if (h.evicted_for_slots_end_ns.load() >= window_start) {
      s.window_cut = WindowCut::ChunkSlots;
    }
  }
  s.compression_ratio = s.memory_bytes ? static_cast<double>(s.uncompressed_bytes) / static_cast<double>(s.memory_bytes) : 1.0;
  s.topics = channels();
  return s;
}

}  // namespace cerulion::flashback::detail
