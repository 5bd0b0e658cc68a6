// SPDX-License-Identifier: Apache-2.0
// The reports: the JSON's keys, every cell in the Markdown and the HTML, an HTML page that is
// well-formed and self-contained, and the baseline check.

#include <catch2/catch.hpp>

#include <regex>

#include "cerulion/bench/baseline.hpp"
#include "cerulion/bench/report.hpp"

using namespace cerulion;
using namespace cerulion::bench;

namespace {

CampaignResult sample_result() {
  CampaignResult r;
  r.settings.sizes = {64, 1u << 20};
  r.settings.repetitions = 2;
  auto lanes = known_lanes();
  r.lanes = {lanes[0], lanes[2], lanes[3]};
  r.lanes[2].available = false;
  r.lanes[2].reason = "built without Fast DDS";
  double base = 4.0;
  for (const auto& lane : r.lanes) {
    for (auto size : r.settings.sizes) {
      Cell c;
      c.lane = lane.name;
      c.size = size;
      c.rate_hz = 100;
      if (!lane.available) {
        c.status = CellStatus::Unavailable;
        c.reason = lane.reason;
      } else {
        c.median_us = base;
        c.repetition_medians_us = {base, base + 0.1};
        c.p99_us = base * 10;
        c.samples = 1000;
        base *= 3;
      }
      r.cells.push_back(c);
    }
  }
  return r;
}

const Machine kMachine{"Test CPU", 2, "Linux 6.1", "", "testhost", {}};
const Build kBuild{"0.1.0", "abc123"};

// Every element opened is closed, in order (void and self-closed ones aside).
bool well_formed(const std::string& html) {
  std::vector<std::string> open;
  std::regex tag(R"(<(/?)([a-zA-Z][a-zA-Z0-9]*)[^>]*?(/?)>)");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), tag); it != std::sregex_iterator(); ++it) {
    const std::string closing = (*it)[1], name = (*it)[2], self = (*it)[3];
    if (!self.empty() || name == "meta") continue;
    if (closing.empty()) {
      open.push_back(name);
    } else {
      if (open.empty() || open.back() != name) return false;
      open.pop_back();
    }
  }
  return open.empty();
}

}  // namespace

TEST_CASE("The JSON report has the machine, the settings and every cell with its figures", "[bench][report]") {
  auto j = json_report(sample_result(), kMachine, kBuild);
  CHECK(j["format"] == kJsonFormat);
  CHECK(j["machine"]["cpu_model"] == "Test CPU");
  CHECK(j["settings"]["repetitions"] == 2);
  REQUIRE(j["cells"].size() == 6);
  const auto& cell = j["cells"][0];
  for (const char* key : {"lane", "size_bytes", "rate_hz", "status", "median_us", "p99_us", "repetition_medians_us",
                          "samples", "skipped_slots", "cpu_pct", "rss_bytes"}) {
    INFO(key);
    CHECK(cell.contains(key));
  }
  CHECK(cell["cpu_pct"].contains("ping"));
  CHECK(j["cells"][4]["status"] == "unavailable");
  CHECK(j["cells"][4]["reason"] == "built without Fast DDS");
}

TEST_CASE("The text, Markdown and HTML reports show every cell", "[bench][report]") {
  auto r = sample_result();
  const auto text = text_report(r, kMachine, kBuild);
  const auto md = markdown_report(r, kMachine, kBuild);
  const auto html = html_report(r, kMachine, kBuild);
  for (const auto* out : {&text, &md, &html}) {
    for (const auto& lane : r.lanes) CHECK(out->find(lane.name) != std::string::npos);
    for (const char* value : {"4.00 µs", "12.00 µs", "36.00 µs", "108.0 µs", "unavailable"}) {
      INFO(value);
      CHECK(out->find(value) != std::string::npos);
    }
    CHECK(out->find("Test CPU") != std::string::npos);
  }
  // The headline: ratios to the fastest lane at 64 B.
  CHECK(text.find("1.00x") != std::string::npos);
  CHECK(text.find("9.00x") != std::string::npos);
  CHECK(md.find("| lane |") != std::string::npos);
}

TEST_CASE("The HTML page is well-formed and self-contained, with both charts", "[bench][report]") {
  const auto html = html_report(sample_result(), kMachine, kBuild);
  CHECK(well_formed(html));
  CHECK(html.find("<script") == std::string::npos);
  CHECK(html.find("http://") == html.find("http://www.w3.org/2000/svg"));
  CHECK(html.find("https://") == std::string::npos);
  CHECK(std::count(html.begin(), html.end(), '\n') > 20);
  std::size_t svgs = 0;
  for (auto at = html.find("<svg"); at != std::string::npos; at = html.find("<svg", at + 1)) ++svgs;
  CHECK(svgs == 2);
  // Gridlines a decade apart: 1 µs, 10 µs, 100 µs.
  CHECK(html.find(">1 µs<") != std::string::npos);
  CHECK(html.find(">100 µs<") != std::string::npos);
  CHECK_FALSE(well_formed("<table><tr></table>"));
}

