// SPDX-License-Identifier: Apache-2.0
#include "cerulion/bench/machine_load.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <thread>

#include <fmt/core.h>

#include "cerulion/bench/floor.hpp"

namespace cerulion::bench {

namespace {
std::string load_time(double us) {
  if (us >= 1000) return fmt::format("{:.2f} ms", us / 1000);
  return fmt::format("{:.0f} µs", us);
}
}  // namespace

Result<LoadAverage> parse_load_average(std::string_view text) {
  std::istringstream in{std::string(text)};
  LoadAverage l;
  if (!(in >> l.one >> l.five >> l.fifteen) || l.one < 0 || l.five < 0 || l.fifteen < 0) {
    return Status(ErrorCode::InvalidArgument, "not a load average (three numbers, as /proc/loadavg has)");
  }
  return l;
}

Result<LoadAverage> read_load_average() {
  std::ifstream in("/proc/loadavg");
  std::stringstream ss;
  ss << in.rdbuf();
  if (!in) return Status(ErrorCode::SystemError, "cannot read /proc/loadavg");
  return parse_load_average(ss.str());
}

void judge_load(MachineLoad& load, const LoadLimits& limits) {
  load.busy = false;
  load.why.clear();
  auto add = [&](const std::string& reason) {
    load.busy = true;
    load.why += (load.why.empty() ? "" : "; ") + reason;
  };
  if (load.before) {
    const double limit = limits.load_per_cpu * static_cast<double>(std::max(1u, load.cores));
    if (load.before->one >= limit) {
      add(fmt::format("load average {:.2f} on {} CPUs: other work keeps every CPU busy", load.before->one, load.cores));
    }
  }
  if (load.floor.count > 0 && load.floor.p99 >= limits.floor_p99_us) {
    add(fmt::format("the floor's p99 is {} (at least {}): a waking worker waits for its CPU", load_time(load.floor.p99),
                    load_time(limits.floor_p99_us)));
  }
}

MachineLoad check_machine_load(const measurement::CpuPlan& cpus, const LoadLimits& limits) {
  MachineLoad load;
  load.checked = true;
  load.cores = std::thread::hardware_concurrency();
  if (auto l = read_load_average()) load.before = *l;
  FloorOptions floor;
  floor.rate_hz = 500;
  floor.samples = 300;
  floor.cpus = cpus;
  if (auto f = measure_floor(floor)) {
    load.floor = *f;
  } else {
    load.floor_error = f.message();
  }
  judge_load(load, limits);
  return load;
}

std::string describe_load(const MachineLoad& load, bool verdict) {
  if (!load.checked) return "not measured";
  std::string out = load.before ? fmt::format("load average {:.2f} ({} CPUs)", load.before->one, load.cores)
                                : fmt::format("load average not readable ({} CPUs)", load.cores);
  if (load.after) out += fmt::format(", {:.2f} at the end", load.after->one);
  if (load.floor.count > 0) {
    out += fmt::format(", floor median {}, p99 {}", load_time(load.floor.median), load_time(load.floor.p99));
  } else if (!load.floor_error.empty()) {
    out += ", floor not measured: " + load.floor_error;
  }
  if (load.busy && verdict) out += ": BUSY (" + load.why + ")";
  return out;
}

}  // namespace cerulion::bench
