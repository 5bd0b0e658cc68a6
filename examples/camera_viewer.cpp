// SPDX-License-Identifier: Apache-2.0
// Watches /camera/image and prints, once a second, the frame rate and the latency: the time from
// the publisher's publish() to this process holding the frame (both on CLOCK_MONOTONIC).
#include <algorithm>
#include <cstdio>
#include <vector>

#include <cerulion/core/stop.hpp>
#include <cerulion/core/subscriber.hpp>

#include "args.hpp"
#include "messages.hpp"

int main(int argc, char** argv) {
  const example::Args args = example::parse_args(argc, argv);

  cerulion::SubscriberOptions options;
  options.wait.cancel = cerulion::stop_on_signals();
  options.topic.depth = 4;  // as the camera's, should this viewer be the one creating the topic
  auto sub = cerulion::Subscriber::create("/camera/image", options);
  if (!sub) {
    std::fprintf(stderr, "camera_viewer: %s\n", sub.message().c_str());
    return 1;
  }

  std::uint64_t lost = 0, index = 0, window_start = 0;
  std::vector<std::uint64_t> latencies;  // this second's, ns
  auto report = [&](std::uint64_t now) {
    const double seconds = static_cast<double>(now - window_start) / 1e9;
    std::sort(latencies.begin(), latencies.end());
    std::printf("%.1f fps, latency median %.2f us, max %.1f us, %llu lost, last frame %llu\n",
                static_cast<double>(latencies.size()) / seconds, latencies[latencies.size() / 2] / 1e3,
                latencies.back() / 1e3, static_cast<unsigned long long>(lost), static_cast<unsigned long long>(index));
    latencies.clear();
    lost = 0;
    window_start = now;
  };

  for (std::uint64_t n = 0; !args.finished(n); ++n) {
    auto sample = sub->receive(args.remaining());
    if (!sample) {
      if (sample.code() == cerulion::ErrorCode::Interrupted || sample.code() == cerulion::ErrorCode::Timeout) break;
      std::fprintf(stderr, "camera_viewer: %s\n", sample.message().c_str());
      return 1;
    }
    const std::uint64_t now = cerulion::monotonic_ns();
    if (window_start == 0) window_start = now;  // the rate counts from the first frame on
    // as<Frame>() checks the size, so a publisher of another type on this topic is an error here,
    // not a misread image.
    auto frame = sample->as<example::Frame>();
    if (!frame) {
      std::fprintf(stderr, "camera_viewer: %s\n", frame.message().c_str());
      return 1;
    }
    index = (*frame)->index;
    lost += sample->lost_before();
    latencies.push_back(now - sample->publish_time_ns());
    if (now - window_start >= 1'000'000'000) report(now);
  }
  if (latencies.size() > 1) report(cerulion::monotonic_ns());
  return 0;
}
