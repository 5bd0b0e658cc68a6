// SPDX-License-Identifier: Apache-2.0
// `cerulion ping`'s run: the library measures; this file says how to start the pong process
// (`cerulion pong --once` from this very binary), runs the flashback keeper and turns errors
// into exit codes.

#include <csignal>
#include <optional>

#include <fmt/core.h>

#include "command.hpp"
#include "ping_run.hpp"

namespace cerulion::cli {
namespace {

Result<measurement::ChildProcess> spawn_pong(const measurement::PingOptions& o) {
  measurement::ChildOptions child;
  // argv[0] is what `ps` shows: the command, not the path it was run by.
  child.argv = {"cerulion", "--domain", o.domain, "pong", "--topic", o.prefix,
                "--wait", to_string(o.wait), "--mode", to_string(o.mode), "--once",
                "--transport", o.transport, "--max-size", std::to_string(o.size)};
  if (o.topic_ceiling != kDefaultMaxPayload) child.argv.insert(child.argv.end(), {"--topic-ceiling", std::to_string(o.topic_ceiling)});
  if (o.alternate_wait_set) child.argv.push_back("--alternate");
  if (o.wait_set_members > 0) child.argv.insert(child.argv.end(), {"--wait-set", std::to_string(o.wait_set_members)});
  if (o.cpus.pong) child.argv.insert(child.argv.end(), {"--cpu", std::to_string(*o.cpus.pong)});
  if (o.explain_tail) child.argv.push_back("--explain-tail");
  if (o.cpu_budget != kDefaultWaitCpuBudget) child.argv.insert(child.argv.end(), {"--cpu-budget", fmt::format("{}", o.cpu_budget * 100)});
  child.program = measurement::kThisProgram;
  // In ping's own process group: whoever stops ping's group (bench) stops its pong too.
  child.own_process_group = false;
  // An iceoryx pong whose RouDi went with its ping can sit in iceoryx's wait for a RouDi, where no
  // SIGTERM reaches it; what it holds is RouDi's to clean, so it is killed outright.
  if (o.transport == "iceoryx") child.parent_death_signal = SIGKILL;
  auto pong = measurement::ChildProcess::start(child);
  if (!pong) return Status{ErrorCode::SystemError, "cannot start the pong process: " + pong.message()};
  return pong;
}

}  // namespace

PingRun run_ping(const measurement::PingOptions& options, bool flashback) {
  PingRun run;
  measurement::PingOptions o = options;
  if (!o.peer) o.start_responder_process = spawn_pong;
  std::optional<PingKeeper> keeper;
  if (flashback) {
    o.hooks.before_responder = [&] {
      keeper.emplace();
      return keeper->start(o.domain, o.prefix, std::chrono::duration<double>(o.timeout).count());
    };
    o.hooks.measured_start = [&] { keeper->mark_start(); };
    o.hooks.after_run = [&](std::uint64_t wall_ns) { run.keeper = keeper->finish(wall_ns); };
  }
  auto report = measurement::run_ping(o);
  if (!report.ok()) {
    switch (report.code()) {
      case ErrorCode::Timeout:
        throw Exit{kExitFailure, o.peer ? "ping: no `cerulion pong` answered on " +
                                              measurement::request_topic(o.prefix) + " within the timeout"
                                        : "ping: the pong worker did not start"};
      default: check(report.status(), {.what = "ping", .size_option = "--size"});
    }
  }
  run.report = std::move(report).value();
  if (!run.report.responder_error.empty()) fmt::print(stderr, "cerulion: pong: {}\n", run.report.responder_error);
  return run;
}

}  // namespace cerulion::cli
