// SPDX-License-Identifier: Apache-2.0
// The log of removed topics. Listeners hold a shared flock on it for as long as they listen: a
// departing participant that can take it exclusively knows nobody listens and notes nothing, and
// the last listener to leave takes it exclusively to remove it.

#include "removed_topics.hpp"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <new>
#include <thread>
#include <sys/file.h>
#include <sys/stat.h>

#include "cerulion/core/detail/shm_file.hpp"
#include "cerulion/core/names.hpp"

namespace cerulion::detail {
namespace {

/// The log opened and checked: its header is the kind's and it is whole.
Result<MappedRegion> map_log(const OpenedObject& opened, const std::string& what) {
  const int fd = opened.file.fd();
  if (opened.st.st_size != static_cast<off_t>(kRemovedLogBytes) || !fully_written(fd, kRemovedLogBytes)) {
    return Status(ErrorCode::Corrupted, what + ": not of the size it should be (damaged)");
  }
  RemovedLogHeader header;
  if (!read_unmapped(fd, &header, sizeof header, 0)) return Status(ErrorCode::Corrupted, what + ": too short");
  if (Status st = check_header(&header, kRemovedLogRule, what); !st.ok()) return st;
  if (header.capacity != RemovedTopicLog::kCapacity) return Status(ErrorCode::Corrupted, what + ": of another capacity");
  return MappedRegion::map(fd, 0, kRemovedLogBytes, true, what);
}

bool same_file(int fd, const std::string& path) {
  struct stat by_fd {}, by_name {};
  return ::fstat(fd, &by_fd) == 0 && ::stat(path.c_str(), &by_name) == 0 && by_fd.st_dev == by_name.st_dev &&
         by_fd.st_ino == by_name.st_ino;
}

RemovedLogEntry* entries(void* base) {
  return reinterpret_cast<RemovedLogEntry*>(static_cast<char*>(base) + sizeof(RemovedLogHeader));
}

}  // namespace

std::string removed_log_name(std::string_view domain) {
  return std::string(kRemovedTopicLog.prefix) + std::string(domain);
}

void note_removed_topic(std::string_view domain, std::string_view topic, std::uint64_t published,
                        std::uint64_t created_realtime_ns) {
  const std::string name = removed_log_name(domain);
  auto opened = open_object(kRemovedTopicLog, name, true, ShmUse::Join, "log of removed topics");
  if (!opened) return;
  const int fd = opened->file.fd();
  if (::flock(fd, LOCK_EX | LOCK_NB) == 0) {  // nobody listens
    ::flock(fd, LOCK_UN);
    return;
  }
  if (errno != EWOULDBLOCK) return;
  auto region = map_log(*opened, "log of removed topics");
  if (!region) return;
  auto* header = static_cast<RemovedLogHeader*>(region->address());
  const std::uint64_t i = header->next.fetch_add(1, std::memory_order_acq_rel);
  RemovedLogEntry& e = entries(region->address())[i % RemovedTopicLog::kCapacity];
  e.state.store(2 * i + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  e.published.store(published, std::memory_order_relaxed);
  e.created_realtime_ns.store(created_realtime_ns, std::memory_order_relaxed);
  e.removed_realtime_ns.store(realtime_ns(), std::memory_order_relaxed);
  std::memset(e.topic, 0, sizeof e.topic);
  topic.copy(e.topic, std::min(topic.size(), sizeof e.topic - 1));
  e.state.store(2 * i + 2, std::memory_order_release);
}

std::optional<std::string> clean_removed_log(std::string_view domain, bool dry_run) {
  const std::string name = removed_log_name(domain);
  auto opened = open_object(kRemovedTopicLog, name, false, ShmUse::Join, "log of removed topics");
  if (!opened) return std::nullopt;  // none, or not ours
  const int fd = opened->file.fd();
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) return std::nullopt;  // listened to
  if (!dry_run && same_file(fd, shm_path(name))) ::unlink(shm_path(name).c_str());
  ::flock(fd, LOCK_UN);
  return std::string("a log of removed topics nobody listens to (its listeners died)");
}

struct RemovedTopicLogImpl {
  std::string path;
  ShmFile file;
  MappedRegion region;
  std::uint64_t cursor = 0;
  std::uint64_t overrun = 0;
  /// When the entry at the cursor was first found unfinished (0: it was not).
  std::uint64_t stuck_since_ns = 0;

