// graft.Tensor: the Python class over TensorImpl. Metadata, conversions, views and the
// autograd attributes live here; math methods and operators in tensor_ops.cpp, indexing in
// indexing.cpp, NumPy/DLPack/list conversion in conversion.cpp.
#include <atomic>
#include <cstdio>
#include <mutex>

#include <pybind11/numpy.h>

#include "arg_parser.h"
#include "python_common.h"

namespace graft::python {
namespace {

using TensorClass = py::class_<TensorImpl, intrusive_ptr<TensorImpl>>;

py::handle g_tensor_type;
py::handle g_size_class;    // graft.Size, registered by graft/__init__.py
py::handle g_return_types;  // graft.return_types module

/// Parses Tensor.to's arguments: to(dtype), to(device[, dtype]), to(tensor), with keywords
/// dtype=, device=, copy=, memory_format=, non_blocking= (ignored: there is one synchronous
/// device).
Tensor tensor_to(const Tensor& self, const py::args& args, const py::kwargs& kwargs) {
  std::optional<DType> dtype;
  std::optional<Device> device;
  MemoryFormat memory_format = MemoryFormat::Preserve;
  bool copy = false;
  int bools_seen = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    py::handle a = args[i];
    if (i == 0 && py::isinstance<py::bool_>(a)) {
      dtype = kBool;  // a bool first: PyTorch's parser reads it as the dtype (x.to(True) is a bool tensor)
      ++bools_seen;
    } else if (py::isinstance<py::bool_>(a)) {
      if (bools_seen++ == 1) copy = a.cast<bool>();  // to(dtype, non_blocking, copy)
    } else if (is_tensor(a)) {
      Tensor o = as_tensor_unchecked(a);
      dtype = o.dtype();
      device = o.device();
    } else if (py::detail::make_caster<DType>().load(a, false)) {
      dtype = a.cast<DType>();
    } else if (a.is_none() && args.size() == 1) {
      // to(None): PyTorch's to(device=None), no change
    } else {
      device = to_device(a);
    }
  }
  for (auto [k, v] : kwargs) {
    std::string key = k.cast<std::string>();
    if (key == "dtype") {
      if (!v.is_none()) dtype = v.cast<DType>();
    } else if (key == "device") {
      if (!v.is_none()) device = to_device(v);
    } else if (key == "copy") {
      copy = v.cast<bool>();
    } else if (key == "memory_format") {
      memory_format = v.cast<MemoryFormat>();
    } else if (key == "non_blocking") {
      // one synchronous device
    } else {
      throw TypeError("to() received an invalid combination of arguments: unexpected keyword '" + key + "'");
    }
  }
  Device d = device.value_or(self.device());
  DType t = dtype.value_or(self.dtype());
  Tensor out = self.to(d, t, copy);
  // to(memory_format=channels_last): the result laid out so (a second copy when dtype or device
  // changed too)
  if (memory_format != MemoryFormat::Preserve && !out.is_contiguous(memory_format)) out = out.contiguous(memory_format);
  return out;
}

std::vector<int64_t> int_list(py::handle o) {
  std::vector<int64_t> out;
  for (py::handle v : o) out.push_back(v.cast<int64_t>());
  return out;
}

py::object python_scalar(const Scalar& s, DType d) {
  if (d == kBool) return py::bool_(s.to<bool>());
  if (is_floating_point(d)) return py::float_(s.to_double());
  return py::int_(s.to_long());
}

/// float(t), int(t): PyTorch's ValueError for a tensor that is not one element (item() raises
/// check_one_element's RuntimeError, as PyTorch 2.x does; 1.13 raised this ValueError there too).
void check_python_scalar(const Tensor& t) {
  GRAFT_CHECK(t.numel() == 1, ValueError, "only one element tensors can be converted to Python scalars");
}

void check_one_element(const Tensor& t, const char* what) {
  GRAFT_CHECK(t.numel() == 1, RuntimeError, "a Tensor with ", t.numel(), " elements cannot be converted to Scalar");
  (void)what;
}

/// item() warns once per process when the tensor requires grad (PyTorch 2.x).
void warn_item_requires_grad(const Tensor& t) {
  static bool warned = false;
  if (!warned && t.requires_grad() && GradMode::is_enabled()) {
    warned = true;
    autograd::warn(
        "Converting a tensor with requires_grad=True to a scalar may lead to unexpected behavior.\n"
        "Consider using tensor.detach() first.");
  }
}

}  // namespace

