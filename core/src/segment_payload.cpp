// SPDX-License-Identifier: Apache-2.0
// The payload generations of a topic segment (layout.hpp): mapping them as messages name them,
// extending the file when a publisher needs a wider one, and committing each slot's pages.

#include <algorithm>
#include <cerrno>
#include <fcntl.h>
#include <string>
#include <sys/stat.h>

#include "segment.hpp"
#include "segment_mapping.hpp"

namespace cerulion::detail {

bool TopicSegment::map_generation(std::uint32_t generation) {
  auto& regions = mapping_->generations;
  if (generation >= regions.size()) {
    map_failure_ = Status(ErrorCode::Corrupted, "topic '" + topic_ + "': payload generation " +
                                                    std::to_string(generation) + " of " +
                                                    std::to_string(regions.size()),
                          Subject::topic(topic_));
    return false;
  }
  if (regions[generation].address() != nullptr) return true;
  const std::uint64_t offset = generation_offset(plan_, generation);
  const std::uint64_t bytes = generation_bytes(plan_, generation);
  // The publisher that needed it extended the file first: a shorter file is a damaged one, and
  // touching a page past its end would fault.
  struct stat st {};
  if (::fstat(fd(), &st) != 0) {
    map_failure_ = system_error("topic '" + topic_ + "': cannot stat its segment", errno).about(Subject::topic(topic_));
    return false;
  }
  if (static_cast<std::uint64_t>(st.st_size) < offset + bytes) {
    map_failure_ = Status(ErrorCode::Corrupted, "topic '" + topic_ + "': payload generation " +
                                                    std::to_string(generation) + " lies past the end of its segment",
                          Subject::topic(topic_));
    return false;
  }
  auto region = MappedRegion::map(fd(), offset, bytes, writable_payloads_, "topic '" + topic_ + "'");
  if (!region) {
    map_failure_ = region.status();
    return false;
  }
  regions[generation] = std::move(*region);
  return true;
}

void TopicSegment::make_current(std::uint32_t generation) {
  generation_ = generation;
  data_ = static_cast<std::byte*>(mapping_->generations[generation].address());
  stride_ = generation_stride(plan_, generation);
}

std::byte* TopicSegment::payload_elsewhere(std::uint32_t generation, std::uint32_t index, std::uint64_t size) {
  if (!map_generation(generation)) return nullptr;
  const std::uint64_t stride = generation_stride(plan_, generation);
  if (size > stride) return nullptr;
  // Messages come from the newest generation once their publishers have moved to it: make it the
  // one the fast path expects.
  if (generation > generation_) make_current(generation);
  return static_cast<std::byte*>(mapping_->generations[generation].address()) + std::uint64_t(index) * stride;
}

Status TopicSegment::payload_failure(std::uint32_t generation, std::uint64_t size) const {
  if (generation < mapping_->generations.size() && mapping_->generations[generation].address() != nullptr) {
    return Status(ErrorCode::Corrupted, "topic '" + topic_ + "': a message of " + std::to_string(size) +
                                            " bytes does not fit its slot in payload generation " +
                                            std::to_string(generation),
                  Subject::topic(topic_));
  }
  return map_failure_;
}

Status TopicSegment::use_generation_for(std::uint64_t size) {
  const std::uint32_t generation = generation_for(plan_, size);
  const std::uint64_t end = generation_offset(plan_, generation) + generation_bytes(plan_, generation);
  struct stat st {};
  if (::fstat(fd(), &st) != 0) return system_error("topic '" + topic_ + "': cannot stat its segment", errno);
  // Committing the generation's last page extends the file to hold all of it. Unlike ftruncate it
  // never shrinks the file, so publishers extending it at once need no lock.
  if (static_cast<std::uint64_t>(st.st_size) < end) {
    if (Status s = reserve(fd(), end - kPageBytes, kPageBytes, "topic '" + topic_ + "': cannot loan " +
                                                                   std::to_string(size) + " bytes");
        !s.ok()) {
      return s;
    }
  }
  if (!map_generation(generation)) return map_failure_;
  make_current(generation);
  return Status::success();
}

Status TopicSegment::reserve_payload(std::uint32_t generation, std::uint32_t index, std::uint64_t from,
                                     std::uint64_t to) {
  const std::uint64_t slot = generation_offset(plan_, generation) + std::uint64_t(index) * generation_stride(plan_, generation);
  const std::uint64_t begin = (slot + from) / kPageBytes * kPageBytes;
  const std::uint64_t end = round_up(slot + to, kPageBytes);
  return reserve(fd(), begin, end - begin, "topic '" + topic_ + "': cannot loan " + std::to_string(to) + " bytes");
}

void TopicSegment::release_payload(std::uint32_t generation, std::uint32_t index, std::uint64_t bytes) {
  if (generation >= plan_.generations || bytes == 0) return;
  const std::uint64_t stride = generation_stride(plan_, generation);
  const std::uint64_t slot = generation_offset(plan_, generation) + std::uint64_t(index) * stride;
  // Only pages wholly this slot's: a page shared with a neighbour holds the neighbour's message.
  const std::uint64_t begin = round_up(slot, kPageBytes);
  const std::uint64_t end = std::min(round_up(slot + bytes, kPageBytes), (slot + stride) / kPageBytes * kPageBytes);
  if (end <= begin) return;
  // Best effort: a failure leaves the memory committed, never a message damaged.
  (void)::fallocate(fd(), FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(begin),
                    static_cast<off_t>(end - begin));
}

}  // namespace cerulion::detail
