// SPDX-License-Identifier: Apache-2.0
#include "bell.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <sys/random.h>
#include <unistd.h>

#include "cerulion/core/detail/liveness.hpp"
#include "cerulion/core/detail/shm_directory.hpp"
#include "cerulion/core/detail/shm_owner.hpp"
#include "cerulion/core/options.hpp"
#include "futex.hpp"

namespace cerulion::detail {
namespace {

std::uint64_t random_id() {
  std::uint64_t id = 0;
  while (id == 0 || id == kUnreachableBell) {
    if (::getrandom(&id, sizeof id, 0) != static_cast<ssize_t>(sizeof id)) {
      // No entropy source: the clock and pid are unique enough for a name that is created exclusively.
      id = cerulion::monotonic_ns() ^ (static_cast<std::uint64_t>(::getpid()) << 40);
    }
  }
  return id;
}

/// The bells this process has rung, kept mapped.
struct RungBells {
  std::mutex mutex;
  std::vector<std::pair<std::uint64_t, MappedRegion>> bells;  ///< oldest first
};

RungBells& rung_bells() {
  static auto* bells = new RungBells;  // never destroyed: a publisher may ring while statics go
  return *bells;
}

}  // namespace

std::string bell_name(std::uint64_t id) {
  char name[40];
  std::snprintf(name, sizeof name, "%s%016" PRIx64, std::string(kWaitSetBell.prefix).c_str(), id);
  return name;
}

bool is_bell_name(const std::string& file_name) { return file_name.starts_with(kWaitSetBell.prefix); }

Result<MappedRegion> open_bell(std::uint64_t id) {
  const std::string name = bell_name(id);
  const std::string what = "bell " + name;
  auto opened = open_object(kWaitSetBell, name, true, ShmUse::Join, what);
  if (!opened) return opened.status();
  const int fd = opened->file.fd();
  // Only pages that were written may be mapped: touching another would need memory (shm_file.hpp).
  if (opened->st.st_size != static_cast<off_t>(kBellBytes) || !fully_written(fd, kBellBytes)) {
    return Status(ErrorCode::Corrupted, what + ": not one whole page (damaged)");
  }
  BellPage page{};
  if (!read_unmapped(fd, &page, sizeof page, 0)) return Status(ErrorCode::Corrupted, what + ": too short");
  if (Status st = check_header(&page, kBellRule, what); !st.ok()) return st;
  if (page.id != id) return Status(ErrorCode::Corrupted, what + ": its page names another bell");
  return MappedRegion::map(fd, 0, kBellBytes, true, what);
}

Result<Bell> Bell::create(std::string_view domain, std::optional<gid_t> group) {
  const std::string what = "a wait set's bell";
  auto created = ShmFile::create({.mode = mode_t(group ? 0660 : 0600), .group = group, .size = kBellBytes,
                                  .committed = kBellBytes},
                                 what);
  if (!created) return created.status();
  const int fd = created->fd();
  auto region = MappedRegion::map(fd, 0, kBellBytes, true, what);
  if (!region) return region.status();
  auto* page = static_cast<BellPage*>(region->address());
  std::memset(static_cast<void*>(page), 0, kBellBytes);  // every page written: fully_written() says so to ringers
  page->stamp = make_stamp(kBellRule);
  page->pid = static_cast<std::uint32_t>(::getpid());
  page->pid_namespace = own_pid_namespace();
  page->start_time = own_start_time();
  domain.copy(page->domain, std::min(domain.size(), kMaxDomainLength));
  for (int attempt = 0; attempt < 8; ++attempt) {
    page->id = random_id();
    page->checksum = header_checksum(page, kBellRule);
    auto named = created->publish_as(bell_name(page->id), what);
    if (!named) return named.status();
    if (*named) return Bell(std::move(*region), page->id);
  }
  return Status(ErrorCode::SystemError, what + ": every name tried was taken");
}

Bell::Bell(Bell&& other) noexcept : region_(std::move(other.region_)), id_(other.id_) {
  other.id_ = 0;
}

Bell& Bell::operator=(Bell&& other) noexcept {
  if (this != &other) {
    if (id_ != 0) ::unlink(shm_path(bell_name(id_)).c_str());
    region_ = std::move(other.region_);
    id_ = other.id_;
    other.id_ = 0;
  }
  return *this;
}

Bell::~Bell() {
  if (id_ != 0) ::unlink(shm_path(bell_name(id_)).c_str());
}

bool ring_bell(std::uint64_t id) {
  RungBells& rung = rung_bells();
  std::lock_guard<std::mutex> lock(rung.mutex);
  std::atomic<std::uint32_t>* word = nullptr;
  for (auto& [known, region] : rung.bells) {
    if (known == id) word = &static_cast<BellPage*>(region.address())->word;
  }
  if (word == nullptr) {
    auto region = open_bell(id);
    if (!region) return false;  // not a bell, or not ours to ring: the wait set falls back
    if (rung.bells.size() >= kRungBellsKept) rung.bells.erase(rung.bells.begin());
    word = &static_cast<BellPage*>(region->address())->word;
    rung.bells.emplace_back(id, std::move(*region));
  }
  word->fetch_add(1, std::memory_order_seq_cst);
  futex_wake_all(word);
  return true;
}

std::vector<CleanedBell> clean_bells(std::string_view domain, bool dry_run) {
  std::vector<CleanedBell> cleaned;
  for (const auto& entry : list_objects(kWaitSetBell)) {
    if (!entry.not_regular.empty() || is_foreign(entry.st) || entry.st.st_size != static_cast<off_t>(kBellBytes)) {
      continue;  // another user's, or no bell
    }
    auto opened = open_object(kWaitSetBell, entry.name, false, ShmUse::Join, entry.name);
    BellPage page{};
    if (!opened || !read_unmapped(opened->file.fd(), &page, sizeof page, 0) ||
        !check_header(&page, kBellRule, entry.name).ok()) {
      continue;
    }
    page.domain[kMaxDomainLength] = '\0';
    if (std::string_view(page.domain) != domain) continue;
    if (process_alive(static_cast<pid_t>(page.pid), page.start_time, page.pid_namespace)) continue;
    CleanedBell item{entry.name, page.pid, false};
    if (!dry_run) item.removed = ::unlink(entry.path.c_str()) == 0;
    cleaned.push_back(item);
  }
  return cleaned;
}

}  // namespace cerulion::detail
