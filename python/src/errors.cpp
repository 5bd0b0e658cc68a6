// SPDX-License-Identifier: Apache-2.0
// cerulion.Error and its subclasses: core's ErrorCode, message and Subject as a Python exception.

#include <pybind11/stl.h>

#include <map>

#include "binding.hpp"

namespace cerulion::python {
namespace {

/// The exception classes, made once at import; the module keeps them (as attributes) for the
/// life of the interpreter, so plain handles suffice here.
struct ErrorClasses {
  py::handle base;
  py::handle closed;
  std::map<ErrorCode, py::handle> by_code;
};
ErrorClasses& error_classes() {
  static ErrorClasses classes;
  return classes;
}

py::handle new_error_class(py::module_& m, const char* name, const char* doc, py::tuple bases) {
  const std::string qualified = std::string("cerulion.") + name;
  PyObject* type = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, bases.ptr(), nullptr);
  if (type == nullptr) throw py::error_already_set();
  m.add_object(name, py::reinterpret_steal<py::object>(type));
  return type;
}

const char* subject_kind_name(SubjectKind kind) {
  switch (kind) {
    case SubjectKind::None: return "none";
    case SubjectKind::Topic: return "topic";
    case SubjectKind::Domain: return "domain";
    case SubjectKind::Option: return "option";
    case SubjectKind::Size: return "size";
    case SubjectKind::Path: return "path";
    case SubjectKind::Pattern: return "pattern";
    case SubjectKind::Process: return "process";
  }
  return "none";
}

}  // namespace

void set_python_error(const StatusError& error) {
  const ErrorClasses& classes = error_classes();
  py::handle type = classes.base;
  if (error.closed) {
    type = classes.closed;
  } else if (auto it = classes.by_code.find(error.status.code()); it != classes.by_code.end()) {
    type = it->second;
  }
  try {
    // A message may quote bytes that are not UTF-8 (a payload that is not JSON): shown escaped.
    const std::string& message = error.status.message();
    auto text = py::reinterpret_steal<py::object>(
        PyUnicode_DecodeUTF8(message.data(), static_cast<Py_ssize_t>(message.size()), "backslashreplace"));
    if (!text) throw py::error_already_set();
    py::object exc = type(text);
    exc.attr("code") = py::cast(error.status.code());
    exc.attr("subject") = error.status.subject().empty() ? py::none() : py::cast(error.status.subject());
    PyErr_SetObject(type.ptr(), exc.ptr());
  } catch (py::error_already_set& e) {
    e.restore();
  }
}

void register_errors(py::module_& m) {
  py::enum_<ErrorCode>(m, "ErrorCode", "What went wrong, as core's cerulion::ErrorCode.")
      .value("Ok", ErrorCode::Ok)
      .value("InvalidArgument", ErrorCode::InvalidArgument)
      .value("InvalidTopicName", ErrorCode::InvalidTopicName)
      .value("NotFound", ErrorCode::NotFound)
      .value("PermissionDenied", ErrorCode::PermissionDenied)
      .value("Corrupted", ErrorCode::Corrupted)
      .value("Incompatible", ErrorCode::Incompatible)
      .value("PayloadTooLarge", ErrorCode::PayloadTooLarge)
      .value("OutOfMemory", ErrorCode::OutOfMemory)
      .value("TooManyParticipants", ErrorCode::TooManyParticipants)
      .value("LoanLimit", ErrorCode::LoanLimit)
      .value("Timeout", ErrorCode::Timeout)
      .value("Interrupted", ErrorCode::Interrupted)
      .value("SystemError", ErrorCode::SystemError);

  py::class_<Subject>(m, "Subject",
                      "What an error is about, as data: kind ('topic', 'domain', 'option', 'size', 'path', "
                      "'pattern', 'process'), name, and for 'size' the bytes asked for and the ceiling.")
      .def_property_readonly("kind", [](const Subject& s) { return subject_kind_name(s.kind); })
      .def_readonly("name", &Subject::name)
      .def_readonly("asked", &Subject::asked)
      .def_readonly("ceiling", &Subject::ceiling)
      .def("__repr__", [](const Subject& s) {
        std::string text = std::string("Subject(") + subject_kind_name(s.kind) + ", '" + s.name + "'";
        if (s.kind == SubjectKind::Size) text += ", asked=" + std::to_string(s.asked) + ", ceiling=" + std::to_string(s.ceiling);
        return text + ")";
      });

  ErrorClasses& classes = error_classes();
  classes.base = new_error_class(
      m, "Error",
      "A cerulion error. `code` is the core ErrorCode, `subject` what the error is about (a Subject, or None), "
      "and str(error) the one-line message.",
      py::make_tuple(py::handle(PyExc_Exception)));
  py::setattr(classes.base, "code", py::none());
  py::setattr(classes.base, "subject", py::none());

  struct Spec {
    ErrorCode code;
    const char* name;
    PyObject* also;  // a built-in class it is too, so `except ValueError` still catches it
    const char* doc;
  };
  const Spec specs[] = {
      {ErrorCode::InvalidArgument, "InvalidArgument", PyExc_ValueError,
       "An argument out of range or of the wrong kind (a non-contiguous buffer, an unknown encoding...)."},
      {ErrorCode::InvalidTopicName, "InvalidTopicName", PyExc_ValueError,
       "A topic or domain name core refuses."},
      {ErrorCode::NotFound, "NotFound", PyExc_LookupError, "No such topic."},
      {ErrorCode::PermissionDenied, "PermissionDenied", PyExc_PermissionError,
       "The topic belongs to another user or group."},
      {ErrorCode::Corrupted, "Corrupted", nullptr, "The topic's segment is foreign or damaged."},
      {ErrorCode::Incompatible, "Incompatible", nullptr,
       "The topic exists with other settings (depth, mode, type) than the ones asked for."},
      {ErrorCode::PayloadTooLarge, "PayloadTooLarge", PyExc_ValueError,
       "A message over the topic's payload ceiling (subject: asked and ceiling)."},
      {ErrorCode::OutOfMemory, "OutOfMemory", nullptr, "/dev/shm cannot hold what was asked for."},
      {ErrorCode::TooManyParticipants, "TooManyParticipants", nullptr, "The topic's participant table is full."},
      {ErrorCode::LoanLimit, "LoanLimit", nullptr,
       "This publisher or subscriber already holds as many loans or samples as it may: release one."},
      {ErrorCode::Timeout, "Timeout", PyExc_TimeoutError, "A wait ended at its timeout."},
      {ErrorCode::Interrupted, "Interrupted", nullptr, "A wait was cancelled."},
  };
  for (const Spec& spec : specs) {
    py::tuple bases = spec.also ? py::make_tuple(classes.base, py::handle(spec.also)) : py::make_tuple(classes.base);
    classes.by_code[spec.code] = new_error_class(m, spec.name, spec.doc, bases);
  }
  classes.closed = new_error_class(
      m, "Closed",
      "A publisher or subscriber used after close(), a sample after release(), or a loan after it was published "
      "or discarded (code InvalidArgument).",
      py::make_tuple(classes.by_code[ErrorCode::InvalidArgument]));

  py::register_exception_translator([](std::exception_ptr thrown) {
    try {
      if (thrown) std::rethrow_exception(thrown);
    } catch (const StatusError& error) {
      set_python_error(error);
    }
  });
}

}  // namespace cerulion::python
