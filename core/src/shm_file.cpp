// SPDX-License-Identifier: Apache-2.0
#include "cerulion/core/detail/shm_file.hpp"

#include "cerulion/core/detail/shm_owner.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/statvfs.h>
#include <unistd.h>

namespace cerulion::detail {
namespace {

std::string amount(std::uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 4) {
    value /= 1024;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, unit == 0 ? "%.0f %s" : "%.1f %s", value, units[unit]);
  return text;
}

std::string errno_text(int err) { return std::strerror(err); }

/// This process's turn to reserve memory in /dev/shm: an exclusive flock on the directory, tried
/// for at most half a second, so that another user holding it cannot stall us.
class ReservationTurn {
 public:
  ReservationTurn() : fd_(::open(kShmDirectory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) {
    if (fd_ < 0) return;
    for (int attempt = 0; attempt < 500; ++attempt) {
      if (::flock(fd_, LOCK_EX | LOCK_NB) == 0) return;
      if (errno != EWOULDBLOCK && errno != EINTR) break;
      ::usleep(1000);
    }
  }
  ~ReservationTurn() {
    if (fd_ >= 0) ::close(fd_);  // closing releases the lock
  }
  ReservationTurn(const ReservationTurn&) = delete;
  ReservationTurn& operator=(const ReservationTurn&) = delete;

 private:
  int fd_;
};

}  // namespace

std::string shm_path(std::string_view name, std::string_view directory) {
  return std::string(directory) + "/" + std::string(name);
}

ShmFile& ShmFile::operator=(ShmFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

ShmFile::~ShmFile() {
  if (fd_ >= 0) ::close(fd_);
}

Result<ShmFile> ShmFile::open_existing(const ShmKind& kind, const std::string& name, bool writable,
                                       const std::string& what, std::string_view directory) {
  const std::string path = shm_path(name, directory);
  const int flags = (writable ? O_RDWR : O_RDONLY) | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC;
  int fd = ::open(path.c_str(), flags);
  if (fd < 0 && writable && errno == EISDIR) fd = ::open(path.c_str(), flags & ~O_RDWR);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT) return Status(ErrorCode::NotFound, what + " does not exist");
    if (err == ELOOP) {
      return Status(ErrorCode::Corrupted, what + ": " + path + " is a symbolic link, not a " + std::string(kind.noun));
    }
    return system_error(what + ": cannot open " + path, err);
  }
  return ShmFile(fd);
}

Result<ShmFile> ShmFile::create_unnamed(mode_t mode, const std::string& what, std::string_view directory) {
  const std::string dir(directory);
  int fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, mode);
  if (fd < 0) return system_error(what + ": cannot create a file in " + dir, errno);
  ShmFile file(fd);
  // The umask may have taken bits away; the mode asked for is the mode meant.
  if (::fchmod(fd, mode) != 0) return system_error(what + ": cannot set its mode", errno);
  return file;
}

Result<ShmFile> ShmFile::create(const NewObject& object, const std::string& what, std::string_view directory) {
  auto created = create_unnamed(object.mode, what, directory);
  if (!created) return created.status();
  const int fd = created->fd();
  if (object.group && ::fchown(fd, static_cast<uid_t>(-1), *object.group) != 0) {
    const int err = errno;
    const std::string group = "'" + group_name(*object.group) + "'";
    if (err == EPERM) {
      return Status(ErrorCode::PermissionDenied,
                    what + ": cannot share it with group " + group + ": this process is not a member of it");
    }
    return system_error(what + ": cannot share it with group " + group, err);
  }
  if (::ftruncate(fd, static_cast<off_t>(object.size)) != 0) return system_error(what + ": cannot size it", errno);
  if (Status st = reserve(fd, 0, object.committed, what); !st.ok()) return st;
  return created;
}

Result<bool> ShmFile::publish_as(const std::string& name, const std::string& what, std::string_view directory) const {
  char self[64];
  std::snprintf(self, sizeof self, "/proc/self/fd/%d", fd_);
  const std::string path = shm_path(name, directory);
  if (::linkat(AT_FDCWD, self, AT_FDCWD, path.c_str(), AT_SYMLINK_FOLLOW) == 0) return true;
  if (errno == EEXIST) return false;
  return system_error(what + ": cannot name it " + path, errno);
}

