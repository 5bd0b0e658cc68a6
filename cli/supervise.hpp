// SPDX-License-Identifier: Apache-2.0
#pragma once
// The one loop of the long-running commands (record, play, flashback start, bridge), and how
// they write to stderr. The loop runs until a stop signal, --duration, the end of the work or its
// fatal error; says each event the work reports as one "cerulion: ..." line, once; and shows a
// progress line once a second (rewritten in place on a terminal, a line of its own otherwise).
//
// stderr is written with write(2), never through stdio, a line at a time: a closed or full stderr
// (`2>&1 | head -1`, `2>/dev/full`) silences it for the rest of the run, and a reader that stops
// reading costs a line, not the command. The work is what matters: a recording still finishes
// its file.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "cerulion/core/status.hpp"
#include "cerulion/recording/events.hpp"

namespace cerulion::cli {

/// Writes `line`, its control characters escaped (printable()), and a newline to stderr, best
/// effort (see above): whatever user text it quotes, it stays one line. A progress line in place on a
/// terminal is ended first.
void say(std::string_view line);

/// An event as the commands say it: "cerulion: <message>", "cerulion: warning: <message>".
std::string event_line(const recording::Event& event);

/// Says every event queued so far; returns how many of them were problems.
std::size_t say_events(recording::EventQueue& events);

/// What the loop watches; every part may be left empty.
struct Supervision {
  /// Where the work reports; said as it comes.
  recording::EventQueue* events = nullptr;
  /// The progress line, asked once a second with the seconds since the loop began; "" says
  /// nothing this time.
  std::function<std::string(double elapsed_s)> progress;
  /// The work's fatal error, ok while it is fine: a failure ends the loop.
  std::function<Status()> failed;
  /// Whether the work ended by itself (a playback at its end).
  std::function<bool()> finished;
  /// Called at every turn of the loop (about 20 times a second), on its thread.
  std::function<void()> each_turn;
  /// Seconds the loop runs at most; 0: until something else ends it.
  double duration_s = 0;
};

/// Why the loop ended.
enum class Ended : std::uint8_t { Stopped, Duration, Finished, Failed };

struct Supervised {
  Ended ended = Ended::Stopped;
  Status error;                ///< for Ended::Failed
  double elapsed_s = 0;
  std::size_t problems = 0;    ///< problem events said
};

/// Runs the loop on the calling thread. On its way out it ends a progress line, so that what
/// the caller says next starts a line of its own; events reported after it are the caller's to
/// say (say_events) once the work has stopped.
Supervised supervise(const Supervision& supervision);

}  // namespace cerulion::cli
