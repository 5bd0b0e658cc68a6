// SPDX-License-Identifier: Apache-2.0
// A campaign as JSON, and the comparison with an earlier campaign's JSON.

#include <fmt/core.h>

#include "cerulion/bench/baseline.hpp"
#include "cerulion/bench/report.hpp"

namespace cerulion::bench {

nlohmann::ordered_json json_report(const CampaignResult& r, const Machine& machine, const Build& build) {
  using json = nlohmann::ordered_json;
  json j;
  j["format"] = kJsonFormat;
  j["machine"] = {{"cpu_model", machine.cpu_model},
                  {"cores", machine.cores},
                  {"kernel", machine.kernel},
                  {"governor", machine.governor},
                  {"hostname", machine.hostname}};
  j["build"] = {{"version", build.version}, {"commit", build.commit}};
  const auto& s = r.settings;
  j["settings"] = {{"lanes", json::array()},
                   {"sizes_bytes", s.sizes},
                   {"repetitions", s.repetitions},
                   {"samples", s.samples},
                   {"warmup", s.warmup},
                   {"rate_hz", s.rate_hz},
                   {"fallback_rates_hz", s.fallback_rates},
                   {"wait", s.wait},
                   {"flashback", s.flashback},
                   {"headline_size_bytes", s.headline_size}};
  for (const auto& lane : r.lanes) j["settings"]["lanes"].push_back(lane.name);
  j["started_realtime_ns"] = r.started_realtime_ns;
  j["duration_s"] = r.duration_s;
  j["interrupted"] = r.interrupted;
  j["lanes"] = json::array();
  for (const auto& lane : r.lanes) {
    j["lanes"].push_back({{"name", lane.name},
                          {"description", lane.description},
                          {"native", lane.native},
                          {"available", lane.available},
                          {"reason", lane.reason}});
  }
  j["cells"] = json::array();
  for (const auto& c : r.cells) {
    json cell = {{"lane", c.lane},
                 {"size_bytes", c.size},
                 {"rate_hz", c.rate_hz},
                 {"fell_back", c.fell_back},
                 {"status", to_string(c.status)},
                 {"reason", c.reason}};
    if (c.status == CellStatus::Ok) {
      cell["median_us"] = c.median_us;
      cell["p90_us"] = c.p90_us;
      cell["p99_us"] = c.p99_us;
      cell["p99_quotable"] = c.p99_quotable;
      cell["min_us"] = c.min_us;
      cell["max_us"] = c.max_us;
      cell["repetition_medians_us"] = c.repetition_medians_us;
      cell["samples"] = c.samples;
      cell["skipped_slots"] = c.skipped_slots;
      cell["lost"] = c.lost;
      cell["achieved_rate_hz"] = c.achieved_rate_hz;
      cell["cpu_pct"] = {{"ping", c.cpu_pct_ping}, {"pong", c.cpu_pct_pong}};
      cell["rss_bytes"] = {{"ping", c.rss_ping}, {"pong", c.rss_pong}};
      cell["samples_files"] = c.samples_files;
    }
    j["cells"].push_back(std::move(cell));
  }
  return j;
}

Result<std::vector<CellComparison>> compare_with_baseline(const nlohmann::ordered_json& current,
                                                          const std::string& baseline_text, double tolerance) {
  nlohmann::ordered_json base;
  try {
    base = nlohmann::ordered_json::parse(baseline_text);
  } catch (const nlohmann::json::exception& e) {
    return Status(ErrorCode::InvalidArgument, fmt::format("not JSON ({})", e.what()));
  }
  if (!base.is_object() || base.value("format", "") != kJsonFormat || !base.contains("cells") ||
      !base["cells"].is_array()) {
    return Status(ErrorCode::InvalidArgument, std::string("not a bench JSON (no \"format\": \"") + kJsonFormat +
                                                  "\" with \"cells\")");
  }
  std::vector<CellComparison> out;
  std::map<std::string, bool> native;
  for (const auto& lane : current.value("lanes", nlohmann::ordered_json::array())) {
    native[lane.value("name", "")] = lane.value("native", false);
  }
  for (const auto& cell : current["cells"]) {
    if (cell.value("status", "") != "ok") continue;
    for (const auto& old : base["cells"]) {
      if (!old.is_object() || old.value("lane", "") != cell["lane"] ||
          old.value("size_bytes", std::uint64_t{0}) != cell["size_bytes"].get<std::uint64_t>() ||
          old.value("status", "") != "ok" || !old.contains("median_us") || !old["median_us"].is_number()) {
        continue;
      }
      CellComparison c;
      c.lane = cell["lane"];
      c.size = cell["size_bytes"];
      c.baseline_us = old["median_us"];
      c.current_us = cell["median_us"];
      c.ratio = c.baseline_us > 0 ? c.current_us / c.baseline_us : 0;
      c.regressed = native[c.lane] && c.ratio > tolerance;
      out.push_back(c);
    }
  }
  return out;
}

}  // namespace cerulion::bench
