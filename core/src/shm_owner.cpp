// SPDX-License-Identifier: Apache-2.0
#include "cerulion/core/detail/shm_owner.hpp"

#include <grp.h>
#include <pwd.h>
#include <unistd.h>
#include <vector>

namespace cerulion::detail {

std::string describe_non_regular(const struct stat& st) {
  switch (st.st_mode & S_IFMT) {
    case S_IFREG: return {};
    case S_IFIFO: return "a FIFO";
    case S_IFDIR: return "a directory";
    case S_IFLNK: return "a symbolic link";
    case S_IFSOCK: return "a socket";
    case S_IFCHR: return "a character device";
    case S_IFBLK: return "a block device";
    default: return "not a regular file";
  }
}

std::string user_name(uid_t uid) {
  std::vector<char> buffer(4096);
  passwd entry {};
  passwd* found = nullptr;
  if (::getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &found) == 0 && found) return found->pw_name;
  return "uid " + std::to_string(uid);
}

std::string group_name(gid_t gid) {
  std::vector<char> buffer(4096);
  group entry {};
  group* found = nullptr;
  if (::getgrgid_r(gid, &entry, buffer.data(), buffer.size(), &found) == 0 && found) return found->gr_name;
  return "gid " + std::to_string(gid);
}

Result<gid_t> group_id(const std::string& name) {
  std::vector<char> buffer(16384);
  group entry {};
  group* found = nullptr;
  if (::getgrnam_r(name.c_str(), &entry, buffer.data(), buffer.size(), &found) == 0 && found) return found->gr_gid;
  return Status(ErrorCode::InvalidArgument, "no group named '" + name + "'");
}

bool in_group(gid_t gid) {
  if (::getegid() == gid) return true;
  int n = ::getgroups(0, nullptr);
  if (n <= 0) return false;
  std::vector<gid_t> groups(static_cast<std::size_t>(n));
  n = ::getgroups(n, groups.data());
  for (int i = 0; i < n; ++i) {
    if (groups[static_cast<std::size_t>(i)] == gid) return true;
  }
  return false;
}

bool is_foreign(const struct stat& st) {
  if (st.st_uid == ::geteuid()) return false;
  return (st.st_mode & 0060) != 0060 || !in_group(st.st_gid);
}

Status may_join(const struct stat& st, const std::string& what) {
  if (!is_foreign(st)) return Status::success();
  std::string shared = (st.st_mode & 0060) == 0060
                           ? "shared only with group '" + group_name(st.st_gid) + "', which this process is not in"
                           : "private to its owner";
  return Status(ErrorCode::PermissionDenied,
                what + " belongs to user '" + user_name(st.st_uid) + "' and is " + shared + "; not joining it");
}

}  // namespace cerulion::detail
