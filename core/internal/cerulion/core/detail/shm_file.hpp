// SPDX-License-Identifier: Apache-2.0
#pragma once
// Not the user API, and not installed: the one layer through which every kind of object cerulion
// keeps in /dev/shm (topic segments, wait-set bells, flashback stores, bridge and view status files) is
// made, opened, checked and listed.
//
// Each file is handled as a hostile local user could have left it: opened without blocking (a
// FIFO), without following a link and without becoming a terminal, refused unless it is a regular
// file, joined only under one owner/group rule (shm_owner.hpp), created unnamed and given its name
// only once complete, and its memory reserved (fallocate) before a page of it is touched, so that
// a full /dev/shm is an error here rather than a SIGBUS later. Headers carry one stamp and one
// checksum (shm_header.hpp); listing is shm_directory.hpp.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <sys/stat.h>
#include <sys/types.h>

#include "cerulion/core/status.hpp"

namespace cerulion::detail {

/// Where POSIX shared-memory objects live on Linux (glibc's shm_open uses the same directory).
inline constexpr const char* kShmDirectory = "/dev/shm";

/// A kind of object in /dev/shm: how its file names begin, and what it is called in messages
/// ("/dev/shm/x is a FIFO, not a topic segment").
struct ShmKind {
  std::string_view prefix;
  std::string_view noun;
};
/// Every kind there is, so that their names are told apart in one place.
inline constexpr ShmKind kTopicSegment{"cerulion.", "topic segment"};
inline constexpr ShmKind kWaitSetBell{"cerulion-bell.", "wait set's bell"};
inline constexpr ShmKind kFlashbackStore{"cerulion-flashback.", "flashback store"};
inline constexpr ShmKind kBridgeStatusFile{"cerulion-bridge.", "bridge status file"};
inline constexpr ShmKind kViewStatusFile{"cerulion-view.", "view status file"};
inline constexpr ShmKind kRemovedTopicLog{"cerulion-removed.", "log of removed topics"};

/// "/dev/shm/<name>" for a file name (a segment name without its leading '/'), or "<directory>/<name>".
std::string shm_path(std::string_view name, std::string_view directory = kShmDirectory);

/// Who may open an object: anyone may look at one (`topic info` of another user's topic); using
/// it (joining a topic, ringing a bell, reading a store or a status file) follows may_join().
enum class ShmUse : std::uint8_t { Look, Join };

/// What a new object is made with (ShmFile::create).
struct NewObject {
  /// 0600, or 0660 when shared with `group`.
  mode_t mode = 0600;
  /// The group it is shared with (this process must be a member); none: its user's only.
  std::optional<gid_t> group;
  /// Its size in bytes (sparse: only what is written or committed takes memory).
  std::uint64_t size = 0;
  /// Bytes from its start committed now (reserve()), so that writing them cannot fault.
  std::uint64_t committed = 0;
};

/// An open file descriptor, closed on destruction.
class ShmFile {
 public:
  ShmFile() = default;
  explicit ShmFile(int fd) : fd_(fd) {}
  ShmFile(ShmFile&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  ShmFile& operator=(ShmFile&& other) noexcept;
  ShmFile(const ShmFile&) = delete;
  ShmFile& operator=(const ShmFile&) = delete;
  ~ShmFile();

  int fd() const { return fd_; }

  /// Opens <directory>/<name> as it is: never blocks (a FIFO), never follows a symbolic link
  /// (Corrupted: "... is a symbolic link, not a <noun>"), never becomes a controlling terminal.
  /// NotFound if there is no such entry. check() says what was opened.
  static Result<ShmFile> open_existing(const ShmKind& kind, const std::string& name, bool writable,
                                       const std::string& what, std::string_view directory = kShmDirectory);

  /// A new, unnamed regular file in `directory` (O_TMPFILE) with mode `mode`: nobody can open it
  /// before publish_as() names it, and it vanishes if its creator dies first.
  static Result<ShmFile> create_unnamed(mode_t mode, const std::string& what,
                                        std::string_view directory = kShmDirectory);

  /// The one way every kind of object is made: a new unnamed file (create_unnamed) given to its
  /// group, sized and its first `committed` bytes reserved, ready to be written and then named
  /// (publish_as). PermissionDenied naming the group when this process is not a member of it;
  /// OutOfMemory when /dev/shm cannot hold what is committed.
  static Result<ShmFile> create(const NewObject& object, const std::string& what,
                                std::string_view directory = kShmDirectory);

  /// Gives an unnamed file its name, atomically and never replacing anything: true when named,
  /// false when something already has that name.
  Result<bool> publish_as(const std::string& name, const std::string& what,
                          std::string_view directory = kShmDirectory) const;

  /// The attributes of what was opened once it is found to be a regular file (Corrupted: "<what>:
  /// <path> is a FIFO, not a <noun>") that `use` allows (may_join's PermissionDenied for Join).
  Result<struct stat> check(const ShmKind& kind, const std::string& path, ShmUse use, const std::string& what) const;

 private:
  int fd_ = -1;
};

/// An object opened and checked (ShmFile::open_existing, then check()).
struct OpenedObject {
  ShmFile file;
  struct stat st {};
};
Result<OpenedObject> open_object(const ShmKind& kind, const std::string& name, bool writable, ShmUse use,
                                 const std::string& what, std::string_view directory = kShmDirectory);

/// Commits memory for [offset, offset + length) of `fd` (fallocate), so that later writes to those
/// pages cannot fault for want of space. OutOfMemory, naming the size needed and free, when
/// /dev/shm cannot hold it.
Status reserve(int fd, std::uint64_t offset, std::uint64_t length, const std::string& what);

/// Reads `length` bytes at `offset` of `fd` without mapping them: a page never written reads as
/// zeros and commits nothing, where touching it through a mapping would need memory. False when
/// the file is shorter.
bool read_unmapped(int fd, void* out, std::size_t length, std::uint64_t offset);

/// True when every page of [0, length) of `fd` holds written data: mapping and touching them cannot
/// need new memory. (tmpfs allocates a page on the first fault, even a read fault, and a full
/// /dev/shm turns that into SIGBUS.)
bool fully_written(int fd, std::uint64_t length);

/// A shared mapping of part of a file, unmapped on destruction.
class MappedRegion {
 public:
  MappedRegion() = default;
  MappedRegion(MappedRegion&& other) noexcept;
  MappedRegion& operator=(MappedRegion&& other) noexcept;
  MappedRegion(const MappedRegion&) = delete;
  MappedRegion& operator=(const MappedRegion&) = delete;
  ~MappedRegion();

  static Result<MappedRegion> map(int fd, std::uint64_t offset, std::uint64_t length, bool writable,
                                  const std::string& what);
  void* address() const { return address_; }
  std::uint64_t length() const { return length_; }

 private:
  void* address_ = nullptr;
  std::uint64_t length_ = 0;
};

/// The one-line Status of a failed system call on an object: permission problems, a full /dev/shm
/// and the rest told apart.
Status system_error(const std::string& what, int err);

}  // namespace cerulion::detail
