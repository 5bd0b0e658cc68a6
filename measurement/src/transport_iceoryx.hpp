// SPDX-License-Identifier: Apache-2.0
#pragma once
// iceoryx's daemon, RouDi, for the iceoryx transport: whether it can be used here, and a RouDi this
// process starts and stops. Built with or without iceoryx (it only runs `iox-roudi`), so that
// callers can say why the iceoryx lane is missing.
//
// One RouDi serves a whole machine (its socket is /tmp/roudi), and RouDi sends SIGTERM to every
// process still attached when it stops. The iceoryx transport therefore attaches a process only
// while one of its requesters or responders exists, and uses a RouDi that is already running
// instead of starting one; when none runs, the first requester or responder of a process starts one
// sized for its payload and the last one stops it (so `ping`'s requester owns the RouDi its
// responder process uses). A caller measuring several sizes in a row can start one Roudi sized for
// the largest and keep it for all of them.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <sys/types.h>

#include "cerulion/core/status.hpp"
#include "cerulion/measurement/child_process.hpp"

namespace cerulion::measurement::iceoryx {

/// Full path of the `iox-roudi` binary (PATH, then /usr/bin, /usr/local/bin); empty when absent.
[[nodiscard]] std::string roudi_path();

/// Whether a RouDi is running on this machine (its socket accepts a connection).
[[nodiscard]] bool roudi_running() noexcept;

/// Largest payload the running RouDi's memory pools hold, read from its configuration (through
/// /proc: its lock's holder and command line); nullopt when no RouDi runs or it cannot be read
/// (another user's). iceoryx aborts the process on a loan no pool holds, so this is checked first.
[[nodiscard]] std::optional<std::uint64_t> running_roudi_max_payload();

/// Empty when the iceoryx transport can be used here; otherwise why not, in one line ("built
/// without iceoryx (libiceoryx-posh-dev was not found)", "iox-roudi not found (Debian package
/// iceoryx)").
[[nodiscard]] std::string unavailable_reason();

/// The RouDi configuration (TOML) that start() writes: memory pools whose largest chunk holds
/// `max_payload` bytes, with enough chunks for the ping protocol's queues.
[[nodiscard]] std::string roudi_config(std::uint64_t max_payload);

/// A RouDi started by this process, stopped by stop() or the destructor. Move-only.
class Roudi {
 public:
  /// Starts `iox-roudi` with roudi_config(max_payload) (a file in a private temporary directory)
  /// and waits until it accepts runtimes. Fails with NotFound when iox-roudi is absent,
  /// Incompatible when a RouDi already runs (it is the one to use), Timeout or SystemError (with
  /// RouDi's last log line) when it does not come up. The RouDi dies with the thread that started
  /// it (PR_SET_PDEATHSIG), so a crashed caller leaves none behind.
  [[nodiscard]] static Result<Roudi> start(std::uint64_t max_payload,
                                           std::chrono::nanoseconds timeout = std::chrono::seconds(10));

  Roudi() = default;
  Roudi(Roudi&& other) noexcept;
  Roudi& operator=(Roudi&& other) noexcept;
  Roudi(const Roudi&) = delete;
  Roudi& operator=(const Roudi&) = delete;
  ~Roudi();

  /// Asks RouDi to stop (SIGTERM), waits up to `timeout`, then kills it and removes what it left in
  /// /dev/shm and /tmp. Processes still attached get RouDi's SIGTERM. Idempotent.
  Status stop(std::chrono::nanoseconds timeout = std::chrono::seconds(10));

  [[nodiscard]] bool running() const noexcept { return process_.pid() > 0; }
  [[nodiscard]] pid_t pid() const noexcept { return process_.pid(); }
  /// Largest payload its memory pools hold.
  [[nodiscard]] std::uint64_t max_payload() const noexcept { return max_payload_; }

 private:
  ChildProcess process_;
  std::uint64_t max_payload_ = 0;
  std::string dir_;  ///< temporary directory with the config and RouDi's log
};

}  // namespace cerulion::measurement::iceoryx
