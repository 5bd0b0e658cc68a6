// SPDX-License-Identifier: Apache-2.0
#include "ping_flashback.hpp"

#include <chrono>
#include <csignal>
#include <filesystem>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include <fmt/core.h>

#include "cerulion/core/discovery.hpp"
#include "cerulion/flashback/store.hpp"
#include "cerulion/measurement/resource_meter.hpp"
#include "cerulion/measurement/transport.hpp"

namespace cerulion::cli {

using measurement::process_cpu_ns;
using measurement::process_peak_rss;
using measurement::reply_topic;
using measurement::request_topic;

namespace {
bool tapped(const std::string& topic, const std::string& domain) {
  auto info = inspect_topic(topic, domain);
  if (!info) return false;
  return info->count(Role::Tap) > 0;
}
}  // namespace

Status PingKeeper::start(const std::string& domain, const std::string& prefix, double timeout_s) {
  domain_ = domain;
  name_ = fmt::format("ping-{}", ::getpid());
  const std::string dir = std::filesystem::temp_directory_path().string();
  std::vector<std::string> args{"cerulion", "--domain", domain,  "flashback", "start",
                                request_topic(prefix), reply_topic(prefix), "--name", name_,
                                "--memory", "256MiB", "--dir", dir};
  const pid_t parent = ::getpid();
  pid_ = ::fork();
  if (pid_ < 0) return {ErrorCode::SystemError, "cannot start the flashback keeper"};
  if (pid_ == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);  // never outlive the ping that started it
    if (::getppid() != parent) ::_exit(1);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv("/proc/self/exe", argv.data());
    ::_exit(127);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (!(tapped(request_topic(prefix), domain) && tapped(reply_topic(prefix), domain))) {
    if (::waitpid(pid_, nullptr, WNOHANG) == pid_) {
      pid_ = -1;
      return {ErrorCode::SystemError, "the flashback keeper exited (see above)"};
    }
    if (std::chrono::steady_clock::now() > deadline) {
      stop();
      return {ErrorCode::SystemError, "the flashback keeper did not tap the ping topics in time"};
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return {};
}

PingKeeper::~PingKeeper() { stop(); }

void PingKeeper::mark_start() { cpu_start_ = process_cpu_ns(pid_); }

PingKeeperReport PingKeeper::finish(std::uint64_t wall_ns) {
  PingKeeperReport r;
  if (pid_ > 0 && wall_ns > 0) {
    const std::uint64_t cpu = process_cpu_ns(pid_);
    if (cpu >= cpu_start_) r.cpu_pct = 100.0 * static_cast<double>(cpu - cpu_start_) / static_cast<double>(wall_ns);
    r.rss_bytes = process_peak_rss(pid_);
  }
  stop();
  if (auto store = flashback::Store::open(domain_, name_); store) {
    const auto status = store->status();
    for (const auto& t : status.topics) {
      r.messages += t.messages;
      r.lost += t.lost;
    }
    r.memory_bytes = status.memory_bytes;
    r.compression_ratio = status.compression_ratio;
  }
  (void)flashback::remove_store(domain_, name_);
  return r;
}

void PingKeeper::stop() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGTERM);
  for (int i = 0; i < 1000; ++i) {
    if (::waitpid(pid_, nullptr, WNOHANG) == pid_) {
      pid_ = -1;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

}  // namespace cerulion::cli
