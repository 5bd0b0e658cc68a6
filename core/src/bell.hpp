// SPDX-License-Identifier: Apache-2.0
#pragma once
// A wait set's doorbell: one futex word, in a page of its own in /dev/shm, that the publishers of
// every member ring. With it a wait set of several subscribers sleeps with futex_wait on one word,
// as a single subscriber does, where futex_waitv on one word per member costs the kernel more on
// every wake-up (docs/performance.md). A member's participant record names the bell (bell_id);
// a publisher that finds a member asleep on its bell maps the bell once and rings it.
//
// Named "cerulion-bell.<16 hex digits>" (never a topic's "cerulion.<domain>:" prefix). The page
// records its creator's pid and start time, so that clean_bells() can tell a bell left by a
// process that died (its creator unlinks it otherwise), and the domain of the set's first member,
// whose clean removes it.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

#include "cerulion/core/detail/shm_file.hpp"
#include "cerulion/core/detail/shm_header.hpp"
#include "cerulion/core/names.hpp"
#include "cerulion/core/status.hpp"

namespace cerulion::detail {

/// The bell's page.
struct BellPage {
  ShmStamp stamp;  ///< kBellRule's
  std::uint32_t pid;
  std::uint32_t pid_namespace;
  std::uint64_t start_time;
  std::uint64_t id;
  char domain[kMaxDomainLength + 1];  ///< NUL-terminated
  std::uint32_t checksum;             ///< of every byte before it
  alignas(64) std::atomic<std::uint32_t> word;  ///< the futex: rung by adding one
};
inline constexpr std::uint64_t kBellBytes = 4096;
static_assert(sizeof(BellPage) <= kBellBytes);
/// What a bell's page must say (shm_header.hpp).
inline constexpr HeaderRule kBellRule{"CRLNBELL", 1, sizeof(BellPage), offsetof(BellPage, checksum), "bell"};
/// A participant's bell_id once a publisher could not ring its bell: the wait set then sleeps on
/// its members' own words again.
inline constexpr std::uint64_t kUnreachableBell = ~0ull;

/// "cerulion-bell." + id in hex: the bell's name in /dev/shm.
std::string bell_name(std::uint64_t id);
/// True when `file_name` (an entry of /dev/shm) is named like a bell.
bool is_bell_name(const std::string& file_name);

/// The creator's side: a new bell, unlinked and unmapped when destroyed.
class Bell {
 public:
  /// A new bell of `domain` (cleaned with it) with mode 0600, or 0660 and group `group` so that
  /// the publishers of topics shared with that group can open it.
  static Result<Bell> create(std::string_view domain, std::optional<gid_t> group);

  Bell(Bell&& other) noexcept;
  Bell& operator=(Bell&& other) noexcept;
  Bell(const Bell&) = delete;
  Bell& operator=(const Bell&) = delete;
  ~Bell();

  std::uint64_t id() const { return id_; }
  std::atomic<std::uint32_t>& word() { return page()->word; }

 private:
  Bell(MappedRegion region, std::uint64_t id) : region_(std::move(region)), id_(id) {}
  BellPage* page() const { return static_cast<BellPage*>(region_.address()); }

  MappedRegion region_;
  std::uint64_t id_ = 0;
};

/// Bell `id` as a publisher finds it in /dev/shm, mapped: checked as a hostile user could have left
/// it (a regular file of ours or of a group of ours, one whole page, a bell's header and id).
Result<MappedRegion> open_bell(std::uint64_t id);

/// The publisher's side: adds one to bell `id`'s word and wakes its sleeper. The bell is opened
/// and mapped on first use (open_bell) and kept mapped for the process (at most kRungBellsKept
/// bells, the oldest dropped). False if it cannot be rung.
bool ring_bell(std::uint64_t id);
inline constexpr std::size_t kRungBellsKept = 64;

/// What clean_bells did (or would do) to one bell.
struct CleanedBell {
  std::string name;
  std::uint32_t pid = 0;  ///< its creator
  bool removed = false;
};

/// Removes the bells of `domain` of this user whose creator died (pid and start time checked).
/// `dry_run` reports without removing. An entry named like a bell that is not one is left alone:
/// no publisher rings it, and no bell is ever made in its place (names are taken exclusively).
std::vector<CleanedBell> clean_bells(std::string_view domain, bool dry_run);

}  // namespace cerulion::detail
