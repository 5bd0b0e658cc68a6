// SPDX-License-Identifier: Apache-2.0
// Publishes an Imu struct on /imu at 100 Hz. A small struct is simply copied into a slot:
// publish(imu) sends its bytes, and the listener reads them back with as<Imu>().
#include <cmath>
#include <cstdio>

#include <cerulion/core/pacing.hpp>
#include <cerulion/core/publisher.hpp>
#include <cerulion/core/stop.hpp>

#include "args.hpp"
#include "messages.hpp"

int main(int argc, char** argv) {
  const example::Args args = example::parse_args(argc, argv);

  cerulion::PublisherOptions options;
  options.wait.cancel = cerulion::stop_on_signals();
  auto pub = cerulion::Publisher::create("/imu", options);
  if (!pub) {
    std::fprintf(stderr, "imu_publisher: %s\n", pub.message().c_str());
    return 1;
  }

  cerulion::Pacer pacer;  // on the 100 Hz tick, not a timer's lateness after it
  std::uint64_t next = cerulion::monotonic_ns();
  for (std::uint64_t n = 0; !args.finished(n) && !cerulion::stop_requested(); ++n) {
    const double t = static_cast<double>(n) / 100.0;
    // A robot turning slowly about z, at rest otherwise.
    const example::Imu imu{.index = n,
                           .orientation = {0.0, 0.0, std::sin(t / 4), std::cos(t / 4)},
                           .angular_velocity = {0.0, 0.0, 0.5},
                           .linear_acceleration = {0.0, 0.0, 9.81}};
    if (auto sent = pub->publish(imu); !sent) {
      if (sent.code() == cerulion::ErrorCode::Interrupted) break;
      std::fprintf(stderr, "imu_publisher: %s\n", sent.message().c_str());
      return 1;
    }
    next += 10'000'000;
    if (!pacer.sleep_until(next, options.wait.cancel)) break;
  }
  return 0;
}
