// SPDX-License-Identifier: Apache-2.0
// Plays chatter.mcap (what record_chatter wrote) back onto /chatter at its recorded pace, with the
// library `cerulion play` runs: a node that replays its own log, to a listener or a test.
#include <cstdio>

#include <cerulion/core/stop.hpp>
#include <cerulion/recording/playback.hpp>

// Where the playback says what it cannot honour (a damaged chunk skipped...), as it happens.
struct PrintEvents final : cerulion::recording::EventSink {
  void on_event(cerulion::recording::Event e) override {
    std::fprintf(stderr, "replay_chatter: %s: %s\n", cerulion::recording::to_string(e.kind), e.message.c_str());
  }
};

int main() {
  auto reader = cerulion::recorder::Reader::open("chatter.mcap");
  if (!reader) return std::fprintf(stderr, "replay_chatter: %s\n", reader.message().c_str()), 1;
  cerulion::recording::PlaybackOptions options;
  options.cancel = cerulion::stop_on_signals();  // Ctrl-C ends the playback, not the process
  PrintEvents events;
  options.events = &events;
  auto playback = cerulion::recording::Playback::create(std::move(*reader), options);
  if (!playback) return std::fprintf(stderr, "replay_chatter: %s\n", playback.message().c_str()), 1;
  if (auto played = playback->run(); !played) {
    return std::fprintf(stderr, "replay_chatter: %s\n", played.message().c_str()), 1;
  }
  std::printf("replayed %llu messages from chatter.mcap\n", static_cast<unsigned long long>(playback->published()));
  return 0;
}
