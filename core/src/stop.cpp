// SPDX-License-Identifier: Apache-2.0
#include "cerulion/core/stop.hpp"

#include <csignal>
#include <mutex>

namespace cerulion {
namespace {

std::atomic<bool> g_stop{false};
std::atomic<int> g_signal{0};

extern "C" void on_stop_signal(int sig) {
  g_signal.store(sig);
  g_stop.store(true);
}

}  // namespace

const std::atomic<bool>* stop_on_signals() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction sa {};
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;  // no SA_RESTART: a futex wait returns EINTR and notices the flag at once
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
    sigaction(SIGHUP, &sa, nullptr);
  });
  return &g_stop;
}

const std::atomic<bool>* stop_flag() noexcept { return &g_stop; }
bool stop_requested() noexcept { return g_stop.load(std::memory_order_relaxed); }
int stop_signal() noexcept { return g_signal.load(); }

}  // namespace cerulion
