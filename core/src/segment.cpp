#include "segment.hpp"

#include "cerulion/core/warm.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <pthread.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

#include <boost/interprocess/mapped_region.hpp>
#include <boost/interprocess/shared_memory_object.hpp>

#include "cerulion/core/names.hpp"
#include "liveness.hpp"

namespace bip = boost::interprocess;

namespace cerulion::detail {
namespace {

constexpr std::uint64_t kPage = 4096;
constexpr std::uint64_t round_up(std::uint64_t v, std::uint64_t a) { return (v + a - 1) / a * a; }

std::string errno_text(int err) { return std::strerror(err); }

Status system_error(const std::string& what, int err) {
  if (err == EACCES || err == EPERM) {
    return {ErrorCode::PermissionDenied, what + ": permission denied (the segment belongs to another user)"};
  }
  if (err == ENOSPC || err == ENOMEM) {
    return {ErrorCode::OutOfMemory, what + ": " + errno_text(err) + " (is /dev/shm full?)"};
  }
  return {ErrorCode::SystemError, what + ": " + errno_text(err)};
}

int native_error(const bip::interprocess_exception& e) {
  int err = e.get_native_error();
  return err != 0 ? err : EIO;
}

}  // namespace

struct TopicSegment::Mapping {
  bip::shared_memory_object shm;
  bip::mapped_region control;
  bip::mapped_region data;
};

LayoutPlan plan_layout(std::uint32_t depth, std::uint64_t max_payload) {
  LayoutPlan plan{};
  plan.depth = depth;
  plan.slot_count = depth + kMaxHeldPerParticipant * kMaxParticipants;
  plan.hot_slots = std::min(plan.slot_count, depth + 4);
  plan.stride = round_up(std::max<std::uint64_t>(max_payload, 1), kPage);
  std::uint64_t off = round_up(sizeof(Config), 64) + round_up(sizeof(Control), 64);
  plan.participants_offset = off;
  off += std::uint64_t(kMaxParticipants) * sizeof(Participant);
  plan.log_offset = off;
  off += std::uint64_t(depth) * sizeof(LogEntry);
  plan.slots_offset = off;
  off += std::uint64_t(plan.slot_count) * sizeof(SlotControl);
  plan.data_offset = round_up(off, kPage);
  plan.total_bytes = plan.data_offset + std::uint64_t(plan.slot_count) * plan.stride;
  return plan;
}

std::uint32_t config_checksum(const Config& config) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(&config);
  std::uint32_t hash = 2166136261u;
  for (std::size_t i = 0; i < offsetof(Config, config_crc); ++i) {
    hash ^= bytes[i];
    hash *= 16777619u;
  }
  return hash;
}

Status validate_config(const Config& c, std::uint64_t file_bytes, std::string_view what) {
  auto bad = [&](const std::string& why) {
    return Status(ErrorCode::Corrupted, std::string(what) + ": " + why);
  };
  if (c.magic != kSegmentMagic) return bad("not a cerulion segment (bad magic)");
  if (c.layout_version != kLayoutVersion) {
    return bad("layout version " + std::to_string(c.layout_version) + ", this build reads version " +
               std::to_string(kLayoutVersion) + " (mixed cerulion versions?)");
  }
  if (c.config_bytes != sizeof(Config)) return bad("header size mismatch");
  if (config_checksum(c) != c.config_crc) return bad("header checksum mismatch (corrupted segment)");
  if (c.depth == 0 || c.depth > kMaxDepth || c.max_participants != kMaxParticipants) {
    return bad("implausible depth or participant count");
  }
  LayoutPlan plan = plan_layout(c.depth, c.max_payload);
  if (plan.slot_count != c.slot_count || plan.hot_slots != c.hot_slots || plan.stride != c.slot_stride ||
      plan.participants_offset != c.participants_offset || plan.log_offset != c.log_offset ||
      plan.slots_offset != c.slots_offset || plan.data_offset != c.data_offset ||
      plan.total_bytes != c.total_bytes) {
    return bad("header describes an inconsistent layout");
  }
  if (file_bytes != c.total_bytes) return bad("segment size does not match its header");
  if (::memchr(c.topic, '\0', sizeof c.topic) == nullptr) return bad("topic name not terminated");
  return Status::success();
}

