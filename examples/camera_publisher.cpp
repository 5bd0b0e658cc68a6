// SPDX-License-Identifier: Apache-2.0
// A 1920x1080 RGB camera at 30 Hz on /camera/image. Each frame is written straight into shared
// memory (loan_as), so its 6 MB are never copied, here or in any viewer.
#include <cstdio>
#include <cstring>

#include <cerulion/core/pacing.hpp>
#include <cerulion/core/publisher.hpp>
#include <cerulion/core/stop.hpp>

#include "args.hpp"
#include "messages.hpp"

int main(int argc, char** argv) {
  const example::Args args = example::parse_args(argc, argv);

  cerulion::PublisherOptions options;
  options.wait.cancel = cerulion::stop_on_signals();
  // A camera must not wait for a slow viewer: in free run the viewer skips frames and is told how
  // many. Four slots (not the default 16) keep /dev/shm use near (4 + 4) x 6 MB.
  options.topic.mode = cerulion::Mode::FreeRun;
  options.topic.depth = 4;
  auto pub = cerulion::Publisher::create("/camera/image", options);
  if (!pub) {
    std::fprintf(stderr, "camera_publisher: %s\n", pub.message().c_str());
    return 1;
  }

  constexpr std::uint64_t kPeriodNs = 1'000'000'000 / 30;
  cerulion::Pacer pacer;  // publishes at the tick itself, not a timer's lateness after it
  std::uint64_t next = cerulion::monotonic_ns();
  for (std::uint64_t n = 0; !args.finished(n) && !cerulion::stop_requested(); ++n) {
    auto frame = pub->loan_as<example::Frame>();
    if (!frame) {
      std::fprintf(stderr, "camera_publisher: %s\n", frame.message().c_str());
      return 1;
    }
    // The slot holds whatever an earlier frame left: write every field.
    example::Frame& f = **frame;
    f.index = n;
    f.width = 1920;
    f.height = 1080;
    for (std::size_t y = 0; y < 1080; ++y) std::memset(f.rgb[y], static_cast<int>((y + n) & 0xff), sizeof f.rgb[y]);

    // A camera delivers frames on its own clock: the frame is published at its tick, however long
    // filling it took (here a memset, on a real camera the driver's DMA).
    next += kPeriodNs;
    if (!pacer.sleep_until(next, options.wait.cancel)) break;
    if (auto sent = pub->publish(std::move(*frame)); !sent) {
      std::fprintf(stderr, "camera_publisher: %s\n", sent.message().c_str());
      return 1;
    }
  }
  return 0;
}