py::handle tensor_type() { return g_tensor_type; }

bool is_tensor(py::handle o) {
  return PyObject_TypeCheck(o.ptr(), reinterpret_cast<PyTypeObject*>(g_tensor_type.ptr()));
}

Tensor as_tensor_unchecked(py::handle o) {
  auto* inst = reinterpret_cast<py::detail::instance*>(o.ptr());
  auto vh = inst->get_value_and_holder();
  return Tensor(vh.holder<intrusive_ptr<TensorImpl>>());
}

namespace {
/// NumPy's scalar base types (np.bool_, np.integer, np.floating), looked up once NumPy is
/// imported by someone; null until then.
struct NumpyScalarTypes {
  PyObject* bool_ = nullptr;
  PyObject* integer = nullptr;
  PyObject* floating = nullptr;
};
const NumpyScalarTypes* numpy_scalar_types() {
  static NumpyScalarTypes types;
  if (!types.bool_) {
    PyObject* np = PyImport_GetModule(py::str("numpy").ptr());  // new ref or null; never imports
    if (!np) {
      PyErr_Clear();
      return nullptr;
    }
    py::object mod = py::reinterpret_steal<py::object>(np);
    types.integer = py::object(mod.attr("integer")).release().ptr();  // kept for the process
    types.floating = py::object(mod.attr("floating")).release().ptr();
    types.bool_ = py::object(mod.attr("bool_")).release().ptr();
  }
  return &types;
}
}  // namespace

bool is_number(py::handle o) {
  if (PyFloat_Check(o.ptr()) || PyLong_Check(o.ptr())) return true;  // bool is an int subclass
  if (is_tensor(o)) return false;
  const NumpyScalarTypes* np = numpy_scalar_types();
  return np && (PyObject_IsInstance(o.ptr(), np->bool_) > 0 || PyObject_IsInstance(o.ptr(), np->integer) > 0 ||
                PyObject_IsInstance(o.ptr(), np->floating) > 0);
}

bool is_ndarray(py::handle o) {
  PyObject* np = PyImport_GetModule(py::str("numpy").ptr());
  if (!np) {
    PyErr_Clear();
    return false;
  }
  Py_DECREF(np);
  ensure_numpy();
  return py::isinstance<py::array>(o);
}

void ensure_numpy() {
  // pybind11 makes its handle on NumPy's C API in a function-local static whose initializer runs
  // Python code (an import, a deprecation warning under NumPy 2), which may hand the GIL to
  // another thread; a thread that then reaches that static holding the GIL waits on its C++
  // guard, which never releases the GIL, while the first waits for the GIL: both hang. So the
  // first use is made by one thread at a time, and the others wait for it without the GIL.
  static std::atomic<bool> ready{false};  // (constant-initialized, as is the mutex: no guards)
  static std::mutex first_use;
  if (ready.load(std::memory_order_acquire)) return;
  py::module_::import("numpy");
  {
    py::gil_scoped_release unlocked;
    first_use.lock();
  }
  std::lock_guard<std::mutex> g(first_use, std::adopt_lock);
  if (ready.load(std::memory_order_relaxed)) return;
  py::detail::npy_api::get();
  ready.store(true, std::memory_order_release);
}

void check_self(py::handle self, const char* method) {
  if (!is_tensor(self))
    throw TypeError(detail::str("descriptor '", method, "' for 'graft.Tensor' objects doesn't apply to a '",
                                std::string(py::str(self.get_type().attr("__name__"))), "' object"));
}

std::string path_arg(py::handle path) {
  py::object p = py::module_::import("os").attr("fspath")(path);
  std::string s = PyBytes_Check(p.ptr()) ? std::string(py::bytes(p)) : p.cast<std::string>();
  GRAFT_CHECK(s.find('\0') == std::string::npos, ValueError, "embedded null byte");
  return s;
}

