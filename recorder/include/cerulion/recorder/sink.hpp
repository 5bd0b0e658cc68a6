// SPDX-License-Identifier: Apache-2.0
#pragma once
// Where a Writer's bytes go: a file, or memory (so recordings and dumps are built and tested
// without files). A sink sees the bytes in order, exactly once.

#include <memory>
#include <span>
#include <string>

#include "cerulion/recorder/errors.hpp"
#include "cerulion/recorder/types.hpp"

namespace cerulion::recorder {

/// Destination of a writer's bytes.
class ByteSink {
 public:
  virtual ~ByteSink() = default;
  /// Appends all of `bytes`, or fails saying why (the writer then stops).
  [[nodiscard]] virtual Status write(std::span<const std::byte> bytes) = 0;
  /// Called once, after the last write of a complete file.
  [[nodiscard]] virtual Status close() = 0;
  /// Called instead of close() when the file will not be completed (an error, a cancelled dump).
  virtual void abandon() noexcept {}
  /// What the sink writes to, for messages ("run.mcap", "memory").
  virtual const std::string& name() const noexcept = 0;
};

/// How a file sink creates its file.
struct FileSinkOptions {
  /// Replace an existing file (default: refuse with InvalidArgument).
  bool overwrite = false;
  /// The file appears under its name only once close() succeeds; abandon() or a failure leaves
  /// nothing behind (for dumps). Default false: the file is there from the start and keeps every
  /// complete chunk if the process dies (for long recordings).
  bool appear_on_close = false;
};

/// A sink writing `path`. InvalidArgument (exists), NotFound, PermissionDenied or SystemError.
Result<std::unique_ptr<ByteSink>> open_file_sink(const std::string& path, FileSinkOptions options = {});

/// A sink appending to a caller-owned buffer, which must outlive it.
class MemorySink final : public ByteSink {
 public:
  explicit MemorySink(ByteVector& target) : target_(target) {}
  Status write(std::span<const std::byte> bytes) override {
    target_.insert(target_.end(), bytes.begin(), bytes.end());
    return {};
  }
  Status close() override { return {}; }
  const std::string& name() const noexcept override { return name_; }

 private:
  ByteVector& target_;
  std::string name_ = "memory";
};

}  // namespace cerulion::recorder
