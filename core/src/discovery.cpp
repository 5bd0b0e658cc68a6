// SPDX-License-Identifier: Apache-2.0
#include "cerulion/core/discovery.hpp"

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <memory>
#include <sys/stat.h>
#include <unistd.h>

#include "cerulion/core/detail/liveness.hpp"
#include "cerulion/core/detail/shm_directory.hpp"
#include "bell.hpp"
#include "removed_topics.hpp"
#include "segment.hpp"

namespace cerulion {
namespace {

using detail::TopicSegment;

/// The domain's segment files (and whatever else is named like one), by topic.
std::vector<std::pair<std::string, detail::ShmEntry>> segment_entries(std::string_view domain) {
  std::vector<std::pair<std::string, detail::ShmEntry>> found;
  for (auto& entry : detail::list_objects(detail::kTopicSegment, segment_prefix(domain))) {
    std::string topic = topic_from_segment_file(domain, entry.name);
    if (!topic.empty()) found.emplace_back(std::move(topic), std::move(entry));
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return found;
}

Result<std::shared_ptr<TopicSegment>> open_existing(std::string_view topic, std::string_view domain,
                                                    TopicSegment::Access access) {
  TopicSegment::OpenRequest request;
  request.topic = std::string(topic);
  request.options.domain = std::string(domain);
  request.access = access;
  auto segment = TopicSegment::open(request);
  if (!segment) return Status(segment.status()).about(Subject::topic(request.topic));
  return segment;
}

/// What the ring still holds about recent publishes: publishing writes no statistics of its own
/// (they would cost every message), so the rate is measured over the messages the ring keeps.
struct RecentPublishes {
  std::uint64_t messages = 0;  ///< how many the times below span (0 or 1: no rate)
  std::uint64_t oldest_mono_ns = 0;
  std::uint64_t newest_mono_ns = 0;
  std::uint64_t newest_realtime_ns = 0;
};

/// Reads one ring entry's publish times while publishers may be overwriting it: the entry must
/// carry message `seq` before and after the read, or nothing is returned.
bool entry_times(TopicSegment& seg, std::uint64_t seq, std::uint64_t& mono, std::uint64_t& real) {
  const detail::LogEntry& entry = seg.log(seq);
  const std::uint64_t tagged = detail::make_log_entry(seq, 0) >> detail::kSlotIndexBits;
  if ((entry.seq_slot.load(std::memory_order_acquire) >> detail::kSlotIndexBits) != tagged) return false;
  mono = entry.publish_mono_ns;
  real = entry.publish_real_ns;
  std::atomic_thread_fence(std::memory_order_acquire);
  return (entry.seq_slot.load(std::memory_order_relaxed) >> detail::kSlotIndexBits) == tagged;
}

RecentPublishes recent_publishes(TopicSegment& seg) {
  RecentPublishes recent;
  for (int attempt = 0; attempt < 4; ++attempt) {
    const std::uint64_t published = seg.control().published.load(std::memory_order_acquire);
    if (published == 0) return recent;
    // The oldest is read first and one short of the ring's room: a publish moving on meanwhile
    // then overwrites neither before they are read.
    const std::uint64_t span = std::min<std::uint64_t>(published, std::max<std::uint32_t>(seg.ring(), 2) - 1);
    const std::uint64_t oldest = published - span;
    std::uint64_t real_unused = 0;
    if (!entry_times(seg, oldest, recent.oldest_mono_ns, real_unused)) continue;
    if (!entry_times(seg, published - 1, recent.newest_mono_ns, recent.newest_realtime_ns)) continue;
    recent.messages = span;
    return recent;
  }
  return {};  // publishing far faster than it can be read: no figure rather than a wrong one
}

/// A role as a damaged segment may hold it: anything unknown reads as a subscriber.
Role role_of(std::uint32_t stored) { return stored <= 2 ? static_cast<Role>(stored) : Role::Subscriber; }

TopicInfo describe(TopicSegment& seg, std::string_view domain) {
  TopicInfo info;
  const detail::Config& cfg = seg.config();
  detail::Control& ctl = seg.control();
  info.name = seg.topic();
  info.domain = std::string(domain);
  info.segment = "/" + seg.name();
  info.mode = static_cast<Mode>(ctl.mode.load());
  info.mode_fixed = ctl.mode_fixed.load() != 0;
  info.depth = ctl.depth.load();
  info.slot_count = cfg.slot_count;
  info.max_payload = cfg.max_payload;
  info.largest_payload = ctl.largest_payload.load();
  info.published = ctl.published.load();
  const RecentPublishes recent = recent_publishes(seg);
  info.last_publish_realtime_ns = recent.newest_realtime_ns;
  const std::uint64_t now = monotonic_ns();
  if (recent.messages > 1 && recent.newest_mono_ns > recent.oldest_mono_ns) {
    const double period = static_cast<double>(recent.newest_mono_ns - recent.oldest_mono_ns) /
                          static_cast<double>(recent.messages - 1);
    if (static_cast<double>(now - recent.newest_mono_ns) < std::max(2 * period, 1e8)) info.rate_hz = 1e9 / period;
  }
  info.creator_pid = cfg.creator_pid;
  info.created_realtime_ns = cfg.created_realtime_ns;
  const struct stat& opened = seg.file_status();
  info.owner_uid = opened.st_uid;
  info.owner = detail::user_name(opened.st_uid);
  if ((opened.st_mode & 0060) == 0060) info.group = detail::group_name(opened.st_gid);
  info.permissions = opened.st_mode & 07777;
  info.foreign = detail::is_foreign(opened);
  struct stat st {};
  if (::fstat(seg.fd(), &st) == 0) {
    info.segment_bytes = static_cast<std::uint64_t>(st.st_size);
    info.resident_bytes = static_cast<std::uint64_t>(st.st_blocks) * 512;
  }
  for (std::uint32_t i = 0; i < kMaxParticipants; ++i) {
    detail::Participant& p = seg.participant(i);
    if (p.state.load() != detail::kActive) continue;
    ParticipantInfo pi;
    pi.role = role_of(p.role);
    pi.pid = p.pid;
    pi.alive = detail::process_alive(static_cast<pid_t>(p.pid), p.start_time, p.pid_namespace);
    pi.position = p.cursor.load();
    pi.lost = p.lost.load();
    pi.messages = p.messages.load();
    info.participants.push_back(pi);
  }
  for (const auto& d : seg.recent_deaths()) {
    info.deaths.push_back({d.number, role_of(d.role), d.pid, d.noticed_realtime_ns, d.noticed_by});
  }
  info.deaths_total = seg.deaths_recorded();
  info.damage = seg.inconsistency();
  auto type = seg.declared_type();
  if (type) {
    info.type = type->value_or(TopicType{});
    info.type_declared = type->has_value();
  } else if (info.damage.empty()) {
    info.damage = type.status().message();
  }
  return info;
}

/// The live processes a damaged segment's participant table still names. The table sits at the
/// same offset in every segment, so it can be read when the rest of the header cannot be trusted.
std::vector<std::uint32_t> live_participants_of_damaged(const std::string& name) {
  std::vector<std::uint32_t> pids;
  auto file = detail::ShmFile::open_existing(detail::kTopicSegment, name, false, name);
  if (!file) return pids;
  auto table = std::make_unique<detail::Participant[]>(kMaxParticipants);
  if (!detail::read_unmapped(file->fd(), static_cast<void*>(table.get()),
                             sizeof(detail::Participant) * kMaxParticipants, detail::kParticipantsOffset)) {
    return pids;
  }
  for (std::uint32_t i = 0; i < kMaxParticipants; ++i) {
    const detail::Participant& p = table[i];
    if (p.state.load(std::memory_order_relaxed) == detail::kActive &&
        detail::process_alive(static_cast<pid_t>(p.pid), p.start_time, p.pid_namespace)) {
      pids.push_back(p.pid);
    }
  }
  return pids;
}

std::string pid_list(const std::vector<std::uint32_t>& pids) {
  std::string text;
  for (auto pid : pids) text += (text.empty() ? "" : ", ") + std::to_string(pid);
  return text;
}

/// Removes an entry named like a segment that is not one: a FIFO, a link (not followed), a
/// directory and what is in it.
bool remove_non_segment(const std::string& path) {
  std::error_code error;
  return std::filesystem::remove_all(path, error) > 0 && !error;
}

}  // namespace

std::uint32_t TopicInfo::count(Role role, bool alive_only) const noexcept {
  std::uint32_t n = 0;
  for (const auto& p : participants) {
    if (p.role == role && (p.alive || !alive_only)) ++n;
  }
  return n;
}

bool TopicInfo::abandoned() const noexcept {
  return std::none_of(participants.begin(), participants.end(), [](const auto& p) { return p.alive; });
}

Result<TopicListing> list_topics(std::string_view domain) {
  if (Status st = validate_domain(domain); !st.ok()) return st;
  TopicListing listing;
  for (const auto& [topic, entry] : segment_entries(domain)) {
    auto seg = open_existing(topic, domain, TopicSegment::Access::Inspect);
    if (!seg) {
      if (seg.code() != ErrorCode::NotFound) listing.problems.push_back(seg.message());
      continue;
    }
    listing.topics.push_back(describe(**seg, domain));
  }
  return listing;
}

std::vector<std::string> list_domains() {
  std::vector<std::string> domains;
  for (const auto& entry : detail::list_objects(detail::kTopicSegment)) {
    std::string_view name = entry.name;
    name.remove_prefix(detail::kTopicSegment.prefix.size());
    const auto colon = name.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string domain(name.substr(0, colon));
    if (validate_domain(domain).ok()) domains.push_back(domain);
  }
  std::sort(domains.begin(), domains.end());
  domains.erase(std::unique(domains.begin(), domains.end()), domains.end());
  return domains;
}

Result<TopicInfo> inspect_topic(std::string_view topic, std::string_view domain) {
  if (Status st = validate_domain(domain); !st.ok()) return st;
  auto name = normalize_topic_name(topic);
  if (!name) return name.status();
  auto seg = open_existing(*name, domain, TopicSegment::Access::Inspect);
  if (!seg) {
    if (seg.code() == ErrorCode::NotFound) {
      return Status(ErrorCode::NotFound, "no topic '" + *name + "' in domain '" + std::string(domain) + "'",
                    Subject::topic(*name));
    }
    return seg.status();
  }
  return describe(**seg, domain);
}

Result<std::vector<CleanedSegment>> clean_domain(std::string_view domain, bool dry_run, std::string_view force_topic) {
  if (Status st = validate_domain(domain); !st.ok()) return st;
  std::string forced;
  if (!force_topic.empty()) {
    auto name = normalize_topic_name(force_topic);
    if (!name) return name.status();
    forced = *name;
  }
  std::vector<CleanedSegment> report;
  bool forced_found = false;
  for (const auto& [topic, entry] : segment_entries(domain)) {
    CleanedSegment item;
    item.topic = topic;
    item.segment = segment_name(domain, topic);
    const std::string& path = entry.path;
    const bool force = !forced.empty() && topic == forced;
    forced_found |= force;
    if (!entry.not_regular.empty()) {
      item.reason = "not a topic segment: " + entry.not_regular;
      if (!dry_run) item.removed = remove_non_segment(path);
      report.push_back(item);
      continue;
    }
    auto remove = [&] {
      if (!dry_run) item.removed = ::unlink(path.c_str()) == 0;
    };
    auto seg = open_existing(topic, domain, dry_run ? TopicSegment::Access::Inspect : TopicSegment::Access::Maintain);
    if (!seg) {
      if (seg.code() == ErrorCode::NotFound) continue;
      if (seg.code() == ErrorCode::PermissionDenied && !force) continue;  // another user's business
      const auto live = live_participants_of_damaged(item.segment.substr(1));
      if (force) {
        item.reason = "forced (" + seg.message() + ")";
        remove();
      } else if (!live.empty()) {
        item.reason = seg.message() + "; left in place: live processes still use it (" + pid_list(live) + ")";
        item.in_use = true;
      } else {
        item.reason = seg.message();
        remove();
      }
      report.push_back(item);
      continue;
    }
    TopicSegment& s = **seg;
    const bool locked = !dry_run && s.lock().ok();
    TopicInfo info = describe(s, domain);
    if (force || info.abandoned()) {
      std::vector<std::uint32_t> pids;
      for (const auto& p : info.participants) pids.push_back(p.pid);
      if (force) {
        item.reason = info.abandoned() ? "forced" : "forced (live participants: " + pid_list(pids) + ")";
      } else {
        item.reason = pids.empty() ? "no participant" : "no live participant (dead: " + pid_list(pids) + ")";
      }
      // The deaths evicted earlier are the rest of the story: who left it abandoned.
      if (!info.deaths.empty()) {
        std::string died;
        for (const auto& d : info.deaths) died += (died.empty() ? "" : ", ") + std::string(to_string(d.role)) + " " + std::to_string(d.pid);
        item.reason += "; died earlier: " + died;
      }
      if (locked) s.control().unlinked.store(1);
      remove();
      // A reader following the domain that never opened it hears of it, as of any topic removed.
      if (const std::uint64_t published = s.control().published.load(); item.removed && published > 0) {
        detail::note_removed_topic(domain, topic, published, s.config().created_realtime_ns);
      }
      report.push_back(item);
    }
    if (locked) s.unlock();
  }
  if (!forced.empty() && !forced_found) {
    return Status(ErrorCode::NotFound, "no topic '" + forced + "' in domain '" + std::string(domain) + "'",
                  Subject::topic(forced));
  }
  if (forced.empty()) {
    for (const auto& bell : detail::clean_bells(domain, dry_run)) {
      CleanedSegment item;
      item.segment = "/" + bell.name;
      item.reason = "a wait set's bell whose process died (" + std::to_string(bell.pid) + ")";
      item.removed = bell.removed;
      report.push_back(item);
    }
    if (auto log = detail::clean_removed_log(domain, dry_run)) {
      CleanedSegment item;
      item.segment = "/" + detail::removed_log_name(domain);
      item.reason = *log;
      item.removed = !dry_run;
      report.push_back(item);
    }
  }
  return report;
}

}  // namespace cerulion