Scalar to_scalar(py::handle o) {
  if (PyBool_Check(o.ptr())) return Scalar(o.ptr() == Py_True);
  if (PyLong_Check(o.ptr())) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o.ptr(), &overflow);
    GRAFT_CHECK(!overflow, RuntimeError, "Overflow when unpacking long");
    return Scalar(static_cast<int64_t>(v));
  }
  if (PyFloat_Check(o.ptr())) return Scalar(PyFloat_AS_DOUBLE(o.ptr()));
  if (is_tensor(o)) {
    Tensor t = as_tensor_unchecked(o);
    check_one_element(t, "scalar");
    return t.item();
  }
  if (const NumpyScalarTypes* np = numpy_scalar_types()) {
    if (PyObject_IsInstance(o.ptr(), np->bool_) > 0) return Scalar(PyObject_IsTrue(o.ptr()) == 1);
    if (PyObject_IsInstance(o.ptr(), np->floating) > 0)
      return Scalar(static_cast<double>(py::float_(py::reinterpret_borrow<py::object>(o))));
  }
  // NumPy scalars and anything else with __index__ / __float__
  if (PyIndex_Check(o.ptr())) return Scalar(static_cast<int64_t>(py::int_(py::reinterpret_borrow<py::object>(o))));
  if (PyObject_HasAttrString(o.ptr(), "__float__"))
    return Scalar(static_cast<double>(py::float_(py::reinterpret_borrow<py::object>(o))));
  throw TypeError(detail::str("expected a number, got ", std::string(py::str(o.get_type().attr("__name__")))));
}

std::vector<int64_t> sizes_from_args(const py::args& args, const char* fn) {
  if (args.size() == 1 && !PyLong_Check(args[0].ptr())) {
    GRAFT_CHECK(py::isinstance<py::sequence>(args[0]), TypeError, fn,
                "(): argument 'size' must be a tuple of ints, but found element of type ",
                std::string(py::str(args[0].get_type().attr("__name__"))));
    return int_list(args[0]);
  }
  std::vector<int64_t> out;
  out.reserve(args.size());
  for (py::handle a : args) {
    // a lone bool is refused (PyTorch's parser); among other sizes it counts as 0 or 1
    GRAFT_CHECK(!(PyBool_Check(a.ptr()) && args.size() == 1), TypeError, fn,
                "(): argument 'size' must be tuple of ints, not bool");
    GRAFT_CHECK(PyLong_Check(a.ptr()) || PyIndex_Check(a.ptr()), TypeError, fn,
                "(): argument 'size' must be a tuple of ints, but found element of type ",
                std::string(py::str(a.get_type().attr("__name__"))));
    out.push_back(a.cast<int64_t>());
  }
  return out;
}

std::vector<int64_t> dims_from_object(py::handle o) {
  if (o.is_none()) return {};
  if (PyLong_Check(o.ptr())) return {o.cast<int64_t>()};
  return int_list(o);
}

py::object make_size(IntArrayRef sizes) {
  py::tuple t(sizes.size());
  for (size_t i = 0; i < sizes.size(); ++i) t[i] = py::int_(sizes[i]);
  if (!g_size_class) return t;
  return py::reinterpret_borrow<py::object>(g_size_class)(t);
}

py::object make_return_pair(const char* name, Tensor a, Tensor b) {
  py::object cls = py::reinterpret_borrow<py::object>(g_return_types).attr(name);
  return cls(py::cast(std::move(a)), py::cast(std::move(b)));
}

py::object make_return_tuple(const char* name, std::vector<Tensor> outputs) {
  py::object cls = py::reinterpret_borrow<py::object>(g_return_types).attr(name);
  py::tuple args(outputs.size());
  for (size_t i = 0; i < outputs.size(); ++i) args[i] = py::cast(std::move(outputs[i]));
  return cls(*args);
}

