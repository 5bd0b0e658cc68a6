// SPDX-License-Identifier: Apache-2.0
// CDR read and written with types from .msg text: bytes as ROS 2 puts them on the wire, test_msgs
// round trips, XCDR2 and big-endian, and malformed messages named by field, fuzzed.

#include <catch2/catch.hpp>

#include <random>

#include "cerulion/ros2/cdr.hpp"
#include "cerulion/ros2/msg_path.hpp"
#include "ros2_msgs.hpp"

using namespace cerulion;
using namespace cerulion::ros2;

namespace {

CdrCodec codec_of(const std::string& type) {
  auto schema = load_schema(MsgPath{{test::ros2_msg_path()}}, type);
  REQUIRE(schema.ok());
  auto set = parse_schema(schema->name, schema->data);
  REQUIRE(set.ok());
  auto codec = CdrCodec::create(*set);
  REQUIRE(codec.ok());
  return std::move(*codec);
}

std::vector<std::byte> bytes_of(std::initializer_list<int> values) {
  std::vector<std::byte> out;
  for (int v : values) out.push_back(static_cast<std::byte>(v));
  return out;
}

nlohmann::json pose_stamped() {
  return {{"header", {{"stamp", {{"sec", 17}, {"nanosec", 5}}}, {"frame_id", "map"}}},
          {"pose", {{"position", {{"x", 1.5}, {"y", -2.25}, {"z", 3.0}}},
                    {"orientation", {{"x", 0.0}, {"y", 0.0}, {"z", 0.0}, {"w", 1.0}}}}}};
}

}  // namespace

TEST_CASE("A std_msgs String is the CDR a ROS 2 node sends", "[ros2][cdr]") {
  auto codec = codec_of("std_msgs/msg/String");
  auto bytes = codec.encode({{"data", "hi"}});
  REQUIRE(bytes.ok());
  CHECK(*bytes == bytes_of({0, 1, 0, 0, 3, 0, 0, 0, 'h', 'i', 0}));
  auto value = codec.decode(*bytes);
  REQUIRE(value.ok());
  CHECK(value->dump() == R"({"data":"hi"})");
}

TEST_CASE("Primitives are aligned to their size after the header in XCDR1 and to 4 at most in XCDR2",
          "[ros2][cdr]") {
  auto set = parse_schema("pkg/msg/T", "uint8 a\nfloat64 b\nuint16 c\n");
  REQUIRE(set.ok());
  auto codec = CdrCodec::create(*set);
  REQUIRE(codec.ok());
  const nlohmann::json value = {{"a", 7}, {"b", 1.0}, {"c", 2}};
  auto xcdr1 = codec->encode(value);
  REQUIRE(xcdr1.ok());
  CHECK(xcdr1->size() == 4 + 8 + 8 + 2);
  auto xcdr2 = codec->encode(value, Encapsulation::Xcdr2Le);
  REQUIRE(xcdr2.ok());
  CHECK(xcdr2->size() == 4 + 4 + 8 + 2);
  CHECK((*xcdr2)[1] == std::byte{0x07});
  auto big = codec->encode(value, Encapsulation::Xcdr1Be);
  REQUIRE(big.ok());
  CHECK((*big)[4 + 8 + 8 + 1] == std::byte{2});  // big-endian: low byte last
  for (const auto* m : {&*xcdr1, &*xcdr2, &*big}) {
    auto back = codec->decode(*m);
    REQUIRE(back.ok());
    CHECK(nlohmann::json(*back) == value);
  }
}

TEST_CASE("uint8 and byte arrays decode as one binary value", "[ros2][cdr]") {
  auto codec = codec_of("sensor_msgs/msg/Image");
  nlohmann::json image = {{"height", 2}, {"width", 3}, {"encoding", "mono8"}, {"step", 3},
                          {"data", nlohmann::json::binary({1, 2, 3, 4, 5, 6})}};
  auto bytes = codec.encode(image);
  REQUIRE(bytes.ok());
  auto back = codec.decode(*bytes);
  REQUIRE(back.ok());
  REQUIRE((*back)["data"].is_binary());
  CHECK((*back)["data"].get_binary() == std::vector<std::uint8_t>{1, 2, 3, 4, 5, 6});
  // As numbers too, which is what JSON input gives.
  image["data"] = {1, 2, 3, 4, 5, 6};
  auto again = codec.encode(image);
  REQUIRE(again.ok());
  CHECK(*again == *bytes);
}

