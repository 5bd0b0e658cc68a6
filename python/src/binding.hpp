// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the parts of the Python module share: core errors on their way to Python exceptions, the
// waits that let Python run (GIL released, Ctrl-C seen), and an endpoint shared by a Python
// Publisher or Subscriber and the loans or samples it lent.

#include <pybind11/pybind11.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "cerulion/core/options.hpp"
#include "cerulion/core/publisher.hpp"
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

/// A LoanLimit said as Python code gets out of it (`fix`: what gives a slot back); any other
/// status as it is.
inline Status with_advice(Status status, const char* fix) {
  if (status.code() != ErrorCode::LoanLimit) return status;
  Subject subject = status.subject();
  return Status(ErrorCode::LoanLimit, status.message() + ": " + fix, std::move(subject));
}
inline constexpr const char* kReleaseSample =
    "release one first (sample.release(), or take it in a with block: `with sub.receive() as sample:`)";
inline constexpr const char* kEndLoan =
    "publish() or discard() one first (or loan in a with block: `with pub.loan(n) as buf:`)";

/// Sets the Python error for `error` (for code that cannot throw: buffer protocol slots).
void set_python_error(const StatusError& error);

/// The longest one wait runs with the GIL released before Python's signal handlers run: how late
/// Ctrl-C is seen. (A core wait that times out still evicts dead participants, at most once per
/// kWaitRecheckIntervalNs, so slices this short do not keep a killed subscriber's slots held.)
inline constexpr std::chrono::nanoseconds kSignalCheckInterval{50'000'000};

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

/// A C-contiguous buffer of a Python object, held while it is copied (into a slot, a file); `use`
/// names the call in the error for any other object.
class ContiguousBuffer {
 public:
  ContiguousBuffer(py::handle object, const char* use) {
    if (PyObject_GetBuffer(object.ptr(), &view_, PyBUF_C_CONTIGUOUS) != 0) {
      py::error_already_set why;
      raise(Status(ErrorCode::InvalidArgument,
                   std::string(use) + ": " + why.what() +
                       " (it takes a C-contiguous buffer: bytes, bytearray, memoryview, numpy.ascontiguousarray(...))",
                   Subject::option("data")));
    }
  }
  ~ContiguousBuffer() { PyBuffer_Release(&view_); }
  ContiguousBuffer(const ContiguousBuffer&) = delete;
  ContiguousBuffer& operator=(const ContiguousBuffer&) = delete;
  const void* data() const { return view_.buf; }
  std::size_t size() const { return static_cast<std::size_t>(view_.len); }

 private:
  Py_buffer view_{};
};

/// An object's turn among the Python threads that share it. Core objects are not thread safe, and
/// a call into one runs with the GIL released, so the Python objects over them serialize their
/// calls: a thread whose call finds another thread's under way waits for it to end (the GIL
/// released, Ctrl-C seen), within the call's own timeout. held() is read and the holder written
/// with the GIL held.
class Turn {
 public:
  /// Takes the turn, waiting for it until `deadline`: false when it passed first. A thread that
  /// holds the turn already (a signal handler calling the object from inside a wait on it) is an
  /// error rather than a wait for itself. Called with the GIL held.
  bool take(const Deadline& deadline, const char* what) {
    if (holder_ == std::this_thread::get_id()) {
      raise(Status(ErrorCode::InvalidArgument, std::string("this ") + what +
                                                   " was used again from within a call on it in the same thread "
                                                   "(a signal handler?)"));
    }
    if (!mutex_.try_lock()) {
      py::gil_scoped_release unlocked;
      for (;;) {
        Timeout slice = kSignalCheckInterval;
        if (Timeout left = deadline.left(); left && *left < *slice) slice = left;
        if (mutex_.try_lock_for(*slice)) break;
        if (deadline.passed()) return false;
        py::gil_scoped_acquire locked;
        if (PyErr_CheckSignals() != 0) throw py::error_already_set();
      }
    }
    holder_ = std::this_thread::get_id();
    return true;
  }
  void give() {
    holder_ = std::thread::id();
    mutex_.unlock();
  }
  /// True while a thread holds the turn (and may be in a call with the GIL released).
  bool held() const { return holder_ != std::thread::id(); }

 private:
  std::timed_mutex mutex_;
  std::thread::id holder_;
};

/// A core Publisher or Subscriber, shared by its Python object and the loans or samples it lent
/// (which need it alive). The GIL guards all of it but the core object's calls, which a thread
/// makes holding the endpoint's turn. While a thread holds it, a loan or sample another thread
/// drops is parked here and given back by that thread before it gives the turn up.
template <typename CoreType, typename HeldType>
struct Endpoint {
  using Core = CoreType;
  using Held = HeldType;
  /// The core waits' cancel flag: set by close(), so a wait in another thread ends.
  std::atomic<bool> cancel{false};
  std::optional<Core> core;
  std::string domain;
  Turn turn;
  std::vector<Held> parked;  // after `core`: destroyed (given back) before it

