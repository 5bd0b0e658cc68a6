// SPDX-License-Identifier: Apache-2.0
#include "tables.hpp"

#include <algorithm>
#include <ctime>
#include <limits>

#include <fmt/core.h>

namespace cerulion::bench::detail {

std::string time_text(double v) {
  if (v >= 100000) return fmt::format("{:.0f} ms", v / 1000);
  if (v >= 10000) return fmt::format("{:.1f} ms", v / 1000);
  if (v >= 1000) return fmt::format("{:.2f} ms", v / 1000);
  if (v >= 100) return fmt::format("{:.1f} µs", v);
  return fmt::format("{:.2f} µs", v);
}

const Cell* find_cell(const CampaignResult& r, const std::string& lane, std::uint64_t size) {
  for (const auto& c : r.cells) {
    if (c.lane == lane && c.size == size) return &c;
  }
  return nullptr;
}

const Lane* find_lane(const CampaignResult& r, const std::string& name) {
  for (const auto& l : r.lanes) {
    if (l.name == name) return &l;
  }
  return nullptr;
}

std::string median_text(const Cell& c) {
  if (c.status == CellStatus::Unavailable) return "unavailable";
  if (c.status == CellStatus::Failed) return "failed";
  return time_text(c.median_us) + (c.fell_back ? fmt::format(" @{:g} Hz", c.rate_hz) : "");
}

std::string p99_text(const Cell& c) { return c.p99_quotable ? time_text(c.p99_us) : "-"; }

std::string cpu_text(const Cell& c) { return fmt::format("{:.1f} / {:.1f} %", c.cpu_pct_ping, c.cpu_pct_pong); }

Table headline_table(const CampaignResult& r) {
  Table t;
  t.title = r.settings.repetitions == 1
                ? fmt::format("Round trip at {} (median of one repetition)", size_label(r.settings.headline_size))
                : fmt::format("Round trip at {} (median of {} repetition medians)", size_label(r.settings.headline_size),
                              r.settings.repetitions);
  t.header = {"lane", "median", "p99", "CPU ping / pong", "vs fastest"};
  const Cell* fastest = nullptr;
  for (const auto& lane : r.lanes) {
    if (auto* c = find_cell(r, lane.name, r.settings.headline_size);
        c && c->status == CellStatus::Ok && c->median_us > 0 && (!fastest || c->median_us < fastest->median_us)) {
      fastest = c;
    }
  }
  for (const auto& lane : r.lanes) {
    const Cell* c = find_cell(r, lane.name, r.settings.headline_size);
    if (!c) continue;
    std::string ratio;
    if (c->status == CellStatus::Ok && fastest) {
      ratio = fmt::format("{:.2f}x", c->median_us / fastest->median_us);
      // A round trip at 20 Hz and one at 100 Hz are not the same measurement: say which is which.
      if (c->rate_hz != fastest->rate_hz) {
        ratio += fmt::format(" ({:g} Hz against {:g} Hz)", c->rate_hz, fastest->rate_hz);
      }
    }
    std::string median = median_text(*c);
    if (c->status != CellStatus::Ok && !c->reason.empty()) median += " (" + c->reason + ")";
    const bool ok = c->status == CellStatus::Ok;
    t.rows.push_back({lane.name, median, ok ? p99_text(*c) : "", ok ? cpu_text(*c) : "", ratio});
  }
  return t;
}

Table values_table(const CampaignResult& r) {
  Table t;
  t.title = "All measured values: median (p99 pooled; \"-\" when fewer than 20 samples lie beyond it)";
  if (std::any_of(r.cells.begin(), r.cells.end(), [](const Cell& c) { return c.fell_back; })) {
    t.title += fmt::format("; @ marks a cell measured at a lower rate than {:g} Hz", r.settings.rate_hz);
  }
  t.header = {"lane"};
  for (auto size : r.settings.sizes) t.header.push_back(size_label(size));
  for (const auto& lane : r.lanes) {
    std::vector<std::string> row{lane.name};
    for (auto size : r.settings.sizes) {
      const Cell* c = find_cell(r, lane.name, size);
      if (!c) {
        row.push_back("");
        continue;
      }
      std::string text = median_text(*c);
      if (c->status == CellStatus::Ok) text += c->p99_quotable ? " (" + time_text(c->p99_us) + ")" : " (-)";
      row.push_back(text);
    }
    t.rows.push_back(std::move(row));
  }
  return t;
}

Table details_table(const CampaignResult& r) {
  Table t;
  t.title = "Skipped slots, achieved rate and CPU of the two workers";
  t.header = {"lane", "size", "skipped", "rate", "CPU ping", "CPU pong"};
  for (const auto& c : r.cells) {
    if (c.status != CellStatus::Ok) {
      if (c.status == CellStatus::Failed) t.rows.push_back({c.lane, size_label(c.size), "failed: " + c.reason, "", "", ""});
      continue;
    }
    t.rows.push_back({c.lane, size_label(c.size), fmt::format("{} of {}", c.skipped_slots, c.samples + c.skipped_slots),
                      fmt::format("{:.1f} of {:g} Hz", c.achieved_rate_hz, c.rate_hz), fmt::format("{:.1f} %", c.cpu_pct_ping),
                      fmt::format("{:.1f} %", c.cpu_pct_pong)});
  }
  return t;
}

Table machine_table(const CampaignResult& r, const Machine& m, const Build& b) {
  Table t;
  t.title = "Machine and build";
  t.header = {"", ""};
  t.rows.push_back({"cpu", fmt::format("{} ({} cores)", m.cpu_model.empty() ? "unknown" : m.cpu_model, m.cores)});
  t.rows.push_back({"kernel", m.kernel});
  t.rows.push_back({"governor", m.governor.empty() ? "not readable" : m.governor});
  t.rows.push_back({"load", describe_load(m.load)});
  t.rows.push_back({"build", fmt::format("cerulion {}{}", b.version, b.commit.empty() ? "" : " (" + b.commit + ")")});
  const std::time_t secs = static_cast<std::time_t>(r.started_realtime_ns / 1'000'000'000ull);
  std::tm utc{};
  ::gmtime_r(&secs, &utc);
  char when[32];
  std::strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", &utc);
  t.rows.push_back({"run", fmt::format("{}, {:.0f} s, {} x {} round trips at {:g} Hz after {} warm-up, wait {}{}", when,
                                       r.duration_s, r.settings.repetitions, r.settings.samples, r.settings.rate_hz,
                                       r.settings.warmup, r.settings.wait,
                                       r.settings.flashback ? ", flashback on (native lanes)" : ", flashback off")});
  return t;
}

std::vector<std::string> notes(const CampaignResult& r, const Machine& m) {
  std::vector<std::string> out;
  std::size_t fell_back = 0, failed = 0, measured = 0;
  for (const auto& c : r.cells) {
    if (c.status == CellStatus::Unavailable) continue;
    ++measured;
    fell_back += c.status == CellStatus::Ok && c.fell_back;
    failed += c.status == CellStatus::Failed;
  }
  if (m.load.busy) {
    out.push_back(fmt::format("The machine was busy when the campaign started ({}): {} of {} cells fell back to a "
                              "lower rate and {} failed. Its figures are the other work's as much as cerulion's; "
                              "measure again on a quiet machine.",
                              m.load.why, fell_back, measured, failed));
  } else if (fell_back + failed > 0) {
    out.push_back(fmt::format("{} of {} cells fell back to a lower rate than {:g} Hz (marked @) and {} failed.",
                              fell_back, measured, r.settings.rate_hz, failed));
  }
  if (r.interrupted) {
    out.push_back(r.cells.size() == 1 ? std::string("Interrupted: only the cell finished before is shown.")
                                      : fmt::format("Interrupted: only the {} cells finished before are shown.", r.cells.size()));
  }
  return out;
}

}  // namespace cerulion::bench::detail