TEST_CASE("Every test_msgs type but WStrings round-trips its defaults in XCDR1 and XCDR2", "[ros2][cdr]") {
  if (test::test_msgs_dir().empty()) {
    WARN("skipped: ros2-test-interface-files is not installed");
    return;
  }
  for (const char* name : {"Arrays", "BasicTypes", "BoundedPlainSequences", "BoundedSequences", "Constants", "Defaults",
                           "Empty", "MultiNested", "Nested", "Strings", "UnboundedSequences"}) {
    INFO(name);
    auto codec = codec_of(std::string("test_msgs/msg/") + name);
    for (auto encapsulation : {Encapsulation::Xcdr1Le, Encapsulation::Xcdr2Le, Encapsulation::Xcdr1Be}) {
      auto bytes = codec.encode(nlohmann::json::object(), encapsulation);
      REQUIRE(bytes.ok());
      auto value = codec.decode(*bytes);
      REQUIRE(value.ok());
      auto again = codec.encode(nlohmann::json(*value), encapsulation);
      REQUIRE(again.ok());
      CHECK(*again == *bytes);
    }
  }
  auto defaults = codec_of("test_msgs/msg/Defaults").decode(*codec_of("test_msgs/msg/Defaults").encode({}));
  REQUIRE(defaults.ok());
  CHECK((*defaults)["int32_value"] == -30000);
  CHECK((*defaults)["float32_value"] == 1.125);
  CHECK((*defaults)["bool_value"] == true);
  auto strings = codec_of("test_msgs/msg/Strings").decode(*codec_of("test_msgs/msg/Strings").encode({}));
  REQUIRE(strings.ok());
  CHECK((*strings)["string_value_default5"] == "Hello\"world!");
}

TEST_CASE("A wstring field is refused by name", "[ros2][cdr]") {
  auto set = parse_schema("test_msgs/msg/WStrings", "wstring wstring_value\n");
  REQUIRE(set.ok());
  auto codec = CdrCodec::create(*set);
  REQUIRE_FALSE(codec.ok());
  CHECK(codec.message().find("'wstring_value': wstring is not supported") != std::string::npos);
}

TEST_CASE("A message shorter than its type says is refused naming the field where it ends", "[ros2][cdr]") {
  auto codec = codec_of("geometry_msgs/msg/PoseStamped");
  auto bytes = codec.encode(pose_stamped());
  REQUIRE(bytes.ok());
  // After the 4-byte header: stamp 0..8, frame_id 8..16, position.x 16..24, y 24..32.
  std::vector<std::byte> cut(bytes->begin(), bytes->begin() + 4 + 28);
  auto value = codec.decode(cut);
  REQUIRE_FALSE(value.ok());
  INFO(value.message());
  CHECK(value.message().find("geometry_msgs/msg/PoseStamped field pose.position.y: the message ends at byte 32") == 0);

  auto points = parse_schema("pkg/msg/Cloud", "geometry_msgs/Point[] points\n===\nMSG: geometry_msgs/Point\nfloat64 x\nfloat64 y\n");
  REQUIRE(points.ok());
  auto cloud = CdrCodec::create(*points);
  REQUIRE(cloud.ok());
  auto full = cloud->encode({{"points", {{{"x", 1}, {"y", 2}}, {{"x", 3}, {"y", 4}}}}});
  REQUIRE(full.ok());
  full->resize(full->size() - 4);
  auto partial = cloud->decode(*full);
  REQUIRE_FALSE(partial.ok());
  INFO(partial.message());
  CHECK(partial.message().find("field points[1].y:") != std::string::npos);
}

