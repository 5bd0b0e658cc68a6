// SPDX-License-Identifier: Apache-2.0
// Which wake-up made a round trip late, on made-up clocks: each leg's cause from where its wait
// stood when the message came, the longest part of a round trip, the reply bytes that carry the
// responder's wait, and the breakdown of a run's late round trips.

#include <array>
#include <cstddef>
#include <cstring>
#include <vector>

#include <catch2/catch.hpp>

#include "cerulion/measurement/tail_explain.hpp"

using namespace cerulion;
using namespace cerulion::measurement;

namespace {

constexpr std::uint64_t kUs = 1'000;
constexpr std::uint64_t kBase = 1'000'000'000;  // a monotonic time well after boot

/// A 100 Hz adaptive wait that began at kBase: slept until 9.8 ms, polled until 10.5 ms, then blocked.
WaitTrace adaptive_wait(WaitPhase phase, std::uint64_t ready) {
  WaitTrace w;
  w.start_ns = kBase;
  w.wake_at_ns = kBase + 9'800 * kUs;
  w.woke_ns = phase == WaitPhase::Sleep ? 0 : kBase + 9'810 * kUs;
  w.poll_until_ns = kBase + 10'500 * kUs;
  w.blocked_ns = phase == WaitPhase::Block ? kBase + 10'501 * kUs : 0;
  w.ready_ns = ready;
  w.phase = phase;
  return w;
}

/// A round trip whose request left on its slot at kBase + 10 ms and whose two waits went as given.
TripTrace trip(WaitTrace responder, std::uint64_t request_leg, std::uint64_t turnaround, WaitTrace requester,
               std::uint64_t reply_leg) {
  TripTrace t;
  t.slot_ns = kBase + 10'000 * kUs;
  t.sent_ns = t.slot_ns;
  t.request_publish_ns = t.sent_ns;
  t.request_taken_ns = t.request_publish_ns + request_leg;
  t.responder = responder;
  t.reply_publish_ns = t.request_taken_ns + turnaround;
  t.requester = requester;
  t.arrived_ns = t.reply_publish_ns + reply_leg;
  return t;
}

/// The requester's wait for a reply: polled from the send, found it in the window.
WaitTrace polled_reply(std::uint64_t from) {
  WaitTrace w;
  w.start_ns = from;
  w.poll_until_ns = from + 500 * kUs;
  w.phase = WaitPhase::Poll;
  return w;
}

}  // namespace

TEST_CASE("a message seen while polling is late only if the receiver was not running", "[tail_explain]") {
  const std::uint64_t publish = kBase + 10'000 * kUs;
  const LegVerdict v = classify_leg(publish, publish + 80 * kUs, adaptive_wait(WaitPhase::Poll, publish + 80 * kUs));
  CHECK(v.cause == LateCause::NotRunning);
  CHECK_FALSE(v.futex);
  CHECK(v.latency_ns == 80 * kUs);
  CHECK(v.by_ns == 80 * kUs);
}

TEST_CASE("a message that came after the poll window paid a futex wake-up from blocking", "[tail_explain]") {
  const std::uint64_t publish = kBase + 10'700 * kUs;  // 200 µs after the window's end
  const LegVerdict v = classify_leg(publish, publish + 60 * kUs, adaptive_wait(WaitPhase::Block, publish + 60 * kUs));
  CHECK(v.cause == LateCause::PollWindowEnded);
  CHECK(v.futex);
  CHECK(v.latency_ns == 60 * kUs);
  CHECK(v.by_ns == 200 * kUs);
}

TEST_CASE("a message published inside the window but seen after blocking was missed by a receiver not running",
          "[tail_explain]") {
  const std::uint64_t publish = kBase + 10'400 * kUs;
  const LegVerdict v = classify_leg(publish, publish + 300 * kUs, adaptive_wait(WaitPhase::Block, publish + 300 * kUs));
  CHECK(v.cause == LateCause::NotRunning);
  CHECK_FALSE(v.futex);
}

TEST_CASE("a message before the planned wake-up woke the sleeper by futex: the plan was late", "[tail_explain]") {
  const std::uint64_t publish = kBase + 9'500 * kUs;  // 300 µs before the planned wake-up
  const LegVerdict v = classify_leg(publish, publish + 50 * kUs, adaptive_wait(WaitPhase::Sleep, publish + 50 * kUs));
  CHECK(v.cause == LateCause::PlannedWakeLate);
  CHECK(v.futex);
  CHECK(v.by_ns == 300 * kUs);
}

