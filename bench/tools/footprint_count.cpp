// SPDX-License-Identifier: Apache-2.0
// Counts a lackey trace's footprint per round trip (scripts/footprint.sh runs the campaign):
//   footprint-count --delimiter 0x2ce4c0 [--skip N] [--label L] TRACE
//   footprint-count ... --lines-out FILE    (the last window's line addresses, "code 0x..." / "data 0x...")
//   footprint-count ... --ignore-data FROM-TO    (hexadecimal; data accesses there are not counted)
//   footprint-count --every K [--skip N] [--label L] TRACE    (the delimiter: the first
//                   instruction that ran exactly K times)
// prints one line: label, windows, and the median instructions, code lines/pages, data lines/pages
// and distinct lines per window.

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>

#include "cerulion/bench/footprint.hpp"

int main(int argc, char** argv) {
  cerulion::bench::FootprintOptions options;
  std::string label = "trace";
  std::string path;
  std::uint64_t every = 0;
  std::string lines_out;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (!a.starts_with("--")) {
      path = a;
      continue;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "footprint-count: %s needs a value\n", a.c_str());
      return 2;
    }
    if (a == "--delimiter") {
      options.delimiter = std::strtoull(argv[++i], nullptr, 0);
    } else if (a == "--every") {
      every = std::strtoull(argv[++i], nullptr, 10);
    } else if (a == "--ignore-data") {  // FROM-TO, hexadecimal
      const std::string range = argv[++i];
      const std::size_t dash = range.find('-');
      if (dash == std::string::npos) {
        std::fprintf(stderr, "footprint-count: --ignore-data takes FROM-TO, not '%s'\n", range.c_str());
        return 2;
      }
      options.ignored_data.push_back({std::strtoull(range.substr(0, dash).c_str(), nullptr, 16),
                                      std::strtoull(range.substr(dash + 1).c_str(), nullptr, 16)});
    } else if (a == "--lines-out") {  // the last window's code and data line addresses
      lines_out = argv[++i];
    } else if (a == "--skip") {
      options.skip_windows = std::strtoull(argv[++i], nullptr, 10);
    } else if (a == "--label") {
      label = argv[++i];
    } else {
      std::fprintf(stderr, "footprint-count: unknown option '%s'\n", a.c_str());
      return 2;
    }
  }
  std::ifstream trace(path);
  if (path.empty() || !trace) {
    std::fprintf(stderr, "footprint-count: cannot read the trace '%s'\n", path.c_str());
    return 2;
  }
  if (every > 0) {
    auto found = cerulion::bench::find_delimiter(trace, every);
    if (!found.ok()) {
      std::fprintf(stderr, "footprint-count: %s\n", found.message().c_str());
      return 1;
    }
    options.delimiter = *found;
    trace.clear();
    trace.seekg(0);
  }
  auto report = cerulion::bench::count_lackey_trace(trace, options);
  if (!report.ok()) {
    std::fprintf(stderr, "footprint-count: %s\n", report.message().c_str());
    return 1;
  }
  if (!lines_out.empty()) {
    std::ofstream out(lines_out);
    for (auto line : report->last_code_lines) out << "code 0x" << std::hex << line << "\n";
    for (auto line : report->last_data_lines) out << "data 0x" << std::hex << line << "\n";
  }
  const auto& m = report->median;
  std::printf("%-28s windows %4zu  instructions %7llu  code lines %4llu pages %3llu  data lines %4llu pages %3llu  lines %4llu\n",
              label.c_str(), report->windows.size(), static_cast<unsigned long long>(m.instructions),
              static_cast<unsigned long long>(m.code_lines), static_cast<unsigned long long>(m.code_pages),
              static_cast<unsigned long long>(m.data_lines), static_cast<unsigned long long>(m.data_pages),
              static_cast<unsigned long long>(m.lines));
  return 0;
}
