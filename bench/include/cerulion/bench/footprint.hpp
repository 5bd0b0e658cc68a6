// SPDX-License-Identifier: Apache-2.0
#pragma once
// The message path's footprint: how many distinct cache lines and pages one side of a round trip
// touches, counted from a memory trace rather than timed, so that it reads the same on a noisy
// machine and can guard every change (docs/performance.md says why it matters after an idle gap).
//
// The trace is valgrind's lackey (`valgrind --tool=lackey --trace-mem=yes`): one record per
// instruction executed and per load, store or modify. It is cut into windows at every execution of
// a delimiter instruction (one that runs once per round trip, such as the entry of the function
// that waits for the reply), and each window's distinct lines and pages are counted.

#include <cstdint>
#include <istream>
#include <unordered_set>
#include <vector>

#include "cerulion/core/status.hpp"

namespace cerulion::bench {

inline constexpr std::uint64_t kCacheLineBytes = 64;
inline constexpr std::uint64_t kFootprintPageBytes = 4096;

/// What one window (one round trip of one side) touched.
struct WindowFootprint {
  std::uint64_t instructions = 0;  ///< instructions executed
  std::uint64_t code_lines = 0;    ///< distinct lines instructions were fetched from
  std::uint64_t code_pages = 0;
  std::uint64_t data_lines = 0;    ///< distinct lines loaded, stored or modified
  std::uint64_t data_pages = 0;
  std::uint64_t lines = 0;         ///< distinct lines of either kind (a warm-up read of code is both)
};

/// Addresses [begin, end).
struct AddressRange {
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
};

struct FootprintOptions {
  /// The address whose execution starts a window (required).
  std::uint64_t delimiter = 0;
  /// Data accesses to leave out, such as the warm pass's reads of the code it keeps warm (the
  /// cerulion_hot_text section): the message path's own footprint without what warming adds.
  std::vector<AddressRange> ignored_data = {};
  /// Windows dropped at the start (start-up, warm-up round trips); the partial window after the
  /// last delimiter is always dropped.
  std::size_t skip_windows = 10;
};

/// Medians over the counted windows, and the windows themselves.
struct FootprintReport {
  std::vector<WindowFootprint> windows;
  WindowFootprint median;
  /// The last counted window's distinct lines (line addresses, ascending), to tell what touches
  /// them (addr2line on the code lines).
  std::vector<std::uint64_t> last_code_lines, last_data_lines;
};

/// Counts one trace, record by record. Feed it instructions and data accesses in trace order.
class FootprintCounter {
 public:
  explicit FootprintCounter(FootprintOptions options) : options_(options) {}

  void instruction(std::uint64_t address, std::uint64_t size);
  void data(std::uint64_t address, std::uint64_t size);
  /// Ends the trace: drops the partial window and computes the medians. InvalidArgument when the
  /// delimiter never ran often enough to leave a window to count.
  [[nodiscard]] Result<FootprintReport> finish();

 private:
  void close_window();

  FootprintOptions options_;
  bool open_ = false;  ///< a delimiter has run: records belong to a window
  std::size_t closed_ = 0;
  WindowFootprint current_;
  std::unordered_set<std::uint64_t> code_lines_, code_pages_, data_lines_, data_pages_, lines_;
  std::vector<WindowFootprint> windows_;
  std::vector<std::uint64_t> last_code_lines_, last_data_lines_;
};

/// An instruction of a lackey trace that ran exactly `times` times, spread over the widest part of
/// the trace: a delimiter for a program with no function to name, such as a loop inlined into
/// main. NotFound when none did.
[[nodiscard]] Result<std::uint64_t> find_delimiter(std::istream& trace, std::uint64_t times);

/// Reads a lackey trace (valgrind's own "==pid==" lines are skipped) into a counter. InvalidArgument
/// names the first line that is neither.
[[nodiscard]] Result<FootprintReport> count_lackey_trace(std::istream& trace, FootprintOptions options);

}  // namespace cerulion::bench