TEST_CASE("a message after the planned wake-up that still found the receiver asleep is the timer's lateness",
          "[tail_explain]") {
  const std::uint64_t publish = kBase + 9'900 * kUs;  // the timer was due at 9.8 ms
  const LegVerdict v = classify_leg(publish, publish + 40 * kUs, adaptive_wait(WaitPhase::Sleep, publish + 40 * kUs));
  CHECK(v.cause == LateCause::TimerLate);
  CHECK(v.futex);
  CHECK(v.by_ns == 140 * kUs);  // the timer was overdue by that much when the message was seen
}

TEST_CASE("the block strategy's wait has no window: any message it saw came after it blocked", "[tail_explain]") {
  WaitTrace w;
  w.start_ns = kBase;
  w.blocked_ns = kBase;
  w.phase = WaitPhase::Block;
  const LegVerdict v = classify_leg(kBase + 5 * kUs, kBase + 65 * kUs, w);
  CHECK(v.cause == LateCause::PollWindowEnded);
  CHECK(v.futex);
}

TEST_CASE("a round trip's verdict is its longest part's", "[tail_explain]") {
  const std::uint64_t publish = kBase + 10'000 * kUs;
  SECTION("the request leg") {
    // The pong had blocked at 10.5 ms; a request on its slot at 10 ms came in its window, so the
    // request made late must have come after: here the pong is woken late from its sleep.
    const TripTrace t = trip(adaptive_wait(WaitPhase::Sleep, publish + 200 * kUs), 200 * kUs, 1 * kUs,
                             polled_reply(publish), 1 * kUs);
    const TripVerdict v = classify_trip(t);
    CHECK(v.part == TripPart::Request);
    CHECK(v.leg.cause == LateCause::TimerLate);
  }
  SECTION("the reply leg") {
    WaitTrace requester = polled_reply(publish);
    requester.phase = WaitPhase::Block;
    requester.blocked_ns = publish + 500 * kUs;
    const TripTrace t = trip(adaptive_wait(WaitPhase::Poll, publish + 1 * kUs), 1 * kUs, 600 * kUs, requester, 90 * kUs);
    // The turnaround (600 µs) is the longest part here: the pong was not running between its take
    // and its publish.
    const TripVerdict v = classify_trip(t);
    CHECK(v.part == TripPart::Turnaround);
    CHECK(v.leg.cause == LateCause::NotRunning);
    CHECK(v.leg.by_ns == 600 * kUs);
    // With a short turnaround, the reply's futex wake-up after the requester blocked is the verdict.
    const TripTrace t2 = trip(adaptive_wait(WaitPhase::Poll, publish + 1 * kUs), 1 * kUs, 1 * kUs, requester, 90 * kUs);
    WaitTrace late_requester = requester;
    late_requester.blocked_ns = t2.reply_publish_ns - 10 * kUs;
    TripTrace t3 = t2;
    t3.requester = late_requester;
    const TripVerdict v3 = classify_trip(t3);
    CHECK(v3.part == TripPart::Reply);
    CHECK(v3.leg.cause == LateCause::PollWindowEnded);
    CHECK(v3.leg.by_ns == 10 * kUs);
  }
}

TEST_CASE("a request sent late against its slot, after the pong's window closed, is the sender's lateness",
          "[tail_explain]") {
  const std::uint64_t slot = kBase + 10'000 * kUs;
  TripTrace t = trip(adaptive_wait(WaitPhase::Block, 0), 70 * kUs, 1 * kUs, polled_reply(slot), 1 * kUs);
  t.sent_ns = slot + 700 * kUs;  // the pong blocked at 10.501 ms; on its slot, the request was in the window
  t.request_publish_ns = t.sent_ns;
  t.request_taken_ns = t.sent_ns + 70 * kUs;
  t.reply_publish_ns = t.request_taken_ns + 1 * kUs;
  t.arrived_ns = t.reply_publish_ns + 1 * kUs;
  const TripVerdict v = classify_trip(t);
  CHECK(v.part == TripPart::Request);
  CHECK(v.leg.cause == LateCause::SenderLate);
  CHECK(v.leg.by_ns == 700 * kUs);

  // On its slot, after a window that closed before the slot: the window was the problem.
  TripTrace early_window = t;
  early_window.slot_ns = t.responder.blocked_ns + 50 * kUs;
  CHECK(classify_trip(early_window).leg.cause == LateCause::PollWindowEnded);
}

