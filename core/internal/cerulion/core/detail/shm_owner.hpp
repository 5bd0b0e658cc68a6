// SPDX-License-Identifier: Apache-2.0
#pragma once
// Not the user API, and not installed: the one rule for what a file in /dev/shm may be and whose
// it may be, for every kind of object (shm_file.hpp).

#include <string>
#include <sys/stat.h>
#include <sys/types.h>

#include "cerulion/core/status.hpp"

namespace cerulion::detail {

/// "" when `st` is a regular file; otherwise what it is ("a FIFO", "a directory", ...).
std::string describe_non_regular(const struct stat& st);

/// Ok when this process may use an object with these attributes: it belongs to our effective
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

}  // namespace cerulion::detail
