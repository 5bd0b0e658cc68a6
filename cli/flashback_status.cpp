// SPDX-License-Identifier: Apache-2.0
// `cerulion flashback status`: the keeper (running, stopped or dead), where its dumps go and what
// triggers them, the window held and why it is short, memory, dumps, and per topic what the store
// took and whether its publishers live.

#include <algorithm>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "cerulion/core/options.hpp"
#include "cerulion/flashback/store.hpp"
#include "command.hpp"
#include "flashback_commands.hpp"
#include "record_util.hpp"

namespace cerulion::cli {
namespace {

using Json = nlohmann::ordered_json;

double status_seconds(std::uint64_t ns) { return static_cast<double>(ns) / 1e9; }

Json or_null(bool known, Json value) { return known ? std::move(value) : Json(nullptr); }

Json pids(const std::vector<std::uint32_t>& list) {
  Json out = Json::array();
  for (auto pid : list) out.push_back(pid);
  return out;
}

// Those that died publishing: still listed, or evicted since (by any reader, a dump's catch-up
// among them) and in the topic's death log.
std::vector<std::uint32_t> dead_publishers(const flashback::TopicPublishers& p) {
  std::vector<std::uint32_t> out;
  for (const auto& d : p.died) out.push_back(d.pid);
  for (auto pid : p.dead) out.push_back(pid);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

const char* cut_name(flashback::WindowCut cut) {
  switch (cut) {
    case flashback::WindowCut::Memory: return "memory";
    case flashback::WindowCut::ChunkSlots: return "chunk_slots";
    case flashback::WindowCut::None: break;
  }
  return nullptr;
}

/// The status object; with no store (nothing runs there) every figure is null and lists are empty
/// (docs/json.md, rule 8).
Json status_json(const std::string& name, const std::string& domain, const flashback::StoreStatus* st,
                 const std::vector<flashback::TopicPublishers>& publishers) {
  const std::uint64_t now = realtime_ns();
  const bool have = st != nullptr;
  Json j;
  j["name"] = name;
  j["domain"] = domain;
  j["store"] = or_null(have, have ? st->path : "");
  j["keeper_pid"] = or_null(have && st->keeper_pid != 0, have ? st->keeper_pid : 0);
  j["alive"] = have && st->alive;
  const bool up = have && st->alive && st->keeper_started_realtime_ns != 0;
  j["uptime_s"] = or_null(up, up ? status_seconds(now - st->keeper_started_realtime_ns) : 0.0);
  j["keeper_stopped_realtime_ns"] =
      or_null(have && st->keeper_stopped_realtime_ns != 0, have ? st->keeper_stopped_realtime_ns : 0);
  const bool said = have && !st->keeper.dump_dir.empty();
  j["dump_dir"] = or_null(said, said ? st->keeper.dump_dir : "");
  if (said) {
    const auto& k = st->keeper;
    j["triggers"] = {{"signal", k.on_signal},
                     {"topic", or_null(!k.trigger_topic.empty(), k.trigger_topic)},
                     {"death", k.on_death},
                     {"stall_s", or_null(k.on_stall_s > 0, k.on_stall_s)},
                     {"post_s", k.post_s},
                     {"max_dumps_per_hour", k.max_dumps_per_hour},
                     {"max_disk_bytes", k.max_disk_bytes}};
  } else {
    j["triggers"] = nullptr;
  }
  j["window_s"] = or_null(have, have && st->window_end_ns > st->window_start_ns
                                    ? status_seconds(st->window_end_ns - st->window_start_ns)
                                    : 0.0);
  j["window_limit_s"] = or_null(have, have ? st->window_limit_s : 0.0);
  const char* cut = have ? cut_name(st->window_cut) : nullptr;
  j["window_cut"] = or_null(cut != nullptr, cut ? cut : "");
  j["memory_bytes"] = or_null(have, have ? st->memory_bytes : 0);
  j["memory_limit_bytes"] = or_null(have, have ? st->memory_limit_bytes : 0);
  j["memory_usable_bytes"] = or_null(have, have ? st->memory_usable_bytes : 0);
  j["memory_committed_bytes"] = or_null(have, have ? st->memory_committed_bytes : 0);
  j["shm_free_bytes"] = or_null(have, have ? st->shm_free_bytes : 0);
  j["compression_ratio"] = or_null(have, have ? st->compression_ratio : 0.0);
  j["chunks"] = or_null(have, have ? st->chunks : 0);
  j["messages"] = or_null(have, have ? st->messages : 0);
  j["dumps"] = or_null(have, have ? st->dumps : 0);
  j["dumps_refused"] = or_null(have, have ? st->dumps_refused : 0);
  if (have && st->last_dump) {
    const auto& d = *st->last_dump;
    j["last_dump"] = {{"path", d.path}, {"trigger", d.trigger}, {"written_realtime_ns", d.realtime_ns}, {"messages", d.messages}};
  } else {
    j["last_dump"] = nullptr;
  }
  j["chunks_evicted"] = or_null(have, have ? st->chunks_evicted : 0);
  j["chunks_dropped"] = or_null(have, have ? st->chunks_dropped : 0);
  j["chunks_stored_raw"] = or_null(have, have ? st->chunks_stored_raw : 0);
  j["messages_dropped"] = or_null(have, have ? st->messages_dropped : 0);
  j["damaged_chunks"] = or_null(have, have ? st->damaged_chunks : 0);
  j["damaged_messages"] = or_null(have, have ? st->damaged_messages : 0);
  Json topics = Json::array();
  for (std::size_t i = 0; have && i < st->topics.size(); ++i) {
    const auto& t = st->topics[i];
    const auto& p = publishers[i];
    topics.push_back({{"topic", t.topic},
                      {"messages", t.messages},
                      {"rate_hz", st->alive ? t.rate_hz : 0.0},
                      {"bytes", t.bytes},
                      {"lost", t.lost},
                      {"last_realtime_ns", or_null(t.last_realtime_ns != 0, t.last_realtime_ns)},
                      {"in_domain", p.listed},
                      {"publishers", pids(p.alive)},
                      {"dead_publishers", pids(dead_publishers(p))}});
  }
  j["topics"] = topics;
  return j;
}

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
  return fmt::format("{} of {}{}, compression {:.2f}x, {}, {}", format_bytes(static_cast<double>(st.memory_bytes)),
                     format_bytes(static_cast<double>(st.memory_limit_bytes)), room, st.compression_ratio,
                     counted(st.chunks, "chunk"), counted(st.messages, "message"));
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
  const auto dead = dead_publishers(p);
  for (auto pid : dead) text += fmt::format("; publisher {} died", pid);
  if (p.alive.empty() && dead.empty()) text += "; no publisher";
  return text;
}

void run_status(const std::string& name, bool json) {
  const std::string& domain = globals().domain;
  auto store = flashback::Store::open(domain, name);
  if (!store) {
    // Nothing to show is still an object for a program (every figure null), and a failure.
    if (json && store.code() == ErrorCode::NotFound) fmt::print("{}\n", status_json(name, domain, nullptr, {}).dump());
    check(store.status());
  }
  const auto st = store->status();
  const auto publishers = flashback::publishers_of(st.domain, st.topics);
  if (json) {
    fmt::print("{}\n", status_json(name, domain, &st, publishers).dump());
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
