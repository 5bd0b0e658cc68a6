// SPDX-License-Identifier: Apache-2.0
// A topic's declared TopicType: four length-prefixed strings after the payload slots, written once
// under the topic lock and read (checksum first) by anyone who asks. Never on the message path.

#include <cerrno>
#include <cstring>
#include <unistd.h>

#include "cerulion/core/detail/topic_type_bytes.hpp"
#include "segment.hpp"

namespace cerulion::detail {
namespace {

std::uint32_t checksum(const std::string& bytes) { return fnv1a(bytes.data(), bytes.size()); }

bool write_all(int fd, const std::string& bytes, std::uint64_t offset) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::pwrite(fd, bytes.data() + done, bytes.size() - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

Result<std::optional<TopicType>> TopicSegment::declared_type() const {
  if (control_->type_state.load(std::memory_order_acquire) == 0) return std::optional<TopicType>{};
  const std::uint32_t size = control_->type_bytes;
  const std::string what = "topic '" + topic_ + "'";
  if (size > kTypeCapacity) {
    return Status(ErrorCode::Corrupted, what + ": its declared type is out of bounds (damaged)", Subject::topic(topic_));
  }
  std::string bytes(size, '\0');
  if (!read_unmapped(fd(), bytes.data(), size, config_->type_offset) || checksum(bytes) != control_->type_crc) {
    return Status(ErrorCode::Corrupted, what + ": its declared type fails its checksum (damaged)", Subject::topic(topic_));
  }
  auto type = decode_topic_type(bytes);
  if (!type) {
    return Status(ErrorCode::Corrupted, what + ": its declared type does not read back (damaged)", Subject::topic(topic_));
  }
  return type;
}

Status TopicSegment::declare_type(const TopicType& type) {
  const std::string what = "topic '" + topic_ + "'";
  if (Status st = lock(); !st.ok()) return st;
  struct Unlock {
    TopicSegment* segment;
    ~Unlock() { segment->unlock(); }
  } unlock_on_return{this};
  auto current = declared_type();
  if (!current) return current.status();
  if (*current) {
    if (**current == type) return Status::success();
    // "carries json, schema Imu (...), not json" would read as a contradiction: where only the
    // schema differs, it is the schema that is named.
    if ((*current)->message_encoding == type.message_encoding) {
      return Status(ErrorCode::Incompatible,
                    what + " carries " + type.message_encoding + " with " + describe((*current)->schema) + ", not with " +
                        describe(type.schema),
                    Subject::topic(topic_));
    }
    return Status(ErrorCode::Incompatible, what + " carries " + describe(**current) + ", not " + describe(type),
                  Subject::topic(topic_));
  }
  const std::string bytes = encode_topic_type(type);
  if (bytes.size() > kTypeCapacity) {
    return Status(ErrorCode::InvalidArgument, what + ": its type takes " + std::to_string(bytes.size()) +
                                                  " bytes, more than a topic holds",
                  Subject::topic(topic_));
  }
  if (Status st = reserve(fd(), config_->type_offset, bytes.size(), what + ": cannot store its type"); !st.ok()) {
    return st;
  }
  if (!write_all(fd(), bytes, config_->type_offset)) return system_error(what + ": cannot store its type", errno);
  control_->type_bytes = static_cast<std::uint32_t>(bytes.size());
  control_->type_crc = checksum(bytes);
  control_->type_state.store(1, std::memory_order_release);
  return Status::success();
}

}  // namespace cerulion::detail
