// SPDX-License-Identifier: Apache-2.0
#pragma once
// One latency measurement as docs/benchmark-method.md defines it: a requester (this thread) and a
// responder (a thread, a process it starts, or a peer already running), warm-up and N round trips
// on a slot grid, with the CPU and memory each worker used. Returns a report; never exits or
// prints. `cerulion ping` and `cerulion bench` are thin layers over run_ping().

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

#include "cerulion/core/options.hpp"
#include "cerulion/core/status.hpp"
#include "cerulion/measurement/child_process.hpp"
#include "cerulion/measurement/cpu_pinning.hpp"
#include "cerulion/measurement/statistics.hpp"
#include "cerulion/measurement/transport.hpp"

namespace cerulion::measurement {

/// Where the responder runs.
enum class Layout {
  MultiProcess,   ///< another process: started through start_responder_process, or a peer
  SingleProcess,  ///< a thread of this process
};
/// "multi" / "single".
[[nodiscard]] const char* to_string(Layout layout) noexcept;

struct PingOptions;

/// Callbacks around the run, for what a caller adds to it (`ping --flashback` runs a keeper).
/// None is on the timed path.
struct PingHooks {
  /// Both topics exist, the responder is not started yet. A non-ok Status ends the run with it.
  std::function<Status()> before_responder;
  /// The warm-up is done; the measured phase starts.
  std::function<void()> measured_start;
  /// The responder was stopped; `measured_wall_ns` is the measured phase's length (0 if none).
  std::function<void(std::uint64_t measured_wall_ns)> after_run;
};

struct PingOptions {
  std::string transport = "native";  ///< see transports()
  std::string domain;
  std::string prefix = kDefaultPrefix;
  std::uint64_t size = 64;     ///< payload bytes (>= kStampBytes)
  double rate_hz = 100;        ///< slot grid; 0 = back to back
  std::uint64_t count = 2000;  ///< measured round trips
  std::uint64_t warmup = 100;  ///< round trips before measuring
  Layout layout = Layout::MultiProcess;
  Mode mode = Mode::Lockstep;
  WaitStrategy wait = WaitStrategy::Adaptive;
  /// Native only: each side waits through a WaitSet of this many subscribers (its topic and idle
  /// ones); 0 = on its topic directly. See TransportOptions::wait_set_members.
  std::uint32_t wait_set_members = 0;
  /// Payload ceiling of the topics ping creates (native; see TransportOptions::topic_ceiling).
  std::uint64_t topic_ceiling = kDefaultMaxPayload;
  /// With wait_set_members >= 1: round trips alternate between waiting on the topics themselves
  /// and through the wait sets (TransportOptions::alternate_wait_set); see split_alternate().
  bool alternate_wait_set = false;
  /// MultiProcess only: a responder already runs elsewhere; none is started or stopped.
  bool peer = false;
  CpuPlan cpus;  ///< where the requester and a responder this starts run (default: unpinned)
  /// Both sides record their waits, and the report keeps each round trip's TripTrace (native, at
  /// least kTraceReplyBytes; a peer responder must trace too: `cerulion pong --explain-tail`).
  bool explain_tail = false;
  /// Native, adaptive wait: the share of a CPU each side's polling may take (WaitOptions::cpu_budget).
  double cpu_budget = kDefaultWaitCpuBudget;
  std::chrono::nanoseconds timeout = std::chrono::seconds(5);
  const std::atomic<bool>* cancel = nullptr;
  /// MultiProcess without peer: starts the responder process (one that answers on these topics
  /// with stop_on_request, pinned to cpus.pong). The library does not know how a program starts
  /// its own responder (`cerulion pong --once`, a test binary); it stops the process it is given
  /// (a stop request, then SIGTERM and SIGKILL) on every way out.
  std::function<Result<ChildProcess>(const PingOptions&)> start_responder_process;
  PingHooks hooks;
};

struct PingReport {
  PingOptions options;  ///< as run, without the callbacks (hooks, start_responder_process)
  std::vector<std::uint64_t> samples_ns;  ///< measured round trips, in send order
  /// One-way latencies of the requests (publish to the responder's take), where the transport
  /// reports them (native, 16 B and more): a subscriber's latency, to set beside a node's own.
  std::vector<std::uint64_t> request_legs_ns;
  std::uint64_t lost = 0;                 ///< requests that got no reply within the timeout
  std::uint64_t skipped = 0;              ///< grid slots already past when their turn came
  bool responder_gone = false;            ///< the responder died or left mid-run
  bool interrupted = false;               ///< the cancel flag was set
  std::uint64_t measured_wall_ns = 0;     ///< length of the measured phase
  double cpu_pct_ping = 0, cpu_pct_pong = 0;  ///< CPU time of each worker / wall time, measured phase
  /// False when the pong is another process and the run was too short to read its CPU: the kernel
  /// brings another process's CPU time up to date only at a scheduler tick or a context switch,
  /// so a pong that spins through a run of a few milliseconds may read as 0.
  bool cpu_pong_resolved = true;
  std::uint64_t rss_ping = 0, rss_pong = 0;   ///< peak resident bytes of each worker's process
  /// A peer responder may run on the CPU the requester is pinned to. Then one side polling there
  /// can hold the other back by its whole poll window (cpu_pinning.hpp), in some runs and not
  /// others: such a run measures the scheduler.
  bool peer_may_share_cpu = false;
  std::string responder_error;  ///< why an in-process responder stopped early, empty if it did not
  std::vector<TripTrace> traces;  ///< with explain_tail: one per sample, in its order
};

/// The samples of an alternating run (PingOptions::alternate_wait_set) split by how both sides
/// waited: `direct` on the topics themselves, `wait_set` through the wait sets. Round trip k of
/// the run (warm-up included) waited directly when k is even; a lost round trip shifts the rest.
struct AlternateSamples {
  std::vector<std::uint64_t> direct_ns, wait_set_ns;
};
[[nodiscard]] AlternateSamples split_alternate(const PingReport& report);

/// A report's statistics, in µs: what `cerulion ping` prints.
struct PingFigures {
  Summary round_trip_us;
  /// Where the transport reported request legs (PingReport::request_legs_ns).
  std::optional<Summary> request_one_way_us;
  /// An alternating run's halves (split_alternate()), and the wait sets' median over the direct one
  /// (0 when the direct half is empty).
  struct Alternate {
    Summary direct_us, wait_set_us;
    double median_ratio = 0;
  };
  std::optional<Alternate> alternate;
};
[[nodiscard]] PingFigures figures_of(const PingReport& report);

/// Runs one measurement. Errors (not ok) are setup failures: a topic that cannot be opened (the
/// core's code), a size over the transport's ceiling (PayloadTooLarge), no responder within the
/// timeout (Timeout), a CPU that cannot be pinned or a responder that cannot start (SystemError),
/// Interrupted before the first round trip, or a hook's Status. Anything that happens during the
/// round trips (lost replies, a responder gone, Ctrl-C) is in the report; a transport failure
/// mid-run is an error.
[[nodiscard]] Result<PingReport> run_ping(const PingOptions& options);

}  // namespace cerulion::measurement
