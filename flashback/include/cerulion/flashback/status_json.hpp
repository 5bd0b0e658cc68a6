// SPDX-License-Identifier: Apache-2.0
// A store's status as JSON: what `cerulion flashback status --json` prints (docs/json.md).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cerulion/flashback/store.hpp"

namespace cerulion::flashback {

/// One JSON object for the store `name` of `domain`: the keeper, its dump directory and triggers,
/// the window, memory, dumps and per topic what the store took and whether its publishers live.
/// `publishers` is publishers_of(status->domain, status->topics); `now_realtime_ns` gives the
/// keeper's uptime. With `status` null (no such store) every figure is null and `topics` empty,
/// so a program reads the same keys either way.
std::string to_json(std::string_view name, std::string_view domain, const StoreStatus* status,
                    const std::vector<TopicPublishers>& publishers, std::uint64_t now_realtime_ns);

}  // namespace cerulion::flashback
