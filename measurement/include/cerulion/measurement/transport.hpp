// SPDX-License-Identifier: Apache-2.0
#pragma once
// The round trip's transport: what carries a request from the requester (ping) to the responder
// (pong) and the reply back. The measurement engine (ping.hpp) owns pacing, timing and
// statistics; a transport only moves bytes. "native" is cerulion's shared-memory topics; other
// transports (Fast DDS, iceoryx) implement the same two classes so that every lane runs the same
// protocol and is timed by the same code.
//
// The protocol, which every transport keeps:
//   - A request is `size` bytes (size >= kStampBytes). Its first 8 bytes are a CLOCK_MONOTONIC
//     timestamp in ns (cerulion::monotonic_ns()), in host byte order; the rest is never filled
//     (benchmarks measure the transport, not memset).
//   - The responder answers each request with a reply of the same size whose first 8 bytes are
//     the request's timestamp. Replies to requests other than the last one sent are allowed (late
//     echoes); the requester discards them by their timestamp.
//   - Native only: a reply of 16 bytes or more carries in bytes 8-15 the request's one-way
//     latency as the responder saw it (from the request's publish to its take, in ns, host byte
//     order), what a subscriber of one's own measures; other transports leave them unwritten.
//   - Native, with trace_waits on the responder: a reply of kTraceReplyBytes or more carries in
//     bytes 16-63 where the responder's wait stood when the request came (tail_explain.hpp).
//   - A request whose timestamp is kStopStamp is not answered; a responder created with
//     stop_on_request returns from serve() when it gets one.
//   - Requests go to PREFIX/ping, replies come back on PREFIX/pong (request_topic(),
//     reply_topic()). A transport whose names forbid '/' maps them, the same way on both sides.
//
// Threads: a Requester is used by one thread at a time, a Responder by the thread that calls
// serve(). Neither throws: every failure is a Status whose message is one line for a person and
// names no command-line flag.
//
// Adding a transport: implement Requester and Responder in measurement/src/transport_<name>.cpp
// with its two make_ functions in a plugin table (transport_plugin.hpp), built as the plugin
// transport-<name> only when its library is found (measurement/CMakeLists.txt), add its entry to
// measurement/src/transport.cpp under the matching #if, and it shows in transports(). A process
// loads a transport's library only when it asks for that transport.

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cerulion/core/options.hpp"
#include "cerulion/core/status.hpp"
#include "cerulion/measurement/tail_explain.hpp"

namespace cerulion::measurement {

/// Bytes of the timestamp at the start of every request and reply.
inline constexpr std::size_t kStampBytes = 8;
/// A request carrying this timestamp asks a responder to stop; it is never answered.
inline constexpr std::uint64_t kStopStamp = ~0ull;

/// Requests go to <prefix>/ping, replies come back on <prefix>/pong.
inline constexpr const char* kDefaultPrefix = "/cerulion/ping";
inline std::string request_topic(const std::string& prefix) { return prefix + "/ping"; }
inline std::string reply_topic(const std::string& prefix) { return prefix + "/pong"; }

/// What both sides of a transport are told.
struct TransportOptions {
  /// Keeps concurrent measurements apart (native: the cerulion domain). A transport with no such
  /// notion folds it into its topic names or ignores it.
  std::string domain;
  std::string prefix = kDefaultPrefix;  ///< topic pair, see request_topic() / reply_topic()
  /// Largest request that will be sent, in bytes. Transports that size buffers or types up front
  /// (iceoryx chunks, a bounded DDS sequence) use it; native ignores it.
  std::size_t max_payload = 64;
  /// Requester and responder run in one process (separate threads). A transport may use its
  /// intra-process path for it (Fast DDS: intra-process delivery).
  bool same_process = false;
  /// How a wait waits (native; others may map spin/block to their own waits or ignore it).
  WaitStrategy wait = WaitStrategy::Adaptive;
  /// When non-null and true, every wait returns ErrorCode::Interrupted promptly (<= 100 ms),
  /// and serve() returns Status::success().
  const std::atomic<bool>* cancel = nullptr;
  /// Native only. 0: each side waits on its topic itself. N >= 1: each side waits through a
  /// WaitSet of N subscribers, its topic and N - 1 topics nobody publishes on
  /// (PREFIX/idle/<side>/K), as a node listening to several topics in one thread does.
  std::uint32_t wait_set_members = 0;
  /// Native only: the payload ceiling of the topics a side creates (TopicOptions::max_payload;
  /// ignored for a topic that exists). Each slot reserves address space for it, so a smaller one
  /// lets a side run where address space is scarce, such as under valgrind.
  std::uint64_t topic_ceiling = kDefaultMaxPayload;
  /// Native with wait_set_members >= 1: every other message is taken from the subscriber itself
  /// (the even ones, counting from each side's first) and the others through the wait set, so
  /// that one run measures both ways under the same conditions.
  bool alternate_wait_set = false;
  /// Native only: each side records its waits (`ping --explain-tail`): the responder into its
  /// replies (the protocol above), the requester for Requester::last_trip(). Off: no cost.
  bool trace_waits = false;
  /// Native, adaptive wait: the share of a CPU each side's polling may take (WaitOptions::cpu_budget).
  double cpu_budget = kDefaultWaitCpuBudget;
};

struct RequesterOptions : TransportOptions {
  /// Mode of the request topic (native; lockstep = the publisher waits for slow subscribers).
  Mode mode = Mode::Lockstep;
};

struct ResponderOptions : TransportOptions {
  /// Mode of the reply topic; nullopt follows the request topic's (native only).
  std::optional<Mode> mode;
  /// serve() returns at a kStopStamp request (a responder started for one measurement).
  bool stop_on_request = false;
};

/// One reply as the requester got it.
struct Reply {
  std::uint64_t stamp = 0;       ///< the timestamp the reply carries
  std::uint64_t arrived_ns = 0;  ///< monotonic_ns() taken as soon as the reply was available
  std::int64_t responder_pid = 0;  ///< process that sent it, 0 when the transport cannot tell
  std::uint64_t request_leg_ns = 0;  ///< the request's one-way latency (native, 16 B and more), else 0
};

/// Where a native reply carries the request's one-way latency (see the protocol above).
inline constexpr std::size_t kRequestLegOffset = kStampBytes;

/// The ping side. The engine calls, per round trip and in this order:
///   prepare(size)  -> keep_warm() any number of times -> send(stamp) -> receive() until the
///   reply carrying `stamp` comes (or the deadline passes).
/// prepare() happens before the engine waits for its send slot, so anything slow (a zero-copy
/// loan, a buffer) is done off the timed path; send() must do as little as possible after the
/// stamp is written.
class Requester {
 public:
  virtual ~Requester() = default;

