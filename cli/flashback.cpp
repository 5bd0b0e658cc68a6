// SPDX-License-Identifier: Apache-2.0
// `cerulion flashback start [TOPIC...]`: runs the keeper in the foreground, one line per dump on
// stderr; SIGUSR1 asks it for a dump, SIGINT/SIGTERM stop it (its store stays, for later dumps).

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <unistd.h>

#include <fmt/core.h>

#include "cerulion/flashback/keeper.hpp"
#include "command.hpp"
#include "flashback_commands.hpp"
#include "message_format.hpp"
#include "supervise.hpp"
#include "topic_options.hpp"

namespace cerulion::cli {
namespace {

std::atomic<int> g_dump_requests{0};
extern "C" void on_dump_signal(int) { g_dump_requests.fetch_add(1); }

struct StartSettings {
  flashback::KeeperOptions keeper;
  std::uint64_t memory = 512ull << 20;
  std::string dir;
  std::string priority;  // "" = idle, unless lockstep
};

// A keeper that compresses only on CPU time nobody else wants cannot slow the processes it watches
// (its taps and dumps are cheap and keep normal priority); a lockstep keeper holds publishers back,
// so it compresses at their priority instead.
bool idle_priority(const std::string& priority, bool lockstep) {
  return priority == "idle" || (priority.empty() && !lockstep);
}

void run_start(StartSettings& s) {
  auto& k = s.keeper;
  require_topic_selection(k.selection, "flashback start");
  check_topic_patterns(k.selection);
  k.domain = globals().domain;
  k.limits.memory_bytes = s.memory;
  k.dump_dir = dump_directory(s.dir);
  std::error_code ec;
  if (!std::filesystem::is_directory(k.dump_dir, ec) || ::access(k.dump_dir.c_str(), W_OK) != 0) {
    throw Exit{kExitFailure, fmt::format("dump directory '{}' is not a writable directory", k.dump_dir)};
  }
  k.dumps_on_signal = true;
  k.idle_priority = idle_priority(s.priority, k.lockstep);
  install_stop_handlers();
  struct sigaction sa {};
  sa.sa_handler = on_dump_signal;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGUSR1, &sa, nullptr);

  recording::EventQueue events;
  k.events = &events;
  auto keeper = flashback::Keeper::start(k);
  check(keeper.status());
  const auto status = keeper->status();
  say(fmt::format("flashback: keeper '{}' (pid {}) keeping the last {:g} s in {} ({} limit){}; dumps go to {}", k.name,
                  ::getpid(), k.limits.window_s, status.path, format_bytes(static_cast<double>(status.memory_limit_bytes)),
                  keeper->store().taken_over() ? ", history of the previous keeper kept" : "", status.keeper.dump_dir));
  Supervision supervision;
  supervision.events = &events;
  supervision.each_turn = [&] {
    for (int n = g_dump_requests.exchange(0); n > 0; --n) keeper->trigger("signal", "SIGUSR1");
  };
  supervision.failed = [&] { return keeper->error(); };
  const Supervised run = supervise(supervision);
  // A dump asked for meanwhile is written as the keeper stops, and said.
  keeper->stop();
  say_events(events);
  if (run.ended == Ended::Failed) check(run.error, "the keeper stopped storing");
  throw Exit{finished_exit_code(), {}};
}

}  // namespace

void add_flashback_command(CLI::App& app) {
  auto* fb = app.add_subcommand("flashback", "Keep the last seconds of every topic in memory; dump them on demand or on failure");
  fb->require_subcommand(1);
  fb->footer(
      "The keeper taps topics (never holding a publisher back) and keeps their recent traffic zstd-compressed\n"
      "in a shared-memory store, which outlives it: `flashback dump` works while it runs, after it was killed,\n"
      "and after the publishers died. Dumps are MCAP files like `record` makes.\n"
      "Examples:\n"
      "  cerulion flashback start -a --on-death --dir /var/log/robot &\n"
      "  cerulion flashback dump -o now.mcap --note 'arm hit the table'\n"
      "  cerulion flashback status\n"
      "  cerulion flashback stop --discard");
  add_flashback_start(*fb);
  add_flashback_dump(*fb);
  add_flashback_status(*fb);
  add_flashback_stop(*fb);
}

