// SPDX-License-Identifier: Apache-2.0
#include "ping_flashback.hpp"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <thread>
#include <vector>

#include <fmt/core.h>

#include "cerulion/core/discovery.hpp"
#include "cerulion/measurement/resource_meter.hpp"
#include "cerulion/measurement/transport.hpp"

namespace cerulion::cli {

using measurement::process_cpu_ns;
using measurement::process_peak_rss;
using measurement::reply_topic;
using measurement::request_topic;

namespace {

constexpr std::string_view kStorePrefix = "ping-";

/// The ping's pid in a store name "ping-<pid>"; 0 when it is not one.
pid_t ping_of(const std::string& name) {
  if (name.rfind(kStorePrefix, 0) != 0 || name.size() == kStorePrefix.size()) return 0;
  const std::string digits = name.substr(kStorePrefix.size());
  if (digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 9) return 0;
  return static_cast<pid_t>(std::strtol(digits.c_str(), nullptr, 10));
}

bool tapped(const std::string& topic, const std::string& domain) {
  auto info = inspect_topic(topic, domain);
  if (!info) return false;
  return info->count(Role::Tap) > 0;
}

}  // namespace

Status PingKeeper::start(const std::string& domain, const std::string& prefix, double timeout_s) {
  domain_ = domain;
  name_ = fmt::format("{}{}", kStorePrefix, ::getpid());
  measurement::ChildOptions child;
  child.argv = {"cerulion", "--domain", domain,  "flashback", "start", request_topic(prefix), reply_topic(prefix),
                "--name", name_, "--memory", "256MiB", "--dir", std::filesystem::temp_directory_path().string()};
  child.program = measurement::kThisProgram;
  // In ping's own process group: whoever stops ping's group (bench) stops its keeper too.
  child.own_process_group = false;
  auto started = measurement::ChildProcess::start(child);
  if (!started) return {ErrorCode::SystemError, "cannot start the flashback keeper: " + started.message()};
  keeper_ = std::move(*started);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (!(tapped(request_topic(prefix), domain) && tapped(reply_topic(prefix), domain))) {
    if (!keeper_.running()) return {ErrorCode::SystemError, "the flashback keeper exited (see above)"};
    if (std::chrono::steady_clock::now() > deadline) {
      return {ErrorCode::SystemError, "the flashback keeper did not tap the ping topics in time"};
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return {};
}

PingKeeper::~PingKeeper() { stop_and_remove(); }

void PingKeeper::mark_start() { cpu_start_ = process_cpu_ns(keeper_.pid()); }

measurement::PingKeeperFigures PingKeeper::finish(std::uint64_t wall_ns) {
  measurement::PingKeeperFigures r;
  if (keeper_.running() && wall_ns > 0) {
    const std::uint64_t cpu = process_cpu_ns(keeper_.pid());
    if (cpu >= cpu_start_) r.cpu_pct = 100.0 * static_cast<double>(cpu - cpu_start_) / static_cast<double>(wall_ns);
    r.rss_bytes = process_peak_rss(keeper_.pid());
  }
  (void)keeper_.stop(std::chrono::seconds(5));
  if (auto store = flashback::Store::open(domain_, name_); store) {
    const auto status = store->status();
    for (const auto& t : status.topics) {
      r.messages += t.messages;
      r.lost += t.lost;
    }
    r.memory_bytes = status.memory_bytes;
    r.compression_ratio = status.compression_ratio;
  }
  stop_and_remove();
  return r;
}

void PingKeeper::stop_and_remove() {
  if (keeper_.pid() <= 0) return;
  (void)keeper_.stop(std::chrono::seconds(5));
  keeper_ = measurement::ChildProcess();
  (void)flashback::remove_store(domain_, name_);
}

bool is_orphaned_ping_store(const flashback::StoreEntry& store) {
  const pid_t ping = ping_of(store.name);
  if (ping <= 0 || store.alive) return false;
  return ::kill(ping, 0) != 0 && errno == ESRCH;
}

std::size_t remove_orphaned_ping_stores(const std::string& domain) {
  std::size_t removed = 0;
  for (const auto& store : flashback::list_stores(domain)) {
    if (is_orphaned_ping_store(store) && flashback::remove_store(store.domain, store.name).ok()) ++removed;
  }
  return removed;
}

}  // namespace cerulion::cli
