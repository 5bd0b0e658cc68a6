// SPDX-License-Identifier: Apache-2.0
#include "cerulion/measurement/slow_phases.hpp"

#include <algorithm>
#include <array>

#include "cerulion/measurement/statistics.hpp"

namespace cerulion::measurement {
namespace {

double median_of(std::vector<double> v) { return v.empty() ? 0 : summarize(v).median; }
double signed_us(std::uint64_t a, std::uint64_t b) { return (static_cast<double>(a) - static_cast<double>(b)) / 1e3; }

/// One side's waits, each with the publish time of the message it waited for.
PhaseSide side_of(const std::vector<std::pair<std::uint64_t, const WaitTrace*>>& waits) {
  PhaseSide side;
  std::array<std::size_t, kLateCauses> causes{};
  std::vector<double> error, margin, window, oversleep;
  for (const auto& [publish, w] : waits) {
    ++side.waits;
    if (w->phase == WaitPhase::Sleep || w->phase == WaitPhase::Block) {
      ++side.missed;
      ++causes[static_cast<std::size_t>(classify_leg(publish, w->ready_ns, *w).cause)];
    }
    if (w->predicted_ns == 0) {
      if (w->phase != WaitPhase::None) ++side.fallen_back;
      continue;
    }
    error.push_back(signed_us(publish, w->predicted_ns));
    if (w->wake_at_ns != 0) margin.push_back(signed_us(w->predicted_ns, w->wake_at_ns));
    if (w->poll_until_ns != 0) window.push_back(signed_us(w->poll_until_ns, w->predicted_ns));
    if (w->woke_ns != 0 && w->wake_at_ns != 0) oversleep.push_back(signed_us(w->woke_ns, w->wake_at_ns));
  }
  side.cause = static_cast<LateCause>(std::max_element(causes.begin(), causes.end()) - causes.begin());
  side.arrival_minus_predicted_us = median_of(error);
  side.margin_us = median_of(margin);
  side.window_us = median_of(window);
  side.oversleep_us = median_of(oversleep);
  return side;
}

}  // namespace

SlowPhases find_slow_phases(const std::vector<std::uint64_t>& samples_ns, const std::vector<TripTrace>& trips,
                            SlowPhaseRule rule) {
  SlowPhases out;
  out.rule = rule;
  if (rule.window == 0) return out;
  out.windows = samples_ns.size() / rule.window;
  if (out.windows == 0) return out;
  std::vector<double> medians;
  for (std::size_t w = 0; w < out.windows; ++w) {
    std::vector<double> us;
    for (std::size_t i = w * rule.window; i < (w + 1) * rule.window; ++i) us.push_back(static_cast<double>(samples_ns[i]) / 1e3);
    medians.push_back(summarize(us).median);
  }
  out.fastest_window_us = *std::min_element(medians.begin(), medians.end());
  const double slow_over = std::max(rule.floor_us, rule.factor * out.fastest_window_us);
  for (std::size_t w = 0; w < out.windows;) {
    if (medians[w] <= slow_over) {
      ++w;
      continue;
    }
    std::size_t last = w;
    while (last + 1 < out.windows && medians[last + 1] > slow_over) ++last;
    SlowPhase phase;
    phase.first = w * rule.window;
    phase.end = (last + 1) * rule.window;
    std::vector<double> us;
    std::vector<std::pair<std::uint64_t, const WaitTrace*>> responder, requester;
    for (std::size_t i = phase.first; i < phase.end; ++i) {
      us.push_back(static_cast<double>(samples_ns[i]) / 1e3);
      if (i >= trips.size()) continue;
      const TripTrace& t = trips[i];
      if (t.request_publish_ns != 0) responder.emplace_back(t.request_publish_ns, &t.responder);
      if (t.reply_publish_ns != 0) requester.emplace_back(t.reply_publish_ns, &t.requester);
    }
    phase.median_us = summarize(us).median;
    phase.responder = side_of(responder);
    phase.requester = side_of(requester);
    out.phases.push_back(std::move(phase));
    w = last + 1;
  }
  return out;
}

}  // namespace cerulion::measurement
