// SPDX-License-Identifier: Apache-2.0
// cerulion.WaitSet: one thread waiting on several subscribers and timers, as cerulion::WaitSet.

#include <pybind11/stl.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "binding.hpp"
#include "cerulion/core/wait_set.hpp"
#include "subscriber.hpp"

namespace cerulion::python {
namespace {

/// The seconds of a timer's period: a finite number > 0.
std::chrono::nanoseconds period_argument(py::handle value) {
  const bool number = (py::isinstance<py::int_>(value) || py::isinstance<py::float_>(value)) &&
                      !py::isinstance<py::bool_>(value);
  const double seconds = number ? value.cast<double>() : 0;
  if (!number || !(seconds > 0) || !std::isfinite(seconds) || seconds > 1e9) {
    raise(Status(ErrorCode::InvalidArgument, "period: expected seconds > 0", Subject::option("period")));
  }
  return std::chrono::nanoseconds(std::max<std::int64_t>(1, std::llround(seconds * 1e9)));
}

/// What WaitSet.wait() found ready, asked about by the set's Python keys.
struct PyWaitSetReady {
  WaitSetReady ready;
  std::vector<std::size_t> message_keys;  // Python keys of the members with a message
  std::vector<std::size_t> timer_keys;    // Python keys of the timers due

  bool message(std::size_t key) const { return std::find(message_keys.begin(), message_keys.end(), key) != message_keys.end(); }
  bool timer(std::size_t key) const { return std::find(timer_keys.begin(), timer_keys.end(), key) != timer_keys.end(); }
};

/// What WaitSet.receive() returned: a message taken from one member (with the Subscriber it came
/// from), or a timer that came due.
struct PyWaitSetEvent {
  std::size_t key = 0;
  bool timer = false;
  py::object sample;      // a cerulion.Sample, or None for a timer
  py::object subscriber;  // the member's cerulion.Subscriber, or None for a timer
};

/// A Python WaitSet. Its keys are its own, one count for members and timers together (the core
/// set counts them apart: a timer's key could equal a member's). Its members' endpoints are kept
/// alive by the set (a member closed meanwhile leaves it at the next wait). A wait holds the set's turn and each member's, since it reads them
/// with the GIL released: another thread's call on the set or on one of its members waits for it.
class PyWaitSet {
 public:
  explicit PyWaitSet(py::object wait) {
    WaitOptions options;
    options.strategy = wait_argument(wait);
    options.cancel = cancel_.get();
    set_.emplace(options);
  }

  std::size_t add(py::object subscriber) {
    open("add()");
    if (!py::isinstance<PySubscriber>(subscriber)) {
      throw py::type_error("WaitSet.add() takes a cerulion.Subscriber, not " +
                           std::string(py::str(py::type::of(subscriber).attr("__name__"))));
    }
    PySubscriber& handle = subscriber.cast<PySubscriber&>();
    std::shared_ptr<SubscriberEndpoint> endpoint = handle.open("WaitSet.add()");
    SetTurn turn(*this, "add()");
    BusyScope member(*endpoint, "subscriber", Deadline(std::nullopt));
    const std::size_t core_key = take(set_->add(*endpoint->core));
    members_.push_back(Member{next_key_, core_key, std::move(endpoint), std::move(subscriber)});
    return next_key_++;
  }

  void remove(py::object subscriber) {
    SetTurn turn(*this, "remove()");
    for (auto it = members_.begin(); it != members_.end(); ++it) {
      if (it->subscriber.is(subscriber)) {
        BusyScope member(*it->endpoint, "subscriber", Deadline(std::nullopt));
        set_->remove(*it->endpoint->core);
        members_.erase(it);
        return;
      }
    }
  }

  std::size_t add_timer(py::handle period) {
    const auto every = period_argument(period);
    SetTurn turn(*this, "add_timer()");
    timers_.push_back(Timer{next_key_, take(set_->add_timer(every))});
    return next_key_++;
  }

  PyWaitSetReady wait(py::object timeout_seconds) {
    const Deadline deadline(timeout_argument(timeout_seconds));
    Waiting waiting(*this, "wait()", deadline);
    Result<WaitSetReady> ready = wait_in_slices(deadline, [&](Timeout slice) { return set_->wait(slice); });
    PyWaitSetReady out{take(ended(std::move(ready))), {}, {}};
    for (const Member& member : members_) {
      if (out.ready.message(member.core_key)) out.message_keys.push_back(member.key);
    }
    for (const Timer& timer : timers_) {
      if (out.ready.timer(timer.core_key)) out.timer_keys.push_back(timer.key);
    }
    return out;
  }

