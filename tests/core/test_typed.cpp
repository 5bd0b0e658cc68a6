// SPDX-License-Identifier: Apache-2.0
// Typed messages: a trivially copyable struct travels as its own bytes, and is read back only
// when the payload is exactly that struct.

#include <catch2/catch.hpp>

#include <array>
#include <span>
#include <string_view>

#include "helpers.hpp"
#include "process.hpp"

using namespace cerulion;
using namespace cerulion::test;

namespace {
struct Imu {
  std::uint64_t stamp_ns;
  double angular_velocity[3];
  double linear_acceleration[3];
};
struct Frame {
  std::uint32_t index;
  std::uint8_t rgb[64][48][3];
};
}  // namespace

// What may travel as itself, and what would only publish an address.
static_assert(Message<Imu>);
static_assert(Message<std::array<float, 3>>);
static_assert(!Message<const char*>);
static_assert(!Message<std::string_view>);
static_assert(!Message<std::span<const std::byte>>);
static_assert(!Message<std::string>);
static_assert(!Message<char[6]>);

TEST_CASE("A struct published by value is read back field for field", "[typed]") {
  const std::string topic = unique_topic("typed_value");
  auto sub = Subscriber::create(topic);
  REQUIRE(sub.ok());
  auto pub = Publisher::create(topic);
  REQUIRE(pub.ok());
  const Imu sent{42, {0.1, 0.2, 0.3}, {9.8, 0.0, -0.1}};
  REQUIRE(pub->publish(sent).ok());
  auto sample = sub->receive(std::chrono::seconds(2));
  REQUIRE(sample.ok());
  auto imu = sample->as<Imu>();
  REQUIRE(imu.ok());
  CHECK((*imu)->stamp_ns == 42);
  CHECK((*imu)->angular_velocity[2] == 0.3);
  CHECK((*imu)->linear_acceleration[0] == 9.8);
}

TEST_CASE("A typed loan is written in place and published without a copy", "[typed]") {
  const std::string topic = unique_topic("typed_loan");
  auto sub = Subscriber::create(topic);
  REQUIRE(sub.ok());
  auto pub = Publisher::create(topic);
  REQUIRE(pub.ok());
  auto loan = pub->loan_as<Frame>();
  REQUIRE(loan.ok());
  Frame* frame = loan->get();
  frame->index = 7;
  frame->rgb[63][47][2] = 200;
  REQUIRE(pub->publish(std::move(*loan)).ok());
  auto sample = sub->receive(std::chrono::seconds(2));
  REQUIRE(sample.ok());
  CHECK(sample->size() == sizeof(Frame));
  auto got = sample->as<Frame>();
  REQUIRE(got.ok());
  CHECK((*got)->index == 7);
  CHECK((*got)->rgb[63][47][2] == 200);
  // Zero copy: the subscriber reads the very bytes the loan wrote.
  CHECK(static_cast<const void*>(*got) == static_cast<const void*>(sample->data().data()));
}

TEST_CASE("A payload of another size is refused as the type, and nothing is read", "[typed]") {
  const std::string topic = unique_topic("typed_mismatch");
  auto sub = Subscriber::create(topic);
  REQUIRE(sub.ok());
  auto pub = Publisher::create(topic);
  REQUIRE(pub.ok());
  SECTION("shorter") { REQUIRE(pub->publish_copy(bytes_of("hello")).ok()); }
  SECTION("longer") { REQUIRE(pub->publish(Frame{}).ok()); }
  SECTION("empty") { REQUIRE(pub->publish_copy({}).ok()); }
  auto sample = sub->receive(std::chrono::seconds(2));
  REQUIRE(sample.ok());
  auto imu = sample->as<Imu>();
  REQUIRE_FALSE(imu.ok());
  CHECK(imu.code() == ErrorCode::InvalidArgument);
  CHECK_THAT(imu.message(), Catch::Contains(std::to_string(sizeof(Imu)) + " bytes"));
}

TEST_CASE("Text is published from a string view and read back as one", "[typed]") {
  const std::string topic = unique_topic("typed_text");
  auto sub = Subscriber::create(topic);
  REQUIRE(sub.ok());
  auto pub = Publisher::create(topic);
  REQUIRE(pub.ok());
  REQUIRE(pub->publish_text(std::string_view("{\"x\": 1}")).ok());
  REQUIRE(pub->publish_text("").ok());
  auto first = sub->receive(std::chrono::seconds(2));
  REQUIRE(first.ok());
  CHECK(first->text() == "{\"x\": 1}");
  CHECK(first->size() == 8);
  auto empty = sub->receive(std::chrono::seconds(2));
  REQUIRE(empty.ok());
  CHECK(empty->text().empty());
}
