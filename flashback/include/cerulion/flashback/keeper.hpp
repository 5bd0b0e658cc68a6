// SPDX-License-Identifier: Apache-2.0
#pragma once
// The keeper: taps a domain's topics (never holding a publisher back, unless lockstep) and keeps
// their recent traffic in its store; dumps it into a directory when asked or when something goes
// wrong (a publisher died, a steady topic stalled, a message on a trigger topic), with rate limits
// so a crash loop cannot fill the disk. A user's own process can run one as well as the binary.
//
//   cerulion::recording::EventQueue events;
//   cerulion::flashback::KeeperOptions o;
//   o.selection.all = true;
//   o.on_death = true;
//   o.events = &events;
//   auto keeper = cerulion::flashback::Keeper::start(o);
//   ...
//   keeper->trigger("request", "operator asked", "");
//   for (const auto& e : events.drain()) std::puts(e.message.c_str());  // "wrote ./flashback-..."

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cerulion/core/options.hpp"
#include "cerulion/core/status.hpp"
#include "cerulion/flashback/dump.hpp"
#include "cerulion/flashback/store.hpp"
#include "cerulion/recording/events.hpp"
#include "cerulion/recording/tap_set.hpp"

namespace cerulion::flashback {

/// Settings of a keeper; defaults are the recommendation.
struct KeeperOptions {
  recording::TopicSelection selection;
  std::string domain = default_domain();
  /// The store's name (one keeper per name and domain).
  std::string name = "default";
  StoreLimits limits;
  /// Join as lockstep subscribers: nothing missed, publishers wait for the keeper.
  bool lockstep = false;
  /// Compress at idle priority (SCHED_IDLE), on CPU time nobody else wants, so the keeper's one
  /// costly part cannot slow the processes it keeps (leave it off for a lockstep keeper, which
  /// holds them back). The taps, topic discovery, triggers and dumps cost little and keep the
  /// caller's priority, so a saturated machine still has every message taken: while compression
  /// is behind, what the taps staged is kept uncompressed (more memory for the same window), and
  /// stopping does not wait for a starved compressing thread. Where SCHED_IDLE is refused, it
  /// compresses at the caller's priority and says so.
  bool idle_priority = false;
  /// Where automatic dumps go ("" = the current directory); made absolute when the keeper starts
  /// and recorded in its store, where `cerulion flashback dump` and status find it.
  std::string dump_dir;
  /// Seconds after a trigger to include before dumping; triggers meanwhile join that dump.
  double post_s = 0;
  /// Dump when a process that published on a watched topic dies (once per death).
  bool on_death = false;
  /// Dump when a topic with a steady rate is silent this long (seconds; 0 = off).
  double on_stall_s = 0;
  /// Dump on any message published here; its text is the dump's note. The topic is kept like the
  /// selected ones (tapped once), so a dump shows when the trigger came.
  std::string trigger_topic;
  /// Whether this process asks for a dump on SIGUSR1 (as `cerulion flashback start` does, calling
  /// trigger()): only said in the store, for status; the keeper installs no signal handler.
  bool dumps_on_signal = false;
  /// Automatic dumps allowed per hour.
  unsigned max_dumps_per_hour = 20;
  /// Automatic dumps are refused once the dumps in dump_dir take this much.
  std::uint64_t max_disk_bytes = 2ull << 30;
  /// Where the keeper says what it does by itself, each once: a memory limit /dev/shm has not the
  /// room for (warning, the store), a dump written (info, the file as subject), a trigger waiting
  /// for its post window (info), a dump refused by a limit (warning, the directory), a dump that
  /// failed (problem), and what its taps say (a topic read, one that cannot be). Null: nowhere.
  /// Outlives the keeper.
  recording::EventSink* events = nullptr;
};

namespace detail {
class KeeperImpl;
}

/// A running keeper. Move-only; the destructor stops it (its store stays).
class Keeper {
 public:
  /// Opens (or takes over) the store and starts tapping. Errors: bad names or patterns, a live
  /// keeper of the same name (naming its pid), a named topic that cannot be opened, a store that
  /// cannot be made, a dump directory path too long to record.
  static Result<Keeper> start(KeeperOptions options);
  Keeper(Keeper&&) noexcept;
  Keeper& operator=(Keeper&&) noexcept;
  ~Keeper();

  /// Asks for a dump (after post_s): kind "signal", "request"..., with details and a note.
  /// Thread-safe.
  void trigger(std::string kind, std::string details, std::string note = {});
  /// Stops tapping and the triggers (a dump waiting for its post window is written now), closes
  /// the open chunk into the store and lets go of the store: it says the keeper stopped cleanly,
  /// and may be removed (remove_store) or taken over by a new keeper, while store() still reads it.
  void stop();

  StoreStatus status() const;
  /// What stopped the keeper from storing (a damaged store...); ok while it works.
  Status error() const;
  const Store& store() const;
  /// The last dump the keeper wrote by itself (a trigger's), if any.
  std::optional<DumpSummary> last_dump() const;

 private:
  explicit Keeper(std::unique_ptr<detail::KeeperImpl> impl);
  std::unique_ptr<detail::KeeperImpl> impl_;
};

}  // namespace cerulion::flashback
