// SPDX-License-Identifier: Apache-2.0
// Unbounded types, as ROS 2's are: Fast DDS grows its histories' payloads on demand, and never
// picks data sharing (which needs a bounded, plain type).

#include "dds_types.hpp"

#include <cstring>
#include <limits>

#include <fastdds/rtps/common/SerializedPayload.h>

namespace cerulion::bridge::detail {

namespace rtps = eprosima::fastrtps::rtps;

WireTopicType::WireTopicType(const std::string& dds_type_name) {
  setName(dds_type_name.c_str());
  m_typeSize = 128;  // initial size; grown on demand
  m_isGetKeyDefined = false;
  auto_fill_type_object(false);
  auto_fill_type_information(false);
}

bool WireTopicType::serialize(void* data, rtps::SerializedPayload_t* payload) {
  const auto* m = static_cast<WireMessage*>(data);
  const std::size_t need = cdr_size(m->wire, m->outgoing.size());
  if (need > payload->max_size || need < 4) return false;
  write_cdr(m->wire, m->outgoing, reinterpret_cast<std::byte*>(payload->data));
  // What the header says (Fast DDS writes it from here): XCDR1 little-endian for all the bridge sends.
  payload->encapsulation = payload->data[1] == 0 ? CDR_BE : CDR_LE;
  payload->length = static_cast<std::uint32_t>(need);
  return true;
}

bool WireTopicType::deserialize(rtps::SerializedPayload_t* payload, void* data) {
  auto* m = static_cast<WireMessage*>(data);
  const std::size_t n = payload->length;
  if (n > m->capacity) {
    m->buffer.reset(new std::byte[n]);
    m->capacity = n;
  }
  if (n) std::memcpy(m->buffer.get(), payload->data, n);
  m->size = n;
  return true;
}

std::function<std::uint32_t()> WireTopicType::getSerializedSizeProvider(void* data) {
  return [data] {
    const auto* m = static_cast<WireMessage*>(data);
    const std::size_t n = cdr_size(m->wire, m->outgoing.size());
    return static_cast<std::uint32_t>(std::min<std::size_t>(n, std::numeric_limits<std::uint32_t>::max()));
  };
}

void* WireTopicType::createData() { return new WireMessage; }
void WireTopicType::deleteData(void* data) { delete static_cast<WireMessage*>(data); }

}  // namespace cerulion::bridge::detail
