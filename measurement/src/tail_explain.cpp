// SPDX-License-Identifier: Apache-2.0
#include "cerulion/measurement/tail_explain.hpp"

#include <algorithm>
#include <climits>
#include <cstring>
#include <map>

#include "cerulion/measurement/statistics.hpp"
#include "cerulion/measurement/transport.hpp"

namespace cerulion::measurement {
namespace {

// Where the responder's trace lies in a reply (after the stamp and the request leg): the request's
// publish time, the wait's phase, then its times as signed 32-bit offsets from that publish time
// (kNoTime: none), so that the prediction fits beside them in the 64 bytes of the smallest reply.
constexpr std::size_t kTraceOffset = kRequestLegOffset + 8;
enum TraceTime : std::size_t { kWakeAt, kWoke, kPollUntil, kBlocked, kPredicted, kTraceTimes };
constexpr std::size_t kTimesOffset = kTraceOffset + 8 + 4;
static_assert(kTimesOffset + kTraceTimes * 4 <= kTraceReplyBytes);
constexpr std::int32_t kNoTime = INT32_MIN;

std::int32_t offset_of(std::uint64_t t, std::uint64_t from) noexcept {
  if (t == 0) return kNoTime;
  const std::int64_t d = static_cast<std::int64_t>(t) - static_cast<std::int64_t>(from);
  return static_cast<std::int32_t>(std::clamp<std::int64_t>(d, INT32_MIN + 1, INT32_MAX));
}
std::uint64_t time_of(std::int32_t offset, std::uint64_t from) noexcept {
  return offset == kNoTime ? 0 : static_cast<std::uint64_t>(static_cast<std::int64_t>(from) + offset);
}

std::uint64_t since(std::uint64_t later, std::uint64_t earlier) { return later > earlier ? later - earlier : 0; }
double in_us(std::uint64_t ns) { return static_cast<double>(ns) / 1e3; }

}  // namespace

void encode_responder_trace(std::span<std::byte> reply, std::uint64_t request_publish_ns, const WaitTrace& wait) noexcept {
  if (reply.size() < kTraceReplyBytes) return;
  const auto phase = static_cast<std::uint32_t>(wait.phase);
  const std::int32_t times[kTraceTimes] = {
      offset_of(wait.wake_at_ns, request_publish_ns), offset_of(wait.woke_ns, request_publish_ns),
      offset_of(wait.poll_until_ns, request_publish_ns), offset_of(wait.blocked_ns, request_publish_ns),
      offset_of(wait.predicted_ns, request_publish_ns)};
  std::memcpy(reply.data() + kTraceOffset, &request_publish_ns, 8);
  std::memcpy(reply.data() + kTraceOffset + 8, &phase, 4);
  std::memcpy(reply.data() + kTimesOffset, times, sizeof times);
}

bool decode_responder_trace(std::span<const std::byte> reply, TripTrace& trip) noexcept {
  if (reply.size() < kTraceReplyBytes) return false;
  std::uint64_t publish = 0, leg = 0;
  std::uint32_t phase = 0;
  std::int32_t times[kTraceTimes];
  std::memcpy(&publish, reply.data() + kTraceOffset, 8);
  std::memcpy(&phase, reply.data() + kTraceOffset + 8, 4);
  std::memcpy(times, reply.data() + kTimesOffset, sizeof times);
  std::memcpy(&leg, reply.data() + kRequestLegOffset, 8);
  if (publish == 0 || phase > static_cast<std::uint32_t>(WaitPhase::Block)) return false;
  trip.request_publish_ns = publish;
  trip.request_taken_ns = publish + leg;
  trip.responder = {};
  trip.responder.phase = static_cast<WaitPhase>(phase);
  trip.responder.wake_at_ns = time_of(times[kWakeAt], publish);
  trip.responder.woke_ns = time_of(times[kWoke], publish);
  trip.responder.poll_until_ns = time_of(times[kPollUntil], publish);
  trip.responder.blocked_ns = time_of(times[kBlocked], publish);
  trip.responder.predicted_ns = time_of(times[kPredicted], publish);
  trip.responder.ready_ns = trip.request_taken_ns;
  return true;
}

const char* describe(LateCause cause) noexcept {
  switch (cause) {
    case LateCause::SenderLate: return "request sent late against its slot, after the pong's poll window";
    case LateCause::PlannedWakeLate: return "came before the planned wake-up (futex wake from the sleep)";
    case LateCause::TimerLate: return "the timed sleep overran its end (futex wake from the sleep)";
    case LateCause::PollWindowEnded: return "came after the poll window ended (futex wake from blocking)";
    case LateCause::NotRunning: return "came while polling or busy, seen late (not running)";
    case LateCause::Untraced: return "the pong sent no trace (start it with --explain-tail)";
  }
  return "?";
}

const char* to_string(LateCause cause) noexcept {
  switch (cause) {
    case LateCause::SenderLate: return "sender_late";
    case LateCause::PlannedWakeLate: return "planned_wake_late";
    case LateCause::TimerLate: return "timer_late";
    case LateCause::PollWindowEnded: return "poll_window_ended";
    case LateCause::NotRunning: return "not_running";
    case LateCause::Untraced: return "untraced";
  }
  return "?";
}

const char* to_string(TripPart part) noexcept {
  switch (part) {
    case TripPart::Request: return "request";
    case TripPart::Turnaround: return "turnaround";
    case TripPart::Reply: return "reply";
  }
  return "?";
}

LegVerdict classify_leg(std::uint64_t publish_ns, std::uint64_t seen_ns, const WaitTrace& wait) noexcept {
  LegVerdict v;
  v.latency_ns = since(seen_ns, publish_ns);
  v.by_ns = v.latency_ns;
  switch (wait.phase) {
    case WaitPhase::Sleep:
      v.futex = true;
      if (wait.wake_at_ns > publish_ns) {
        v.cause = LateCause::PlannedWakeLate;
        v.by_ns = wait.wake_at_ns - publish_ns;
      } else {
        v.cause = LateCause::TimerLate;
        v.by_ns = since(seen_ns, wait.wake_at_ns);
      }
      return v;
    case WaitPhase::Block: {
      // The window ended at its planned end or when the receiver went to block, whichever came
      // first; the block strategy has no window (it blocked at once).
      std::uint64_t window_end = wait.blocked_ns != 0 ? wait.blocked_ns : wait.start_ns;
      if (wait.poll_until_ns != 0) window_end = std::min(window_end, wait.poll_until_ns);
      if (publish_ns >= window_end) {
        v.cause = LateCause::PollWindowEnded;
        v.futex = true;
        v.by_ns = publish_ns - window_end;
        return v;
      }
      v.cause = LateCause::NotRunning;  // published inside the window, yet missed by its polls
      return v;
    }
    case WaitPhase::Poll:
    case WaitPhase::None:
      v.cause = LateCause::NotRunning;
      return v;
  }
  return v;
}

TripVerdict classify_trip(const TripTrace& t) noexcept {
  TripVerdict out;
  const LegVerdict reply = classify_leg(t.reply_publish_ns, t.arrived_ns, t.requester);
  if (t.request_publish_ns == 0) {
    // Without the responder's trace, only the reply leg is known; the rest is the request's.
    const std::uint64_t rest = since(t.arrived_ns, t.sent_ns) - std::min(since(t.arrived_ns, t.sent_ns), reply.latency_ns);
    if (rest > reply.latency_ns) {
      out.part = TripPart::Request;
      out.leg = {LateCause::Untraced, rest, rest, false};
    } else {
      out.part = TripPart::Reply;
      out.leg = reply;
    }
    return out;
  }
  LegVerdict request = classify_leg(t.request_publish_ns, t.request_taken_ns, t.responder);
  if (request.cause == LateCause::PollWindowEnded && t.slot_ns != 0 && t.sent_ns > t.slot_ns) {
    // Sent on its slot, it would have come before the responder went to block.
    const std::uint64_t went = t.responder.blocked_ns != 0 ? t.responder.blocked_ns : t.responder.start_ns;
    if (t.slot_ns < went) {
      request.cause = LateCause::SenderLate;
      request.by_ns = t.sent_ns - t.slot_ns;
    }
  }
  const std::uint64_t turnaround = since(t.reply_publish_ns, t.request_taken_ns);
  if (request.latency_ns >= reply.latency_ns && request.latency_ns >= turnaround) {
    out = {TripPart::Request, request};
  } else if (reply.latency_ns >= turnaround) {
    out = {TripPart::Reply, reply};
  } else {
    out = {TripPart::Turnaround, {LateCause::NotRunning, turnaround, turnaround, false}};
  }
  return out;
}

TailBreakdown explain_tail(const std::vector<std::uint64_t>& samples_ns, const std::vector<TripTrace>& trips,
                           double factor) {
  TailBreakdown out;
  out.factor = factor;
  out.trips = samples_ns.size();
  out.median_us = summarize(to_microseconds(samples_ns)).median;
  const double late_over_ns = out.median_us * 1e3 * factor;
  struct Acc {
    std::vector<double> by_us, rtt_us;
  };
  std::map<std::pair<TripPart, LateCause>, Acc> rows;
  std::vector<double> futex_us, send_late_us;
  const std::size_t n = std::min(samples_ns.size(), trips.size());
  for (std::size_t i = 0; i < n; ++i) {
    const TripTrace& t = trips[i];
    if (t.slot_ns != 0) send_late_us.push_back(in_us(since(t.sent_ns, t.slot_ns)));
    if (t.request_publish_ns != 0) {
      const LegVerdict request = classify_leg(t.request_publish_ns, t.request_taken_ns, t.responder);
      if (request.futex) futex_us.push_back(in_us(request.latency_ns));
    }
    const LegVerdict reply = classify_leg(t.reply_publish_ns, t.arrived_ns, t.requester);
    if (reply.futex) futex_us.push_back(in_us(reply.latency_ns));
    if (static_cast<double>(samples_ns[i]) <= late_over_ns) continue;
    ++out.late;
    const TripVerdict v = classify_trip(t);
    Acc& acc = rows[{v.part, v.leg.cause}];
    acc.by_us.push_back(in_us(v.leg.by_ns));
    acc.rtt_us.push_back(in_us(samples_ns[i]));
  }
  for (auto& [key, acc] : rows) {
    const Summary by = summarize(acc.by_us);
    out.rows.push_back({key.first, key.second, acc.by_us.size(), by.median, by.max, summarize(acc.rtt_us).median});
  }
  std::stable_sort(out.rows.begin(), out.rows.end(), [](const auto& a, const auto& b) { return a.count > b.count; });
  const Summary futex = summarize(futex_us);
  out.futex_legs = futex.count;
  out.futex_median_us = futex.median;
  out.futex_p99_us = futex.p99;
  out.futex_max_us = futex.max;
  const Summary send = summarize(send_late_us);
  out.send_lateness_median_us = send.median;
  out.send_lateness_max_us = send.max;
  return out;
}

}  // namespace cerulion::measurement