  /// Largest request this transport can carry, in bytes.
  [[nodiscard]] virtual std::uint64_t max_payload() const noexcept = 0;

  /// Waits until a responder is attached and would get a request sent now. Timeout when none
  /// came, Interrupted when cancelled.
  [[nodiscard]] virtual Status wait_for_responder(std::chrono::nanoseconds timeout) = 0;

  /// Whether a responder is still attached (asked after a reply went missing, to tell a slow
  /// responder from one that is gone). A transport that cannot tell returns true.
  [[nodiscard]] virtual bool responder_present() const noexcept = 0;

  /// Gets ready to send a request of `size` bytes (kStampBytes <= size <= max_payload()). Called
  /// again before each send; a prepared request not sent is dropped by the next prepare() or the
  /// destructor. Timeout: no room within `timeout` (a lockstep reader that does not read).
  [[nodiscard]] virtual Status prepare(std::size_t size, std::chrono::nanoseconds timeout) = 0;

  /// Called while the engine spins until the send slot, about every kWarmCachesIntervalNs:
  /// keep what send() will touch in cache. Never blocks.
  virtual void keep_warm() noexcept {}

  /// Writes `stamp` into the first 8 bytes of the prepared request and sends it. Not ok when
  /// nothing was prepared, on Interrupted, or when the request could not be delivered in time.
  [[nodiscard]] virtual Status send(std::uint64_t stamp, std::chrono::nanoseconds timeout) = 0;

  /// Waits up to `timeout` for the next reply (whatever request it answers). Timeout when none
  /// came, Interrupted when cancelled.
  [[nodiscard]] virtual Result<Reply> receive(std::chrono::nanoseconds timeout) = 0;

  /// With trace_waits: fills what the last reply received said of both sides' waits (its
  /// requester, responder, reply_publish_ns and arrived_ns). False for a transport that traces none.
  virtual bool last_trip(TripTrace& trip) const { (void)trip; return false; }
};

/// The pong side: created attached to both topics (a requester's wait_for_responder() sees it
/// once create_responder() returned), then serve() answers until stopped.
class Responder {
 public:
  virtual ~Responder() = default;

  /// Answers every request as the protocol says, until a kStopStamp request (with
  /// stop_on_request) or the cancel flag: both return Status::success(). Any other failure
  /// returns its Status. This loop is the responder's hot path: no allocation per message.
  [[nodiscard]] virtual Status serve() = 0;
};

/// A transport this build knows, and whether it can be used here.
struct TransportInfo {
  std::string name;       ///< "native", "fastdds", "iceoryx"
  bool available = false;
  std::string reason;     ///< why not, when !available ("built without Fast DDS")
};

/// Every transport this build knows, available or not, native first. Loads every plugin transport.
[[nodiscard]] std::vector<TransportInfo> transports();

/// The named transport, available or not, loading its plugin and no other's; nullopt for a name
/// this build does not know.
[[nodiscard]] std::optional<TransportInfo> transport_info(std::string_view name);

/// Whether the named transport can be used here, loading its plugin and no other: NotFound for an
/// unknown name (the message lists the known ones), InvalidArgument saying why it is unavailable.
[[nodiscard]] Status check_transport(std::string_view transport);

/// The requester side of the named transport. NotFound for an unknown name, InvalidArgument for
/// one that is not available (the message says why), or the transport's own error.
[[nodiscard]] Result<std::unique_ptr<Requester>> create_requester(std::string_view transport,
                                                                  const RequesterOptions& options);

/// The responder side of the named transport, attached to both topics. Errors as create_requester().
[[nodiscard]] Result<std::unique_ptr<Responder>> create_responder(std::string_view transport,
                                                                  const ResponderOptions& options);

}  // namespace cerulion::measurement