TEST_CASE("The HTML shows each lane's p99 beside its median where it is quotable, and its CPU", "[bench][report]") {
  auto r = sample_result();
  r.cells[0].p99_quotable = true;  // native-multi 64 B
  r.cells[0].cpu_pct_ping = 1.5;
  r.cells[0].cpu_pct_pong = 0.7;
  r.cells[2].cpu_pct_ping = 100;   // native-single 64 B: too few samples for its p99
  r.cells[2].cpu_pct_pong = 99.5;
  const auto html = html_report(r, kMachine, kBuild);
  CHECK(well_formed(html));
  // The chart's labels, and the headline table's columns.
  CHECK(html.find("4.00 µs, p99 40.00 µs, CPU 1.5 / 0.7 %") != std::string::npos);
  CHECK(html.find("36.00 µs, CPU 100.0 / 99.5 %") != std::string::npos);
  CHECK(html.find("<td>40.00 µs</td>") != std::string::npos);
  CHECK(html.find("<td>1.5 / 0.7 %</td>") != std::string::npos);
  CHECK(html.find("36.00 µs, p99") == std::string::npos);
}

TEST_CASE("A baseline passes within the tolerance and fails when a cerulion lane got slower", "[bench][report]") {
  const auto before = sample_result();
  auto slower = sample_result();
  slower.cells[0].median_us *= 1.5;   // native-multi 64 B
  slower.cells[4].median_us = 0;      // unavailable either way
  SECTION("same run") {
    auto c = compare_with_baseline(before, before, 1.25);
    CHECK(c.cells.size() == 4);
    CHECK_FALSE(c.regressed());
    CHECK(regression_summary(c, 1.25).empty());
    CHECK(describe(c.cells[0], 1.25) == "native-multi 64 B: 4.00 µs -> 4.00 µs (1.00x)");
    // Both at the same lower rate: compared, and said.
    auto base = sample_result(), now = sample_result();
    for (auto* r : {&base, &now}) {
      r->cells[0].rate_hz = 20;
      r->cells[0].fell_back = true;
    }
    auto low = compare_with_baseline(now, base, 1.25);
    CHECK(low.cells[0].finding == Finding::Compared);
    CHECK(describe(low.cells[0], 1.25) == "native-multi 64 B: 4.00 µs -> 4.00 µs (1.00x, both at 20 Hz)");
  }
  SECTION("slower") {
    auto c = compare_with_baseline(slower, before, 1.25);
    CHECK(c.cells[0].ratio == Approx(1.5));
    CHECK(c.cells[0].finding == Finding::Slower);
    CHECK(c.cells[0].regressed);
    CHECK(c.regressed());
    CHECK(describe(c.cells[0], 1.25).find("SLOWER") != std::string::npos);
    CHECK(regression_summary(c, 1.25) == "1 cerulion cell slower than 1.25x");
    CHECK_FALSE(compare_with_baseline(slower, before, 2.0).regressed());
  }
}

