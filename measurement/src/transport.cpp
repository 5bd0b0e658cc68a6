// SPDX-License-Identifier: Apache-2.0
// The transports this build knows. A transport whose library was not found at build time is still
// listed, unavailable, so a user learns why a lane is missing. The peer transports are plugins
// (transport_plugin.hpp), loaded by the first process that asks for one.

#include "cerulion/measurement/transport.hpp"

#include "transport_iceoryx.hpp"
#include "transport_native.hpp"
#include "transport_plugin.hpp"

namespace cerulion::measurement {

namespace {

struct Entry {
  const char* name;
  const char* missing;  ///< why it is unavailable; nullptr when built (in or as a plugin)
  const char* plugin;   ///< the plugin that holds it; nullptr when built in
  TransportPlugin functions;  ///< a built-in one's
};

const Entry kEntries[] = {
    {"native", nullptr, nullptr, {make_native_requester, make_native_responder}},
#if CERULION_MEASUREMENT_HAVE_FASTDDS
    {"fastdds", nullptr, "transport-fastdds", {}},
#else
    {"fastdds", "built without Fast DDS (libfastrtps-dev was not found)", nullptr, {}},
#endif
#if CERULION_MEASUREMENT_HAVE_ICEORYX
    {"iceoryx", nullptr, "transport-iceoryx", {}},
#else
    {"iceoryx", "built without iceoryx (libiceoryx-posh-dev was not found)", nullptr, {}},
#endif
};

// The entry's functions, loading its plugin; why it cannot be used here when it cannot (a daemon
// this machine lacks is what the build cannot tell).
Result<TransportPlugin> resolve(const Entry& e) {
  if (e.missing) return Status(ErrorCode::InvalidArgument, e.missing);
  if (std::string_view(e.name) == "iceoryx") {
    if (std::string missing = iceoryx::unavailable_reason(); !missing.empty()) {
      return Status(ErrorCode::InvalidArgument, std::move(missing));
    }
  }
  if (!e.plugin) return e.functions;
  auto table = plugin::load<TransportPlugin>(e.plugin);
  if (!table) return table.status();
  return **table;
}

Result<TransportPlugin> find(std::string_view name) {
  for (const Entry& e : kEntries) {
    if (name != e.name) continue;
    auto functions = resolve(e);
    if (!functions) {
      return Status{ErrorCode::InvalidArgument, "transport '" + std::string(name) + "': " + functions.message()};
    }
    return functions;
  }
  std::string names;
  for (const Entry& e : kEntries) names += (names.empty() ? "" : ", ") + std::string(e.name);
  return Status{ErrorCode::NotFound, "no transport named '" + std::string(name) + "' (" + names + ")"};
}

}  // namespace

std::vector<TransportInfo> transports() {
  std::vector<TransportInfo> out;
  for (const Entry& e : kEntries) out.push_back(*transport_info(e.name));
  return out;
}

std::optional<TransportInfo> transport_info(std::string_view name) {
  for (const Entry& e : kEntries) {
    if (name != e.name) continue;
    auto functions = resolve(e);
    return TransportInfo{e.name, functions.ok(), functions.ok() ? std::string() : functions.message()};
  }
  return std::nullopt;
}

Status check_transport(std::string_view transport) { return find(transport).status(); }

Result<std::unique_ptr<Requester>> create_requester(std::string_view transport, const RequesterOptions& options) {
  auto entry = find(transport);
  if (!entry.ok()) return entry.status();
  return entry->requester(options);
}

Result<std::unique_ptr<Responder>> create_responder(std::string_view transport, const ResponderOptions& options) {
  auto entry = find(transport);
  if (!entry.ok()) return entry.status();
  return entry->responder(options);
}

}  // namespace cerulion::measurement
