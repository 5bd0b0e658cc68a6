// SPDX-License-Identifier: Apache-2.0
// The payload area laid out again as messages grow (layout.hpp): small messages sit side by side,
// a topic's size follows what it carries, and every message arrives intact across a re-layout.

#include <catch2/catch.hpp>

#include <cstddef>
#include <sys/resource.h>
#include <vector>

#include "helpers.hpp"
#include "child.hpp"
#include "process.hpp"
#include "segment.hpp"

using namespace cerulion;
using namespace cerulion::test;
using namespace std::chrono_literals;

namespace {

/// `size` bytes that say which message they belong to.
std::vector<std::byte> pattern(std::size_t size, std::uint32_t message) {
  std::vector<std::byte> bytes(size);
  for (std::size_t i = 0; i < size; ++i) bytes[i] = static_cast<std::byte>((i * 131 + message * 7) & 0xff);
  return bytes;
}

bool carries(const Sample& sample, std::size_t size, std::uint32_t message) {
  const auto want = pattern(size, message);
  return sample.size() == size && std::memcmp(sample.data().data(), want.data(), size) == 0;
}

std::uint64_t segment_bytes(const std::string& topic) {
  auto info = inspect_topic(topic);
  REQUIRE(info.ok());
  return info->segment_bytes;
}

std::uint64_t resident_bytes(const std::string& topic) {
  auto info = inspect_topic(topic);
  REQUIRE(info.ok());
  return info->resident_bytes;
}

constexpr std::uint64_t kMiB = 1ull << 20;

}  // namespace

TEST_CASE("Small messages sit one stride apart and keep the segment small", "[generations]") {
  const std::string topic = unique_topic("small");
  auto pub = Publisher::create(topic, publisher_options(Mode::Lockstep, 4));
  auto sub = Subscriber::create(topic, subscriber_options());
  REQUIRE(pub.ok());
  REQUIRE(sub.ok());
  std::vector<const std::byte*> where;
  for (std::uint32_t i = 0; i < 3; ++i) {
    REQUIRE(pub->publish_copy(pattern(64, i), 1s).ok());
    auto got = sub->receive(1s);
    REQUIRE(got.ok());
    CHECK(carries(*got, 64, i));
    where.push_back(got->data().data());
  }
  // Round robin over the hot slots: consecutive messages in consecutive slots, 128 B apart.
  CHECK(where[1] - where[0] == static_cast<std::ptrdiff_t>(detail::kSmallestStride));
  CHECK(where[2] - where[1] == static_cast<std::ptrdiff_t>(detail::kSmallestStride));
  // The file ends with generation 0, a few pages of 128 B slots: where the 1 GiB ceiling for
  // every slot made it 80 GiB. (The type area before it is sparse and never mapped.)
  const detail::LayoutPlan plan = detail::plan_layout(4, kDefaultMaxPayload);
  CHECK(segment_bytes(topic) == plan.total_bytes);
  CHECK(plan.total_bytes - plan.payload_offset == detail::round_up(plan.slot_count * detail::kSmallestStride, detail::kPageBytes));
}

