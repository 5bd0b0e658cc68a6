// SPDX-License-Identifier: Apache-2.0
#pragma once
// A small, private /dev/shm and ways to fill it (see main.cpp for the namespace).

#include <cstdint>
#include <string>

namespace cerulion::test {

/// Replaces /dev/shm (in this mount namespace) with an empty tmpfs of `mebibytes`.
bool mount_small_shm(std::uint64_t mebibytes);

/// Free bytes on /dev/shm.
std::uint64_t shm_free_bytes();

/// Takes all but `leave` bytes of /dev/shm's free space with a file of its own.
void fill_shm(std::uint64_t leave = 0, const std::string& name = "filler");

}  // namespace cerulion::test