TEST_CASE("without the responder's trace the request part is named untraced", "[tail_explain]") {
  const std::uint64_t publish = kBase + 10'000 * kUs;
  TripTrace t = trip(WaitTrace{}, 300 * kUs, 1 * kUs, polled_reply(publish), 1 * kUs);
  t.request_publish_ns = 0;
  const TripVerdict v = classify_trip(t);
  CHECK(v.part == TripPart::Request);
  CHECK(v.leg.cause == LateCause::Untraced);
  CHECK(v.leg.by_ns == 301 * kUs);
}

TEST_CASE("the responder's wait travels in reply bytes 16 to 63 and reads back as it was written", "[tail_explain]") {
  std::array<std::byte, kTraceReplyBytes> reply{};
  const std::uint64_t leg = 42 * kUs;
  std::memcpy(reply.data() + 8, &leg, 8);
  WaitTrace w = adaptive_wait(WaitPhase::Block, 0);
  w.predicted_ns = kBase + 10'000 * kUs;
  encode_responder_trace(reply, kBase + 10'600 * kUs, w);
  TripTrace t;
  REQUIRE(decode_responder_trace(reply, t));
  CHECK(t.request_publish_ns == kBase + 10'600 * kUs);
  CHECK(t.request_taken_ns == kBase + 10'600 * kUs + leg);
  CHECK(t.responder.phase == WaitPhase::Block);
  CHECK(t.responder.wake_at_ns == w.wake_at_ns);
  CHECK(t.responder.woke_ns == w.woke_ns);
  CHECK(t.responder.poll_until_ns == w.poll_until_ns);
  CHECK(t.responder.blocked_ns == w.blocked_ns);
  CHECK(t.responder.predicted_ns == w.predicted_ns);

  SECTION("a reply too short, or one from a pong that traced nothing, carries none") {
    std::array<std::byte, kTraceReplyBytes - 1> short_reply{};
    encode_responder_trace(short_reply, kBase, w);  // writes nothing
    CHECK_FALSE(decode_responder_trace(short_reply, t));
    std::array<std::byte, kTraceReplyBytes> untraced{};
    CHECK_FALSE(decode_responder_trace(untraced, t));
  }
  SECTION("a phase out of range is not read as a trace") {
    std::array<std::byte, kTraceReplyBytes> bad = reply;
    const std::uint32_t phase = 9;  // after the request's publish time
    std::memcpy(bad.data() + 24, &phase, 4);
    CHECK_FALSE(decode_responder_trace(bad, t));
  }
}

TEST_CASE("the breakdown counts only round trips over the factor times the median, most frequent cause first",
          "[tail_explain]") {
  const std::uint64_t slot = kBase + 10'000 * kUs;
  std::vector<std::uint64_t> samples;
  std::vector<TripTrace> trips;
  for (int i = 0; i < 96; ++i) {  // on time: 2 µs
    samples.push_back(2 * kUs);
    trips.push_back(trip(adaptive_wait(WaitPhase::Poll, slot + kUs), kUs, 0, polled_reply(slot), kUs));
  }
  for (int i = 0; i < 3; ++i) {  // the pong blocked before the request: 100 µs
    TripTrace t = trip(adaptive_wait(WaitPhase::Block, 0), 98 * kUs, kUs, polled_reply(slot), kUs);
    t.responder.poll_until_ns = slot - 20 * kUs;
    t.responder.blocked_ns = slot - 20 * kUs;
    samples.push_back(100 * kUs);
    trips.push_back(t);
  }
  samples.push_back(9 * kUs);  // under 5x the median: not late, and its futex wake-up still counts
  trips.push_back(trip(adaptive_wait(WaitPhase::Sleep, slot + 7 * kUs), 7 * kUs, kUs, polled_reply(slot), kUs));
  trips.back().responder.wake_at_ns = slot + 5 * kUs;

  const TailBreakdown b = explain_tail(samples, trips);
  CHECK(b.trips == 100);
  CHECK(b.median_us == Approx(2.0));
  CHECK(b.late == 3);
  REQUIRE(b.rows.size() == 1);
  CHECK(b.rows[0].part == TripPart::Request);
  CHECK(b.rows[0].cause == LateCause::PollWindowEnded);
  CHECK(b.rows[0].count == 3);
  CHECK(b.rows[0].median_by_us == Approx(20.0));
  CHECK(b.rows[0].median_rtt_us == Approx(100.0));
  CHECK(b.futex_legs == 4);
  CHECK(b.futex_max_us == Approx(98.0));
  CHECK(b.send_lateness_max_us == Approx(0.0));
}
