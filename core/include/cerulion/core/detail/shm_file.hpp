// SPDX-License-Identifier: Apache-2.0
#pragma once
// Not the user API: shared by cerulion's own libraries (core's segments, flashback's store).
//
// Files in /dev/shm, handled as a hostile local user could have left them: opened without blocking
// and without following links, refused unless they are regular files of an acceptable owner, created
// unnamed and given their name only once complete, and memory reserved (fallocate) before a page of
// it is touched, so that a full /dev/shm is an error here rather than a SIGBUS later.

#include <cstdint>
#include <string>
#include <sys/stat.h>
#include <sys/types.h>

#include "cerulion/core/status.hpp"

namespace cerulion::detail {

/// Where POSIX shared-memory objects live on Linux (glibc's shm_open uses the same directory).
inline constexpr const char* kShmDirectory = "/dev/shm";

/// "/dev/shm/<name>" for a segment name given without its leading '/'.
std::string shm_path(const std::string& name);

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

  /// Opens /dev/shm/<name> as it is: never blocks (a FIFO), never follows a symbolic link, never
  /// becomes a controlling terminal. NotFound if there is no such entry. The caller checks what it
  /// opened with describe_non_segment() and may_join().
  static Result<ShmFile> open_existing(const std::string& name, bool writable, const std::string& what);

  /// A new, unnamed regular file in /dev/shm (O_TMPFILE) with mode `mode`: nobody can open it
  /// before publish_as() names it, and it vanishes if its creator dies first.
  static Result<ShmFile> create_unnamed(mode_t mode, const std::string& what);

  /// Gives an unnamed file its name, atomically and never replacing anything: true when named,
  /// false when something already has that name.
  Result<bool> publish_as(const std::string& name, const std::string& what) const;

 private:
  int fd_ = -1;
};

/// "" when `st` is a regular file; otherwise what it is ("a FIFO", "a directory", ...).
std::string describe_non_segment(const struct stat& st);

/// Ok when this process may join a segment with these attributes: it belongs to our effective
/// user, or it was deliberately shared with a group (mode rw for the group) that we are a member
/// of. Root is no exception. PermissionDenied otherwise, naming the owner.
Status may_join(const struct stat& st, const std::string& what);

/// True when the file is owned by another user and not shared with a group of ours.
bool is_foreign(const struct stat& st);

/// A user's name for `uid` ("uid 1234" when it has none).
std::string user_name(uid_t uid);
/// A group's name for `gid` ("gid 1234" when it has none).
std::string group_name(gid_t gid);
/// The gid of group `name`; InvalidArgument if no such group exists.
Result<gid_t> group_id(const std::string& name);
/// True when this process is a member of `gid` (effective or supplementary).
bool in_group(gid_t gid);

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

/// The one-line Status of a failed system call on a segment: permission problems, a full /dev/shm
/// and the rest told apart.
Status system_error(const std::string& what, int err);

}  // namespace cerulion::detail
