// SPDX-License-Identifier: Apache-2.0
#pragma once
// The two ROS 2 types as Fast DDS TopicDataTypes, written by hand over ros_types' CDR.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include <fastdds/dds/topic/TopicDataType.hpp>

#include "cerulion/bridge/ros_types.hpp"

namespace cerulion::bridge::detail {

/// One message either way: `outgoing` is what write() serializes (a view of a tapped sample,
/// valid during the call); take() deserializes into `buffer`, whose first `size` bytes are then
/// the payload. The buffer only grows and is never zero-filled.
struct WireMessage {
  std::span<const std::byte> outgoing;
  std::unique_ptr<std::byte[]> buffer;
  std::size_t capacity = 0;
  std::size_t size = 0;

  std::span<const std::byte> payload() const noexcept { return {buffer.get(), size}; }
};

class WireTopicType final : public eprosima::fastdds::dds::TopicDataType {
 public:
  explicit WireTopicType(WireType type);
  bool serialize(void* data, eprosima::fastrtps::rtps::SerializedPayload_t* payload) override;
  bool deserialize(eprosima::fastrtps::rtps::SerializedPayload_t* payload, void* data) override;
  std::function<std::uint32_t()> getSerializedSizeProvider(void* data) override;
  void* createData() override;
  void deleteData(void* data) override;
  bool getKey(void*, eprosima::fastrtps::rtps::InstanceHandle_t*, bool) override { return false; }

 private:
  WireType type_;
};

}  // namespace cerulion::bridge::detail
