// SPDX-License-Identifier: Apache-2.0
#pragma once
// A message as `ros2 topic pub` takes it on the command line: JSON, or YAML in flow style, braces
// optional at the top:
//
//   {"data": "hi"}     {data: hi}     data: hi     {pose: {position: {x: 1.0}}, ids: [1, 2]}
//
// Plain scalars are read as YAML 1.2 does: true / false, null or ~, integers, floats (.inf, .nan),
// anything else a string.

#include <string_view>

#include <nlohmann/json.hpp>

#include "cerulion/core/status.hpp"

namespace cerulion::ros2 {

/// The value of `text`; InvalidArgument naming the column where it stops making sense.
Result<nlohmann::json> parse_message_input(std::string_view text);

}  // namespace cerulion::ros2
