// SPDX-License-Identifier: Apache-2.0
#pragma once
// Topic types the tests declare: one JSON type with a JSON Schema (what Foxglove plots), and
// another type for "a topic of another type" cases.

#include "cerulion/core/topic_type.hpp"

namespace cerulion::test {

inline constexpr const char* kImuJsonSchema = R"({"type":"object","properties":{"x":{"type":"number"}}})";

/// json, schema "Imu" (jsonschema).
inline TopicType imu_json_type() { return TopicType{"json", {"Imu", "jsonschema", kImuJsonSchema}}; }

/// json, schema "Pose" (jsonschema): another type than imu_json_type().
inline TopicType pose_json_type() {
  return TopicType{"json", {"Pose", "jsonschema", R"({"type":"object","properties":{"y":{"type":"number"}}})"}};
}

}  // namespace cerulion::test
