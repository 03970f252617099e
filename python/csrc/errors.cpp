// graft's typed C++ errors become Python's built-in exceptions of the same name; an
// OutOfMemoryError becomes graft.OutOfMemoryError, a RuntimeError subclass (PyTorch's
// torch.OutOfMemoryError), a LinAlgError graft._C._LinAlgError (torch.linalg.LinAlgError). C++ warnings become
// UserWarnings. See docs/notes/errors.md.
#include "python_common.h"

namespace graft::python {

namespace {

template <class Err>
bool is_a(const Error& e) {
  return dynamic_cast<const Err*>(&e) != nullptr;
}

// The Python exception type of a graft error: the first entry of the table it is (so the more
// derived types first); a plain Error or RuntimeError is a RuntimeError.
PyObject* python_type_of(const Error& e, PyObject* out_of_memory, PyObject* linalg_error) {
  const std::pair<bool (*)(const Error&), PyObject*> types[] = {{is_a<OutOfMemoryError>, out_of_memory},
                                                                {is_a<LinAlgError>, linalg_error},
                                                                {is_a<ValueError>, PyExc_ValueError},
                                                                {is_a<TypeError>, PyExc_TypeError},
                                                                {is_a<IndexError>, PyExc_IndexError},
                                                                {is_a<KeyError>, PyExc_KeyError},
                                                                {is_a<NotImplementedError>, PyExc_NotImplementedError}};
  for (const auto& [is, type] : types)
    if (is(e)) return type;
  return PyExc_RuntimeError;
}

}  // namespace

void init_errors(py::module_& m) {
  static py::exception<OutOfMemoryError> oom(m, "OutOfMemoryError", PyExc_RuntimeError);
  // torch._C._LinAlgError, which torch.linalg.LinAlgError names
  static py::exception<LinAlgError> linalg_error(m, "_LinAlgError", PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Error& e) {
      PyErr_SetString(python_type_of(e, oom.ptr(), linalg_error.ptr()), e.what());
    } catch (const py::cast_error& e) {
      // a Python value of the wrong type reached a conversion inside a binding: a TypeError, as
      // PyTorch's argument parser raises (pybind11 would say RuntimeError)
      PyErr_SetString(PyExc_TypeError, e.what());
    } catch (const std::bad_alloc&) {
      // host memory that a binding or the library took outside the caching allocator
      PyErr_SetString(oom.ptr(), "CPU out of memory: a host allocation outside graft's caching allocator failed");
    } catch (const std::length_error& e) {
      PyErr_SetString(PyExc_RuntimeError,
                      (std::string("a size is too large for a host container: ") + e.what()).c_str());
    }
  });
  // Autograd's warnings (the .grad of a non-leaf, anomaly mode, ...) are Python UserWarnings,
  // so `warnings.catch_warnings` and `-W error` work on them. Warnings can be raised while the
  // GIL is released (inside backward), hence the acquire.
  autograd::set_warning_handler([](const std::string& message) {
    py::gil_scoped_acquire gil;
    if (PyErr_WarnEx(PyExc_UserWarning, message.c_str(), 1) != 0) throw py::error_already_set();
  });
}

}  // namespace graft::python
