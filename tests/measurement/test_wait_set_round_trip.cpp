// SPDX-License-Identifier: Apache-2.0
// Round trips whose two sides wait through wait sets (a node listening to several topics), the
// measurement behind the wait set's figures in docs/performance.md.

#include <catch2/catch.hpp>

#include "cerulion/core/discovery.hpp"
#include "cerulion/measurement/ping.hpp"
#include "process.hpp"

using namespace cerulion;
using namespace cerulion::measurement;
using namespace std::chrono_literals;

TEST_CASE("Round trips through wait sets of three topics lose nothing in every wait strategy", "[measurement][wait_set]") {
  auto strategy = GENERATE(WaitStrategy::Adaptive, WaitStrategy::Spin, WaitStrategy::Block);
  PingOptions o;
  o.domain = cerulion::test::unique_domain("meas_waitset");
  o.layout = Layout::SingleProcess;
  o.count = 50;
  o.warmup = 5;
  o.rate_hz = 1000;
  o.timeout = 2s;
  o.wait = strategy;
  o.wait_set_members = 3;
  // While measuring, both sides watch two idle topics besides their own.
  std::size_t idle = 0;
  o.hooks.measured_start = [&] {
    if (auto listing = list_topics(o.domain); listing.ok()) {
      for (const auto& t : listing->topics) idle += t.name.find("/idle/") != std::string::npos ? 1 : 0;
    }
  };
  auto r = run_ping(o);
  REQUIRE(r.ok());
  CHECK(r->samples_ns.size() == 50);
  CHECK(r->lost == 0);
  CHECK(r->responder_error.empty());
  CHECK(idle == 4);
}
