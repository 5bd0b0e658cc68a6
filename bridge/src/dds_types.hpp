// SPDX-License-Identifier: Apache-2.0
#pragma once
// A bridged DDS type as a Fast DDS TopicDataType, written by hand over ros_types' CDR: one per DDS
// type name, registered when a topic of it is first bridged. What a sample carries on the wire is
// the CDR as it is; a message written says how it is to be put there (wrapped in a std_msgs type,
// or whole), and a message taken holds the CDR whole, for the importer to unwrap.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include <fastdds/dds/topic/TopicDataType.hpp>

#include "cerulion/bridge/ros_types.hpp"

namespace cerulion::bridge::detail {

/// One message either way: `outgoing` is what write() serializes as `wire` says (a view of a
/// tapped sample, valid during the call); take() copies the sample's CDR into `buffer`, whose first
/// `size` bytes are then the message. The buffer only grows and is never zero-filled.
struct WireMessage {
  std::span<const std::byte> outgoing;
  WireType wire = WireType::ByteArray;
  std::unique_ptr<std::byte[]> buffer;
  std::size_t capacity = 0;
  std::size_t size = 0;

  std::span<const std::byte> cdr() const noexcept { return {buffer.get(), size}; }
};

class WireTopicType final : public eprosima::fastdds::dds::TopicDataType {
 public:
  explicit WireTopicType(const std::string& dds_type_name);
  bool serialize(void* data, eprosima::fastrtps::rtps::SerializedPayload_t* payload) override;
  bool deserialize(eprosima::fastrtps::rtps::SerializedPayload_t* payload, void* data) override;
  std::function<std::uint32_t()> getSerializedSizeProvider(void* data) override;
  void* createData() override;
  void deleteData(void* data) override;
  bool getKey(void*, eprosima::fastrtps::rtps::InstanceHandle_t*, bool) override { return false; }
};

}  // namespace cerulion::bridge::detail
