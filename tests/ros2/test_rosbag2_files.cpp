// SPDX-License-Identifier: Apache-2.0
// Real rosbag2 recordings (ros2/rosbag2's test resources in ../shared/reference/ros2) decoded with
// the schemas they carry, to the values rosbag2's test fixtures wrote.

#include <catch2/catch.hpp>

#include <filesystem>
#include <map>

#include "cerulion/recorder/reader.hpp"
#include "cerulion/ros2/cdr.hpp"

using namespace cerulion;

namespace {

/// Every message of `file` decoded, by topic, in file order.
std::map<std::string, std::vector<nlohmann::ordered_json>> decode_all(const std::string& file) {
  auto reader = recorder::Reader::open(file);
  REQUIRE(reader.ok());
  std::map<std::string, std::vector<nlohmann::ordered_json>> out;
  std::map<std::uint16_t, ros2::CdrCodec> codecs;
  REQUIRE(reader->read_messages({}, [&](const recorder::MessageView& m) {
    auto it = codecs.find(m.channel.id);
    if (it == codecs.end()) {
      REQUIRE(m.schema);
      CHECK(m.schema->encoding == "ros2msg");
      const std::string text(reinterpret_cast<const char*>(m.schema->data.data()), m.schema->data.size());
      auto set = ros2::parse_schema(m.schema->name, text);
      INFO(m.schema->name << ": " << set.message());
      REQUIRE(set.ok());
      auto codec = ros2::CdrCodec::create(*set);
      REQUIRE(codec.ok());
      it = codecs.emplace(m.channel.id, std::move(*codec)).first;
    }
    auto value = it->second.decode(m.message.data);
    INFO(m.channel.topic << ": " << value.message());
    REQUIRE(value.ok());
    out[m.channel.topic].push_back(std::move(*value));
    return true;
  }).ok());
  return out;
}

std::string reference(const std::string& name) {
  return std::string(CERULION_SHARED_REFERENCE) + "/ros2/" + name;
}

}  // namespace

TEST_CASE("rosbag2's cdr_test recording decodes to the values its fixtures wrote", "[ros2][rosbag2]") {
  const std::string file = reference("cdr_test_0.mcap");
  if (!std::filesystem::exists(file)) {
    WARN("skipped: " << file << " is absent");
    return;
  }
  auto topics = decode_all(file);
  REQUIRE(topics["/test_topic"].size() == 3);
  REQUIRE(topics["/array_topic"].size() == 4);
  // rosbag2's test writes BasicTypes with int32_value 123, the rest zero, three times.
  for (const auto& basic : topics["/test_topic"]) {
    INFO(basic.dump());
    CHECK(basic["int32_value"] == 123);
    CHECK(basic["bool_value"] == false);
    CHECK(basic["float64_value"] == 0.0);
    CHECK(basic.size() == 13);
  }
  const auto& arrays = topics["/array_topic"];
  INFO(arrays[0].dump());
  CHECK(arrays[0]["string_values"].size() == 3);
  CHECK(arrays[0]["int32_values_default"] == nlohmann::json::array({0, 2147483647, -2147483648LL}));
}

TEST_CASE("A rosbag2 recording with an empty message type decodes every message", "[ros2][rosbag2]") {
  const std::string file = reference("ra.mcap");
  if (!std::filesystem::exists(file)) {
    WARN("skipped: " << file << " is absent");
    return;
  }
  auto topics = decode_all(file);
  CHECK(topics["a_empty"].size() == 100);
  CHECK(topics["b_basictypes"].size() == 50);
  CHECK(topics["a_empty"][0] == nlohmann::ordered_json::object());
}
