#pragma once
// What `ping` and `pong` share: the topic pair, the timestamp in the payload, and pong's loop
// (run by `cerulion pong`, by the process `ping` starts, or by a thread with --process single).

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>

#include "cerulion/core/options.hpp"

namespace cerulion::cli {

/// Requests go to <prefix>/ping, replies come back on <prefix>/pong.
inline constexpr const char* kDefaultPingPrefix = "/cerulion/ping";
inline std::string request_topic(const std::string& prefix) { return prefix + "/ping"; }
inline std::string reply_topic(const std::string& prefix) { return prefix + "/pong"; }

/// A request whose timestamp is this value tells a pong started by ping to stop.
inline constexpr std::uint64_t kStopStamp = ~0ull;
/// Bytes of the timestamp at the start of every payload.
inline constexpr std::size_t kStampBytes = 8;

struct PongOptions {
  std::string domain;
  std::string prefix = kDefaultPingPrefix;
  std::optional<Mode> mode;  ///< nullopt: follow the request topic
  WaitStrategy wait = WaitStrategy::Adaptive;
  bool stop_on_request = false;  ///< a pong started by ping ends at its stop message
  std::optional<int> cpu;        ///< pin the answering thread to this CPU
  const std::atomic<bool>* cancel = nullptr;
  std::atomic<bool>* ready = nullptr;  ///< set once attached to both topics
};

/// Answers every request with a reply of the same size carrying the request's timestamp. Returns
/// an exit code (0 when stopped by request or signal).
int run_pong(const PongOptions& options);

}  // namespace cerulion::cli
