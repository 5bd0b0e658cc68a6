// SPDX-License-Identifier: Apache-2.0
// cerulion.Publisher and cerulion.Loan: a writable buffer that is the topic's slot, published in place.

#include <pybind11/stl.h>

#include <cstring>
#include <memory>

#include "arguments.hpp"
#include "binding.hpp"
#include "fast_method.hpp"
#include "cerulion/core/publisher.hpp"
#include "cerulion/core/topic_type.hpp"

namespace cerulion::python {
namespace {

using PublisherEndpoint = Endpoint<Publisher, Loan>;

/// A slot lent by a publisher, writable in place through the buffer protocol. A slot on which a
/// view (a memoryview, a numpy array) is still alive is never published nor given back: a view
/// left over could otherwise write into a message subscribers read, or into a reused slot.
class PyLoan : public LentSlot<PublisherEndpoint> {
 public:
  PyLoan(std::shared_ptr<PublisherEndpoint> owner, Loan loan)
      : LentSlot(std::move(owner), std::move(loan)), address_(reinterpret_cast<std::uintptr_t>(held_.data().data())) {}

  std::span<std::byte> bytes(const char* use) const {
    if (finished_) {
      raise_closed("a loan of '" + topic_ + "' was " + (seq_ ? "published" : "discarded") + "; " + use +
                       " needs a loan not yet published",
                   Subject::topic(topic_));
    }
    return held_.data();
  }

  std::uint64_t publish(py::handle timeout_seconds) { return publish_within(timeout_argument(timeout_seconds)); }

  std::uint64_t publish_within(Timeout timeout) {
    bytes("publish()");
    if (views_ > 0) refuse_views("at publish", "delete them first (del array)");
    if (owner_->cancel.load()) {
      discard();
      raise_closed("the publisher of '" + topic_ + "' was closed; the loan was discarded", Subject::topic(topic_));
    }
    const Deadline deadline(timeout);
    BusyScope busy(*owner_, "publisher", deadline);
    finished_ = true;
    Result<std::uint64_t> seq = [&] {
      py::gil_scoped_release unlocked;
      return owner_->core->publish(std::move(held_), deadline.left());
    }();
    seq_ = take(std::move(seq));
    return *seq_;
  }

  void discard() { finish(); }

  void shrink(std::size_t size) {
    bytes("shrink()");
    held_.shrink(size);
  }

  /// `with pub.loan(n) as buf:` gives a memoryview over the slot.
  py::object enter(py::object self) {
    bytes("a with block");
    entered_ = py::reinterpret_steal<py::object>(PyMemoryView_FromObject(self.ptr()));
    if (!entered_) throw py::error_already_set();
    return entered_;
  }

  /// Publishes at the end of the block, discards on an exception.
  bool exit(py::handle exception_type) {
    release_entered();
    if (finished_) return false;
    if (!exception_type.is_none()) {
      discard();
      return false;
    }
    if (views_ > 0) {
      discard();
      refuse_views("at the end of the with block",
                   "delete them in the block (del array), or write through a temporary (numpy.frombuffer(buf, dtype)[:] = ...)");
    }
    publish_within(std::nullopt);
    return false;
  }

  std::size_t size() const { return held_.valid() ? held_.size() : 0; }
  std::uintptr_t address() const { return address_; }
  std::optional<std::uint64_t> seq() const { return seq_; }
  bool done() const { return finished_; }

 private:
  /// Nothing may write into a published slot, so a loan with views left is not published.
  [[noreturn]] void refuse_views(const char* when, const char* advice) const {
    raise(Status(ErrorCode::InvalidArgument,
                 "a loan of '" + topic_ + "': " + std::to_string(views_) +
                     " view(s) of its buffer (a memoryview, a numpy array) still alive " + when + "; nothing published: " + advice,
                 Subject::topic(topic_)));
  }
  /// Ends the memoryview the with block was given (so it cannot write after the block); a view
  /// taken from that memoryview keeps it (and this loan) alive, and is counted in views_.
  void release_entered() {
    py::object view = std::move(entered_);
    entered_ = py::object();
    if (!view) return;
    // memoryview.release() called directly, without an attribute lookup on every frame.
    static PyObject* const release_name = PyUnicode_InternFromString("release");
    PyObject* released = PyObject_CallMethodNoArgs(view.ptr(), release_name);
    if (released != nullptr) {
      Py_DECREF(released);
      return;
    }
    py::error_already_set error;
    if (!error.matches(PyExc_BufferError)) throw error;
  }