TEST_CASE("A cerulion cell that fails now, or kept only a lower rate, fails the baseline check with both rates",
          "[bench][report]") {
  const auto before = sample_result();
  auto now = sample_result();
  SECTION("fails now") {
    now.cells[0].status = CellStatus::Failed;
    now.cells[0].reason = "skipped 30 of 530 slots at 20 Hz (over 1 %)";
    now.cells[0].rate_hz = 20;
    now.cells[0].fell_back = true;
    auto c = compare_with_baseline(now, before, 1.25);
    CHECK(c.cells[0].finding == Finding::Fails);
    CHECK(c.regressed());
    const auto line = describe(c.cells[0], 1.25);
    INFO(line);
    CHECK(line.find("4.00 µs @100 Hz -> failed @20 Hz: skipped 30 of 530 slots") != std::string::npos);
    CHECK(line.find("FAILS") != std::string::npos);
    CHECK(regression_summary(c, 1.25) == "1 cerulion cell failing");
  }
  SECTION("kept only a lower rate") {
    now.cells[1].rate_hz = 20;
    now.cells[1].fell_back = true;
    now.cells[1].median_us = 12.2;  // as fast as before, at a fifth of the rate
    auto c = compare_with_baseline(now, before, 1.25);
    CHECK(c.cells[1].finding == Finding::FellBack);
    CHECK(c.cells[1].regressed);
    const auto line = describe(c.cells[1], 1.25);
    INFO(line);
    CHECK(line.find("12.00 µs @100 Hz -> 12.20 µs @20 Hz") != std::string::npos);
    CHECK(line.find("FELL BACK") != std::string::npos);
    CHECK(regression_summary(c, 1.25).find("kept only a lower rate") != std::string::npos);
  }
  SECTION("medians at different rates are not compared") {
    // The issue's case: 4.16 µs at 20 Hz in the baseline against 108.95 µs at 100 Hz now.
    auto base = sample_result();
    base.cells[0].rate_hz = 20;
    base.cells[0].fell_back = true;
    base.cells[0].median_us = 4.16;
    now.cells[0].median_us = 108.94;
    auto c = compare_with_baseline(now, base, 1.25);
    CHECK(c.cells[0].finding == Finding::RateDiffers);
    CHECK_FALSE(c.cells[0].regressed);
    const auto line = describe(c.cells[0], 1.25);
    INFO(line);
    CHECK(line.find("4.16 µs @20 Hz -> 108.9 µs @100 Hz (not compared: measured at 100 Hz, the baseline at 20 Hz)") !=
          std::string::npos);
    CHECK(line.find("SLOWER") == std::string::npos);
  }
  SECTION("another transport failing is reported, not a regression") {
    // The second lane made fastdds-single in both runs; it fails now.
    const auto fastdds = known_lanes()[4];
    auto base = sample_result();
    for (auto* r : {&now, &base}) {
      r->lanes[1] = fastdds;
      r->cells[2].lane = r->cells[3].lane = fastdds.name;
    }
    now.cells[2].status = CellStatus::Failed;
    auto c = compare_with_baseline(now, base, 1.25);
    CHECK(c.cells[2].finding == Finding::Fails);
    CHECK_FALSE(c.cells[2].regressed);
    CHECK_FALSE(c.regressed());
  }
  SECTION("a baseline with none of this run's cerulion cells checks nothing, and fails") {
    auto other = sample_result();
    for (auto& cell : other.cells) cell.size *= 2;
    auto c = compare_with_baseline(now, other, 1.25);
    CHECK(c.cells.empty());
    CHECK(c.nothing_checked);
    CHECK(c.regressed());
    CHECK(regression_summary(c, 1.25).find("could be checked") != std::string::npos);
  }
}

TEST_CASE("The JSON report reads back as it was written", "[bench][report]") {
  auto r = sample_result();
  r.cells[1].rate_hz = 20;
  r.cells[1].fell_back = true;
  r.cells[2].status = CellStatus::Failed;
  r.cells[2].reason = "ping died of signal 11";
  r.started_realtime_ns = 1'800'000'000'000'000'000ull;
  r.duration_s = 351.5;
  Machine m = kMachine;
  m.load.checked = true;
  m.load.cores = 2;
  m.load.before = LoadAverage{2.5, 2, 1};
  m.load.after = LoadAverage{1, 1, 1};
  m.load.floor.count = 300;
  m.load.floor.median = 131;
  m.load.floor.p99 = 2400;
  judge_load(m.load);
  const auto written = json_report(r, m, kBuild);
  auto read = read_json_report(written.dump(2));
  REQUIRE(read.ok());
  CHECK(json_report(read->result, read->machine, read->build) == written);
  CHECK(read->machine.load.busy);
  CHECK(read->result.cells[1].fell_back);
  CHECK(read->result.lanes[0].native);
  CHECK_FALSE(read->result.lanes[2].available);
  // And so render the same: a report rendered again is the report.
  CHECK(html_report(read->result, read->machine, read->build) == html_report(r, m, kBuild));
  CHECK(text_report(read->result, read->machine, read->build) == text_report(r, m, kBuild));
}

TEST_CASE("A file that is not a bench JSON is refused saying why, and an older one reads", "[bench][report]") {
  for (const char* bad : {"not json", "[]", "{\"cells\": []}", "{\"format\": 7, \"cells\": []}",
                          "{\"format\": \"cerulion-bench/1\", \"cells\": [{\"lane\": \"x\"}]}",
                          "{\"format\": \"cerulion-bench/1\", \"cells\": [{\"lane\": 3, \"size_bytes\": 64}]}",
                          "{\"format\": \"cerulion-bench/1\", \"cells\": [{\"lane\": \"x\", \"size_bytes\": 64, "
                          "\"status\": \"great\"}]}",
                          "{\"format\": \"cerulion-bench/1\", \"cells\": [{\"lane\": \"x\", \"size_bytes\": 64}]}"}) {
    INFO(bad);
    auto r = read_json_report(bad);
    CHECK(r.code() == ErrorCode::InvalidArgument);
    CHECK_FALSE(r.message().empty());
  }
  // Before the load and the lanes' transports were written: what is missing is left at its default.
  auto old = read_json_report(R"({"format": "cerulion-bench/1",
      "lanes": [{"name": "native-multi", "native": true, "available": true}],
      "cells": [{"lane": "native-multi", "size_bytes": 64, "rate_hz": 100, "status": "ok", "median_us": 4.2}]})");
  REQUIRE(old.ok());
  CHECK_FALSE(old->machine.load.checked);
  CHECK(old->result.lanes[0].transport == "native");
  CHECK(old->result.settings.sizes == std::vector<std::uint64_t>{64});
  CHECK(text_report(old->result, old->machine, old->build).find("4.20 µs") != std::string::npos);
}

