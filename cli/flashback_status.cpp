// SPDX-License-Identifier: Apache-2.0
// `cerulion flashback status`: the keeper (running, stopped or dead), where its dumps go and what
// triggers them, the window held and why it is short, memory, dumps, and per topic what the store
// took and whether its publishers live.

#include <fmt/core.h>

#include "cerulion/core/options.hpp"
#include "cerulion/flashback/status_json.hpp"
#include "cerulion/flashback/store.hpp"
#include "command.hpp"
#include "flashback_commands.hpp"
#include "record_util.hpp"

namespace cerulion::cli {
namespace {

double status_seconds(std::uint64_t ns) { return static_cast<double>(ns) / 1e9; }

std::string keeper_text(const flashback::StoreStatus& st, std::uint64_t now) {
  if (st.keeper_pid == 0) return "never ran";
  if (st.alive) return fmt::format("pid {}, alive, up {:.1f} s", st.keeper_pid, status_seconds(now - st.keeper_started_realtime_ns));
  if (st.keeper_stopped_realtime_ns != 0) {
    return fmt::format("pid {}, not running: stopped cleanly at {}", st.keeper_pid, format_time_ns(st.keeper_stopped_realtime_ns));
  }
  return fmt::format("pid {}, not running: it died (killed or crashed)", st.keeper_pid);
}

std::string triggers_text(const flashback::KeeperSettings& k) {
  std::vector<std::string> armed;
  if (k.on_signal) armed.emplace_back("SIGUSR1");
  if (!k.trigger_topic.empty()) armed.push_back("a message on " + k.trigger_topic);
  if (k.on_death) armed.emplace_back("a publisher's death");
  if (k.on_stall_s > 0) armed.push_back(fmt::format("a topic silent {:g} s", k.on_stall_s));
  std::string text;
  for (const auto& a : armed) text += (text.empty() ? "" : ", ") + a;
  if (text.empty()) text = "none (dumps only when asked)";
  if (k.post_s > 0) text += fmt::format("; {:g} s after the trigger included", k.post_s);
  return text + fmt::format("; at most {} an hour and {} of dumps in its directory",
                            counted(k.max_dumps_per_hour, "dump"), format_bytes(static_cast<double>(k.max_disk_bytes)));
}

std::string window_text(const flashback::StoreStatus& st) {
  const double covered = st.window_end_ns > st.window_start_ns ? status_seconds(st.window_end_ns - st.window_start_ns) : 0.0;
  switch (st.window_cut) {
    case flashback::WindowCut::Memory:
      return fmt::format("{:.1f} s of {:g} s asked: memory limit {} reached", covered, st.window_limit_s,
                         format_bytes(static_cast<double>(std::min(st.memory_usable_bytes, st.memory_limit_bytes))));
    case flashback::WindowCut::ChunkSlots:
      return fmt::format("{:.1f} s of {:g} s asked: the table of chunks is full (many small chunks)", covered,
                         st.window_limit_s);
    case flashback::WindowCut::None: break;
  }
  return fmt::format("{:.1f} s covered of {:g} s asked", covered, st.window_limit_s);
}

std::string memory_text(const flashback::StoreStatus& st) {
  std::string room;
  if (st.memory_usable_bytes < st.memory_limit_bytes) {
    room = fmt::format(" (only {} usable: /dev/shm ran out)", format_bytes(static_cast<double>(st.memory_usable_bytes)));
  } else if (st.memory_usable_bytes - std::min(st.memory_usable_bytes, st.memory_committed_bytes) > st.shm_free_bytes) {
    room = fmt::format(" (/dev/shm has {} free: it cannot grow to the limit)", format_bytes(static_cast<double>(st.shm_free_bytes)));
  }
  const std::string staged =
      st.staged_bytes > 0 ? fmt::format(", {} staged for compression", format_bytes(static_cast<double>(st.staged_bytes))) : "";
  return fmt::format("{} of {}{}, compression {:.2f}x, {}, {}{}", format_bytes(static_cast<double>(st.memory_bytes)),
                     format_bytes(static_cast<double>(st.memory_limit_bytes)), room, st.compression_ratio,
                     counted(st.chunks, "chunk"), counted(st.messages, "message"), staged);
}

std::string dumps_text(const flashback::StoreStatus& st) {
  std::string text = fmt::format("{} made, {} refused", counted(st.dumps, "dump"), st.dumps_refused);
  if (st.last_dump) {
    const auto& d = *st.last_dump;
    text += fmt::format("; last at {} ({}, {}): {}", format_time_ns(d.realtime_ns), d.trigger, counted(d.messages, "message"), d.path);
  }
  return text;
}

std::string publishers_text(const flashback::TopicPublishers& p) {
  if (!p.listed) return "; gone from the domain";
  std::string text;
  const auto dead = flashback::dead_pids(p);
  for (auto pid : dead) text += fmt::format("; publisher {} died", pid);
  if (p.alive.empty() && dead.empty()) text += "; no publisher";
  return text;
}

void run_status(const std::string& name, bool json) {
  const std::string& domain = globals().domain;
  auto store = flashback::Store::open(domain, name);
  if (!store) {
    // Nothing to show is still an object for a program (every figure null), and a failure.
    if (json && store.code() == ErrorCode::NotFound) fmt::print("{}\n", flashback::to_json(name, domain, nullptr, {}, realtime_ns()));
    check(store.status());
  }
  const auto st = store->status();
  const auto publishers = flashback::publishers_of(st.domain, st.topics);
  if (json) {
    fmt::print("{}\n", flashback::to_json(name, domain, &st, publishers, realtime_ns()));
    return;
  }
  const std::uint64_t now = realtime_ns();
  fmt::print("keeper:   '{}' of domain '{}': {}\n", st.name, st.domain, keeper_text(st, now));
  fmt::print("store:    {}\n", st.path);
  if (!st.keeper.dump_dir.empty()) {
    fmt::print("dumps to: {}\n", st.keeper.dump_dir);
    fmt::print("triggers: {}\n", triggers_text(st.keeper));
  }
  fmt::print("window:   {}\n", window_text(st));
  fmt::print("memory:   {}\n", memory_text(st));
  fmt::print("dumps:    {}\n", dumps_text(st));
  if (st.damaged_chunks > 0 || st.damaged_messages > 0) {
    fmt::print("damage:   {} and {} found failing their CRC since the store was made, left out of dumps\n",
               counted(st.damaged_chunks, "chunk"), counted(st.damaged_messages, "message"));
  }
  if (st.topics.empty()) return;
  fmt::print("topics:\n");
  for (std::size_t i = 0; i < st.topics.size(); ++i) {
    const auto& t = st.topics[i];
    fmt::print("  {}: {}, {:.1f} Hz, {}, {} lost{}\n", t.topic, counted(t.messages, "message"), st.alive ? t.rate_hz : 0.0,
               format_bytes(static_cast<double>(t.bytes)), t.lost, publishers_text(publishers[i]));
  }
}

}  // namespace

void add_flashback_status(CLI::App& fb) {
  auto name = std::make_shared<std::string>("default");
  auto json = std::make_shared<bool>(false);
  auto* cmd = fb.add_subcommand("status", "Show the keeper, where dumps go and what triggers them, the window, memory, dumps and topics");
  cmd->footer(
      "Exits 1 when no store of that name exists (with --json, after an object whose figures are null).\n"
      "Examples:\n"
      "  cerulion flashback status\n"
      "  cerulion flashback status --name cams --json");
  add_keeper_name_option(*cmd, *name);
  cmd->add_flag("--json", *json, "Print one JSON object (docs/json.md)");
  cmd->callback([name, json] { run_status(*name, *json); });
}

}  // namespace cerulion::cli
