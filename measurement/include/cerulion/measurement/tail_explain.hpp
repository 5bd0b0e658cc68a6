// SPDX-License-Identifier: Apache-2.0
#pragma once
// Which wake-up made a round trip late (`cerulion ping --explain-tail`). Both sides' waits record
// where they stood when their message came (cerulion/core/wait_trace.hpp); the responder sends
// its record back in the reply; this file says, for each late round trip, which side was late,
// why and by how much. Arithmetic on times only, so it is tested on made-up clocks
// (tests/measurement/test_tail_explain.cpp).

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "cerulion/core/wait_trace.hpp"

namespace cerulion::measurement {

/// What one round trip's two waits recorded, in monotonic_ns(). Zeros where nothing was recorded.
struct TripTrace {
  std::uint64_t slot_ns = 0;             ///< the grid slot the request belonged to (0: back to back)
  std::uint64_t sent_ns = 0;             ///< the request's timestamp
  std::uint64_t request_publish_ns = 0;  ///< as the responder read it; 0: the responder sent no trace
  std::uint64_t request_taken_ns = 0;    ///< the responder took the request
  WaitTrace responder;                   ///< the responder's wait for the request
  std::uint64_t reply_publish_ns = 0;
  WaitTrace requester;                   ///< the requester's wait for the reply
  std::uint64_t arrived_ns = 0;          ///< the requester saw the reply
};

/// The reply bytes that carry the responder's trace: bytes 16-63 (the protocol in transport.hpp).
inline constexpr std::size_t kTraceReplyBytes = 64;
/// Writes the responder's side into a reply of at least kTraceReplyBytes (else nothing).
void encode_responder_trace(std::span<std::byte> reply, std::uint64_t request_publish_ns, const WaitTrace& wait) noexcept;
/// Reads it back into `trip` (request_publish_ns, request_taken_ns from the request leg in bytes
/// 8-15, responder). False when the reply is too short or carries none.
bool decode_responder_trace(std::span<const std::byte> reply, TripTrace& trip) noexcept;

/// Why a message was seen late by the side that waited for it.
enum class LateCause : std::uint8_t {
  SenderLate,       ///< the request left late against its slot, after the responder's poll window
  PlannedWakeLate,  ///< it came before the receiver's planned wake-up: a futex wake-up from the sleep
  TimerLate,        ///< the receiver's timed sleep was due to end before it came, yet had not
  PollWindowEnded,  ///< the receiver had gone to block before it came: a futex wake-up
  NotRunning,       ///< the receiver was polling (or busy) when it came, yet saw it late: preempted
  Untraced,         ///< the responder sent no trace (a peer started without --explain-tail)
};
inline constexpr std::size_t kLateCauses = 6;
/// One line for a person: "poll window ended before the message".
[[nodiscard]] const char* describe(LateCause cause) noexcept;
/// A name for JSON: "poll_window_ended".
[[nodiscard]] const char* to_string(LateCause cause) noexcept;

/// Which part of a round trip took the longest.
enum class TripPart : std::uint8_t {
  Request,     ///< publish of the request to the responder's take (the responder waited)
  Turnaround,  ///< the responder's take to its reply's publish
  Reply,       ///< publish of the reply to the requester's take (the requester waited)
};
[[nodiscard]] const char* to_string(TripPart part) noexcept;

/// One leg's verdict: its latency, the cause, and by how much (the cause's own measure: how long
/// after the slot the request left, how long before the planned wake-up the message came, how
/// long the timer was overdue when the message came, how long after blocking it came, or the
/// latency itself when the receiver was not running).
struct LegVerdict {
  LateCause cause = LateCause::NotRunning;
  std::uint64_t latency_ns = 0;
  std::uint64_t by_ns = 0;
  bool futex = false;  ///< it was delivered by a futex wake-up
};
/// The verdict on a message published at `publish_ns` and seen at `seen_ns` by a wait that recorded `wait`.
[[nodiscard]] LegVerdict classify_leg(std::uint64_t publish_ns, std::uint64_t seen_ns, const WaitTrace& wait) noexcept;

struct TripVerdict {
  TripPart part = TripPart::Request;
  LegVerdict leg;
};
/// The verdict on a round trip: its longest part, and why.
[[nodiscard]] TripVerdict classify_trip(const TripTrace& trip) noexcept;

/// The late round trips of a run, by part and cause.
struct TailBreakdown {
  double factor = 5;            ///< a round trip over factor x the median is late
  double median_us = 0;         ///< of all round trips
  std::size_t trips = 0;        ///< all round trips
  std::size_t late = 0;
  struct Row {
    TripPart part = TripPart::Request;
    LateCause cause = LateCause::NotRunning;
    std::size_t count = 0;
    double median_by_us = 0, max_by_us = 0;   ///< the cause's own measure (LegVerdict::by_ns)
    double median_rtt_us = 0;
  };
  std::vector<Row> rows;  ///< most frequent first
  /// Every leg delivered by a futex wake-up, late round trip or not: publish to being seen.
  std::size_t futex_legs = 0;
  double futex_median_us = 0, futex_p99_us = 0, futex_max_us = 0;
  /// Every request: how long after its slot it left (0 for back to back).
  double send_lateness_median_us = 0, send_lateness_max_us = 0;
};
/// The breakdown of round trips `samples_ns` whose traces are `trips` (the same order and length;
/// a shorter `trips` is read as far as it goes).
[[nodiscard]] TailBreakdown explain_tail(const std::vector<std::uint64_t>& samples_ns,
                                         const std::vector<TripTrace>& trips, double factor = 5);

}  // namespace cerulion::measurement
