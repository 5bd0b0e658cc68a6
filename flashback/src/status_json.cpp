// SPDX-License-Identifier: Apache-2.0
#include "cerulion/flashback/status_json.hpp"

#include <nlohmann/json.hpp>

namespace cerulion::flashback {
namespace {

using Json = nlohmann::ordered_json;

double seconds(std::uint64_t ns) { return static_cast<double>(ns) / 1e9; }

Json or_null(bool known, Json value) { return known ? std::move(value) : Json(nullptr); }

Json pids(const std::vector<std::uint32_t>& list) {
  Json out = Json::array();
  for (auto pid : list) out.push_back(pid);
  return out;
}

const char* cut_name(WindowCut cut) {
  switch (cut) {
    case WindowCut::Memory: return "memory";
    case WindowCut::ChunkSlots: return "chunk_slots";
    case WindowCut::None: break;
  }
  return nullptr;
}

Json triggers(const KeeperSettings& k) {
  return {{"signal", k.on_signal},
          {"topic", or_null(!k.trigger_topic.empty(), k.trigger_topic)},
          {"death", k.on_death},
          {"stall_s", or_null(k.on_stall_s > 0, k.on_stall_s)},
          {"post_s", k.post_s},
          {"max_dumps_per_hour", k.max_dumps_per_hour},
          {"max_disk_bytes", k.max_disk_bytes}};
}

Json topics(const StoreStatus& st, const std::vector<TopicPublishers>& publishers) {
  Json out = Json::array();
  for (std::size_t i = 0; i < st.topics.size(); ++i) {
    const auto& t = st.topics[i];
    const TopicPublishers none{};
    const auto& p = i < publishers.size() ? publishers[i] : none;
    out.push_back({{"topic", t.topic},
                   {"messages", t.messages},
                   {"rate_hz", st.alive ? t.rate_hz : 0.0},
                   {"bytes", t.bytes},
                   {"lost", t.lost},
                   {"last_realtime_ns", or_null(t.last_realtime_ns != 0, t.last_realtime_ns)},
                   {"in_domain", p.listed},
                   {"publishers", pids(p.alive)},
                   {"dead_publishers", pids(dead_pids(p))}});
  }
  return out;
}

}  // namespace

std::string to_json(std::string_view name, std::string_view domain, const StoreStatus* status,
                    const std::vector<TopicPublishers>& publishers, std::uint64_t now_realtime_ns) {
  const StoreStatus none{};
  const StoreStatus& st = status ? *status : none;
  Json j;
  j["name"] = name;
  j["domain"] = domain;
  j["store"] = st.path;
  j["keeper_pid"] = or_null(st.keeper_pid != 0, st.keeper_pid);
  j["alive"] = st.alive;
  const bool up = st.alive && st.keeper_started_realtime_ns != 0 && now_realtime_ns >= st.keeper_started_realtime_ns;
  j["uptime_s"] = or_null(up, up ? seconds(now_realtime_ns - st.keeper_started_realtime_ns) : 0.0);
  j["keeper_stopped_realtime_ns"] = or_null(st.keeper_stopped_realtime_ns != 0, st.keeper_stopped_realtime_ns);
  const bool said = !st.keeper.dump_dir.empty();
  j["dump_dir"] = or_null(said, st.keeper.dump_dir);
  j["triggers"] = said ? triggers(st.keeper) : Json(nullptr);
  j["window_s"] = st.window_end_ns > st.window_start_ns ? seconds(st.window_end_ns - st.window_start_ns) : 0.0;
  j["window_limit_s"] = st.window_limit_s;
  const char* cut = cut_name(st.window_cut);
  j["window_cut"] = cut ? Json(cut) : Json(nullptr);
  j["memory_bytes"] = st.memory_bytes;
  j["staged_bytes"] = st.staged_bytes;
  j["memory_limit_bytes"] = st.memory_limit_bytes;
  j["memory_usable_bytes"] = st.memory_usable_bytes;
  j["memory_committed_bytes"] = st.memory_committed_bytes;
  j["shm_free_bytes"] = st.shm_free_bytes;
  j["compression_ratio"] = st.compression_ratio;
  j["chunks"] = st.chunks;
  j["messages"] = st.messages;
  j["dumps"] = st.dumps;
  j["dumps_refused"] = st.dumps_refused;
  if (st.last_dump) {
    const auto& d = *st.last_dump;
    j["last_dump"] = {{"path", d.path}, {"trigger", d.trigger}, {"written_realtime_ns", d.realtime_ns}, {"messages", d.messages}};
  } else {
    j["last_dump"] = nullptr;
  }
  j["chunks_evicted"] = st.chunks_evicted;
  j["chunks_dropped"] = st.chunks_dropped;
  j["chunks_stored_raw"] = st.chunks_stored_raw;
  j["messages_dropped"] = st.messages_dropped;
  j["damaged_chunks"] = st.damaged_chunks;
  j["damaged_messages"] = st.damaged_messages;
  j["topics"] = topics(st, publishers);
  if (!status) {
    // No store: the same keys, every figure null.
    for (auto& [key, value] : j.items()) {
      if (key != "name" && key != "domain" && key != "alive" && key != "topics") value = nullptr;
    }
  }
  return j.dump();
}

}  // namespace cerulion::flashback
