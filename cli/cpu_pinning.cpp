#include "cpu_pinning.hpp"

#include <algorithm>
#include <charconv>
#include <pthread.h>
#include <sched.h>

#include <CLI/CLI.hpp>
#include <fmt/core.h>

namespace cerulion::cli {
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

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  }
  return cpus;
}

void require_allowed_cpu(int cpu, const std::string& option) {
  const std::vector<int> allowed = allowed_cpus();
  if (std::find(allowed.begin(), allowed.end(), cpu) == allowed.end()) {
    throw CLI::ValidationError(option, fmt::format("CPU {} is not available to this process (allowed: {})", cpu,
                                                   list(allowed)));
  }
}

CpuPlan parse_cpu_plan(const std::string& text) {
  if (text == "none") return {};
  if (text == "auto") {
    const std::vector<int> allowed = allowed_cpus();
    if (allowed.size() < 2) return {};
    return {allowed[0], allowed[1]};
  }
  const auto comma = text.find(',');
  const auto ping = parse_cpu(text.substr(0, comma));
  const auto pong = comma == std::string::npos ? std::optional<int>() : parse_cpu(text.substr(comma + 1));
  if (!ping || !pong) throw CLI::ValidationError("--cpus", "expected auto, none or PING,PONG (e.g. 0,1), not '" + text + "'");
  for (int cpu : {*ping, *pong}) require_allowed_cpu(cpu, "--cpus");
  return {*ping, *pong};
}

bool pin_current_thread(int cpu) {
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

}  // namespace cerulion::cli
