// SPDX-License-Identifier: Apache-2.0
// The plugin bridge.so: the Fast DDS engine for the `cerulion` program (engine_plugin.cpp).

#include "cerulion/plugin/plugin.hpp"
#include "engine.hpp"

CERULION_PLUGIN_TABLE(cerulion::bridge::detail::BridgePlugin, {&cerulion::bridge::detail::create_dds_bridge})
