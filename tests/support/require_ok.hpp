// SPDX-License-Identifier: Apache-2.0
#pragma once
// requireOk(status): a test step that must succeed, failing with the status's message.
// On the test's own thread only, as every Catch2 assertion: they are not thread-safe, and two
// threads asserting at once corrupt Catch2's state and the heap. A helper thread keeps its first
// failing Status, and the test requires it after the join.

#include <catch2/catch.hpp>

#include "cerulion/core/status.hpp"

namespace cerulion::test {

inline void requireOk(const Status& st) {
  INFO(st.message());
  REQUIRE(st.ok());
}

}  // namespace cerulion::test
