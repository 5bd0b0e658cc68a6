// SPDX-License-Identifier: Apache-2.0
// The `cerulion` program's bridge: the Fast DDS engine from the plugin bridge.so, loaded when a
// bridge is created, so that no other command loads Fast DDS.

#include "cerulion/plugin/plugin.hpp"
#include "engine.hpp"

namespace cerulion::bridge::detail {

Result<std::unique_ptr<BridgeImpl>> create_engine(BridgeOptions options) {
  auto plugin = plugin::load<BridgePlugin>("bridge");
  if (!plugin) return plugin.status();
  return (*plugin)->create(std::move(options));
}

}  // namespace cerulion::bridge::detail
