// SPDX-License-Identifier: Apache-2.0
#include "cerulion/measurement/ping_summary.hpp"

#include <cmath>

#include <nlohmann/json.hpp>

namespace cerulion::measurement {
namespace {

using nlohmann::json;

constexpr double kP90 = 0.90, kP99 = 0.99;

/// Microseconds to the nanosecond, percentages to a hundredth: what the measurement resolves.
double rounded(double value, int decimals) {
  const double scale = std::pow(10.0, decimals);
  return std::round(value * scale) / scale;
}
double us(double value) { return rounded(value, 3); }

json optional_number(const std::optional<double>& v) { return v ? json(*v) : json(); }
json optional_cpu(const std::optional<int>& v) { return v ? json(*v) : json(); }

std::optional<double> read_optional_number(const json& j) {
  if (j.is_null()) return std::nullopt;
  return j.get<double>();
}
TripPart tail_part_named(const std::string& name) {
  for (TripPart p : {TripPart::Request, TripPart::Turnaround, TripPart::Reply}) {
    if (name == to_string(p)) return p;
  }
  throw json::other_error::create(501, "unknown tail part '" + name + "'", nullptr);
}
LateCause tail_cause_named(const std::string& name) {
  for (std::size_t i = 0; i < kLateCauses; ++i) {
    if (name == to_string(static_cast<LateCause>(i))) return static_cast<LateCause>(i);
  }
  throw json::other_error::create(501, "unknown tail cause '" + name + "'", nullptr);
}

std::optional<int> read_optional_cpu(const json& j) {
  if (j.is_null()) return std::nullopt;
  return j.get<int>();
}

}  // namespace

PingSummary summary_of(const PingReport& r, const PingFigures& f, const std::optional<PingKeeperFigures>& keeper) {
  const PingOptions& o = r.options;
  const Summary& s = f.round_trip_us;
  PingSummary out;
  out.size_bytes = o.size;
  out.rate_hz = o.rate_hz;
  out.warmup = o.warmup;
  out.process = to_string(o.layout);
  out.transport = o.transport;
  out.mode = to_string(o.mode);
  out.wait = to_string(o.wait);
  out.cpu_ping = o.cpus.ping;
  out.cpu_pong = o.cpus.pong;
  out.count = s.count;
  out.skipped_slots = r.skipped;
  out.lost = r.lost;
  out.rtt_us = {us(s.min), us(s.median), us(s.mean), us(s.max),
                quotable(s.count, kP90) ? std::optional<double>(us(s.p90)) : std::nullopt,
                quotable(s.count, kP99) ? std::optional<double>(us(s.p99)) : std::nullopt};
  if (const auto& leg = f.request_one_way_us) out.request_one_way_us = PingSummary::Leg{us(leg->min), us(leg->median), us(leg->max)};
  out.cpu_pct_ping = rounded(r.cpu_pct_ping, 2);
  out.cpu_pct_pong = rounded(r.cpu_pct_pong, 2);
  out.cpu_pong_resolved = r.cpu_pong_resolved;
  out.peer_may_share_cpu = r.peer_may_share_cpu;
  out.rss_ping = r.rss_ping;
  out.rss_pong = r.rss_pong;
  out.pong_gone = r.responder_gone;
  if (const auto& a = f.alternate) {
    out.alternate = PingSummary::Alternate{us(a->direct_us.median), us(a->wait_set_us.median), a->direct_us.count,
                                           a->wait_set_us.count, rounded(a->median_ratio, 3)};
  }
  if (o.explain_tail) {
    out.tail = explain_tail(r.samples_ns, r.traces);
    out.phases = find_slow_phases(r.samples_ns, r.traces);
  }
  out.flashback = keeper.has_value();
  if (keeper) {
    out.keeper = *keeper;
    out.keeper->cpu_pct = rounded(keeper->cpu_pct, 2);
    out.keeper->compression_ratio = rounded(keeper->compression_ratio, 2);
  }
  return out;
}

std::string to_json(const PingSummary& s) {
  json j;
  j["size_bytes"] = s.size_bytes;
  j["rate_hz"] = s.rate_hz;
  j["count"] = s.count;
  j["warmup"] = s.warmup;
  j["skipped_slots"] = s.skipped_slots;
  j["lost"] = s.lost;
  j["process"] = s.process;
  j["transport"] = s.transport;
  j["mode"] = s.mode;
  j["wait"] = s.wait;
  j["cpus"] = {{"ping", optional_cpu(s.cpu_ping)}, {"pong", optional_cpu(s.cpu_pong)}};
  j["rtt_us"] = {{"min", s.rtt_us.min}, {"median", s.rtt_us.median}, {"mean", s.rtt_us.mean},
                 {"p90", optional_number(s.rtt_us.p90)}, {"p99", optional_number(s.rtt_us.p99)}, {"max", s.rtt_us.max}};
  if (const auto& leg = s.request_one_way_us) {
    j["request_one_way_us"] = {{"min", leg->min}, {"median", leg->median}, {"max", leg->max}};
  }
  j["cpu_pct"] = {{"ping", s.cpu_pct_ping}, {"pong", s.cpu_pct_pong}};
  j["cpu_pong_resolved"] = s.cpu_pong_resolved;
  j["peer_may_share_cpu"] = s.peer_may_share_cpu;
  j["rss_bytes"] = {{"ping", s.rss_ping}, {"pong", s.rss_pong}};
  j["pong_gone"] = s.pong_gone;
  j["flashback"] = s.flashback;
  if (const auto& a = s.alternate) {
    j["alternate"] = {{"direct_median_us", a->direct_median_us}, {"wait_set_median_us", a->wait_set_median_us},
                      {"direct_count", a->direct_count},         {"wait_set_count", a->wait_set_count},
                      {"ratio", a->ratio}};
  }
  if (const auto& k = s.keeper) {
    j["keeper"] = {{"cpu_pct", k->cpu_pct},           {"rss_bytes", k->rss_bytes},
                   {"messages", k->messages},         {"lost", k->lost},
                   {"memory_bytes", k->memory_bytes}, {"compression_ratio", k->compression_ratio}};
  }
  if (const auto& t = s.tail) {
    json rows = json::array();
    for (const auto& row : t->rows) {
      rows.push_back({{"part", to_string(row.part)},
                      {"cause", to_string(row.cause)},
                      {"count", row.count},
                      {"median_by_us", us(row.median_by_us)},
                      {"max_by_us", us(row.max_by_us)},
                      {"median_rtt_us", us(row.median_rtt_us)}});
    }
    j["tail"] = {{"factor", t->factor},
                 {"median_us", us(t->median_us)},
                 {"trips", t->trips},
                 {"late", t->late},
                 {"rows", rows},
                 {"futex", {{"legs", t->futex_legs}, {"median_us", us(t->futex_median_us)}, {"p99_us", us(t->futex_p99_us)}, {"max_us", us(t->futex_max_us)}}},
                 {"send_lateness_us", {{"median", us(t->send_lateness_median_us)}, {"max", us(t->send_lateness_max_us)}}}};
  }
  if (const auto& p = s.phases) {
    json phases = json::array();
    auto side = [](const PhaseSide& d) {
      return json{{"waits", d.waits},
                  {"missed", d.missed},
                  {"fallen_back", d.fallen_back},
                  {"cause", to_string(d.cause)},
                  {"arrival_minus_predicted_us", us(d.arrival_minus_predicted_us)},
                  {"margin_us", us(d.margin_us)},
                  {"window_us", us(d.window_us)},
                  {"oversleep_us", us(d.oversleep_us)}};
    };
    for (const SlowPhase& ph : p->phases) {
      phases.push_back({{"first", ph.first}, {"end", ph.end}, {"median_us", us(ph.median_us)},
                        {"pong", side(ph.responder)}, {"ping", side(ph.requester)}});
    }
    j["phases"] = {{"window", p->rule.window},
                   {"windows", p->windows},
                   {"fastest_window_us", us(p->fastest_window_us)},
                   {"found", phases}};
  }
  return j.dump();
}

Result<PingSummary> ping_summary_from_json(std::string_view text) {
  // A program's stdout may hold lines before the summary; the summary is the last object.
  std::string_view line = text;
  while (!line.empty() && (line.back() == '\n' || line.back() == ' ')) line.remove_suffix(1);
  if (const auto start = line.rfind("\n{"); start != std::string_view::npos) line.remove_prefix(start + 1);
  try {
    const json j = json::parse(line);
    PingSummary s;
    s.size_bytes = j.at("size_bytes").get<std::uint64_t>();
    s.rate_hz = j.at("rate_hz").get<double>();
    s.count = j.at("count").get<std::uint64_t>();
    s.warmup = j.at("warmup").get<std::uint64_t>();
    s.skipped_slots = j.at("skipped_slots").get<std::uint64_t>();
    s.lost = j.at("lost").get<std::uint64_t>();
    s.process = j.at("process").get<std::string>();
    s.transport = j.at("transport").get<std::string>();
    s.mode = j.at("mode").get<std::string>();
    s.wait = j.at("wait").get<std::string>();
    s.cpu_ping = read_optional_cpu(j.at("cpus").at("ping"));
    s.cpu_pong = read_optional_cpu(j.at("cpus").at("pong"));
    const json& rtt = j.at("rtt_us");
    s.rtt_us = {rtt.at("min").get<double>(), rtt.at("median").get<double>(), rtt.at("mean").get<double>(),
                rtt.at("max").get<double>(), read_optional_number(rtt.at("p90")), read_optional_number(rtt.at("p99"))};
    if (j.contains("request_one_way_us")) {
      const json& leg = j.at("request_one_way_us");
      s.request_one_way_us = PingSummary::Leg{leg.at("min").get<double>(), leg.at("median").get<double>(),
                                              leg.at("max").get<double>()};
    }
    s.cpu_pct_ping = j.at("cpu_pct").at("ping").get<double>();
    s.cpu_pct_pong = j.at("cpu_pct").at("pong").get<double>();
    s.cpu_pong_resolved = j.at("cpu_pong_resolved").get<bool>();
    s.peer_may_share_cpu = j.at("peer_may_share_cpu").get<bool>();
    s.rss_ping = j.at("rss_bytes").at("ping").get<std::uint64_t>();
    s.rss_pong = j.at("rss_bytes").at("pong").get<std::uint64_t>();
    s.pong_gone = j.at("pong_gone").get<bool>();
    s.flashback = j.at("flashback").get<bool>();
    if (j.contains("alternate")) {
      const json& a = j.at("alternate");
      s.alternate = PingSummary::Alternate{a.at("direct_median_us").get<double>(), a.at("wait_set_median_us").get<double>(),
                                           a.at("direct_count").get<std::uint64_t>(),
                                           a.at("wait_set_count").get<std::uint64_t>(), a.at("ratio").get<double>()};
    }
    if (j.contains("keeper")) {
      const json& k = j.at("keeper");
      s.keeper = PingKeeperFigures{k.at("cpu_pct").get<double>(),      k.at("rss_bytes").get<std::uint64_t>(),
                                   k.at("messages").get<std::uint64_t>(), k.at("lost").get<std::uint64_t>(),
                                   k.at("memory_bytes").get<std::uint64_t>(), k.at("compression_ratio").get<double>()};
    }
    if (j.contains("tail")) {
      const json& t = j.at("tail");
      TailBreakdown b;
      b.factor = t.at("factor").get<double>();
      b.median_us = t.at("median_us").get<double>();
      b.trips = t.at("trips").get<std::size_t>();
      b.late = t.at("late").get<std::size_t>();
      for (const json& row : t.at("rows")) {
        TailBreakdown::Row r;
        r.part = tail_part_named(row.at("part").get<std::string>());
        r.cause = tail_cause_named(row.at("cause").get<std::string>());
        r.count = row.at("count").get<std::size_t>();
        r.median_by_us = row.at("median_by_us").get<double>();
        r.max_by_us = row.at("max_by_us").get<double>();
        r.median_rtt_us = row.at("median_rtt_us").get<double>();
        b.rows.push_back(r);
      }
      const json& f = t.at("futex");
      b.futex_legs = f.at("legs").get<std::size_t>();
      b.futex_median_us = f.at("median_us").get<double>();
      b.futex_p99_us = f.at("p99_us").get<double>();
      b.futex_max_us = f.at("max_us").get<double>();
      b.send_lateness_median_us = t.at("send_lateness_us").at("median").get<double>();
      b.send_lateness_max_us = t.at("send_lateness_us").at("max").get<double>();
      s.tail = std::move(b);
    }
    if (j.contains("phases")) {
      const json& p = j.at("phases");
      SlowPhases phases;
      phases.rule.window = p.at("window").get<std::size_t>();
      phases.windows = p.at("windows").get<std::size_t>();
      phases.fastest_window_us = p.at("fastest_window_us").get<double>();
      auto side = [](const json& d) {
        PhaseSide out;
        out.waits = d.at("waits").get<std::size_t>();
        out.missed = d.at("missed").get<std::size_t>();
        out.fallen_back = d.at("fallen_back").get<std::size_t>();
        out.cause = tail_cause_named(d.at("cause").get<std::string>());
        out.arrival_minus_predicted_us = d.at("arrival_minus_predicted_us").get<double>();
        out.margin_us = d.at("margin_us").get<double>();
        out.window_us = d.at("window_us").get<double>();
        out.oversleep_us = d.at("oversleep_us").get<double>();
        return out;
      };
      for (const json& ph : p.at("found")) {
        phases.phases.push_back({ph.at("first").get<std::size_t>(), ph.at("end").get<std::size_t>(),
                                 ph.at("median_us").get<double>(), side(ph.at("pong")), side(ph.at("ping"))});
      }
      s.phases = std::move(phases);
    }
    return s;
  } catch (const json::exception& e) {
    // nlohmann's messages start with "[json.exception.<kind>.<id>] "; the rest says what.
    std::string why = e.what();
    if (const auto close = why.find("] "); close != std::string::npos) why = why.substr(close + 2);
    return Status{ErrorCode::InvalidArgument, "not a ping summary: " + why};
  }
}

}  // namespace cerulion::measurement
