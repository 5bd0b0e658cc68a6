// SPDX-License-Identifier: Apache-2.0
// Publishes "hello world N" on /chatter ten times a second.
#include <chrono>
#include <cstdio>
#include <span>
#include <string>
#include <thread>

#include <cerulion/core/publisher.hpp>
#include <cerulion/core/stop.hpp>

#include "args.hpp"

int main(int argc, char** argv) {
  const example::Args args = example::parse_args(argc, argv);

  cerulion::PublisherOptions options;
  // In lockstep (the default) a publish waits for a slow subscriber; Ctrl-C must end that wait too.
  options.wait.cancel = cerulion::stop_on_signals();
  auto pub = cerulion::Publisher::create("/chatter", options);
  if (!pub) {
    std::fprintf(stderr, "talker: %s\n", pub.message().c_str());
    return 1;
  }

  for (std::uint64_t n = 0; !args.finished(n) && !cerulion::stop_requested(); ++n) {
    const std::string text = "hello world " + std::to_string(n);
    // Text is no struct: its characters are copied into a slot of their size.
    auto sent = pub->publish_text(text);
    if (!sent) {
      if (sent.code() == cerulion::ErrorCode::Interrupted) break;
      std::fprintf(stderr, "talker: %s\n", sent.message().c_str());
      return 1;
    }
    std::printf("published '%s'\n", text.c_str());
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return 0;
}
