// SPDX-License-Identifier: Apache-2.0
#pragma once
// The Foxglove WebSocket protocol (foxglove.websocket.v1) as far as a view server speaks it: the
// server's JSON messages, the binary message-data frame, and the client's requests parsed and
// checked. Pure functions over strings and bytes, no sockets: tested in memory.
//
// A topic's type becomes a channel's encoding and schema as MCAP names them (Foxglove reads the
// same names): json + jsonschema, protobuf + a FileDescriptorSet (base64, as the protocol wants
// binary schemas), cdr + ros2msg/ros2idl/omgidl, flatbuffer + bfbs (base64). A raw topic (no
// declared type) is advertised with encoding "x-cerulion-bytes" and no schema, as recordings
// name it: Foxglove lists such a channel and shows its size and rate, not its contents.

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "cerulion/core/topic_type.hpp"

namespace cerulion::view {

/// A channel as advertised.
struct Channel {
  std::uint32_t id = 0;
  std::string topic;
  std::string encoding;
  std::string schema_name;
  std::string schema;           ///< text, or base64 for a binary schema encoding
  std::string schema_encoding;  ///< "" when the channel has no schema (left out of advertise)
};

/// The channel a topic of `type` is advertised as.
Channel channel_for(std::uint32_t id, std::string_view topic, const TopicType& type);
/// Whether the protocol carries schemas of `schema_encoding` as base64 (protobuf, flatbuffer).
bool binary_schema_encoding(std::string_view schema_encoding);

std::string server_info_json(std::string_view name, std::string_view session_id);
std::string advertise_json(const std::vector<Channel>& channels);
std::string unadvertise_json(const std::vector<std::uint32_t>& channel_ids);

/// status levels of the protocol.
enum class StatusLevel : std::uint8_t { Info = 0, Warning = 1, Error = 2 };
std::string status_json(StatusLevel level, std::string_view message);

/// Bytes before the payload in a message-data frame: opcode 1, subscription id (u32 LE), receive
/// time (u64 LE, ns).
inline constexpr std::size_t kMessageHeaderBytes = 13;
std::array<std::byte, kMessageHeaderBytes> message_header(std::uint32_t subscription_id, std::uint64_t receive_ns);

/// A client's request, parsed.
struct Subscription {
  std::uint32_t id = 0;
  std::uint32_t channel_id = 0;
};
struct SubscribeRequest {
  std::vector<Subscription> subscriptions;
};
struct UnsubscribeRequest {
  std::vector<std::uint32_t> subscription_ids;
};
/// An op the server does not implement (named, so it can say so).
struct UnsupportedRequest {
  std::string op;
};
/// Not a request at all: what is wrong with it, in one line.
struct BadRequest {
  std::string problem;
};
using ClientRequest = std::variant<SubscribeRequest, UnsubscribeRequest, UnsupportedRequest, BadRequest>;

/// Parses one text message from a client. Never throws: anything malformed is a BadRequest.
ClientRequest parse_client_request(std::string_view text);

}  // namespace cerulion::view
