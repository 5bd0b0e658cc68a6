// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <unistd.h>
#include <string>

#include "segment.hpp"

namespace cerulion::detail {

LayoutPlan plan_layout(std::uint32_t depth, std::uint64_t max_payload) {
  LayoutPlan plan{};
  plan.depth = depth;
  plan.slot_count = depth + kMaxHeldPerParticipant * kMaxParticipants;
  plan.hot_slots = std::min(plan.slot_count, depth + 4);
  plan.max_payload = max_payload;
  plan.generations = 1;
  while (plan.generations < kMaxGenerations && (kSmallestStride << (plan.generations - 1)) < max_payload) {
    ++plan.generations;
  }
  std::uint64_t off = kParticipantsOffset;
  plan.participants_offset = off;
  off += std::uint64_t(kMaxParticipants) * sizeof(Participant);
  plan.log_offset = off;
  off += std::uint64_t(depth) * sizeof(LogEntry);
  plan.slots_offset = off;
  off += std::uint64_t(plan.slot_count) * sizeof(SlotControl);
  plan.header_bytes = round_up(off, kPageBytes);
  plan.type_offset = plan.header_bytes;
  plan.payload_offset = round_up(plan.type_offset + kTypeCapacity, kPageBytes);
  plan.total_bytes = plan.payload_offset + generation_bytes(plan, 0);
  return plan;
}

std::uint64_t generation_stride(const LayoutPlan& plan, std::uint32_t g) {
  const std::uint64_t room =
      std::min(kSmallestStride << g, round_up(std::max<std::uint64_t>(plan.max_payload, 1), kSmallestStride));
  // Slots a whole number of pages apart would all start at the same offset in a page, so their
  // first lines, the ones every message touches, would compete for one set of each cache. One
  // stride's worth more staggers them over the sets.
  return room >= kPageBytes ? room + kSmallestStride : room;
}

std::uint64_t generation_bytes(const LayoutPlan& plan, std::uint32_t g) {
  return round_up(std::uint64_t(plan.slot_count) * generation_stride(plan, g), kPageBytes);
}

std::uint64_t generation_offset(const LayoutPlan& plan, std::uint32_t g) {
  std::uint64_t offset = plan.payload_offset;
  for (std::uint32_t k = 0; k < g; ++k) offset += generation_bytes(plan, k);
  return offset;
}

std::uint32_t generation_for(const LayoutPlan& plan, std::uint64_t size) {
  std::uint32_t g = 0;
  while (g + 1 < plan.generations && generation_stride(plan, g) < size) ++g;
  return g;
}

Config make_config(const LayoutPlan& plan, std::uint64_t max_payload, std::string_view topic) {
  Config cfg {};
  cfg.stamp = make_stamp(kConfigRule);
  cfg.depth = plan.depth;
  cfg.slot_count = plan.slot_count;
  cfg.hot_slots = plan.hot_slots;
  cfg.max_participants = kMaxParticipants;
  cfg.max_payload = max_payload;
  cfg.generations = plan.generations;
  cfg.participants_offset = plan.participants_offset;
  cfg.log_offset = plan.log_offset;
  cfg.slots_offset = plan.slots_offset;
  cfg.header_bytes = plan.header_bytes;
  cfg.type_offset = plan.type_offset;
  cfg.payload_offset = plan.payload_offset;
  cfg.total_bytes = plan.total_bytes;
  cfg.created_realtime_ns = realtime_ns();
  cfg.creator_pid = static_cast<std::uint32_t>(::getpid());
  cfg.creator_uid = static_cast<std::uint32_t>(::geteuid());
  std::snprintf(cfg.topic, sizeof cfg.topic, "%.*s", static_cast<int>(topic.size()), topic.data());
  cfg.config_crc = header_checksum(&cfg, kConfigRule);
  return cfg;
}

Status validate_config(const Config& c, std::uint64_t file_bytes, std::string_view what) {
  auto bad = [&](const std::string& why) {
    return Status(ErrorCode::Corrupted, std::string(what) + ": " + why);
  };
  if (Status st = check_header(&c, kConfigRule, what); !st.ok()) return st;
  if (c.depth == 0 || c.depth > kMaxDepth || c.max_participants != kMaxParticipants) {
    return bad("implausible depth or participant count");
  }
  if (c.max_payload == 0 || c.max_payload > kMaxCeiling) return bad("implausible payload ceiling");
  LayoutPlan plan = plan_layout(c.depth, c.max_payload);
  if (plan.slot_count != c.slot_count || plan.hot_slots != c.hot_slots || plan.generations != c.generations ||
      plan.participants_offset != c.participants_offset || plan.log_offset != c.log_offset ||
      plan.slots_offset != c.slots_offset || plan.header_bytes != c.header_bytes ||
      plan.type_offset != c.type_offset || plan.payload_offset != c.payload_offset ||
      plan.total_bytes != c.total_bytes) {
    return bad("header describes an inconsistent layout");
  }
  // Publishers extend the file as wider generations are needed; it never shrinks.
  if (file_bytes < c.total_bytes) return bad("segment is shorter than its header says");
  if (::memchr(c.topic, '\0', sizeof c.topic) == nullptr) return bad("topic name not terminated");
  return Status::success();
}

}  // namespace cerulion::detail
