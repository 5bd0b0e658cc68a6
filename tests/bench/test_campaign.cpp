// SPDX-License-Identifier: Apache-2.0
// The campaign with a scripted runner: what a cell reports, how a lane that cannot keep the rate
// falls back, and how failures and unavailable lanes show.

#include <catch2/catch.hpp>

#include <map>

#include "cerulion/bench/campaign.hpp"

using namespace cerulion;
using namespace cerulion::bench;

namespace {

std::vector<Lane> two_lanes() {
  auto lanes = known_lanes();
  return {lanes[0], lanes[3]};  // native-multi, fastdds-multi
}

CampaignSettings small() {
  CampaignSettings s;
  s.sizes = {64, 1024};
  s.repetitions = 3;
  s.samples = 4;
  return s;
}

// Repetition k (1-based) of every cell returns {k, k+1, k+2, k+3} µs.
Repetition scripted(unsigned k) {
  Repetition r;
  for (unsigned i = 0; i < 4; ++i) r.samples_ns.push_back((k + i) * 1000ull);
  r.achieved_rate_hz = 100;
  return r;
}

}  // namespace

TEST_CASE("A cell's median is the median of its repetition medians and its percentiles are pooled", "[bench]") {
  std::map<std::string, unsigned> calls;
  auto result = run_campaign(small(), two_lanes(), [&](const RepetitionRequest& q) -> Result<Repetition> {
    return scripted(++calls[q.lane->name + std::to_string(q.size)]);
  });
  REQUIRE(result.cells.size() == 4);
  const Cell& c = result.cells[0];
  CHECK(c.status == CellStatus::Ok);
  // Repetition medians: 2.5, 3.5, 4.5 µs; their median 3.5.
  CHECK(c.repetition_medians_us == std::vector<double>{2.5, 3.5, 4.5});
  CHECK(c.median_us == Approx(3.5));
  // Pooled: {1,2,3,4, 2,3,4,5, 3,4,5,6}: min 1, max 6, p90 at h = 9.9 -> 5 + 0.9 * (5 - 5) = 5.
  CHECK(c.min_us == Approx(1));
  CHECK(c.max_us == Approx(6));
  CHECK(c.p90_us == Approx(5));
  CHECK(c.samples == 12);
  CHECK_FALSE(c.p99_quotable);  // 12 samples: nowhere near 20 beyond the 99th percentile
}

TEST_CASE("A cell that skips more than 1 % of its slots falls back to 50 then 20 Hz, then fails", "[bench]") {
  auto settings = small();
  settings.sizes = {64};
  SECTION("kept at 50 Hz") {
    auto result = run_campaign(settings, {two_lanes()[0]}, [&](const RepetitionRequest& q) -> Result<Repetition> {
      auto r = scripted(1);
      r.skipped_slots = q.rate_hz > 50 ? 1 : 0;  // 1 of 5 slots: 20 %
      return r;
    });
    REQUIRE(result.cells.size() == 1);
    CHECK(result.cells[0].status == CellStatus::Ok);
    CHECK(result.cells[0].rate_hz == 50);
    CHECK(result.cells[0].fell_back);
  }
  SECTION("failed at every rate") {
    std::vector<double> rates;
    auto result = run_campaign(settings, {two_lanes()[0]}, [&](const RepetitionRequest& q) -> Result<Repetition> {
      rates.push_back(q.rate_hz);
      auto r = scripted(1);
      r.skipped_slots = 1;
      return r;
    });
    CHECK(rates == std::vector<double>{100, 50, 20});
    CHECK(result.cells[0].status == CellStatus::Failed);
    CHECK(result.cells[0].reason.find("skipped 1 of 5 slots at 20 Hz") != std::string::npos);
  }
  SECTION("a lane far slower than every fallback is not tried at them") {
    std::vector<double> rates;
    auto result = run_campaign(settings, {two_lanes()[0]}, [&](const RepetitionRequest& q) -> Result<Repetition> {
      rates.push_back(q.rate_hz);
      auto r = scripted(1);
      r.skipped_slots = 76;  // kept 4 of 80 slots: 5 Hz
      return r;
    });
    CHECK(rates == std::vector<double>{100});
    CHECK(result.cells[0].status == CellStatus::Failed);
  }
}

