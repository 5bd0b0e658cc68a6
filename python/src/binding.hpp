// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the parts of the Python module share: core errors on their way to Python exceptions, the
// waits that let Python run (GIL released, Ctrl-C seen), and an endpoint shared by a Python
// Publisher or Subscriber and the loans or samples it lent.

#include <pybind11/pybind11.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cerulion/core/options.hpp"
#include "cerulion/core/status.hpp"

namespace cerulion::python {

namespace py = pybind11;

/// A core error on its way to Python, thrown by the bindings and raised as cerulion.Error or the
/// subclass for its code (errors.cpp); `closed` raises cerulion.Closed (an object used after
/// close() or release()).
struct StatusError {
  Status status;
  bool closed = false;
};

[[noreturn]] inline void raise(Status status) { throw StatusError{std::move(status)}; }
[[noreturn]] inline void raise_closed(std::string message, Subject subject) {
  throw StatusError{Status(ErrorCode::InvalidArgument, std::move(message), std::move(subject)), true};
}
inline void check(Status status) {
  if (!status.ok()) raise(std::move(status));
}
template <typename T>
T take(Result<T>&& result) {
  if (!result.ok()) raise(result.status());
  return std::move(result).value();
}

/// Sets the Python error for `error` (for code that cannot throw: buffer protocol slots).
void set_python_error(const StatusError& error);

/// The longest one wait runs with the GIL released before Python's signal handlers run: how late
/// Ctrl-C is seen. A little over core's recheck interval: a core wait evicts dead participants (a
/// killed subscriber holding a slot) only once it has lasted that long, so shorter slices would
/// never evict them.
inline constexpr std::chrono::nanoseconds kSignalCheckInterval{kWaitRecheckIntervalNs + 10'000'000};

/// The end of a wait of `timeout` (nullopt: none) started now.
class Deadline {
 public:
  explicit Deadline(Timeout timeout)
      : end_(timeout ? std::optional(std::chrono::steady_clock::now() + *timeout) : std::nullopt) {}
  /// What is left of the wait (zero once past its end), nullopt for a wait without end.
  Timeout left() const {
    if (!end_) return std::nullopt;
    auto rest = *end_ - std::chrono::steady_clock::now();
    return std::chrono::duration_cast<std::chrono::nanoseconds>(rest.count() > 0 ? rest : rest.zero());
  }
  bool passed() const { return end_ && std::chrono::steady_clock::now() >= *end_; }

 private:
  std::optional<std::chrono::steady_clock::time_point> end_;
};

/// Calls attempt(slice) with the GIL released, in slices of at most kSignalCheckInterval, until it
/// ends in anything but a Timeout or the deadline passes; between slices Python's signal handlers
/// run, so Ctrl-C raises KeyboardInterrupt (py::error_already_set) here. Called with the GIL held.
template <typename Attempt>
auto wait_in_slices(const Deadline& deadline, Attempt&& attempt) {
  py::gil_scoped_release unlocked;
  for (;;) {
    Timeout slice = kSignalCheckInterval;
    if (Timeout left = deadline.left(); left && *left < *slice) slice = left;
    auto result = attempt(slice);
    if (result.code() != ErrorCode::Timeout || deadline.passed()) return result;
    py::gil_scoped_acquire locked;
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();
  }
}

/// A core Publisher or Subscriber, shared by its Python object and the loans or samples it lent
/// (which need it alive). The GIL guards all of it but the core object's calls made with the GIL
/// released. Core endpoints are not thread safe, so while one thread is in such a call (`busy`),
/// a loan or sample another thread drops is parked here and given back by the busy thread once it
/// holds the GIL again.
template <typename Core, typename Held>
struct Endpoint {
  /// The core waits' cancel flag: set by close(), so a wait in another thread ends.
  std::atomic<bool> cancel{false};
  std::optional<Core> core;
  std::string domain;
  bool busy = false;
  std::vector<Held> parked;  // after `core`: destroyed (given back) before it

  void give_back(Held&& held) {
    if (busy) {
      parked.push_back(std::move(held));
    } else {
      Held dropped = std::move(held);
    }
  }
};

/// Marks an endpoint busy for a call made with the GIL released, and gives back what was parked
/// meanwhile when it ends. One such call at a time: a second thread is told so.
template <typename E>
class BusyScope {
 public:
  BusyScope(E& endpoint, const char* what) : endpoint_(endpoint) {
    if (endpoint_.busy) {
      raise(Status(ErrorCode::InvalidArgument,
                   std::string("another thread is waiting on this ") + what + "; use one per thread",
                   Subject::topic(endpoint_.core->topic())));
    }
    endpoint_.busy = true;
  }
  ~BusyScope() {
    endpoint_.busy = false;
    endpoint_.parked.clear();
  }
  BusyScope(const BusyScope&) = delete;
  BusyScope& operator=(const BusyScope&) = delete;

 private:
  E& endpoint_;
};

void register_errors(py::module_& m);
void register_arguments(py::module_& m);
void register_publisher(py::module_& m);
void register_subscriber(py::module_& m);

}  // namespace cerulion::python
