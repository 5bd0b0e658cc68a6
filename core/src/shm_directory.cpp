// SPDX-License-Identifier: Apache-2.0
#include "cerulion/core/detail/shm_directory.hpp"

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <cstdio>
#include <dirent.h>
#include <memory>
#include <sys/random.h>
#include <unistd.h>

#include "cerulion/core/detail/shm_owner.hpp"

namespace cerulion::detail {
namespace {

/// Far more than a status of thousands of topics takes: a file larger than this is not one.
constexpr std::size_t kLargestProcessFile = 16u << 20;

/// A name for the aside copy that nobody can have planted in advance.
std::string aside_name(const std::string& name) {
  std::uint64_t nonce = 0;
  if (::getrandom(&nonce, sizeof nonce, GRND_NONBLOCK) != static_cast<ssize_t>(sizeof nonce)) {
    nonce = static_cast<std::uint64_t>(::getpid()) * 0x9e3779b97f4a7c15ull ^ reinterpret_cast<std::uintptr_t>(&nonce);
  }
  char suffix[32];
  std::snprintf(suffix, sizeof suffix, ".%016" PRIx64 ".tmp", nonce);
  return name + suffix;
}

}  // namespace

std::vector<ShmEntry> list_objects(const ShmKind& kind, std::string_view prefix, std::string_view directory) {
  if (prefix.empty()) prefix = kind.prefix;
  std::vector<ShmEntry> entries;
  std::unique_ptr<DIR, int (*)(DIR*)> dir(::opendir(std::string(directory).c_str()), ::closedir);
  if (!dir) return entries;
  while (dirent* e = ::readdir(dir.get())) {
    std::string_view name = e->d_name;
    if (!name.starts_with(prefix)) continue;
    ShmEntry entry;
    entry.name = std::string(name);
    entry.path = shm_path(name, directory);
    if (::lstat(entry.path.c_str(), &entry.st) != 0) continue;  // gone meanwhile
    entry.not_regular = describe_non_regular(entry.st);
    if (!entry.not_regular.empty()) {
      entry.problem = entry.path + " is " + entry.not_regular + ", not a " + std::string(kind.noun);
    }
    entries.push_back(std::move(entry));
  }
  std::sort(entries.begin(), entries.end(), [](const ShmEntry& a, const ShmEntry& b) { return a.name < b.name; });
  return entries;
}

Status replace_small_object(const ShmKind& kind, const std::string& name, std::string_view bytes, mode_t mode,
                            const std::string& what, std::string_view directory) {
  auto file = ShmFile::create({.mode = mode, .group = std::nullopt, .size = bytes.size(), .committed = bytes.size()}, what, directory);
  if (!file) return file.status();
  for (std::size_t done = 0; done < bytes.size();) {
    const ssize_t n = ::pwrite(file->fd(), bytes.data() + done, bytes.size() - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return system_error(what + ": cannot write it", n < 0 ? errno : ENOSPC);
    done += static_cast<std::size_t>(n);
  }
  // A file cannot be renamed over another without a name of its own first: one nobody can guess,
  // so that nothing planted can be in its place.
  for (int attempt = 0; attempt < 8; ++attempt) {
    const std::string aside = aside_name(name);
    auto named = file->publish_as(aside, what, directory);
    if (!named) return named.status();
    if (!*named) continue;
    const std::string aside_path = shm_path(aside, directory), path = shm_path(name, directory);
    if (::rename(aside_path.c_str(), path.c_str()) != 0) {
      const int err = errno;
      ::unlink(aside_path.c_str());
      if (err == EISDIR || err == ENOTEMPTY || err == EEXIST) {
        return Status(ErrorCode::Corrupted, what + ": " + path + " is a directory, not a " + std::string(kind.noun));
      }
      return system_error(what + ": cannot replace " + path, err);
    }
    return Status::success();
  }
  return Status(ErrorCode::SystemError, what + ": every name tried for its copy was taken");
}

Result<std::string> read_small_object(const ShmKind& kind, const std::string& name, std::size_t limit,
                                      const std::string& what, std::string_view directory) {
  auto opened = open_object(kind, name, false, ShmUse::Join, what, directory);
  if (!opened) return opened.status();
  const auto size = static_cast<std::size_t>(opened->st.st_size);
  if (size > limit) {
    return Status(ErrorCode::Corrupted, what + ": " + shm_path(name, directory) + " is " + std::to_string(size) +
                                            " bytes, more than a " + std::string(kind.noun) + " holds");
  }
  std::string bytes(size, '\0');
  if (!read_unmapped(opened->file.fd(), bytes.data(), size, 0)) {
    return Status(ErrorCode::Corrupted, what + ": " + shm_path(name, directory) + " changed while it was read");
  }
  return bytes;
}

std::string process_file_path(const ShmKind& kind, std::string_view directory, std::string_view domain,
                              std::uint32_t pid) {
  return std::string(directory) + "/" + std::string(kind.prefix) + std::string(domain) + "." + std::to_string(pid) +
         ".json";
}

Status write_process_file(const ShmKind& kind, const std::string& path, std::string_view text) {
  const std::filesystem::path where(path);
  return replace_small_object(kind, where.filename().string(), text, 0600, std::string(kind.noun) + " " + path,
                              where.parent_path().string());
}

Status new_failure(const Status& written, std::string& last_failure) {
  if (written.ok()) {
    last_failure.clear();
    return {};
  }
  if (written.message() == last_failure) return {};
  last_failure = written.message();
  return written;
}

Result<std::string> read_process_file(const ShmKind& kind, const std::string& path) {
  const std::filesystem::path where(path);
  return read_small_object(kind, where.filename().string(), kLargestProcessFile, std::string(kind.noun) + " " + path,
                           where.parent_path().string());
}

Result<ProcessFiles> list_process_files(const ShmKind& kind, std::string_view domain, std::string_view directory) {
  if (::access(std::string(directory).c_str(), R_OK | X_OK) != 0) {
    return Status(ErrorCode::SystemError, "cannot read " + std::string(directory) + ": " + std::strerror(errno));
  }
  ProcessFiles listing;
  const std::string prefix = std::string(kind.prefix) + std::string(domain) + ".";
  for (const auto& entry : list_objects(kind, prefix, directory)) {
    if (!entry.name.ends_with(".json")) continue;  // a copy being written (replace_small_object)
    const std::string middle = entry.name.substr(prefix.size(), entry.name.size() - prefix.size() - 5);
    if (middle.empty() || middle.size() > 10 || middle.find_first_not_of("0123456789") != std::string::npos) continue;
    const auto pid = std::stoull(middle);
    if (pid == 0 || pid > static_cast<unsigned long long>(INT32_MAX)) continue;
    if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) {
      // Its process was killed: its file goes too, if it is ours to remove.
      if (!is_foreign(entry.st)) ::unlink(entry.path.c_str());
      continue;
    }
    if (!entry.problem.empty()) {
      listing.problems.push_back(entry.problem);
      continue;
    }
    listing.files.push_back({entry.path, static_cast<std::uint32_t>(pid)});
  }
  std::sort(listing.files.begin(), listing.files.end(), [](const auto& a, const auto& b) { return a.pid < b.pid; });
  return listing;
}

Result<std::vector<std::string>> read_process_files(const ShmKind& kind, std::string_view domain,
                                                    std::string_view directory,
                                                    const std::function<Status(const std::string& text)>& take) {
  auto listing = list_process_files(kind, domain, directory);
  if (!listing) return listing.status();
  std::vector<std::string> problems = std::move(listing->problems);
  for (const auto& file : listing->files) {
    auto text = read_process_file(kind, file.path);
    if (!text) {
      if (text.code() != ErrorCode::NotFound) problems.push_back(text.message());  // else gone meanwhile
    } else if (Status st = take(*text); !st.ok()) {
      problems.push_back(std::string(kind.noun) + " " + file.path + ": " + st.message());
    }
  }
  return problems;
}

}  // namespace cerulion::detail