  std::uintptr_t address_;
  std::optional<std::uint64_t> seq_;
  py::object entered_;
};

class PyPublisher : public EndpointHandle<PublisherEndpoint> {
 public:
  PyPublisher(const std::string& topic, py::object mode, py::object depth, const std::string& group,
              py::object encoding, py::object schema, std::uint64_t max_payload, py::object wait, py::object domain)
      : EndpointHandle(topic, options_of(mode, depth, group, encoding, schema, max_payload, wait, domain)) {
    // What the topic carries when this publisher joined: its messages are checked as `cerulion pub`
    // checks them (a json topic's must be JSON).
    if (auto type = core("type").type(); type.ok()) type_ = std::move(*type);
  }

  PyLoan loan(std::int64_t size, py::object timeout_seconds) {
    std::shared_ptr<PublisherEndpoint> endpoint = open("loan()");
    if (size < 0) raise(Status(ErrorCode::InvalidArgument, "loan(): a size ≥ 0 is needed", Subject::option("nbytes")));
    const Deadline deadline(timeout_argument(timeout_seconds));
    BusyScope busy(*endpoint, "publisher", deadline);
    // A slot free now is taken with the GIL held (a loan waits only for room in lockstep).
    Result<Loan> now = endpoint->core->loan(static_cast<std::size_t>(size), std::chrono::nanoseconds(0));
    if (now.ok()) return PyLoan(endpoint, std::move(now).value());
    if (now.code() != ErrorCode::Timeout) raise(with_advice(now.status(), kEndLoan));
    Loan loan = take(wait_in_slices(deadline, [&](Timeout slice) {
      return endpoint->core->loan(static_cast<std::size_t>(size), slice);
    }));
    return PyLoan(endpoint, std::move(loan));
  }

  std::uint64_t publish(py::object data, py::object timeout_seconds) {
    std::shared_ptr<PublisherEndpoint> endpoint = open("publish()");
    const ContiguousBuffer buffer(data, "publish()");
    if (!type_.raw()) {
      const std::span<const std::byte> bytes(static_cast<const std::byte*>(buffer.data()), buffer.size());
      if (Status valid = check_payload(type_, bytes); !valid.ok()) {
        const std::string& name = endpoint->core->topic();
        raise(Status(ErrorCode::InvalidArgument,
                     "publish() on '" + name + "': " + valid.message() + " (the topic carries " + describe(type_) +
                         "); nothing published",
                     Subject::topic(name)));
      }
    }
    const Deadline deadline(timeout_argument(timeout_seconds));
    BusyScope busy(*endpoint, "publisher", deadline);
    Loan loan = take(wait_in_slices(deadline, [&](Timeout slice) { return endpoint->core->loan(buffer.size(), slice); }));
    Result<std::uint64_t> seq = [&] {
      py::gil_scoped_release unlocked;
      if (buffer.size() > 0) std::memcpy(loan.data().data(), buffer.data(), buffer.size());
      return endpoint->core->publish(std::move(loan), deadline.left());
    }();
    return take(std::move(seq));
  }

  std::uint64_t publish_json(py::object value, py::object timeout_seconds) {
    py::object text = py::module_::import("json").attr("dumps")(value, py::arg("separators") = py::make_tuple(",", ":"),
                                                                 py::arg("ensure_ascii") = false);
    return publish(text.attr("encode")("utf-8"), timeout_seconds);
  }

  void wait_for_subscribers(std::uint32_t count, py::object timeout_seconds) {
    std::shared_ptr<PublisherEndpoint> endpoint = open("wait_for_subscribers()");
    const Deadline deadline(timeout_argument(timeout_seconds));
    BusyScope busy(*endpoint, "publisher", deadline);
    Status waited = wait_in_slices(deadline, [&](Timeout slice) {
      return endpoint->core->wait_for_subscribers(count, slice);
    });
    if (waited.code() == ErrorCode::Timeout) {
      const std::string& topic = endpoint->core->topic();
      raise(Status(ErrorCode::Timeout, "topic '" + topic + "': fewer than " + std::to_string(count) +
                                           " subscriber(s) within the timeout",
                   Subject::topic(topic)));
    }
    check(std::move(waited));
  }

