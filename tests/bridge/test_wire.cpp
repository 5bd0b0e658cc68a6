// SPDX-License-Identifier: Apache-2.0
// The names and CDR a bridge puts on the wire are ROS 2's, byte for byte.

#include <catch2/catch.hpp>

#include <vector>

#include "cerulion/bridge/ros_types.hpp"

using namespace cerulion;
using namespace cerulion::bridge;

namespace {
std::vector<std::byte> bytes(std::initializer_list<int> v) {
  std::vector<std::byte> out;
  for (int b : v) out.push_back(static_cast<std::byte>(b));
  return out;
}
std::vector<std::byte> encode(WireType type, const std::vector<std::byte>& payload) {
  std::vector<std::byte> out(cdr_size(type, payload.size()));
  write_cdr(type, payload, out.data());
  return out;
}
}  // namespace

TEST_CASE("Local topics are named as ROS 2 names its topics on DDS", "[bridge][wire]") {
  CHECK(dds_topic_name("/robot/camera") == "rt/robot/camera");
  CHECK(local_topic_name("rt/robot/camera") == std::optional<std::string>("/robot/camera"));
  CHECK_FALSE(local_topic_name("rq/robot/get_stateRequest").has_value());
  CHECK_FALSE(local_topic_name("rt/").has_value());
  CHECK(dds_type_name(WireType::String) == "std_msgs::msg::dds_::String_");
  CHECK(dds_type_name(WireType::ByteArray) == "std_msgs::msg::dds_::UInt8MultiArray_");
  CHECK(wire_type_of("std_msgs::msg::dds_::String_") == WireType::String);
  CHECK_FALSE(wire_type_of("rcl_interfaces::msg::dds_::Log_").has_value());
  CHECK(wire_type_for(TopicType{"json", {}}) == WireType::String);
  CHECK(wire_type_for(TopicType{}) == WireType::ByteArray);
}

TEST_CASE("A string is CDR little-endian with its length counting the NUL", "[bridge][wire]") {
  CHECK(encode(WireType::String, bytes({'h', 'i'})) == bytes({0, 1, 0, 0, 3, 0, 0, 0, 'h', 'i', 0}));
  CHECK(encode(WireType::String, {}) == bytes({0, 1, 0, 0, 1, 0, 0, 0, 0}));
  const auto padded = bytes({0, 1, 0, 0, 3, 0, 0, 0, 'h', 'i', 0, 0});
  auto back = read_cdr(WireType::String, padded);
  REQUIRE(back.has_value());
  CHECK(std::vector<std::byte>(back->begin(), back->end()) == bytes({'h', 'i'}));
  // Big-endian CDR reads too.
  const auto big_endian = bytes({0, 0, 0, 0, 0, 0, 0, 3, 'h', 'i', 0});
  back = read_cdr(WireType::String, big_endian);
  REQUIRE(back.has_value());
  CHECK(back->size() == 2);
}

TEST_CASE("A byte array is an empty layout then the bytes", "[bridge][wire]") {
  CHECK(encode(WireType::ByteArray, bytes({7, 8, 9})) ==
        bytes({0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 7, 8, 9}));
  // A layout with one dimension ("x", size 3, stride 3) as ROS 2 would send it, then data_offset.
  auto with_dim = bytes({0, 1, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 'x', 0, 0, 0,  // dim count, label "x" + pad
                         3, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0,                 // size, stride, data_offset
                         3, 0, 0, 0, 7, 8, 9});
  auto back = read_cdr(WireType::ByteArray, with_dim);
  REQUIRE(back.has_value());
  CHECK(std::vector<std::byte>(back->begin(), back->end()) == bytes({7, 8, 9}));
}

TEST_CASE("Malformed CDR is refused rather than read past its end", "[bridge][wire]") {
  CHECK_FALSE(read_cdr(WireType::String, bytes({0, 1, 0})).has_value());
  CHECK_FALSE(read_cdr(WireType::String, bytes({0, 1, 0, 0, 9, 0, 0, 0, 'h'})).has_value());
  CHECK_FALSE(read_cdr(WireType::String, bytes({0, 1, 0, 0, 0, 0, 0, 0})).has_value());  // no NUL room
  CHECK_FALSE(read_cdr(WireType::ByteArray, bytes({0, 1, 0, 0, 0xff, 0xff, 0xff, 0xff})).has_value());
  CHECK_FALSE(read_cdr(WireType::ByteArray, bytes({0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})).has_value());
}