Result<struct stat> ShmFile::check(const ShmKind& kind, const std::string& path, ShmUse use,
                                   const std::string& what) const {
  struct stat st {};
  if (::fstat(fd_, &st) != 0) return system_error(what + ": cannot stat " + path, errno);
  if (std::string odd = describe_non_regular(st); !odd.empty()) {
    return Status(ErrorCode::Corrupted, what + ": " + path + " is " + odd + ", not a " + std::string(kind.noun));
  }
  if (use == ShmUse::Join) {
    if (Status st_join = may_join(st, what); !st_join.ok()) return st_join;
  }
  return st;
}

Result<OpenedObject> open_object(const ShmKind& kind, const std::string& name, bool writable, ShmUse use,
                                 const std::string& what, std::string_view directory) {
  auto file = ShmFile::open_existing(kind, name, writable, what, directory);
  if (!file) return file.status();
  auto st = file->check(kind, shm_path(name, directory), use, what);
  if (!st) return st.status();
  return OpenedObject{std::move(*file), *st};
}

Status reserve(int fd, std::uint64_t offset, std::uint64_t length, const std::string& what) {
  if (length == 0) return Status::success();
  // Two reservations that each fit alone but not together would both fail: each takes pages until
  // the other's leave none, then gives its own back. One at a time (an advisory lock on the
  // directory, among cerulion processes), one of them succeeds. The lock is never waited for
  // long: anyone may take it, and a reservation does not depend on it to be correct.
  ReservationTurn turn;
  int rc;
  do {
    rc = ::fallocate(fd, 0, static_cast<off_t>(offset), static_cast<off_t>(length));
  } while (rc != 0 && errno == EINTR);
  if (rc == 0) return Status::success();
  const int err = errno;
  if (err == ENOSPC || err == ENOMEM || err == EFBIG) {
    std::string free_text;
    struct statvfs vfs {};
    if (::fstatvfs(fd, &vfs) == 0) {
      free_text = ", " + amount(std::uint64_t(vfs.f_bavail) * vfs.f_frsize) + " free";
    }
    return Status(ErrorCode::OutOfMemory, what + ": " + kShmDirectory + " is full: " + amount(length) +
                                              " needed" + free_text);
  }
  return system_error(what + ": cannot reserve memory in " + kShmDirectory, err);
}

bool read_unmapped(int fd, void* out, std::size_t length, std::uint64_t offset) {
  auto* bytes = static_cast<char*>(out);
  std::size_t done = 0;
  while (done < length) {
    ssize_t n = ::pread(fd, bytes + done, length - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

bool fully_written(int fd, std::uint64_t length) {
  const off_t hole = ::lseek(fd, 0, SEEK_HOLE);
  return hole >= 0 && static_cast<std::uint64_t>(hole) >= length;
}

MappedRegion::MappedRegion(MappedRegion&& other) noexcept : address_(other.address_), length_(other.length_) {
  other.address_ = nullptr;
  other.length_ = 0;
}

MappedRegion& MappedRegion::operator=(MappedRegion&& other) noexcept {
  if (this != &other) {
    if (address_) ::munmap(address_, length_);
    address_ = other.address_;
    length_ = other.length_;
    other.address_ = nullptr;
    other.length_ = 0;
  }
  return *this;
}

MappedRegion::~MappedRegion() {
  if (address_) ::munmap(address_, length_);
}

Result<MappedRegion> MappedRegion::map(int fd, std::uint64_t offset, std::uint64_t length, bool writable,
                                       const std::string& what) {
  void* address = ::mmap(nullptr, length, writable ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, fd,
                         static_cast<off_t>(offset));
  if (address == MAP_FAILED) {
    // mmap's ENOMEM is this process's address space or its count of mappings, not /dev/shm.
    if (errno == ENOMEM) {
      return Status(ErrorCode::OutOfMemory, what + ": cannot map " + std::to_string(length) +
                                                " bytes of the segment: this process is out of address space or of "
                                                "mappings (vm.max_map_count)");
    }
    return system_error(what + ": cannot map the segment", errno);
  }
  MappedRegion region;
  region.address_ = address;
  region.length_ = length;
  return region;
}

Status system_error(const std::string& what, int err) {
  if (err == EACCES || err == EPERM) {
    return {ErrorCode::PermissionDenied, what + ": permission denied (the segment belongs to another user)"};
  }
  if (err == ENOSPC || err == ENOMEM) {
    return {ErrorCode::OutOfMemory, what + ": " + errno_text(err) + " (is " + kShmDirectory + " full?)"};
  }
  return {ErrorCode::SystemError, what + ": " + errno_text(err)};
}

}  // namespace cerulion::detail
