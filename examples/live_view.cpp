// SPDX-License-Identifier: Apache-2.0
// Serves this domain's live topics to Foxglove (and a page to a browser) from a process of your
// own, as `cerulion view` does: open a Foxglove WebSocket connection to the address it prints.
// When it stops, it says which topics it served.
#include <chrono>
#include <cstdio>
#include <thread>

#include <cerulion/core/stop.hpp>
#include <cerulion/view/server.hpp>

#include "args.hpp"

int main(int argc, char** argv) {
  const example::Args args = example::parse_args(argc, argv);
  (void)cerulion::stop_on_signals();

  cerulion::view::ViewOptions options;  // every topic, loopback, pooled readers
  options.port = 0;                     // a free port (Foxglove's default is 8765)
  auto server = cerulion::view::ViewServer::create(options);
  if (!server) {
    std::fprintf(stderr, "live_view: %s\n", server.message().c_str());
    return 1;
  }
  if (auto started = server->start(); !started) {
    std::fprintf(stderr, "live_view: %s\n", started.message().c_str());
    return 1;
  }
  std::printf("serving %s\n", server->url().c_str());
  std::fflush(stdout);

  while (!args.finished(0) && !cerulion::stop_requested()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  for (const auto& channel : server->counts().channels) {
    std::printf("served %s (%s): %llu messages\n", channel.topic.c_str(), channel.encoding.c_str(),
                static_cast<unsigned long long>(channel.messages));
  }
  server->stop();
  return 0;
}
