// SPDX-License-Identifier: Apache-2.0
#include "cerulion/bench/footprint.hpp"

#include <algorithm>
#include <charconv>
#include <string>
#include <unordered_map>

namespace cerulion::bench {
namespace {

/// Every line (or page) that [address, address + size) overlaps.
template <typename Set>
void touch(Set& set, std::uint64_t address, std::uint64_t size, std::uint64_t granule) {
  const std::uint64_t first = address / granule;
  const std::uint64_t last = (address + std::max<std::uint64_t>(size, 1) - 1) / granule;
  for (std::uint64_t g = first; g <= last; ++g) set.insert(g);
}

/// One lackey record: 'I' (instruction), 'L', 'S' or 'M' (data), '-' for a line to skip, '?' for
/// one that is no record.
struct Record {
  char kind = '?';
  std::uint64_t address = 0;
  std::uint64_t size = 0;
};

Record parse_record(const std::string& line) {
  if (line.empty() || line.starts_with("==") || line.starts_with("--")) return {'-'};
  // "I  0401ab70,3" or " L 1fff0005c8,8" (also S and M).
  Record r;
  const char kind = line.size() > 1 ? (line[0] == 'I' ? 'I' : line[1]) : '?';
  const std::size_t comma = line.find(',');
  const std::size_t start = line.find_first_not_of(' ', 2);
  if ((kind != 'I' && kind != 'L' && kind != 'S' && kind != 'M') || comma == std::string::npos ||
      start == std::string::npos || start >= comma) {
    return r;
  }
  if (std::from_chars(line.data() + start, line.data() + comma, r.address, 16).ec != std::errc{} ||
      std::from_chars(line.data() + comma + 1, line.data() + line.size(), r.size).ec != std::errc{}) {
    return r;
  }
  r.kind = kind;
  return r;
}

Status not_a_record(std::uint64_t number, const std::string& line) {
  return Status(ErrorCode::InvalidArgument,
                "trace line " + std::to_string(number) + " is not a lackey record: '" + line.substr(0, 60) + "'");
}

/// Calls `each(record, line_number)` for every record of a lackey trace, skipping valgrind's own
/// lines; InvalidArgument names the first line that is neither.
template <typename Each>
Status for_each_record(std::istream& trace, Each&& each) {
  std::string line;
  std::uint64_t number = 0;
  while (std::getline(trace, line)) {
    ++number;
    const Record r = parse_record(line);
    if (r.kind == '-') continue;
    if (r.kind == '?') return not_a_record(number, line);
    each(r, number);
  }
  return Status::success();
}

std::uint64_t median_of(std::vector<std::uint64_t> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

}  // namespace

void FootprintCounter::instruction(std::uint64_t address, std::uint64_t size) {
  if (address == options_.delimiter) {
    if (open_) close_window();
    open_ = true;
  }
  if (!open_) return;
  ++current_.instructions;
  touch(code_lines_, address, size, kCacheLineBytes);
  touch(code_pages_, address, size, kFootprintPageBytes);
  touch(lines_, address, size, kCacheLineBytes);
}

void FootprintCounter::data(std::uint64_t address, std::uint64_t size) {
  if (!open_) return;
  for (const AddressRange& r : options_.ignored_data) {
    if (address >= r.begin && address < r.end) return;
  }
  touch(data_lines_, address, size, kCacheLineBytes);
  touch(data_pages_, address, size, kFootprintPageBytes);
  touch(lines_, address, size, kCacheLineBytes);
}

void FootprintCounter::close_window() {
  current_.code_lines = code_lines_.size();
  current_.code_pages = code_pages_.size();
  current_.data_lines = data_lines_.size();
  current_.data_pages = data_pages_.size();
  current_.lines = lines_.size();
  if (closed_++ >= options_.skip_windows) {
    windows_.push_back(current_);
    last_code_lines_.assign(code_lines_.begin(), code_lines_.end());
    last_data_lines_.assign(data_lines_.begin(), data_lines_.end());
  }
  current_ = {};
  for (auto* set : {&code_lines_, &code_pages_, &data_lines_, &data_pages_, &lines_}) set->clear();
}

Result<FootprintReport> FootprintCounter::finish() {
  if (windows_.empty()) {
    return Status(ErrorCode::InvalidArgument,
                  "the delimiter ran " + std::to_string(closed_ + (open_ ? 1 : 0)) + " times: no window left to count past the " +
                      std::to_string(options_.skip_windows) + " skipped");
  }
  FootprintReport report;
  report.windows = windows_;
  for (auto* lines : {&last_code_lines_, &last_data_lines_}) {
    for (auto& line : *lines) line *= kCacheLineBytes;
    std::sort(lines->begin(), lines->end());
  }
  report.last_code_lines = last_code_lines_;
  report.last_data_lines = last_data_lines_;
  auto column = [&](std::uint64_t WindowFootprint::*field) {
    std::vector<std::uint64_t> v;
    v.reserve(windows_.size());
    for (const auto& w : windows_) v.push_back(w.*field);
    report.median.*field = median_of(std::move(v));
  };
  for (auto field : {&WindowFootprint::instructions, &WindowFootprint::code_lines, &WindowFootprint::code_pages,
                     &WindowFootprint::data_lines, &WindowFootprint::data_pages, &WindowFootprint::lines}) {
    column(field);
  }
  return report;
}

Result<std::uint64_t> find_delimiter(std::istream& trace, std::uint64_t times) {
  struct Runs {
    std::uint64_t count = 0;
    std::uint64_t first = 0;  ///< trace line of the first run
    std::uint64_t last = 0;   ///< and of the last
  };
  std::unordered_map<std::uint64_t, Runs> runs;
  Status read = for_each_record(trace, [&](const Record& r, std::uint64_t number) {
    if (r.kind != 'I') return;
    Runs& x = runs[r.address];
    if (x.count++ == 0) x.first = number;
    x.last = number;
  });
  if (!read.ok()) return read;
  // Of the instructions that ran `times` times, the one whose runs spread widest: a loop's body
  // spans the whole measurement, a start-up loop (the dynamic linker's) a moment of it.
  std::uint64_t best = 0;
  const Runs* best_runs = nullptr;
  for (const auto& [address, x] : runs) {
    if (x.count != times) continue;
    if (best_runs == nullptr || x.last - x.first > best_runs->last - best_runs->first ||
        (x.last - x.first == best_runs->last - best_runs->first && x.first < best_runs->first)) {
      best = address;
      best_runs = &x;
    }
  }
  if (best_runs == nullptr) {
    return Status(ErrorCode::NotFound, "no instruction of the trace ran exactly " + std::to_string(times) + " times");
  }
  return best;
}

Result<FootprintReport> count_lackey_trace(std::istream& trace, FootprintOptions options) {
  if (options.delimiter == 0) return Status(ErrorCode::InvalidArgument, "no delimiter address given");
  FootprintCounter counter(options);
  Status read = for_each_record(trace, [&](const Record& r, std::uint64_t) {
    if (r.kind == 'I') {
      counter.instruction(r.address, r.size);
    } else {
      counter.data(r.address, r.size);
    }
  });
  if (!read.ok()) return read;
  return counter.finish();
}

}  // namespace cerulion::bench
