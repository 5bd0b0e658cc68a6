// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the live view tests share: a server in a domain of its own on a free port, publishers in
// that domain, and reading the protocol's messages off a client.

#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <chrono>
#include <memory>
#include <optional>
#include <netinet/in.h>
#include <string>
#include <sys/socket.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cerulion/core/discovery.hpp"
#include "cerulion/core/publisher.hpp"
#include "cerulion/view/server.hpp"
#include "process.hpp"
#include "ws_client.hpp"

namespace viewtest {

using namespace cerulion;
using nlohmann::json;

/// A publisher on `topic` of `domain`, declaring `type` when given.
inline Publisher publisher_in(const std::string& domain, const std::string& topic, std::optional<TopicType> type = std::nullopt) {
  PublisherOptions o;
  o.topic.domain = domain;
  o.topic.type = std::move(type);
  auto p = Publisher::create(topic, o);
  REQUIRE(p.ok());
  return std::move(*p);
}

/// A started server on a free loopback port, serving every topic of a fresh domain.
struct LiveServer {
  explicit LiveServer(view::ViewOptions options = {}, std::string in_domain = test::unique_domain("view"))
      : domain(std::move(in_domain)) {
    options.taps.domain = domain;
    options.port = 0;
    auto created = view::ViewServer::create(std::move(options));
    REQUIRE(created.ok());
    server.emplace(std::move(*created));
    REQUIRE(server->start().ok());
  }
  std::uint16_t port() const { return server->port(); }
  Publisher publisher(const std::string& topic, std::optional<TopicType> type = std::nullopt) const {
    return publisher_in(domain, topic, std::move(type));
  }
  std::string domain;
  std::optional<view::ViewServer> server;
};

/// The next text message whose op is `op` (others are skipped); null json when none came.
inline json next_op(test::WsClient& client, const std::string& op,
                    std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    auto frame = client.read(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()));
    if (!frame) return {};
    if (!frame->text) continue;
    auto j = json::parse(frame->data);
    if (j["op"] == op) return j;
  }
  return {};
}

/// The channel a topic is advertised as (read off the advertise messages); null json if none came.
inline json channel_of(test::WsClient& client, const std::string& topic) {
  for (;;) {
    auto advertise = next_op(client, "advertise");
    if (advertise.is_null()) return {};
    for (const auto& c : advertise["channels"]) {
      if (c["topic"] == topic) return c;
    }
  }
}

/// The next binary frame (text frames are skipped); nullopt when none came.
inline std::optional<std::string> next_binary(test::WsClient& client,
                                              std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    auto frame = client.read(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()));
    if (!frame) return std::nullopt;
    if (!frame->text) return frame->data;
  }
  return std::nullopt;
}

inline std::uint32_t u32_at(const std::string& bytes, std::size_t at) {
  std::uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(bytes[at + i]);
  return v;
}

/// Waits until the server's tap on `topic` has read `count` messages, so a test that publishes
/// more than a ring holds loses none (the view's taps never hold the publisher back).
inline bool tap_has_read(const std::string& topic, const std::string& domain, std::uint64_t count) {
  return test::eventually([&] {
    auto info = inspect_topic(topic, domain);
    if (!info) return false;
    for (const auto& p : info->participants) {
      if (p.role == Role::Tap && p.position >= count) return true;
    }
    return false;
  });
}

/// A topic of a live server with one message published and read by the server's tap, and a client
/// connected after that read, with the channel the topic is advertised to it as.
struct ReadTopic {
  Publisher publisher;
  std::unique_ptr<test::WsClient> client;
  json channel;
};
inline ReadTopic read_topic(const LiveServer& live, const std::string& topic, std::string_view first = "first") {
  ReadTopic read{live.publisher(topic), nullptr, {}};
  REQUIRE(read.publisher.publish_text(first).ok());
  REQUIRE(tap_has_read(topic, live.domain, 1));
  read.client = std::make_unique<test::WsClient>(live.port());
  read.channel = channel_of(*read.client, topic);
  REQUIRE_FALSE(read.channel.is_null());
  return read;
}

/// A loopback port free a moment ago (for a server in another process, which must be told one).
inline std::uint16_t free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
  REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0);
  ::close(fd);
  return ntohs(address.sin_port);
}

inline void subscribe(test::WsClient& client, std::uint32_t id, std::uint32_t channel) {
  client.send_text(json{{"op", "subscribe"}, {"subscriptions", {{{"id", id}, {"channelId", channel}}}}}.dump());
}

/// A view server in another process on `port` serves `topic`: a client that connects (once it
/// can) and subscribes gets "hello" as `pub` publishes it.
inline void check_serves(std::uint16_t port, Publisher& pub, const std::string& topic) {
  REQUIRE(pub.publish_text("hello").ok());
  std::optional<test::WsClient> client;
  REQUIRE(test::eventually([&] {
    try {
      client.emplace(port);
      return true;
    } catch (const std::exception&) {
      return false;
    }
  }));
  const json channel = channel_of(*client, topic);
  REQUIRE_FALSE(channel.is_null());
  subscribe(*client, 7, channel["id"].get<std::uint32_t>());
  // Published until one arrives: the subscription takes effect a moment after it is sent.
  std::optional<std::string> frame;
  for (int i = 0; i < 200 && !frame; ++i) {
    REQUIRE(pub.publish_text("hello").ok());
    frame = next_binary(*client, std::chrono::milliseconds(50));
  }
  REQUIRE(frame.has_value());
  CHECK(u32_at(*frame, 1) == 7);
  CHECK(frame->substr(13) == "hello");
}

}  // namespace viewtest