  static PublisherOptions options_of(py::object mode, py::object depth, const std::string& group, py::object encoding,
                                     py::object schema, std::uint64_t max_payload, py::object wait, py::object domain) {
    PublisherOptions options;
    options.topic.domain = domain_argument(domain);
    options.topic.mode = mode_argument(mode);
    options.topic.depth = depth_argument(depth);
    options.topic.group = group;
    options.topic.type = type_argument(encoding, schema);
    options.topic.max_payload = max_payload;
    options.wait.strategy = wait_argument(wait);
    return options;
  }

 private:
  TopicType type_;
};


std::int64_t size_argument(py::handle value) {
  if (!PyIndex_Check(value.ptr()) || PyBool_Check(value.ptr())) throw py::type_error("loan(): nbytes must be an int");
  const long long size = PyLong_AsLongLong(py::reinterpret_steal<py::object>(PyNumber_Index(value.ptr())).ptr());
  if (size == -1 && PyErr_Occurred()) throw py::error_already_set();
  return size;
}

PyObject* publisher_loan(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  return run_fast_method([&] {
    const FastArguments a("loan", args, nargs, kwnames, {"nbytes", "timeout"}, 1);
    return adopt(self_of<PyPublisher>(self).loan(size_argument(a[0]), a[1]));
  });
}
PyObject* loan_publish(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  return run_fast_method([&] {
    const FastArguments a("publish", args, nargs, kwnames, {"timeout"}, 0);
    return py::cast(self_of<PyLoan>(self).publish(a[0]));
  });
}
PyObject* loan_enter(PyObject* self, PyObject*) {
  return run_fast_method([&] { return self_of<PyLoan>(self).enter(py::reinterpret_borrow<py::object>(self)); });
}
PyObject* loan_exit(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  return run_fast_method([&] {
    if (PyVectorcall_NARGS(nargs) != 3) throw py::type_error("__exit__() takes 3 arguments (type, value, traceback)");
    self_of<PyLoan>(self).exit(args[0]);
    return py::reinterpret_borrow<py::object>(Py_False);
  });
}

PyMethodDef publisher_loan_method{
    "loan", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(publisher_loan)), METH_FASTCALL | METH_KEYWORDS,
    "loan($self, /, nbytes, timeout=None)\n--\n\n"
    "Lends a slot for nbytes (in lockstep, waiting up to `timeout` seconds for room, GIL released). The bytes "
    "are not cleared. Raises PayloadTooLarge, LoanLimit (two loans held already), Timeout, Closed."};
PyMethodDef loan_publish_method{
    "publish", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(loan_publish)), METH_FASTCALL | METH_KEYWORDS,
    "publish($self, /, timeout=None)\n--\n\nPublishes the slot; returns the message's sequence number."};
PyMethodDef loan_enter_method{"__enter__", loan_enter, METH_NOARGS,
                              "__enter__($self, /)\n--\n\nA writable memoryview over the slot, ended with the block."};
PyMethodDef loan_exit_method{
    "__exit__", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(loan_exit)), METH_FASTCALL,
    "__exit__($self, type, value, traceback, /)\n--\n\nPublishes the slot, or discards it on an exception."};

}  // namespace

