// SPDX-License-Identifier: Apache-2.0
#include "cerulion/recorder/sink.hpp"

#include <cerrno>
#include <climits>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>

namespace cerulion::recorder {
namespace {

Status errno_status(const std::string& path, const char* what, int err) {
  ErrorCode code = err == ENOENT ? ErrorCode::NotFound
                   : (err == EACCES || err == EPERM || err == EROFS) ? ErrorCode::PermissionDenied
                                                                     : ErrorCode::SystemError;
  std::string text = path + ": ";
  if (what[0]) text += std::string(what) + ": ";
  text += err == ENOSPC ? "no space left on the device" : std::strerror(err);
  return Status(code, text, Subject::path(path));
}

Status exists_error(const std::string& path) {
  return Status(ErrorCode::InvalidArgument, path + " already exists", Subject::path(path));
}

class FileSink final : public ByteSink {
 public:
  FileSink(int fd, std::string path, std::string staging, FileSinkOptions options)
      : fd_(fd), path_(std::move(path)), staging_(std::move(staging)), options_(options) {}
  ~FileSink() override {
    if (fd_ >= 0) abandon();
  }

  Status write(std::span<const std::byte> bytes) override {
    if (fd_ < 0) return Status(ErrorCode::InvalidArgument, path_ + ": file is closed");
    std::size_t done = 0;
    while (done < bytes.size()) {
      ssize_t n = ::write(fd_, bytes.data() + done, bytes.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return errno_status(path_, "write", errno);
      done += static_cast<std::size_t>(n);
    }
    return {};
  }

  Status close() override {
    if (fd_ < 0) return Status(ErrorCode::InvalidArgument, path_ + ": file is closed");
    if (options_.appear_on_close && ::fsync(fd_) != 0) {
      Status st = errno_status(path_, "fsync", errno);
      abandon();
      return st;
    }
    Status st;
    if (options_.appear_on_close) st = publish();
    if (::close(fd_) != 0 && st) st = errno_status(path_, "close", errno);
    fd_ = -1;
    if (!st && !staging_.empty()) ::unlink(staging_.c_str());
    return st;
  }

  void abandon() noexcept override {
    if (fd_ < 0) return;
    ::close(fd_);
    fd_ = -1;
    // A dump that did not complete leaves nothing; a recording keeps what it wrote.
    if (options_.appear_on_close && !staging_.empty()) ::unlink(staging_.c_str());
  }

  const std::string& name() const noexcept override { return path_; }

 private:
  // Gives the finished file its name: linking the unnamed file, or renaming the staging file.
  Status publish() {
    if (staging_.empty()) {
      char proc[64];
      std::snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd_);
      if (::linkat(AT_FDCWD, proc, AT_FDCWD, path_.c_str(), AT_SYMLINK_FOLLOW) == 0) return {};
      if (errno == EEXIST && !options_.overwrite) return exists_error(path_);
      if (errno != EEXIST) return errno_status(path_, "", errno);
      // Overwriting: link under a temporary name, then rename over the old file.
      staging_ = path_ + ".partial-" + std::to_string(::getpid());
      if (::linkat(AT_FDCWD, proc, AT_FDCWD, staging_.c_str(), AT_SYMLINK_FOLLOW) != 0) {
        int err = errno;
        staging_.clear();
        return errno_status(path_, "", err);
      }
    }
    if (!options_.overwrite) {
      // link() refuses to replace, where rename() would not.
      if (::link(staging_.c_str(), path_.c_str()) != 0) {
        int err = errno;
        return err == EEXIST ? exists_error(path_) : errno_status(path_, "", err);
      }
      ::unlink(staging_.c_str());
    } else if (::rename(staging_.c_str(), path_.c_str()) != 0) {
      return errno_status(path_, "", errno);
    }
    staging_.clear();
    return {};
  }

  int fd_;
  std::string path_;
  std::string staging_;  ///< a named stand-in until close, when the directory has no unnamed files
  FileSinkOptions options_;
};

}  // namespace

Result<std::unique_ptr<ByteSink>> open_file_sink(const std::string& path, FileSinkOptions options) {
  if (path.empty()) return Status(ErrorCode::InvalidArgument, "no file name given");
  if (!options.appear_on_close) {
    int flags = O_WRONLY | O_CREAT | O_CLOEXEC | O_NOCTTY | (options.overwrite ? O_TRUNC : O_EXCL);
    int fd = ::open(path.c_str(), flags, 0644);
    if (fd < 0) return errno == EEXIST ? exists_error(path) : errno_status(path, "", errno);
    return std::unique_ptr<ByteSink>(std::make_unique<FileSink>(fd, path, "", options));
  }
  struct stat st {};
  if (!options.overwrite && ::lstat(path.c_str(), &st) == 0) return exists_error(path);
  std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (parent.empty()) parent = ".";
  // An unnamed file in the target directory, linked under its name once complete.
  int fd = ::open(parent.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
  std::string staging;
  if (fd < 0) {
    if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL) return errno_status(path, "", errno);
    staging = path + ".partial-" + std::to_string(::getpid());
    fd = ::open(staging.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY, 0644);
    if (fd < 0) return errno_status(path, "", errno);
  }
  return std::unique_ptr<ByteSink>(std::make_unique<FileSink>(fd, path, staging, options));
}

}  // namespace cerulion::recorder
