// SPDX-License-Identifier: Apache-2.0
#pragma once
// `ping --flashback`: a keeper process on the ping's two topics for the whole measurement, as the
// bench's native lanes run with a recorder on (benchmark-method.md). Its store is scratch, not evidence:
// the ping removes it on every way out, and `clean` (or a bench that outlived the ping) removes
// one whose ping is gone.

#include <cstdint>
#include <string>
#include <sys/types.h>

#include "cerulion/core/status.hpp"
#include "cerulion/flashback/store.hpp"
#include "cerulion/measurement/child_process.hpp"
#include "cerulion/measurement/ping_summary.hpp"

namespace cerulion::cli {

class PingKeeper {
 public:
  PingKeeper() = default;
  /// Starts `cerulion flashback start` on PREFIX/ping and PREFIX/pong, and waits until it taps
  /// both; SystemError when it exits or does not within `timeout_s`.
  [[nodiscard]] Status start(const std::string& domain, const std::string& prefix, double timeout_s);
  ~PingKeeper();  ///< stops the keeper and removes its store
  PingKeeper(const PingKeeper&) = delete;
  PingKeeper& operator=(const PingKeeper&) = delete;

  /// The measured phase starts now.
  void mark_start();
  /// Stops the keeper and removes its store; figures over `wall_ns` since mark_start().
  measurement::PingKeeperFigures finish(std::uint64_t wall_ns);

 private:
  void stop_and_remove();
  std::string domain_;
  std::string name_;
  measurement::ChildProcess keeper_;
  std::uint64_t cpu_start_ = 0;
};

/// Whether `store` is the scratch store of a `ping --flashback` that is gone (its keeper and its
/// ping both dead): nothing anyone will read, to remove rather than keep as evidence.
bool is_orphaned_ping_store(const flashback::StoreEntry& store);

/// Removes the orphaned ping stores of `domain`; returns how many.
std::size_t remove_orphaned_ping_stores(const std::string& domain);

}  // namespace cerulion::cli