void register_publisher(py::module_& m) {
  auto loan = py::class_<PyLoan>(m, "Loan",
                     "A slot of the topic's shared memory lent by Publisher.loan(), writable in place through the "
                     "buffer protocol. `with pub.loan(n) as buf:` gives a writable memoryview, publishes at the end "
                     "of the block and discards on an exception. A view still alive at publish (a numpy array made "
                     "from buf) refuses the publish (InvalidArgument): nothing may write into a published slot.",
                     buffer_protocol_of<PyLoan, true>())
      .def("discard", &PyLoan::discard, "Gives the slot back unpublished; nothing of it is delivered.")
      .def("shrink", &PyLoan::shrink, py::arg("nbytes"), "Publishes only the first nbytes (fewer than loaned).")
      .def("__len__", &PyLoan::size)
      .def_property_readonly("address", &PyLoan::address, "Address of the slot in this process.")
      .def_property_readonly("seq", &PyLoan::seq, "Sequence number once published, else None.")
      .def_property_readonly("done", &PyLoan::done, "True once published or discarded.")
      .def("__repr__", [](const PyLoan& l) {
        return "<cerulion.Loan of '" + l.topic() + "', " + std::to_string(l.size()) + " bytes" +
               (l.seq() ? ", published #" + std::to_string(*l.seq()) : std::string(l.done() ? ", discarded" : "")) + ">";
      });

  auto publisher = py::class_<PyPublisher>(m, "Publisher",
                          "A publisher on one topic, as cerulion::Publisher: opens or creates the topic and joins it. "
                          "Safe to share between threads: their calls on it take turns (a call waits for another "
                          "thread's to end, within its own timeout). A context manager: closes at the end.")
      .def(py::init<const std::string&, py::object, py::object, const std::string&, py::object, py::object,
                    std::uint64_t, py::object, py::object>(),
           py::arg("topic"), py::kw_only(), py::arg("mode") = py::none(), py::arg("depth") = py::none(),
           py::arg("group") = "", py::arg("encoding") = py::none(), py::arg("schema") = py::none(),
           py::arg("max_payload") = kDefaultMaxPayload, py::arg("wait") = "adaptive", py::arg("domain") = py::none(),
           "mode: Mode or 'lockstep' / 'free-run' (None: the topic's, lockstep for a new topic). depth: ring depth "
           "(None: the topic's, 16 for a new topic). group: share a new topic with this group. encoding: MCAP "
           "message encoding ('json', 'protobuf', 'cdr'... or 'x-...'), schema: Schema or (name, encoding, data). "
           "max_payload: a new topic's payload ceiling in bytes (1 GiB). wait: WaitStrategy or 'adaptive', 'spin', "
           "'block'. domain: default $CERULION_DOMAIN or 'default'. Raises InvalidTopicName, PermissionDenied, "
           "Incompatible, InvalidArgument... as the C++ API.")
      .def("publish", &PyPublisher::publish, py::arg("data"), py::arg("timeout") = py::none(),
           "Publishes a copy of any C-contiguous buffer (bytes, bytearray, memoryview, numpy array): one copy, "
           "into the slot. Returns the sequence number. On a json topic the bytes must be one JSON value, as "
           "`cerulion pub` checks them. Raises InvalidArgument for a non-contiguous buffer or a message the "
           "topic's encoding refuses, PayloadTooLarge, Timeout, Closed.")
      .def("publish_json", &PyPublisher::publish_json, py::arg("value"), py::arg("timeout") = py::none(),
           "Publishes json.dumps(value) (compact, UTF-8).")
      .def("wait_for_subscribers", &PyPublisher::wait_for_subscribers, py::arg("count") = 1,
           py::arg("timeout") = py::none(),
           "Waits until at least `count` subscribers (taps not counted) are attached. GIL released; Ctrl-C raises.")
      .def("close", &PyPublisher::close, "Leaves the topic (once loans it lent are done). Idempotent.")
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](PyPublisher& p, py::args) { p.close(); return false; })
      .def_property_readonly("closed", &PyPublisher::closed)
      .def_property_readonly("topic", [](const PyPublisher& p) { return p.core("topic").topic(); },
                             "The topic's normalized name.")
      .def_property_readonly("domain", &PyPublisher::domain)
      .def_property_readonly("mode", [](const PyPublisher& p) { return p.core("mode").mode(); })
      .def_property_readonly("depth", [](const PyPublisher& p) { return p.core("depth").depth(); })
      .def_property_readonly("max_payload", [](const PyPublisher& p) { return p.core("max_payload").max_payload(); })
      .def_property_readonly("subscriber_count",
                             [](const PyPublisher& p) { return p.core("subscriber_count").subscriber_count(); },
                             "Subscribers attached now (taps not counted).")
      .def_property_readonly("type", [](const PyPublisher& p) { return take(p.core("type").type()); },
                             "The topic's TopicType (encoding and schema).");
  for (PyMethodDef* method : {&loan_publish_method, &loan_enter_method, &loan_exit_method}) add_fast_method(loan, *method);
  add_fast_method(publisher, publisher_loan_method);
}

}  // namespace cerulion::python
