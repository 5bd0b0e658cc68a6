// SPDX-License-Identifier: Apache-2.0
#include "suggest.hpp"

#include <algorithm>
#include <limits>

#include <CLI/CLI.hpp>

namespace cerulion::cli {
namespace {

std::string_view without_dashes(std::string_view word) {
  while (!word.empty() && word.front() == '-') word.remove_prefix(1);
  return word;
}

}  // namespace

std::size_t edit_distance(std::string_view a, std::string_view b) {
  // Optimal string alignment: Levenshtein plus the swap of two neighbours, the commonest typo.
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t replace = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + replace});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

std::string closest_word(std::string_view word, const std::vector<std::string>& candidates) {
  const std::size_t word_length = without_dashes(word).size();
  std::string best;
  std::size_t best_distance = std::numeric_limits<std::size_t>::max();
  std::vector<std::string> starting;
  for (const auto& candidate : candidates) {
    if (candidate == word) continue;
    const std::size_t length = without_dashes(candidate).size();
    const std::size_t distance = edit_distance(word, candidate);
    if (distance <= std::max<std::size_t>(1, length / 3) && distance < word_length && distance < best_distance) {
      best = candidate;
      best_distance = distance;
    }
    if (word_length >= 3 && candidate.size() > word.size() && candidate.compare(0, word.size(), word) == 0) {
      starting.push_back(candidate);
    }
  }
  if (best.empty() && starting.size() == 1) best = starting.front();
  return best;
}

std::vector<std::string> subcommand_names(const CLI::App& command) {
  std::vector<std::string> names;
  for (const auto* sub : command.get_subcommands({})) names.push_back(sub->get_name());
  return names;
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
  const std::string best = closest_word(word, candidates);
  return best.empty() ? std::string() : "did you mean '" + best + "'?";
}

}  // namespace cerulion::cli