namespace {

/// Shape, dtype, device, the predicates and Python's protocols (len, iter, bool, repr).
void bind_metadata(TensorClass& cls) {
  // ---- metadata ----
  cls.def_property_readonly("shape", [](const Tensor& t) { return make_size(t.sizes()); })
      .def(
          "size",
          [](const Tensor& t, py::object dim) -> py::object {
            if (dim.is_none()) return make_size(t.sizes());
            return py::int_(t.size(dim.cast<int64_t>()));
          },
          py::arg("dim") = py::none())
      .def(
          "stride",
          [](const Tensor& t, py::object dim) -> py::object {
            if (dim.is_none()) {
              py::tuple s(t.dim());
              for (int64_t i = 0; i < t.dim(); ++i) s[i] = py::int_(t.strides()[i]);
              return s;
            }
            return py::int_(t.stride(dim.cast<int64_t>()));
          },
          py::arg("dim") = py::none())
      .def("dim", tm(&Tensor::dim))
      .def("ndimension", tm(&Tensor::dim))
      .def_property_readonly("ndim", tm(&Tensor::dim))
      .def("numel", tm(&Tensor::numel))
      .def("nelement", tm(&Tensor::numel))
      .def("element_size", [](const Tensor& t) { return t.element_size(); })
      .def_property_readonly("itemsize", [](const Tensor& t) { return t.element_size(); })
      .def_property_readonly("nbytes", [](const Tensor& t) { return t.nbytes(); })
      .def_property_readonly("dtype", [](const Tensor& t) { return t.dtype(); })
      .def_property_readonly("device", [](const Tensor& t) { return t.device(); })
      .def_property_readonly("is_cuda", [](const Tensor& t) { return t.device().is_cuda(); })
      .def_property_readonly("is_cpu", [](const Tensor& t) { return t.device().is_cpu(); })
      .def("get_device", [](const Tensor& t) { return t.device().is_cpu() ? -1 : int(t.device().index()); })
      .def("storage_offset", tm(&Tensor::storage_offset))
      .def("data_ptr", [](const Tensor& t) { return reinterpret_cast<uintptr_t>(t.data_ptr()); });
  // is_contiguous(*, memory_format=contiguous_format): a query, not an op, through the parser
  auto parser = std::make_shared<const ArgParser>(
      std::vector<std::string>{"is_contiguous(Tensor input, *, MemoryFormat memory_format=contiguous_format)"}, true);
  cls.def("is_contiguous", [parser](const Tensor& t, const py::args& args, const py::kwargs& kw) {
    return t.is_contiguous(parser->parse(args, kw).memory_format(0));
  });
}

/// The remaining metadata queries and Python protocols.
void bind_more_metadata(TensorClass& cls) {
  cls.def("is_floating_point", tm(&Tensor::is_floating_point))
      .def("is_complex", [](const Tensor&) { return false; })
      .def_property_readonly("is_sparse", [](const Tensor&) { return false; })
      .def_property_readonly("is_quantized", [](const Tensor&) { return false; })
      .def_property_readonly("is_meta", [](const Tensor&) { return false; })
      .def("is_inference", tm(&Tensor::is_inference))
      .def_property_readonly("_version", tm(&Tensor::_version))
      .def("type", [](const Tensor& t) { return std::string("graft.") + legacy_type_name(t.dtype()); })
      .def("__repr__", [](const Tensor& t) { return t.str(); })
      .def("__hash__", [](py::handle self) { return reinterpret_cast<intptr_t>(self.ptr()); })
      .def("__len__",
           [](const Tensor& t) {
             GRAFT_CHECK(t.dim() > 0, TypeError, "len() of a 0-d tensor");
             return t.size(0);
           })
      .def("__iter__",
           [](const Tensor& t) {
             GRAFT_CHECK(t.dim() > 0, TypeError, "iteration over a 0-d tensor");
             py::list parts;
             for (int64_t i = 0; i < t.size(0); ++i) parts.append(py::cast(t.select(0, i)));
             return py::iter(parts);
           })
      .def("__bool__",
           [](const Tensor& t) {
             GRAFT_CHECK(t.numel() == 1, RuntimeError, "Boolean value of Tensor with ",
                         t.numel() == 0 ? "no values" : "more than one value", " is ambiguous");
             return t.item().to<bool>();
           })
      .def("__float__",
           [](const Tensor& t) {
             check_python_scalar(t);
             return t.item().to_double();
           })
      .def("__int__",
           [](const Tensor& t) -> py::object {
             check_python_scalar(t);
             Scalar v = t.item();
             if (!v.is_floating_point()) return py::int_(v.to_long());
             // Python's int(float): ValueError for nan, OverflowError for inf, big ints beyond int64
             PyObject* r = PyLong_FromDouble(v.to_double());
             if (!r) throw py::error_already_set();
             return py::reinterpret_steal<py::object>(r);
           })
      .def("__index__",
           [](const Tensor& t) {
             GRAFT_CHECK(t.numel() == 1 && is_integral(t.dtype(), true), TypeError,
                         "only integer tensors of a single element can be converted to an index");
             return t.item().to_long();
           })
      .def("item",
           [](const Tensor& t) {
             check_one_element(t, "item");
             warn_item_requires_grad(t);
             return python_scalar(t.item(), t.dtype());
           })
      .def("__format__", [](py::handle self, py::str spec) -> py::object {
        check_self(self, "__format__");
        Tensor t = as_tensor_unchecked(self);
        if (t.dim() == 0)
          return py::reinterpret_steal<py::object>(
              PyObject_Format(python_scalar(t.item(), t.dtype()).ptr(), spec.ptr()));
        return py::reinterpret_steal<py::object>(PyObject_Format(py::str(self.attr("__repr__")()).ptr(), spec.ptr()));
      });
}

/// to(), the dtype shorthands and the numpy and item conversions.
void bind_conversion(TensorClass& cls) {
  // ---- conversion ----
  cls.def("to", &tensor_to)
      .def("float", [](const Tensor& t) { return t.to(kFloat32); })
      .def("double", [](const Tensor& t) { return t.to(kFloat64); })
      .def("half", [](const Tensor& t) { return t.to(kFloat16); })
      .def("bfloat16", [](const Tensor& t) { return t.to(kBFloat16); })
      .def("long", [](const Tensor& t) { return t.to(kInt64); })
      .def("int", [](const Tensor& t) { return t.to(kInt32); })
      .def("bool", [](const Tensor& t) { return t.to(kBool); })
      .def("cpu", [](const Tensor& t) { return t.to(kCPU); })
      .def(
          "cuda",
          [](const Tensor& t, py::object device) {
            if (!cuda_is_available()) {  // PyTorch's lazy CUDA initialisation fails with this
              PyErr_SetString(PyExc_AssertionError, "Torch not compiled with CUDA enabled");
              throw py::error_already_set();
            }
            return t.to(device.is_none() ? Device(kCUDA) : to_device(device));
          },
          py::arg("device") = py::none())
      .def("type_as", [](const Tensor& t, const Tensor& o) { return t.to(o.dtype()); });
  // clone and contiguous (memory_format=) are generated (op_bindings.inc)
}

/// view, reshape, permute, transpose, ... (views share storage and version counter).
void bind_views(TensorClass& cls) {
  // ---- views ----
  // view (sizes or a dtype) is generated (op_bindings.inc)
  cls.def("view_as", [](const Tensor& t, const Tensor& o) { return t.view(o.sizes()); })
      .def("reshape_as", [](const Tensor& t, const Tensor& o) { return t.reshape(o.sizes()); })
      .def("swapaxes", tm(&Tensor::transpose), py::arg("axis0"), py::arg("axis1"))
      .def_property_readonly("T",
                             [](const Tensor& t) {
                               std::vector<int64_t> dims(t.dim());
                               for (int64_t i = 0; i < t.dim(); ++i) dims[i] = t.dim() - 1 - i;
                               return t.permute(dims);
                             })
      .def_property_readonly("mT",
                             [](const Tensor& t) {
                               GRAFT_CHECK(t.dim() >= 2, RuntimeError,
                                           "tensor.mT is only supported on matrices or batches of matrices. Got ",
                                           t.dim(), "-D tensor.");
                               return t.transpose(-2, -1);
                             })
      .def("expand_as", tm(&Tensor::expand_as));
}

/// unsqueeze, expand, narrow and the other views.
void bind_more_views(TensorClass& cls) {
  cls.def(
      "unflatten",
      [](const Tensor& t, int64_t dim, py::handle sizes) {
        std::vector<int64_t> given = int_list(sizes);
        GRAFT_CHECK(!given.empty(), RuntimeError, "unflatten: sizes must be non-empty");
        int64_t d = dim < 0 ? dim + t.dim() : dim;
        GRAFT_CHECK(d >= 0 && d < t.dim(), IndexError, "Dimension out of range (expected to be in range of [", -t.dim(),
                    ", ", t.dim() - 1, "], but got ", dim, ")");
        // a -1 is inferred from the unflattened dim alone (a 0-element tensor has one answer too)
        int64_t known = 1, inferred = -1;
        for (size_t i = 0; i < given.size(); ++i)
          if (given[i] == -1 && inferred < 0)
            inferred = static_cast<int64_t>(i);
          else
            known *= given[i];
        if (inferred >= 0 && known > 0 && t.size(d) % known == 0) given[inferred] = t.size(d) / known;
        GRAFT_CHECK(inferred >= 0 || known == t.size(d), RuntimeError, "unflatten: Provided sizes ", IntArrayRef(given),
                    " don't multiply up to the size of dim ", d, " (", t.size(d), ") in the input tensor");
        std::vector<int64_t> shape(t.sizes().begin(), t.sizes().begin() + d);
        for (int64_t s : given) shape.push_back(s);
        shape.insert(shape.end(), t.sizes().begin() + d + 1, t.sizes().end());
        return t.view(shape);
      },
      py::arg("dim"), py::arg("sizes"));
}

/// requires_grad, grad, grad_fn, is_leaf, backward, register_hook, ...
void bind_autograd_attributes(TensorClass& cls) {
  // ---- autograd attributes ----
  cls.def_property(
         "requires_grad", [](const Tensor& t) { return t.requires_grad(); },
         [](Tensor& t, bool flag) { t.requires_grad_(flag); })
      .def(
          "requires_grad_",
          [](py::handle self, bool flag) {
            check_self(self, "requires_grad_");
            Tensor t = as_tensor_unchecked(self);
            t.requires_grad_(flag);
            return self;
          },
          py::arg("requires_grad") = true)
      .def_property(
          "grad", [](const Tensor& t) { return t.grad(); },
          [](Tensor& t, py::handle value) {
            GRAFT_CHECK(value.is_none() || is_tensor(value), TypeError,
                        "assigned grad expected to be a Tensor or None but got grad of type ",
                        Py_TYPE(value.ptr())->tp_name);  // (torch 2.x's text; 1.13 lost the space)
            Tensor g = value.is_none() ? Tensor() : as_tensor_unchecked(value);
            GRAFT_CHECK(!g.defined() || !g.is_same(t), RuntimeError, "can't assign Variable as its own grad");
            t.set_grad(g);
          })
      .def_property_readonly("grad_fn", [](const Tensor& t) { return t.grad_fn(); })
      .def_property_readonly("is_leaf", tm(&Tensor::is_leaf))
      .def_property_readonly("output_nr", tm(&Tensor::output_nr))
      .def_property_readonly("retains_grad", tm(&Tensor::retains_grad))
      .def_property_readonly("_base", [](const Tensor& t) { return t._base(); })
      .def("_is_view", tm(&Tensor::is_view))
      .def_property(
          "data", [](const Tensor& t) { return t.variable_data(); }, [](Tensor& t, const Tensor& d) { t.set_data(d); })
      .def("retain_grad", tm(&Tensor::retain_grad))
      .def("detach", tm(&Tensor::detach))
      .def("detach_", [](py::handle self) {
        check_self(self, "detach_");
        Tensor t = as_tensor_unchecked(self);
        t.detach_();
        return self;
      });
}

}  // namespace

