// SPDX-License-Identifier: Apache-2.0
#include <catch2/catch.hpp>

#include <thread>

#include "cerulion/core/options.hpp"
#include "cerulion/measurement/round_trip.hpp"
#include "cerulion/measurement/slot_grid.hpp"

using namespace cerulion;
using namespace cerulion::measurement;
using namespace std::chrono_literals;

namespace {

/// A transport whose responder answers every request after `delay`, in this thread.
class SlowFake final : public Requester {
 public:
  explicit SlowFake(std::chrono::nanoseconds delay) : delay_(delay) {}
  std::uint64_t max_payload() const noexcept override { return 1 << 20; }
  Status wait_for_responder(std::chrono::nanoseconds) override { return {}; }
  bool responder_present() const noexcept override { return true; }
  Status prepare(std::size_t, std::chrono::nanoseconds) override { return {}; }
  Status send(std::uint64_t stamp, std::chrono::nanoseconds) override {
    sends.push_back(stamp);
    pending_ = stamp;
    return {};
  }
  Result<Reply> receive(std::chrono::nanoseconds) override {
    std::this_thread::sleep_for(delay_);
    return Reply{pending_, monotonic_ns(), 0};
  }
  std::vector<std::uint64_t> sends;

 private:
  std::chrono::nanoseconds delay_;
  std::uint64_t pending_ = 0;
};

}  // namespace

TEST_CASE("A slot whose period has passed is skipped and counted, one still open is taken", "[measurement][pacing]") {
  SlotGrid grid(100, 1'000'000'000);  // 10 ms period from t = 1 s
  CHECK(grid.period_ns() == 10'000'000);
  CHECK(grid.skip_missed(1'000'000'000) == 0);
  CHECK(grid.skip_missed(1'009'999'999) == 0);  // late, but within its period: sent now
  CHECK(grid.skip_missed(1'035'000'000) == 3);  // slots at 1.00, 1.01, 1.02 s are over
  CHECK(grid.current_slot_ns() == 1'030'000'000);
  CHECK(grid.take(1'035'000'000) == 1'030'000'000);
  CHECK(grid.current_slot_ns() == 1'040'000'000);
}

TEST_CASE("A grid at rate 0 never paces or skips", "[measurement][pacing]") {
  SlotGrid grid(0, 0);
  CHECK_FALSE(grid.paced());
  CHECK(grid.skip_missed(~0ull / 2) == 0);
  CHECK(grid.take(123) == 0);
}

TEST_CASE("A responder slower than the period makes the grid skip slots and count them", "[measurement][pacing]") {
  SlowFake slow(25ms);  // at 100 Hz each round trip overruns two 10 ms slots
  RoundTripPlan plan;
  plan.rate_hz = 100;
  plan.count = 6;
  plan.warmup = 1;
  plan.timeout = 1s;
  bool started = false;
  plan.on_measured_start = [&](std::int64_t) { started = true; };
  const RoundTrips r = run_round_trips(slow, plan);
  CHECK(started);
  CHECK(r.samples_ns.size() == 6);
  CHECK(r.lost == 0);
  // Each 25 ms round trip ends one or two slots after the one it was sent in: those are over
  // before their turn and are skipped, not sent late.
  CHECK(r.skipped >= 6);
  for (auto s : r.samples_ns) CHECK(s >= 25'000'000);
  // Never two sends in one slot, nor one while the previous round trip was still out.
  for (std::size_t i = 1; i < slow.sends.size(); ++i) CHECK(slow.sends[i] - slow.sends[i - 1] >= 25'000'000);
  // Every skip counted is a real slot of the run, not one of a send (7 round trips in all; the
  // warm-up's skips are not counted, so on a loaded machine there may be more slots than both).
  const std::uint64_t slots = (slow.sends.back() - slow.sends.front()) / 10'000'000 + 1;
  CHECK(slots >= 7 + r.skipped);
}

TEST_CASE("A responder faster than the period skips no slot", "[measurement][pacing]") {
  SlowFake quick(1ms);
  RoundTripPlan plan;
  plan.rate_hz = 100;
  plan.count = 10;
  plan.warmup = 2;
  const RoundTrips r = run_round_trips(quick, plan);
  CHECK(r.samples_ns.size() == 10);
  CHECK(r.skipped == 0);
  // One send per 10 ms slot: on average the period (a send may be late within its slot when the
  // machine is loaded, so the first one can shorten the average a little).
  const double mean = static_cast<double>(quick.sends.back() - quick.sends.front()) / double(quick.sends.size() - 1);
  CHECK(mean > 9'000'000);
  CHECK(mean < 11'000'000);
}
