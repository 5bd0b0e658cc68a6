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

const Machine kMachine{"Test CPU", 2, "Linux 6.1", "", "testhost"};
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

TEST_CASE("A baseline passes within the tolerance and fails when a cerulion lane got slower", "[bench][report]") {
  auto before = json_report(sample_result(), kMachine, kBuild);
  auto slower = sample_result();
  slower.cells[0].median_us *= 1.5;   // native-multi 64 B
  slower.cells[4].median_us = 0;      // unavailable either way
  auto now = json_report(slower, kMachine, kBuild);
  SECTION("same run") {
    auto c = compare_with_baseline(before, before.dump(), 1.25);
    REQUIRE(c.ok());
    CHECK(c->size() == 4);
    CHECK(std::none_of(c->begin(), c->end(), [](const auto& x) { return x.regressed; }));
  }
  SECTION("slower") {
    auto c = compare_with_baseline(now, before.dump(), 1.25);
    REQUIRE(c.ok());
    CHECK(c->at(0).ratio == Approx(1.5));
    CHECK(c->at(0).regressed);
    CHECK_FALSE(compare_with_baseline(now, before.dump(), 2.0)->at(0).regressed);
  }
  SECTION("not a bench JSON") {
    CHECK(compare_with_baseline(now, "{\"cells\": []}", 1.25).code() == ErrorCode::InvalidArgument);
    CHECK(compare_with_baseline(now, "not json", 1.25).code() == ErrorCode::InvalidArgument);
  }
}
