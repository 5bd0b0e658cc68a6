// SPDX-License-Identifier: Apache-2.0
#pragma once
// A report a command writes to a path the user named, which may be a FIFO another program reads.

#include <string>
#include <string_view>

namespace cerulion::cli {

/// Writes `text` to `path` (created or truncated; `what` names it in messages: "the JSON"). A
/// FIFO is waited for until a reader opens it, as a shell's `>` waits, but a stop (Ctrl-C) ends
/// the wait (Exit with the stop's code); after a stop already came (a command interrupted that
/// still writes what it has), a FIFO nobody reads is not waited for: a warning says it was not
/// written. Exit 1 with one line when it cannot be written.
void write_output_file(const std::string& path, std::string_view text, std::string_view what);

}  // namespace cerulion::cli
