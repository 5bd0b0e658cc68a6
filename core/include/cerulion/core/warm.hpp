#pragma once
// Keeping the next message's memory in cache while a thread waits on its own.

namespace cerulion {

/// Pulls into the calling thread's CPU cache the memory its publishers and subscribers touch on
/// their next message: the topic's shared lines, the next slot, their own records. A core that
/// idled for a few milliseconds (sooner on a shared VM) has lost them, and missing them one after
/// another costs microseconds on the message's path.
///
/// The wait strategies call it by themselves while they poll. Call it from a wait of your own
/// before a latency-critical publish, e.g. every ~20 µs while spinning until a deadline. It issues
/// some dozens of prefetches and never blocks.
void warm_caches() noexcept;

}  // namespace cerulion
