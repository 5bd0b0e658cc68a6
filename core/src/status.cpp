// SPDX-License-Identifier: Apache-2.0
#include <ctime>

#include "cerulion/core/options.hpp"
#include "cerulion/core/status.hpp"
#include "cerulion/core/warm.hpp"

namespace cerulion {

const char* to_string(ErrorCode code) noexcept {
  switch (code) {
    case ErrorCode::Ok: return "ok";
    case ErrorCode::InvalidArgument: return "invalid argument";
    case ErrorCode::InvalidTopicName: return "invalid topic name";
    case ErrorCode::NotFound: return "not found";
    case ErrorCode::PermissionDenied: return "permission denied";
    case ErrorCode::Corrupted: return "corrupted";
    case ErrorCode::Incompatible: return "incompatible";
    case ErrorCode::PayloadTooLarge: return "payload too large";
    case ErrorCode::OutOfMemory: return "out of memory";
    case ErrorCode::TooManyParticipants: return "too many participants";
    case ErrorCode::LoanLimit: return "loan limit";
    case ErrorCode::Timeout: return "timeout";
    case ErrorCode::Interrupted: return "interrupted";
    case ErrorCode::SystemError: return "system error";
  }
  return "unknown";
}

Status Status::about(Subject subject) && {
  if (ok() || !this->subject().empty()) return std::move(*this);
  if (!error_) error_.reset(new Error{});
  error_->subject = std::move(subject);
  return std::move(*this);
}

const char* to_string(Mode mode) noexcept { return mode == Mode::FreeRun ? "free-run" : "lockstep"; }

const char* to_string(WaitStrategy wait) noexcept {
  switch (wait) {
    case WaitStrategy::Spin: return "spin";
    case WaitStrategy::Block: return "block";
    default: return "adaptive";
  }
}

const char* to_string(Role role) noexcept {
  switch (role) {
    case Role::Publisher: return "publisher";
    case Role::Tap: return "tap";
    default: return "subscriber";
  }
}

std::optional<Mode> parse_mode(std::string_view text) noexcept {
  if (text == "lockstep") return Mode::Lockstep;
  if (text == "free-run" || text == "freerun" || text == "free_run") return Mode::FreeRun;
  return std::nullopt;
}

std::optional<WaitStrategy> parse_wait(std::string_view text) noexcept {
  if (text == "adaptive") return WaitStrategy::Adaptive;
  if (text == "spin") return WaitStrategy::Spin;
  if (text == "block") return WaitStrategy::Block;
  return std::nullopt;
}

CERULION_HOT_PATH std::uint64_t monotonic_ns() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::uint64_t(ts.tv_sec) * 1'000'000'000ull + std::uint64_t(ts.tv_nsec);
}

CERULION_HOT_PATH std::uint64_t realtime_ns() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return std::uint64_t(ts.tv_sec) * 1'000'000'000ull + std::uint64_t(ts.tv_nsec);
}

}  // namespace cerulion
