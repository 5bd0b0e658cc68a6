// SPDX-License-Identifier: Apache-2.0
#pragma once
// Checks for numbers given on the command line. Each one refuses what the option cannot mean
// (negative or overflowing counts, nan, a size past the limit) with a message that says what is
// expected and what was given; main() prints it as "`--opt` must be ..., got X".

#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

namespace cerulion::cli {

/// A whole number in [min, max], digits only: "-1" and "1e3" are refused, not wrapped or rounded.
CLI::Validator count_in(std::uint64_t min, std::uint64_t max);
/// A whole number >= 1 that fits 64 bits.
CLI::Validator positive_count();
/// A whole number >= 0 that fits 64 bits.
CLI::Validator non_negative_count();
/// A whole number in [min, max] that may be negative ("-7" for a zstd level).
CLI::Validator integer_in(std::int64_t min, std::int64_t max);
/// A duration > 0 in seconds, or with a unit: 30, 1.5s, 500ms, 250us, 2m (minutes), 1h; rewritten
/// to plain seconds, so give it to transform(), not check(). Every time option takes it.
CLI::Validator positive_duration();
/// The same, accepting 0.
CLI::Validator non_negative_duration();
/// A rate in messages per second: finite, from 0 (as fast as possible) to `max`.
CLI::Validator rate_hz(double max);
/// A finite number in [min, max] described by `what` ("a speed factor").
CLI::Validator number_in(double min, double max, std::string what);
/// A finite number > 0 and at most `max`, described by `what` ("a speed factor").
CLI::Validator positive_number(double max, std::string what);
/// A size as parse_size() reads it ("64", "4KiB", "1MiB"), at most `max` bytes, rewritten to
/// plain bytes.
CLI::Validator size_at_most(std::uint64_t max);
/// The largest payload a topic can carry (core refuses a larger ceiling).
inline constexpr std::uint64_t kLargestPayload = 1ull << 40;

}  // namespace cerulion::cli
