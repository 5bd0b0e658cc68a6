// SPDX-License-Identifier: Apache-2.0
// Prints what arrives on /chatter. Start it before or after the talker: whichever comes first
// creates the topic, and the listener hears what is published once it is there.
#include <cstdio>

#include <cerulion/core/stop.hpp>
#include <cerulion/core/subscriber.hpp>

#include "args.hpp"

int main(int argc, char** argv) {
  const example::Args args = example::parse_args(argc, argv);

  cerulion::SubscriberOptions options;
  // Ctrl-C or SIGTERM ends the receive below with Interrupted, so the loop ends and the
  // subscriber leaves the topic cleanly.
  options.wait.cancel = cerulion::stop_on_signals();
  auto sub = cerulion::Subscriber::create("/chatter", options);
  if (!sub) {
    std::fprintf(stderr, "listener: %s\n", sub.message().c_str());
    return 1;
  }

  for (std::uint64_t n = 0; !args.finished(n); ++n) {
    auto sample = sub->receive(args.remaining());
    if (!sample) {
      if (sample.code() == cerulion::ErrorCode::Interrupted || sample.code() == cerulion::ErrorCode::Timeout) break;
      std::fprintf(stderr, "listener: %s\n", sample.message().c_str());
      return 1;
    }
    // The bytes are the publisher's own, in shared memory, until `sample` goes out of scope.
    const std::string_view text = sample->text();
    std::printf("heard '%.*s' (message %llu)\n", static_cast<int>(text.size()), text.data(),
                static_cast<unsigned long long>(sample->sequence()));
  }
  return 0;
}
