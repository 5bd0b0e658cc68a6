// SPDX-License-Identifier: Apache-2.0
#pragma once
// Python arguments to core options: enums or their names, timeouts in seconds, a topic's type.

#include <optional>
#include <string>

#include "binding.hpp"
#include "cerulion/core/options.hpp"
#include "cerulion/core/topic_type.hpp"

namespace cerulion::python {

/// None (the topic's current mode), a cerulion.Mode, or "lockstep" / "free-run".
std::optional<Mode> mode_argument(py::handle value);
/// A cerulion.WaitStrategy or "adaptive" / "spin" / "block".
WaitStrategy wait_argument(py::handle value);
/// A cerulion.StartAt or "next" / "first".
StartAt start_argument(py::handle value);
/// None (the topic's current depth) or a depth in messages.
std::optional<std::uint32_t> depth_argument(py::handle value);
/// None (for ever) or seconds, a number ≥ 0.
Timeout timeout_argument(py::handle value);
/// None ($CERULION_DOMAIN or "default") or a domain name (checked by core when it is used).
std::string domain_argument(py::handle value);
/// A topic type from `encoding` (None or a message encoding name) and `schema` (None, a
/// cerulion.Schema or a (name, encoding, data) tuple); nullopt when both are None.
std::optional<TopicType> type_argument(py::handle encoding, py::handle schema);

}  // namespace cerulion::python