TEST_CASE("A lane that fails fails its cell and the campaign goes on, and unavailable lanes are not run", "[bench]") {
  auto lanes = two_lanes();
  lanes[1].available = false;
  lanes[1].reason = "built without Fast DDS";
  auto third = known_lanes()[2];
  lanes.push_back(third);
  std::vector<std::string> ran;
  auto result = run_campaign(small(), lanes, [&](const RepetitionRequest& q) -> Result<Repetition> {
    ran.push_back(q.lane->name);
    if (q.lane->name == "native-multi" && q.size == 64) return Status(ErrorCode::SystemError, "ping died of signal 11");
    return scripted(1);
  });
  REQUIRE(result.cells.size() == 6);
  CHECK(result.cells[0].status == CellStatus::Failed);
  CHECK(result.cells[0].reason == "ping died of signal 11");
  CHECK(result.cells[1].status == CellStatus::Ok);
  CHECK(result.cells[2].status == CellStatus::Unavailable);
  CHECK(result.cells[2].reason == "built without Fast DDS");
  CHECK(result.cells[4].status == CellStatus::Ok);
  CHECK(std::count(ran.begin(), ran.end(), "fastdds-multi") == 0);
}

TEST_CASE("A lane whose every cell failed measured nothing, and one with a cell measured, or unavailable, did", "[bench]") {
  auto lanes = two_lanes();
  lanes[1].available = false;
  lanes[1].reason = "built without Fast DDS";
  lanes.push_back(known_lanes()[2]);
  auto result = run_campaign(small(), lanes, [&](const RepetitionRequest& q) -> Result<Repetition> {
    if (q.lane->name == "native-single") return Status(ErrorCode::OutOfMemory, "pong: /dev/shm is full");
    if (q.size == 64) return Status(ErrorCode::SystemError, "ping died of signal 11");
    return scripted(1);
  });
  const auto empty = lanes_without_results(result);
  REQUIRE(empty.size() == 1);
  CHECK(empty[0].lane == "native-single");
  CHECK(empty[0].size == 64);
  CHECK(empty[0].reason == "pong: /dev/shm is full");

  auto every_cell_fine = run_campaign(small(), two_lanes(), [&](const RepetitionRequest&) -> Result<Repetition> {
    return scripted(1);
  });
  CHECK(lanes_without_results(every_cell_fine).empty());
}

TEST_CASE("A runner interrupted (Ctrl-C) ends the campaign at once, keeping the cells finished before", "[bench]") {
  unsigned calls = 0;
  auto result = run_campaign(small(), two_lanes(), [&](const RepetitionRequest& q) -> Result<Repetition> {
    ++calls;
    if (q.size == 1024) return Status(ErrorCode::Interrupted, "interrupted");
    return scripted(1);
  });
  CHECK(result.interrupted);
  CHECK(calls == 4);  // three repetitions of the first cell, then the one interrupted
  REQUIRE(result.cells.size() == 1);
  CHECK(result.cells[0].size == 64);
  CHECK(result.cells[0].status == CellStatus::Ok);
}

TEST_CASE("resolve_lanes keeps the order asked and refuses an unknown lane naming the known ones", "[bench]") {
  auto lanes = resolve_lanes({"native-single", "native-multi"}, known_lanes());
  REQUIRE(lanes.ok());
  CHECK(lanes->at(0).name == "native-single");
  auto bad = resolve_lanes({"ros1"}, known_lanes());
  CHECK(bad.code() == ErrorCode::InvalidArgument);
  CHECK(bad.message().find("unknown lane 'ros1'") != std::string::npos);
  CHECK(bad.message().find("iceoryx-multi") != std::string::npos);
  CHECK(resolve_lanes({}, known_lanes())->size() == known_lanes().size());
}

TEST_CASE("Raw samples files are named so a script can find them", "[bench]") {
  CHECK(samples_file_name("native-multi", 1048576, 2) == "native-multi_1048576B_rep2.u64le");
  auto settings = small();
  settings.samples_dir = "/somewhere";
  std::vector<std::string> paths;
  auto result = run_campaign(settings, {two_lanes()[0]}, [&](const RepetitionRequest& q) -> Result<Repetition> {
    paths.push_back(q.samples_path);
    return scripted(1);
  });
  CHECK(paths.front() == "/somewhere/native-multi_64B_rep1.u64le");
  CHECK(result.cells[0].samples_files.size() == 3);
}

