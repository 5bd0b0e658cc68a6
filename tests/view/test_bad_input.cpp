// SPDX-License-Identifier: Apache-2.0
// What clients can do wrong, and clients that misbehave: each gets a status error or its own
// connection closed, and the server goes on serving the others.

#include <thread>

#include "view_helpers.hpp"

using namespace viewtest;

namespace {

std::string status_after(test::WsClient& client, const std::string& request) {
  client.send_text(request);
  const auto status = next_op(client, "status");
  REQUIRE_FALSE(status.is_null());
  CHECK(status["level"] == 2);
  return status["message"];
}

}  // namespace

TEST_CASE("Bad requests get a status error each and the connection keeps working", "[view][server][bad]") {
  LiveServer live;
  auto [pub, connected, channel] = read_topic(live, test::unique_topic("bad"), "x");
  test::WsClient& client = *connected;
  CHECK(status_after(client, "{not json").find("not JSON") != std::string::npos);
  CHECK(status_after(client, R"({"op":"fly"})").find("'fly'") != std::string::npos);
  CHECK(status_after(client, R"({"op":"subscribe","subscriptions":[{"id":1,"channelId":999999}]})").find("no channel 999999") !=
        std::string::npos);
  subscribe(client, 7, channel["id"]);
  CHECK(status_after(client, R"({"op":"subscribe","subscriptions":[{"id":7,"channelId":1}]})").find("id 7 is already in use") !=
        std::string::npos);
  CHECK(status_after(client, R"({"op":"unsubscribe","subscriptionIds":[123]})").find("no subscription 123") !=
        std::string::npos);
  REQUIRE(pub.publish_text("still served").ok());
  auto frame = next_binary(client);
  REQUIRE(frame);
  CHECK(frame->substr(13) == "still served");
}

TEST_CASE("A handshake without the protocol's subprotocol is refused", "[view][server][bad]") {
  LiveServer live;
  CHECK(test::handshake_status(live.port(), "chat") == 400);
  CHECK(test::handshake_status(live.port(), "foxglove.websocket.v1") == 101);
}

TEST_CASE("A request with header fields or a body too large is answered 431 or 413, not reset, and serving goes on",
          "[view][server][bad]") {
  LiveServer live;
  for (const std::size_t size : {std::size_t{20} << 10, std::size_t{60} << 10}) {
    INFO(size << " bytes");
    const auto headers = test::http_request(live.port(), "GET", "/", std::string(size, 'h'));
    CHECK(headers.status == 431);
    CHECK(headers.body.find("request header fields over 16384 bytes") == 0);
    const auto body = test::http_request(live.port(), "POST", "/", {}, std::string(size, 'b'));
    CHECK(body.status == 413);
  }
  // A client that goes on sending long after the answer still gets it.
  CHECK(test::http_request(live.port(), "POST", "/", {}, std::string(std::size_t{4} << 20, 'b')).status == 413);
  CHECK(test::http_get(live.port(), "/channels.json").status == 200);
}

TEST_CASE("A client over max_clients is refused with 503, and one that leaves makes room", "[view][server][bad]") {
  view::ViewOptions o;
  o.max_clients = 2;
  LiveServer live(o);
  auto a = std::make_unique<test::WsClient>(live.port());
  test::WsClient b(live.port());
  REQUIRE(test::eventually([&] { return live.server->counts().clients == 2; }));
  CHECK(test::handshake_status(live.port(), "foxglove.websocket.v1") == 503);
  a.reset();
  REQUIRE(test::eventually([&] { return live.server->counts().clients == 1; }));
  CHECK(test::handshake_status(live.port(), "foxglove.websocket.v1") == 101);
}

TEST_CASE("1,000 connects and disconnects leave the server serving", "[view][server][bad]") {
  LiveServer live;
  for (int i = 0; i < 1000; ++i) {
    test::WsClient client(live.port());
    if (i % 2 == 0) REQUIRE(client.read());  // half read their serverInfo, half leave at once
  }
  // Each handshake completed, so the server counts each; the last ones may still be on their way.
  REQUIRE(test::eventually([&] {
    const auto c = live.server->counts();
    return c.connections == 1000 && c.clients == 0;
  }));
  test::WsClient client(live.port());
  CHECK_FALSE(next_op(client, "serverInfo").is_null());
}

TEST_CASE("A client that never reads holds back no other client, and its queue stays bounded", "[view][server][bad]") {
  view::ViewOptions o;
  o.queue = {.messages = 4, .bytes = 8u << 20};
  LiveServer live(o);
  const std::string topic = test::unique_topic("flood");
  auto pub = live.publisher(topic);
  std::string big(1u << 20, 'z');
  REQUIRE(pub.publish_text(big).ok());
  REQUIRE(tap_has_read(topic, live.domain, 1));
  test::WsClient stalled(live.port());
  test::WsClient reader(live.port());
  const auto c1 = channel_of(stalled, topic);
  const auto c2 = channel_of(reader, topic);
  REQUIRE_FALSE(c1.is_null());
  REQUIRE_FALSE(c2.is_null());
  subscribe(stalled, 1, c1["id"]);
  subscribe(reader, 1, c2["id"]);
  REQUIRE(test::eventually([&] { return live.server->counts().subscriptions == 2; }));
  // Far more than the socket buffers hold: the stalled client's writes stop, its queue fills.
  std::uint64_t published = 1;
  for (int i = 0; i < 200; ++i) {
    big[0] = static_cast<char>('a' + i % 26);
    REQUIRE(pub.publish_text(big).ok());
    ++published;
    REQUIRE(tap_has_read(topic, live.domain, published));
    auto frame = next_binary(reader);
    REQUIRE(frame);
    CHECK(frame->substr(13) == big);
    CHECK(live.server->counts().queued_bytes <= 2 * ((8u << 20) + (1u << 20)));
  }
  CHECK(live.server->counts().dropped > 0);
}
