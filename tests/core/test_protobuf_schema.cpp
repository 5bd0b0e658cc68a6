// SPDX-License-Identifier: Apache-2.0
// A protobuf schema's message types read from a FileDescriptorSet's bytes (built by hand here):
// fully qualified names, the one a schema takes by default, and anyone's bytes refused cleanly.

#include <catch2/catch.hpp>

#include <random>

#include "cerulion/core/protobuf_schema.hpp"
#include "cerulion/core/topic_type.hpp"
#include "protobuf_descriptors.hpp"

using namespace cerulion;
namespace pb = cerulion::test::pb;

namespace {

using Names = std::vector<std::string>;

ProtobufMessageTypes read_ok(const std::string& bytes) {
  auto types = read_protobuf_message_types(bytes);
  INFO(types.message());
  REQUIRE(types.ok());
  return *types;
}

void require_malformed(const std::string& bytes, const std::string& says) {
  auto types = read_protobuf_message_types(bytes);
  REQUIRE_FALSE(types.ok());
  CHECK(types.code() == ErrorCode::InvalidArgument);
  CHECK_THAT(types.message(), Catch::StartsWith("not a protobuf FileDescriptorSet: ") && Catch::Contains(says));
}

/// `depth` message types "M", each nested in the one before: the lengths first, innermost out, then
/// the bytes outermost first (building it by nesting strings would copy it `depth` times).
std::string nested_types(std::size_t depth) {
  const std::string name = pb::field(1, "M");
  std::vector<std::size_t> length{name.size()};  // [k]: the type k + 1 levels from the innermost
  while (length.size() < depth) length.push_back(name.size() + 1 + pb::varint(length.back()).size() + length.back());
  std::string outermost;
  for (std::size_t k = depth - 1; k > 0; --k) outermost += name + "\x1a" + pb::varint(length[k - 1]);
  outermost += name;
  return pb::set({pb::file("deep.proto", "d", {outermost})});
}

}  // namespace

TEST_CASE("A descriptor set's message types are named fully qualified, nested ones too", "[protobuf_schema]") {
  const auto types = read_ok(pb::imu_descriptor_set());
  CHECK(types.all == Names{"fb.Imu", "fb.Imu.Covariance"});
  CHECK(types.top_level == Names{"fb.Imu"});
  CHECK(types.primary == Names{"fb.Imu"});
  CHECK(*sole_message_type(types) == "fb.Imu");

  const auto bare = read_ok(pb::set({pb::file("imu.proto", "", {pb::message_type("Imu")})}));
  CHECK(*sole_message_type(bare) == "Imu");
}

TEST_CASE("A set made with its imports names the message type of the file nothing imports", "[protobuf_schema]") {
  // As protoc --include_imports writes it: the imports first.
  const auto types = read_ok(pb::set({
      pb::file("std/header.proto", "std", {pb::message_type("Header"), pb::message_type("Stamp")}),
      pb::file("geo/vector.proto", "geo", {pb::message_type("Vector3")}, {"std/header.proto"}),
      pb::file("imu.proto", "fb", {pb::message_type("Imu")}, {"std/header.proto", "geo/vector.proto"}),
  }));
  CHECK(types.top_level == Names{"std.Header", "std.Stamp", "geo.Vector3", "fb.Imu"});
  CHECK(types.primary == Names{"fb.Imu"});
  CHECK(*sole_message_type(types) == "fb.Imu");
}

TEST_CASE("A set without exactly one candidate message type is refused, listing the candidates", "[protobuf_schema]") {
  SECTION("two in the file nothing imports: those two") {
    const auto types = read_ok(pb::set({
        pb::file("std/header.proto", "std", {pb::message_type("Header")}),
        pb::file("sensors.proto", "fb", {pb::message_type("Imu"), pb::message_type("Gps")}, {"std/header.proto"}),
    }));
    auto name = sole_message_type(types);
    REQUIRE_FALSE(name.ok());
    CHECK(name.code() == ErrorCode::InvalidArgument);
    CHECK(name.message() == "defines 2 message types, not one: fb.Imu, fb.Gps");
  }
  SECTION("files importing each other: every top-level type") {
    const auto types = read_ok(pb::set({
        pb::file("a.proto", "p", {pb::message_type("A")}, {"b.proto"}),
        pb::file("b.proto", "p", {pb::message_type("B")}, {"a.proto"}),
    }));
    CHECK(types.primary.empty());
    CHECK(sole_message_type(types).message() == "defines 2 message types, not one: p.A, p.B");
  }
  SECTION("a file importing itself is still what the set is for") {
    const auto types = read_ok(pb::set({pb::file("a.proto", "p", {pb::message_type("A")}, {"a.proto"})}));
    CHECK(types.primary == Names{"p.A"});
  }
  SECTION("none") {
    CHECK(sole_message_type(read_ok("")).message() == "defines no message type");
    CHECK(sole_message_type(read_ok(pb::set({pb::file("empty.proto", "e", {})}))).message() == "defines no message type");
  }
  SECTION("many: the first twelve") {
    std::vector<std::string> messages;
    for (int i = 0; i < 14; ++i) messages.push_back(pb::message_type("M" + std::to_string(i)));
    const auto types = read_ok(pb::set({pb::file("many.proto", "m", messages)}));
    CHECK_THAT(sole_message_type(types).message(),
               Catch::StartsWith("defines 14 message types, not one: m.M0, m.M1,") &&
                   Catch::EndsWith("m.M11 and 2 more"));
  }
}