  PyWaitSetEvent receive(py::object timeout_seconds) {
    const Deadline deadline(timeout_argument(timeout_seconds));
    Waiting waiting(*this, "receive()", deadline);
    Result<WaitSetEvent> event = wait_in_slices(deadline, [&](Timeout slice) { return set_->receive(slice); });
    WaitSetEvent taken = take(ended(std::move(event)));
    PyWaitSetEvent out;
    out.timer = taken.is_timer();
    out.sample = py::none();
    out.subscriber = py::none();
    if (taken.is_message()) {
      const Member& member = member_of(taken.key());
      out.key = member.key;
      out.sample = adopt(PySample(member.endpoint, std::move(taken.sample())));
      out.subscriber = member.subscriber;
    } else {
      out.key = timer_of(taken.key());
    }
    return out;
  }

  /// Lets the members go; a wait in another thread ends with Closed. Idempotent.
  void close() {
    if (!set_) return;
    cancel_->store(true);
    if (turn_.held()) return;  // the thread holding the turn finishes the close when its call ends
    set_.reset();
    members_.clear();
  }
  bool closed() const { return !set_ || cancel_->load(); }
  std::size_t size() const { return members_.size(); }

 private:
  struct Member {
    std::size_t key;       // the set's own
    std::size_t core_key;  // the core set's
    std::shared_ptr<SubscriberEndpoint> endpoint;
    py::object subscriber;
  };
  struct Timer {
    std::size_t key;
    std::size_t core_key;
  };

  /// A thread's turn on the set for one call (waiting for another thread's call to end, until
  /// `deadline`); the set closed meanwhile is cerulion.Closed. A close() while the turn was held
  /// is finished when it is given up.
  class SetTurn {
   public:
    SetTurn(PyWaitSet& set, const char* use, const Deadline& deadline = Deadline(std::nullopt)) : set_(set) {
      set_.open(use);
      if (!set_.turn_.take(deadline, "wait set")) {
        raise(Status(ErrorCode::Timeout, "wait set: another thread's call on it did not end within the timeout", {}));
      }
      if (set_.closed()) {
        give();
        set_.open(use);
      }
    }
    ~SetTurn() { give(); }
    SetTurn(const SetTurn&) = delete;
    SetTurn& operator=(const SetTurn&) = delete;

   private:
    void give() {
      if (set_.cancel_->load() && set_.set_) set_.close_now();
      set_.turn_.give();
    }
    PyWaitSet& set_;
  };

  /// One wait: the set's turn and every member's; members closed since the last wait leave first.
  class Waiting {
   public:
    Waiting(PyWaitSet& set, const char* use, const Deadline& deadline) : set_(set), turn_(set, use, deadline) {
      set_.drop_closed_members();
      for (Member& member : set_.members_) {
        scopes_.push_back(std::make_unique<BusyScope<SubscriberEndpoint>>(*member.endpoint, "subscriber", deadline));
      }
    }
    Waiting(const Waiting&) = delete;
    Waiting& operator=(const Waiting&) = delete;

   private:
    PyWaitSet& set_;
    SetTurn turn_;  // given up after the members' turns
    std::vector<std::unique_ptr<BusyScope<SubscriberEndpoint>>> scopes_;
  };

  void open(const char* use) const {
    if (closed()) raise_closed(std::string("the wait set was closed; ") + use + " needs an open one", {});
  }
  void close_now() {
    set_.reset();
    members_.clear();
  }
  void drop_closed_members() {
    for (auto it = members_.begin(); it != members_.end();) {
      if (it->endpoint->cancel.load()) {
        set_->remove(*it->endpoint->core);
        it = members_.erase(it);
      } else {
        ++it;
      }
    }
  }
  const Member& member_of(std::size_t core_key) const {
    for (const Member& member : members_) {
      if (member.core_key == core_key) return member;
    }
    raise(Status(ErrorCode::InvalidArgument, "wait set: a message from a member it no longer holds", {}));
  }
  std::size_t timer_of(std::size_t core_key) const {
    for (const Timer& timer : timers_) {
      if (timer.core_key == core_key) return timer.key;
    }
    raise(Status(ErrorCode::InvalidArgument, "wait set: a timer it does not hold", {}));
  }
  /// Timeout and a cancel by close() as the Subscriber says them; anything else as it is.
  template <typename T>
  Result<T> ended(Result<T>&& result) {
    if (result.code() == ErrorCode::Interrupted && cancel_->load()) {
      raise_closed("the wait set was closed while it waited", {});
    }
    if (result.code() == ErrorCode::Timeout) {
      raise(Status(ErrorCode::Timeout, "wait set: no message and no timer within the timeout", {}));
    }
    if (!result) raise(with_advice(result.status(), kReleaseSample));
    return std::move(result);
  }

