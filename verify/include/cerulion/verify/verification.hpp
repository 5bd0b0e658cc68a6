// SPDX-License-Identifier: Apache-2.0
#pragma once
// A verification: the command run over a recording's inputs once or `repeat` times, the first
// run's outputs compared with the recording's, every later run's with the first (what differs
// there is non-determinism). What `cerulion verify` runs.
//
//   cerulion::verify::VerifyOptions o;
//   o.recording = "golden.mcap";
//   o.run.command = {"./imu_filter"};
//   o.run.inputs = {"/imu"};
//   o.run.outputs = {"/imu/filtered"};
//   auto v = cerulion::verify::verify(o);
//   if (v.verdict != cerulion::verify::Verdict::Same) std::puts(text_report(v).c_str());

#include <cstdint>
#include <string>
#include <vector>

#include "cerulion/verify/compare.hpp"
#include "cerulion/verify/runner.hpp"

namespace cerulion::verify {

/// Settings of a verification; defaults are the recommendation.
struct VerifyOptions {
  std::string recording;
  RunOptions run;
  CompareOptions compare;
  /// Runs of the same inputs (1 or more).
  unsigned repeat = 1;
  /// When not empty, the first run's inputs and outputs are written there (a golden file).
  std::string keep;
  /// A damaged recording (RunPlan::damage) is verified on its intact part, the part before the
  /// damage, rather than refused as RecordingUnusable; the verification says so.
  bool allow_damaged = false;
};

/// The outcome, worst first in the order a command's exit code tells them.
enum class Verdict : std::uint8_t {
  Same,               ///< the outputs are the recorded ones, in every run
  Differ,             ///< they differ from the recording's, or between runs
  CommandFailed,      ///< the command could not start, crashed, exited early or never subscribed
  RecordingUnusable,  ///< the recording cannot serve: an input or output missing, an output that does not decode,
                      ///< damaged (not finalized, a chunk that fails its CRC, messages its statistics count missing)
  Interrupted,        ///< cancelled
};
/// "same", "differ", "command failed", "recording unusable", "interrupted".
const char* to_string(Verdict verdict) noexcept;

/// One run as the report shows it.
struct RunSummary {
  RunEnd end = RunEnd::Finished;
  std::string problem;
  std::uint64_t inputs = 0;
  std::uint64_t outputs = 0;
  std::uint64_t elapsed_ns = 0;
  std::uint64_t feeding_ns = 0;
};

/// What a verification found.
struct Verification {
  Verdict verdict = Verdict::Same;
  /// One line when the verdict is not Same or Differ (or --keep failed): why.
  std::string problem;
  std::string recording;
  std::vector<std::string> inputs, outputs;
  /// Whether the recording has outputs to compare with (without, only runs are compared).
  bool compared_with_recording = false;
  Comparison against_recording;
  /// between_runs[i]: run i+1 compared with run 0 (run 0 as the expected side).
  std::vector<Comparison> between_runs;
  std::vector<RunSummary> runs;
  /// Why the recording cannot be trusted whole (RunPlan::damage); empty when it is whole. With
  /// allow_damaged, what was verified is its intact part:
  std::vector<std::string> damage;
  /// Whether only the part before the damage was verified, up to which log time (ns), how many
  /// of the recording's inputs that part holds, and how many outputs the runs gave after the last
  /// output of that part (not compared: the recording lost what they answer).
  bool intact_part_only = false;
  std::uint64_t intact_before = 0;
  std::uint64_t inputs_verified = 0;
  std::uint64_t recorded_inputs = 0;
  std::uint64_t outputs_beyond = 0;
  /// The globs of the tolerances that matched no number field of any output compared (a run
  /// that compared nothing matched none): likely mistyped.
  std::vector<std::string> unmatched_tolerances;
};

/// Runs it. Never fails as a call: what goes wrong is the verdict and its problem line.
Verification verify(const VerifyOptions& options);

}  // namespace cerulion::verify