TEST_CASE("A schema name is checked against every message type of the set, nested ones included", "[protobuf_schema]") {
  const auto types = read_ok(pb::imu_descriptor_set());
  CHECK(check_message_type(types, "fb.Imu").ok());
  CHECK(check_message_type(types, "fb.Imu.Covariance").ok());
  for (const char* wrong : {"imu", "Imu", ".fb.Imu", "fb.Covariance", ""}) {
    Status st = check_message_type(types, wrong);
    INFO(wrong);
    CHECK(st.code() == ErrorCode::InvalidArgument);
    CHECK(st.message() == "'" + std::string(wrong) + "' is not a message type of the set (it defines fb.Imu, fb.Imu.Covariance)");
  }
  CHECK(check_message_type(read_ok(""), "fb.Imu").message() == "'fb.Imu': the set defines no message type");
}

TEST_CASE("Fields a descriptor has besides names are skipped, whatever their wire type", "[protobuf_schema]") {
  const std::string varint_field = pb::varint((5 << 3) | 0) + pb::varint(300);
  const std::string fixed64 = pb::varint((6 << 3) | 1) + std::string(8, '\x7f');
  const std::string fixed32 = pb::varint((7 << 3) | 5) + std::string(4, '\x01');
  const std::string other = varint_field + fixed64 + fixed32 + pb::field(9, "options");
  // Before and after the names, at every level; a field number past 2^29 too.
  const std::string imu = other + pb::message_type("Imu", {other + pb::message_type("Covariance") + other}) +
                          pb::varint((std::uint64_t{1} << 40) | 0) + pb::varint(1);
  const std::string file = other + pb::file("imu.proto", "fb", {imu}) + other;
  const auto types = read_ok(other + pb::field(1, file) + other);
  CHECK(types.all == Names{"fb.Imu", "fb.Imu.Covariance"});
}

TEST_CASE("A field given twice takes its last value, as protobuf does", "[protobuf_schema]") {
  const auto types = read_ok(pb::set({pb::field(2, "old") + pb::file("imu.proto", "fb", {pb::field(1, "Old") + pb::message_type("Imu")})}));
  CHECK(types.all == Names{"fb.Imu"});
}

TEST_CASE("Bytes that are not a descriptor set are refused saying where, never read past their end",
          "[protobuf_schema][hostile]") {
  const std::string good = pb::imu_descriptor_set();
  SECTION("named cases") {
    require_malformed("\x0a", "a truncated varint at byte 1");
    require_malformed("\x0a\x05" "abc", "a field of 5 bytes where 3 are left at byte 0");
    require_malformed(std::string("\x0a\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 11),
                      "a field of 18446744073709551615 bytes where 0 are left");
    require_malformed(std::string(11, '\x80') + "\x01", "a varint longer than 10 bytes at byte 0");
    require_malformed("\x0b", "wire type 3 at byte 0");  // a group
    require_malformed("\x0e", "wire type 6 at byte 0");
    require_malformed(std::string("\x00\x00", 2), "field number 0 at byte 0");
    require_malformed("\x09" "1234567", "a truncated fixed-size field at byte 0");
    require_malformed("\x08\x01", "field 1 is not length-delimited");
    require_malformed(pb::set({pb::file("a.proto", "p", {pb::field(3, pb::message_type("Inner"))})}),
                      "a message type without a name at byte");
    require_malformed(pb::set({pb::file("a.proto", "p", {pb::message_type("")})}), "a message type without a name");
    // Where inside the set it broke: the offset counts from the start of the whole input.
    require_malformed(pb::set({pb::field(4, "\x0a\x09" "Imu")}), "a field of 9 bytes where 3 are left at byte 4");
  }
  SECTION("every truncation of a good set is read or refused") {
    for (std::size_t n = 0; n < good.size(); ++n) {
      auto types = read_protobuf_message_types(std::string_view(good).substr(0, n));
      if (!types.ok()) CHECK(types.code() == ErrorCode::InvalidArgument);
    }
  }
  SECTION("nesting deeper than 100 is refused, not a stack overflow") {
    CHECK(read_ok(nested_types(100)).all.size() == 100);
    require_malformed(nested_types(101), "message types nested more than 100 deep");
    require_malformed(nested_types(1'000'000), "message types nested more than 100 deep");
  }
  SECTION("a long package times many types is refused before it takes the memory") {
    std::vector<std::string> messages(20, pb::message_type("M"));
    require_malformed(pb::set({pb::file("big.proto", std::string(1u << 20, 'p'), messages)}),
                      "more than 16 MiB of names");
  }
  SECTION("random bytes, and good ones with a byte changed, are read or refused") {
    std::mt19937 random(37);
    std::uniform_int_distribution<int> byte(0, 255);
    for (int round = 0; round < 20'000; ++round) {
      std::string bytes = good;
      if (round % 2 == 0) {
        bytes.assign(static_cast<std::size_t>(random() % 64), '\0');
        for (auto& b : bytes) b = static_cast<char>(byte(random));
      } else {
        bytes[random() % bytes.size()] = static_cast<char>(byte(random));
      }
      auto types = read_protobuf_message_types(bytes);
      if (!types.ok()) REQUIRE(types.code() == ErrorCode::InvalidArgument);
    }
  }
}
