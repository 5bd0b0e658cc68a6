// SPDX-License-Identifier: Apache-2.0
// The machine a campaign ran on, from /proc and /sys.

#include <fstream>
#include <sys/utsname.h>
#include <thread>
#include <unistd.h>

#include "cerulion/bench/report.hpp"

namespace cerulion::bench {

namespace {
std::string first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}
}  // namespace

Machine describe_machine() {
  Machine m;
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) == 0) {
      if (auto colon = line.find(':'); colon != std::string::npos) m.cpu_model = line.substr(colon + 2);
      break;
    }
  }
  m.cores = std::thread::hardware_concurrency();
  utsname u{};
  if (::uname(&u) == 0) m.kernel = std::string(u.sysname) + " " + u.release;
  m.governor = first_line("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  m.hostname = host;
  return m;
}

}  // namespace cerulion::bench
