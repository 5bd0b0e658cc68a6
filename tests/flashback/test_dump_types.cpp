// SPDX-License-Identifier: Apache-2.0
// A dump carries each topic's type (message encoding and schema) as the keeper kept it in the
// store: after the topic's publisher has gone, after the topic itself is gone, after a takeover.

#include <thread>

#include "cerulion/core/discovery.hpp"
#include "cerulion/core/publisher.hpp"
#include "cerulion/flashback/keeper.hpp"
#include "child.hpp"
#include "helpers.hpp"
#include "store_impl.hpp"
#include "topic_types.hpp"

using namespace fbtest;
using cerulion::flashback::Keeper;
using cerulion::flashback::KeeperOptions;
using cerulion::flashback::Store;
using cerulion::flashback::detail::impl_of;
using cerulion::test::imu_json_type;
using cerulion::test::pose_json_type;

TEST_CASE("A flashback dump carries each topic's type, after its publisher and its topic are gone", "[flashback][types]") {
  TestDomain domain;
  auto keeper = Keeper::start(keeper_of_all(domain));
  requireOk(keeper.status());
  {
    PublisherOptions typed;
    typed.topic.domain = domain.name;
    typed.topic.type = imu_json_type();
    PublisherOptions raw;
    raw.topic.domain = domain.name;
    auto imu = Publisher::create("/imu", typed);
    auto bytes = Publisher::create("/bytes", raw);
    requireOk(imu.status());
    requireOk(bytes.status());
    const std::string json = R"({"x":1})";
    const std::span<const std::byte> message(reinterpret_cast<const std::byte*>(json.data()), json.size());
    // Topics created after the keeper started are read from their first message.
    for (int i = 0; i < 5; ++i) {
      requireOk(imu->publish_copy(message).status());
      requireOk(bytes->publish_copy(message).status());
    }
    REQUIRE(cerulion::test::eventually([&] { return keeper->status().messages == 10; }));
  }
  // The publishers are gone; so are the topics.
  for (const auto& topic : {"/imu", "/bytes"}) (void)clean_domain(domain.name, false, topic);
  REQUIRE_FALSE(inspect_topic("/imu", domain.name).ok());
  auto dump = dump_and_read(keeper->store());
  CHECK(dump.problems.empty());
  CHECK(dump.messages.size() == 10);
  CHECK(dump.types["/imu"] == imu_json_type());
  CHECK(dump.types["/bytes"].raw());
  CHECK(dump.schema_records == 1);
}

TEST_CASE("A store keeps one record per distinct type, and a keeper taking over keeps them", "[flashback][store][types]") {
  TestDomain domain;
  {
    auto store = Store::open_for_keeper(domain.name, "k", {.memory_bytes = 8 << 20});
    requireOk(store.status());
    auto& impl = impl_of(*store);
    auto a = impl.channel_for("/a", "lockstep", 16, 4096, imu_json_type());
    REQUIRE(a);
    const auto kept = impl.header().types_length.load();
    CHECK(kept > 0);
    auto b = impl.channel_for("/b", "lockstep", 16, 4096, imu_json_type());
    REQUIRE(b);
    CHECK(impl.header().types_length.load() == kept);
    auto c = impl.channel_for("/c", "lockstep", 16, 4096, pose_json_type());
    auto d = impl.channel_for("/d", "lockstep", 16, 4096);
    REQUIRE(c);
    REQUIRE(d);
    CHECK(impl.header().types_length.load() > kept);
    // A topic is in a dump when it has messages there.
    for (auto id : {*a, *b, *c, *d}) requireOk(impl.append(id, 0, realtime_ns(), realtime_ns(), payload(0, 8)));
  }
  auto reader = Store::open(domain.name, "k");
  requireOk(reader.status());
  auto dump = dump_and_read(*reader);
  CHECK(dump.types["/a"] == imu_json_type());
  CHECK(dump.types["/b"] == imu_json_type());
  CHECK(dump.types["/c"] == pose_json_type());
  CHECK(dump.types["/d"].raw());
  CHECK(dump.schema_records == 2);
  // A later keeper shares what the first kept.
  auto next = Store::open_for_keeper(domain.name, "k", {.memory_bytes = 8 << 20});
  requireOk(next.status());
  const auto kept = impl_of(*next).header().types_length.load();
  auto e = impl_of(*next).channel_for("/e", "lockstep", 16, 4096, pose_json_type());
  REQUIRE(e);
  CHECK(impl_of(*next).header().types_length.load() == kept);
  requireOk(impl_of(*next).append(*e, 0, realtime_ns(), realtime_ns(), payload(0, 8)));
  CHECK(dump_and_read(*next).types["/e"] == pose_json_type());
}
