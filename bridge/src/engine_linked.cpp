// SPDX-License-Identifier: Apache-2.0
// The library that programs link carries the Fast DDS engine itself.

#include "engine.hpp"

namespace cerulion::bridge::detail {

Result<std::unique_ptr<BridgeImpl>> create_engine(BridgeOptions options) {
  return create_dds_bridge(std::move(options));
}

}  // namespace cerulion::bridge::detail
