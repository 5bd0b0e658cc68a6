// SPDX-License-Identifier: Apache-2.0
// Opening a topic segment: building a new one completely before it gets its name, and checking an
// existing one (what it is, who owns it, its header) before mapping any of it.

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <vector>
#include <unistd.h>

#include "cerulion/core/names.hpp"
#include "cerulion/core/detail/liveness.hpp"
#include "segment.hpp"
#include "segment_mapping.hpp"

namespace cerulion::detail {

namespace {

using Access = TopicSegment::Access;

bool joins(Access access) { return access == Access::Publish || access == Access::Subscribe; }

/// The group a topic of `options` is shared with, if any.
Result<std::optional<gid_t>> sharing_group(const TopicOptions& options) {
  if (options.group.empty()) return std::optional<gid_t>{};
  auto gid = group_id(options.group);
  if (!gid) return gid.status();
  return std::optional<gid_t>{*gid};
}

}  // namespace

Result<ShmFile> TopicSegment::build(const OpenRequest& request, const std::string& what) {
  auto group = sharing_group(request.options);
  if (!group) return Status(group.status()).about(Subject::option("group"));
  const LayoutPlan plan = plan_layout(request.options.depth.value_or(kDefaultDepth), request.options.max_payload);
  auto created = ShmFile::create({.mode = mode_t(*group ? 0660 : 0600), .group = *group, .size = plan.total_bytes,
                                  .committed = plan.header_bytes},
                                 what);
  if (!created) return created.status();
  ShmFile file = std::move(*created);
  const int fd = file.fd();
  auto header = MappedRegion::map(fd, 0, plan.header_bytes, true, what);
  if (!header) return header.status();
  // Writing every page of the header is what tells a later opener it may map them (fully_written).
  auto* base = static_cast<std::byte*>(header->address());
  std::memset(base, 0, plan.header_bytes);
  *reinterpret_cast<Config*>(base) = make_config(plan, request.options.max_payload, request.topic);
  auto* ctl = new (base + kControlOffset) Control();
  ctl->mode.store(static_cast<std::uint32_t>(request.options.mode.value_or(Mode::Lockstep)));
  ctl->depth.store(plan.depth);
  ctl->initialized.store(1, std::memory_order_release);
  return file;
}

Result<std::shared_ptr<TopicSegment>> TopicSegment::from_file(ShmFile file, const std::string& name,
                                                              const OpenRequest& request,
                                                              const std::string& what) {
  const int fd = file.fd();
  const std::string path = shm_path(name);
  auto checked = file.check(kTopicSegment, path, joins(request.access) ? ShmUse::Join : ShmUse::Look, what);
  if (!checked) return checked.status();
  const struct stat st = *checked;
  if (joins(request.access)) {
    if (!request.options.group.empty()) {
      auto group = sharing_group(request.options);
      if (!group) return group.status();
      if (st.st_gid != **group || (st.st_mode & 0060) != 0060) {
        return Status(ErrorCode::Incompatible, what + " exists and is not shared with group '" +
                                                   request.options.group + "'");
      }
    }
  }
  // Everything is checked on a private copy before any page is mapped.
  // Zeros are a segment whose header was never written; anything else that fails the checks is
  // not a cerulion segment (or one damaged past reading), and saying "never initialized" of it
  // would send the user looking for a crashed creator.
  Config cfg {};
  if (!read_unmapped(fd, &cfg, sizeof cfg, 0)) {
    const auto size = static_cast<std::size_t>(st.st_size);
    std::vector<char> head(size);
    const bool zeros = read_unmapped(fd, head.data(), size, 0) &&
                       std::all_of(head.begin(), head.end(), [](char c) { return c == 0; });
    if (zeros) {
      return Status(ErrorCode::Corrupted, what + ": " + path + " was never initialized (" + std::to_string(size) +
                                              " bytes, all zero)");
    }
    return Status(ErrorCode::Corrupted, what + ": " + path + " is not a cerulion segment (" + std::to_string(size) +
                                            " bytes: too short for its header)");
  }
  const auto* cfg_bytes = reinterpret_cast<const char*>(&cfg);
  if (std::all_of(cfg_bytes, cfg_bytes + sizeof cfg, [](char c) { return c == 0; })) {
    return Status(ErrorCode::Corrupted, what + ": " + path + " was never initialized (its header is all zero)");
  }
  if (Status valid = validate_config(cfg, static_cast<std::uint64_t>(st.st_size), what); !valid.ok()) return valid;
  std::uint32_t initialized = 0;
  if (!read_unmapped(fd, &initialized, sizeof initialized, kControlOffset + offsetof(Control, initialized)) ||
      initialized != 1 || !fully_written(fd, cfg.header_bytes)) {
    return Status(ErrorCode::Corrupted, what + ": the segment's header was never completely written (damaged)");
  }
  std::uint32_t depth = 0;
  if (!read_unmapped(fd, &depth, sizeof depth, kControlOffset + offsetof(Control, depth)) || depth == 0 ||
      depth > cfg.depth) {
    return Status(ErrorCode::Corrupted, what + ": its depth (" + std::to_string(depth) + ") is outside the ring's room of " +
                                            std::to_string(cfg.depth) + " messages (damaged)");
  }

  auto mapping = std::make_unique<Mapping>();
  auto header = MappedRegion::map(fd, 0, cfg.header_bytes, request.access != Access::Inspect, what);
  if (!header) return header.status();
  mapping->header = std::move(*header);
  mapping->file = std::move(file);

  std::shared_ptr<TopicSegment> seg(new TopicSegment());
  seg->topic_ = request.topic;
  seg->name_ = name;
  seg->own_pid_ = static_cast<std::uint32_t>(::getpid());
  seg->own_start_time_ = own_start_time();
  seg->own_pid_namespace_ = own_pid_namespace();
  seg->file_status_ = st;
  auto* base = static_cast<std::byte*>(mapping->header.address());
  seg->config_ = reinterpret_cast<Config*>(base);
  seg->control_ = reinterpret_cast<Control*>(base + kControlOffset);
  seg->participants_ = reinterpret_cast<Participant*>(base + cfg.participants_offset);
  seg->log_ = reinterpret_cast<LogEntry*>(base + cfg.log_offset);
  seg->slots_ = reinterpret_cast<SlotControl*>(base + cfg.slots_offset);
  // Copies of the validated sizes: the bounds every shared index is checked against.
  seg->depth_ = depth;
  seg->ring_ = cfg.depth;
  seg->slot_count_ = cfg.slot_count;
  seg->hot_slots_ = cfg.hot_slots;
  seg->max_payload_ = cfg.max_payload;
  seg->plan_ = plan_layout(cfg.depth, cfg.max_payload);
  seg->writable_payloads_ = request.access == Access::Publish;
  mapping->generations.resize(cfg.generations);
  seg->mapping_ = std::move(mapping);
  if (joins(request.access)) {
    if (!seg->map_generation(0)) return seg->map_failure_;
    seg->make_current(0);
  }
  return seg;
}

Result<std::shared_ptr<TopicSegment>> TopicSegment::open(const OpenRequest& request) {
  const std::string what = "topic '" + request.topic + "'";
  const std::uint32_t depth = request.options.depth.value_or(kDefaultDepth);
  if (depth == 0 || depth > kMaxDepth) {
    return Status(ErrorCode::InvalidArgument, "depth must be 1.." + std::to_string(kMaxDepth), Subject::option("depth"));
  }
  if (request.options.max_payload == 0 || request.options.max_payload > kMaxCeiling) {
    return Status(ErrorCode::InvalidArgument, "payload ceiling must be 1 B .. 1 TiB", Subject::option("max_payload"));
  }
  // Found here, not as "File name too long" from shm_open.
  if (Status st = validate_segment_name(request.options.domain, request.topic); !st.ok()) return st;
  const std::string name = segment_name(request.options.domain, request.topic).substr(1);
  for (int attempt = 0; attempt < 100; ++attempt) {
    auto existing = ShmFile::open_existing(kTopicSegment, name, request.access != Access::Inspect, what);
    if (existing) {
      auto seg = from_file(std::move(*existing), name, request, what);
      if (!seg) return seg;
      if (joins(request.access) && (*seg)->control().unlinked.load(std::memory_order_acquire) != 0) {
        continue;  // its last participant is removing it: start over with a fresh one
      }
      return seg;
    }
    if (existing.code() != ErrorCode::NotFound) return existing.status();
    if (!joins(request.access)) return existing.status();
    auto built = build(request, what);
    if (!built) return built.status();
    auto named = built->publish_as(name, what);
    if (!named) return named.status();
    if (!*named) continue;  // someone else created it first: join theirs
    return from_file(std::move(*built), name, request, what);
  }
  return Status(ErrorCode::SystemError, what + ": the segment kept disappearing while opening it");
}

TopicSegment::~TopicSegment() = default;

int TopicSegment::fd() const { return mapping_->file.fd(); }

}  // namespace cerulion::detail
