// SPDX-License-Identifier: Apache-2.0
#pragma once
// Slot-grid pacing (docs/benchmark-method.md): requests go out on a wall-clock grid at the nominal
// rate. A slot whose whole period has passed before its turn is skipped and counted, never sent
// late, so a slow round trip cannot push the rest of the run off the grid or bunch requests up.

#include <cstdint>

#include "cerulion/core/pacing.hpp"

namespace cerulion::measurement {

class SlotGrid {
 public:
  /// A grid at `rate_hz` whose first slot is at `start_ns` (CLOCK_MONOTONIC); rate 0 = no grid
  /// (back to back: every call below returns at once).
  SlotGrid(double rate_hz, std::uint64_t start_ns) noexcept
      : period_ns_(rate_hz > 0 ? static_cast<std::uint64_t>(1e9 / rate_hz) : 0), start_ns_(start_ns) {}

  [[nodiscard]] bool paced() const noexcept { return period_ns_ > 0; }
  [[nodiscard]] std::uint64_t period_ns() const noexcept { return period_ns_; }
  /// Time of the slot the next send belongs to.
  [[nodiscard]] std::uint64_t current_slot_ns() const noexcept { return start_ns_ + slot_ * period_ns_; }

  /// Slots whose period ended by `now` and that were not taken: moves past them and returns how
  /// many (0 when the current slot is still ahead or open).
  [[nodiscard]] std::uint64_t skip_missed(std::uint64_t now) noexcept {
    if (period_ns_ == 0) return 0;
    const std::uint64_t slot_time = current_slot_ns();
    if (now < slot_time + period_ns_) return 0;
    const std::uint64_t behind = (now - slot_time) / period_ns_;
    slot_ += behind;
    return behind;
  }

  /// Takes the current slot: sleeps until shortly before it (by what the grid's recent sleeps
  /// overslept: cerulion::Pacer) and returns its time, which the caller polls up to. Call
  /// skip_missed() first. The poll keeps the send on time though a sleep ends late.
  std::uint64_t take(std::uint64_t now) noexcept {
    if (period_ns_ == 0) return 0;
    const std::uint64_t slot_time = current_slot_ns();
    if (now < slot_time) pacer_.sleep_ahead_of(slot_time);
    ++slot_;
    return slot_time;
  }

 private:
  std::uint64_t period_ns_;
  std::uint64_t start_ns_;
  std::uint64_t slot_ = 0;
  Pacer pacer_;
};

}  // namespace cerulion::measurement
