#pragma once
// One `cerulion ping` measurement, separated from its command line so `bench` can reuse it.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "cerulion/core/options.hpp"
#include "cpu_pinning.hpp"
#include "ping_flashback.hpp"
#include "pingpong.hpp"

namespace cerulion::cli {

struct PingOptions {
  std::string domain;
  std::string prefix = kDefaultPingPrefix;
  std::uint64_t size = 64;          ///< payload bytes (≥ 8: the timestamp)
  double rate_hz = 100;             ///< 0 = back to back
  std::uint64_t count = 2000;       ///< measured round trips
  std::uint64_t warmup = 100;       ///< round trips before measuring
  std::string process = "multi";    ///< multi | single
  Mode mode = Mode::Lockstep;
  WaitStrategy wait = WaitStrategy::Adaptive;
  bool peer = false;                ///< use a `cerulion pong` already running
  bool flashback = false;           ///< a flashback keeper taps both topics during the run
  CpuPlan cpus;                     ///< where ping and the pong it starts run (default: unpinned)
  std::chrono::nanoseconds timeout = std::chrono::seconds(5);
  const std::atomic<bool>* cancel = nullptr;
};

struct PingReport {
  PingOptions options;
  std::vector<std::uint64_t> samples_ns;  ///< measured round trips, in send order
  std::uint64_t lost = 0;                 ///< requests that got no echo within the timeout
  std::uint64_t skipped = 0;              ///< grid slots already past when their turn came
  bool pong_gone = false;                 ///< the pong died or left mid-run
  bool interrupted = false;               ///< Ctrl-C
  double cpu_pct_ping = 0, cpu_pct_pong = 0;  ///< CPU time of each worker / wall time, measured phase
  std::uint64_t rss_ping = 0, rss_pong = 0;   ///< peak resident bytes of each worker's process
  PingKeeperReport keeper;                    ///< with options.flashback
};

/// Runs the round trips. Throws Exit on setup errors (CLI boundary code).
PingReport run_ping(const PingOptions& options);

}  // namespace cerulion::cli
