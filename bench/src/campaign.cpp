// SPDX-License-Identifier: Apache-2.0
#include "cerulion/bench/campaign.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>

#include <fmt/core.h>

#include "cerulion/core/options.hpp"
#include "cerulion/measurement/statistics.hpp"

namespace cerulion::bench {

namespace {

// Samples beyond a tail percentile needed to quote it (benchmark-method.md).
constexpr std::size_t kTailSamples = 20;

struct Attempt {
  std::vector<Repetition> repetitions;
  std::string failure;   // "" when every repetition ran and kept its grid
  bool too_slow = false; // skipped too many slots: worth a lower rate
  double sustained_hz = 0;  // the rate the lane kept when too slow
  bool interrupted = false;
};

Attempt attempt(const CampaignSettings& s, const Lane& lane, std::uint64_t size, double rate,
                const RepetitionRunner& runner, const std::function<void(const Progress&)>& progress,
                Progress& where, double later_cells_s) {
  Attempt a;
  const double repetition_s = repetition_seconds(s, rate);
  for (unsigned r = 1; r <= s.repetitions; ++r) {
    where.repetition = r;
    where.rate_hz = rate;
    where.fallback = rate != s.rate_hz;
    where.planned_left_s = static_cast<double>(s.repetitions - r + 1) * repetition_s + later_cells_s;
    if (progress) progress(where);
    RepetitionRequest request{&lane, size, rate, s.samples, s.warmup, s.wait, s.flashback && lane.native, ""};
    if (!s.samples_dir.empty()) {
      request.samples_path = (std::filesystem::path(s.samples_dir) / samples_file_name(lane.name, size, r)).string();
    }
    auto rep = runner(request);
    where.planned_done_s += repetition_s;
    if (!rep) {
      a.failure = rep.message();
      a.interrupted = rep.code() == ErrorCode::Interrupted;
      return a;
    }
    const std::uint64_t slots = s.samples + rep->skipped_slots;
    if (slots > 0 && static_cast<double>(rep->skipped_slots) / static_cast<double>(slots) > s.max_skipped_fraction) {
      a.failure = fmt::format("skipped {} of {} slots at {:g} Hz (over {:g} %)", rep->skipped_slots, slots, rate,
                              s.max_skipped_fraction * 100);
      a.too_slow = true;
      a.sustained_hz = rate * static_cast<double>(s.samples) / static_cast<double>(slots);
      return a;
    }
    if (rep->lost > 0) {
      a.failure = fmt::format("{} round trips lost", rep->lost);
      return a;
    }
    a.repetitions.push_back(std::move(*rep));
  }
  return a;
}

void summarize(Cell& cell, const std::vector<Repetition>& reps) {
  std::vector<std::vector<double>> samples_us;
  for (const auto& rep : reps) {
    auto us = measurement::to_microseconds(rep.samples_ns);
    std::sort(us.begin(), us.end());
    cell.repetition_medians_us.push_back(measurement::percentile_type7(us, 0.5));
    samples_us.push_back(std::move(us));
    cell.skipped_slots += rep.skipped_slots;
    cell.cpu_pct_ping += rep.cpu_pct_ping / static_cast<double>(reps.size());
    cell.cpu_pct_pong += rep.cpu_pct_pong / static_cast<double>(reps.size());
    cell.achieved_rate_hz += rep.achieved_rate_hz / static_cast<double>(reps.size());
    cell.rss_ping = std::max(cell.rss_ping, rep.rss_ping);
    cell.rss_pong = std::max(cell.rss_pong, rep.rss_pong);
  }
  const auto pooled = measurement::pooled_summary(samples_us);
  cell.samples = pooled.count;
  cell.median_us = measurement::median_of_medians(samples_us);
  cell.min_us = pooled.min;
  cell.max_us = pooled.max;
  cell.p90_us = pooled.p90;
  cell.p99_us = pooled.p99;
  cell.p99_quotable = static_cast<double>(pooled.count) * 0.01 >= static_cast<double>(kTailSamples);
}

}  // namespace

const char* to_string(CellStatus status) noexcept {
  switch (status) {
    case CellStatus::Ok: return "ok";
    case CellStatus::Failed: return "failed";
    case CellStatus::Unavailable: return "unavailable";
  }
  return "?";
}

CampaignSettings full_campaign() {
  CampaignSettings s;
  s.sizes = {64, 256, 1024, 4096, 16384, 65536, 262144, 1u << 20, 4u << 20, 16u << 20};
  s.repetitions = 5;
  s.samples = 2000;
  return s;
}

double repetition_seconds(const CampaignSettings& s, double rate_hz) {
  return static_cast<double>(s.warmup + s.samples) / rate_hz + s.startup_s;
}

CampaignPlan plan_campaign(const CampaignSettings& s, const std::vector<Lane>& lanes) {
  CampaignPlan p;
  for (const auto& lane : lanes) {
    if (lane.available) p.cells += s.sizes.size();
  }
  p.repetitions = s.repetitions;
  p.rate_hz = s.rate_hz;
  p.repetition_s = repetition_seconds(s, s.rate_hz);
  p.expected_s = static_cast<double>(p.cells * p.repetitions) * p.repetition_s;
  // A fallback starts after the first repetition that skips too many slots: one failed
  // repetition at each rate above the lowest, then all of them at the lowest.
  double per_cell = 0;
  p.lowest_rate_hz = s.rate_hz;
  for (double r : s.fallback_rates) {
    if (r >= s.rate_hz || r >= p.lowest_rate_hz) continue;
    per_cell += repetition_seconds(s, p.lowest_rate_hz);
    p.lowest_rate_hz = r;
  }
  per_cell += static_cast<double>(p.repetitions) * repetition_seconds(s, p.lowest_rate_hz);
  p.all_fall_back_s = static_cast<double>(p.cells) * per_cell;
  return p;
}

std::string duration_text(double seconds) {
  const auto s = static_cast<long long>(seconds + 0.5);
  if (s < 60) return fmt::format("{} s", s);
  if (s < 3600) return fmt::format("{} min {:02} s", s / 60, s % 60);
  return fmt::format("{} h {:02} min", s / 3600, (s % 3600 + 30) / 60);
}

std::string describe_plan(const CampaignPlan& p, const CampaignSettings& s, std::size_t lanes) {
  std::string out = fmt::format("{} {} ({} x {}) x {} x ({} warm-up + {}) round trips at {:g} Hz, plus start-up: about {}",
                                p.cells, p.cells == 1 ? "cell" : "cells", lanes == 1 ? "1 lane" : fmt::format("{} lanes", lanes),
                                s.sizes.size() == 1 ? "1 size" : fmt::format("{} sizes", s.sizes.size()),
                                p.repetitions == 1 ? "1 repetition" : fmt::format("{} repetitions", p.repetitions),
                                s.warmup, s.samples, p.rate_hz, duration_text(p.expected_s));
  if (p.lowest_rate_hz < p.rate_hz) {
    out += fmt::format("; about {} if every cell falls back to {:g} Hz", duration_text(p.all_fall_back_s), p.lowest_rate_hz);
  }
  return out;
}

std::vector<Cell> lanes_without_results(const CampaignResult& result) {
  std::vector<Cell> out;
  for (const Lane& lane : result.lanes) {
    if (!lane.available) continue;
    const Cell* first_failed = nullptr;
    bool measured = false;
    for (const Cell& cell : result.cells) {
      if (cell.lane != lane.name) continue;
      measured = measured || cell.status == CellStatus::Ok;
      if (cell.status == CellStatus::Failed && first_failed == nullptr) first_failed = &cell;
    }
    if (!measured && first_failed != nullptr) out.push_back(*first_failed);
  }
  return out;
}

std::string samples_file_name(const std::string& lane, std::uint64_t size, unsigned repetition) {
  return fmt::format("{}_{}B_rep{}.u64le", lane, size, repetition);
}

Result<std::vector<Lane>> resolve_lanes(const std::vector<std::string>& wanted, const std::vector<Lane>& known) {
  if (wanted.empty()) return known;
  std::vector<Lane> out;
  for (const auto& name : wanted) {
    auto it = std::find_if(known.begin(), known.end(), [&](const Lane& l) { return l.name == name; });
    if (it == known.end()) {
      std::string names;
      for (const auto& l : known) names += (names.empty() ? "" : ", ") + l.name;
      return Status(ErrorCode::InvalidArgument, fmt::format("unknown lane '{}' (lanes: {})", name, names));
    }
    if (std::none_of(out.begin(), out.end(), [&](const Lane& l) { return l.name == name; })) out.push_back(*it);
  }
  return out;
}

CampaignResult run_campaign(const CampaignSettings& settings, const std::vector<Lane>& lanes,
                            const RepetitionRunner& runner, const std::function<void(const Progress&)>& progress) {
  CampaignResult result;
  result.settings = settings;
  result.lanes = lanes;
  result.started_realtime_ns = realtime_ns();
  const auto started = std::chrono::steady_clock::now();
  Progress where;
  where.cells = plan_campaign(settings, lanes).cells;
  const double cell_s = static_cast<double>(settings.repetitions) * repetition_seconds(settings, settings.rate_hz);
  for (const auto& lane : lanes) {
    for (const auto size : settings.sizes) {
      Cell cell;
      cell.lane = lane.name;
      cell.size = size;
      cell.rate_hz = settings.rate_hz;
      if (!lane.available) {
        cell.status = CellStatus::Unavailable;
        cell.reason = lane.reason;
        result.cells.push_back(std::move(cell));
        continue;
      }
      where.lane = lane.name;
      where.size = size;
      where.repetitions = settings.repetitions;
      ++where.cell;
      const double later_cells_s = static_cast<double>(where.cells - where.cell) * cell_s;
      std::vector<double> rates = {settings.rate_hz};
      for (double r : settings.fallback_rates) {
        if (r < settings.rate_hz) rates.push_back(r);
      }
      Attempt a;
      for (std::size_t i = 0; i < rates.size(); ++i) {
        if (i > 0) {
          // A rate well above what the lane just kept would only fail again, slowly.
          if (rates[i] > 2 * a.sustained_hz) continue;
        }
        a = attempt(settings, lane, size, rates[i], runner, progress, where, later_cells_s);
        cell.rate_hz = rates[i];
        cell.fell_back = i > 0;
        if (a.failure.empty() || !a.too_slow) break;
      }
      if (a.interrupted) {
        result.interrupted = true;
        break;
      }
      if (!a.failure.empty()) {
        cell.status = CellStatus::Failed;
        cell.reason = a.failure;
      } else {
        summarize(cell, a.repetitions);
        if (!settings.samples_dir.empty()) {
          for (unsigned r = 1; r <= settings.repetitions; ++r) {
            cell.samples_files.push_back(samples_file_name(lane.name, size, r));
          }
        }
      }
      result.cells.push_back(std::move(cell));
    }
    if (result.interrupted) break;
  }
  result.duration_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return result;
}

}  // namespace cerulion::bench
