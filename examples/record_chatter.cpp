// SPDX-License-Identifier: Apache-2.0
// Records /chatter into chatter.mcap, in the current directory, until stopped: a node that keeps
// its own log, with the library `cerulion record` runs. Open the file with Foxglove, the mcap CLI
// or `cerulion info`.
#include <chrono>
#include <cstdio>
#include <thread>

#include <cerulion/core/stop.hpp>
#include <cerulion/recording/recording.hpp>

#include "args.hpp"

int main(int argc, char** argv) {
  const example::Args args = example::parse_args(argc, argv);
  cerulion::stop_on_signals();  // Ctrl-C sets a flag instead of killing us, so finish() closes the file

  cerulion::recording::RecordingOptions options;
  options.taps.selection.topics = {"/chatter"};
  cerulion::recorder::FileSinkOptions file;
  file.overwrite = true;  // each run replaces the last one's file
  auto recording =
      cerulion::recording::Recording::create(options, cerulion::recording::file_sinks("chatter.mcap", false, file));
  if (!recording) {
    std::fprintf(stderr, "record_chatter: %s\n", recording.message().c_str());
    return 1;
  }
  if (auto started = recording->start(); !started) {
    std::fprintf(stderr, "record_chatter: %s\n", started.message().c_str());
    return 1;
  }
  // The recording reads and writes on threads of its own; this one only waits for the end.
  std::uint64_t received = 0;
  while (!args.finished(received) && !cerulion::stop_requested() && recording->error().ok()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    received = recording->counts().empty() ? 0 : recording->counts().front().received;
  }
  if (auto finished = recording->finish(); !finished) {
    std::fprintf(stderr, "record_chatter: %s\n", finished.message().c_str());
    return 1;
  }
  std::printf("recorded %llu messages of /chatter into chatter.mcap\n", static_cast<unsigned long long>(received));
  return 0;
}
