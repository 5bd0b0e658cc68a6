// SPDX-License-Identifier: Apache-2.0
#pragma once
// Stopping a node on Ctrl-C or a supervisor's SIGTERM: the signals set one process-wide flag,
// and every wait given that flag as its cancel flag returns Interrupted promptly.
//
//   cerulion::SubscriberOptions options;
//   options.wait.cancel = cerulion::stop_on_signals();
//   while (auto sample = sub->receive()) { ... }   // ends with Interrupted on Ctrl-C

#include <atomic>

namespace cerulion {

/// Installs handlers for SIGINT, SIGTERM and SIGHUP (once per process; later calls only return
/// the flag) that set the returned flag. They are installed without SA_RESTART, so a thread
/// blocked in a futex wait returns at once rather than at its next periodic check.
const std::atomic<bool>* stop_on_signals();

/// The same flag without installing anything: for code that passes it on while the program
/// decides elsewhere whether signals stop it.
const std::atomic<bool>* stop_flag() noexcept;

/// Whether one of those signals arrived (false before stop_on_signals() was called).
bool stop_requested() noexcept;

/// The signal that set the flag (SIGINT, SIGTERM, SIGHUP), 0 if none yet.
int stop_signal() noexcept;

}  // namespace cerulion
