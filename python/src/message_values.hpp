// SPDX-License-Identifier: Apache-2.0
#pragma once
// A message's payload as Python values, by its topic's type: a json topic's parsed, a ROS 2
// topic's (cdr with a ros2msg schema) decoded into a dict in field order (byte arrays as bytes).
// What cannot be read raises cerulion.InvalidArgument naming the message and why, never a bare
// JSONDecodeError.

#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "binding.hpp"
#include "cerulion/core/topic_type.hpp"
#include "cerulion/ros2/cdr.hpp"

namespace cerulion::python {

/// The decoder of one topic's type, its codec made on first use and kept.
class MessageValues {
 public:
  explicit MessageValues(TopicType type) : type_(std::move(type)) {}
  /// json(): the JSON value of a json topic, the fields of a ROS 2 one; `what` names the message.
  py::object json(std::string_view payload, const std::string& what) const;
  /// decode(): the fields of a ROS 2 message (InvalidArgument for a topic of another type).
  py::object decode(std::string_view payload, const std::string& what) const;

 private:
  TopicType type_;
  mutable std::once_flag made_;
  mutable std::optional<Result<ros2::CdrCodec>> codec_;
};

}  // namespace cerulion::python
