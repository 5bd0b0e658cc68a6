// SPDX-License-Identifier: Apache-2.0
// cerulion.Subscriber and cerulion.Sample: a received message whose buffer is the topic's slot.

#include "subscriber.hpp"

#include "fast_method.hpp"

#include <pybind11/numpy.h>

#include <array>
#include <climits>
#include <functional>

namespace cerulion::python {
namespace {

/// numpy's functions as_array calls, looked up once: a lookup (and numpy.prod) per frame costs more
/// than the rest of a receive in a process whose caches went cold between frames. Kept for the
/// interpreter's life, as the numpy module itself is.
struct NumpyFunctions {
  py::handle dtype, frombuffer;
};
const NumpyFunctions& numpy_functions() {
  static const NumpyFunctions functions = [] {
    py::module_ numpy = py::module_::import("numpy");
    return NumpyFunctions{py::object(numpy.attr("dtype")).release(), py::object(numpy.attr("frombuffer")).release()};
  }();
  return functions;
}

/// A shape's dimensions as numpy takes them, and the number of items they make.
struct Dimensions {
  static constexpr int kMax = 32;  // NPY_MAXDIMS
  std::array<Py_intptr_t, kMax> extent{};
  int count = 0;
  unsigned long long items = 1;
};

/// `shape` (an int or a sequence of at most Dimensions::kMax ints ≥ 0) as Dimensions, or nullopt for
/// anything else.
std::optional<Dimensions> dimensions_of(py::handle shape) {
  Dimensions out;
  auto add = [&out](py::handle d) {
    if (!py::isinstance<py::int_>(d) || py::isinstance<py::bool_>(d) || out.count == Dimensions::kMax) return false;
    const long long n = d.cast<long long>();
    if (n < 0) return false;
    const auto extent = static_cast<unsigned long long>(n);
    if (extent != 0 && out.items > ULLONG_MAX / extent) return false;
    out.items *= extent;
    out.extent[static_cast<std::size_t>(out.count++)] = static_cast<Py_intptr_t>(n);
    return true;
  };
  if (py::isinstance<py::int_>(shape)) return add(shape) ? std::optional(out) : std::nullopt;
  if (!py::isinstance<py::sequence>(shape) || py::isinstance<py::str>(shape)) return std::nullopt;
  for (py::handle d : py::reinterpret_borrow<py::sequence>(shape)) {
    if (!add(d)) return std::nullopt;
  }
  return out;
}

/// as_array for dtypes numpy lays out by itself (sub-arrays, objects, sizeless types): through
/// numpy.frombuffer and reshape, whose own errors (ValueError) say what is wrong.
py::object as_array_through_numpy(py::handle self, PySample& sample, py::handle dtype, py::handle shape,
                                  const std::function<void(const std::string&)>& refuse) {
  const std::size_t size = sample.bytes("as_array()").size();
  const NumpyFunctions& numpy = numpy_functions();
  py::object array;
  try {
    array = numpy.frombuffer(self, dtype);
  } catch (py::error_already_set& error) {
    if (!error.matches(PyExc_ValueError)) throw;
    py::object type = numpy.dtype(dtype);
    refuse(std::to_string(size) + " bytes are not a whole number of " + std::string(py::str(type)) + " (" +
           std::to_string(type.attr("itemsize").cast<std::size_t>()) + " bytes each)");
  }
  if (shape.is_none()) return array;
  const auto item = array.attr("itemsize").cast<std::size_t>();
  const std::optional<Dimensions> dimensions = dimensions_of(shape);
  if (!dimensions || dimensions->items * item != size) {
    refuse(std::to_string(size) + " bytes do not make shape " + std::string(py::str(shape)) + " of " +
           std::string(py::str(array.attr("dtype"))));
  }
  return array.attr("reshape")(shape);
}

/// A read-only array of `dtype` and `shape` over the sample's bytes, made in one step by numpy's C
/// API rather than by numpy.frombuffer then reshape (two Python calls and the arrays between them,
/// which cost more than the rest of a receive once caches went cold between frames). Its base is a
/// memoryview of the sample, as numpy.frombuffer's would be: a view counted until the array's end.
py::object as_array(py::handle self, py::handle dtype, py::handle shape) {
  PySample& sample = self_of<PySample>(self.ptr());
  const std::size_t size = sample.bytes("as_array()").size();
  const std::function<void(const std::string&)> refuse = [&](const std::string& why) {
    raise(Status(ErrorCode::InvalidArgument, "sample #" + std::to_string(sample.seq()) + " of '" + sample.topic() + "': " + why,
                 Subject::topic(sample.topic())));
  };
  py::dtype type = py::dtype::from_args(py::reinterpret_borrow<py::object>(dtype));
  const auto* descr = py::detail::array_descriptor_proxy(type.ptr());
  constexpr char kHasObject = 0x01;  // NPY_ITEM_HASOBJECT: numpy refuses those over a buffer
  if (descr->elsize <= 0 || descr->subarray != nullptr || (descr->flags & kHasObject) != 0) {
    return as_array_through_numpy(self, sample, dtype, shape, refuse);
  }
  const auto item = static_cast<std::size_t>(descr->elsize);
  if (size % item != 0) {
    refuse(std::to_string(size) + " bytes are not a whole number of " + std::string(py::str(type)) + " (" +
           std::to_string(item) + " bytes each)");
  }
  Dimensions dimensions;
  if (shape.is_none()) {
    dimensions.extent[0] = static_cast<Py_intptr_t>(size / item);
    dimensions.count = 1;
  } else {
    const std::optional<Dimensions> given = dimensions_of(shape);
    if (!given || given->items * item != size) {
      refuse(std::to_string(size) + " bytes do not make shape " + std::string(py::str(shape)) + " of " +
             std::string(py::str(type)));
    }
    dimensions = *given;
  }
  std::array<Py_intptr_t, Dimensions::kMax> strides{};
  auto stride = static_cast<Py_intptr_t>(item);
  for (int i = dimensions.count; i-- > 0;) {
    strides[static_cast<std::size_t>(i)] = stride;
    stride *= dimensions.extent[static_cast<std::size_t>(i)];
  }
  auto view = py::reinterpret_steal<py::object>(PyMemoryView_FromObject(self.ptr()));
  if (!view) throw py::error_already_set();
  // No flags: numpy works out contiguity and alignment, and the array is not writeable.
  const auto& numpy = py::detail::npy_api::get();
  auto array = py::reinterpret_steal<py::object>(numpy.PyArray_NewFromDescr_(
      numpy.PyArray_Type_, type.release().ptr(), dimensions.count, dimensions.extent.data(), strides.data(),
      PyMemoryView_GET_BUFFER(view.ptr())->buf, 0, nullptr));
  if (!array) throw py::error_already_set();
  // Steals the reference to the view, even when it fails.
  if (numpy.PyArray_SetBaseObject_(array.ptr(), view.release().ptr()) != 0) throw py::error_already_set();
  return array;
}


PyObject* sample_as_array(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  return run_fast_method([&] {
    const FastArguments a("as_array", args, nargs, kwnames, {"dtype", "shape"}, 1);
    return as_array(self, a[0], a[1]);
  });
}
PyObject* sample_release(PyObject* self, PyObject*) {
  return run_fast_method([&] {
    self_of<PySample>(self).release();
    return py::none();
  });
}
PyObject* sample_enter(PyObject* self, PyObject*) {
  return run_fast_method([&] { return py::reinterpret_borrow<py::object>(self); });
}
PyObject* sample_exit(PyObject* self, PyObject* const*, Py_ssize_t) {
  return run_fast_method([&] {
    self_of<PySample>(self).release();
    return py::reinterpret_borrow<py::object>(Py_False);
  });
}
PyObject* subscriber_receive(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  return run_fast_method([&] {
    const FastArguments a("receive", args, nargs, kwnames, {"timeout"}, 0);
    return adopt(self_of<PySubscriber>(self).receive(a[0]));
  });
}

PyMethodDef sample_as_array_method{
    "as_array", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(sample_as_array)),
    METH_FASTCALL | METH_KEYWORDS,
    "as_array($self, /, dtype, shape=None)\n--\n\n"
    "A read-only numpy view of the payload as `dtype` (and `shape`, if given): no copy. "
    "InvalidArgument when the payload is not a whole number of items (or not that shape)."};
PyMethodDef sample_release_method{
    "release", sample_release, METH_NOARGS,
    "release($self, /)\n--\n\nReleases the slot now: at once, or when the last view of the buffer is gone. Idempotent."};
PyMethodDef sample_enter_method{"__enter__", sample_enter, METH_NOARGS, "__enter__($self, /)\n--\n\nThe sample itself."};
PyMethodDef sample_exit_method{"__exit__", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(sample_exit)),
                               METH_FASTCALL, "__exit__($self, /, *args)\n--\n\nReleases the sample (see release())."};
