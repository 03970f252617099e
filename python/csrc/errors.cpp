// graft's typed C++ errors become Python's built-in exceptions of the same name; an
// OutOfMemoryError becomes graft.OutOfMemoryError, a RuntimeError subclass (PyTorch's
// torch.OutOfMemoryError). C++ warnings become UserWarnings. See docs/notes/errors.md.
#include "python_common.h"

namespace graft::python {

void init_errors(py::module_& m) {
  static py::exception<OutOfMemoryError> oom(m, "OutOfMemoryError", PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const OutOfMemoryError& e) {
      PyErr_SetString(oom.ptr(), e.what());
    } catch (const ValueError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const TypeError& e) {
      PyErr_SetString(PyExc_TypeError, e.what());
    } catch (const IndexError& e) {
      PyErr_SetString(PyExc_IndexError, e.what());
    } catch (const KeyError& e) {
      PyErr_SetString(PyExc_KeyError, e.what());
    } catch (const NotImplementedError& e) {
      PyErr_SetString(PyExc_NotImplementedError, e.what());
    } catch (const Error& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
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
