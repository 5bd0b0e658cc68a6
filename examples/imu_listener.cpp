// SPDX-License-Identifier: Apache-2.0
// Reads the Imu structs of /imu and prints one in ten (a terminal cannot follow 100 lines a second).
#include <cstdio>

#include <cerulion/core/stop.hpp>
#include <cerulion/core/subscriber.hpp>

#include "args.hpp"
#include "messages.hpp"

int main(int argc, char** argv) {
  const example::Args args = example::parse_args(argc, argv);

  cerulion::SubscriberOptions options;
  options.wait.cancel = cerulion::stop_on_signals();
  auto sub = cerulion::Subscriber::create("/imu", options);
  if (!sub) {
    std::fprintf(stderr, "imu_listener: %s\n", sub.message().c_str());
    return 1;
  }

  for (std::uint64_t n = 0; !args.finished(n); ++n) {
    auto sample = sub->receive(args.remaining());
    if (!sample) {
      if (sample.code() == cerulion::ErrorCode::Interrupted || sample.code() == cerulion::ErrorCode::Timeout) break;
      std::fprintf(stderr, "imu_listener: %s\n", sample.message().c_str());
      return 1;
    }
    // A pointer into the shared slot, checked for size and alignment: no copy, no parsing.
    auto imu = sample->as<example::Imu>();
    if (!imu) {
      std::fprintf(stderr, "imu_listener: %s\n", imu.message().c_str());
      return 1;
    }
    const example::Imu& m = **imu;
    if (n % 10 == 0) {
      std::printf("imu %llu: yaw rate %.2f rad/s, acceleration %.2f %.2f %.2f m/s^2\n",
                  static_cast<unsigned long long>(m.index), m.angular_velocity[2], m.linear_acceleration[0],
                  m.linear_acceleration[1], m.linear_acceleration[2]);
    }
  }
  return 0;
}