TEST_CASE("The plan is cells x repetitions x (warm-up + round trips) / rate plus start-up, unavailable lanes left out",
          "[bench]") {
  auto lanes = known_lanes();
  lanes[5].available = false;  // iceoryx-multi
  lanes[6].available = false;  // iceoryx-multi-poll
  CampaignSettings s;          // the default campaign: 3 sizes, 3 x (100 + 500) at 100 Hz
  s.startup_s = 0.5;
  const auto plan = plan_campaign(s, lanes);
  CHECK(plan.cells == 15);
  CHECK(plan.repetitions == 3);
  CHECK(plan.repetition_s == Approx(600.0 / 100 + 0.5));
  CHECK(plan.expected_s == Approx(15 * 3 * 6.5));
  // Falling back everywhere: one failed repetition at 100 and at 50 Hz, then three at 20 Hz.
  CHECK(plan.lowest_rate_hz == 20);
  CHECK(plan.all_fall_back_s == Approx(15 * (6.5 + 12.5 + 3 * 30.5)));
  const auto text = describe_plan(plan, s, 5);
  INFO(text);
  CHECK(text.find("15 cells (5 lanes x 3 sizes) x 3 repetitions x (100 warm-up + 500) round trips at 100 Hz") !=
        std::string::npos);
  CHECK(text.find("about " + duration_text(plan.expected_s)) != std::string::npos);
  CHECK(text.find("if every cell falls back to 20 Hz") != std::string::npos);
  CHECK(duration_text(42) == "42 s");
  CHECK(duration_text(292.5) == "4 min 53 s");
  CHECK(duration_text(3 * 3600 + 125) == "3 h 02 min");
}

TEST_CASE("Progress counts cells, whose number stays the same when a cell falls back", "[bench]") {
  auto settings = small();  // 2 lanes x 2 sizes, 3 repetitions
  settings.startup_s = 0;
  std::vector<Progress> seen;
  auto result = run_campaign(
      settings, two_lanes(),
      [&](const RepetitionRequest& q) -> Result<Repetition> {
        auto r = scripted(1);
        // The first cell keeps only 50 Hz, from its second repetition on.
        if (q.lane->name == "native-multi" && q.size == 64 && q.rate_hz > 50 && seen.back().repetition == 2) {
          r.skipped_slots = 1;
        }
        return r;
      },
      [&](const Progress& p) { seen.push_back(p); });
  REQUIRE(result.cells.size() == 4);
  CHECK(result.cells[0].rate_hz == 50);
  // 2 repetitions at 100 Hz, 3 at 50 Hz, then 3 x 3.
  REQUIRE(seen.size() == 14);
  const auto plan = plan_campaign(settings, two_lanes());
  CHECK(seen.front().planned_left_s == Approx(plan.expected_s));
  CHECK(seen.front().planned_done_s == 0);
  std::size_t cell = 1;
  for (const auto& p : seen) {
    INFO(p.lane << " " << p.size << " rep " << p.repetition << " at " << p.rate_hz);
    CHECK(p.cells == 4);
    CHECK((p.cell == cell || p.cell == cell + 1));
    cell = p.cell;
    CHECK(p.fallback == (p.rate_hz != 100));
  }
  CHECK(seen.back().cell == 4);
  // The fallback is in the plan once it happens: the first cell at 50 Hz has its three
  // repetitions at 50 Hz ahead of it, and the three cells after it at 100 Hz.
  const double at_100 = repetition_seconds(settings, 100), at_50 = repetition_seconds(settings, 50);
  CHECK(seen[2].rate_hz == 50);
  CHECK(seen[2].planned_done_s == Approx(2 * at_100));
  CHECK(seen[2].planned_left_s == Approx(3 * at_50 + 9 * at_100));
  // The last repetition: only itself ahead.
  CHECK(seen.back().planned_left_s == Approx(at_100));
}
