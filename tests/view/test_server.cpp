// SPDX-License-Identifier: Apache-2.0
// A view server over real topics, spoken to with a minimal WebSocket client: the handshake,
// advertise, subscribe, message frames byte for byte, topics appearing and going away, the page.

#include "view_helpers.hpp"
#include "topic_types.hpp"

using namespace viewtest;

TEST_CASE("A client gets serverInfo, then each topic advertised with its encoding and schema", "[view][server]") {
  LiveServer live;
  const std::string topic = test::unique_topic("imu");
  auto pub = live.publisher(topic, test::imu_json_type());
  REQUIRE(pub.publish_text(R"({"x":1})").ok());
  test::WsClient client(live.port());
  CHECK(client.subprotocol() == "foxglove.websocket.v1");
  auto first = client.read();
  REQUIRE(first);
  REQUIRE(first->text);
  const auto info = json::parse(first->data);
  CHECK(info["op"] == "serverInfo");
  CHECK(info["name"] == "cerulion view");
  const auto channel = channel_of(client, topic);
  REQUIRE_FALSE(channel.is_null());
  CHECK(channel["encoding"] == "json");
  CHECK(channel["schemaName"] == "Imu");
  CHECK(channel["schemaEncoding"] == "jsonschema");
  CHECK(channel["schema"] == test::kImuJsonSchema);
}

TEST_CASE("A subscribed client receives each message byte for byte in a binary frame", "[view][server]") {
  LiveServer live;
  const std::string topic = test::unique_topic("bytes");
  auto [pub, connected, channel] = read_topic(live, topic);
  test::WsClient& client = *connected;
  CHECK(channel["encoding"] == "x-cerulion-bytes");
  subscribe(client, 42, channel["id"]);
  REQUIRE(test::eventually([&] { return live.server->counts().subscriptions == 1; }));
  const auto before = std::chrono::system_clock::now().time_since_epoch();
  std::vector<std::string> sent;
  for (int i = 0; i < 40; ++i) {
    std::string payload(static_cast<std::size_t>(i * 997 % 5000), '\0');
    for (std::size_t k = 0; k < payload.size(); ++k) payload[k] = static_cast<char>((k * 31 + i) & 0xff);
    sent.push_back(payload);
    REQUIRE(pub.publish_text(payload).ok());
    REQUIRE(tap_has_read(topic, live.domain, 2 + i));
  }
  for (const auto& expected : sent) {
    auto frame = next_binary(client);
    REQUIRE(frame);
    REQUIRE(frame->size() == 13 + expected.size());
    CHECK(frame->at(0) == 1);
    CHECK(u32_at(*frame, 1) == 42);
    const std::uint64_t receive_ns = static_cast<std::uint64_t>(u32_at(*frame, 5)) | (static_cast<std::uint64_t>(u32_at(*frame, 9)) << 32);
    CHECK(receive_ns >= static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(before).count()));
    CHECK(frame->substr(13) == expected);
  }
}

TEST_CASE("After unsubscribing a client receives no more messages of the channel", "[view][server]") {
  LiveServer live;
  const std::string a = test::unique_topic("a"), b = test::unique_topic("b");
  auto pa = live.publisher(a);
  auto pb = live.publisher(b);
  REQUIRE(pa.publish_text("a").ok());
  REQUIRE(pb.publish_text("b").ok());
  REQUIRE(tap_has_read(a, live.domain, 1));
  test::WsClient client(live.port());
  const auto ca = channel_of(client, a);
  REQUIRE_FALSE(ca.is_null());
  subscribe(client, 1, ca["id"]);
  REQUIRE(test::eventually([&] { return live.server->counts().subscriptions == 1; }));
  REQUIRE(pa.publish_text("a1").ok());
  auto frame = next_binary(client);
  REQUIRE(frame);
  CHECK(frame->substr(13) == "a1");
  client.send_text(R"({"op":"unsubscribe","subscriptionIds":[1]})");
  REQUIRE(test::eventually([&] { return live.server->counts().subscriptions == 0; }));
  REQUIRE(pa.publish_text("a2").ok());
  REQUIRE(tap_has_read(a, live.domain, 3));
  // A request answered after the publish shows the connection is through with it: no frame came.
  client.send_text(R"({"op":"unsubscribe","subscriptionIds":[1]})");
  auto next = client.read();
  REQUIRE(next);
  CHECK(next->text);
  CHECK(json::parse(next->data)["op"] == "status");
}