  ~RemovedTopicLogImpl() {
    if (file.fd() < 0) return;
    ::flock(file.fd(), LOCK_UN);
    // The last listener removes it; one opening it meanwhile finds it gone and makes another. A
    // departing participant's look (an exclusive lock held for a moment) is waited out a little,
    // so that it does not leave the log behind for clean.
    for (int attempt = 0; attempt < 5; ++attempt) {
      if (::flock(file.fd(), LOCK_EX | LOCK_NB) == 0) {
        if (same_file(file.fd(), path)) ::unlink(path.c_str());
        ::flock(file.fd(), LOCK_UN);
        return;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }

  RemovedLogHeader& header() { return *static_cast<RemovedLogHeader*>(region.address()); }
};

}  // namespace cerulion::detail

namespace cerulion {

using detail::RemovedTopicLogImpl;

Result<RemovedTopicLog> RemovedTopicLog::listen(std::string_view domain) {
  if (Status st = validate_domain(domain); !st.ok()) return st;
  const std::string name = detail::removed_log_name(domain);
  const std::string what = "log of removed topics of domain '" + std::string(domain) + "'";
  auto impl = std::make_unique<RemovedTopicLogImpl>();
  impl->path = detail::shm_path(name);
  for (int attempt = 0; attempt < 20; ++attempt) {
    auto opened = detail::open_object(detail::kRemovedTopicLog, name, true, detail::ShmUse::Join, what);
    if (opened) {
      // Shared, waiting out a last listener that is removing it; then it must still be the one named.
      if (::flock(opened->file.fd(), LOCK_SH) != 0) return detail::system_error(what, errno);
      if (!detail::same_file(opened->file.fd(), impl->path)) continue;
      auto region = detail::map_log(*opened, what);
      if (!region) return region.status();
      impl->file = std::move(opened->file);
      impl->region = std::move(*region);
      impl->cursor = impl->header().next.load(std::memory_order_acquire);
      return RemovedTopicLog(std::move(impl));
    }
    if (opened.code() != ErrorCode::NotFound) return opened.status();
    auto created = detail::ShmFile::create(
        {.mode = 0600, .group = std::nullopt, .size = detail::kRemovedLogBytes, .committed = detail::kRemovedLogBytes}, what);
    if (!created) return created.status();
    auto region = detail::MappedRegion::map(created->fd(), 0, detail::kRemovedLogBytes, true, what);
    if (!region) return region.status();
    std::memset(region->address(), 0, detail::kRemovedLogBytes);  // every page written (fully_written)
    auto* header = new (region->address()) detail::RemovedLogHeader{};
    header->stamp = detail::make_stamp(detail::kRemovedLogRule);
    header->capacity = kCapacity;
    header->next.store(0);
    header->checksum = detail::header_checksum(header, detail::kRemovedLogRule);
    if (::flock(created->fd(), LOCK_SH) != 0) return detail::system_error(what, errno);
    auto named = created->publish_as(name, what);
    if (!named) return named.status();
    if (!*named) continue;  // another listener made it first: join that one
    impl->file = std::move(*created);
    impl->region = std::move(*region);
    return RemovedTopicLog(std::move(impl));
  }
  return Status(ErrorCode::SystemError, what + ": it kept changing while it was opened");
}

RemovedTopicLog::RemovedTopicLog(std::unique_ptr<RemovedTopicLogImpl> impl) : impl_(std::move(impl)) {}
RemovedTopicLog::RemovedTopicLog(RemovedTopicLog&&) noexcept = default;
RemovedTopicLog& RemovedTopicLog::operator=(RemovedTopicLog&&) noexcept = default;
RemovedTopicLog::~RemovedTopicLog() = default;

std::vector<RemovedTopic> RemovedTopicLog::take() {
  std::vector<RemovedTopic> out;
  auto& log = *impl_;
  const std::uint64_t next = log.header().next.load(std::memory_order_acquire);
  if (next - log.cursor > kCapacity) {
    log.overrun += next - log.cursor - kCapacity;
    log.cursor = next - kCapacity;
    log.stuck_since_ns = 0;
  }
  auto* all = detail::entries(log.region.address());
  while (log.cursor < next) {
    auto& e = all[log.cursor % kCapacity];
    const std::uint64_t done = 2 * log.cursor + 2;
    const std::uint64_t before = e.state.load(std::memory_order_acquire);
    if (before < done) {
      // Still being written, or its writer died half way: waited for a second, then given up.
      const std::uint64_t now = monotonic_ns();
      if (log.stuck_since_ns == 0) log.stuck_since_ns = now;
      if (now - log.stuck_since_ns < 1'000'000'000ull) break;
      ++log.overrun;
    } else if (before == done) {
      RemovedTopic t;
      t.published = e.published.load(std::memory_order_relaxed);
      t.created_realtime_ns = e.created_realtime_ns.load(std::memory_order_relaxed);
      t.removed_realtime_ns = e.removed_realtime_ns.load(std::memory_order_relaxed);
      char topic[sizeof e.topic];
      std::memcpy(topic, e.topic, sizeof topic);
      topic[sizeof topic - 1] = '\0';
      t.topic = topic;
      std::atomic_thread_fence(std::memory_order_acquire);
      if (e.state.load(std::memory_order_relaxed) == before) {
        out.push_back(std::move(t));
      } else {
        ++log.overrun;
      }
    } else {
      ++log.overrun;  // overwritten by a later removal
    }
    ++log.cursor;
    log.stuck_since_ns = 0;
  }
  return out;
}

std::uint64_t RemovedTopicLog::overrun() const noexcept { return impl_->overrun; }

}  // namespace cerulion
