// SPDX-License-Identifier: Apache-2.0
#pragma once
// Error reporting for the transport API. Nothing in core/ throws across its API: every call that
// can fail returns a Status or a Result<T> carrying an ErrorCode and a one-line message meant for a
// person ("topic '/a/../b': '..' components are not allowed").

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <variant>

namespace cerulion {

/// What went wrong, coarse enough for a caller to branch on. The message says the rest.
enum class ErrorCode : std::uint8_t {
  Ok = 0,
  InvalidArgument,     ///< A parameter is out of range (zero depth, payload over the ceiling...).
  InvalidTopicName,    ///< The topic or domain name is malformed or could escape the namespace.
  NotFound,            ///< No such topic segment exists.
  PermissionDenied,    ///< The segment belongs to another user (created mode 0600).
  Corrupted,           ///< The segment is foreign, damaged or of another layout version.
  Incompatible,        ///< The topic exists with settings that contradict the ones asked for.
  PayloadTooLarge,     ///< A loan asked for more than the topic's payload ceiling.
  OutOfMemory,         ///< /dev/shm cannot hold what was asked for.
  TooManyParticipants, ///< The topic's participant table is full.
  LoanLimit,           ///< This participant already holds as many samples as it may.
  Timeout,             ///< A wait ended at its deadline.
  Interrupted,         ///< A wait was cancelled through the options' cancel flag.
  SystemError,         ///< An operating-system call failed; the message carries errno's text.
};

/// A short lowercase name for an error code, e.g. "permission denied".
const char* to_string(ErrorCode code) noexcept;

/// The outcome of an operation that returns nothing else: ok(), or an error code and message.
/// Only an error holds a message: a success is a code and a null pointer, so the message path,
/// which passes successes along at every step, runs no string code.
class [[nodiscard]] Status {
 public:
  Status() noexcept = default;
  /// An error. Cold: the compiler moves the paths that build one (and their messages) out of the
  /// functions they fail in, so the code a message runs through stays small. The message path
  /// goes further and builds its errors in cold, noinline helpers: a message's strings built in
  /// place would still take room in the failing function's stack frame, and spread what every
  /// message touches there over more cache lines.
  [[gnu::cold]] Status(ErrorCode code, std::string message)
      : code_(code), message_(message.empty() ? nullptr : new std::string(std::move(message))) {}
  Status(const Status& other) : code_(other.code_), message_(copy(other.message_)) {}
  Status& operator=(const Status& other) {
    if (this != &other) {
      code_ = other.code_;
      message_ = copy(other.message_);
    }
    return *this;
  }
  Status(Status&&) noexcept = default;
  Status& operator=(Status&&) noexcept = default;
  ~Status() = default;

  static Status success() noexcept { return {}; }
  bool ok() const noexcept { return code_ == ErrorCode::Ok; }
  explicit operator bool() const noexcept { return ok(); }
  ErrorCode code() const noexcept { return code_; }
  const std::string& message() const noexcept { return message_ ? *message_ : kNoMessage; }

 private:
  /// Frees an error's message: out of line and cold, so that destroying a success (on every step
  /// of the message path) is one test of a null pointer.
  struct MessageDeleter {
    [[gnu::cold, gnu::noinline]] void operator()(std::string* message) const noexcept { delete message; }
  };
  using Message = std::unique_ptr<std::string, MessageDeleter>;
  static Message copy(const Message& m) { return m ? Message(new std::string(*m)) : nullptr; }
  inline static const std::string kNoMessage;

  ErrorCode code_ = ErrorCode::Ok;
  Message message_;
};

/// A value or the Status explaining why there is none (an `expected`-like type for C++20).
template <typename T>
class [[nodiscard]] Result {
 public:
  // Implicit by design, like expected; a value is moved in once (a Sample or Loan on every message).
  Result(T&& value) : storage_(std::in_place_index<0>, std::move(value)) {}  // NOLINT
  Result(const T& value) : storage_(std::in_place_index<0>, value) {}       // NOLINT
  /// A value made in place from `args` (what a take fills without moving it afterwards).
  template <typename... Args>
  explicit Result(std::in_place_t, Args&&... args) : storage_(std::in_place_index<0>, std::forward<Args>(args)...) {}
  Result(Status error) : storage_(std::move(error)) {}  // NOLINT
  Result(ErrorCode code, std::string message) : storage_(Status(code, std::move(message))) {}

  /// Replaces the value with `error`. Out of line and cold: a function that fills a Result in
  /// place and fails rarely keeps the variant's assignment off the code of its usual path.
  [[gnu::cold, gnu::noinline]] void fail(Status error) { storage_ = std::move(error); }

  bool ok() const noexcept { return std::holds_alternative<T>(storage_); }
  explicit operator bool() const noexcept { return ok(); }

  T& value() & { return std::get<T>(storage_); }
  const T& value() const& { return std::get<T>(storage_); }
  T&& value() && { return std::get<T>(std::move(storage_)); }
  T* operator->() { return &std::get<T>(storage_); }
  const T* operator->() const { return &std::get<T>(storage_); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }

  /// The error; only meaningful when !ok().
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(storage_);
  }
  ErrorCode code() const { return status().code(); }
  const std::string& message() const { return status().message(); }

 private:
  std::variant<T, Status> storage_;
};

}  // namespace cerulion
