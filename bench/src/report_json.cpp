// SPDX-License-Identifier: Apache-2.0
// A campaign as JSON, and read back: the writer and the reader of one format, side by side.

#include <algorithm>

#include <fmt/core.h>

#include "cerulion/bench/report.hpp"

namespace cerulion::bench {

namespace {

using json = nlohmann::ordered_json;

json load_average_json(const std::optional<LoadAverage>& l) {
  if (!l) return nullptr;
  return json::array({l->one, l->five, l->fifteen});
}

json load_json(const MachineLoad& l) {
  json floor = nullptr;
  if (l.floor.count > 0) {
    floor = {{"wait", "futex"}, {"samples", l.floor.count}, {"median_us", l.floor.median}, {"p99_us", l.floor.p99},
             {"max_us", l.floor.max}};
  }
  return {{"checked", l.checked},
          {"cores", l.cores},
          {"load_average", load_average_json(l.before)},
          {"load_average_after", load_average_json(l.after)},
          {"floor", floor},
          {"floor_error", l.floor_error},
          {"busy", l.busy},
          {"why", l.why}};
}

// The reader takes what is there and leaves the rest at its default: a report of an older build
// lacks the keys added since.
template <typename T>
T get_or(const json& j, const char* key, T fallback) {
  if (!j.is_object() || !j.contains(key) || j[key].is_null()) return fallback;
  return j[key].get<T>();
}

std::optional<LoadAverage> read_load_average_json(const json& j) {
  if (!j.is_array() || j.size() != 3) return std::nullopt;
  return LoadAverage{j[0].get<double>(), j[1].get<double>(), j[2].get<double>()};
}

MachineLoad read_load(const json& j) {
  MachineLoad l;
  if (!j.is_object()) return l;
  l.checked = get_or(j, "checked", false);
  l.cores = get_or(j, "cores", 0u);
  l.before = read_load_average_json(j.value("load_average", json()));
  l.after = read_load_average_json(j.value("load_average_after", json()));
  if (const json floor = j.value("floor", json()); floor.is_object()) {
    l.floor.count = get_or<std::size_t>(floor, "samples", 0);
    l.floor.median = get_or(floor, "median_us", 0.0);
    l.floor.p99 = get_or(floor, "p99_us", 0.0);
    l.floor.max = get_or(floor, "max_us", 0.0);
  }
  l.floor_error = get_or<std::string>(j, "floor_error", "");
  l.busy = get_or(j, "busy", false);
  l.why = get_or<std::string>(j, "why", "");
  return l;
}

Result<CellStatus> cell_status(const std::string& text) {
  for (auto s : {CellStatus::Ok, CellStatus::Failed, CellStatus::Unavailable}) {
    if (text == to_string(s)) return s;
  }
  return Status(ErrorCode::InvalidArgument, fmt::format("a cell's status is '{}' (ok, failed or unavailable)", text));
}

}  // namespace

nlohmann::ordered_json json_report(const CampaignResult& r, const Machine& machine, const Build& build) {
  json j;
  j["format"] = kJsonFormat;
  j["machine"] = {{"cpu_model", machine.cpu_model},
                  {"cores", machine.cores},
                  {"kernel", machine.kernel},
                  {"governor", machine.governor},
                  {"hostname", machine.hostname},
                  {"load", load_json(machine.load)}};
  j["build"] = {{"version", build.version}, {"commit", build.commit}};
  const auto& s = r.settings;
  j["settings"] = {{"lanes", json::array()},
                   {"sizes_bytes", s.sizes},
                   {"repetitions", s.repetitions},
                   {"samples", s.samples},
                   {"warmup", s.warmup},
                   {"rate_hz", s.rate_hz},
                   {"fallback_rates_hz", s.fallback_rates},
                   {"max_skipped_fraction", s.max_skipped_fraction},
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
                          {"transport", lane.transport},
                          {"process", lane.process},
                          {"mode", lane.mode},
                          {"wait", lane.wait},
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

Result<SavedReport> read_json_report(std::string_view text) {
  json j;
  try {
    j = json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    return Status(ErrorCode::InvalidArgument, fmt::format("not JSON ({})", e.what()));
  }
  if (!j.is_object() || !j.contains("format") || j["format"] != kJsonFormat || !j.contains("cells") ||
      !j["cells"].is_array()) {
    return Status(ErrorCode::InvalidArgument,
                  fmt::format("not a bench JSON (no \"format\": \"{}\" with \"cells\")", kJsonFormat));
  }
  SavedReport out;
  try {
    const json m = j.value("machine", json::object());
    out.machine.cpu_model = get_or<std::string>(m, "cpu_model", "");
    out.machine.cores = get_or(m, "cores", 0u);
    out.machine.kernel = get_or<std::string>(m, "kernel", "");
    out.machine.governor = get_or<std::string>(m, "governor", "");
    out.machine.hostname = get_or<std::string>(m, "hostname", "");
    out.machine.load = read_load(m.value("load", json()));
    const json b = j.value("build", json::object());
    out.build.version = get_or<std::string>(b, "version", "");
    out.build.commit = get_or<std::string>(b, "commit", "");

    CampaignResult& r = out.result;
    const json s = j.value("settings", json::object());
    CampaignSettings& set = r.settings;
    set.sizes = get_or(s, "sizes_bytes", set.sizes);
    set.repetitions = get_or(s, "repetitions", set.repetitions);
    set.samples = get_or(s, "samples", set.samples);
    set.warmup = get_or(s, "warmup", set.warmup);
    set.rate_hz = get_or(s, "rate_hz", set.rate_hz);
    set.fallback_rates = get_or(s, "fallback_rates_hz", set.fallback_rates);
    set.max_skipped_fraction = get_or(s, "max_skipped_fraction", set.max_skipped_fraction);
    set.wait = get_or(s, "wait", set.wait);
    set.flashback = get_or(s, "flashback", set.flashback);
    set.headline_size = get_or(s, "headline_size_bytes", set.headline_size);
    set.lanes = get_or(s, "lanes", std::vector<std::string>{});
    r.started_realtime_ns = get_or<std::uint64_t>(j, "started_realtime_ns", 0);
    r.duration_s = get_or(j, "duration_s", 0.0);
    r.interrupted = get_or(j, "interrupted", false);

    const auto known = known_lanes();
    for (const auto& l : j.value("lanes", json::array())) {
      Lane lane;
      lane.name = get_or<std::string>(l, "name", "");
      if (lane.name.empty()) return Status(ErrorCode::InvalidArgument, "a lane without a name");
      // What an older report did not write is what the lane of that name is.
      for (const auto& k : known) {
        if (k.name == lane.name) lane = k;
      }
      lane.description = get_or(l, "description", lane.description);
      lane.transport = get_or(l, "transport", lane.transport);
      lane.process = get_or(l, "process", lane.process);
      lane.mode = get_or(l, "mode", lane.mode);
      lane.wait = get_or(l, "wait", lane.wait);
      lane.native = get_or(l, "native", lane.native);
      lane.available = get_or(l, "available", true);
      lane.reason = get_or<std::string>(l, "reason", "");
      r.lanes.push_back(std::move(lane));
    }
    for (const auto& c : j["cells"]) {
      if (!c.is_object() || !c.contains("lane") || !c.contains("size_bytes")) {
        return Status(ErrorCode::InvalidArgument, "a cell without \"lane\" and \"size_bytes\"");
      }
      Cell cell;
      cell.lane = c["lane"].get<std::string>();
      cell.size = c["size_bytes"].get<std::uint64_t>();
      auto status = cell_status(get_or<std::string>(c, "status", "ok"));
      if (!status) return status.status();
      cell.status = *status;
      cell.reason = get_or<std::string>(c, "reason", "");
      cell.rate_hz = get_or(c, "rate_hz", set.rate_hz);
      cell.fell_back = get_or(c, "fell_back", false);
      if (cell.status == CellStatus::Ok) {
        if (!c.contains("median_us") || !c["median_us"].is_number()) {
          return Status(ErrorCode::InvalidArgument,
                        fmt::format("the ok cell {} {} has no median", cell.lane, size_label(cell.size)));
        }
        cell.median_us = c["median_us"].get<double>();
        cell.p90_us = get_or(c, "p90_us", 0.0);
        cell.p99_us = get_or(c, "p99_us", 0.0);
        cell.p99_quotable = get_or(c, "p99_quotable", false);
        cell.min_us = get_or(c, "min_us", 0.0);
        cell.max_us = get_or(c, "max_us", 0.0);
        cell.repetition_medians_us = get_or(c, "repetition_medians_us", std::vector<double>{});
        cell.samples = get_or<std::uint64_t>(c, "samples", 0);
        cell.skipped_slots = get_or<std::uint64_t>(c, "skipped_slots", 0);
        cell.lost = get_or<std::uint64_t>(c, "lost", 0);
        cell.achieved_rate_hz = get_or(c, "achieved_rate_hz", 0.0);
        const json cpu = c.value("cpu_pct", json::object());
        cell.cpu_pct_ping = get_or(cpu, "ping", 0.0);
        cell.cpu_pct_pong = get_or(cpu, "pong", 0.0);
        const json rss = c.value("rss_bytes", json::object());
        cell.rss_ping = get_or<std::uint64_t>(rss, "ping", 0);
        cell.rss_pong = get_or<std::uint64_t>(rss, "pong", 0);
        cell.samples_files = get_or(c, "samples_files", std::vector<std::string>{});
      }
      // A cell of a lane the list lacks (a hand-made file) still shows.
      if (std::none_of(r.lanes.begin(), r.lanes.end(), [&](const Lane& l) { return l.name == cell.lane; })) {
        Lane lane;
        lane.name = cell.lane;
        for (const auto& k : known) {
          if (k.name == lane.name) lane = k;
        }
        r.lanes.push_back(std::move(lane));
      }
      r.cells.push_back(std::move(cell));
    }
    if (!s.contains("sizes_bytes")) {
      set.sizes.clear();
      for (const auto& c : r.cells) {
        if (std::find(set.sizes.begin(), set.sizes.end(), c.size) == set.sizes.end()) set.sizes.push_back(c.size);
      }
    }
  } catch (const nlohmann::json::exception& e) {
    return Status(ErrorCode::InvalidArgument, fmt::format("a bench JSON with a value of the wrong type ({})", e.what()));
  }
  return out;
}

}  // namespace cerulion::bench
