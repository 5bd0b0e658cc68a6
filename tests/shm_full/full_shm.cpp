// SPDX-License-Identifier: Apache-2.0
#include "full_shm.hpp"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/statvfs.h>
#include <unistd.h>

namespace cerulion::test {

bool mount_small_shm(std::uint64_t mebibytes) {
  ::umount2("/dev/shm", MNT_DETACH);  // the previous test's, if any (fails harmlessly the first time)
  const std::string options = "size=" + std::to_string(mebibytes) + "m,mode=1777";
  return ::mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, options.c_str()) == 0;
}

std::uint64_t shm_free_bytes() {
  struct statvfs vfs {};
  if (::statvfs("/dev/shm", &vfs) != 0) return 0;
  return std::uint64_t(vfs.f_bavail) * vfs.f_frsize;
}

void fill_shm(std::uint64_t leave, const std::string& name) {
  const std::uint64_t free_bytes = shm_free_bytes();
  if (free_bytes <= leave) return;
  int fd = ::open(("/dev/shm/" + name).c_str(), O_CREAT | O_RDWR, 0600);
  if (fd < 0) return;
  // Page by page from the largest request down, so that the last few pages are taken as well.
  std::uint64_t want = free_bytes - leave;
  off_t end = ::lseek(fd, 0, SEEK_END);
  for (std::uint64_t step = want; step >= 4096 && want >= 4096; step /= 2) {
    while (want >= step && ::fallocate(fd, 0, end, static_cast<off_t>(step)) == 0) {
      end += static_cast<off_t>(step);
      want -= step;
    }
  }
  ::close(fd);
}

}  // namespace cerulion::test
