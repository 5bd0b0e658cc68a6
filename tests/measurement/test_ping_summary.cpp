// SPDX-License-Identifier: Apache-2.0
// What `ping --json` prints and `bench` reads back: one type, written and read by the same code.

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "cerulion/measurement/ping_summary.hpp"

using namespace cerulion;
using namespace cerulion::measurement;
using Approx = Catch::Detail::Approx;

namespace {

PingReport report_of(std::size_t samples) {
  PingReport r;
  r.options.size = 4096;
  r.options.rate_hz = 100;
  r.options.warmup = 7;
  r.options.transport = "native";
  r.options.cpus.ping = 0;
  for (std::size_t i = 0; i < samples; ++i) r.samples_ns.push_back(1000 + 1000 * (i % 10));
  r.request_legs_ns = {400, 500, 600};
  r.lost = 2;
  r.skipped = 3;
  r.cpu_pct_ping = 12.3456;
  r.cpu_pct_pong = 7.891;
  r.rss_ping = 1u << 20;
  r.rss_pong = 2u << 20;
  return r;
}

}  // namespace

TEST_CASE("A ping summary reads back exactly what it wrote", "[measurement][ping]") {
  const PingReport r = report_of(50);
  const PingKeeperFigures keeper{1.234, 5 << 20, 100, 1, 4096, 2.5};
  const PingSummary written = summary_of(r, figures_of(r), keeper);
  const std::string json = to_json(written);
  auto read = ping_summary_from_json(json);
  REQUIRE(read.ok());
  CHECK(to_json(*read) == json);
  CHECK(read->size_bytes == 4096);
  CHECK(read->count == 50);
  CHECK(read->warmup == 7);
  CHECK(read->lost == 2);
  CHECK(read->skipped_slots == 3);
  CHECK(read->cpu_ping == 0);
  CHECK_FALSE(read->cpu_pong);
  CHECK(read->cpu_pct_ping == Approx(12.35));  // rounded as printed
  CHECK(read->rss_pong == (2u << 20));
  REQUIRE(read->request_one_way_us);
  CHECK(read->request_one_way_us->median == Approx(0.5));
  CHECK(read->flashback);
  REQUIRE(read->keeper);
  CHECK(read->keeper->messages == 100);
  CHECK(read->keeper->cpu_pct == Approx(1.23));
  CHECK_FALSE(read->alternate);
}

TEST_CASE("A summary leaves out the tail percentiles of too few round trips", "[measurement][ping]") {
  const PingReport few = report_of(40);
  const PingSummary s = summary_of(few, figures_of(few));
  CHECK_FALSE(s.rtt_us.p90);
  CHECK_FALSE(s.rtt_us.p99);
  CHECK_FALSE(s.flashback);
  const auto j = nlohmann::json::parse(to_json(s));
  CHECK(j["rtt_us"]["p99"].is_null());
  CHECK_FALSE(j.contains("keeper"));

  const PingReport enough = report_of(200);
  const PingSummary t = summary_of(enough, figures_of(enough));
  CHECK(t.rtt_us.p90);
  CHECK_FALSE(t.rtt_us.p99);
}

TEST_CASE("A summary is read from the last line of a program's output, and anything else is refused saying why",
          "[measurement][ping]") {
  const PingReport r = report_of(20);
  const std::string json = to_json(summary_of(r, figures_of(r)));
  auto read = ping_summary_from_json("a line before\n" + json + "\n");
  REQUIRE(read.ok());
  CHECK(read->count == 20);

  auto j = nlohmann::json::parse(json);
  j.erase("lost");
  auto missing = ping_summary_from_json(j.dump());
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.code() == ErrorCode::InvalidArgument);
  CHECK(missing.message().find("lost") != std::string::npos);
  CHECK_FALSE(ping_summary_from_json("").ok());
  CHECK_FALSE(ping_summary_from_json("not json").ok());
}
