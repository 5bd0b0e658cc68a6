// SPDX-License-Identifier: Apache-2.0
#pragma once
// A bridge between one cerulion domain and one DDS domain, over Fast DDS (ROS 2 Humble's default
// middleware, so the wire is the one ROS 2 nodes speak):
//
//   export: each chosen local topic is published as DDS topic "rt/<topic>" (read through a
//           recording::TapSet, a thread per topic; a topic that appears later from its first
//           message);
//   import: "rt/..." topics other participants publish (bridges elsewhere, ROS 2 nodes) appear as
//           local topics, published by the bridge, that any local subscriber reads as usual.
//
// A bridge never sends back what it imported, and ignores DDS samples of its own participant, so
// two bridges following everything on two machines carry each message once. A topic's type
// (message encoding and schema) goes with it from bridge to bridge (type_announcement.hpp).
//
//   cerulion::bridge::BridgeOptions options;
//   options.selection.all = true;
//   auto bridge = cerulion::bridge::Bridge::create(options);
//   bridge->start();  ...  bridge->stop();

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cerulion/bridge/status.hpp"
#include "cerulion/core/options.hpp"
#include "cerulion/core/status.hpp"
#include "cerulion/recording/events.hpp"
#include "cerulion/recording/tap_set.hpp"

namespace cerulion::bridge {

/// Which way messages go.
enum class Direction : std::uint8_t { Export, Import, Both };
const char* to_string(Direction direction) noexcept;

/// Largest DDS domain id: with the standard port mapping (7400 + 250 × domain), 232 is the last
/// whose ports fit 16 bits.
inline constexpr std::uint32_t kMaxDdsDomain = 232;

/// Settings of a bridge; every default is the recommendation.
struct BridgeOptions {
  /// The cerulion domain; default $CERULION_DOMAIN or "default".
  std::string domain = default_domain();
  /// The DDS domain id (ROS_DOMAIN_ID in ROS 2), 0 to kMaxDdsDomain.
  std::uint32_t dds_domain = 0;
  /// Which topics, on both sides: named topics, every topic (including later ones), or topics
  /// matching ECMAScript regular expressions, minus exclusions. Imports match the local name
  /// ("/robot/camera" for "rt/robot/camera").
  recording::TopicSelection selection;
  Direction direction = Direction::Both;
  /// DDS history: keep the last `depth` samples per writer and reader (ROS 2's default is 10).
  /// Writers are transient local: a reader that matches late (another bridge, a ROS 2 node asking
  /// for transient local) gets the last `depth` samples; one with ROS 2's default volatile QoS gets
  /// only new ones. Each exported topic keeps its last `depth` samples in memory.
  std::uint32_t depth = 10;
  /// Reliable (default, like ROS 2) or best effort.
  bool reliable = true;
  /// Where the .msg definitions of ROS 2 types that DDS writers do not announce (ROS 2 nodes) are
  /// looked for, before $CERULION_MSG_PATH and $AMENT_PREFIX_PATH (cerulion/ros2/msg_path.hpp).
  std::vector<std::string> msg_path;
  /// Read local topics as lockstep subscribers instead of taps: their publishers wait for the
  /// bridge (and so for DDS) rather than the bridge missing messages, and a publisher that waits
  /// for a subscriber (`ping --peer`) sees one. Topics it imports are then lockstep too: a slow
  /// local reader holds DDS reception back (up to 1 s a message) instead of losing messages.
  bool lockstep = false;
  /// Fast DDS shared-memory segment per participant. The default 512 KiB makes a large message
  /// lose fragments and wait for repair; 64 MiB carries 16 MiB messages at once.
  std::uint32_t shm_segment_bytes = 64u << 20;
  /// UDP socket buffers (the kernel caps them at net.core.rmem_max / wmem_max).
  std::uint32_t udp_buffer_bytes = 8u << 20;
  /// Offer Fast DDS's shared-memory transport beside UDP (peers on this machine use it). false:
  /// UDP only, the path two machines take, on one.
  bool shared_memory = true;
  /// Publish the status file in `status_directory` once a second.
  bool status_file = true;
  std::string status_directory = std::string(kDefaultStatusDirectory);
  /// Where the bridge says what it does, each once: a topic it starts exporting or importing
  /// (info, the local topic as subject), a topic whose schema is too large to go with it
  /// (warning), what it cannot bridge (problem). Null: nowhere (the status keeps the problems
  /// either way). Outlives the bridge.
  recording::EventSink* events = nullptr;
};

namespace detail {
class BridgeImpl;
}

/// Move-only. The destructor stops it.
class Bridge {
 public:
  /// Checks the options (InvalidArgument naming what is wrong: a DDS domain out of range, a bad
  /// regular expression, a malformed topic name), joins the DDS domain and opens named topics.
  /// Carries nothing until start().
  static Result<Bridge> create(BridgeOptions options);
  Bridge(Bridge&&) noexcept;
  Bridge& operator=(Bridge&&) noexcept;
  ~Bridge();

  /// Starts carrying messages both ways (as the direction says) and following discovery.
  [[nodiscard]] Status start();
  /// Stops carrying; returns once no callback runs. Removes the status file.
  void stop();
  /// What it carried so far; rates are those of the last status period.
  BridgeStatus status() const;

 private:
  explicit Bridge(std::unique_ptr<detail::BridgeImpl> impl);
  std::unique_ptr<detail::BridgeImpl> impl_;
};

}  // namespace cerulion::bridge
