// SPDX-License-Identifier: Apache-2.0
#pragma once
// How a command ends: an exit code and at most one "cerulion: ..." line. A library error that a
// command does not handle itself becomes that here, in one place, from its code and its subject
// (Status::subject()), never from the wording of its message.
//
//   check(Publisher::create(topic, options).status(), topic);     // "topic '/x' carries json, ..."
//   check(report.status(), {.what = "ping", .size_option = "--size"});  // "ping: --size 4096 is over ..."
//
// Exit codes: 0 success; 2 a usage error (a bad name, option, value or pattern: InvalidTopicName,
// InvalidArgument, or an Option or Pattern subject), unless the error is about a file or process
// found on the machine (Path, Process subject), which is 1 like every other failure; 128 + the
// signal for a command a signal stopped (Interrupted).

#include <cstdint>
#include <string>
#include <string_view>

#include "cerulion/core/status.hpp"

namespace cerulion::cli {

/// Ends the program with `code`; main prints `message` (if any) as one "cerulion: ..." line.
struct Exit {
  int code = 0;
  std::string message;
};

/// Exit codes used everywhere. A stop by signal exits 128 + the signal: stop_exit_code().
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitInterrupted = 130;  ///< 128 + SIGINT

/// The exit code of a command a signal stopped: 128 + that signal (130 SIGINT, 143 SIGTERM,
/// 129 SIGHUP), kExitInterrupted when none was seen (an Interrupted status without a signal).
int stop_exit_code();
/// The exit code of a command whose normal end is Ctrl-C (record, play) once it has finished its
/// work: kExitOk after SIGINT or no signal, stop_exit_code() after SIGTERM or SIGHUP, so a
/// supervisor or a closed terminal still sees that it was stopped.
int finished_exit_code();

/// `text` fit for one line of a message: every control character (C0, DEL and C1) as \xHH, so
/// nothing from the user or a file can break the line or reach the terminal as a command.
/// Nothing else changes: text escaped once already stays as it is.
std::string printable(std::string_view text);

/// What a command was doing when a call failed, for the line that says so.
struct ErrorContext {
  /// Said before the error's message ("ping: ...", "/x: ...") unless it is the error's subject,
  /// which its message names already.
  std::string_view what;
  /// The option that set the size the call used ("--size"): an error about a size over a ceiling
  /// is then that option's ("--size 4096 is over the topic's ceiling of 1024 bytes", exit 2).
  std::string_view size_option;
};

/// The exit code a failed `status` ends a command with (the rules above); kExitOk for a success.
int exit_code(const Status& status, const ErrorContext& context = {});
/// The Exit a failed `status` ends a command with: exit_code() and its message in context.
Exit failure(const Status& status, const ErrorContext& context = {});
inline Exit failure(const Status& status, std::string_view what) { return failure(status, ErrorContext{what, {}}); }

/// Throws failure(status, context) when `status` is not ok.
void check(const Status& status, const ErrorContext& context);
inline void check(const Status& status, std::string_view what = {}) { check(status, ErrorContext{what, {}}); }
template <typename T>
T take(Result<T>&& result, std::string_view what = {}) {
  check(result.status(), what);
  return std::move(result).value();
}

}  // namespace cerulion::cli
