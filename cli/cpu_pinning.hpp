// SPDX-License-Identifier: Apache-2.0
#pragma once
// The command line's side of CPU pinning (measurement/cpu_pinning.hpp): the same checks, failing
// as usage errors that name the option.

#include <string>

#include "cerulion/measurement/cpu_pinning.hpp"

namespace cerulion::cli {

using measurement::CpuPlan;
using measurement::describe;

/// Throws CLI::ValidationError for `option` unless this process may run on `cpu`.
void require_allowed_cpu(int cpu, const std::string& option);

/// Parses --cpus: "auto", "none", or "A,B". Throws CLI::ValidationError naming the problem.
CpuPlan parse_cpu_plan(const std::string& text);

}  // namespace cerulion::cli
