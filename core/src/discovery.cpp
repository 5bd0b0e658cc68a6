#include "cerulion/core/discovery.hpp"

#include <algorithm>
#include <dirent.h>
#include <sys/stat.h>

#include <boost/interprocess/shared_memory_object.hpp>

#include "liveness.hpp"
#include "segment.hpp"

namespace cerulion {
namespace {

using detail::TopicSegment;

std::vector<std::string> segment_topics(std::string_view domain) {
  std::vector<std::string> topics;
  DIR* dir = opendir("/dev/shm");
  if (!dir) return topics;
  while (dirent* e = readdir(dir)) {
    std::string topic = topic_from_segment_file(domain, e->d_name);
    if (!topic.empty()) topics.push_back(topic);
  }
  closedir(dir);
  std::sort(topics.begin(), topics.end());
  return topics;
}

Result<std::shared_ptr<TopicSegment>> open_existing(std::string_view topic, std::string_view domain, bool writable) {
  TopicSegment::OpenRequest request;
  request.topic = std::string(topic);
  request.options.domain = std::string(domain);
  request.create_if_missing = false;
  request.writable_data = false;
  request.control_writable = writable;
  return TopicSegment::open(request);
}

TopicInfo describe(TopicSegment& seg, std::string_view domain) {
  TopicInfo info;
  const detail::Config& cfg = seg.config();
  detail::Control& ctl = seg.control();
  info.name = seg.topic();
  info.domain = std::string(domain);
  info.segment = "/" + seg.name();
  info.mode = static_cast<Mode>(ctl.mode.load());
  info.mode_fixed = ctl.mode_fixed.load() != 0;
  info.depth = cfg.depth;
  info.slot_count = cfg.slot_count;
  info.max_payload = cfg.max_payload;
  info.largest_payload = ctl.largest_payload.load();
  info.published = ctl.published.load();
  info.last_publish_realtime_ns = ctl.last_publish_real_ns.load();
  const std::uint64_t period = ctl.period_ewma_ns.load();
  const std::uint64_t last = ctl.last_publish_mono_ns.load();
  const std::uint64_t now = monotonic_ns();
  if (period > 0 && last > 0 && now - last < std::max<std::uint64_t>(2 * period, 100'000'000)) {
    info.rate_hz = 1e9 / static_cast<double>(period);
  }
  info.creator_pid = cfg.creator_pid;
  info.created_realtime_ns = cfg.created_realtime_ns;
  info.segment_bytes = cfg.total_bytes;
  struct stat st {};
  if (::fstat(seg.fd(), &st) == 0) {
    info.resident_bytes = static_cast<std::uint64_t>(st.st_blocks) * 512;
    info.owner_uid = st.st_uid;
    info.permissions = st.st_mode & 07777;
  }
  for (std::uint32_t i = 0; i < kMaxParticipants; ++i) {
    detail::Participant& p = seg.participant(i);
    if (p.state.load() != detail::kActive) continue;
    ParticipantInfo pi;
    pi.role = p.role <= 2 ? static_cast<Role>(p.role) : Role::Subscriber;
    pi.pid = p.pid;
    pi.alive = detail::process_alive(static_cast<pid_t>(p.pid), p.start_time, p.pid_namespace);
    pi.position = p.cursor.load();
    pi.lost = p.lost.load();
    pi.messages = p.messages.load();
    info.participants.push_back(pi);
  }
  return info;
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
  for (const auto& topic : segment_topics(domain)) {
    auto seg = open_existing(topic, domain, false);
    if (!seg) {
      if (seg.code() != ErrorCode::NotFound) listing.problems.push_back(seg.message());
      continue;
    }
    listing.topics.push_back(describe(**seg, domain));
  }
  return listing;
}

Result<TopicInfo> inspect_topic(std::string_view topic, std::string_view domain) {
  if (Status st = validate_domain(domain); !st.ok()) return st;
  auto name = normalize_topic_name(topic);
  if (!name) return name.status();
  auto seg = open_existing(*name, domain, false);
  if (!seg) {
    if (seg.code() == ErrorCode::NotFound) {
      return Status(ErrorCode::NotFound, "no topic '" + *name + "' in domain '" + std::string(domain) + "'");
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
  for (const auto& topic : segment_topics(domain)) {
    CleanedSegment item;
    item.topic = topic;
    item.segment = segment_name(domain, topic);
    const bool force = !forced.empty() && topic == forced;
    forced_found |= force;
    auto remove = [&] {
      if (!dry_run) item.removed = boost::interprocess::shared_memory_object::remove(item.segment.c_str() + 1);
    };
    auto seg = open_existing(topic, domain, !dry_run);
    if (!seg) {
      if (seg.code() == ErrorCode::NotFound) continue;
      if (seg.code() == ErrorCode::PermissionDenied && !force) continue;  // another user's business
      item.reason = force ? "forced (" + seg.message() + ")" : seg.message();
      remove();
      report.push_back(item);
      continue;
    }
    TopicSegment& s = **seg;
    const bool locked = !dry_run && s.lock().ok();
    TopicInfo info = describe(s, domain);
    if (force || info.abandoned()) {
      std::string pids;
      for (const auto& p : info.participants) pids += (pids.empty() ? "" : ", ") + std::to_string(p.pid);
      if (force) {
        item.reason = info.abandoned() ? "forced" : "forced (live participants: " + pids + ")";
      } else {
        item.reason = pids.empty() ? "no participant" : "no live participant (dead: " + pids + ")";
      }
      if (locked) s.control().unlinked.store(1);
      remove();
      report.push_back(item);
    }
    if (locked) s.unlock();
  }
  if (!forced.empty() && !forced_found) {
    return Status(ErrorCode::NotFound, "no topic '" + forced + "' in domain '" + std::string(domain) + "'");
  }
  return report;
}

}  // namespace cerulion
