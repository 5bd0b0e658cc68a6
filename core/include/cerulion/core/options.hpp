// SPDX-License-Identifier: Apache-2.0
#pragma once
// Settings shared by publishers and subscribers. Every default is the recommended setup.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "cerulion/core/names.hpp"
#include "cerulion/core/topic_type.hpp"

namespace cerulion {

struct WaitTrace;  // cerulion/core/wait_trace.hpp

/// How a topic treats a subscriber that is slower than its publishers.
enum class Mode : std::uint8_t {
  /// No slot is reused before every subscriber has released it; publishers wait. Nothing is lost,
  /// order is deterministic. The default.
  Lockstep = 0,
  /// Publishers never wait; a subscriber more than `depth` messages behind loses the oldest ones
  /// and is told how many (Sample::lost_before()).
  FreeRun = 1,
};

/// How a participant waits for a message (subscriber) or for room (lockstep publisher).
enum class WaitStrategy : std::uint8_t {
  /// Learns the arrival period, sleeps (futex with timeout) until shortly before the next expected
  /// message, polls, and blocks if it does not come. Default: near-spin latency at a few % CPU.
  Adaptive = 0,
  /// Busy-polls: lowest latency, one full core.
  Spin = 1,
  /// Blocks in the kernel on a futex in the segment: no CPU, a wake-up costs tens of µs on a VM.
  Block = 2,
};

/// What a reader is: a subscriber counts for lockstep backpressure; a tap never holds a publisher
/// back and counts what it misses.
enum class Role : std::uint8_t { Publisher = 0, Subscriber = 1, Tap = 2 };

const char* to_string(Mode mode) noexcept;
const char* to_string(WaitStrategy wait) noexcept;
const char* to_string(Role role) noexcept;
std::optional<Mode> parse_mode(std::string_view text) noexcept;            ///< "lockstep", "free-run"
std::optional<WaitStrategy> parse_wait(std::string_view text) noexcept;    ///< "adaptive", "spin", "block"

/// Where a new reader starts.
enum class StartAt : std::uint8_t {
  /// With the first message published after it joined. The default.
  Next = 0,
  /// With the topic's first message: from the oldest message the ring still holds, and the
  /// messages published before that one are counted as lost (the first sample's lost_before()).
  /// What a recorder wants for a topic that appeared after it started.
  First = 1,
};

/// Default ring depth: messages a topic keeps for late or slow readers (and lockstep's queue room).
inline constexpr std::uint32_t kDefaultDepth = 16;
/// Largest ring depth accepted.
inline constexpr std::uint32_t kMaxDepth = 4096;
/// Default ceiling of one payload, in bytes (1 GiB). Address space is reserved for it; memory is
/// committed only for the bytes actually written.
inline constexpr std::uint64_t kDefaultMaxPayload = 1ull << 30;
/// Participants (publishers, subscribers and taps together) one topic accepts.
inline constexpr std::uint32_t kMaxParticipants = 32;
/// Samples one participant may hold at once (loans for a publisher, received samples otherwise).
inline constexpr std::uint32_t kMaxHeldPerParticipant = 2;

/// Settings of a topic, fixed by whoever creates its segment. A publisher may also set `mode` and
/// `depth` on a topic created by a subscriber: its mode and depth stay provisional until a
/// publisher joins and fixes them (a depth up to the one the subscriber created it with).
struct TopicOptions {
  /// Domain of the topic; default: $CERULION_DOMAIN or "default".
  std::string domain = default_domain();
  /// Lockstep or free run; nullopt = the topic's current mode (lockstep for a new topic).
  std::optional<Mode> mode;
  /// Ring depth in messages; nullopt = the topic's current depth (kDefaultDepth for a new topic).
  /// A subscriber creating the topic gives the room a publisher's depth may then take.
  std::optional<std::uint32_t> depth;
  /// Payload ceiling in bytes for a new topic (default 1 GiB). Ignored when the topic exists.
  std::uint64_t max_payload = kDefaultMaxPayload;
  /// Empty (default): a new topic is private to its user (mode 0600), and a topic another user
  /// created is refused, whoever asks, root included. A group name: a new topic is shared with
  /// that group (mode 0660; this process must be a member), and an existing topic must be shared
  /// with it. Members of a topic's group may join it either way.
  std::string group;
  /// What the topic's messages are (message encoding and schema); nullopt (default) takes what the
  /// topic carries. A topic takes the first type declared for it (raw bytes until then); declaring
  /// another is refused (Incompatible).
  std::optional<TopicType> type;
};

/// The longest a wait sleeps in the kernel before it looks again at its cancel flag and at dead
/// participants, in ns: how late a cancel set without a signal is seen.
inline constexpr std::uint64_t kWaitRecheckIntervalNs = 100'000'000;

/// The adaptive strategy's default CPU budget (WaitOptions::cpu_budget).
inline constexpr double kDefaultWaitCpuBudget = 0.05;

/// How a participant waits, and what can cut a wait short.
struct WaitOptions {
  /// Wait strategy; default adaptive.
  WaitStrategy strategy = WaitStrategy::Adaptive;
  /// When non-null and set to true, any wait returns ErrorCode::Interrupted: at once when a signal
  /// handler set it and interrupted the futex call, else within kWaitRecheckIntervalNs.
  const std::atomic<bool>* cancel = nullptr;
  /// When non-null, each wait writes here where it stood when its message came
  /// (cerulion/core/wait_trace.hpp): a diagnosis, owned by the caller, used by the waiting thread.
  WaitTrace* trace = nullptr;
  /// Adaptive only: the share of a CPU its polling may take. The margin before a predicted
  /// message and the window after it scale with it: more polls through more of a late message's
  /// delay instead of paying a futex wake-up, less leaves more to the wake-ups. Within [0.001, 1].
  double cpu_budget = kDefaultWaitCpuBudget;
};

/// Nanoseconds on CLOCK_MONOTONIC: the clock of publish timestamps and of round trips.
std::uint64_t monotonic_ns() noexcept;
/// Nanoseconds since the Unix epoch (CLOCK_REALTIME), for recordings and listings.
std::uint64_t realtime_ns() noexcept;

/// A wait limit: nullopt waits for ever (until cancelled).
using Timeout = std::optional<std::chrono::nanoseconds>;

}  // namespace cerulion
