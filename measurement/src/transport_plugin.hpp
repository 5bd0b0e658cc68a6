// SPDX-License-Identifier: Apache-2.0
#pragma once
// The table a transport plugin (transport-fastdds.so, transport-iceoryx.so) gives the registry in
// transport.cpp: the transport's two make_ functions, so that only a process that uses the
// transport loads its library.

#include <memory>

#include "cerulion/measurement/transport.hpp"
#include "cerulion/plugin/plugin.hpp"

namespace cerulion::measurement {

struct TransportPlugin {
  Result<std::unique_ptr<Requester>> (*requester)(const RequesterOptions&);
  Result<std::unique_ptr<Responder>> (*responder)(const ResponderOptions&);
};

}  // namespace cerulion::measurement
