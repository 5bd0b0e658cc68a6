// SPDX-License-Identifier: Apache-2.0
#include "loop_guard.hpp"

#include <algorithm>
#include <unistd.h>

namespace cerulion::bridge::detail {

void LoopGuard::Entry::remember(std::uint64_t sequence) {
  published.push_back(sequence);
  if (published.size() > kRemembered) published.pop_front();
}

LoopGuard::Entry& LoopGuard::entry(const std::string& topic) {
  std::lock_guard lock(mutex_);
  auto& slot = entries_[topic];
  if (!slot) slot = std::make_unique<Entry>();
  return *slot;
}

bool LoopGuard::imported(const std::string& topic, std::uint32_t publisher_pid, std::uint64_t sequence) {
  if (publisher_pid != static_cast<std::uint32_t>(::getpid())) return false;
  Entry* e = nullptr;
  {
    std::lock_guard lock(mutex_);
    auto it = entries_.find(topic);
    if (it == entries_.end()) return false;
    e = it->second.get();
  }
  std::lock_guard lock(e->mutex);
  return std::binary_search(e->published.begin(), e->published.end(), sequence);
}

}  // namespace cerulion::bridge::detail
