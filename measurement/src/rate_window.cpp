// SPDX-License-Identifier: Apache-2.0
#include "cerulion/measurement/rate_window.hpp"

#include <algorithm>
#include <cmath>

namespace cerulion::measurement {

void RateWindow::add(std::uint64_t sequence, std::uint64_t publish_ns) {
  if (has_previous_ && sequence > previous_sequence_ && publish_ns >= previous_time_) {
    const double gap = static_cast<double>(publish_ns - previous_time_) / static_cast<double>(sequence - previous_sequence_);
    periods_.push_back(gap * 1e-9);
    if (periods_.size() > window_) periods_.pop_front();
  }
  has_previous_ = true;
  previous_sequence_ = sequence;
  previous_time_ = publish_ns;
  ++new_messages_;
}

RateReport RateWindow::report() {
  RateReport out;
  out.window = periods_.size();
  out.new_messages = new_messages_;
  new_messages_ = 0;
  if (periods_.empty()) return out;
  double sum = 0;
  for (double p : periods_) sum += p;
  const double mean = sum / static_cast<double>(periods_.size());
  double variance = 0;
  for (double p : periods_) variance += (p - mean) * (p - mean);
  variance /= static_cast<double>(periods_.size());
  const auto [lo, hi] = std::minmax_element(periods_.begin(), periods_.end());
  out.rate_hz = mean > 0 ? 1.0 / mean : 0.0;
  out.min_period_s = *lo;
  out.max_period_s = *hi;
  out.std_dev_s = std::sqrt(variance);
  return out;
}

}  // namespace cerulion::measurement