TEST_CASE("A message longer than its type is refused as not of that type", "[ros2][cdr]") {
  auto codec = codec_of("std_msgs/msg/String");
  auto bytes = codec.encode({{"data", "hi"}});
  REQUIRE(bytes.ok());
  bytes->resize(bytes->size() + 1);  // padding to a multiple of 4, as writers may add
  CHECK(codec.decode(*bytes).ok());
  bytes->resize(bytes->size() + 8);
  auto value = codec.decode(*bytes);
  REQUIRE_FALSE(value.ok());
  CHECK(value.message() == "std_msgs/msg/String: 9 bytes after its last field: the message is not of this type");
}

TEST_CASE("Headers other than plain CDR are refused naming their bytes", "[ros2][cdr]") {
  auto codec = codec_of("std_msgs/msg/String");
  auto value = codec.decode(bytes_of({0, 3, 0, 0, 1, 0, 0, 0, 0}));
  REQUIRE_FALSE(value.ok());
  CHECK(value.message().find("header 00 03 00 00") != std::string::npos);
  CHECK(check_ros2_wire(bytes_of({0, 1, 0, 0})).ok());
  CHECK(check_ros2_wire(bytes_of({0, 7, 0, 0})).message().find("XCDR2 little-endian") != std::string::npos);
  CHECK(check_ros2_wire(bytes_of({0, 0, 0, 0})).message().find("XCDR1 big-endian") != std::string::npos);
  CHECK_FALSE(check_ros2_wire(bytes_of({0, 1})).ok());
}

TEST_CASE("A value of the wrong kind or an unknown field is named when encoding", "[ros2][cdr]") {
  auto codec = codec_of("geometry_msgs/msg/PoseStamped");
  auto wrong = pose_stamped();
  wrong["pose"]["position"]["y"] = "north";
  auto bytes = codec.encode(wrong);
  REQUIRE_FALSE(bytes.ok());
  CHECK(bytes.message().find("field pose.position.y: \"north\" is not a number") != std::string::npos);
  auto extra = pose_stamped();
  extra["pose"]["speed"] = 1;
  bytes = codec.encode(extra);
  REQUIRE_FALSE(bytes.ok());
  CHECK(bytes.message().find("no field 'speed' in geometry_msgs/msg/Pose") != std::string::npos);
}

TEST_CASE("One hundred thousand mutated messages decode or are refused, never crash", "[ros2][cdr][fuzz]") {
  std::vector<std::pair<CdrCodec, std::vector<std::byte>>> seeds;
  auto pose = codec_of("geometry_msgs/msg/PoseStamped");
  seeds.emplace_back(pose, *pose.encode(pose_stamped()));
  auto cloud = codec_of("sensor_msgs/msg/PointCloud2");
  seeds.emplace_back(cloud, *cloud.encode({{"fields", {{{"name", "x"}, {"datatype", 7}, {"count", 1}}}},
                                           {"data", nlohmann::json::binary(std::vector<std::uint8_t>(64, 9))}}));
  if (!test::test_msgs_dir().empty()) {
    auto multi = codec_of("test_msgs/msg/MultiNested");
    seeds.emplace_back(multi, *multi.encode({}, Encapsulation::Xcdr2Le));
  }
  std::mt19937 random(50);
  std::size_t decoded = 0, refused = 0;
  for (int i = 0; i < 100'000; ++i) {
    auto& [codec, seed] = seeds[i % seeds.size()];
    std::vector<std::byte> m = seed;
    const int edits = 1 + static_cast<int>(random() % 4);
    for (int e = 0; e < edits && !m.empty(); ++e) {
      switch (random() % 3) {
        case 0: m[random() % m.size()] = static_cast<std::byte>(random()); break;
        case 1: m.resize(random() % (m.size() + 1)); break;
        default: m.insert(m.begin() + static_cast<long>(random() % (m.size() + 1)), static_cast<std::byte>(random()));
      }
    }
    auto value = codec.decode(m);
    (value.ok() ? decoded : refused)++;
    if (!value.ok()) REQUIRE_FALSE(value.message().empty());
  }
  CHECK(decoded + refused == 100'000);
  CHECK(refused > 0);
}
