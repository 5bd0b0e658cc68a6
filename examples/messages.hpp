// SPDX-License-Identifier: Apache-2.0
#pragma once
// Message types shared by publishers and subscribers. A message is a plain struct of numbers and
// fixed-size arrays (cerulion::Message): its bytes travel as they are, so both sides must compile
// the same definition, which is why it lives in one header.

#include <cstdint>

namespace example {

/// One camera image, 1920x1080 RGB: about 6 MB, written in place in shared memory.
struct Frame {
  std::uint64_t index;
  std::uint32_t width;
  std::uint32_t height;
  std::uint8_t rgb[1080][1920][3];
};

/// One inertial measurement.
struct Imu {
  std::uint64_t index;
  double orientation[4];          // quaternion x, y, z, w
  double angular_velocity[3];     // rad/s
  double linear_acceleration[3];  // m/s²
};

}  // namespace example