TEST_CASE("A topic that appears is advertised, and unadvertised when its publisher leaves", "[view][server]") {
  LiveServer live;
  test::WsClient client(live.port());
  REQUIRE_FALSE(next_op(client, "serverInfo").is_null());
  const std::string topic = test::unique_topic("later");
  json channel;
  {
    auto pub = live.publisher(topic, test::pose_json_type());
    REQUIRE(pub.publish_text(R"({"y":2})").ok());
    channel = channel_of(client, topic);
    REQUIRE_FALSE(channel.is_null());
    CHECK(channel["schemaName"] == "Pose");
  }
  const auto gone = next_op(client, "unadvertise", std::chrono::seconds(15));
  REQUIRE_FALSE(gone.is_null());
  CHECK(gone["channelIds"] == json::array({channel["id"]}));
  CHECK(live.server->counts().channels.empty());
  // It comes back as a new channel when a publisher does.
  auto again = live.publisher(topic, test::pose_json_type());
  REQUIRE(again.publish_text(R"({"y":3})").ok());
  const auto back = channel_of(client, topic);
  REQUIRE_FALSE(back.is_null());
  CHECK(back["id"] != channel["id"]);
}

TEST_CASE("A topic that existed before the server is advertised before its next message", "[view][server]") {
  const std::string domain = test::unique_domain("view");
  const std::string topic = test::unique_topic("quiet");
  PublisherOptions o;
  o.topic.domain = domain;
  o.topic.type = test::imu_json_type();
  auto pub = Publisher::create(topic, o);
  REQUIRE(pub.ok());
  REQUIRE(pub->publish_text(R"({"x":1})").ok());
  LiveServer live({}, domain);
  test::WsClient client(live.port());
  const auto channel = channel_of(client, topic);
  REQUIRE_FALSE(channel.is_null());
  CHECK(channel["schemaName"] == "Imu");
  // Its next message comes on the same channel.
  subscribe(client, 5, channel["id"]);
  REQUIRE(test::eventually([&] { return live.server->counts().subscriptions == 1; }));
  REQUIRE(pub->publish_text(R"({"x":2})").ok());
  const auto frame = next_binary(client);
  REQUIRE(frame);
  CHECK(frame->substr(13) == R"({"x":2})");
}

TEST_CASE("GET / is the page, GET /channels.json the channels with their counts", "[view][server][page]") {
  LiveServer live;
  const std::string topic = test::unique_topic("counted");
  auto pub = live.publisher(topic, test::imu_json_type());
  REQUIRE(pub.publish_text(R"({"x":1})").ok());
  REQUIRE(tap_has_read(topic, live.domain, 1));
  const auto page = test::http_get(live.port(), "/");
  CHECK(page.status == 200);
  CHECK(page.content_type.find("text/html") == 0);
  CHECK(page.body.find("foxglove.websocket.v1") != std::string::npos);
  const auto list = test::http_get(live.port(), "/channels.json");
  CHECK(list.status == 200);
  const auto channels = json::parse(list.body);
  REQUIRE(channels.size() == 1);
  CHECK(channels[0]["topic"] == topic);
  CHECK(channels[0]["encoding"] == "json");
  CHECK(channels[0]["messages"] == 1);
  // The keys of the status file's channels (view status --json), not a spelling of the page's own.
  CHECK(channels[0]["last_size_bytes"] == 7);
  CHECK_FALSE(channels[0].contains("size"));
  CHECK(test::http_get(live.port(), "/nothing").status == 404);
}

TEST_CASE("Topics that came and went before the view could open them are counted lost, and named", "[view][server][removed]") {
  recording::EventQueue events;
  view::ViewOptions options;
  options.events = &events;
  LiveServer live(options);
  // Created, published twice and left at once: faster than the view's discovery.
  const int topics = 10;
  for (int i = 0; i < topics; ++i) {
    auto pub = live.publisher("/flash/t" + std::to_string(i));
    REQUIRE(pub.publish_text("a").ok());
    REQUIRE(pub.publish_text("b").ok());
  }
  // Each topic the view never opened is said once by name, and its two messages are in `lost`.
  std::uint64_t said = 0;
  const bool counted = test::eventually([&] {
    for (const auto& e : events.drain()) {
      if (e.message.find("came and went before it could be read: 2 messages missed") != std::string::npos) ++said;
    }
    return said > 0 && live.server->counts().lost == 2 * said;
  });
  INFO("said " << said << ", lost " << live.server->counts().lost);
  CHECK(counted);
  CHECK(said <= static_cast<std::uint64_t>(topics));
}
