// SPDX-License-Identifier: Apache-2.0
// Telling a busy machine: the load average read and judged, the floor measured, and the one line
// that says both.

#include <catch2/catch.hpp>

#include <sys/wait.h>

#include "cerulion/bench/floor.hpp"
#include "cerulion/bench/machine_load.hpp"

using namespace cerulion;
using namespace cerulion::bench;

TEST_CASE("The load average is read from /proc/loadavg's text, and anything else is refused", "[bench]") {
  auto l = parse_load_average("0.52 0.58 0.61 1/467 12345\n");
  REQUIRE(l.ok());
  CHECK(l->one == Approx(0.52));
  CHECK(l->five == Approx(0.58));
  CHECK(l->fifteen == Approx(0.61));
  CHECK(parse_load_average("").code() == ErrorCode::InvalidArgument);
  CHECK(parse_load_average("busy").code() == ErrorCode::InvalidArgument);
  CHECK(parse_load_average("1 2").code() == ErrorCode::InvalidArgument);
  CHECK(read_load_average().ok());
}

TEST_CASE("A machine is busy when other work fills every CPU or the floor's p99 reaches a millisecond",
          "[bench]") {
  MachineLoad load;
  load.checked = true;
  load.cores = 2;
  load.floor.count = 300;
  load.floor.median = 130;
  load.floor.p99 = 400;
  SECTION("quiet") {
    load.before = LoadAverage{0.2, 0.3, 0.3};
    judge_load(load);
    CHECK_FALSE(load.busy);
    CHECK(load.why.empty());
    CHECK(describe_load(load) == "load average 0.20 (2 CPUs), floor median 130 µs, p99 400 µs");
  }
  SECTION("a load below the CPUs leaves the workers an idle one") {
    load.before = LoadAverage{1.5, 2.9, 3.1};
    judge_load(load);
    CHECK_FALSE(load.busy);
  }
  SECTION("others' work on every CPU") {
    load.before = LoadAverage{2.5, 2.9, 3.1};
    judge_load(load);
    CHECK(load.busy);
    CHECK(load.why == "load average 2.50 on 2 CPUs: other work keeps every CPU busy");
    CHECK(describe_load(load).find("BUSY") != std::string::npos);
    CHECK(describe_load(load, false).find("BUSY") == std::string::npos);
  }
  SECTION("the same load on sixteen CPUs leaves the workers theirs") {
    load.cores = 16;
    load.before = LoadAverage{2.5, 2.9, 3.1};
    judge_load(load);
    CHECK_FALSE(load.busy);
  }
  SECTION("a floor that wakes late") {
    load.before = LoadAverage{0.1, 0.1, 0.1};
    load.floor.p99 = 4200;
    judge_load(load);
    CHECK(load.busy);
    CHECK(load.why.find("the floor's p99 is 4.20 ms") != std::string::npos);
  }
  SECTION("both") {
    load.before = LoadAverage{3, 3, 3};
    load.floor.p99 = 4200;
    judge_load(load);
    CHECK(load.why.find("; ") != std::string::npos);
  }
  SECTION("the load at the end is shown, not judged: the campaign's own workers are in it") {
    load.before = LoadAverage{0.1, 0.1, 0.1};
    load.after = LoadAverage{2.9, 1, 1};
    judge_load(load);
    CHECK_FALSE(load.busy);
    CHECK(describe_load(load).find("2.90 at the end") != std::string::npos);
  }
  CHECK(describe_load(MachineLoad{}) == "not measured");
}

TEST_CASE("The floor runs the round trips asked, in two processes, and leaves none behind", "[bench]") {
  FloorOptions options;
  options.rate_hz = 0;
  options.samples = 50;
  auto floor = measure_floor(options);
  REQUIRE(floor.ok());
  CHECK(floor->count == 50);
  CHECK(floor->min > 0);
  CHECK(floor->min <= floor->median);
  CHECK(floor->median <= floor->p99);
  // The responder was reaped: no child of this process is left to wait for.
  CHECK(::waitpid(-1, nullptr, WNOHANG) == -1);

  auto load = check_machine_load(measurement::CpuPlan{});
  CHECK(load.checked);
  CHECK(load.before.has_value());
  CHECK(load.floor.count == 300);
  CHECK(load.cores > 0);
}
