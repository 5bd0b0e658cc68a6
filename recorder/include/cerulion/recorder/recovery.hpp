// SPDX-License-Identifier: Apache-2.0
#pragma once
// Rebuilding a complete, indexed MCAP file from a truncated or damaged one (like `mcap recover`):
// every record that can still be read is copied into a fresh file with a new summary; chunks that
// fail their CRC or do not decompress are dropped and reported. Every schema and channel the input
// declares, in an intact summary or in the data section, is kept even when no message uses it.

#include <cstdint>
#include <string>
#include <vector>

#include "cerulion/recorder/errors.hpp"
#include "cerulion/recorder/writer.hpp"

namespace cerulion::recorder {

/// What recover() kept and dropped.
struct RecoveryReport {
  std::uint64_t messages = 0;          ///< messages written to the output
  std::uint64_t schemas = 0;           ///< schemas written to the output (with or without messages)
  std::uint64_t channels = 0;          ///< channels written to the output (with or without messages)
  std::uint64_t attachments = 0;
  std::uint64_t metadata = 0;
  std::uint64_t chunks_kept = 0;       ///< input chunks whose messages were copied
  std::uint64_t chunks_dropped = 0;    ///< input chunks skipped as damaged
  std::uint64_t messages_dropped = 0;  ///< messages on channels never defined (unusable)
  std::uint64_t bytes_ignored = 0;     ///< bytes of the data section that could not be read (truncated tail)
  bool input_finalized = false;        ///< the input had a valid Footer
  std::vector<std::string> problems;   ///< one line per thing dropped
};

/// Copies what is readable in `input` into a new file `output` (options.writer.overwrite applies).
/// Fails only when the input is not MCAP at all or the output cannot be written.
Result<RecoveryReport> recover(const std::string& input, const std::string& output,
                               WriterOptions writer_options = {});

}  // namespace cerulion::recorder
