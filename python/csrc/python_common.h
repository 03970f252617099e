#pragma once
// Shared by every binding file of graft._C: the pybind11 casters that make graft::Tensor,
// Scalar and DType cross the language boundary, and the small parsing helpers (sizes, dims,
// devices) the bindings share. See docs/notes/python.md for the design.
//
// Identity: a Python tensor object wraps a TensorImpl (holder intrusive_ptr<TensorImpl>), so
// pybind11's instance registry hands back the *same* Python object for the same TensorImpl
// while that object is alive: `x.grad is x.grad`, `p is opt.param_groups[0]["params"][0]`.
// The object stays alive as long as C++ holds the tensor (tensor_identity.cpp).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <vector>

#include "graft/graft.h"

PYBIND11_DECLARE_HOLDER_TYPE(T, graft::intrusive_ptr<T>, true)

namespace pybind11::detail {

/// graft::Tensor <-> graft.Tensor. An undefined Tensor becomes None (so `.grad` and optional
/// results need no special case); loading None is refused (use std::optional<Tensor>).
template <>
struct type_caster<graft::Tensor> {
  PYBIND11_TYPE_CASTER(graft::Tensor, const_name("Tensor"));
  bool load(handle src, bool convert) {
    // pybind11's holder caster would take None as a null holder when converting
    if (!src || src.is_none()) return false;
    copyable_holder_caster<graft::TensorImpl, graft::intrusive_ptr<graft::TensorImpl>> c;
    if (!c.load(src, convert)) return false;
    value = graft::Tensor(static_cast<graft::intrusive_ptr<graft::TensorImpl>&>(c));
    return true;
  }
  static handle cast(const graft::Tensor& t, return_value_policy, handle) {
    if (!t.defined()) return none().release();
    return type_caster<graft::intrusive_ptr<graft::TensorImpl>>::cast(t.impl_ptr(), return_value_policy::take_ownership,
                                                                      {});
  }
};

/// Python bool / int / float -> graft::Scalar (keeping the kind, which type promotion uses);
/// a one-element tensor is accepted too, as PyTorch accepts it where a number is expected.
template <>
struct type_caster<graft::Scalar> {
  PYBIND11_TYPE_CASTER(graft::Scalar, const_name("Number"));
  bool load(handle src, bool convert);
  static handle cast(const graft::Scalar& s, return_value_policy, handle);
};

/// graft::DType <-> the singleton graft.float32, graft.int64, ... objects.
template <>
struct type_caster<graft::DType> {
  PYBIND11_TYPE_CASTER(graft::DType, const_name("dtype"));
  bool load(handle src, bool);
  static handle cast(graft::DType d, return_value_policy, handle);
};

/// graft::MemoryFormat <-> the singleton graft.contiguous_format, graft.channels_last, ... objects.
template <>
struct type_caster<graft::MemoryFormat> {
  PYBIND11_TYPE_CASTER(graft::MemoryFormat, const_name("memory_format"));
  bool load(handle src, bool);
  static handle cast(graft::MemoryFormat f, return_value_policy, handle);
};

}  // namespace pybind11::detail