TEST_CASE("A topic's payload area grows with its messages and every size arrives intact", "[generations]") {
  const Mode mode = GENERATE(Mode::Lockstep, Mode::FreeRun);
  CAPTURE(mode == Mode::Lockstep ? "lockstep" : "free run");
  const std::string topic = unique_topic("grow");
  // Deep enough that the held first message leaves lockstep room for all the others.
  auto pub = Publisher::create(topic, publisher_options(mode, 16));
  auto sub = Subscriber::create(topic, subscriber_options());
  REQUIRE(pub.ok());
  REQUIRE(sub.ok());
  REQUIRE(pub->publish_copy(pattern(64, 0), 1s).ok());
  auto first = sub->receive(1s);  // held across every re-layout below
  REQUIRE(first.ok());
  const std::vector<std::size_t> sizes = {1000, 5000, 200'000, 1 * kMiB, 16 * kMiB, 100, 3 * kMiB};
  for (std::uint32_t i = 0; i < sizes.size(); ++i) {
    CAPTURE(sizes[i]);
    REQUIRE(pub->publish_copy(pattern(sizes[i], i + 1), 1s).ok());
    auto got = sub->receive(1s);
    REQUIRE(got.ok());
    CHECK(got->lost_before() == 0);
    CHECK(carries(*got, sizes[i], i + 1));
  }
  CHECK(carries(*first, 64, 0));
  // 80 slots of the 16 MiB generation and the narrower ones before it: about 2.5 GiB of sparse
  // file, not 80 slots of the ceiling.
  CHECK(segment_bytes(topic) >= 80 * 16 * kMiB);
  CHECK(segment_bytes(topic) < 3 * 1024 * kMiB);
}

TEST_CASE("A subscriber joining after the topic grew reads the wider generation", "[generations]") {
  const std::string topic = unique_topic("late");
  auto pub = Publisher::create(topic, publisher_options(Mode::Lockstep, 4));
  REQUIRE(pub.ok());
  auto early = Subscriber::create(topic, subscriber_options());
  REQUIRE(early.ok());
  REQUIRE(pub->publish_copy(pattern(2 * kMiB, 1), 1s).ok());
  auto late = Subscriber::create(topic, subscriber_options());
  REQUIRE(late.ok());
  REQUIRE(pub->publish_copy(pattern(2 * kMiB, 2), 1s).ok());
  auto got = late->receive(1s);
  REQUIRE(got.ok());
  CHECK(carries(*got, 2 * kMiB, 2));
  for (std::uint32_t i = 1; i <= 2; ++i) {
    auto e = early->receive(1s);
    REQUIRE(e.ok());
    CHECK(carries(*e, 2 * kMiB, i));
  }
}

TEST_CASE("Two publishers of different sizes share a topic in different generations", "[generations]") {
  const std::string topic = unique_topic("mixed");
  auto small = Publisher::create(topic, publisher_options(Mode::Lockstep, 4));
  auto large = Publisher::create(topic, publisher_options(Mode::Lockstep, 4));
  auto sub = Subscriber::create(topic, subscriber_options());
  REQUIRE(small.ok());
  REQUIRE(large.ok());
  REQUIRE(sub.ok());
  for (std::uint32_t i = 0; i < 20; ++i) {
    const std::size_t size = i % 2 == 0 ? 64 : 2 * kMiB;
    REQUIRE((i % 2 == 0 ? small : large)->publish_copy(pattern(size, i), 1s).ok());
    auto got = sub->receive(1s);
    REQUIRE(got.ok());
    CHECK(got->sequence() == i);
    CHECK(carries(*got, size, i));
  }
}

TEST_CASE("A slot that moves to a wider generation gives back the memory it held in the narrower one", "[generations]") {
  const std::string topic = unique_topic("punch");
  auto pub = Publisher::create(topic, publisher_options(Mode::Lockstep, 4));
  auto sub = Subscriber::create(topic, subscriber_options());
  REQUIRE(pub.ok());
  REQUIRE(sub.ok());
  auto cycle = [&](std::size_t size) {
    for (std::uint32_t i = 0; i < 16; ++i) {  // every hot slot (depth + 4) twice
      REQUIRE(pub->publish_copy(pattern(size, i), 1s).ok());
      REQUIRE(sub->receive(1s).ok());
    }
  };
  cycle(1 * kMiB);
  const std::uint64_t after_small = resident_bytes(topic);
  CHECK(after_small >= 8 * kMiB);
  cycle(4 * kMiB + 1);
  // 8 hot slots of 4 MiB; the 1 MiB pages they held in the narrower generation are gone.
  CHECK(resident_bytes(topic) < 8 * (4 * kMiB + kMiB));
}

TEST_CASE("A ring entry naming a payload generation the segment lacks is reported as damage", "[generations]") {
  const std::string topic = unique_topic("badgen");
  auto pub = Publisher::create(topic, publisher_options(Mode::Lockstep, 4));
  auto sub = Subscriber::create(topic, subscriber_options());
  REQUIRE(pub.ok());
  REQUIRE(sub.ok());
  const detail::LayoutPlan plan = detail::plan_layout(4, kDefaultMaxPayload);
  // Past the ceiling's last generation, and one within it the file was never extended to hold.
  const std::uint32_t forged = GENERATE_COPY(plan.generations + 5, plan.generations - 1);
  CAPTURE(forged);
  REQUIRE(pub->publish_copy(pattern(64, 0), 1s).ok());
  scribble(topic, plan.log_offset + offsetof(detail::LogEntry, generation),
           std::string(reinterpret_cast<const char*>(&forged), sizeof forged));
  auto got = sub->receive(1s);
  REQUIRE_FALSE(got.ok());
  CHECK(got.code() == ErrorCode::Corrupted);
  CHECK(got.message().find("payload generation") != std::string::npos);
}

TEST_CASE("A loan whose generation does not fit the process's address space is refused with a clear error", "[generations]") {
  const std::string topic = unique_topic("nomap");
  // In a child, whose address space is capped a little above what it uses: 80 slots of 64 MiB
  // (5 GiB) cannot be mapped there. The parent keeps the topic and reads what the child published.
  auto sub = Subscriber::create(topic, subscriber_options());
  REQUIRE(sub.ok());
  Child child([&](Child&) {
    auto pub = Publisher::create(topic, publisher_options(Mode::Lockstep, std::nullopt));
    if (!pub.ok()) return 3;
    const rlimit cap{1ull << 30, 1ull << 30};
    if (::setrlimit(RLIMIT_AS, &cap) != 0) return 4;
    auto loan = pub->loan(64 * kMiB, 1s);
    if (loan.ok()) return 5;
    if (loan.code() != ErrorCode::OutOfMemory) return 6;
    if (loan.message().find("address space") == std::string::npos) return 7;
    // The topic still works at the sizes that fit.
    if (!pub->publish_copy(pattern(64, 1), 1s).ok()) return 8;
    return 0;
  });
  CHECK(child.join() == 0);
  auto got = sub->receive(1s);
  REQUIRE(got.ok());
  CHECK(carries(*got, 64, 1));
}
