// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a TopicSegment maps of its file: shared by the code that opens a segment and the code that
// maps its payload generations as they appear.

#include <vector>

#include "segment.hpp"

namespace cerulion::detail {

struct TopicSegment::Mapping {
  ShmFile file;
  MappedRegion header;  ///< [0, header_bytes): Config, Control, participants, ring, slot words
  /// One per payload generation, unmapped until a message (or a loan) needs it; none at all for
  /// Inspect and Maintain.
  std::vector<MappedRegion> generations;
};

}  // namespace cerulion::detail
