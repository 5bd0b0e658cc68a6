// SPDX-License-Identifier: Apache-2.0
#include "cerulion/bench/baseline.hpp"

#include <fmt/core.h>

#include "tables.hpp"

namespace cerulion::bench {

namespace {

bool fails_check(Finding f) {
  return f == Finding::Slower || f == Finding::Fails || f == Finding::Unavailable || f == Finding::FellBack;
}

// A side of the comparison: its median, or what it was instead, and its rate when the two differ.
std::string side(CellStatus status, double us, double rate, bool show_rate) {
  std::string out = status == CellStatus::Ok ? detail::time_text(us) : to_string(status);
  if (show_rate) out += fmt::format(" @{:g} Hz", rate);
  return out;
}

std::string counted_cells(std::size_t n, const char* what) {
  return fmt::format("{} cerulion {} {}", n, n == 1 ? "cell" : "cells", what);
}

}  // namespace

const char* to_string(Finding finding) noexcept {
  switch (finding) {
    case Finding::Compared: return "compared";
    case Finding::Slower: return "slower";
    case Finding::Fails: return "fails";
    case Finding::Unavailable: return "unavailable";
    case Finding::FellBack: return "fell back";
    case Finding::RateDiffers: return "rate differs";
    case Finding::Measured: return "measured";
  }
  return "?";
}

bool BaselineComparison::regressed() const {
  if (nothing_checked) return true;
  for (const auto& c : cells) {
    if (c.regressed) return true;
  }
  return false;
}

BaselineComparison compare_with_baseline(const CampaignResult& current, const CampaignResult& baseline,
                                         double tolerance) {
  BaselineComparison out;
  std::size_t native_run = 0, native_checked = 0;
  for (const auto& cell : current.cells) {
    const Lane* lane = detail::find_lane(current, cell.lane);
    const bool native = lane && lane->native;
    if (native && cell.status != CellStatus::Unavailable) ++native_run;
    const Cell* old = detail::find_cell(baseline, cell.lane, cell.size);
    if (!old || (old->status == CellStatus::Unavailable && cell.status == CellStatus::Unavailable)) continue;
    CellComparison c;
    c.lane = cell.lane;
    c.size = cell.size;
    c.native = native;
    c.baseline_status = old->status;
    c.current_status = cell.status;
    c.baseline_rate_hz = old->rate_hz;
    c.current_rate_hz = cell.rate_hz;
    c.current_fell_back = cell.fell_back;
    if (old->status == CellStatus::Ok) c.baseline_us = old->median_us;
    if (cell.status == CellStatus::Ok) c.current_us = cell.median_us;
    if (c.baseline_us > 0 && c.current_us > 0) c.ratio = c.current_us / c.baseline_us;
    if (cell.status != CellStatus::Ok) c.reason = cell.reason;
    if (cell.status == CellStatus::Failed) {
      c.finding = Finding::Fails;
    } else if (cell.status == CellStatus::Unavailable) {
      c.finding = Finding::Unavailable;
    } else if (old->status != CellStatus::Ok) {
      c.finding = Finding::Measured;
    } else if (cell.rate_hz < old->rate_hz) {
      c.finding = Finding::FellBack;
    } else if (cell.rate_hz > old->rate_hz) {
      c.finding = Finding::RateDiffers;
    } else {
      c.finding = c.ratio > tolerance ? Finding::Slower : Finding::Compared;
    }
    c.regressed = native && fails_check(c.finding);
    if (native && c.finding != Finding::RateDiffers) ++native_checked;
    out.cells.push_back(std::move(c));
  }
  out.nothing_checked = native_run > 0 && native_checked == 0;
  return out;
}

std::string describe(const CellComparison& c, double tolerance) {
  const bool rates_differ = c.baseline_rate_hz != c.current_rate_hz;
  std::string out = fmt::format("{} {}: {} -> {}", c.lane, size_label(c.size),
                                side(c.baseline_status, c.baseline_us, c.baseline_rate_hz, rates_differ),
                                side(c.current_status, c.current_us, c.current_rate_hz, rates_differ));
  const std::string ratio = c.ratio > 0 ? fmt::format("{:.2f}x", c.ratio) : "";
  switch (c.finding) {
    case Finding::Compared:
      // Both at a rate lower than asked: comparable with each other, not with the other cells.
      out += fmt::format(" ({}{})", ratio, c.current_fell_back ? fmt::format(", both at {:g} Hz", c.current_rate_hz) : "");
      break;
    case Finding::Slower:
      out += fmt::format(" ({}, over {:.2f}x{})", ratio, tolerance,
                         c.current_fell_back ? fmt::format(", both at {:g} Hz", c.current_rate_hz) : "");
      if (c.regressed) out += "  SLOWER";
      break;
    case Finding::Fails:
      out += fmt::format(": {}", c.reason.empty() ? "no reason given" : c.reason);
      if (c.regressed) out += "  FAILS";
      break;
    case Finding::Unavailable:
      out += fmt::format(": {}", c.reason.empty() ? "no reason given" : c.reason);
      if (c.regressed) out += "  UNAVAILABLE";
      break;
    case Finding::FellBack:
      out += fmt::format(" ({} at a lower rate: kept only {:g} Hz where the baseline kept {:g} Hz)", ratio,
                         c.current_rate_hz, c.baseline_rate_hz);
      if (c.regressed) out += "  FELL BACK";
      break;
    case Finding::RateDiffers:
      out += fmt::format(" (not compared: measured at {:g} Hz, the baseline at {:g} Hz)", c.current_rate_hz,
                         c.baseline_rate_hz);
      break;
    case Finding::Measured:
      out += " (measured now; the baseline has no median)";
      break;
  }
  return out;
}

std::string regression_summary(const BaselineComparison& comparison, double tolerance) {
  std::size_t slower = 0, fails = 0, unavailable = 0, fell_back = 0;
  for (const auto& c : comparison.cells) {
    if (!c.regressed) continue;
    slower += c.finding == Finding::Slower;
    fails += c.finding == Finding::Fails;
    unavailable += c.finding == Finding::Unavailable;
    fell_back += c.finding == Finding::FellBack;
  }
  std::vector<std::string> parts;
  if (slower) parts.push_back(counted_cells(slower, fmt::format("slower than {:.2f}x", tolerance).c_str()));
  if (fails) parts.push_back(counted_cells(fails, "failing"));
  if (unavailable) parts.push_back(counted_cells(unavailable, "unavailable"));
  if (fell_back) parts.push_back(counted_cells(fell_back, "kept only a lower rate than the baseline's"));
  if (comparison.nothing_checked) {
    parts.push_back("no cerulion cell of this run could be checked against the baseline (lanes, sizes or rates differ)");
  }
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    out += (i == 0 ? "" : i + 1 == parts.size() ? " and " : ", ") + parts[i];
  }
  return out;
}

}  // namespace cerulion::bench
