// SPDX-License-Identifier: Apache-2.0
#pragma once
// Keeping the next message's memory in cache while a thread waits on its own.

#include <cstdint>

/// Places a function's code in the section whose pages warm_caches() keeps warm, beside the
/// library's own message path. Mark the function that waits for and handles latency-critical
/// messages with it, so its code is not cold when the next one comes. GCC and Clang on ELF; it
/// works on non-inline functions only (an inline one fails to compile: "section type conflict"),
/// and only in the image the library is linked into (core builds as a static library).
#define CERULION_HOT_PATH __attribute__((section("cerulion_hot_text")))

namespace cerulion {

/// Pulls into the calling thread's CPU cache the memory its publishers and subscribers touch on
/// their next message (the topic's shared lines, the next slot, their own records) and the code
/// of the message path (everything marked CERULION_HOT_PATH). A core that idled for a few
/// milliseconds (sooner on a shared VM) has lost them, and missing them one after another costs
/// microseconds on the message's path.
///
/// The wait strategies call it by themselves while they poll. Call it from a wait of your own
/// before a latency-critical publish, e.g. every kWarmCachesIntervalNs while spinning until a
/// deadline. It reads some hundreds of lines, cheap when they are warm, and never blocks.
void warm_caches() noexcept;

/// How often a polling loop calls warm_caches(), in ns: well within the time a shared VM takes to
/// evict what was warmed, and rare enough that warming is a small part of a poll
/// (docs/performance.md has the measurements).
inline constexpr std::uint64_t kWarmCachesIntervalNs = 20'000;

}  // namespace cerulion
