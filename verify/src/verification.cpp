// SPDX-License-Identifier: Apache-2.0
#include "cerulion/verify/verification.hpp"

#include <algorithm>
#include <optional>

namespace cerulion::verify {
namespace {

RunSummary summary_of(const RunResult& run) {
  std::uint64_t outputs = 0;
  for (const auto& t : run.outputs) outputs += t.messages.size();
  return {run.end, run.problem, run.inputs_published, outputs, static_cast<std::uint64_t>(run.elapsed.count()),
          static_cast<std::uint64_t>(run.feeding.count())};
}

// The outputs of a run over a damaged recording's intact part, each topic cut to the messages
// that part shows: the recording lost what answers its last inputs, so nothing after them is
// compared. Returns how many were cut.
std::uint64_t cut_to_intact_part(MessageSet& outputs, const MessageSet& expected) {
  std::uint64_t cut = 0;
  for (auto& t : outputs) {
    const TopicMessages* e = find_topic(expected, t.topic);
    const std::size_t keep = e ? e->messages.size() : 0;
    if (t.messages.size() <= keep) continue;
    cut += t.messages.size() - keep;
    t.messages.resize(keep);
  }
  return cut;
}

Verdict verdict_of(RunEnd end) {
  switch (end) {
    case RunEnd::Finished: return Verdict::Differ;
    case RunEnd::Interrupted: return Verdict::Interrupted;
    case RunEnd::Failed: return Verdict::RecordingUnusable;  // an input the topic's type refuses
    // An output that never came stops the run: what the command would have said to the inputs
    // never fed is unknown, not a difference.
    case RunEnd::OutputTimeout:
    case RunEnd::CommandExited:
    case RunEnd::NotTaking:
    case RunEnd::NeverSubscribed:
    case RunEnd::CannotStart: return Verdict::CommandFailed;
  }
  return Verdict::CommandFailed;
}

}  // namespace

Verification verify(const VerifyOptions& options) {
  Verification v;
  v.recording = options.recording;
  v.inputs = options.run.inputs;
  v.outputs = options.run.outputs;
  auto plan = RunPlan::read(options.recording, options.run.inputs, options.run.outputs);
  if (!plan) {
    // Topic lists are the caller's to check (a command says so as a usage error): what is left is
    // the recording's.
    v.verdict = Verdict::RecordingUnusable;
    v.problem = plan.message();
    return v;
  }
  v.inputs = plan->inputs;
  v.outputs = plan->outputs;
  v.damage = plan->damage;
  if (!plan->damage.empty()) {
    if (!options.allow_damaged) {
      v.verdict = Verdict::RecordingUnusable;
      v.problem = options.recording + " is damaged: " + plan->damage.front() +
                  " (give --allow-damaged to verify the part before the damage)";
      return v;
    }
    if (plan->input_count == 0) {
      v.verdict = Verdict::RecordingUnusable;
      v.problem = options.recording + " is damaged: " + plan->damage.front() + "; " +
                  (plan->intact_before == 0 ? "where cannot be told, so no part of it is known intact"
                                            : "no input comes before the damage");
      return v;
    }
    v.intact_part_only = plan->partial();
    v.intact_before = plan->intact_before;
    v.inputs_verified = plan->input_count;
    v.recorded_inputs = plan->recorded_inputs;
  }
  // Without recorded outputs there is nothing to compare with but other runs, or a golden to keep.
  std::vector<std::string> absent;
  for (const auto& o : plan->outputs) {
    if (find_topic(plan->expected, o) == nullptr) absent.push_back(o);
  }
  if (!absent.empty() && options.repeat < 2 && options.keep.empty()) {
    v.verdict = Verdict::RecordingUnusable;
    v.problem = options.recording + " has no output topic '" + absent.front() +
                "' (give --repeat 2 or more to compare runs with each other, or --keep to record a golden file)";
    return v;
  }
  v.compared_with_recording = absent.size() < plan->outputs.size();

  std::optional<MessageSet> first;
  for (unsigned i = 0; i < std::max(1u, options.repeat); ++i) {
    auto run = run_command(*plan, options.run);
    if (!run) {
      v.verdict = Verdict::CommandFailed;
      v.problem = run.message();
      return v;
    }
    v.runs.push_back(summary_of(*run));
    if (run->end != RunEnd::Finished) {
      v.verdict = verdict_of(run->end);
      v.problem = (options.repeat > 1 ? "run " + std::to_string(i + 1) + ": " : std::string()) + run->problem;
      return v;
    }
    if (v.intact_part_only) {
      const std::uint64_t cut = cut_to_intact_part(run->outputs, plan->expected);
      if (i == 0) v.outputs_beyond = cut;
    }
    if (i == 0) {
      if (v.compared_with_recording) {
        v.against_recording = compare(plan->expected, run->outputs, options.compare);
        if (v.against_recording.expected_undecodable()) {
          v.verdict = Verdict::RecordingUnusable;
          v.problem = options.recording + ": an output message of the recording is not json";
          return v;
        }
      }
      if (!options.keep.empty()) {
        if (Status st = write_run(*plan, *run, options.keep); !st) {
          v.verdict = Verdict::RecordingUnusable;
          v.problem = "--keep: " + st.message();
          return v;
        }
      }
      first = std::move(run->outputs);
    } else {
      v.between_runs.push_back(compare(*first, run->outputs, options.compare));
    }
  }
  std::vector<const Comparison*> comparisons;
  if (v.compared_with_recording) comparisons.push_back(&v.against_recording);
  for (const auto& c : v.between_runs) comparisons.push_back(&c);
  v.unmatched_tolerances = unmatched_tolerances(options.compare, comparisons);
  bool differ = v.compared_with_recording && !v.against_recording.same();
  for (const auto& c : v.between_runs) differ = differ || !c.same();
  v.verdict = differ ? Verdict::Differ : Verdict::Same;
  return v;
}

}  // namespace cerulion::verify