CLI::Option* add_keeper_name_option(CLI::App& cmd, std::string& name) {
  return cmd.add_option("--name", name, "Keeper (and store) name (default: default)")
      ->check([](const std::string& v) {
        auto st = flashback::validate_keeper_name(v);
        return st.ok() ? std::string() : st.message();
      });
}

std::string dump_directory(const std::string& dir) {
  if (!dir.empty()) return dir;
  if (const char* env = std::getenv("CERULION_FLASHBACK_DIR"); env && *env) return env;
  return ".";
}

void add_flashback_start(CLI::App& fb) {
  auto s = std::make_shared<StartSettings>();
  auto* cmd = fb.add_subcommand("start", "Run the keeper in the foreground (one line per dump on stderr)");
  cmd->footer(
      "Triggers dump by themselves into --dir: SIGUSR1, a message on --trigger-topic (its text is the note),\n"
      "--on-death (a process that published on a kept topic died), --on-stall SEC (a steady topic went\n"
      "silent). --post SEC includes that many seconds after the trigger; triggers meanwhile join the dump.\n"
      "--max-dumps per hour and --max-disk for the dumps in --dir keep a crash loop from filling the disk.\n"
      "Examples:\n"
      "  cerulion flashback start -a --on-death --window 30s &\n"
      "  cerulion flashback start -e '^/camera/' --window 10s --memory 1GiB --name cams --trigger-topic /flashback/trigger");
  auto& k = s->keeper;
  cmd->add_option("topics", k.selection.topics, "Topics to keep");
  cmd->add_flag("-a,--all", k.selection.all, "Keep every topic of the domain, including topics that appear later");
  add_topic_pattern_options(*cmd, k.selection, "Keep");
  cmd->add_option("--window", k.limits.window_s, "History to keep: seconds, or 500ms, 2m... (default 30)")
      ->transform(positive_duration());
  cmd->add_option("--memory", s->memory, "Shared memory for the history (default 512MiB)")->transform(size_validator());
  add_keeper_name_option(*cmd, k.name);
  cmd->add_option("--dir", s->dir, "Where dumps go (default $CERULION_FLASHBACK_DIR or the current directory)");
  cmd->add_option("--post", k.post_s, "Seconds after a trigger to include before dumping (default 0)")
      ->transform(non_negative_duration());
  cmd->add_flag("--on-death", k.on_death, "Dump when a process that published on a kept topic dies");
  cmd->add_option("--on-stall", k.on_stall_s, "Dump when a steady topic is silent for SEC seconds")
      ->transform(positive_duration());
  cmd->add_option("--trigger-topic", k.trigger_topic,
                  "Dump on every message published on this topic (its text is the note; the topic is kept too)");
  cmd->add_option("--max-dumps", k.max_dumps_per_hour, "Automatic dumps allowed per hour (default 20)")->check(count_in(0, 1000000));
  cmd->add_option("--max-disk", k.max_disk_bytes, "Refuse automatic dumps once those in --dir take this much (default 2GiB)")
      ->transform(size_validator());
  cmd->add_flag("--lockstep", k.lockstep,
                "Join as a lockstep subscriber: publishers wait for the keeper instead of it missing messages");
  cmd->add_option("--priority", s->priority,
                  "idle: compress only on CPU time nobody else wants (taps and dumps keep normal priority; default, "
                  "normal with --lockstep); normal")
      ->check(CLI::IsMember({"idle", "normal"}));
  cmd->callback([s] {
    if (s->memory < (2u << 20)) throw Exit{kExitUsage, "--memory must be at least 2MiB"};
    run_start(*s);
  });
}

}  // namespace cerulion::cli
