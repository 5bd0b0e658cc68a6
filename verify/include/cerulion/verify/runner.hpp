// SPDX-License-Identifier: Apache-2.0
#pragma once
// One run of a command over a recording's inputs: the command starts in a private domain of its
// own (CERULION_DOMAIN set for it), the runner waits until it has subscribed to every input, then
// publishes the inputs in log-time order in lockstep, with their recorded types, and after each
// one waits for the outputs the recording shows before the next (or, where the recording has no
// outputs at all, until the command has been quiet for `settle`). Nothing waits for the wall
// clock between inputs: a slow machine feeds the same inputs in the same order as a fast one.
//
//   cerulion::verify::RunOptions o;
//   o.command = {"./imu_filter"};
//   o.inputs = {"/imu"};
//   o.outputs = {"/imu/filtered"};
//   auto plan = cerulion::verify::RunPlan::read("golden.mcap", o.inputs, o.outputs);
//   auto run = cerulion::verify::run_command(*plan, o);
//
// The command is stopped (SIGTERM, then SIGKILL with its whole process group) at the end, on a
// failure and on cancel; the domain's segments are removed then, whoever left them.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "cerulion/core/status.hpp"
#include "cerulion/recording/events.hpp"
#include "cerulion/verify/messages.hpp"

namespace cerulion::verify {

/// Settings of a run; defaults are the recommendation.
struct RunOptions {
  /// The command and its arguments; command[0] is looked up in PATH unless it holds a '/'.
  std::vector<std::string> command;
  /// Topics the runner publishes from the recording, and topics it collects from the command.
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  /// The domain the command runs in; "" makes a fresh one ("verify-<pid>-<n>").
  std::string domain;
  /// How long the command may take to subscribe to every input.
  std::chrono::milliseconds startup_timeout{10'000};
  /// How long an input may wait for the outputs the recording shows after it, and for the command
  /// to take the inputs before it.
  std::chrono::milliseconds output_timeout{10'000};
  /// Quiet time that ends the wait after an input when the recording has no outputs to wait for,
  /// and that catches outputs beyond the recorded ones after the last input.
  std::chrono::milliseconds settle{100};
  /// When not empty: before each input, its log time is published on this topic as json
  /// {"ns": <log time>} (for a node that must not read the wall clock).
  std::string clock_topic;
  /// Set to stop the run (it then ends Interrupted).
  const std::atomic<bool>* cancel = nullptr;
  /// Where the run says what it cannot honour (a type played as raw bytes...). Null: nowhere.
  recording::EventSink* events = nullptr;
};

/// What a recording holds for a run: how many outputs each output topic should have seen before
/// each input is published, and the expected outputs themselves. Inputs stay in the file.
struct RunPlan {
  std::string recording;
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  /// Inputs in log-time order, as "/imu #12".
  std::uint64_t input_count = 0;
  /// expected_before[k][o]: messages of outputs[o] the recording shows before input k.
  std::vector<std::vector<std::uint64_t>> expected_before;
  /// The recording's outputs (topics absent from it are absent here).
  MessageSet expected;
  /// Why the recording cannot be trusted whole, one line each: what its reader found wrong (not
  /// finalized, a chunk that fails its CRC...), and messages its own statistics count that could
  /// not be read. Empty when it is whole.
  std::vector<std::string> damage;
  /// Log time (ns) before which every message was read (recorder::Reader::intact_before): with
  /// damage, the plan holds only the messages logged before it (the intact part), and a run
  /// publishes only those inputs. The largest value when nothing was lost, 0 when the damage
  /// cannot be placed (no intact part).
  std::uint64_t intact_before = std::numeric_limits<std::uint64_t>::max();
  /// Inputs the recording holds, the intact part's and those after it: as its statistics count
  /// them, or, without usable statistics (a file cut short), those that could be read.
  std::uint64_t recorded_inputs = 0;
  /// Whether the recording has any output message at all (if not, runs wait for quiet).
  bool has_outputs() const noexcept;
  /// Whether it holds only the part of the recording before its damage.
  bool partial() const noexcept { return intact_before != std::numeric_limits<std::uint64_t>::max(); }

  /// Reads the plan. NotFound naming an input topic the recording lacks; Corrupted when the file
  /// is not a recording; an output topic the recording lacks is left out of `expected` (the
  /// caller decides whether that is an error). A damaged recording is read (see `damage`): the
  /// caller decides whether its intact part may serve.
  static Result<RunPlan> read(const std::string& recording, std::vector<std::string> inputs,
                              std::vector<std::string> outputs);
};

/// How a run ended.
enum class RunEnd : std::uint8_t {
  Finished,        ///< every input published, outputs collected, the command stopped by us
  OutputTimeout,   ///< an output the recording shows did not come within output_timeout: the command stopped answering
  CommandExited,   ///< the command ended (crashed, exited) before the run was over
  NotTaking,       ///< the command stopped taking inputs (an input found no room within output_timeout)
  NeverSubscribed, ///< an input got no subscriber within startup_timeout
  CannotStart,     ///< the command could not be started (not found, not executable)
  Failed,          ///< an input could not be published (the recording's type clashes...)
  Interrupted,     ///< cancelled
};
const char* to_string(RunEnd end) noexcept;

/// What one run gave.
struct RunResult {
  RunEnd end = RunEnd::Finished;
  /// One line saying why the run ended early ("" for Finished).
  std::string problem;
  /// The outputs collected, each labelled with the input that preceded it.
  MessageSet outputs;
  std::uint64_t inputs_published = 0;
  /// Time the whole run took, and the part spent publishing inputs and waiting for the outputs.
  std::chrono::nanoseconds elapsed{0};
  std::chrono::nanoseconds feeding{0};
};

/// Runs the command once. An error only for what makes no run possible (bad options); what the
/// command does wrong is in RunResult::end.
Result<RunResult> run_command(const RunPlan& plan, const RunOptions& options);

/// Writes what a run gave as a recording that can verify later runs: the plan's inputs with their
/// recorded log times, each output after the input that preceded it. Refuses to replace a file.
Status write_run(const RunPlan& plan, const RunResult& run, const std::string& path);

}  // namespace cerulion::verify
