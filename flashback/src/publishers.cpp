// SPDX-License-Identifier: Apache-2.0
// A store's topics as the domain lists them now: who publishes, and who died publishing (what
// --on-death dumps on and what status shows): still listed dead, or evicted and in the death log.

#include <algorithm>
#include <map>

#include "cerulion/core/discovery.hpp"
#include "cerulion/flashback/store.hpp"

namespace cerulion::flashback {

std::vector<TopicPublishers> publishers_of(std::string_view domain, const std::vector<TopicStatus>& topics) {
  std::vector<TopicPublishers> out;
  out.reserve(topics.size());
  std::map<std::string, std::size_t> at;
  for (const auto& t : topics) {
    at[t.topic] = out.size();
    TopicPublishers entry;
    entry.topic = t.topic;
    out.push_back(std::move(entry));
  }
  auto listing = list_topics(domain);
  if (!listing) return out;
  for (const auto& topic : listing->topics) {
    auto it = at.find(topic.name);
    if (it == at.end()) continue;
    auto& entry = out[it->second];
    entry.listed = true;
    // A publisher that left cleanly is gone from its topic's table; one that died is still
    // listed, not alive, until another participant evicts it.
    for (const auto& p : topic.participants) {
      if (p.role != Role::Publisher) continue;
      (p.alive ? entry.alive : entry.dead).push_back(p.pid);
    }
    for (const auto& d : topic.deaths) {
      if (d.role == Role::Publisher) entry.died.push_back(d);
    }
  }
  return out;
}

std::vector<std::uint32_t> dead_pids(const TopicPublishers& p) {
  std::vector<std::uint32_t> out;
  for (const auto& d : p.died) out.push_back(d.pid);
  for (auto pid : p.dead) out.push_back(pid);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace cerulion::flashback
