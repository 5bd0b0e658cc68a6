// SPDX-License-Identifier: Apache-2.0
// The staging area (store_layout.hpp): a tap puts what it takes into shared memory at once, and the
// keeper's compressing thread turns sealed buffers into chunks. Nothing waits in private memory, so
// a dump, and a keeper taking over after a kill -9, see everything taken.

#include <algorithm>
#include <cstring>

#include "store_impl.hpp"

namespace cerulion::flashback::detail {

namespace {

void begin_change(StoreHeader& h) {
  h.staging_seq.fetch_add(1, std::memory_order_relaxed);  // odd: being changed
  std::atomic_thread_fence(std::memory_order_release);
}

void end_change(StoreHeader& h) { h.staging_seq.fetch_add(1, std::memory_order_release); }

// A message about to be published, and its channel's counters once it is.
struct CountedAppend {
  std::uint16_t channel;
  std::uint64_t messages;
  std::uint64_t lost;
  std::uint64_t next_sequence;
  std::uint64_t bytes;
  std::uint64_t log_time;
};

// Says the append before its record is published (store_layout.hpp): where it ends, and the counts.
void announce_append(StoreHeader& h, const CountedAppend& taken, std::uint64_t buffer, std::uint64_t end) {
  h.pending_buffer.store(buffer, std::memory_order_relaxed);
  h.pending_end.store(end, std::memory_order_relaxed);
  h.pending_messages.store(taken.messages, std::memory_order_relaxed);
  h.pending_lost.store(taken.lost, std::memory_order_relaxed);
  h.pending_next_sequence.store(taken.next_sequence, std::memory_order_relaxed);
  h.pending_channel.store(taken.channel + 1u, std::memory_order_release);
}

// Counts a published append: `messages` last, so that a reader seeing it sees the rest.
void count_appended(StoreHeader& h, ChannelEntry& c, const CountedAppend& taken) {
  c.lost.store(taken.lost, std::memory_order_relaxed);
  c.next_sequence.store(taken.next_sequence, std::memory_order_relaxed);
  c.bytes.fetch_add(taken.bytes, std::memory_order_relaxed);
  c.last_realtime_ns.store(taken.log_time, std::memory_order_relaxed);
  c.messages.store(taken.messages, std::memory_order_release);
  h.pending_channel.store(0, std::memory_order_release);
}

// Counts a message dropped as lost, and moves the channel's next sequence past it: a keeper taking
// over counts the gap from there, so a drop is never counted twice. (Killed between the two stores,
// it is: counted once more, rather than not at all.)
void count_dropped(StoreHeader& h, ChannelEntry& c, std::uint64_t lost, std::uint32_t sequence) {
  c.lost.store(lost + 1, std::memory_order_relaxed);
  c.next_sequence.store(std::uint64_t{sequence} + 1, std::memory_order_relaxed);
  h.pending_channel.store(0, std::memory_order_release);
  h.messages_dropped_staging.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

void StoreImpl::compress_in_background(bool background, bool wait_for_room) {
  std::lock_guard lock(staging_mutex_);
  background_ = background;
  wait_for_room_ = wait_for_room;
}

Result<bool> StoreImpl::take(std::uint16_t channel_id, std::uint32_t sequence, std::uint64_t log_time,
                             std::uint64_t publish_time, std::span<const std::byte> data, std::uint64_t lost_before) {
  auto& h = header();
  auto& c = channel(channel_id);
  const std::uint64_t size = kStagedPrefix + recorder::message_record_size(data.size());
  const std::uint64_t capacity = h.staging_capacity;
  // The payload's part of its staged record's CRC is taken before the lock (the sample holds still
  // during the call), so that taps of other topics do not wait for it.
  const std::uint32_t payload_crc = size <= capacity ? stored_crc(data) : 0;
  // In the background, a tap never waits for the compressing thread: at idle priority it may not
  // run for seconds on a busy machine.
  std::unique_lock compressing(compress_mutex_, std::defer_lock);
  if (!background_) compressing.lock();
  std::unique_lock lock(staging_mutex_);
  // The losses before this message are counted with it (a dump sees them as the gap before it); a
  // message dropped is counted lost at once.
  const std::uint64_t lost = c.lost.load(std::memory_order_relaxed) + lost_before;
  // Taps of different topics take at once: log times are never smaller than the one before, so
  // chunks are in log-time order, and a staged record older than the one before it is stale. Taken
  // where the record is written, under the lock held since: a tap waiting for room lets others by.
  auto in_order = [&] {
    log_time = std::max(last_log_time_, log_time);
    last_log_time_ = log_time;
  };
  const std::uint64_t counted = c.messages.load(std::memory_order_relaxed) + 1;
  if (size > capacity) {
    in_order();
    // Larger than a buffer: what was staged before it is committed first, then it, alone (in the
    // background uncompressed, as the compressing thread is not waited for).
    if (auto st = flush_locked(background_); !st) return st;
    ChunkScratch& scratch = background_ ? raw_ : compressing_;
    single_.resize(size - kStagedPrefix);
    recorder::encode_message_record(single_, channel_id, sequence, log_time, publish_time, data);
    if (auto st = scratch.encoder.encode(single_, scratch.encoded); !st) return st;
    const CountedAppend taken{channel_id, counted, lost, std::uint64_t{sequence} + 1, data.size(), log_time};
    announce_append(h, taken, kStagingBuffers, h.head.load(std::memory_order_relaxed) + 1);
    begin_change(h);
    Status st = commit_chunk(scratch.encoded, LossTable{{channel_id, {1, lost, lost, sequence}}}, log_time, log_time, 1, single_.size());
    end_change(h);
    if (st) {
      count_appended(h, c, taken);
      return true;
    }
    // Not committed (head did not move, so the announcement is void): dropped, and counted.
    count_dropped(h, c, lost, sequence);
    if (st.code() != ErrorCode::OutOfMemory) return st;
    return false;
  }
  for (;;) {
    const std::uint32_t a = h.active.load(std::memory_order_relaxed) % kStagingBuffers;
    if (h.staging[a].length.load(std::memory_order_relaxed) + size <= capacity) break;
    // The active buffer is full: sealed, if the other one is free.
    const std::uint32_t other = (a + 1) % kStagingBuffers;
    if (h.staging[other].length.load(std::memory_order_relaxed) == 0) {
      seal_locked();
      if (!background_) {
        if (auto st = compress_buffer_locked(a); !st && st.code() != ErrorCode::OutOfMemory) return st;
      }
      continue;
    }
    if (!background_) {
      if (auto st = compress_buffer_locked(other); !st && st.code() != ErrorCode::OutOfMemory) return st;
      continue;
    }
    if (wait_for_room_) {
      freed_cv_.wait(lock);
      continue;
    }
    // Compression is behind: the sealed buffer is committed as it is, and frees its room. Read
    // without the lock (it does not change until committed), so that taps of other topics go on
    // staging meanwhile; one tap does it, the others wait for the room.
    if (rescuing_) {
      freed_cv_.wait(lock);
      continue;
    }
    rescuing_ = true;
    const std::uint64_t committed = committed_[other];
    lock.unlock();
    StagedChunk chunk = encode_staged(other, rescue_);
    lock.lock();
    rescuing_ = false;
    Status st;
    // Committed meanwhile by the compressing thread after all: this copy, perhaps torn, is dropped.
    if (committed_[other] == committed) {
      st = publish_locked(other, std::move(chunk));
      h.chunks_stored_raw.fetch_add(1, std::memory_order_relaxed);
    }
    freed_cv_.notify_all();
    if (!st && st.code() != ErrorCode::OutOfMemory) return st;
  }
  in_order();
  const std::uint32_t a = h.active.load(std::memory_order_relaxed) % kStagingBuffers;
  auto& b = h.staging[a];
  const std::uint64_t at = b.length.load(std::memory_order_relaxed);
  const CountedAppend taken{channel_id, counted, lost, std::uint64_t{sequence} + 1, data.size(), log_time};
  announce_append(h, taken, a, at + size);
  write_staged(std::span(staging_area(a) + at, size), lost, payload_crc,
               {channel_id, sequence, log_time, publish_time}, data);
  if (at == 0) b.start_ns.store(log_time, std::memory_order_relaxed);
  b.end_ns.store(log_time, std::memory_order_relaxed);
  b.messages.fetch_add(1, std::memory_order_relaxed);
  b.length.store(at + size, std::memory_order_release);
  count_appended(h, c, taken);
  const std::uint32_t other = (a + 1) % kStagingBuffers;
  if (at + size >= h.chunk_size.load(std::memory_order_relaxed) &&
      h.staging[other].length.load(std::memory_order_relaxed) == 0) {
    seal_locked();
    if (!background_) {
      if (auto st = compress_buffer_locked(a); !st && st.code() != ErrorCode::OutOfMemory) return st;
    }
  }
  return true;
}

Status StoreImpl::append(std::uint16_t channel_id, std::uint32_t sequence, std::uint64_t log_time,
                         std::uint64_t publish_time, std::span<const std::byte> data) {
  auto taken = take(channel_id, sequence, log_time, publish_time, data);
  if (!taken) return taken.status();
  if (!*taken) return Status(ErrorCode::OutOfMemory, path_ + ": its staging area is full");
  return {};
}

void StoreImpl::seal_locked() {
  auto& h = header();
  const std::uint32_t a = h.active.load(std::memory_order_relaxed) % kStagingBuffers;
  if (h.staging[a].length.load(std::memory_order_relaxed) == 0) return;
  begin_change(h);
  h.staging[a].generation.store(h.head.load(std::memory_order_relaxed), std::memory_order_relaxed);
  h.active.store((a + 1) % kStagingBuffers, std::memory_order_relaxed);
  end_change(h);
  if (background_) sealed_cv_.notify_one();
}

StagedChunk StoreImpl::encode_staged(std::uint64_t buffer, ChunkScratch& scratch) {
  const auto& b = header().staging[buffer];
  const std::uint64_t length = std::min(b.length.load(std::memory_order_acquire), header().staging_capacity);
  scratch.records.clear();
  StagedChunk out;
  out.read = unstage(std::span<const std::byte>(staging_area(buffer), length), 0, scratch.records, out.losses);
  out.uncompressed = scratch.records.size();
  if (out.read.messages > 0) {
    if (auto st = scratch.encoder.encode(scratch.records, scratch.encoded); !st) {
      out.encoded = Status(ErrorCode::Corrupted, path_ + ": cannot compress its staged messages: " + st.message());
    } else {
      out.bytes = scratch.encoded;
    }
  }
  if (out.read.damage.any()) {
    // What the buffer says it held, less what read: the unreadable bytes held one message at least.
    const std::uint64_t said = b.messages.load(std::memory_order_relaxed);
    const std::uint64_t most = length / (kStagedPrefix + recorder::message_record_size(0));
    const std::uint64_t at_least = out.read.damage.messages + (out.read.damage.unreadable_bytes > 0 ? 1 : 0);
    out.left_out = std::max(at_least, said > out.read.messages && said <= most ? said - out.read.messages : 0);
  }
  return out;
}

Status StoreImpl::publish_locked(std::uint64_t buffer, StagedChunk chunk) {
  auto& h = header();
  auto& b = h.staging[buffer];
  // Committed and freed in one change: a reader sees the buffer or the chunk, never both or none.
  begin_change(h);
  Status st = std::move(chunk.encoded);
  const auto& read = chunk.read;
  if (st && (read.messages > 0 || chunk.left_out > 0)) {
    // Nothing readable left: a slot without bytes still says what was left out, while in the ring.
    const auto kept = read.messages > 0 ? chunk.bytes : std::span<const std::byte>();
    const std::uint64_t start = read.messages > 0 ? read.start_ns : b.start_ns.load();
    const std::uint64_t end = read.messages > 0 ? read.end_ns : std::max(start, b.end_ns.load());
    st = commit_chunk(kept, chunk.losses, start, end, read.messages, chunk.uncompressed, chunk.left_out);
  }
  if (chunk.left_out > 0) h.damaged_messages.fetch_add(chunk.left_out, std::memory_order_relaxed);
  b.length.store(0, std::memory_order_relaxed);
  b.messages.store(0, std::memory_order_relaxed);
  ++committed_[buffer % kStagingBuffers];
  end_change(h);
  freed_cv_.notify_all();
  return st;
}

Status StoreImpl::compress_buffer_locked(std::uint64_t buffer) {
  return publish_locked(buffer, encode_staged(buffer, compressing_));
}

Status StoreImpl::store_raw_locked(std::uint64_t buffer) { return publish_locked(buffer, encode_staged(buffer, raw_)); }

Result<bool> StoreImpl::compress_sealed() {
  std::lock_guard compressing(compress_mutex_);
  auto& h = header();
  std::uint64_t sealed = 0;
  std::uint64_t committed = 0;
  {
    std::lock_guard lock(staging_mutex_);
    if (!keeper_) return false;
    sealed = (h.active.load(std::memory_order_relaxed) + 1) % kStagingBuffers;
    if (h.staging[sealed].length.load(std::memory_order_relaxed) == 0) return false;
    committed = committed_[sealed];
  }
  // A sealed buffer does not change until it is committed: compressed with the taps appending
  // meanwhile. A tap that found no room committed it uncompressed meanwhile (this thread starved):
  // what was read here may be torn, and is thrown away.
  StagedChunk chunk = encode_staged(sealed, compressing_);
  std::lock_guard lock(staging_mutex_);
  if (committed_[sealed] != committed) return true;
  Status st = publish_locked(sealed, std::move(chunk));
  if (!st && st.code() != ErrorCode::OutOfMemory) return st;
  return true;
}

Status StoreImpl::flush_locked(bool raw) {
  auto& h = header();
  auto commit = [&](std::uint64_t buffer) { return raw ? store_raw_locked(buffer) : compress_buffer_locked(buffer); };
  const std::uint32_t a = h.active.load(std::memory_order_relaxed) % kStagingBuffers;
  const std::uint32_t other = (a + 1) % kStagingBuffers;
  Status status;
  if (h.staging[other].length.load(std::memory_order_relaxed) > 0) status = commit(other);
  if (h.staging[a].length.load(std::memory_order_relaxed) > 0) {
    seal_locked();
    if (Status st = commit(a); status.ok()) status = st;
  }
  return status;
}

Status StoreImpl::close_open_chunk() {
  // In the background the compressing thread is not waited for (starved at idle priority, it may
  // not finish for seconds): what is staged is committed uncompressed unless it is free.
  std::unique_lock compressing(compress_mutex_, std::defer_lock);
  bool background = false;
  {
    std::lock_guard lock(staging_mutex_);
    background = background_;
  }
  if (background) {
    (void)compressing.try_lock();
  } else {
    compressing.lock();
  }
  std::lock_guard lock(staging_mutex_);
  return flush_locked(!compressing.owns_lock());
}

void StoreImpl::wait_for_sealed(std::chrono::milliseconds timeout) {
  auto& h = header();
  std::unique_lock lock(staging_mutex_);
  sealed_cv_.wait_for(lock, timeout, [&] {
    const std::uint32_t sealed = (h.active.load(std::memory_order_relaxed) + 1) % kStagingBuffers;
    return woken_ || h.staging[sealed].length.load(std::memory_order_relaxed) > 0;
  });
  woken_ = false;
}

void StoreImpl::wake() {
  {
    std::lock_guard lock(staging_mutex_);
    woken_ = true;
  }
  sealed_cv_.notify_all();
  freed_cv_.notify_all();
}

void StoreImpl::seal_if_older(std::uint64_t now, std::uint64_t interval_ns) {
  auto& h = header();
  std::lock_guard lock(staging_mutex_);
  if (!keeper_) return;
  const std::uint32_t a = h.active.load(std::memory_order_relaxed) % kStagingBuffers;
  const auto& b = h.staging[a];
  if (b.length.load(std::memory_order_relaxed) == 0 ||
      h.staging[(a + 1) % kStagingBuffers].length.load(std::memory_order_relaxed) != 0) {
    return;
  }
  const std::uint64_t start = b.start_ns.load(std::memory_order_relaxed);
  if (now >= start && now - start >= interval_ns) seal_locked();
}

namespace {
bool pending_published(const StoreHeader& h) {
  const std::uint64_t buffer = h.pending_buffer.load(std::memory_order_relaxed);
  const std::uint64_t end = h.pending_end.load(std::memory_order_relaxed);
  if (buffer >= kStagingBuffers) return h.head.load(std::memory_order_acquire) >= end;
  return h.staging[buffer].length.load(std::memory_order_acquire) >= end;
}
}  // namespace

ChannelCounts StoreImpl::channel_counts(std::uint32_t id) const {
  const auto& h = header();
  const auto& c = channel(id);
  ChannelCounts out;
  out.messages = c.messages.load(std::memory_order_acquire);
  out.lost = c.lost.load(std::memory_order_relaxed);
  if (h.pending_channel.load(std::memory_order_acquire) != id + 1 || !pending_published(h)) return out;
  // Published but not counted yet: a keeper killed in between, or one about to count it.
  if (const std::uint64_t pending = h.pending_messages.load(std::memory_order_relaxed); pending > out.messages) {
    out.messages = pending;
    out.lost = std::max(out.lost, h.pending_lost.load(std::memory_order_relaxed));
  }
  return out;
}

void StoreImpl::count_pending_locked() {
  auto& h = header();
  const std::uint32_t pending = h.pending_channel.load();
  if (pending != 0 && pending <= h.max_channels) {
    auto& c = channel(pending - 1);
    if (pending_published(h) && c.messages.load() < h.pending_messages.load()) {
      c.lost.store(std::max(c.lost.load(), h.pending_lost.load()));
      c.next_sequence.store(h.pending_next_sequence.load());
      c.messages.store(h.pending_messages.load());
    }
  }
  h.pending_channel.store(0);
}

}  // namespace cerulion::flashback::detail
