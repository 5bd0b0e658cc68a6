// SPDX-License-Identifier: Apache-2.0
// `cerulion ping`'s run: the library measures; this file starts the pong process (`cerulion pong
// --once` from this very binary), runs the flashback keeper and turns errors into exit codes.

#include <csignal>
#include <optional>
#include <sys/prctl.h>
#include <unistd.h>

#include <fmt/core.h>

#include "command.hpp"
#include "ping_run.hpp"

namespace cerulion::cli {
namespace {

Result<pid_t> spawn_pong(const measurement::PingOptions& o) {
  // argv[0] is what `ps` shows: the command, not the path it was run by.
  std::vector<std::string> args{"cerulion", "--domain", o.domain, "pong", "--topic", o.prefix,
                                "--wait", to_string(o.wait), "--mode", to_string(o.mode), "--once",
                                "--transport", o.transport, "--max-size", std::to_string(o.size)};
  if (o.topic_ceiling != kDefaultMaxPayload) args.insert(args.end(), {"--topic-ceiling", std::to_string(o.topic_ceiling)});
  if (o.alternate_wait_set) args.push_back("--alternate");
  if (o.wait_set_members > 0) args.insert(args.end(), {"--wait-set", std::to_string(o.wait_set_members)});
  if (o.cpus.pong) args.insert(args.end(), {"--cpu", std::to_string(*o.cpus.pong)});
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) return Status{ErrorCode::SystemError, "cannot start the pong process"};
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGTERM);  // never outlive the ping that started it
    if (getppid() != parent) _exit(1);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv("/proc/self/exe", argv.data());
    _exit(127);
  }
  return pid;
}

}  // namespace

PingRun run_ping(const measurement::PingOptions& options, bool flashback) {
  PingRun run;
  run.flashback = flashback;
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
      case ErrorCode::PayloadTooLarge: {
        // The library's message names no flag; the user typed --size.
        const std::string& m = report.message();
        const auto ceiling = m.rfind(" of ");
        throw Exit{kExitUsage, fmt::format("ping: --size {} is over the topic's ceiling{}", o.size,
                                           ceiling == std::string::npos ? ": " + m : m.substr(ceiling))};
      }
      case ErrorCode::Timeout:
        throw Exit{kExitFailure, o.peer ? "ping: no `cerulion pong` answered on " +
                                              measurement::request_topic(o.prefix) + " within the timeout"
                                        : "ping: the pong worker did not start"};
      default: check(report.status(), "ping");
    }
  }
  run.report = std::move(report).value();
  if (!run.report.responder_error.empty()) fmt::print(stderr, "cerulion: pong: {}\n", run.report.responder_error);
  return run;
}

}  // namespace cerulion::cli
