// SPDX-License-Identifier: Apache-2.0
#include <catch2/catch.hpp>

#include <csignal>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include "cerulion/core/discovery.hpp"
#include "cerulion/measurement/ping.hpp"
#include "cerulion/measurement/resource_meter.hpp"
#include "process.hpp"

using namespace cerulion;
using namespace cerulion::measurement;
using namespace std::chrono_literals;
using cerulion::test::unique_domain;

namespace {

PingOptions single_process(const std::string& stem) {
  PingOptions o;
  o.domain = unique_domain(stem);
  o.layout = Layout::SingleProcess;
  o.count = 20;
  o.warmup = 5;
  o.rate_hz = 1000;
  o.timeout = 2s;
  return o;
}

void clean(const std::string& domain) {
  if (auto listing = list_topics(domain); listing.ok()) {
    for (const auto& t : listing->topics) (void)clean_domain(domain, false, t.name);
  }
}

}  // namespace

TEST_CASE("Native round trips in one process measure every request and report the workers' cost", "[measurement][native]") {
  PingOptions o = single_process("meas_single");
  for (Mode mode : {Mode::Lockstep, Mode::FreeRun}) {
    o.mode = mode;
    int hooks = 0;
    o.hooks.before_responder = [&] { ++hooks; return Status{}; };
    o.hooks.measured_start = [&] { ++hooks; };
    o.hooks.after_run = [&](std::uint64_t wall) { hooks += wall > 0 ? 1 : 100; };
    auto r = run_ping(o);
    REQUIRE(r.ok());
    CHECK(r->samples_ns.size() == 20);
    CHECK(r->lost == 0);
    CHECK_FALSE(r->responder_gone);
    CHECK_FALSE(r->interrupted);
    CHECK(r->responder_error.empty());
    CHECK(r->measured_wall_ns > 0);
    CHECK(r->rss_ping > 0);
    CHECK(r->rss_pong == r->rss_ping);
    CHECK(hooks == 3);
    for (auto s : r->samples_ns) {
      CHECK(s > 0);
      CHECK(s < 2'000'000'000ull);
    }
  }
  clean(o.domain);
}

TEST_CASE("A payload over the topic's ceiling is refused before any round trip", "[measurement][native]") {
  PingOptions o = single_process("meas_big");
  o.size = 1ull << 40;
  auto r = run_ping(o);
  REQUIRE_FALSE(r.ok());
  CHECK(r.code() == ErrorCode::PayloadTooLarge);
  CHECK(r.message().find("--") == std::string::npos);  // the library names no flag
  clean(o.domain);
}

TEST_CASE("A peer that never comes makes the measurement time out", "[measurement][native]") {
  PingOptions o = single_process("meas_nopeer");
  o.layout = Layout::MultiProcess;
  o.peer = true;
  o.timeout = 200ms;
  auto r = run_ping(o);
  REQUIRE_FALSE(r.ok());
  CHECK(r.code() == ErrorCode::Timeout);
  clean(o.domain);
}

TEST_CASE("A hook's error ends the measurement with that error", "[measurement][native]") {
  PingOptions o = single_process("meas_hook");
  o.hooks.before_responder = [] { return Status{ErrorCode::SystemError, "the recorder would not start"}; };
  auto r = run_ping(o);
  REQUIRE_FALSE(r.ok());
  CHECK(r.message() == "the recorder would not start");
  clean(o.domain);
}

TEST_CASE("The cancel flag ends the run as interrupted with what was measured", "[measurement][native]") {
  PingOptions o = single_process("meas_cancel");
  o.count = 1'000'000;
  o.rate_hz = 1000;
  std::atomic<bool> cancel{false};
  o.cancel = &cancel;
  std::thread stopper([&] {
    std::this_thread::sleep_for(200ms);
    cancel.store(true);
  });
  auto r = run_ping(o);
  stopper.join();
  REQUIRE(r.ok());
  CHECK(r->interrupted);
  CHECK(r->samples_ns.size() > 10);
  CHECK(r->samples_ns.size() < 1'000'000);
  clean(o.domain);
}

TEST_CASE("The transport table lists native as available and the peers with a reason", "[measurement][transport]") {
  const auto all = transports();
  REQUIRE(all.size() >= 1);
  CHECK(all[0].name == "native");
  CHECK(all[0].available);
  for (const auto& t : all) {
    if (!t.available) CHECK_FALSE(t.reason.empty());
  }
  RequesterOptions ro;
  auto unknown = create_requester("carrier-pigeon", ro);
  CHECK(unknown.code() == ErrorCode::NotFound);
}

TEST_CASE("The CPU meter of the calling thread counts its own work", "[measurement][resources]") {
  CpuMeter m = CpuMeter::calling_thread();
  const auto t0 = monotonic_ns();
  m.start();
  volatile std::uint64_t x = 0;
  while (monotonic_ns() - t0 < 50'000'000) x = x + 1;
  const double pct = m.percent(monotonic_ns() - t0);
  CHECK(pct > 0);  // how much depends on the machine's load; never more than the wall time
  CHECK(pct < 105);
  CHECK(process_peak_rss(getpid()) > 0);
  CHECK(process_cpu_ns(getpid()) > 0);
  CHECK(CpuMeter().percent(1000) == 0);
}

TEST_CASE("The CPU meter of another process sees a few milliseconds of its work, below the clock tick", "[measurement][resources]") {
  // /proc/PID/stat counts 10 ms ticks: a child spinning 3 ms there reads as 0 % most of the time.
  int go[2];
  REQUIRE(::pipe(go) == 0);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    char c;
    if (::read(go[0], &c, 1) != 1) ::_exit(1);
    const auto t0 = monotonic_ns();
    volatile std::uint64_t x = 0;
    while (monotonic_ns() - t0 < 3'000'000) x = x + 1;
    ::pause();
    ::_exit(0);
  }
  CpuMeter m = CpuMeter::process(child);
  m.start();
  const auto t0 = monotonic_ns();
  REQUIRE(::write(go[1], "x", 1) == 1);
  std::this_thread::sleep_for(20ms);
  const double pct = m.percent(monotonic_ns() - t0);
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  ::close(go[0]);
  ::close(go[1]);
  CHECK(pct > 1);  // 3 ms of 20 ms is 15 %; the tick counter says 0 or 50
  CHECK(pct < 105);
}
