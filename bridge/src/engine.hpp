// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a Bridge (bridge.hpp) runs: the Fast DDS engine of bridge.cpp, linked into the library that
// programs link (engine_linked.cpp), or loaded from the plugin bridge.so by the `cerulion` program
// (engine_plugin.cpp), so that only `cerulion bridge` loads Fast DDS. handle.cpp is the Bridge
// class over either.

#include <memory>

#include "cerulion/bridge/bridge.hpp"

namespace cerulion::bridge::detail {

class BridgeImpl {
 public:
  virtual ~BridgeImpl() = default;
  [[nodiscard]] virtual Status start() = 0;
  virtual void stop() = 0;
  virtual BridgeStatus status() const = 0;
};

/// Checks the options and builds a bridge over Fast DDS (bridge.cpp); Bridge::create's contract.
Result<std::unique_ptr<BridgeImpl>> create_dds_bridge(BridgeOptions options);

/// create_dds_bridge, linked in or from the plugin.
Result<std::unique_ptr<BridgeImpl>> create_engine(BridgeOptions options);

/// The plugin's table.
struct BridgePlugin {
  Result<std::unique_ptr<BridgeImpl>> (*create)(BridgeOptions options);
};

}  // namespace cerulion::bridge::detail