  void give_back(Held&& held) {
    if (turn.held()) {
      parked.push_back(std::move(held));
    } else {
      Held dropped = std::move(held);
    }
  }
};

/// A thread's turn on an endpoint for one call: taken (waiting for another thread's call to end,
/// until `deadline`: Timeout after it), and given up with what was parked meanwhile given back.
/// An endpoint closed while the call waited for its turn is cerulion.Closed.
template <typename E>
class BusyScope {
 public:
  BusyScope(E& endpoint, const char* what, const Deadline& deadline) : endpoint_(endpoint) {
    const std::string& topic = endpoint_.core->topic();
    if (!endpoint_.turn.take(deadline, what)) {
      raise(Status(ErrorCode::Timeout, "topic '" + topic + "': another thread's call on this " + what +
                                           " did not end within the timeout",
                   Subject::topic(topic)));
    }
    if (endpoint_.cancel.load()) {
      endpoint_.turn.give();
      raise_closed(std::string("the ") + what + " of '" + topic + "' was closed while this call waited for its turn",
                   Subject::topic(topic));
    }
  }
  ~BusyScope() {
    endpoint_.parked.clear();
    endpoint_.turn.give();
  }
  BusyScope(const BusyScope&) = delete;
  BusyScope& operator=(const BusyScope&) = delete;

 private:
  E& endpoint_;
};

/// A slot lent to Python, a loan or a sample: given back to its endpoint once Python is finished
/// with it (published, discarded, released) and no view of its buffer is left, so no view ever
/// reads or writes the slot after that.
template <typename E>
class LentSlot {
 public:
  LentSlot(std::shared_ptr<E> owner, typename E::Held held)
      : owner_(std::move(owner)), held_(std::move(held)), topic_(owner_->core->topic()) {}
  LentSlot(LentSlot&&) = default;
  LentSlot(const LentSlot&) = delete;
  LentSlot& operator=(const LentSlot&) = delete;
  ~LentSlot() { give_back(); }

  void view_taken() { ++views_; }
  void view_dropped() {
    if (--views_ == 0 && finished_) give_back();
  }
  const std::string& topic() const { return topic_; }

 protected:
  /// Ends Python's use: the slot goes back now, or with the last view.
  void finish() {
    finished_ = true;
    if (views_ == 0) give_back();
  }
  void give_back() {
    if (held_.valid()) owner_->give_back(std::move(held_));
  }

  std::shared_ptr<E> owner_;
  typename E::Held held_;
  // The endpoint's own name (its core lives as long as owner_): no copy per message.
  const std::string& topic_;
  bool finished_ = false;
  int views_ = 0;
};

/// A Python Publisher's or Subscriber's hold on its endpoint: nothing once closed.
template <typename E>
class EndpointHandle {
 public:
  /// Joins `topic` (E::Core::create, with the GIL released); the core waits' cancel flag is the
  /// endpoint's, so close() ends a wait in another thread.
  template <typename Options>
  EndpointHandle(const std::string& topic, Options options) {
    auto endpoint = std::make_shared<E>();
    options.wait.cancel = &endpoint->cancel;
    endpoint->domain = options.topic.domain;
    auto created = [&] {
      py::gil_scoped_release unlocked;
      return E::Core::create(topic, std::move(options));
    }();
    endpoint->core.emplace(take(std::move(created)));
    endpoint_ = std::move(endpoint);
  }

  /// The endpoint, or cerulion.Closed saying that `use` needs an open one.
  std::shared_ptr<E> open(const char* use) const {
    if (!endpoint_) raise_closed(std::string("the ") + kind() + " was closed; " + use + " needs an open one", {});
    return endpoint_;
  }
  /// Leaves the topic once the loans or samples it lent are done; a wait in another thread ends
  /// at its next look at the cancel flag. Idempotent.
  void close() {
    if (!endpoint_) return;
    endpoint_->cancel.store(true);
    endpoint_.reset();
  }
  bool closed() const { return !endpoint_; }
  const typename E::Core& core(const char* use) const { return *open(use)->core; }
  const std::string& domain() const { return open("domain")->domain; }

 private:
  static const char* kind() { return std::is_same_v<typename E::Core, Publisher> ? "publisher" : "subscriber"; }
  std::shared_ptr<E> endpoint_;
};

/// __next__ of T, a Subscriber or WaitSet: its receive() without end, until it is closed (before
/// or during the wait: StopIteration) or Ctrl-C (KeyboardInterrupt).
template <typename T>
auto next_until_closed(T& self) {
  if (self.closed()) throw py::stop_iteration();
  try {
    return self.receive(py::none());
  } catch (const StatusError& error) {
    if (error.closed) throw py::stop_iteration();
    throw;
  }
}

