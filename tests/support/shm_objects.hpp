// SPDX-License-Identifier: Apache-2.0
#pragma once
// Every kind of object cerulion keeps in /dev/shm (topic segments, wait-set bells, the log of
// removed topics, flashback stores, bridge and view status files), described one way, so that
// each hostile case (shm_hostile.cpp; a full /dev/shm in tests/shm_full) is written once and
// applied to every kind.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cerulion/core/status.hpp"

namespace cerulion::test {

/// A sound object made for a test, and what keeps it in being (a publisher, a keeper's store).
struct MadeObject {
  std::string path;
  std::shared_ptr<void> keep;
};

/// What making an object does when something is already in its place.
enum class InItsPlace {
  Refused,   ///< it fails, saying what is there (a topic, a store)
  Replaced,  ///< it renames its file over a file or a link, never into a directory (a status file)
  Avoided,   ///< it never comes to that: its name is chosen at random (a bell)
};

struct ShmObjectKind {
  std::string noun;    ///< as errors name it: "... is a FIFO, not a <noun>"
  std::string prefix;  ///< how its file names begin
  /// Where the next object goes, of a domain of the test's own: a hostile entry is planted there.
  /// (A bell's name is chosen at random: this is one its opener would be asked to open.)
  std::string path;
  InItsPlace in_its_place = InItsPlace::Refused;
  /// Makes a sound object at `path` (a bell: under a name of its own), as its users do.
  std::function<Result<MadeObject>()> make;
  /// Opens the object at `path` as its users do: joins it, rings it, reads it.
  std::function<Status(const std::string& path)> open;
  /// The problems the kind's own listing reports in its domain (none: the kind has no listing).
  std::function<std::vector<std::string>()> listing_problems;
};

/// The kinds, each for a domain of the test's own (defined in shm_kinds_*.cpp, one library per
/// component, so a test links only what it tests).
ShmObjectKind topic_segment_kind();
ShmObjectKind bell_kind();
ShmObjectKind removed_log_kind();
ShmObjectKind flashback_store_kind();
ShmObjectKind bridge_status_kind();
ShmObjectKind view_status_kind();

/// The hostile cases, one SECTION each, against `kind`: a FIFO, a symbolic link or a directory in
/// its place, another user's object (root only: it needs chown), random bytes in its header. Each
/// is refused with one clear line or reported, without blocking, following or crashing.
void check_hostile_entries(const ShmObjectKind& kind);

}  // namespace cerulion::test
