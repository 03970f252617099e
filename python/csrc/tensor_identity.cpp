// The lifetime of graft.Tensor's Python objects (docs/notes/python.md, "Tensor identity"):
//   - preservation: when the last Python reference to a tensor's object goes while C++ (a
//     graph, `.grad`, a container) still holds the tensor, the deallocator resurrects the
//     object and the TensorImpl takes that one reference (kOwnsPyObjectBit in its count word).
//     When C++ drops its last reference, the release hook gives the reference back, with the
//     GIL, and the object dies then (or lives on if Python code got it back meanwhile);
//   - gc support: traverse and clear cover the `__dict__`, and the Python hooks that the
//     tensor's C++ hook lists hold, when the Python object is the tensor's only owner;
//   - Python subclasses (graft.nn.Parameter, user classes) get the same deallocator, traverse
//     and clear from the metaclass, as PyTorch's _TensorMeta does.
#include "python_common.h"  // first: Python.h before structmember.h

#include <structmember.h>

namespace graft::python {
namespace {

PyTypeObject* g_tensor_pytype = nullptr;  // graft.Tensor (set when the type is made)

bool finalizing() {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsFinalizing();
#else
  return _Py_IsFinalizing();
#endif
}

/// The TensorImpl behind a graft.Tensor object, without taking a reference (deallocators and
/// gc callbacks must not change the count); null before __init__ made it.
TensorImpl* impl_of(PyObject* self) {
  auto* inst = reinterpret_cast<py::detail::instance*>(self);
  auto vh = inst->get_value_and_holder(nullptr, false);
  if (!vh || !vh.holder_constructed()) return nullptr;
  return vh.holder<intrusive_ptr<TensorImpl>>().get();
}

/// Called by a deallocator (refcount 0): if C++ still holds the tensor, the tensor takes the
/// object and it is resurrected (as PyTorch's THPVariable_tryResurrect).
bool try_preserve(PyObject* self) {
  if (!Py_IsInitialized() || finalizing()) return false;
  TensorImpl* impl = impl_of(self);
  if (!impl || !impl->try_own_pyobject(self)) return false;
  Py_INCREF(self);  // 0 -> 1: the tensor's reference (CPython's own finalizers resurrect so)
  return true;
}

/// The release hook (see TensorImpl::set_pyobject_release_hook): may run on any thread, with or
/// without the GIL. It takes the GIL, and only then drops the caller's reference, so that
/// Python code cannot revive or drop the object half-way.
void release_owned_pyobject(TensorImpl* t) {
  // Never touch Python once it is gone, nor take the GIL from a foreign thread while the
  // interpreter shuts down (CPython would end that thread): the object is leaked instead.
  if (!Py_IsInitialized() || (finalizing() && !PyGILState_Check())) {
    (void)t->release_ref_and_take_pyobject();
    return;
  }
  py::gil_scoped_acquire gil;
  if (auto* o = static_cast<PyObject*>(t->release_ref_and_take_pyobject())) {
    py::error_scope keep;  // an exception being raised survives the deallocation
    Py_DECREF(o);
  }
}

// ---- gc: the Python hooks kept by the tensor's C++ hook lists ----

/// Visits (or, with clear, removes) the Python tensor hooks that `t` owns: its leaf hooks,
/// and the hooks on its grad_fn for its output when the tensor is grad_fn's only holder.
/// Only called when the Python object is the tensor's only owner: then nothing but this object
/// can reach those lists, and no backward pass can be running them.
int visit_hooks(const TensorImpl& t, visitproc visit, void* arg) {
  auto visit_slot = [&](HookSlot* slot, bool any_output) -> int {
    if (!slot) return 0;
    auto hooks = slot->snapshot();
    if (!hooks) return 0;
    for (const TensorPreHook& h : *hooks) {
      if (!any_output && h.output_nr != t.output_nr) continue;
      if (const auto* f = h.fn.target<PythonTensorHook>()) Py_VISIT(f->fn.ptr());
    }
    return 0;
  };
  if (int err = visit_slot(leaf_hook_slot(t), true)) return err;
  if (t.grad_fn && t.grad_fn->use_count() == 1) return visit_slot(t.grad_fn->tensor_pre_hooks(), false);
  return 0;
}

void clear_hooks(const TensorImpl& t) {
  if (HookSlot* slot = leaf_hook_slot(t))
    slot->remove_if([](const TensorPreHook& h) { return h.fn.target<PythonTensorHook>() != nullptr; });
  if (t.grad_fn && t.grad_fn->use_count() == 1)
    if (HookSlot* slot = t.grad_fn->tensor_pre_hooks())
      slot->remove_if([&](const TensorPreHook& h) {
        return h.output_nr == t.output_nr && h.fn.target<PythonTensorHook>() != nullptr;
      });
}

PyObject** dict_ptr(PyObject* self) { return _PyObject_GetDictPtr(self); }

// ---- graft.Tensor itself ----

// gc's view of a tensor held by C++ (a saved tensor, a `.grad`): nothing is visited, so
// everything it references counts as reachable from outside, as it would be once the object is
// resurrected. Visiting the `__dict__` would let gc clear the attributes of a tensor that
// lives on (PyTorch's THPVariable_subclass_traverse does the same).
extern "C" int tensor_traverse(PyObject* self, visitproc visit, void* arg) {
  TensorImpl* impl = impl_of(self);
  if (impl && impl->use_count() > 1) return 0;
  if (PyObject** d = dict_ptr(self)) Py_VISIT(*d);
  Py_VISIT(Py_TYPE(self));
  return impl ? visit_hooks(*impl, visit, arg) : 0;
}

extern "C" int tensor_clear(PyObject* self) {
  TensorImpl* impl = impl_of(self);
  if (impl && impl->use_count() > 1) return 0;  // lives on through C++: keep its attributes
  if (PyObject** d = dict_ptr(self)) Py_CLEAR(*d);
  if (impl) clear_hooks(*impl);
  return 0;
}

extern "C" void tensor_dealloc(PyObject* self) {
  if (try_preserve(self)) return;
  // pybind11's deallocator does not untrack; it runs C++ destructors, which may run Python
  // code and so the collector, which must not see a half-destroyed object.
  PyObject_GC_UnTrack(self);
  py::detail::pybind11_object_dealloc(self);
}

// ---- Python subclasses: what subtype_dealloc / subtype_traverse / subtype_clear do for them,
// with the preservation first. Python's own versions cannot be used: subtype_dealloc clears
// the `__dict__` and `__slots__` before calling the base deallocator, which is too early for
// an object that may be resurrected.

/// The `__slots__` members of a heap type (CPython keeps them right after the type object;
/// its PyHeapType_GET_MEMBERS is internal since 3.11).
PyMemberDef* slot_members(PyTypeObject* type) {
  return reinterpret_cast<PyMemberDef*>(reinterpret_cast<char*>(type) + Py_TYPE(type)->tp_basicsize);
}

int traverse_slots(PyTypeObject* type, PyObject* self, visitproc visit, void* arg) {
  PyMemberDef* mp = slot_members(type);
  for (Py_ssize_t i = 0; i < Py_SIZE(type); ++i, ++mp)
    if (mp->type == T_OBJECT_EX) Py_VISIT(*reinterpret_cast<PyObject**>(reinterpret_cast<char*>(self) + mp->offset));
  return 0;
}

void clear_slots(PyTypeObject* type, PyObject* self) {
  PyMemberDef* mp = slot_members(type);
  for (Py_ssize_t i = 0; i < Py_SIZE(type); ++i, ++mp)
    if (mp->type == T_OBJECT_EX && !(mp->flags & READONLY))
      Py_CLEAR(*reinterpret_cast<PyObject**>(reinterpret_cast<char*>(self) + mp->offset));
}

/// The `__slots__` of every Python class between the object's type and graft.Tensor.
template <class F>
int for_each_subclass(PyObject* self, F&& f) {
  for (PyTypeObject* t = Py_TYPE(self); t && t != g_tensor_pytype; t = t->tp_base)
    if (Py_SIZE(t))
      if (int err = f(t)) return err;
  return 0;
}

extern "C" int tensor_subclass_traverse(PyObject* self, visitproc visit, void* arg) {
  TensorImpl* impl = impl_of(self);
  if (impl && impl->use_count() > 1) return 0;  // see tensor_traverse
  if (int err = for_each_subclass(self, [&](PyTypeObject* t) { return traverse_slots(t, self, visit, arg); }))
    return err;
  if (PyObject** d = dict_ptr(self)) Py_VISIT(*d);
  Py_VISIT(Py_TYPE(self));  // a heap type: its instances count as references to it
  return impl ? visit_hooks(*impl, visit, arg) : 0;
}

extern "C" int tensor_subclass_clear(PyObject* self) {
  TensorImpl* impl = impl_of(self);
  if (impl && impl->use_count() > 1) return 0;
  for_each_subclass(self, [&](PyTypeObject* t) {
    clear_slots(t, self);
    return 0;
  });
  if (PyObject** d = dict_ptr(self)) Py_CLEAR(*d);
  if (impl) clear_hooks(*impl);
  return 0;
}

extern "C" void tensor_subclass_dealloc(PyObject* self) {
  if (try_preserve(self)) return;
  PyTypeObject* type = Py_TYPE(self);
  PyObject_GC_UnTrack(self);
  const bool has_finalizer = type->tp_finalize || type->tp_del;
  if (type->tp_finalize) {  // __del__: runs once (CPython marks the object finalized)
    PyObject_GC_Track(self);
    if (PyObject_CallFinalizerFromDealloc(self) < 0) return;  // __del__ resurrected it
    PyObject_GC_UnTrack(self);
  }
  // Weak references die before the attributes, as in subtype_dealloc.
  if (type->tp_weaklistoffset) PyObject_ClearWeakRefs(self);
  if (type->tp_del) {
    PyObject_GC_Track(self);
    type->tp_del(self);
    if (Py_REFCNT(self) > 0) return;
    PyObject_GC_UnTrack(self);
  }
  if (has_finalizer && type->tp_weaklistoffset) {
    // weak references made by the finalizer are cleared without calling their callbacks
    auto** list = reinterpret_cast<PyWeakReference**>(reinterpret_cast<char*>(self) + type->tp_weaklistoffset);
    while (*list) _PyWeakref_ClearRef(*list);
  }
  for_each_subclass(self, [&](PyTypeObject* t) {
    clear_slots(t, self);
    return 0;
  });
  if (PyObject** d = dict_ptr(self)) Py_CLEAR(*d);
  // pybind11's part: the holder (the tensor), the instance registry, the memory, and the one
  // reference the instance holds on its heap type.
  py::detail::pybind11_object_dealloc(self);
}

/// The metaclass's __init__: installs the subclass versions on every Python subclass of
/// graft.Tensor (each class statement makes fresh CPython defaults, so every level needs it).
void install_subclass_slots(py::handle cls) {
  auto* type = reinterpret_cast<PyTypeObject*>(cls.ptr());
  if (type == g_tensor_pytype || !PyType_IsSubtype(type, g_tensor_pytype)) return;
  if (!PyType_IS_GC(type) || !(type->tp_flags & Py_TPFLAGS_HEAPTYPE)) return;
  type->tp_dealloc = tensor_subclass_dealloc;
  type->tp_traverse = tensor_subclass_traverse;
  type->tp_clear = tensor_subclass_clear;
}

extern "C" PyObject* tensor_meta_init(PyObject* cls, PyObject* args, PyObject* kwargs) {
  if (PyType_Type.tp_init(cls, args, kwargs) < 0) return nullptr;
  install_subclass_slots(cls);
  Py_RETURN_NONE;
}

}  // namespace

void setup_tensor_type(PyHeapTypeObject* heap_type) {
  PyTypeObject* type = &heap_type->ht_type;
  g_tensor_pytype = type;
  type->tp_dealloc = tensor_dealloc;
  type->tp_traverse = tensor_traverse;
  type->tp_clear = tensor_clear;
}

py::object make_tensor_metaclass() {
  py::handle base(reinterpret_cast<PyObject*>(py::detail::get_internals().default_metaclass));
  py::dict ns;
  ns["__module__"] = "graft._C";
  ns["__doc__"] = "The metaclass of graft.Tensor: gives Python subclasses the tensor's deallocator and gc support.";
  py::object meta = py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(&PyType_Type))(
      "_TensorMeta", py::make_tuple(base), ns);
  // A method descriptor, so that a metaclass derived from this one finds it with super().
  static PyMethodDef init_def = {
      "__init__", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&tensor_meta_init)),
      METH_VARARGS | METH_KEYWORDS, "Makes the class; installs graft.Tensor's lifetime slots."};
  PyObject* init = PyDescr_NewMethod(reinterpret_cast<PyTypeObject*>(meta.ptr()), &init_def);
  if (!init) throw py::error_already_set();
  meta.attr("__init__") = py::reinterpret_steal<py::object>(init);
  return meta;
}

void init_tensor_identity(py::module_& m) {
  TensorImpl::set_pyobject_release_hook(&release_owned_pyobject);
  // For tests: the number of C++ owners besides the object's own handle, and whether the
  // tensor currently owns its Python object.
  m.def("_cpp_owners", [](py::handle t) {
    check_self(t, "_cpp_owners");
    TensorImpl* impl = impl_of(t.ptr());
    return impl ? impl->use_count() - 1 : 0u;
  });
  m.def("_owns_pyobject", [](py::handle t) {
    check_self(t, "_owns_pyobject");
    TensorImpl* impl = impl_of(t.ptr());
    return impl && impl->owned_pyobject == t.ptr();
  });
}

}  // namespace graft::python
