// SPDX-License-Identifier: Apache-2.0
#pragma once
// Error reporting for the transport API. Nothing in core/ throws across its API: every call that
// can fail returns a Status or a Result<T> carrying an ErrorCode, a one-line message meant for a
// person ("topic '/a/../b': '..' components are not allowed") and, as data, what the error is
// about (its Subject: that topic), so a caller words or sorts errors without reading the message.

#include <cstdint>
#include <cstdio>
#include <cstdlib>
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

/// What kind of thing an error is about.
enum class SubjectKind : std::uint8_t {
  None = 0,  ///< Nothing in particular (a call out of order, a closed writer...).
  Topic,     ///< A topic: name is its normalized name ("/robot/cmd").
  Domain,    ///< A domain: name is the domain.
  Option,    ///< A setting the caller chose: name is the setting ("depth", "rate").
  Size,      ///< A size over its ceiling: name is what has the ceiling (a topic), with both numbers.
  Path,      ///< A file: name is its path.
  Pattern,   ///< A topic pattern (a regular expression): name is the pattern.
  Process,   ///< A process: name is its command or pid.
};

/// What an error is about, as data. An error's message names its subject ("topic '/x': ..."), so
/// a caller that would say which topic failed can tell from the subject that it is said already.
struct Subject {
  SubjectKind kind = SubjectKind::None;
  std::string name;
  std::uint64_t asked = 0;    ///< Size: how many bytes were asked for.
  std::uint64_t ceiling = 0;  ///< Size: the most there is room for, in bytes.

  static Subject topic(std::string name) { return {SubjectKind::Topic, std::move(name)}; }
  static Subject domain(std::string name) { return {SubjectKind::Domain, std::move(name)}; }
  static Subject option(std::string name) { return {SubjectKind::Option, std::move(name)}; }
  static Subject path(std::string path) { return {SubjectKind::Path, std::move(path)}; }
  static Subject pattern(std::string pattern) { return {SubjectKind::Pattern, std::move(pattern)}; }
  static Subject process(std::string process) { return {SubjectKind::Process, std::move(process)}; }
  /// `asked` bytes are over `of`'s ceiling of `ceiling` bytes.
  static Subject size_over(std::string of, std::uint64_t asked, std::uint64_t ceiling) {
    return {SubjectKind::Size, std::move(of), asked, ceiling};
  }

  bool empty() const noexcept { return kind == SubjectKind::None; }
  bool operator==(const Subject&) const = default;
};

/// The outcome of an operation that returns nothing else: ok(), or an error code, message and
/// subject. Only an error holds a message: a success is a code and a null pointer, so the message
/// path, which passes successes along at every step, runs no string code; an error's message and
/// subject share one allocation.
class [[nodiscard]] Status {
 public:
  Status() noexcept = default;
  /// An error. Cold: the compiler moves the paths that build one (and their messages) out of the
  /// functions they fail in, so the code a message runs through stays small. The message path
  /// goes further and builds its errors in cold, noinline helpers: a message's strings built in
  /// place would still take room in the failing function's stack frame, and spread what every
  /// message touches there over more cache lines.
  [[gnu::cold]] Status(ErrorCode code, std::string message)
      : code_(code), error_(message.empty() ? nullptr : new Error{std::move(message), {}}) {}
  /// An error about `subject`, which `message` names.
  [[gnu::cold]] Status(ErrorCode code, std::string message, Subject subject)
      : code_(code), error_(new Error{std::move(message), std::move(subject)}) {}
  Status(const Status& other) : code_(other.code_), error_(copy(other.error_)) {}
  Status& operator=(const Status& other) {
    if (this != &other) {
      code_ = other.code_;
      error_ = copy(other.error_);
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
  const std::string& message() const noexcept { return error_ ? error_->message : kNoMessage; }
  /// What the error is about; empty() for a success and for an error about nothing in particular.
  const Subject& subject() const noexcept { return error_ ? error_->subject : kNoSubject; }

  /// This error, about `subject` unless it names a subject already (a layer that knows what a
  /// lower one's errors were about says so once, where it passes them on); a success stays one.
  [[nodiscard, gnu::cold]] Status about(Subject subject) &&;

 private:
  struct Error {
    std::string message;
    Subject subject;
  };
  /// Frees an error: out of line and cold, so that destroying a success (on every step of the
  /// message path) is one test of a null pointer.
  struct ErrorDeleter {
    [[gnu::cold, gnu::noinline]] void operator()(Error* error) const noexcept { delete error; }
  };
  using ErrorPtr = std::unique_ptr<Error, ErrorDeleter>;
  static ErrorPtr copy(const ErrorPtr& e) { return e ? ErrorPtr(new Error(*e)) : nullptr; }
  inline static const std::string kNoMessage;
  inline static const Subject kNoSubject;

  ErrorCode code_ = ErrorCode::Ok;
  ErrorPtr error_;
};

namespace detail {
/// Ends the process for a Result holding `error` that was used as a value: says so on stderr with
/// the error's message, then aborts. Inline: the header-only users of Status (the recorder) link
/// no core library.
[[noreturn, gnu::cold, gnu::noinline]] inline void used_as_value(const Status& error) noexcept {
  std::fprintf(stderr, "cerulion: a Result holding an error was used as its value: %s\n", error.message().c_str());
  std::abort();
}
}  // namespace detail

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
  Result(ErrorCode code, std::string message, Subject subject)
      : storage_(Status(code, std::move(message), std::move(subject))) {}

  /// Replaces the value with `error`. Out of line and cold: a function that fills a Result in
  /// place and fails rarely keeps the variant's assignment off the code of its usual path.
  [[gnu::cold, gnu::noinline]] void fail(Status error) { storage_ = std::move(error); }

  bool ok() const noexcept { return std::holds_alternative<T>(storage_); }
  explicit operator bool() const noexcept { return ok(); }

  /// The value. On an error (a missing `if (!result)`), the process ends with the error's own
  /// message on stderr (abort), rather than a bad_variant_access that says nothing of it.
  T& value() & { return *get(); }
  const T& value() const& { return *get(); }
  T&& value() && { return std::move(*get()); }
  T* operator->() { return get(); }
  const T* operator->() const { return get(); }
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
  const Subject& subject() const { return status().subject(); }

 private:
  T* get() {
    if (!ok()) [[unlikely]] detail::used_as_value(std::get<Status>(storage_));
    return std::get_if<T>(&storage_);
  }
  const T* get() const { return const_cast<Result*>(this)->get(); }

  std::variant<T, Status> storage_;
};

}  // namespace cerulion
