// SPDX-License-Identifier: Apache-2.0
#pragma once
// Dumping a store: an indexed MCAP file in the profile of `cerulion record`, messages in log-time
// order, closed chunks copied as they are (no recompression), the open chunk compressed once, and a
// Metadata record "flashback" saying why, with what note, over which window, and per-topic counts.
// A topic with no message in the dump (one gone before the window) has no channel in it. Works
// while the keeper runs, after it was killed, and after the publishers died; each dump is
// recorded in the store (StoreStatus::last_dump).
//
//   auto store = cerulion::flashback::Store::open("default", "default");
//   auto dumped = cerulion::flashback::dump_to_file(*store, "crash.mcap", {.note = "e-stop"});

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cerulion/core/status.hpp"
#include "cerulion/flashback/store.hpp"
#include "cerulion/recorder/profile.hpp"
#include "cerulion/recorder/sink.hpp"

namespace cerulion::flashback {

/// What to dump and why.
struct DumpOptions {
  /// Only chunks holding messages of the last this many seconds (0: everything held). Whole
  /// chunks: a few older messages may come along.
  double last_s = 0;
  /// "request", "signal", "topic", "death", "stall".
  std::string trigger = "request";
  std::string details;
  std::string note;
  /// Also take from each kept topic's ring, as a passive tap in this process at its priority, what
  /// the store does not hold yet (a keeper behind, starved of CPU, or killed): every message
  /// published before the dump began is then in it or counted lost (overwritten in the ring).
  /// Off: what the store holds, alone.
  bool from_topics = true;
};

/// What a dump wrote.
struct DumpSummary {
  std::string path;
  std::uint64_t messages = 0;
  std::uint64_t chunks = 0;
  std::uint64_t file_bytes = 0;
  std::uint64_t window_start_ns = 0;
  std::uint64_t window_end_ns = 0;
  /// Chunks evicted by the keeper while the dump copied them, or whose bytes failed their CRC:
  /// left out whole.
  std::uint64_t chunks_left_out = 0;
  /// Messages taken from the topics' rings (DumpOptions::from_topics), included in `messages`.
  std::uint64_t from_topics = 0;
  /// What was left out or changed because the store is damaged, one line each saying what and why
  /// (e.g. "chunk 12: its bytes fail their CRC"); the dump's metadata says it too. Empty for a
  /// sound store.
  std::vector<std::string> skipped;
  std::vector<recorder::profile::TopicCount> topics;
};

/// Dumps into `sink`. On failure the sink is abandoned and the store is untouched (retry).
Result<DumpSummary> dump(const Store& store, std::unique_ptr<recorder::ByteSink> sink, const DumpOptions& options = {});

/// Dumps into `path`, which appears only once complete (nothing is left behind on failure) and is
/// never replaced (InvalidArgument if it exists).
Result<DumpSummary> dump_to_file(const Store& store, const std::string& path, const DumpOptions& options = {});

/// "flashback-<domain>-<keeper name>-<UTC time>.mcap", e.g.
/// flashback-default-cams-20261130T230501.123Z.mcap.
std::string default_dump_file_name(std::string_view domain, std::string_view name, std::uint64_t realtime_ns);

}  // namespace cerulion::flashback
