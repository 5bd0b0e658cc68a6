// SPDX-License-Identifier: Apache-2.0
#include "cpu_pinning.hpp"

#include <CLI/CLI.hpp>

namespace cerulion::cli {

void require_allowed_cpu(int cpu, const std::string& option) {
  if (Status s = measurement::check_allowed_cpu(cpu); !s.ok()) throw CLI::ValidationError(option, s.message());
}

CpuPlan parse_cpu_plan(const std::string& text) {
  auto plan = measurement::parse_cpu_plan(text);
  if (!plan.ok()) throw CLI::ValidationError("--cpus", plan.message());
  return *plan;
}

}  // namespace cerulion::cli