  // The cancel flag outlives the core set, which is destroyed before the members it watches.
  std::unique_ptr<std::atomic<bool>> cancel_ = std::make_unique<std::atomic<bool>>(false);
  std::vector<Member> members_;
  std::vector<Timer> timers_;
  std::size_t next_key_ = 0;
  std::optional<WaitSet> set_;
  Turn turn_;
};

}  // namespace

void register_wait_set(py::module_& m) {
  py::class_<PyWaitSetReady>(m, "WaitSetReady", "What WaitSet.wait() found ready; keys are what add() and add_timer() returned.")
      .def("message", &PyWaitSetReady::message, py::arg("key"),
           "True when the subscriber of `key` has a message: its try_receive() returns it.")
      .def("timer", &PyWaitSetReady::timer, py::arg("key"), "True when the timer of `key` came due.")
      .def_property_readonly("any_message", [](const PyWaitSetReady& r) { return r.ready.any_message(); })
      .def_property_readonly("any_timer", [](const PyWaitSetReady& r) { return r.ready.any_timer(); });

  py::class_<PyWaitSetEvent>(m, "WaitSetEvent",
                             "What WaitSet.receive() returned: one message taken from a member, or one timer.")
      .def_readonly("key", &PyWaitSetEvent::key, "The member's key (add()) or the timer's (add_timer()).")
      .def_property_readonly("is_timer", [](const PyWaitSetEvent& e) { return e.timer; })
      .def_property_readonly("is_message", [](const PyWaitSetEvent& e) { return !e.timer; })
      .def_readonly("sample", &PyWaitSetEvent::sample, "The message, a cerulion.Sample (None for a timer).")
      .def_readonly("subscriber", &PyWaitSetEvent::subscriber,
                    "The Subscriber the message came from (None for a timer).")
      .def("__repr__", [](const PyWaitSetEvent& e) {
        return std::string("<cerulion.WaitSetEvent ") + (e.timer ? "timer " : "message of member ") + std::to_string(e.key) +
               ">";
      });

  py::class_<PyWaitSet>(m, "WaitSet",
                        "One thread waiting on several subscribers and timers at once (a node's event loop), as "
                        "cerulion::WaitSet:\n\n"
                        "    ws = cerulion.WaitSet()\n"
                        "    imu = ws.add(imu_sub)             # keys: ints\n"
                        "    tick = ws.add_timer(0.1)          # seconds\n"
                        "    for event in ws:                  # until Ctrl-C or close()\n"
                        "        if event.is_timer: ...\n"
                        "        elif event.key == imu: use(event.sample)\n\n"
                        "Waits release the GIL and Ctrl-C raises KeyboardInterrupt. A subscriber is in one set at a "
                        "time. Safe to share between threads: calls on the set, and on its members while the set waits, "
                        "take turns (each waits for the other's end, within its own timeout). A member closed leaves "
                        "the set at its next wait. A context manager: closes at the end.")
      .def(py::init<py::object>(), py::kw_only(), py::arg("wait") = "adaptive",
           "wait: how the set waits, WaitStrategy or 'adaptive' (default), 'spin', 'block'.")
      .def("add", &PyWaitSet::add, py::arg("subscriber"),
           "Watches `subscriber`; returns its key. InvalidArgument when the set is full (64), holds it already, or "
           "it is in another set.")
      .def("remove", &PyWaitSet::remove, py::arg("subscriber"), "Stops watching `subscriber` (its key is not reused).")
      .def("add_timer", &PyWaitSet::add_timer, py::arg("period"),
           "A periodic timer of `period` seconds, first due one period from now; returns its key (one count for "
           "subscribers and timers: a timer's key is never a subscriber's). A timer late by several periods fires once.")
      .def("wait", &PyWaitSet::wait, py::arg("timeout") = py::none(),
           "Waits until a member has a message or a timer is due (WaitSetReady), taking nothing: the members' "
           "try_receive() take. Raises Timeout, Closed.")
      .def("receive", &PyWaitSet::receive, py::arg("timeout") = py::none(),
           "Waits until a member has a message and takes it, or a timer is due (a due timer first): one "
           "WaitSetEvent per call. Members take turns. Raises Timeout, Closed, or a member's own error.")
      .def("close", &PyWaitSet::close, "Lets the members go; a wait in another thread ends with Closed. Idempotent.")
      .def("__len__", &PyWaitSet::size, "Subscribers watched.")
      .def_property_readonly("closed", &PyWaitSet::closed)
      .def("__iter__", [](py::object self) { return self; })
      .def("__next__",
           &next_until_closed<PyWaitSet>,
           "The next event: `for event in ws:` runs until Ctrl-C (KeyboardInterrupt) or close().")
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](PyWaitSet& s, py::args) { s.close(); return false; });
}

}  // namespace cerulion::python
