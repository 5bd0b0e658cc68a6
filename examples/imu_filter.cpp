// SPDX-License-Identifier: Apache-2.0
// A small deterministic node: reads the Imu structs of /imu and publishes a low-pass filtered
// acceleration and yaw rate on /imu/filtered as json, one output per input. Its output depends on
// its inputs alone, so `cerulion verify` can hold it to a recording:
//   cerulion verify golden.mcap --input /imu --output /imu/filtered -- ./imu_filter
// The options make the variants verify's tests need:
//   --alpha A          the filter's constant (default 0.2): another value gives other outputs
//   --wall-clock       adds the wall-clock time to each output (never the same twice)
//   --race             adds a count a second thread advances at its own pace, read unsynchronised
//                      (a thread race: what each output holds depends on how far that thread got)
//   --crash-after N    aborts after N inputs
//   --stall-after N    stops taking inputs after N (and sleeps until stopped)
//   --clock TOPIC      stamps each output with the time read from TOPIC (json {"ns": ...}, one
//                      before each input, as `cerulion verify --clock TOPIC` publishes it)
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <cerulion/core/publisher.hpp>
#include <cerulion/core/stop.hpp>
#include <cerulion/core/subscriber.hpp>

#include "args.hpp"
#include "messages.hpp"

int main(int argc, char** argv) {
  double alpha = 0.2;
  bool wall_clock = false;
  bool race = false;
  std::string clock_topic;
  std::uint64_t crash_after = 0;
  std::uint64_t stall_after = 0;
  std::vector<char*> rest = {argv[0]};
  for (int i = 1; i < argc; ++i) {
    const std::string option = argv[i];
    if (option == "--alpha" && i + 1 < argc) {
      alpha = std::strtod(argv[++i], nullptr);
    } else if (option == "--crash-after" && i + 1 < argc) {
      crash_after = std::strtoull(argv[++i], nullptr, 10);
    } else if (option == "--stall-after" && i + 1 < argc) {
      stall_after = std::strtoull(argv[++i], nullptr, 10);
    } else if (option == "--clock" && i + 1 < argc) {
      clock_topic = argv[++i];
    } else if (option == "--wall-clock") {
      wall_clock = true;
    } else if (option == "--race") {
      race = true;
    } else {
      rest.push_back(argv[i]);
    }
  }
  const example::Args args = example::parse_args(static_cast<int>(rest.size()), rest.data());

  cerulion::SubscriberOptions in_options;
  in_options.wait.cancel = cerulion::stop_on_signals();
  auto sub = cerulion::Subscriber::create("/imu", in_options);
  cerulion::PublisherOptions out_options;
  out_options.wait.cancel = in_options.wait.cancel;
  out_options.topic.type = cerulion::TopicType{.message_encoding = "json", .schema = {}};
  auto pub = cerulion::Publisher::create("/imu/filtered", out_options);
  std::optional<cerulion::Subscriber> clock;
  if (!clock_topic.empty()) {
    auto opened = cerulion::Subscriber::create(clock_topic, in_options);
    if (!opened) {
      std::fprintf(stderr, "imu_filter: %s\n", opened.message().c_str());
      return 1;
    }
    clock.emplace(std::move(*opened));
  }
  if (!sub || !pub) {
    std::fprintf(stderr, "imu_filter: %s\n", (!sub ? sub.message() : pub.message()).c_str());
    return 1;
  }

  // The race --race makes: a background "integrator" that runs free instead of in step with the
  // inputs. Its first step is awaited (so it surely runs), never the step an output should see.
  std::atomic<std::uint64_t> integrator_steps{0};
  std::jthread integrator;
  if (race) {
    integrator = std::jthread([&integrator_steps](const std::stop_token& stop) {
      while (!stop.stop_requested()) {
        integrator_steps.fetch_add(1, std::memory_order_relaxed);
        std::this_thread::sleep_for(std::chrono::microseconds(20));
      }
    });
    while (integrator_steps.load(std::memory_order_relaxed) == 0) std::this_thread::yield();
  }

  double accel[3] = {0, 0, 0};
  double yaw_rate = 0;
  for (std::uint64_t n = 0; !args.finished(n); ++n) {
    // The time comes before the input it belongs to, never from the wall clock.
    std::uint64_t now_ns = 0;
    if (clock) {
      auto tick = clock->receive(args.remaining());
      if (!tick) break;
      const std::string text(reinterpret_cast<const char*>(tick->data().data()), tick->data().size());
      std::sscanf(text.c_str(), "{\"ns\":%" SCNu64 "}", &now_ns);
    } else if (wall_clock) {
      now_ns = cerulion::realtime_ns();
    }
    auto sample = sub->receive(args.remaining());
    if (!sample) {
      if (sample.code() == cerulion::ErrorCode::Interrupted || sample.code() == cerulion::ErrorCode::Timeout) break;
      std::fprintf(stderr, "imu_filter: %s\n", sample.message().c_str());
      return 1;
    }
    if (crash_after > 0 && n == crash_after) std::abort();
    while (stall_after > 0 && n == stall_after && !cerulion::stop_requested()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    auto imu = sample->as<example::Imu>();
    if (!imu) {
      std::fprintf(stderr, "imu_filter: %s\n", imu.message().c_str());
      return 1;
    }
    const example::Imu& m = **imu;
    for (int i = 0; i < 3; ++i) accel[i] += alpha * (m.linear_acceleration[i] - accel[i]);
    yaw_rate += alpha * (m.angular_velocity[2] - yaw_rate);
    char text[256];
    int len = std::snprintf(text, sizeof text, "{\"index\":%" PRIu64 ",\"accel\":[%.17g,%.17g,%.17g],\"yaw_rate\":%.17g",
                            m.index, accel[0], accel[1], accel[2], yaw_rate);
    if (clock || wall_clock) {
      len += std::snprintf(text + len, sizeof text - static_cast<std::size_t>(len), ",\"stamp_ns\":%" PRIu64, now_ns);
    }
    if (race) {
      len += std::snprintf(text + len, sizeof text - static_cast<std::size_t>(len), ",\"integrator_steps\":%" PRIu64,
                           integrator_steps.load(std::memory_order_relaxed));
    }
    len += std::snprintf(text + len, sizeof text - static_cast<std::size_t>(len), "}");
    // Published before the input is released: in lockstep, the next input waits for this output.
    if (auto sent = pub->publish_text(std::string_view(text, static_cast<std::size_t>(len))); !sent) {
      if (sent.code() == cerulion::ErrorCode::Interrupted) break;
      std::fprintf(stderr, "imu_filter: %s\n", sent.message().c_str());
      return 1;
    }
  }
  return 0;
}
