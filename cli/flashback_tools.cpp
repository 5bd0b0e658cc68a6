// SPDX-License-Identifier: Apache-2.0
// `cerulion flashback dump|status|stop`: work on a store whether or not its keeper still runs.

#include <csignal>
#include <thread>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "cerulion/core/options.hpp"
#include "cerulion/flashback/dump.hpp"
#include "cerulion/flashback/store.hpp"
#include "command.hpp"
#include "flashback_commands.hpp"
#include "message_format.hpp"

namespace cerulion::cli {
namespace {

flashback::Store open_store(const std::string& name) {
  auto store = flashback::Store::open(globals().domain, name);
  check_flashback(store.status());
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
  if (path.empty()) path = dump_directory(s.dir) + "/" + flashback::default_dump_file_name(globals().domain, s.name, realtime_ns());
  flashback::DumpOptions options;
  options.last_s = s.last_s;
  options.note = s.note;
  options.trigger = "request";
  options.details = "cerulion flashback dump";
  auto dumped = flashback::dump_to_file(store, path, options);
  check_flashback(dumped.status(), "cannot dump");
  fmt::print("{}\n", dumped->path);
  std::string left_out = dumped->chunks_left_out
                             ? fmt::format(", {} left out (evicted while copied, or damaged)", counted(dumped->chunks_left_out, "chunk"))
                             : "";
  fmt::print(stderr, "dumped {} on {}, {:.1f} s, {}{}\n", counted(dumped->messages, "message"),
             counted(dumped->topics.size(), "topic"),
             seconds(dumped->window_end_ns - dumped->window_start_ns), format_bytes(static_cast<double>(dumped->file_bytes)),
             left_out);
}

nlohmann::ordered_json status_json(const flashback::StoreStatus& st) {
  const std::uint64_t now = realtime_ns();
  nlohmann::ordered_json j;
  j["name"] = st.name;
  j["domain"] = st.domain;
  j["store"] = st.path;
  j["keeper_pid"] = st.keeper_pid ? nlohmann::ordered_json(st.keeper_pid) : nlohmann::ordered_json(nullptr);
  j["alive"] = st.alive;
  const bool up = st.alive && st.keeper_started_realtime_ns != 0;
  j["uptime_s"] = up ? nlohmann::ordered_json(seconds(now - st.keeper_started_realtime_ns)) : nlohmann::ordered_json(nullptr);
  j["window_s"] = st.window_end_ns > st.window_start_ns ? seconds(st.window_end_ns - st.window_start_ns) : 0.0;
  j["window_limit_s"] = st.window_limit_s;
  j["memory_bytes"] = st.memory_bytes;
  j["memory_limit_bytes"] = st.memory_limit_bytes;
  j["memory_usable_bytes"] = st.memory_usable_bytes;
  j["compression_ratio"] = st.compression_ratio;
  j["chunks"] = st.chunks;
  j["messages"] = st.messages;
  j["dumps"] = st.dumps;
  j["dumps_refused"] = st.dumps_refused;
  j["chunks_evicted"] = st.chunks_evicted;
  j["chunks_dropped"] = st.chunks_dropped;
  auto topics = nlohmann::ordered_json::array();
  for (const auto& t : st.topics) {
    topics.push_back({{"topic", t.topic}, {"messages", t.messages}, {"rate_hz", st.alive ? t.rate_hz : 0.0},
                      {"bytes", t.bytes}, {"lost", t.lost}});
  }
  j["topics"] = topics;
  return j;
}

void run_status(const std::string& name, bool json) {
  auto store = open_store(name);
  const auto st = store.status();
  auto j = status_json(st);
  if (json) {
    fmt::print("{}\n", j.dump());
    return;
  }
  fmt::print("keeper:  '{}' of domain '{}': {}\n", st.name, st.domain,
             st.keeper_pid == 0 ? std::string("never ran")
             : st.alive ? fmt::format("pid {}, alive, up {:.1f} s", st.keeper_pid, j["uptime_s"].is_null() ? 0.0
                                                                                                            : j["uptime_s"].get<double>())
                        : fmt::format("pid {}, not running", st.keeper_pid));
  fmt::print("store:   {}\n", st.path);
  fmt::print("window:  {:.1f} s covered (limit {:g} s)\n", j["window_s"].get<double>(), st.window_limit_s);
  fmt::print("memory:  {} of {}{}, compression {:.2f}x, {}, {}\n",
             format_bytes(static_cast<double>(st.memory_bytes)), format_bytes(static_cast<double>(st.memory_limit_bytes)),
             st.memory_usable_bytes < st.memory_limit_bytes
                 ? fmt::format(" (only {} usable: /dev/shm ran out)", format_bytes(static_cast<double>(st.memory_usable_bytes)))
                 : "",
             st.compression_ratio, counted(st.chunks, "chunk"), counted(st.messages, "message"));
  fmt::print("dumps:   {} made, {} refused\n", st.dumps, st.dumps_refused);
  if (st.topics.empty()) return;
  fmt::print("topics:\n");
  for (const auto& t : st.topics) {
    fmt::print("  {}: {}, {:.1f} Hz, {}, {} lost\n", t.topic, counted(t.messages, "message"), st.alive ? t.rate_hz : 0.0,
               format_bytes(static_cast<double>(t.bytes)), t.lost);
  }
}

void run_stop(const std::string& name, bool discard) {
  auto opened = flashback::Store::open(globals().domain, name);
  if (!opened && discard && opened.code() != ErrorCode::NotFound && opened.code() != ErrorCode::InvalidArgument) {
    // A damaged store has no keeper to stop; it can still be discarded.
    check_flashback(flashback::remove_store(globals().domain, name));
    fmt::print(stderr, "removed the damaged store of '{}' ({})\n", name, opened.message());
    return;
  }
  check_flashback(opened.status());
  auto& store = *opened;
  auto st = store.status();
  if (st.alive) {
    if (::kill(static_cast<pid_t>(st.keeper_pid), SIGTERM) != 0) {
      throw Exit{kExitFailure, fmt::format("cannot stop keeper pid {}: {}", st.keeper_pid, std::strerror(errno))};
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (store.status().alive) {
      if (std::chrono::steady_clock::now() > deadline) {
        throw Exit{kExitFailure, fmt::format("keeper pid {} did not stop within 10 s", st.keeper_pid)};
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    fmt::print(stderr, "stopped keeper '{}' (pid {})\n", name, st.keeper_pid);
  } else if (!discard) {
    throw Exit{kExitFailure, fmt::format("the keeper of '{}' is not running (its store stays: --discard removes it)", name)};
  }
  if (discard) {
    check_flashback(flashback::remove_store(globals().domain, name));
    fmt::print(stderr, "removed {}\n", st.path);
  }
}

}  // namespace

void add_flashback_dump(CLI::App& fb) {
  auto s = std::make_shared<DumpSettings>();
  auto* cmd = fb.add_subcommand("dump", "Write what the store holds to an MCAP file (prints its path)");
  cmd->footer(
      "Examples:\n"
      "  cerulion flashback dump\n"
      "  cerulion flashback dump -o now.mcap --last 5 --note 'arm hit the table'");
  cmd->add_option("-o,--output", s->output, "Output file (default flashback-<domain>-<UTC time>.mcap in --dir)");
  cmd->add_option("--dir", s->dir, "Directory of the default output (default $CERULION_FLASHBACK_DIR or .)");
  cmd->add_option("--last", s->last_s, "Only the last SEC seconds (whole chunks)")->check(positive_seconds());
  cmd->add_option("--note", s->note, "A note stored in the file's flashback metadata");
  cmd->add_option("--post", s->post_s, "Wait SEC seconds first, to include what comes after now (needs a live keeper)")
      ->check(non_negative_seconds());
  add_keeper_name_option(*cmd, s->name);
  cmd->callback([s] { run_dump(*s); });
}

void add_flashback_status(CLI::App& fb) {
  auto name = std::make_shared<std::string>("default");
  auto json = std::make_shared<bool>(false);
  auto* cmd = fb.add_subcommand("status", "Show the keeper, the window covered, memory and per-topic counts");
  cmd->footer(
      "Examples:\n"
      "  cerulion flashback status\n"
      "  cerulion flashback status --name cams --json");
  add_keeper_name_option(*cmd, *name);
  cmd->add_flag("--json", *json, "Print one JSON object (docs/json.md)");
  cmd->callback([name, json] { run_status(*name, *json); });
}

void add_flashback_stop(CLI::App& fb) {
  auto name = std::make_shared<std::string>("default");
  auto discard = std::make_shared<bool>(false);
  auto* cmd = fb.add_subcommand("stop", "Stop the keeper; its store stays for later dumps unless --discard");
  cmd->footer(
      "Examples:\n"
      "  cerulion flashback stop\n"
      "  cerulion flashback stop --discard");
  add_keeper_name_option(*cmd, *name);
  cmd->add_flag("--discard", *discard, "Also remove the store (its history is lost)");
  cmd->callback([name, discard] { run_stop(*name, *discard); });
}

}  // namespace cerulion::cli
