// SPDX-License-Identifier: Apache-2.0
#pragma once
// How a bridge tells the bridges that import a topic what the topic carries: its type (message
// encoding and schema, cerulion::TopicType) goes in the user data of the topic's DDS writer, which
// discovery hands to every participant before the writer's first sample, so the importing bridge
// creates the local topic with the exporter's type, and a recording made on its side has the
// schema (what Foxglove needs to decode and plot).
//
//   "cerulion.encoding=json"                                  no schema (as bridges always said)
//   "cerulion.encoding=json" NUL "cerulion.schema=" N ":" name N ":" encoding N ":" data
//   "cerulion.encoding=json" NUL "cerulion.schema-omitted=" N ":" name N ":" encoding N ":" size
//
// (N: the decimal length of the field after its colon.) A topic of a ROS 2 type begins with what
// a ROS 2 node's writer says, "typehash=RIHS01_<hex>;", so that ROS 2 tools see the type's hash;
// a ROS 2 node's user data is that alone.
// Discovery carries a writer's description
// as an RTPS parameter list whose parameter lengths are 16 bits, and Fast DDS does not discover a
// writer whose user data passes that at all, so the user data has a ceiling
// (kMaxAnnouncementBytes): a larger schema is left out and announced as omitted, with its name and
// size, so that both bridges can say so; the topic is then imported without its schema.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "cerulion/core/topic_type.hpp"

namespace cerulion::bridge {

/// Largest user data a bridge's writer announces: under the 65,535-byte ceiling of one RTPS
/// parameter, with room for the rest of the writer's description in one UDP datagram.
inline constexpr std::size_t kMaxAnnouncementBytes = 60'000;

/// What a bridge's writer announces about its topic.
struct TypeAnnouncement {
  /// The topic's type: its encoding, and its schema unless it was left out.
  TopicType type;
  /// The schema left out for its size: its name and encoding (data empty). Empty when none was.
  Schema omitted;
  std::uint64_t omitted_bytes = 0;  ///< the left-out schema's size
  /// The type's ROS 2 hash ("RIHS01_<hex>"), from a bridge or a ROS 2 node; "" when none was said.
  std::string type_hash;
  friend bool operator==(const TypeAnnouncement&, const TypeAnnouncement&) = default;
};

/// The user data that announces `type`, at most `ceiling` bytes: empty for raw bytes; with the
/// schema left out (announced as omitted) when it does not fit.
/// `type_hash`: the ROS 2 type hash put first ("typehash=...;"), none when "".
std::vector<unsigned char> announce_type(const TopicType& type, std::size_t ceiling = kMaxAnnouncementBytes,
                                         const std::string& type_hash = {});

/// What a writer's user data announces: raw bytes (an empty type) for user data that is not a
/// bridge's (a ROS 2 node's "typehash=...;", whose hash is kept); the encoding alone when what
/// follows it cannot be read.
TypeAnnouncement read_type_announcement(std::span<const unsigned char> user_data);

}  // namespace cerulion::bridge
