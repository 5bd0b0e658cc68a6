// SPDX-License-Identifier: Apache-2.0
#pragma once
// Not the user API, and not installed: the objects of a kind in /dev/shm, listed one way for every
// kind, and small objects (a bridge's status) written and read whole (shm_file.hpp).

#include <cstddef>
#include <string>
#include <string_view>
#include <sys/stat.h>
#include <sys/types.h>
#include <vector>

#include "cerulion/core/detail/shm_file.hpp"

namespace cerulion::detail {

/// One entry of a directory listing, as found (lstat: a link is not followed).
struct ShmEntry {
  std::string name;         ///< the file name
  std::string path;         ///< directory + "/" + name
  struct stat st {};
  std::string not_regular;  ///< "" for a regular file; else what it is ("a FIFO")
  std::string problem;      ///< "" for a regular file; else "<path> is a FIFO, not a <noun>"
};

/// The entries of `directory` whose names start with `prefix` (which begins with kind.prefix; the
/// kind's own prefix when empty), sorted by name. Entries that vanish meanwhile are left out.
std::vector<ShmEntry> list_objects(const ShmKind& kind, std::string_view prefix = {},
                                   std::string_view directory = kShmDirectory);

/// Replaces <directory>/<name> with `bytes`, complete before visible: written to a new unnamed
/// file (its memory reserved first), named aside under a name nobody can guess, then renamed over
/// `name`, which may be anything but a directory (a link is replaced, never followed). Nothing is
/// left behind on failure; a full /dev/shm is OutOfMemory.
Status replace_small_object(const ShmKind& kind, const std::string& name, std::string_view bytes, mode_t mode,
                            const std::string& what, std::string_view directory = kShmDirectory);

/// The whole of a small object, opened for use (open_object, ShmUse::Join); Corrupted when it is
/// larger than `limit` bytes.
Result<std::string> read_small_object(const ShmKind& kind, const std::string& name, std::size_t limit,
                                      const std::string& what, std::string_view directory = kShmDirectory);

}  // namespace cerulion::detail
