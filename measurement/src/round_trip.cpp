// SPDX-License-Identifier: Apache-2.0
// The measured loop. It is written once, as a template, and compiled twice: for NativeRequester
// (final: its loan, publish and receive are called directly and inlined, as ping's loop always
// did) and for any Requester through its virtual interface.

#include "cerulion/measurement/round_trip.hpp"

#include "cerulion/core/warm.hpp"
#include "cerulion/measurement/slot_grid.hpp"
#include "transport_native.hpp"

namespace cerulion::measurement {
namespace {

/// After the sample is taken: what both sides' waits said of this round trip.
[[gnu::cold, gnu::noinline]] void keep_trace(const Requester& requester, std::uint64_t slot_ns, std::uint64_t sent_ns,
                                             std::vector<TripTrace>& traces) {
  TripTrace trip;
  (void)requester.last_trip(trip);
  trip.slot_ns = slot_ns;
  trip.sent_ns = sent_ns;
  traces.push_back(trip);
}

template <typename R>
[[gnu::always_inline]] inline RoundTrips round_trips(R& requester, const RoundTripPlan& plan) {
  RoundTrips out;
  const std::uint64_t total = plan.warmup + plan.count;
  out.samples_ns.reserve(plan.count);
  out.request_legs_ns.reserve(plan.count);
  SlotGrid grid(plan.rate_hz, monotonic_ns() + 1'000'000);
  std::uint64_t slot_deadline = 0;
  // Read once: it lies past the plan's two std::functions, a line the loop would read for it alone.
  const bool keep_traces = plan.trace;

  for (std::uint64_t done = 0; done < total;) {
    if (plan.cancel && plan.cancel->load()) {
      out.interrupted = true;
      break;
    }
    if (done == plan.warmup && out.measured_start_ns == 0) {
      out.measured_start_ns = monotonic_ns();
      if (plan.on_measured_start) plan.on_measured_start(out.responder_pid);
    }
    if (grid.paced()) {
      const std::uint64_t now = monotonic_ns();
      if (const std::uint64_t behind = grid.skip_missed(now)) {  // past: skip, never send late
        if (done >= plan.warmup) out.skipped += behind;
        continue;
      }
      slot_deadline = grid.take(now);
    }
    if (Status prepared = requester.prepare(plan.size, plan.timeout); !prepared.ok()) {
      if (prepared.code() == ErrorCode::Interrupted) { out.interrupted = true; break; }
      if (prepared.code() == ErrorCode::Timeout) { out.responder_gone = true; ++out.lost; break; }
      out.error = std::move(prepared);
      break;
    }
    // Waiting for the slot on our own, so keep the next send's memory in cache meanwhile.
    for (std::uint64_t now = monotonic_ns(), warmed = 0; now < slot_deadline; now = monotonic_ns()) {
      if (now - warmed > kWarmCachesIntervalNs) {
        requester.keep_warm();
        warmed = now;
      }
      asm volatile("" ::: "memory");  // no PAUSE: see poll_relax() in core/src/futex.hpp
    }
    const std::uint64_t stamp = monotonic_ns();
    if (Status sent = requester.send(stamp, plan.timeout); !sent.ok()) {
      if (sent.code() == ErrorCode::Interrupted) { out.interrupted = true; break; }
      out.responder_gone = true;
      ++out.lost;
      break;
    }
    // Wait for the reply to this very request (an older, late one is discarded).
    bool answered = false;
    const std::uint64_t deadline = stamp + static_cast<std::uint64_t>(plan.timeout.count());
    while (!answered) {
      const std::uint64_t now = monotonic_ns();
      if (now >= deadline) break;
      auto reply = requester.receive(std::chrono::nanoseconds(deadline - now));
      if (!reply.ok()) {
        if (reply.code() == ErrorCode::Interrupted) out.interrupted = true;
        break;
      }
      if (out.responder_pid == 0) out.responder_pid = reply->responder_pid;
      if (reply->stamp == stamp) {
        answered = true;
        if (done >= plan.warmup) {
          out.samples_ns.push_back(reply->arrived_ns - stamp);
          if (reply->request_leg_ns != 0) out.request_legs_ns.push_back(reply->request_leg_ns);
          if (keep_traces) [[unlikely]] keep_trace(requester, slot_deadline, stamp, out.traces);
        }
      }
    }
    if (out.interrupted) break;
    if (!answered) {
      ++out.lost;
      // A responder that is gone will not come back: stop instead of timing out on every slot.
      const bool alive = plan.responder_alive ? plan.responder_alive() : requester.responder_present();
      if (!alive) {
        out.responder_gone = true;
        break;
      }
    }
    ++done;
  }
  out.end_ns = monotonic_ns();
  return out;
}

CERULION_HOT_PATH RoundTrips native_round_trips(NativeRequester& requester, const RoundTripPlan& plan) {
  return round_trips(requester, plan);
}

CERULION_HOT_PATH RoundTrips any_round_trips(Requester& requester, const RoundTripPlan& plan) {
  return round_trips(requester, plan);
}

}  // namespace

RoundTrips run_round_trips(Requester& requester, const RoundTripPlan& plan) {
  if (auto* native = dynamic_cast<NativeRequester*>(&requester)) return native_round_trips(*native, plan);
  return any_round_trips(requester, plan);
}

}  // namespace cerulion::measurement
