// SPDX-License-Identifier: Apache-2.0
#include "cerulion/core/message.hpp"

#include <cstdint>

namespace cerulion::detail {

Status check_message_view(const void* data, std::size_t size, std::size_t type_size, std::size_t type_align) {
  if (size != type_size) {
    return {ErrorCode::InvalidArgument, "the message is " + std::to_string(size) + " bytes, the type asked for " +
                                            std::to_string(type_size) + " bytes: a publisher of another type?"};
  }
  if (reinterpret_cast<std::uintptr_t>(data) % type_align != 0) {
    return {ErrorCode::InvalidArgument,
            "the message is not aligned for the type asked for (" + std::to_string(type_align) + " bytes)"};
  }
  return Status::success();
}

}  // namespace cerulion::detail
