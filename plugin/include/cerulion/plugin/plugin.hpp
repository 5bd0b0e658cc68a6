// SPDX-License-Identifier: Apache-2.0
#pragma once
// Capabilities that need a large library of their own (the bridge and the bench's peer lanes need
// Fast DDS, the iceoryx lane iceoryx) are plugins: shared objects that only the commands using
// them load, so that every other command starts without those libraries and what they bring
// (OpenSSL, SQLite...).
//
// A plugin carries its own copy of the cerulion code it needs and exports one C function,
// kEntrySymbol, that returns its table of functions, or null when asked by another build than its
// own (the table's types are this build's C++ types). What a table holds is the capability's
// business (the bridge's, a transport's); the loader only finds, loads and checks.
//
//   struct FooPlugin { Result<int> (*frob)(const FooOptions&); };          // the capability's
//   CERULION_PLUGIN_TABLE(FooPlugin, {&frob_with_fast_dds})                 // in the plugin
//   auto table = cerulion::plugin::load<FooPlugin>("foo");                  // where it is used
//
// A loaded plugin stays loaded until the process ends: objects it made may outlive any caller.

#include <string>
#include <string_view>

#include "cerulion/core/status.hpp"

namespace cerulion::plugin {

/// The function every plugin exports: given the loader's build token, its table, or null.
inline constexpr const char* kEntrySymbol = "cerulion_plugin_table";
using Entry = const void* (*)(const char* build);

/// The build a loader and a plugin must share (version and compiler).
inline constexpr const char* kBuild = CERULION_PLUGIN_BUILD;

/// Where plugins are looked for: $CERULION_PLUGIN_DIR when set; else the installed directory
/// beside this program (<prefix>/lib/cerulion, found from /proc/self/exe); else, for a program of
/// the build tree, the build's own. A build's directory is never searched by a program outside
/// that build tree, so an installed program cannot load what someone leaves there.
[[nodiscard]] std::string directory();

/// The table of plugin `name` (<directory()>/<name>.so), loaded once per process. NotFound naming
/// the file when it is missing, Incompatible when it comes from another build, SystemError with
/// the dynamic loader's line when it cannot be loaded (a library it needs is missing).
[[nodiscard]] Result<const void*> load_table(std::string_view name);

template <class Table>
[[nodiscard]] Result<const Table*> load(std::string_view name) {
  auto table = load_table(name);
  if (!table.ok()) return table.status();
  return static_cast<const Table*>(*table);
}

}  // namespace cerulion::plugin

/// Defines the plugin's entry, returning `table` (a Table made of `__VA_ARGS__`) to this build only.
#define CERULION_PLUGIN_TABLE(Table, ...)                                                       \
  extern "C" __attribute__((visibility("default"))) const void* cerulion_plugin_table(         \
      const char* build) {                                                                      \
    static const Table table = __VA_ARGS__;                                                     \
    return std::string_view(build) == ::cerulion::plugin::kBuild ? &table : nullptr;            \
  }
