// SPDX-License-Identifier: Apache-2.0
#include "cerulion/measurement/fastdds_files.hpp"

#include <ctime>
#include <dirent.h>
#include <fcntl.h>
#include <map>
#include <regex>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace cerulion::measurement {
namespace {

/// `path` opened and locked, proving that no live process holds it; -1 when someone does, or when
/// it is not a settled regular file of ours (not ours to judge).
int lock_if_free(const std::string& path, std::time_t settled_before) {
  const int fd = ::open(path.c_str(), O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return -1;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == ::geteuid() && st.st_ctime < settled_before &&
      ::flock(fd, LOCK_EX | LOCK_NB) == 0) {
    return fd;
  }
  ::close(fd);
  return -1;
}

}  // namespace

std::size_t remove_dead_fastdds_files(std::chrono::seconds settle, const std::string& dir) {
  // Segments only: a port (fastrtps_port<N>) is shared by number, and Fast DDS takes over a dead
  // one itself when a participant opens that port again. Names as Fast DDS 2.x gives them.
  static const std::regex segment_lock("^fastrtps_[0-9a-z]{16}(_el|_sl)$");
  std::map<std::string, std::vector<std::string>> segments;  // each with its lock files
  if (DIR* d = ::opendir(dir.c_str())) {
    while (const dirent* e = ::readdir(d)) {
      const std::string name = e->d_name;
      if (std::regex_match(name, segment_lock)) segments[name.substr(0, name.size() - 3)].push_back(name);
    }
    ::closedir(d);
  }
  const std::time_t settled_before = std::time(nullptr) - static_cast<std::time_t>(settle.count());
  std::size_t removed = 0;
  for (const auto& [segment, locks] : segments) {
    // Every lock is held by us while the files go, so nobody can take the segment meanwhile.
    std::vector<int> held;
    for (const auto& lock : locks) {
      const int fd = lock_if_free(dir + "/" + lock, settled_before);
      if (fd < 0) break;
      held.push_back(fd);
    }
    if (held.size() == locks.size()) {
      ::unlink((dir + "/" + segment).c_str());
      for (const auto& lock : locks) ::unlink((dir + "/" + lock).c_str());
      ++removed;
    }
    for (int fd : held) ::close(fd);
  }
  return removed;
}

}  // namespace cerulion::measurement
