// SPDX-License-Identifier: Apache-2.0
// Membership of a topic: joining, leaving (the last one out removes the name), and the eviction of
// participants whose process died.

#include "segment.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <unistd.h>

#include "cerulion/core/detail/liveness.hpp"
#include "removed_topics.hpp"

namespace cerulion::detail {

namespace {

/// "pid 1234 (echo)", or "pid 1234, no longer running".
std::string process_named(std::uint32_t pid) {
  char comm[64] = {};
  if (FILE* file = std::fopen(("/proc/" + std::to_string(pid) + "/comm").c_str(), "r")) {
    const bool read = std::fgets(comm, sizeof comm, file) != nullptr;
    std::fclose(file);
    if (read) {
      comm[std::strcspn(comm, "\n")] = '\0';
      return "pid " + std::to_string(pid) + " (" + comm + ")";
    }
  }
  return "pid " + std::to_string(pid) + ", no longer running";
}

}  // namespace

Status TopicSegment::settle_depth_locked(Role role, std::optional<std::uint32_t> explicit_depth) {
  const std::uint32_t depth = control_->depth.load();
  const bool fixed = control_->mode_fixed.load() != 0 || control_->published.load() != 0;
  if (explicit_depth && *explicit_depth != depth) {
    const std::string asked = std::to_string(*explicit_depth);
    const std::string creator = process_named(config_->creator_pid);
    if (fixed) {
      return Status(ErrorCode::Incompatible,
                    "topic '" + topic_ + "' exists with depth " + std::to_string(depth) + ", not " + asked +
                        " (created by " + creator + "; a publisher fixed its depth): ask for depth " +
                        std::to_string(depth) + ", or for none to take the topic's",
                    Subject::topic(topic_));
    }
    // Provisional: only subscribers have joined, and they asked for nothing. The ring they were
    // made with bounds the depth a publisher may set.
    if (*explicit_depth > ring_) {
      return Status(ErrorCode::Incompatible,
                    "topic '" + topic_ + "' was created by a subscriber (" + creator + ") with room for " +
                        std::to_string(ring_) + " messages, not the depth of " + asked +
                        " asked for: start the publisher first, or give that subscriber depth " + asked,
                    Subject::topic(topic_));
    }
    if (role == Role::Publisher) control_->depth.store(*explicit_depth);
  }
  if (role == Role::Publisher) depth_ = control_->depth.load();
  return Status::success();
}

Result<std::uint32_t> TopicSegment::attach(Role role, std::optional<Mode> explicit_mode,
                                           std::optional<std::uint32_t> explicit_depth, StartAt start) {
  // Joining is rare and a good moment to sweep out records of processes that died.
  evict_dead(true);
  for (int round = 0; round < 2; ++round) {
    if (Status st = lock(); !st.ok()) return st;
    // Its last participant unlinks a segment under the lock: checked under the lock too, a join
    // lands either before that participant looks for others (and keeps the segment) or after.
    if (control_->unlinked.load(std::memory_order_acquire) != 0) {
      unlock();
      return Status(ErrorCode::NotFound, "topic '" + topic_ + "' was removed while joining it", Subject::topic(topic_));
    }
    // The depth before the mode: the mode a publisher fixes is fixed only once the depth agrees.
    if (Status st = settle_depth_locked(role, explicit_depth); !st.ok()) {
      unlock();
      return st;
    }
    if (role == Role::Publisher && explicit_mode) {
      Mode current = static_cast<Mode>(control_->mode.load());
      if (control_->mode_fixed.load() == 0) {
        control_->mode.store(static_cast<std::uint32_t>(*explicit_mode));
        control_->mode_fixed.store(1);
      } else if (current != *explicit_mode) {
        unlock();
        return Status(ErrorCode::Incompatible, std::string("topic '") + topic_ + "' is " + to_string(current) +
                                                   ", not " + to_string(*explicit_mode),
                      Subject::topic(topic_));
      }
    } else if (role == Role::Publisher) {
      control_->mode_fixed.store(1);
    }
    for (std::uint32_t i = 0; i < kMaxParticipants; ++i) {
      Participant& p = participants_[i];
      if (p.state.load() != kFree) continue;
      p.role = static_cast<std::uint32_t>(role);
      p.pid = own_pid_;
      p.start_time = own_start_time_;
      p.pid_namespace = own_pid_namespace_;
      p.bell_id.store(0);
      const std::uint64_t published = control_->published.load();
      const std::uint64_t depth = control_->depth.load();
      const std::uint64_t oldest = published > depth ? published - depth : 0;
      const bool from_first = start == StartAt::First && role != Role::Publisher;
      p.messages.store(0);
      p.lost.store(from_first ? oldest : 0);
      p.cursor.store(from_first ? oldest : published);
      p.floor.store(from_first ? first_floor(oldest, published) : published);
      p.state.store(kActive, std::memory_order_release);
      if (role == Role::Publisher) control_->publishers.fetch_add(1, std::memory_order_relaxed);
      unlock();
      control_->members.notify();
      return i;
    }
    unlock();
    if (round == 0 && evict_dead(true) > 0) continue;  // dead ones made room
  }
  return Status(ErrorCode::TooManyParticipants,
                "topic '" + topic_ + "' already has " + std::to_string(kMaxParticipants) + " participants",
                Subject::topic(topic_));
}

Result<TopicSegment::Membership> TopicSegment::join(const OpenRequest& request, Role role,
                                                   std::optional<Mode> explicit_mode,
                                                   std::optional<std::uint32_t> explicit_depth, StartAt start) {
  // Whatever fails here (opening the file, mapping it, declaring the type) fails about this topic,
  // and every message of it says "topic '<name>'": said once here, as data, for all of them.
  auto about_topic = [&](Status st) { return std::move(st).about(Subject::topic(request.topic)); };
  for (int attempt = 0; attempt < 100; ++attempt) {
    auto segment = open(request);
    if (!segment) return about_topic(segment.status());
    if (request.options.type) {
      if (Status st = (*segment)->declare_type(*request.options.type); !st.ok()) return about_topic(std::move(st));
    }
    auto index = (*segment)->attach(role, explicit_mode, explicit_depth, start);
    if (index) return Membership{std::move(*segment), *index};
    if (index.code() != ErrorCode::NotFound) return about_topic(index.status());
  }
  return Status(ErrorCode::SystemError, "topic '" + request.topic + "' kept disappearing while joining it",
                Subject::topic(request.topic));
}

void TopicSegment::evict_locked(std::uint32_t index) {
  Participant& p = participants_[index];
  const std::uint64_t bit = 1ull << index;
  for (std::uint32_t k = 0; k < slot_count_; ++k) {
    if (slots_[k].word.load(std::memory_order_relaxed) & bit) slots_[k].word.fetch_and(~bit);
  }
  control_->data.sleepers.fetch_and(~static_cast<std::uint32_t>(bit));
  control_->data_bell_sleepers.fetch_and(~static_cast<std::uint32_t>(bit));
  control_->room.sleepers.fetch_and(~static_cast<std::uint32_t>(bit));
  control_->members.sleepers.fetch_and(~static_cast<std::uint32_t>(bit));
  if (p.role == static_cast<std::uint32_t>(Role::Publisher) && p.state.load() == kActive) {
    std::uint32_t publishers = control_->publishers.load(std::memory_order_relaxed);
    if (publishers > 0) control_->publishers.store(publishers - 1, std::memory_order_relaxed);
  }
  p.state.store(kFree, std::memory_order_release);
}

void TopicSegment::detach(std::uint32_t index) {
  if (index >= kMaxParticipants) return;
  if (!lock().ok()) return;  // a stuck lock: leave the record for eviction / clean
  evict_locked(index);
  bool anyone_left = false;
  for (std::uint32_t i = 0; i < kMaxParticipants; ++i) {
    Participant& p = participants_[i];
    if (p.state.load() != kActive) continue;
    // Records of processes that died must not keep the segment alive for ever.
    if (!process_alive(static_cast<pid_t>(p.pid), p.start_time, p.pid_namespace)) {
      note_death_locked(i);
      evict_locked(i);
      continue;
    }
    anyone_left = true;
  }
  // Removed already (clean --force): its name may be a newer topic's by now, and its removal was
  // noted then.
  bool removed_here = false;
  if (!anyone_left && control_->unlinked.exchange(1, std::memory_order_acq_rel) == 0) {
    ::unlink(shm_path(name_).c_str());
    removed_here = true;
  }
  unlock();
  control_->room.notify();  // a lockstep publisher may have been waiting for this subscriber
  control_->members.notify();
  // A reader following the domain may not have joined it yet (a topic published once and left at
  // once): it hears of the topic and what it held from the domain's log.
  const std::uint64_t published = control_->published.load(std::memory_order_acquire);
  if (removed_here && published > 0) note_removed_topic(domain(), topic_, published, config_->created_realtime_ns);
}

std::uint32_t TopicSegment::evict_dead(bool force) {
  std::uint64_t now = monotonic_ns();
  if (!force && now - last_evict_scan_ns_ < kEvictionScanIntervalNs) return 0;
  last_evict_scan_ns_ = now;
  std::uint32_t dead[kMaxParticipants];
  std::uint32_t n = 0;
  for (std::uint32_t i = 0; i < kMaxParticipants; ++i) {
    Participant& p = participants_[i];
    if (p.state.load() != kActive) continue;
    if (!process_alive(static_cast<pid_t>(p.pid), p.start_time, p.pid_namespace)) dead[n++] = i;
  }
  if (n == 0) return 0;
  if (!lock().ok()) return 0;
  std::uint32_t evicted = 0;
  for (std::uint32_t j = 0; j < n; ++j) {
    Participant& p = participants_[dead[j]];
    // Re-check under the lock: the record may have been freed and reused meanwhile.
    if (p.state.load() == kActive && !process_alive(static_cast<pid_t>(p.pid), p.start_time, p.pid_namespace)) {
      note_death_locked(dead[j]);
      evict_locked(dead[j]);
      ++evicted;
    }
  }
  repair_ring_locked();
  unlock();
  if (evicted) {
    control_->room.notify();
    control_->members.notify();
  }
  return evicted;
}

std::uint32_t TopicSegment::count(Role role) const {
  std::uint32_t n = 0;
  for (std::uint32_t i = 0; i < kMaxParticipants; ++i) {
    const Participant& p = participants_[i];
    if (p.state.load(std::memory_order_acquire) == kActive && p.role == static_cast<std::uint32_t>(role)) ++n;
  }
  return n;
}

std::uint64_t TopicSegment::first_floor(std::uint64_t oldest, std::uint64_t published) const {
  // A lockstep publisher checks room against a cached lower bound of the subscribers' floors,
  // which may be as new as `published` when no subscriber is there, and is never newer than the
  // lowest floor of those that are. A floor below that bound would not hold anything back.
  const std::uint64_t bound = std::min(min_subscriber_floor().value_or(published), published);
  return std::max(oldest, bound);
}

std::optional<std::uint64_t> TopicSegment::min_subscriber_floor() const {
  std::optional<std::uint64_t> lowest;
  for (std::uint32_t i = 0; i < kMaxParticipants; ++i) {
    const Participant& p = participants_[i];
    if (p.state.load(std::memory_order_acquire) != kActive) continue;
    if (p.role != static_cast<std::uint32_t>(Role::Subscriber)) continue;
    std::uint64_t c = p.floor.load(std::memory_order_acquire);
    if (!lowest || c < *lowest) lowest = c;
  }
  return lowest;
}

}  // namespace cerulion::detail
