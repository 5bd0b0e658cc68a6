// SPDX-License-Identifier: Apache-2.0
#pragma once
// `ping --flashback`: a keeper process on the ping's two topics for the whole measurement, as the
// seed benchmark's native lanes run with their recorder on. Its store is removed afterwards.

#include <cstdint>
#include <string>
#include <sys/types.h>

#include "cerulion/core/status.hpp"

namespace cerulion::cli {

struct PingKeeperReport {
  double cpu_pct = 0;          ///< of the measured phase
  std::uint64_t rss_bytes = 0; ///< peak
  std::uint64_t messages = 0;  ///< taken on both topics
  std::uint64_t lost = 0;
  std::uint64_t memory_bytes = 0;  ///< held in its store at the end
  double compression_ratio = 1;
};

class PingKeeper {
 public:
  PingKeeper() = default;
  /// Starts `cerulion flashback start` on PREFIX/ping and PREFIX/pong, and waits until it taps
  /// both; SystemError when it exits or does not within `timeout_s`.
  [[nodiscard]] Status start(const std::string& domain, const std::string& prefix, double timeout_s);
  ~PingKeeper();
  PingKeeper(const PingKeeper&) = delete;
  PingKeeper& operator=(const PingKeeper&) = delete;

  /// The measured phase starts now.
  void mark_start();
  /// Stops the keeper and removes its store; figures over `wall_ns` since mark_start().
  PingKeeperReport finish(std::uint64_t wall_ns);

 private:
  void stop();
  std::string domain_;
  std::string name_;
  pid_t pid_ = -1;
  std::uint64_t cpu_start_ = 0;
};

}  // namespace cerulion::cli
