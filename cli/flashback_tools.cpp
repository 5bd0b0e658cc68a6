// SPDX-License-Identifier: Apache-2.0
// `cerulion flashback dump|stop`: work on a store whether or not its keeper still runs.

#include <filesystem>
#include <thread>

#include <fmt/core.h>

#include "cerulion/core/options.hpp"
#include "cerulion/flashback/dump.hpp"
#include "cerulion/flashback/store.hpp"
#include "command.hpp"
#include "flashback_commands.hpp"
#include "message_format.hpp"

namespace cerulion::cli {
namespace {

/// How long `stop` waits for the keeper's process to exit (it writes a dump waiting for its post
/// window first).
constexpr double kStopWait = 10;

flashback::Store open_store(const std::string& name) {
  auto store = flashback::Store::open(globals().domain, name);
  check(store.status());
  return std::move(*store);
}

double seconds(std::uint64_t ns) { return static_cast<double>(ns) / 1e9; }

struct DumpSettings {
  std::string output;
  std::string dir;
  std::string name = "default";
  std::string note;
  double last_s = 0;
  double post_s = 0;
};

/// Why a dump holds no message, so that an empty file is never taken for a quiet robot.
std::string empty_dump_reason(const flashback::StoreStatus& st, double last_s) {
  const std::string keeper = st.alive ? "its keeper" : "its last keeper";
  if (st.messages > 0 && last_s > 0) {
    return fmt::format("the dump holds no message: the store has {}, none in the last {:g} s", counted(st.messages, "message"), last_s);
  }
  if (st.topics.empty()) {
    return fmt::format("the dump holds no message: {} has kept no topic (none in domain '{}' matched what it takes)",
                       keeper, st.domain);
  }
  return fmt::format("the dump holds no message: {} keeps {} but none sent anything within the window", keeper,
                     counted(st.topics.size(), "topic"));
}

void run_dump(const DumpSettings& s) {
  auto store = open_store(s.name);
  if (s.post_s > 0) {
    if (store.status().alive) {
      install_stop_handlers();
      const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(s.post_s);
      while (!stop_requested() && std::chrono::steady_clock::now() < until) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    } else {
      fmt::print(stderr, "cerulion: --post: the keeper of '{}' is not running; dumping what the store holds\n", s.name);
    }
  }
  std::string path = s.output;
  if (path.empty()) {
    // The keeper's own directory unless told otherwise: its dumps and the ones asked for together.
    std::string dir = s.dir;
    if (dir.empty()) dir = store.status().keeper.dump_dir;
    if (dir.empty()) dir = dump_directory({});
    path = (std::filesystem::path(dir) / flashback::default_dump_file_name(globals().domain, s.name, realtime_ns())).string();
  }
  flashback::DumpOptions options;
  options.last_s = s.last_s;
  options.note = s.note;
  options.trigger = "request";
  options.details = "cerulion flashback dump";
  auto dumped = flashback::dump_to_file(store, path, options);
  check(dumped.status(), "cannot dump");
  fmt::print("{}\n", dumped->path);
  std::string left_out = dumped->chunks_left_out
                             ? fmt::format(", {} left out (evicted while copied, or damaged)", counted(dumped->chunks_left_out, "chunk"))
                             : "";
  fmt::print(stderr, "dumped {} on {}, {:.1f} s, {}{}\n", counted(dumped->messages, "message"),
             counted(dumped->topics.size(), "topic"),
             seconds(dumped->window_end_ns - dumped->window_start_ns), format_bytes(static_cast<double>(dumped->file_bytes)),
             left_out);
  for (const auto& line : dumped->skipped) fmt::print(stderr, "cerulion: warning: skipped (the store is damaged): {}\n", line);
  if (dumped->messages == 0) fmt::print(stderr, "cerulion: warning: {}\n", empty_dump_reason(store.status(), s.last_s));
}

void run_stop(const std::string& name, bool discard) {
  auto opened = flashback::Store::open(globals().domain, name);
  if (!opened && discard && opened.code() != ErrorCode::NotFound && opened.code() != ErrorCode::InvalidArgument) {
    // A damaged store has no keeper to stop; it can still be discarded.
    check(flashback::remove_store(globals().domain, name));
    fmt::print(stderr, "removed the damaged store of '{}' ({})\n", name, opened.message());
    return;
  }
  check(opened.status());
  const std::string path = opened->path();
  // Returns once the keeper's process is gone, so that a keeper started next finds its store free.
  auto stopped = flashback::stop_keeper(globals().domain, name, kStopWait);
  check(stopped.status());
  if (*stopped != 0) {
    fmt::print(stderr, "stopped keeper '{}' (pid {})\n", name, *stopped);
  } else if (!discard) {
    throw Exit{kExitFailure, fmt::format("the keeper of '{}' is not running (its store stays: --discard removes it)", name)};
  }
  if (discard) {
    check(flashback::remove_store(globals().domain, name));
    fmt::print(stderr, "removed {}\n", path);
  }
}

}  // namespace

void add_flashback_dump(CLI::App& fb) {
  auto s = std::make_shared<DumpSettings>();
  auto* cmd = fb.add_subcommand("dump", "Write what the store holds to an MCAP file (prints its path)");
  cmd->footer(
      "Without -o the file goes into --dir, else the keeper's own dump directory.\n"
      "Examples:\n"
      "  cerulion flashback dump\n"
      "  cerulion flashback dump -o now.mcap --last 5 --note 'arm hit the table'");
  cmd->add_option("-o,--output", s->output, "Output file (default flashback-<domain>-<name>-<UTC time>.mcap in --dir)");
  cmd->add_option("--dir", s->dir,
                  "Directory of the default output (default the keeper's own, else $CERULION_FLASHBACK_DIR or .)");
  cmd->add_option("--last", s->last_s, "Only the last SEC seconds (whole chunks); 500ms, 2m... too")
      ->transform(positive_duration());
  cmd->add_option("--note", s->note, "A note stored in the file's flashback metadata");
  cmd->add_option("--post", s->post_s, "Wait SEC seconds first, to include what comes after now (needs a live keeper)")
      ->transform(non_negative_duration());
  add_keeper_name_option(*cmd, s->name);
  cmd->callback([s] { run_dump(*s); });
}

void add_flashback_stop(CLI::App& fb) {
  auto name = std::make_shared<std::string>("default");
  auto discard = std::make_shared<bool>(false);
  auto* cmd = fb.add_subcommand("stop", "Stop the keeper and wait for it to exit; its store stays for later dumps unless --discard");
  cmd->footer(
      "Examples:\n"
      "  cerulion flashback stop\n"
      "  cerulion flashback stop --discard");
  add_keeper_name_option(*cmd, *name);
  cmd->add_flag("--discard", *discard, "Also remove the store (its history is lost)");
  cmd->callback([name, discard] { run_stop(*name, *discard); });
}

}  // namespace cerulion::cli
