// SPDX-License-Identifier: Apache-2.0
// Plays chatter.mcap (what record_chatter wrote) back onto /chatter at its recorded pace, with the
// library `cerulion play` runs: a node that replays its own log, to a listener or a test.
#include <cstdio>

#include <cerulion/core/stop.hpp>
#include <cerulion/recording/playback.hpp>

int main() {
  auto reader = cerulion::recorder::Reader::open("chatter.mcap");
  if (!reader) return std::fprintf(stderr, "replay_chatter: %s\n", reader.message().c_str()), 1;
  cerulion::recording::PlaybackOptions options;
  options.cancel = cerulion::stop_on_signals();  // Ctrl-C ends the playback, not the process
  auto playback = cerulion::recording::Playback::create(std::move(*reader), options);
  if (!playback) return std::fprintf(stderr, "replay_chatter: %s\n", playback.message().c_str()), 1;
  cerulion::recording::PlaybackEvents events;
  events.on_warning = [](const std::string& w) { std::fprintf(stderr, "replay_chatter: warning: %s\n", w.c_str()); };
  if (auto played = playback->run(events); !played) {
    return std::fprintf(stderr, "replay_chatter: %s\n", played.message().c_str()), 1;
  }
  std::printf("replayed %llu messages from chatter.mcap\n", static_cast<unsigned long long>(playback->published()));
  return 0;
}
