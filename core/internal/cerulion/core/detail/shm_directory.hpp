// SPDX-License-Identifier: Apache-2.0
#pragma once
// Not the user API, and not installed: the objects of a kind in /dev/shm, listed one way for every
// kind, small objects (a bridge's status) written and read whole (shm_file.hpp), and the status
// files running processes keep (a bridge's, a view server's), listed with those of dead ones removed.

#include <cstddef>
#include <cstdint>
#include <functional>
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

/// The status file a running process of `kind` keeps for `domain` (a bridge, a view server): it
/// replaces it once a second and removes it when it stops. "<directory>/<prefix><domain>.<pid>.json".
std::string process_file_path(const ShmKind& kind, std::string_view directory, std::string_view domain,
                              std::uint32_t pid);
/// Replaces a status file with `text`, complete before visible (replace_small_object), readable by
/// its user only (mode 0600), like every other object in /dev/shm.
[[nodiscard]] Status write_process_file(const ShmKind& kind, const std::string& path, std::string_view text);
/// `written` when it is a failure other than `last_failure`, else a success; `last_failure` becomes
/// its message ("" after a success). A process that replaces its status file once a second thus
/// says a lasting failure once, and again only after the file was written meanwhile.
Status new_failure(const Status& written, std::string& last_failure);
/// The text of a status file: NotFound, PermissionDenied (another user's), Corrupted (not a regular
/// file, or far larger than a status). Messages begin "<noun> <path>".
Result<std::string> read_process_file(const ShmKind& kind, const std::string& path);

/// A live process's status file.
struct ProcessFile {
  std::string path;
  std::uint32_t pid = 0;
};
/// The status files of a kind in a domain whose processes are alive, and what stands in place of one.
struct ProcessFiles {
  std::vector<ProcessFile> files;     ///< by pid
  std::vector<std::string> problems;  ///< "/dev/shm/... is a FIFO, not a bridge status file"
};
/// Every status file of `kind` in `domain` (process_file_path's names) whose process is alive. The
/// files of dead processes (one killed with -9) are removed on the way, when ours to remove; a
/// copy being written and names that are not "<pid>.json" are passed over. SystemError when
/// `directory` cannot be read.
Result<ProcessFiles> list_process_files(const ShmKind& kind, std::string_view domain, std::string_view directory);
/// Reads each file list_process_files finds and hands its text to `take`, which parses and keeps
/// it. The problems: list_process_files's, a file that cannot be read (one gone meanwhile is not),
/// and one `take` refuses ("<noun> <path>: <its message>").
Result<std::vector<std::string>> read_process_files(
    const ShmKind& kind, std::string_view domain, std::string_view directory,
    const std::function<Status(const std::string& text)>& take);

/// What a kind's status is read from its text with (status_from_json): InvalidArgument when not one.
template <class T>
using StatusParser = Result<T> (*)(std::string_view text);
/// One status file, parsed: read_process_file's errors, Corrupted "<noun> <path>: <why>" when it is
/// not a status.
template <class T>
Result<T> read_process_status(const ShmKind& kind, const std::string& path, StatusParser<T> parse) {
  auto text = read_process_file(kind, path);
  if (!text) return text.status();
  auto status = parse(*text);
  if (!status) return Status(ErrorCode::Corrupted, std::string(kind.noun) + " " + path + ": " + status.message());
  return status;
}
/// The statuses of a kind's live processes in `domain` (T has a `domain`), by pid, and the problems
/// read_process_files finds.
template <class T>
struct ProcessStatuses {
  std::vector<T> statuses;
  std::vector<std::string> problems;
};
template <class T>
Result<ProcessStatuses<T>> read_process_statuses(const ShmKind& kind, std::string_view domain,
                                                 std::string_view directory, StatusParser<T> parse) {
  ProcessStatuses<T> found;
  auto problems = read_process_files(kind, domain, directory, [&](const std::string& text) {
    auto status = parse(text);
    if (status && status->domain == domain) found.statuses.push_back(std::move(*status));
    return status.status();
  });
  if (!problems) return problems.status();
  found.problems = std::move(*problems);
  return found;
}

}  // namespace cerulion::detail