PyMethodDef subscriber_receive_method{
    "receive", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(subscriber_receive)),
    METH_FASTCALL | METH_KEYWORDS,
    "receive($self, /, timeout=None)\n--\n\n"
    "The next message as a Sample, waiting up to `timeout` seconds (None: for ever). The GIL is released "
    "while waiting and Ctrl-C raises KeyboardInterrupt. A subscriber holds at most two samples at once: a third "
    "receive raises LoanLimit until one is released (release(), or the end of `with sub.receive() as sample:`). "
    "Raises Timeout, LoanLimit, Closed."};

}  // namespace

void register_subscriber(py::module_& m) {
  auto sample = py::class_<PySample>(m, "Sample",
                       "A received message. It exposes the buffer protocol, read-only, over the topic's shared "
                       "memory slot itself: numpy.frombuffer(sample, dtype) and memoryview(sample) are views, "
                       "not copies. The slot stays held (in lockstep, the publisher cannot reuse it) while the "
                       "Sample or any view of it lives; `with sub.receive() as sample:` releases it at the end "
                       "of the block (or once the last view made in it is gone). A released sample refuses "
                       "new views and data access (cerulion.Closed).",
                       buffer_protocol_of<PySample, false>())
      .def_property_readonly("seq", &PySample::seq, "Per-topic sequence number, 0 for the topic's first message.")
      .def_property_readonly("publish_time_ns", &PySample::publish_time_ns, "CLOCK_MONOTONIC nanoseconds at publish.")
      .def_property_readonly("publish_realtime_ns", &PySample::publish_realtime_ns,
                             "CLOCK_REALTIME nanoseconds at publish.")
      .def_property_readonly("lost_before", &PySample::lost_before,
                             "Messages this subscriber lost just before this one (free run and taps).")
      .def_property_readonly("publisher_pid", &PySample::publisher_pid, "Process id of the publisher.")
      .def_property_readonly("topic", &PySample::topic, "The topic's normalized name.")
      .def_property_readonly("address", &PySample::address,
                             "Address of the payload in this process (inside the topic's shared memory).")
      .def_property_readonly("released", &PySample::released, "True once release() was called.")
      .def_property_readonly("data", [](const PySample& s) {
        auto bytes = s.bytes("data");
        return py::bytes(reinterpret_cast<const char*>(bytes.data()), bytes.size());
      }, "The payload as bytes (a copy).")
      .def("text", [](const PySample& s) {
        auto bytes = s.bytes("text()");
        return py::str(reinterpret_cast<const char*>(bytes.data()), bytes.size());
      }, "The payload decoded as UTF-8 (a copy).")
      .def("json", [](const PySample& s) {
        auto bytes = s.bytes("json()");
        return py::module_::import("json").attr("loads")(
            py::str(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
      }, "The payload parsed as JSON (json topics).")
      .def("__len__", &PySample::size)
      .def("__repr__", [](const PySample& s) {
        return "<cerulion.Sample #" + std::to_string(s.seq()) + " of '" + s.topic() + "', " + std::to_string(s.size()) +
               " bytes" + (s.released() ? ", released>" : ">");
      });

  auto subscriber = py::class_<PySubscriber>(m, "Subscriber",
                           "A subscriber (or tap) on one topic, as cerulion::Subscriber. It receives the messages "
                           "published after it attached (start='first': from the oldest the ring still holds). "
                           "Safe to share between threads: their calls on it take turns (a receive() waits for another "
                           "thread's to end, within its own timeout), each message going to one of them. A context "
                           "manager: closes at the end.")
      .def(py::init<const std::string&, py::object, bool, py::object, py::object, py::object, py::object,
                    const std::string&>(),
           py::arg("topic"), py::kw_only(), py::arg("wait") = "adaptive", py::arg("tap") = false,
           py::arg("start") = "next", py::arg("domain") = py::none(), py::arg("mode") = py::none(),
           py::arg("depth") = py::none(), py::arg("group") = "",
           "Opens or creates `topic` and attaches.\n\n"
           "wait: WaitStrategy or 'adaptive' (default), 'spin', 'block'. tap: attach as a tap (never holds a "
           "lockstep publisher back; may lose messages). start: StartAt or 'next' (default), 'first'. domain: "
           "default $CERULION_DOMAIN or 'default'. mode, depth, group: used only if this subscriber creates the "
           "topic. Raises InvalidTopicName, PermissionDenied, Incompatible... as the C++ API.")
      .def("try_receive", &PySubscriber::try_receive, "The next message if one is ready now, else None (None too while another thread's call on "
           "this subscriber is under way).")
      .def("close", &PySubscriber::close,
           "Leaves the topic (once samples it lent are released). Idempotent; a wait in another thread ends "
           "with Closed.")
      .def("__iter__", [](py::object self) { return self; })
      .def("__next__",
           &next_until_closed<PySubscriber>,
           "Waits for the next message: `for sample in sub:` runs until Ctrl-C (KeyboardInterrupt) or close().")
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](PySubscriber& s, py::args) { s.close(); return false; })
      .def_property_readonly("closed", &PySubscriber::closed)
      .def_property_readonly("topic", [](const PySubscriber& s) { return s.core("topic").topic(); },
                             "The topic's normalized name.")
      .def_property_readonly("domain", &PySubscriber::domain)
      .def_property_readonly("mode", [](const PySubscriber& s) { return s.core("mode").mode(); })
      .def_property_readonly("role", [](const PySubscriber& s) { return s.core("role").role(); })
      .def_property_readonly("lost", [](const PySubscriber& s) { return s.core("lost").lost(); },
                             "Messages lost so far (free run and taps).")
      .def_property_readonly("received", [](const PySubscriber& s) { return s.core("received").received(); })
      .def_property_readonly("published", [](const PySubscriber& s) { return s.core("published").published(); },
                             "Messages the topic's publishers have published so far.")
      .def_property_readonly("publisher_count",
                             [](const PySubscriber& s) { return s.core("publisher_count").publisher_count(); })
      .def_property_readonly("type", [](const PySubscriber& s) { return take(s.core("type").type()); },
                             "The topic's TopicType (encoding and schema).");
  for (PyMethodDef* method : {&sample_as_array_method, &sample_release_method, &sample_enter_method, &sample_exit_method}) {
    add_fast_method(sample, *method);
  }
  add_fast_method(subscriber, subscriber_receive_method);
}

}  // namespace cerulion::python
