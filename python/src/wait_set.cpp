// SPDX-License-Identifier: Apache-2.0
// cerulion.WaitSet: one thread waiting on several subscribers and timers, as cerulion::WaitSet.

#include <pybind11/stl.h>

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

/// What WaitSet.receive() returned: a message taken from one member (with the Subscriber it came
/// from), or a timer that came due.
struct PyWaitSetEvent {
  std::size_t key = 0;
  bool timer = false;
  py::object sample;      // a cerulion.Sample, or None for a timer
  py::object subscriber;  // the member's cerulion.Subscriber, or None for a timer
};

/// A Python WaitSet. Its members' endpoints are kept alive by the set (a member closed meanwhile
/// leaves it at the next wait), and each is marked busy while the set waits, since the set's wait
/// reads them with the GIL released: a second thread then waiting on one of them is told so.
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
    if (endpoint->busy) {
      raise(Status(ErrorCode::InvalidArgument, "another thread is waiting on this subscriber; add it once it is done",
                   Subject::topic(endpoint->core->topic())));
    }
    const std::size_t key = take(set_->add(*endpoint->core));
    members_.push_back(Member{key, std::move(endpoint), std::move(subscriber)});
    return key;
  }

  void remove(py::object subscriber) {
    open("remove()");
    for (auto it = members_.begin(); it != members_.end(); ++it) {
      if (it->subscriber.is(subscriber)) {
        if (it->endpoint->busy) {
          raise(Status(ErrorCode::InvalidArgument, "another thread is waiting on this wait set; use one per thread", {}));
        }
        set_->remove(*it->endpoint->core);
        members_.erase(it);
        return;
      }
    }
  }

  std::size_t add_timer(py::handle period) {
    open("add_timer()");
    return take(set_->add_timer(period_argument(period)));
  }

  WaitSetReady wait(py::object timeout_seconds) {
    const Timeout timeout = timeout_argument(timeout_seconds);
    Waiting waiting(*this, "wait()");
    Result<WaitSetReady> ready = wait_in_slices(Deadline(timeout), [&](Timeout slice) { return set_->wait(slice); });
    return take(ended(std::move(ready)));
  }

  PyWaitSetEvent receive(py::object timeout_seconds) {
    const Timeout timeout = timeout_argument(timeout_seconds);
    Waiting waiting(*this, "receive()");
    Result<WaitSetEvent> event = wait_in_slices(Deadline(timeout), [&](Timeout slice) { return set_->receive(slice); });
    WaitSetEvent taken = take(ended(std::move(event)));
    PyWaitSetEvent out;
    out.key = taken.key();
    out.timer = taken.is_timer();
    out.sample = py::none();
    out.subscriber = py::none();
    if (taken.is_message()) {
      const Member& member = member_of(taken.key());
      out.sample = adopt(PySample(member.endpoint, std::move(taken.sample())));
      out.subscriber = member.subscriber;
    }
    return out;
  }

  /// Lets the members go; a wait in another thread ends with Closed. Idempotent.
  void close() {
    if (!set_) return;
    cancel_->store(true);
    if (busy_) return;  // the waiting thread finishes the close when its wait ends
    set_.reset();
    members_.clear();
  }
  bool closed() const { return !set_ || cancel_->load(); }
  std::size_t size() const { return members_.size(); }

 private:
  struct Member {
    std::size_t key;
    std::shared_ptr<SubscriberEndpoint> endpoint;
    py::object subscriber;
  };

  /// One wait: the set and every member busy; members closed since the last wait leave first.
  class Waiting {
   public:
    Waiting(PyWaitSet& set, const char* use) : set_(set) {
      set_.open(use);
      if (set_.busy_) raise(Status(ErrorCode::InvalidArgument, "another thread is waiting on this wait set; use one per thread", {}));
      set_.drop_closed_members();
      for (Member& member : set_.members_) {
        scopes_.push_back(std::make_unique<BusyScope<SubscriberEndpoint>>(*member.endpoint, "subscriber"));
      }
      set_.busy_ = true;
    }
    ~Waiting() {
      set_.busy_ = false;
      scopes_.clear();
      if (set_.cancel_->load()) set_.close_now();
    }
    Waiting(const Waiting&) = delete;
    Waiting& operator=(const Waiting&) = delete;

   private:
    PyWaitSet& set_;
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
  const Member& member_of(std::size_t key) const {
    for (const Member& member : members_) {
      if (member.key == key) return member;
    }
    raise(Status(ErrorCode::InvalidArgument, "wait set: a message from a member it no longer holds", {}));
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
    return std::move(result);
  }

  // The cancel flag outlives the core set, which is destroyed before the members it watches.
  std::unique_ptr<std::atomic<bool>> cancel_ = std::make_unique<std::atomic<bool>>(false);
  std::vector<Member> members_;
  std::optional<WaitSet> set_;
  bool busy_ = false;
};

}  // namespace

void register_wait_set(py::module_& m) {
  py::class_<WaitSetReady>(m, "WaitSetReady", "What WaitSet.wait() found ready; keys are what add() and add_timer() returned.")
      .def("message", &WaitSetReady::message, py::arg("key"),
           "True when the subscriber of `key` has a message: its try_receive() returns it.")
      .def("timer", &WaitSetReady::timer, py::arg("key"), "True when the timer of `key` came due.")
      .def_property_readonly("any_message", &WaitSetReady::any_message)
      .def_property_readonly("any_timer", &WaitSetReady::any_timer);

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
                        "time; while the set waits no other thread may wait on its members. A member closed leaves the "
                        "set at its next wait. A context manager: closes at the end.")
      .def(py::init<py::object>(), py::kw_only(), py::arg("wait") = "adaptive",
           "wait: how the set waits, WaitStrategy or 'adaptive' (default), 'spin', 'block'.")
      .def("add", &PyWaitSet::add, py::arg("subscriber"),
           "Watches `subscriber`; returns its key. InvalidArgument when the set is full (64), holds it already, or "
           "it is in another set.")
      .def("remove", &PyWaitSet::remove, py::arg("subscriber"), "Stops watching `subscriber` (its key is not reused).")
      .def("add_timer", &PyWaitSet::add_timer, py::arg("period"),
           "A periodic timer of `period` seconds, first due one period from now; returns its key (keys of timers "
           "and of subscribers are counted apart). A timer late by several periods fires once.")
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
