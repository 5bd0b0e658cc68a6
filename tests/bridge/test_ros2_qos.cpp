// SPDX-License-Identifier: Apache-2.0
// Durability between a bridge and ROS 2 nodes. A bridge's writers keep the last --depth messages
// (transient local): a ROS 2 reader asking for transient local gets them when it joins, one with
// the default volatile QoS only what comes after. A bridge imports from volatile writers (ROS 2's
// default) and from transient-local ones (their history included), each message once even when
// both kinds write one topic.

#include <catch2/catch.hpp>

#include <map>

#include "bridge_helpers.hpp"
#include "ros2_node.hpp"

using namespace cerulion;
using namespace cerulion::test;

namespace {

std::string json_of(int i) { return R"({"i": )" + std::to_string(i) + "}"; }

/// The texts a reader has, appended to `into`.
void take_texts(fdds::DataReader* reader, std::vector<std::string>& into) {
  RawCdr got;
  fdds::SampleInfo info;
  while (reader->take_next_sample(&got, &info) == ReturnCode_t::RETCODE_OK)
    if (info.valid_data) into.push_back(ros_text(got));
}

/// The subscriptions `reader` matched.
int matched(fdds::DataReader* reader) {
  fdds::SubscriptionMatchedStatus s{};
  reader->get_subscription_matched_status(s);
  return s.current_count;
}

/// Messages the bridge process of `domain` exported on `topic`, as its status file says.
std::uint64_t exported(const std::string& domain, const std::string& topic) {
  auto listing = bridge::read_status_files(bridge::kDefaultStatusDirectory, domain);
  if (!listing) return 0;
  for (const auto& b : listing->bridges)
    for (const auto& t : b.topics)
      if (t.topic == topic && !t.imported) return t.messages;
  return 0;
}

}  // namespace

TEST_CASE("A ROS 2 reader joining late gets the last --depth messages with transient local, only new ones with volatile",
          "[bridge][ros2][durability]") {
  const std::string domain = unique_domain("brdur"), topic = unique_topic("ros_late");
  const std::uint32_t dds = test_dds_domain();
  // The bridge in a process of its own, as a ROS 2 node would meet it (Fast DDS delivers within one
  // process by a path of its own, which loses a late volatile reader's start).
  BackgroundProcess bridge({cerulion_binary(), "--domain", domain, "bridge", "-a", "--export", "--depth", "10",
                            "--dds-domain", std::to_string(dds)});
  REQUIRE(eventually([&] {  // running: the topic will be new to it, read from its first message
    auto listing = bridge::read_status_files(bridge::kDefaultStatusDirectory, domain);
    return listing && !listing->bridges.empty();
  }, std::chrono::seconds(30)));
  PublisherOptions po;
  po.topic.domain = domain;
  po.topic.type = TopicType{"json", {}};
  auto pub = Publisher::create(topic, po);
  REQUIRE(pub.ok());
  for (int i = 0; i < 15; ++i) REQUIRE(pub->publish_text(json_of(i)).ok());
  REQUIRE(eventually([&] { return exported(domain, topic) == 15; }, std::chrono::seconds(30)));

  PlainNode node(dds);
  auto* dds_topic = node.topic("rt" + topic, "std_msgs::msg::dds_::String_");
  auto* fresh = node.subscriber->create_datareader(dds_topic, node.reader_qos());
  auto* durable = node.subscriber->create_datareader(dds_topic, node.reader_qos(true));
  REQUIRE(fresh);
  REQUIRE(durable);
  REQUIRE(eventually([&] { return matched(fresh) == 1 && matched(durable) == 1; }, std::chrono::seconds(30)));
  // The transient-local reader gets the writer's last ten; taken before more come, so that its own
  // history of ten keeps them all.
  std::vector<std::string> got_durable, got_fresh;
  REQUIRE(eventually([&] {
    take_texts(durable, got_durable);
    return got_durable.size() >= 10;
  }, std::chrono::seconds(30)));
  for (int i = 15; i < 20; ++i) REQUIRE(pub->publish_text(json_of(i)).ok());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while ((got_durable.size() < 15 || got_fresh.size() < 5) && std::chrono::steady_clock::now() < deadline) {
    take_texts(durable, got_durable);
    take_texts(fresh, got_fresh);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // anything more would show now
  take_texts(durable, got_durable);
  take_texts(fresh, got_fresh);
  std::vector<std::string> last_and_new, only_new;
  for (int i = 5; i < 20; ++i) last_and_new.push_back(json_of(i));
  for (int i = 15; i < 20; ++i) only_new.push_back(json_of(i));
  CHECK(got_durable == last_and_new);
  CHECK(got_fresh == only_new);
}

TEST_CASE("A bridge imports a ROS 2 transient-local writer from its first messages beside a volatile one, each once",
          "[bridge][ros2][durability]") {
  const std::string domain = unique_domain("brimp"), topic = unique_topic("ros_kinds");
  const std::uint32_t dds = test_dds_domain();
  PlainNode node(dds);
  auto* dds_topic = node.topic("rt" + topic, "std_msgs::msg::dds_::String_");
  // The transient-local writer writes its first five before any bridge runs.
  auto* durable = node.publisher->create_datawriter(dds_topic, node.writer_qos(true));
  REQUIRE(durable);
  for (int i = 0; i < 5; ++i) {
    auto m = ros_string("durable " + std::to_string(i));
    REQUIRE(durable->write(&m));
  }
  SubscriberOptions so;
  so.topic.domain = domain;
  auto sub = Subscriber::create(topic, so);
  REQUIRE(sub.ok());
  auto b = start_bridge(domain, dds, bridge::Direction::Import);
  auto* fresh = node.publisher->create_datawriter(dds_topic, node.writer_qos());
  REQUIRE(fresh);
  // The transient-local writer is matched by both of the bridge's readers (the volatile one leaves
  // its samples to the other), the volatile writer by the volatile reader alone.
  const auto matched = [](fdds::DataWriter* w) {
    fdds::PublicationMatchedStatus s{};
    w->get_publication_matched_status(s);
    return s.current_count;
  };
  REQUIRE(eventually([&] { return matched(durable) == 2 && matched(fresh) == 1; }, std::chrono::seconds(30)));
  for (int i = 5; i < 10; ++i) {
    auto m = ros_string("durable " + std::to_string(i));
    REQUIRE(durable->write(&m));
  }
  for (int i = 0; i < 5; ++i) {
    auto m = ros_string("volatile " + std::to_string(i));
    REQUIRE(fresh->write(&m));
  }

  std::map<std::string, int> copies;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (copies.size() < 15 && std::chrono::steady_clock::now() < deadline) {
    if (auto got = sub->receive(std::chrono::milliseconds(100)); got.ok()) ++copies[std::string(got->text())];
  }
  while (auto got = sub->receive(std::chrono::milliseconds(1000))) ++copies[std::string(got->text())];
  CHECK(copies.size() == 15);
  for (int i = 0; i < 10; ++i) CHECK(copies["durable " + std::to_string(i)] == 1);
  for (int i = 0; i < 5; ++i) CHECK(copies["volatile " + std::to_string(i)] == 1);
}
