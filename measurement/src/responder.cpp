// SPDX-License-Identifier: Apache-2.0
#include "cerulion/measurement/responder.hpp"

#include "cerulion/measurement/cpu_pinning.hpp"

namespace cerulion::measurement {

Status run_responder(const ResponderRunOptions& options) {
  if (options.cpu && !pin_current_thread(*options.cpu)) {
    return {ErrorCode::SystemError, "cannot pin to CPU " + std::to_string(*options.cpu)};
  }
  auto responder = create_responder(options.transport, options.transport_options);
  if (!responder.ok()) return responder.status();
  if (options.ready) options.ready->store(true);
  return (*responder)->serve();
}

}  // namespace cerulion::measurement
