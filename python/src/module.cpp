// SPDX-License-Identifier: Apache-2.0
// cerulion._cerulion: the Python bindings over core, the recorder and flashback. The module holds
// no engine: every call is a library's (core's Publisher, Subscriber and WaitSet, recorder's Reader
// and Writer, flashback's dump); what it adds is Python's side of it (the buffer protocol over
// slots, waits that release the GIL and see Ctrl-C, errors as exceptions).

#include "binding.hpp"
#include "cerulion/version.hpp"

PYBIND11_MODULE(_cerulion, m) {
  m.doc() = "cerulion: zero-copy shared-memory messaging (the C++ core's bindings; import cerulion).";
  cerulion::python::register_errors(m);
  cerulion::python::register_arguments(m);
  cerulion::python::register_publisher(m);
  cerulion::python::register_subscriber(m);
  cerulion::python::register_wait_set(m);
  cerulion::python::register_recording_reader(m);
  cerulion::python::register_recording_writer(m);
  m.attr("__version__") = CERULION_VERSION_STRING;
}
