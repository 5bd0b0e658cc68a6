// SPDX-License-Identifier: Apache-2.0
// Damage in a store (store_layout.hpp): a keeper taking a store over sets aside the chunks whose
// bytes fail their CRC, and a dump says why each chunk it leaves out is not in it.

#include <algorithm>

#include <fmt/core.h>

#include "cerulion/core/options.hpp"
#include "store_impl.hpp"

namespace cerulion::flashback::detail {

namespace {
// Whether chunk `n` is whole: committed, its bytes inside the store and matching their CRC, its loss
// table and its framing readable. A committed slot without bytes (dropped for room, or set aside
// already) is whole too: it has nothing to damage.
bool chunk_whole(const StoreImpl& impl, std::uint64_t n, CopiedChunk& copy) {
  const auto& s = impl.slot(n);
  if (s.state.load() != committed_state(n)) return false;
  if (s.length.load() == 0) return true;
  return impl.copy_chunk(n, copy) && recorder::describe_chunk(copy.bytes).ok();
}
}  // namespace

std::uint64_t StoreImpl::set_aside_damaged_chunks() {
  auto& h = header();
  const std::uint64_t head = h.head.load(), tail = h.tail.load();  // head - tail <= chunk_slots: check_layout
  std::vector<std::uint64_t> damaged;
  CopiedChunk copy;
  for (std::uint64_t n = tail; n < head; ++n) {
    if (!chunk_whole(*this, n, copy)) damaged.push_back(n);
  }
  if (damaged.empty()) return 0;
  // Its times are damage too: it takes those of the chunk before it (or the first sound one after),
  // so that it is evicted in its turn, and a dump names it while it is in the ring.
  std::uint64_t previous_end = realtime_ns();
  for (std::uint64_t n = tail; n < head; ++n) {
    if (!std::binary_search(damaged.begin(), damaged.end(), n)) {
      previous_end = slot(n).start_ns.load();
      break;
    }
  }
  for (std::uint64_t n = tail; n < head; ++n) {
    auto& s = slot(n);
    if (!std::binary_search(damaged.begin(), damaged.end(), n)) {
      previous_end = s.end_ns.load();
      continue;
    }
    s.state.store(writing_state(n));
    s.offset.store(0);
    s.length.store(0);
    s.chunk_length.store(0);
    s.messages.store(0);
    s.uncompressed_bytes.store(0);
    s.start_ns.store(previous_end);
    s.end_ns.store(previous_end);
    s.damaged_messages.store(0);
    s.quarantined.store(1);
    s.state.store(committed_state(n));
  }
  h.damaged_chunks.fetch_add(damaged.size());
  return damaged.size();
}

std::string StoreImpl::why_left_out(std::uint64_t n) const {
  const auto& s = slot(n);
  if (s.state.load() != committed_state(n)) return "its slot does not say it is committed (damaged)";
  if (s.quarantined.load() != 0) {
    return "found damaged (failing its CRC) by the keeper that took the store over, and set aside";
  }
  if (s.length.load() == 0) {
    // Dropped for room (its messages counted lost), or all it held was damaged.
    const std::uint32_t damaged = s.damaged_messages.load();
    if (damaged == 0) return "";
    return fmt::format("{} damaged message{} (failing {} CRC) left out, and nothing else was in it", damaged,
                       damaged == 1 ? "" : "s", damaged == 1 ? "its" : "their");
  }
  return "its bytes fail their CRC or lie outside the store";
}

}  // namespace cerulion::flashback::detail

namespace cerulion::flashback {

std::string describe(const StoreDamage& damage) {
  auto counted = [](std::uint64_t n, const char* what) { return fmt::format("{} {}{}", n, what, n == 1 ? "" : "s"); };
  std::string found;
  if (damage.chunks > 0) found = counted(damage.chunks, "chunk") + " set aside";
  if (damage.messages > 0) {
    found += fmt::format("{}{} not yet compressed left out", found.empty() ? "" : " and ", counted(damage.messages, "message"));
  }
  const bool one = damage.chunks + damage.messages == 1;
  return fmt::format("the store taken over is damaged: {} (failing {} CRC); dumps name {} while {} in the window and "
                     "leave {} out",
                     found, one ? "its" : "their", one ? "it" : "them", one ? "it is" : "they are", one ? "it" : "them");
}

}  // namespace cerulion::flashback
