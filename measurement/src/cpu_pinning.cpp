// SPDX-License-Identifier: Apache-2.0
#include "cerulion/measurement/cpu_pinning.hpp"

#include <algorithm>
#include <charconv>
#include <pthread.h>
#include <sched.h>

namespace cerulion::measurement {
namespace {

std::optional<int> parse_cpu(const std::string& text) {
  int value = -1;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 0) return std::nullopt;
  return value;
}

std::string list(const std::vector<int>& cpus) {
  std::string out;
  for (int c : cpus) out += (out.empty() ? "" : ",") + std::to_string(c);
  return out.empty() ? "none" : out;
}

}  // namespace

std::vector<int> allowed_cpus() { return allowed_cpus_of(0); }

std::vector<int> allowed_cpus_of(pid_t pid) {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(pid, sizeof set, &set) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  }
  return cpus;
}

Status check_allowed_cpu(int cpu) {
  const std::vector<int> allowed = allowed_cpus();
  if (std::find(allowed.begin(), allowed.end(), cpu) != allowed.end()) return {};
  return {ErrorCode::InvalidArgument,
          "CPU " + std::to_string(cpu) + " is not available to this process (allowed: " + list(allowed) + ")"};
}

Result<CpuPlan> parse_cpu_plan(const std::string& text) {
  if (text == "none") return CpuPlan{};
  if (text == "auto") {
    const std::vector<int> allowed = allowed_cpus();
    if (allowed.size() < 2) return CpuPlan{};
    return CpuPlan{allowed[0], allowed[1]};
  }
  const auto comma = text.find(',');
  const auto ping = parse_cpu(text.substr(0, comma));
  const auto pong = comma == std::string::npos ? std::optional<int>() : parse_cpu(text.substr(comma + 1));
  if (!ping || !pong) {
    return Status{ErrorCode::InvalidArgument, "expected auto, none or PING,PONG (e.g. 0,1), not '" + text + "'"};
  }
  for (int cpu : {*ping, *pong}) {
    if (Status s = check_allowed_cpu(cpu); !s.ok()) return s;
  }
  return CpuPlan{*ping, *pong};
}

bool pin_current_thread(int cpu) {
  if (cpu < 0 || cpu >= CPU_SETSIZE) return false;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

std::string describe(const CpuPlan& plan) {
  if (!plan.ping && !plan.pong) return "none";
  auto one = [](const std::optional<int>& c) { return c ? std::to_string(*c) : std::string("-"); };
  return one(plan.ping) + "/" + one(plan.pong);
}

}  // namespace cerulion::measurement
