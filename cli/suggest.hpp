// SPDX-License-Identifier: Apache-2.0
#pragma once
// "Did you mean": the known word nearest to a mistyped one (a command, an option), for the one
// line that refuses it.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace CLI {
class App;
}

namespace cerulion::cli {

/// Edits that turn `a` into `b`: inserting, deleting or replacing a character, or swapping two
/// neighbours ("domian" -> "domain" is one).
std::size_t edit_distance(std::string_view a, std::string_view b);

/// The candidate `word` most likely meant, "" when none is near enough to say so. Leading dashes
/// are compared as they are written but do not count towards a word's length: "--verison" is near
/// "--version". Near is a third of the candidate's length in edits (at least one, fewer than the
/// word's own length), or `word` of three or more characters starting exactly one candidate.
std::string closest_word(std::string_view word, const std::vector<std::string>& candidates);

/// The names of `command`'s subcommands: the candidates for a mistyped one.
std::vector<std::string> subcommand_names(const CLI::App& command);

/// "did you mean 'status'?" for the closest_word() of `word`, "" when there is none.
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace cerulion::cli
