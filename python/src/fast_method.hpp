// SPDX-License-Identifier: Apache-2.0
#pragma once
// Methods called once per message (receive, as_array, loan, the ends of a with block), bound as
// CPython vectorcall methods rather than through pybind11's dispatcher: in a process whose caches
// went cold between messages, the dispatcher's argument matching and overload machinery cost more
// than the work itself (docs/performance.md). Everything else stays with pybind11.

#include <array>
#include <cstddef>
#include <initializer_list>
#include <string>

#include "binding.hpp"

namespace cerulion::python {

/// The arguments of a fast method, matched to its parameters by position, then by keyword.
class FastArguments {
 public:
  static constexpr std::size_t kMaxParameters = 3;

  /// Raises TypeError (as Python does) for too many, unknown, repeated or missing (the first
  /// `required` parameters) arguments.
  FastArguments(const char* method, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames,
                std::initializer_list<const char*> names, std::size_t required) {
    const auto count = static_cast<std::size_t>(PyVectorcall_NARGS(nargs));
    if (count > names.size()) {
      throw py::type_error(std::string(method) + "() takes at most " + std::to_string(names.size()) + " argument(s) (" +
                           std::to_string(count) + " given)");
    }
    for (std::size_t i = 0; i < count; ++i) values_[i] = args[i];
    const Py_ssize_t keywords = kwnames == nullptr ? 0 : PyTuple_GET_SIZE(kwnames);
    for (Py_ssize_t k = 0; k < keywords; ++k) {
      PyObject* keyword = PyTuple_GET_ITEM(kwnames, k);
      std::size_t i = 0;
      for (const char* name : names) {
        if (PyUnicode_CompareWithASCIIString(keyword, name) == 0) break;
        ++i;
      }
      if (i == names.size()) {
        throw py::type_error(std::string(method) + "() got an unexpected keyword argument '" +
                             py::str(keyword).cast<std::string>() + "'");
      }
      if (values_[i]) {
        throw py::type_error(std::string(method) + "() got multiple values for argument '" + names.begin()[i] + "'");
      }
      values_[i] = args[count + static_cast<std::size_t>(k)];
    }
    for (std::size_t i = 0; i < required; ++i) {
      if (!values_[i]) {
        throw py::type_error(std::string(method) + "() missing required argument '" + names.begin()[i] + "'");
      }
    }
  }

  /// The i-th parameter's argument, or None when not given.
  py::object operator[](std::size_t i) const {
    return values_[i] ? py::reinterpret_borrow<py::object>(values_[i]) : py::none();
  }

 private:
  std::array<py::handle, kMaxParameters> values_{};
};

/// Runs `body` (giving a py::object) for CPython: its result, or nullptr with the Python error set
/// from whatever it threw, as pybind11's dispatcher would.
template <typename Body>
PyObject* run_fast_method(Body&& body) noexcept {
  try {
    return body().release().ptr();
  } catch (const StatusError& error) {
    set_python_error(error);
  } catch (py::error_already_set& error) {
    error.restore();
  } catch (const py::builtin_exception& error) {
    error.set_error();
  } catch (const std::bad_alloc&) {
    PyErr_NoMemory();
  } catch (const std::exception& error) {
    PyErr_SetString(PyExc_RuntimeError, error.what());
  } catch (...) {
    PyErr_SetString(PyExc_RuntimeError, "unknown C++ exception");
  }
  return nullptr;
}

/// Adds `definition` (static: CPython keeps a pointer to it) to pybind11 class `cls` as a method.
/// Its ml_doc starts with the signature ("name($self, /, a, b=None)\n--\n\n") for help() and inspect.
inline void add_fast_method(py::handle cls, PyMethodDef& definition) {
  auto method = py::reinterpret_steal<py::object>(
      PyDescr_NewMethod(reinterpret_cast<PyTypeObject*>(cls.ptr()), &definition));
  if (!method) throw py::error_already_set();
  py::setattr(cls, definition.ml_name, method);
}

}  // namespace cerulion::python
