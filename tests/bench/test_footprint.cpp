// SPDX-License-Identifier: Apache-2.0
// The footprint counter on made-up lackey traces: windows cut at the delimiter, distinct lines and
// pages per window, skipped windows, the delimiter found by its run count, and traces it refuses.

#include <catch2/catch.hpp>

#include <sstream>
#include <string>

#include "cerulion/bench/footprint.hpp"

using namespace cerulion;
using namespace cerulion::bench;

namespace {

/// A window: the delimiter at 0x1000, two instructions on one line, one on another page, and the
/// given data accesses.
std::string window(const std::string& data) {
  return "I  00001000,4\nI  00001004,3\nI  00003000,2\n" + data;
}

FootprintReport count(const std::string& trace, FootprintOptions options) {
  std::istringstream in(trace);
  auto report = count_lackey_trace(in, options);
  INFO(report.message());
  REQUIRE(report.ok());
  return std::move(report).value();
}

}  // namespace

TEST_CASE("The footprint counter counts distinct lines and pages per window between delimiters", "[footprint]") {
  const std::string trace = "==1== Lackey\nI  00000500,2\n L 00009000,8\n" +           // before the first delimiter
                            window(" L 00010000,8\n S 00010008,8\n M 00010040,4\n") +  // 2 lines, 1 page
                            window(" L 00020ffc,8\n") +                                // spans 2 lines, 2 pages
                            window("");                                                // partial: dropped
  const FootprintReport report = count(trace, {.delimiter = 0x1000, .skip_windows = 0});
  REQUIRE(report.windows.size() == 2);
  const WindowFootprint& first = report.windows[0];
  CHECK(first.instructions == 3);
  CHECK(first.code_lines == 2);
  CHECK(first.code_pages == 2);
  CHECK(first.data_lines == 2);
  CHECK(first.data_pages == 1);
  CHECK(first.lines == 4);
  const WindowFootprint& second = report.windows[1];
  CHECK(second.data_lines == 2);
  CHECK(second.data_pages == 2);
}

TEST_CASE("The footprint counter leaves out data accesses to an ignored range", "[footprint]") {
  const std::string trace = window(" L 00010000,8\n L 00500000,8\n L 00500040,8\n") + window("");
  FootprintOptions options{.delimiter = 0x1000, .skip_windows = 0};
  options.ignored_data.push_back({0x500000, 0x501000});
  const FootprintReport report = count(trace, options);
  REQUIRE(report.windows.size() == 1);
  CHECK(report.windows[0].data_lines == 1);
}

TEST_CASE("The footprint counter skips the first windows and reports the median", "[footprint]") {
  std::string trace;
  trace += window(" L 00100000,8\n L 00200000,8\n L 00300000,8\n");  // skipped: start-up
  for (int lines : {1, 3, 2}) {
    std::string data;
    for (int k = 0; k < lines; ++k) data += " L 0040" + std::to_string(k) + "000,8\n";
    trace += window(data);
  }
  trace += window("");
  const FootprintReport report = count(trace, {.delimiter = 0x1000, .skip_windows = 1});
  REQUIRE(report.windows.size() == 3);
  CHECK(report.median.data_lines == 2);
  CHECK(report.median.data_pages == 2);
}

TEST_CASE("The footprint counter finds the instruction that ran once per round trip", "[footprint]") {
  // A start-up loop runs 3 times in a burst; the round-trip loop's body also runs 3 times, spread out.
  std::string trace = "I  00000100,1\nI  00000100,1\nI  00000100,1\n";
  for (int i = 0; i < 3; ++i) trace += "I  00002000,4\n L 00010000,8\nI  00002004,1\nI  00002004,1\n";
  std::istringstream in(trace);
  auto found = find_delimiter(in, 3);
  REQUIRE(found.ok());
  CHECK(*found == 0x2000);
  std::istringstream again(trace);
  CHECK(find_delimiter(again, 7).code() == ErrorCode::NotFound);
}

TEST_CASE("The footprint counter refuses a trace that is not lackey's and one without windows", "[footprint]") {
  SECTION("a line that is no record") {
    std::istringstream in("I  00001000,4\nhello\n");
    auto report = count_lackey_trace(in, {.delimiter = 0x1000});
    CHECK(report.code() == ErrorCode::InvalidArgument);
    CHECK(report.message().find("trace line 2") != std::string::npos);
  }
  SECTION("a delimiter that never ran") {
    std::istringstream in(window(""));
    auto report = count_lackey_trace(in, {.delimiter = 0x4242, .skip_windows = 0});
    CHECK(report.code() == ErrorCode::InvalidArgument);
  }
  SECTION("no delimiter") {
    std::istringstream in(window(""));
    CHECK(count_lackey_trace(in, {}).code() == ErrorCode::InvalidArgument);
  }
}
