// SPDX-License-Identifier: Apache-2.0
#pragma once
// The topic-selection options that `record`, `flashback start`, `bridge` and `view` share, declared
// once so they read and check the same everywhere: -e/--regex and -x/--exclude fill a
// recording::TopicSelection, which the library behind the command compiles into its TopicMatcher.

#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "cerulion/recording/topic_selection.hpp"

namespace cerulion::cli {

/// Adds -e/--regex (into selection.include) and -x/--exclude (into selection.exclude), each
/// repeatable. `verb` says what the command does with a topic, capitalised: "Record", "Serve".
void add_topic_pattern_options(CLI::App& cmd, recording::TopicSelection& selection, std::string_view verb);

/// After parsing: throws Exit{2} naming the flag when a pattern is not a regular expression.
void check_topic_patterns(const recording::TopicSelection& selection);

/// For a command that takes nothing by default: Exit{2} saying "<command>: name topics, or use
/// -a/--all or -e/--regex" when nothing is chosen.
void require_topic_selection(const recording::TopicSelection& selection, std::string_view command);

/// Throws Exit{2} naming `flag` when a pattern is not a regular expression (checked here, not only
/// in the library, so the message names the flag the user typed).
void check_patterns(const std::vector<std::string>& patterns, const char* flag);

/// The warning `command` (echo, view) gives before it waits for a topic nothing was ever published
/// on, "" when something was or a publisher is attached: a mistyped name would otherwise wait in
/// silence.
std::string unpublished_warning(const std::string& topic, const std::string& domain, std::string_view command);

}  // namespace cerulion::cli
