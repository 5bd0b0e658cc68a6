// SPDX-License-Identifier: Apache-2.0
// Keeps the last seconds of /chatter in a flashback keeper of its own (a store named
// "flashback_chatter"), and when stopped dumps what it holds into flashback_chatter.mcap: a node
// that can show what happened before it was asked, with the library `cerulion flashback` runs.
// Its store would outlive a crash, as evidence for `cerulion flashback dump`; stopped cleanly, the
// node has its dump and discards the store.
#include <chrono>
#include <cstdio>
#include <thread>

#include <cerulion/core/stop.hpp>
#include <cerulion/flashback/keeper.hpp>

#include "args.hpp"

int main(int argc, char** argv) {
  const example::Args args = example::parse_args(argc, argv);
  cerulion::stop_on_signals();  // Ctrl-C sets a flag instead of killing us, so the dump is written

  cerulion::flashback::KeeperOptions options;
  options.selection.topics = {"/chatter"};
  options.name = "flashback_chatter";
  options.limits.window_s = 10;
  options.limits.memory_bytes = 16u << 20;
  cerulion::recording::EventQueue events;  // what the keeper says, printed by this thread below
  options.events = &events;
  auto keeper = cerulion::flashback::Keeper::start(options);
  if (!keeper) {
    std::fprintf(stderr, "flashback_chatter: %s\n", keeper.message().c_str());
    return 1;
  }
  // The keeper taps on threads of its own; this one only waits for the end.
  while (!args.finished(keeper->status().messages) && !cerulion::stop_requested() && keeper->error().ok()) {
    for (const auto& e : events.drain()) std::printf("%s\n", e.message.c_str());
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  keeper->stop();  // closes the open chunk into the store (the dump has every message taken) and lets go of it
  std::remove("flashback_chatter.mcap");  // a dump never replaces a file: each run replaces the last one's
  auto dumped = cerulion::flashback::dump_to_file(keeper->store(), "flashback_chatter.mcap");
  (void)cerulion::flashback::remove_store(options.domain, options.name);
  if (!dumped) {
    std::fprintf(stderr, "flashback_chatter: %s\n", dumped.message().c_str());
    return 1;
  }
  std::printf("kept %llu messages of /chatter, dumped into flashback_chatter.mcap\n",
              static_cast<unsigned long long>(dumped->messages));
  return 0;
}