void init_tensor(py::module_& m) {
  // A `__dict__` (attributes, as on PyTorch's tensors), PyObject preservation and gc support
  // (tensor_identity.cpp); the metaclass gives Python subclasses the same.
  py::object meta = make_tensor_metaclass();
  m.attr("_TensorMeta") = meta;
  TensorClass cls(m, "Tensor", py::metaclass(meta), py::dynamic_attr(), py::custom_type_setup(setup_tensor_type));
  g_tensor_type = cls;
  cls.attr("__module__") = "graft";
  cls.attr("__array_priority__") = 1000;  // numpy defers `array * tensor` to Tensor.__rmul__

  m.def("_set_size_class", [](py::handle c) { g_size_class = c.inc_ref(); });
  m.def("_set_return_types", [](py::handle c) { g_return_types = c.inc_ref(); });

  // A private constructor used by graft.nn.Parameter (PyTorch's Tensor._make_subclass): an
  // alias of `data` that shares storage and version counter but not history, with the given
  // requires_grad, tagged as a parameter in the allocator.
  cls.def(py::init([](const Tensor& data, bool requires_grad) {
            Tensor alias = data.detach();
            if (requires_grad) alias.requires_grad_(true);
            set_memory_category(alias, MemoryCategory::Parameter);
            return alias.impl_ptr();
          }),
          py::arg("data"), py::arg("requires_grad") = true);

  bind_metadata(cls);
  bind_more_metadata(cls);
  bind_conversion(cls);
  bind_views(cls);
  bind_more_views(cls);
  bind_autograd_attributes(cls);
  init_tensor_ops(m, cls);
  init_indexing(cls);
  init_conversion(m, cls);
}

}  // namespace graft::python

namespace pybind11::detail {

bool type_caster<graft::Scalar>::load(handle src, bool) {
  if (!graft::python::is_number(src)) {
    if (!graft::python::is_tensor(src)) return false;
    if (graft::python::as_tensor_unchecked(src).numel() != 1) return false;
  }
  value = graft::python::to_scalar(src);
  return true;
}

handle type_caster<graft::Scalar>::cast(const graft::Scalar& s, return_value_policy, handle) {
  if (s.is_bool()) return pybind11::bool_(s.to<bool>()).release();
  if (s.is_integral()) return pybind11::int_(s.to_long()).release();
  return pybind11::float_(s.to_double()).release();
}

}  // namespace pybind11::detail
