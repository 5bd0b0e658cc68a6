// SPDX-License-Identifier: Apache-2.0
#pragma once
// Where a wait stood when its message came: a diagnosis of latency tails (`cerulion ping
// --explain-tail`). A participant whose WaitOptions::trace is set writes it on every wait that
// did not find its message at once; one without a trace pays nothing for it.
//
//   cerulion::WaitTrace trace;
//   options.wait.trace = &trace;     // a subscriber's or a wait set's options
//   trace = {};                      // before each receive(): a wait that finds its message at
//   auto sample = sub.receive();     // once leaves phase None
//   if (trace.phase == cerulion::WaitPhase::Block) { ... }

#include <cstdint>

namespace cerulion {

/// Which part of a wait the message was seen in.
enum class WaitPhase : std::uint8_t {
  None = 0,  ///< not written: the message was there when the wait began (or tracing is off)
  Sleep,     ///< woken from the adaptive strategy's timed sleep: a publisher's futex wake-up
  Poll,      ///< seen while polling: spin, or the adaptive strategy's window
  Block,     ///< woken from blocking (the block strategy, or past the adaptive window)
};

/// One wait, in monotonic_ns(). Written by the waiting thread, read by it after the wait.
struct WaitTrace {
  std::uint64_t start_ns = 0;       ///< the wait began
  std::uint64_t wake_at_ns = 0;     ///< the planned end of the adaptive timed sleep; 0: none
  std::uint64_t woke_ns = 0;        ///< that sleep ended on its timer; 0: it did not (or none)
  std::uint64_t poll_until_ns = 0;  ///< the planned end of the adaptive poll window; 0: none
  std::uint64_t blocked_ns = 0;     ///< went to block after polling; 0: it did not
  std::uint64_t ready_ns = 0;       ///< the message was seen
  std::uint64_t predicted_ns = 0;   ///< the adaptive plan's predicted arrival; 0: none (or fallen back to blocking)
  WaitPhase phase = WaitPhase::None;
};

}  // namespace cerulion