TEST_CASE("The headline says at which rates two cells were measured when they differ", "[bench][report]") {
  auto r = sample_result();
  r.cells[0].rate_hz = 20;   // native-multi 64 B, the fastest
  r.cells[0].fell_back = true;
  r.cells[2].rate_hz = 50;   // native-single 64 B
  r.cells[2].fell_back = true;
  const auto text = text_report(r, kMachine, kBuild);
  INFO(text);
  CHECK(text.find("4.00 µs @20 Hz") != std::string::npos);
  CHECK(text.find("9.00x (50 Hz against 20 Hz)") != std::string::npos);
  CHECK(text.find("@ marks a cell measured at a lower rate than 100 Hz") != std::string::npos);
  CHECK(text.find("2 of 4 cells fell back to a lower rate than 100 Hz") != std::string::npos);
  CHECK(text.find("of 20 Hz") != std::string::npos);  // the details table: achieved of asked
}

TEST_CASE("A busy machine is said in every report", "[bench][report]") {
  auto r = sample_result();
  Machine m = kMachine;
  m.load.checked = true;
  m.load.cores = 2;
  m.load.before = LoadAverage{3.3, 3, 3};
  judge_load(m.load);
  REQUIRE(m.load.busy);
  for (const auto& out : {text_report(r, m, kBuild), markdown_report(r, m, kBuild), html_report(r, m, kBuild)}) {
    CHECK(out.find("The machine was busy when the campaign started (load average 3.30 on 2 CPUs") != std::string::npos);
    CHECK(out.find("BUSY") != std::string::npos);  // the machine table's load row
  }
  CHECK(text_report(sample_result(), kMachine, kBuild).find("busy") == std::string::npos);
}

TEST_CASE("The payload chart has titled log axes, marks points of a lower rate and says which lanes failed",
          "[bench][report]") {
  auto r = sample_result();  // 64 B and 1 MiB
  r.cells[1].rate_hz = 50;   // native-multi 1 MiB
  r.cells[1].fell_back = true;
  r.cells[2].status = r.cells[3].status = CellStatus::Failed;  // native-single, every size
  r.cells[2].reason = r.cells[3].reason = "ping died of signal 11";
  const auto html = html_report(r, kMachine, kBuild);
  CHECK(well_formed(html));
  CHECK(html.find("median round trip (log scale)</text>") != std::string::npos);
  CHECK(html.find("payload (log scale)</text>") != std::string::npos);
  // A payload axis, not one category per size: ticks between the sizes measured.
  for (const char* tick : {">64 B<", ">4 KiB<", ">64 KiB<", ">1 MiB<"}) {
    INFO(tick);
    CHECK(html.find(tick) != std::string::npos);
  }
  // The 50 Hz point is hollow, with its rate beside it.
  CHECK(html.find("fill=\"#fff\"") != std::string::npos);
  CHECK(html.find(">50 Hz</text>") != std::string::npos);
  CHECK(html.find("native-multi 1 MiB: 12.00 µs at 50 Hz") != std::string::npos);
  CHECK(html.find("native-single (failed at every size)") != std::string::npos);
  // The machine table has no empty header row.
  CHECK(html.find("<th></th>") == std::string::npos);
}

TEST_CASE("The reports count in words that fit one repetition, one cell and a bare host name", "[bench][report]") {
  auto r = sample_result();
  r.settings.repetitions = 1;
  r.interrupted = true;
  r.cells.resize(1);
  auto m = kMachine;
  m.hostname = "vm";
  const auto text = text_report(r, m, kBuild);
  CHECK(text.find("median of one repetition") != std::string::npos);
  CHECK(text.find("1 repetition medians") == std::string::npos);
  CHECK(text.find("only the cell finished before is shown") != std::string::npos);
  CHECK(html_report(r, m, kBuild).find("round-trip latency on host vm") != std::string::npos);
}
