// SPDX-License-Identifier: Apache-2.0
#pragma once
// requireOk(status): a test step that must succeed, failing with the status's message.

#include <catch2/catch.hpp>

#include "cerulion/core/status.hpp"

namespace cerulion::test {

inline void requireOk(const Status& st) {
  INFO(st.message());
  REQUIRE(st.ok());
}

}  // namespace cerulion::test