namespace graft::python {

namespace py = pybind11;

// ---- module parts (one per binding file) ----
void init_errors(py::module_& m);
void init_dtype_device(py::module_& m);
void init_tensor(py::module_& m);
void init_tensor_ops(py::module_& m, py::class_<TensorImpl, intrusive_ptr<TensorImpl>>& cls);
void init_indexing(py::class_<TensorImpl, intrusive_ptr<TensorImpl>>& cls);
void init_conversion(py::module_& m, py::class_<TensorImpl, intrusive_ptr<TensorImpl>>& cls);
void init_functions(py::module_& m);
void init_autograd(py::module_& m);
void init_memory(py::module_& m);
void init_optim(py::module_& m);
void init_serialize(py::module_& m);
void init_data(py::module_& m);
void init_nn_functional(py::module_& m);
void init_python_function(py::module_& m);
void init_saved_hooks(py::module_& m);
void init_gradcheck(py::module_& m);
void init_doctor(py::module_& m);
void init_tensor_identity(py::module_& m);
void init_generator(py::module_& m);

// ---- the graft.Tensor type's lifetime support (tensor_identity.cpp) ----
/// pybind11's custom_type_setup for graft.Tensor: its deallocator (with preservation) and gc
/// traverse/clear.
void setup_tensor_type(PyHeapTypeObject* heap_type);
/// The metaclass of graft.Tensor (derived from pybind11's): gives every Python subclass the
/// same deallocator and gc support.
py::object make_tensor_metaclass();

// ---- helpers shared by the binding files ----
/// The Python class graft.Tensor (set once by init_tensor).
py::handle tensor_type();
/// True when `o` is a graft.Tensor (or subclass instance).
bool is_tensor(py::handle o);
/// Unchecked: the Tensor behind a graft.Tensor object (call is_tensor first).
Tensor as_tensor_unchecked(py::handle o);
/// True for Python bool, int and float and NumPy scalars (not tensors, not arrays).
bool is_number(py::handle o);
/// True when `o` is a NumPy array. Never imports NumPy: if it is not imported, nothing is
/// an array. (pybind11's NumPy API would import it under a static-initialisation guard,
/// which deadlocks when two threads first touch it.)
bool is_ndarray(py::handle o);
/// Imports NumPy and makes pybind11's handle on its C API, one thread at a time (the others
/// wait without the GIL), before pybind11's array API is used; see is_ndarray and tensor.cpp.
void ensure_numpy();
/// A `generator=` argument: nullopt for None, the graft.Generator, or PyTorch-style TypeError
/// naming `fn` for anything else (generator.cpp).
std::optional<Generator> generator_arg(py::handle o, const char* fn);
/// TypeError unless `self` is a graft.Tensor (for methods taking `py::handle self`, which
/// pybind11 does not check: `graft.Tensor.zero_(5)`).
void check_self(py::handle self, const char* method);
Scalar to_scalar(py::handle o);
/// A file path as Python's own file functions take it (os.fspath: a str, bytes or path-like
/// object), refused as open() refuses it: "ValueError: embedded null byte" for a NUL, which a
/// C++ string would silently cut the path at.
std::string path_arg(py::handle path);
/// A size given as varargs (`view(2, 3)`) or one sequence (`view((2, 3))`, `view(x.shape)`).
std::vector<int64_t> sizes_from_args(const py::args& args, const char* fn);
/// A dim argument: None (all dims -> empty), an int, or a sequence of ints.
std::vector<int64_t> dims_from_object(py::handle o);
/// "cpu", "cuda:0", graft.device(...) or an int (a CUDA index, as PyTorch's).
Device to_device(py::handle o);
/// Wraps a Python sequence of ints as graft.Size.
py::object make_size(IntArrayRef sizes);
/// A graft.return_types.<name>(values, indices) named tuple.
py::object make_return_pair(const char* name, Tensor a, Tensor b);
/// A graft.return_types.<name>(...) named tuple of any number of tensors (linalg_svd's U, S, Vh).
py::object make_return_tuple(const char* name, std::vector<Tensor> outputs);
/// A strong reference to a Python object that may be dropped on any thread, with or without
/// the GIL (C++ hooks and saved-tensor packs die inside backward, where the GIL is released):
/// the last copy takes the GIL to decref, and does nothing once the interpreter is gone.
class SafePyObject {
 public:
  SafePyObject() = default;
  explicit SafePyObject(py::object o)
      : p_(o.release().ptr(), [](PyObject* p) {
          if (!Py_IsInitialized()) return;
          py::gil_scoped_acquire gil;
          Py_DECREF(p);
        }) {}
  /// A new reference (call with the GIL held).
  py::object get() const { return py::reinterpret_borrow<py::object>(p_.get()); }
  PyObject* ptr() const { return p_.get(); }

 private:
  std::shared_ptr<PyObject> p_;
};

/// Releases the GIL for a C++ call, keeping the caller's Python line as the creation site of
/// what the call makes (graft.doctor at tier sites: without the GIL no Python frame can be read).
class ReleaseGil {
 public:
  ReleaseGil() = default;
  ReleaseGil(const ReleaseGil&) = delete;
  ReleaseGil& operator=(const ReleaseGil&) = delete;

 private:
  lifetime::SiteScope site_{lifetime::capture_site()};
  py::gil_scoped_release nogil_;
};

/// A Python tensor hook (Tensor.register_hook) as a C++ hook: None keeps the gradient, a Tensor
/// replaces it. A named type, so that gc support finds the Python callable inside a C++ hook
/// list (std::function::target) to traverse and clear it.
struct PythonTensorHook {
  SafePyObject fn;
  std::string name;  ///< the function's __name__, for the size-check message
  Tensor operator()(const Tensor& grad) const;
};

/// Calls `fn` with the GIL released when the tensors involved are large enough for the
/// kernel time to dominate (heavy kernels let other Python threads run).
template <class F>
auto maybe_without_gil(bool heavy, F&& fn) {
  if (heavy) {
    ReleaseGil nogil;
    return fn();
  }
  return fn();
}
/// A Tensor member function as a callable taking the tensor first (the Python class wraps
/// TensorImpl, so member pointers of Tensor cannot be bound directly).
template <class R, class... A>
auto tm(R (Tensor::*f)(A...) const) {
  return [f](const Tensor& t, A... a) -> R { return (t.*f)(std::forward<A>(a)...); };
}
template <class R, class... A>
auto tm(R (Tensor::*f)(A...)) {
  return [f](Tensor& t, A... a) -> R { return (t.*f)(std::forward<A>(a)...); };
}
inline bool is_heavy(const Tensor& t) { return t.numel() >= (1 << 15); }

/// While the leak doctor records creation lines (tier Sites), one call from Python into an op
/// (the generated bindings, the arithmetic operators): the objects it makes on this thread while
/// the same Python frame is on top share one site, found by the first of them, instead of each
/// walking the frames again (doctor.cpp, CallSite). Costs one load when the doctor is off.
class SiteCallScope {
 public:
  SiteCallScope() noexcept {
    if (lifetime::tier() == lifetime::Tier::Sites) enter();
  }
  ~SiteCallScope() {
    if (active_) leave();
  }
  SiteCallScope(const SiteCallScope&) = delete;
  SiteCallScope& operator=(const SiteCallScope&) = delete;

 private:
  void enter() noexcept;
  void leave() noexcept;
  bool active_ = false;
  uint64_t outer_ = 0;
};

}  // namespace graft::python
