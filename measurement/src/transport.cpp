// SPDX-License-Identifier: Apache-2.0
// The transports this build knows. A transport whose library was not found at build time is still
// listed, unavailable, so a user learns why a lane is missing.

#include "cerulion/measurement/transport.hpp"

#include "transport_iceoryx.hpp"
#include "transport_native.hpp"

namespace cerulion::measurement {

#if CERULION_MEASUREMENT_HAVE_FASTDDS
Result<std::unique_ptr<Requester>> make_fastdds_requester(const RequesterOptions& options);
Result<std::unique_ptr<Responder>> make_fastdds_responder(const ResponderOptions& options);
#endif
#if CERULION_MEASUREMENT_HAVE_ICEORYX
Result<std::unique_ptr<Requester>> make_iceoryx_requester(const RequesterOptions& options);
Result<std::unique_ptr<Responder>> make_iceoryx_responder(const ResponderOptions& options);
#endif

namespace {

struct Entry {
  const char* name;
  const char* missing;  ///< why it is unavailable; nullptr when built in
  Result<std::unique_ptr<Requester>> (*requester)(const RequesterOptions&);
  Result<std::unique_ptr<Responder>> (*responder)(const ResponderOptions&);
};

const Entry kEntries[] = {
    {"native", nullptr, make_native_requester, make_native_responder},
#if CERULION_MEASUREMENT_HAVE_FASTDDS
    {"fastdds", nullptr, make_fastdds_requester, make_fastdds_responder},
#else
    {"fastdds", "built without Fast DDS (libfastrtps-dev was not found)", nullptr, nullptr},
#endif
#if CERULION_MEASUREMENT_HAVE_ICEORYX
    {"iceoryx", nullptr, make_iceoryx_requester, make_iceoryx_responder},
#else
    {"iceoryx", "built without iceoryx (libiceoryx-posh-dev was not found)", nullptr, nullptr},
#endif
};

// What the build cannot tell: a transport that needs a daemon this machine lacks.
std::string missing_here(const Entry& e) {
  if (e.missing) return e.missing;
  if (std::string_view(e.name) == "iceoryx") return iceoryx::unavailable_reason();
  return "";
}

Result<const Entry*> find(std::string_view name) {
  for (const Entry& e : kEntries) {
    if (name != e.name) continue;
    if (const std::string missing = missing_here(e); !missing.empty()) {
      return Status{ErrorCode::InvalidArgument, "transport '" + std::string(name) + "': " + missing};
    }
    return &e;
  }
  return Status{ErrorCode::NotFound, "no transport named '" + std::string(name) + "'"};
}

}  // namespace

std::vector<TransportInfo> transports() {
  std::vector<TransportInfo> out;
  for (const Entry& e : kEntries) {
    const std::string missing = missing_here(e);
    out.push_back({e.name, missing.empty(), missing});
  }
  return out;
}

Result<std::unique_ptr<Requester>> create_requester(std::string_view transport, const RequesterOptions& options) {
  auto entry = find(transport);
  if (!entry.ok()) return entry.status();
  return (*entry)->requester(options);
}

Result<std::unique_ptr<Responder>> create_responder(std::string_view transport, const ResponderOptions& options) {
  auto entry = find(transport);
  if (!entry.ok()) return entry.status();
  return (*entry)->responder(options);
}

}  // namespace cerulion::measurement
