// SPDX-License-Identifier: Apache-2.0
// Unbounded types, as ROS 2's are: Fast DDS grows its histories' payloads on demand, and never
// picks data sharing (which needs a bounded, plain type).

#include "dds_types.hpp"

#include <cstring>
#include <limits>

#include <fastdds/rtps/common/SerializedPayload.h>

namespace cerulion::bridge::detail {

namespace rtps = eprosima::fastrtps::rtps;

WireTopicType::WireTopicType(WireType type) : type_(type) {
  setName(std::string(dds_type_name(type)).c_str());
  m_typeSize = static_cast<std::uint32_t>(cdr_size(type, 64));  // initial size; grown on demand
  m_isGetKeyDefined = false;
  auto_fill_type_object(false);
  auto_fill_type_information(false);
}

bool WireTopicType::serialize(void* data, rtps::SerializedPayload_t* payload) {
  const auto* m = static_cast<WireMessage*>(data);
  const std::size_t need = cdr_size(type_, m->outgoing.size());
  if (need > payload->max_size) return false;
  write_cdr(type_, m->outgoing, reinterpret_cast<std::byte*>(payload->data));
  payload->encapsulation = CDR_LE;
  payload->length = static_cast<std::uint32_t>(need);
  return true;
}

bool WireTopicType::deserialize(rtps::SerializedPayload_t* payload, void* data) {
  auto* m = static_cast<WireMessage*>(data);
  auto body = read_cdr(type_, {reinterpret_cast<const std::byte*>(payload->data), payload->length});
  if (!body) return false;
  if (body->size() > m->capacity) {
    m->buffer.reset(new std::byte[body->size()]);
    m->capacity = body->size();
  }
  if (!body->empty()) std::memcpy(m->buffer.get(), body->data(), body->size());
  m->size = body->size();
  return true;
}

std::function<std::uint32_t()> WireTopicType::getSerializedSizeProvider(void* data) {
  const WireType type = type_;
  return [data, type] {
    const std::size_t n = cdr_size(type, static_cast<WireMessage*>(data)->outgoing.size());
    return static_cast<std::uint32_t>(std::min<std::size_t>(n, std::numeric_limits<std::uint32_t>::max()));
  };
}

void* WireTopicType::createData() { return new WireMessage; }
void WireTopicType::deleteData(void* data) { delete static_cast<WireMessage*>(data); }

}  // namespace cerulion::bridge::detail