/// The C++ object of a Python object of T's pybind11 class. An object of exactly that class is read
/// where pybind11 keeps it, its class looked up once: pybind11's cast looks T up in its registries on
/// every call, which costs more than a receive's own work once caches went cold between messages
/// (docs/performance.md). A subclass, or an object not constructed, goes through that cast (which
/// raises for the latter).
template <typename T>
T& self_of(PyObject* self) {
  static PyTypeObject* const type = reinterpret_cast<PyTypeObject*>(py::type::of<T>().ptr());
  if (Py_TYPE(self) == type) {
    auto* instance = reinterpret_cast<py::detail::instance*>(self);
    if (instance->simple_layout && instance->simple_value_holder[0] != nullptr) {
      return *static_cast<T*>(instance->simple_value_holder[0]);
    }
  }
  return py::handle(self).cast<T&>();
}

/// A new Python object of T's pybind11 class owning `value` (moved), made as pybind11's __init__
/// makes one (the object, then T in its std::unique_ptr holder, the class's default) but without
/// its registries: py::cast looks the class up twice and files the object in pybind11's table of
/// instances, which is what lets a C++ reference cast back to its Python object; a Sample or Loan
/// never is (Python code only ever gets the object made here). Cold between frames, that work cost
/// a received frame more than the rest of receive() (docs/performance.md). The class's dealloc
/// destroys T through the holder as for any other instance.
template <typename T>
py::object adopt(T&& value) {
  static const py::detail::type_info* const type = py::detail::get_type_info(typeid(T), /*throw_if_missing=*/true);
  auto made = py::reinterpret_steal<py::object>(py::detail::make_new_instance(type->type));
  if (!made) throw py::error_already_set();
  auto* instance = reinterpret_cast<py::detail::instance*>(made.ptr());
  if (!instance->simple_layout) [[unlikely]] {
    // Never for these classes (one C++ type, no bases); pybind11's own cast handles the rest.
    auto move = [](const void* from) -> void* { return new T(std::move(*const_cast<T*>(static_cast<const T*>(from)))); };
    return py::reinterpret_steal<py::object>(
        py::detail::type_caster_generic::cast(&value, py::return_value_policy::move, py::handle(), type, nullptr, move));
  }
  py::detail::value_and_holder slot(instance, type, 0, 0);
  auto owned = std::make_unique<T>(std::move(value));
  new (std::addressof(slot.holder<std::unique_ptr<T>>())) std::unique_ptr<T>(std::move(owned));
  slot.value_ptr() = slot.holder<std::unique_ptr<T>>().get();
  slot.set_holder_constructed();
  instance->owned = true;
  return made;
}

/// The buffer protocol of a loan or sample T (T::bytes(use) gives the bytes, or raises when there
/// are none any more; view_taken() and view_dropped() count the views), by hand rather than
/// pybind11's def_buffer: a view's end must be seen, to give the slot back once no view is left.
template <typename T, bool kWritable>
int get_buffer(PyObject* self, Py_buffer* view, int flags) {
  view->obj = nullptr;
  try {
    T& owner = self_of<T>(self);
    auto bytes = owner.bytes("a view of its buffer");
    static std::byte empty_buffer_byte{};
    void* data = bytes.empty() ? &empty_buffer_byte : const_cast<std::byte*>(bytes.data());
    if (PyBuffer_FillInfo(view, self, data, static_cast<Py_ssize_t>(bytes.size()), kWritable ? 0 : 1, flags) != 0) {
      return -1;
    }
    owner.view_taken();
    return 0;
  } catch (const StatusError& error) {
    set_python_error(error);
  } catch (py::error_already_set& error) {
    error.restore();
  } catch (const std::exception& error) {
    PyErr_SetString(PyExc_BufferError, error.what());
  }
  return -1;
}

template <typename T>
void release_buffer(PyObject* self, Py_buffer*) {
  try {
    self_of<T>(self).view_dropped();
  } catch (...) {
    PyErr_WriteUnraisable(self);
  }
}

/// The type slots that give class T the buffer protocol above.
template <typename T, bool kWritable>
py::custom_type_setup buffer_protocol_of() {
  return py::custom_type_setup([](PyHeapTypeObject* heap_type) {
    heap_type->as_buffer.bf_getbuffer = get_buffer<T, kWritable>;
    heap_type->as_buffer.bf_releasebuffer = release_buffer<T>;
    heap_type->ht_type.tp_as_buffer = &heap_type->as_buffer;
  });
}

void register_errors(py::module_& m);
void register_arguments(py::module_& m);
void register_publisher(py::module_& m);
void register_subscriber(py::module_& m);
void register_wait_set(py::module_& m);
void register_recording_reader(py::module_& m);
void register_recording_writer(py::module_& m);

}  // namespace cerulion::python