Result<std::shared_ptr<TopicSegment>> TopicSegment::open(const OpenRequest& request) {
  std::shared_ptr<TopicSegment> seg(new TopicSegment());
  seg->topic_ = request.topic;
  seg->own_pid_ = static_cast<std::uint32_t>(::getpid());
  seg->own_start_time_ = own_start_time();
  seg->own_pid_namespace_ = own_pid_namespace();
  std::string full = segment_name(request.options.domain, request.topic);
  seg->name_ = full.substr(1);
  const std::string what = "topic '" + request.topic + "'";
  const std::uint32_t depth = request.options.depth.value_or(kDefaultDepth);
  if (depth == 0 || depth > kMaxDepth) {
    return Status(ErrorCode::InvalidArgument, "depth must be 1.." + std::to_string(kMaxDepth));
  }
  if (request.options.max_payload == 0 || request.options.max_payload > (1ull << 40)) {
    return Status(ErrorCode::InvalidArgument, "payload ceiling must be 1 B .. 1 TiB");
  }

  for (int attempt = 0; attempt < 100; ++attempt) {
    auto mapping = std::make_unique<Mapping>();
    bool created = false;
    try {
      if (request.create_if_missing) {
        try {
          bip::permissions perm(0600);
          mapping->shm = bip::shared_memory_object(bip::create_only, seg->name_.c_str(), bip::read_write, perm);
          created = true;
        } catch (const bip::interprocess_exception& e) {
          if (e.get_error_code() != bip::already_exists_error) {
            return system_error(what + ": cannot create " + full, native_error(e));
          }
        }
      }
      if (!created) {
        try {
          mapping->shm = bip::shared_memory_object(
              bip::open_only, seg->name_.c_str(), request.control_writable ? bip::read_write : bip::read_only);
        } catch (const bip::interprocess_exception& e) {
          int err = native_error(e);
          if (err == ENOENT) {
            if (!request.create_if_missing) return Status(ErrorCode::NotFound, what + " does not exist");
            continue;  // removed between our create and open: try again
          }
          return system_error(what + ": cannot open " + full, err);
        }
      }
    } catch (const std::exception& e) {
      return Status(ErrorCode::SystemError, what + ": " + e.what());
    }

    const int fd = mapping->shm.get_mapping_handle().handle;
    if (created) {
      LayoutPlan plan = plan_layout(depth, request.options.max_payload);
      if (::ftruncate(fd, static_cast<off_t>(plan.total_bytes)) != 0) {
        int err = errno;
        bip::shared_memory_object::remove(seg->name_.c_str());
        return system_error(what + ": cannot size the segment", err);
      }
      try {
        mapping->control = bip::mapped_region(mapping->shm, bip::read_write, 0, plan.data_offset);
      } catch (const bip::interprocess_exception& e) {
        bip::shared_memory_object::remove(seg->name_.c_str());
        return system_error(what + ": cannot map the segment", native_error(e));
      }
      auto* base = static_cast<std::byte*>(mapping->control.get_address());
      auto* cfg = reinterpret_cast<Config*>(base);
      cfg->magic = kSegmentMagic;
      cfg->layout_version = kLayoutVersion;
      cfg->config_bytes = sizeof(Config);
      cfg->depth = plan.depth;
      cfg->slot_count = plan.slot_count;
      cfg->hot_slots = plan.hot_slots;
      cfg->max_participants = kMaxParticipants;
      cfg->max_payload = request.options.max_payload;
      cfg->slot_stride = plan.stride;
      cfg->participants_offset = plan.participants_offset;
      cfg->log_offset = plan.log_offset;
      cfg->slots_offset = plan.slots_offset;
      cfg->data_offset = plan.data_offset;
      cfg->total_bytes = plan.total_bytes;
      cfg->created_realtime_ns = realtime_ns();
      cfg->creator_pid = static_cast<std::uint32_t>(::getpid());
      cfg->creator_uid = static_cast<std::uint32_t>(::getuid());
      std::snprintf(cfg->topic, sizeof cfg->topic, "%s", request.topic.c_str());
      cfg->config_crc = config_checksum(*cfg);
      auto* ctl = new (base + round_up(sizeof(Config), 64)) Control();
      ctl->mode.store(static_cast<std::uint32_t>(request.options.mode.value_or(Mode::Lockstep)));
      ctl->initialized.store(1, std::memory_order_release);
    } else {
      // Someone else creates it: wait (≤ 1 s) until it is initialized.
      struct stat st {};
      auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
      for (;;) {
        if (::fstat(fd, &st) != 0) return system_error(what + ": cannot stat the segment", errno);
        if (static_cast<std::uint64_t>(st.st_size) >= round_up(sizeof(Config), 64) + sizeof(Control)) {
          bip::mapped_region peek(mapping->shm, bip::read_only, 0, round_up(sizeof(Config), 64) + sizeof(Control));
          auto* base = static_cast<const std::byte*>(peek.get_address());
          auto* ctl = reinterpret_cast<const Control*>(base + round_up(sizeof(Config), 64));
          if (ctl->initialized.load(std::memory_order_acquire) == 1) {
            Status valid = validate_config(*reinterpret_cast<const Config*>(base),
                                           static_cast<std::uint64_t>(st.st_size), what);
            if (!valid.ok()) return valid;
            break;
          }
        }
        if (std::chrono::steady_clock::now() > deadline) {
          return Status(ErrorCode::Corrupted,
                        what + ": segment " + full + " was never initialized (its creator died?); "
                        "run 'cerulion clean'");
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      }
      try {
        std::uint64_t data_offset = 0;
        {
          bip::mapped_region peek(mapping->shm, bip::read_only, 0, sizeof(Config));
          data_offset = static_cast<const Config*>(peek.get_address())->data_offset;
        }
        mapping->control = bip::mapped_region(
            mapping->shm, request.control_writable ? bip::read_write : bip::read_only, 0, data_offset);
      } catch (const bip::interprocess_exception& e) {
        return system_error(what + ": cannot map the segment", native_error(e));
      }
    }

    auto* base = static_cast<std::byte*>(mapping->control.get_address());
    seg->config_ = reinterpret_cast<Config*>(base);
    const Config& cfg = *seg->config_;
    try {
      bool writable = request.writable_data && request.control_writable;
      mapping->data = bip::mapped_region(mapping->shm, writable ? bip::read_write : bip::read_only,
                                         static_cast<bip::offset_t>(cfg.data_offset),
                                         cfg.total_bytes - cfg.data_offset);
    } catch (const bip::interprocess_exception& e) {
      return system_error(what + ": cannot map the payload area", native_error(e));
    }
    seg->control_ = reinterpret_cast<Control*>(base + round_up(sizeof(Config), 64));
    seg->participants_ = reinterpret_cast<Participant*>(base + cfg.participants_offset);
    seg->log_ = reinterpret_cast<LogEntry*>(base + cfg.log_offset);
    seg->slots_ = reinterpret_cast<SlotControl*>(base + cfg.slots_offset);
    seg->data_ = static_cast<std::byte*>(mapping->data.get_address());
    // Copies of the checksummed sizes: the bounds every shared index is checked against.
    seg->depth_ = cfg.depth;
    seg->slot_count_ = cfg.slot_count;
    seg->hot_slots_ = cfg.hot_slots;
    seg->stride_ = cfg.slot_stride;
    seg->max_payload_ = cfg.max_payload;
    seg->mapping_ = std::move(mapping);
    if (seg->control_->unlinked.load(std::memory_order_acquire) != 0 && request.create_if_missing) {
      seg->mapping_.reset();
      continue;  // the last participant is removing it: start over with a fresh one
    }
    return seg;
  }
  return Status(ErrorCode::SystemError, what + ": the segment kept disappearing while opening it");
}

TopicSegment::~TopicSegment() = default;

int TopicSegment::fd() const { return mapping_->shm.get_mapping_handle().handle; }

namespace {

constexpr std::uint32_t kLockWaiters = 1u << 31;
constexpr std::uint32_t kLockOwnerMask = kLockWaiters - 1;

}  // namespace

CERULION_HOT_PATH Status TopicSegment::lock() {
  auto& word = control_->lock_word;
  const std::uint32_t me = own_pid_;
  std::uint32_t expected = 0;
  if (word.compare_exchange_strong(expected, me, std::memory_order_acquire)) {
    note_lock_owner();
    return Status::success();
  }
  // Contended: spin a little (holders keep it for microseconds), then sleep on the word, and
  // every 10 ms make sure the holder is still alive.
  const std::uint64_t start = monotonic_ns();
  std::uint64_t next_liveness_check = start + 10'000'000;
  for (std::uint32_t spins = 0;; ++spins) {
    // Acquire: a holder's identity (start time, namespace) read below is then at least as new as
    // the lock word's value.
    std::uint32_t current = word.load(std::memory_order_acquire);
    if ((current & kLockOwnerMask) == 0) {
      // Free (perhaps with the waiters bit left set): keep the bit so our unlock wakes the rest.
      if (word.compare_exchange_weak(current, me | (current & kLockWaiters), std::memory_order_acquire)) {
        note_lock_owner();
        return Status::success();
      }
      continue;
    }
    if (spins < 1000) {
      cpu_relax();
      continue;
    }
    const std::uint64_t now = monotonic_ns();
    if (now >= next_liveness_check) {
      next_liveness_check = now + 10'000'000;
      const auto owner = static_cast<pid_t>(current & kLockOwnerMask);
      if (!process_alive(owner, control_->lock_owner_start.load(std::memory_order_relaxed),
                         control_->lock_owner_ns)) {
        // Its holder died mid-publish or mid-eviction: take the lock over, repair the ring.
        if (word.compare_exchange_strong(current, me | (current & kLockWaiters), std::memory_order_acquire)) {
          note_lock_owner();
          repair_ring_locked();
          return Status::success();
        }
        continue;
      }
      if (now - start > 2'000'000'000) {
        return Status(ErrorCode::Corrupted, "topic '" + topic_ + "': its lock has been held by process " +
                                                std::to_string(owner) + " for over 2 s; run 'cerulion clean --force " +
                                                topic_ + "' if it is stuck");
      }
    }
    if ((current & kLockWaiters) == 0 &&
        !word.compare_exchange_weak(current, current | kLockWaiters, std::memory_order_relaxed)) {
      continue;
    }
    futex_wait(&word, current | kLockWaiters, 1'000'000);
  }
}

void TopicSegment::note_lock_owner() {
  control_->lock_owner_start.store(own_start_time_, std::memory_order_relaxed);
  control_->lock_owner_ns = own_pid_namespace_;
}

CERULION_HOT_PATH void TopicSegment::unlock() {
  control_->lock_owner_start.store(0, std::memory_order_relaxed);
  control_->lock_owner_ns = 0;
  if (control_->lock_word.exchange(0, std::memory_order_release) & kLockWaiters) {
    futex_wake_all(&control_->lock_word);
  }
}

void TopicSegment::repair_ring_locked() {
  // Publish order is: slot tagged + window bit, log entry, `published`. A holder that died may have
  // stopped between any two of these.
  auto& published = control_->published;
  std::uint64_t next = published.load();
  std::uint64_t entry = log(next).seq_slot.load();
  if (entry != 0 && (entry >> kSlotIndexBits) == next + 1) published.store(next + 1);
  next = published.load();
  for (std::uint32_t k = 0; k < slot_count_; ++k) {
    std::uint64_t word = slots_[k].word.load();
    if ((word & kWindowBit) == 0) continue;
    bool referenced = false;
    for (std::uint32_t i = 0; i < depth_ && !referenced; ++i) {
      std::uint64_t e = log_[i].seq_slot.load();
      if (e == 0 || (e & kSlotIndexMask) != k) continue;
      std::uint64_t seq = (e >> kSlotIndexBits) - 1;
      referenced = seq < next && seq + depth_ >= next && tag_of_sequence(seq) == tag_of_word(word);
    }
    if (!referenced) slots_[k].word.fetch_and(~kWindowBit);
  }
}

Result<std::uint32_t> TopicSegment::attach(Role role, std::optional<Mode> explicit_mode,
                                           std::optional<std::uint32_t> explicit_depth) {
  if (explicit_depth && *explicit_depth != depth_) {
    return Status(ErrorCode::Incompatible, "topic '" + topic_ + "' exists with depth " + std::to_string(depth_) +
                                               ", not " + std::to_string(*explicit_depth));
  }
  // Joining is rare and a good moment to sweep out records of processes that died.
  evict_dead(true);
  for (int round = 0; round < 2; ++round) {
    if (Status st = lock(); !st.ok()) return st;
    // Its last participant unlinks a segment under the lock: checked under the lock too, a join
    // lands either before that participant looks for others (and keeps the segment) or after.
    if (control_->unlinked.load(std::memory_order_acquire) != 0) {
      unlock();
      return Status(ErrorCode::NotFound, "topic '" + topic_ + "' was removed while joining it");
    }
    if (role == Role::Publisher && explicit_mode) {
      Mode current = static_cast<Mode>(control_->mode.load());
      if (control_->mode_fixed.load() == 0) {
        control_->mode.store(static_cast<std::uint32_t>(*explicit_mode));
        control_->mode_fixed.store(1);
      } else if (current != *explicit_mode) {
        unlock();
        return Status(ErrorCode::Incompatible, std::string("topic '") + topic_ + "' is " + to_string(current) +
                                                   ", not " + to_string(*explicit_mode));
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
      p.messages.store(0);
      p.lost.store(0);
      p.cursor.store(control_->published.load());
      p.floor.store(control_->published.load());
      p.state.store(kActive, std::memory_order_release);
      unlock();
      control_->members.notify();
      return i;
    }
    unlock();
    if (round == 0 && evict_dead(true) > 0) continue;  // dead ones made room
  }
  return Status(ErrorCode::TooManyParticipants,
                "topic '" + topic_ + "' already has " + std::to_string(kMaxParticipants) + " participants");
}

Result<TopicSegment::Membership> TopicSegment::join(const OpenRequest& request, Role role,
                                                   std::optional<Mode> explicit_mode,
                                                   std::optional<std::uint32_t> explicit_depth) {
  for (int attempt = 0; attempt < 100; ++attempt) {
    auto segment = open(request);
    if (!segment) return segment.status();
    auto index = (*segment)->attach(role, explicit_mode, explicit_depth);
    if (index) return Membership{std::move(*segment), *index};
    if (index.code() != ErrorCode::NotFound || !request.create_if_missing) return index.status();
  }
  return Status(ErrorCode::SystemError, "topic '" + request.topic + "' kept disappearing while joining it");
}

void TopicSegment::evict_locked(std::uint32_t index) {
  Participant& p = participants_[index];
  const std::uint64_t bit = 1ull << index;
  for (std::uint32_t k = 0; k < slot_count_; ++k) {
    if (slots_[k].word.load(std::memory_order_relaxed) & bit) slots_[k].word.fetch_and(~bit);
  }
  control_->data.sleepers.fetch_and(~static_cast<std::uint32_t>(bit));
  control_->room.sleepers.fetch_and(~static_cast<std::uint32_t>(bit));
  control_->members.sleepers.fetch_and(~static_cast<std::uint32_t>(bit));
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
      evict_locked(i);
      continue;
    }
    anyone_left = true;
  }
  if (!anyone_left) {
    control_->unlinked.store(1, std::memory_order_release);
    bip::shared_memory_object::remove(name_.c_str());
  }
  unlock();
  control_->room.notify();  // a lockstep publisher may have been waiting for this subscriber
  control_->members.notify();
}

std::uint32_t TopicSegment::evict_dead(bool force) {
  std::uint64_t now = monotonic_ns();
  if (!force && now - last_evict_scan_ns_ < 50'000'000) return 0;
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
