// Getting data in and out: graft.tensor / as_tensor from (nested) Python sequences and NumPy
// arrays, from_numpy / Tensor.numpy / __array__ (sharing memory, as PyTorch), tolist, and
// DLPack (__dlpack__, __dlpack_device__, graft.from_dlpack).
#include <dlpack/dlpack.h>
#include <pybind11/numpy.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "python_common.h"

namespace graft::python {
namespace {

constexpr uint8_t kDLBoolCode = 6;  // DLPack >= 0.8's kDLBool (the Debian header is 0.6)

// ---------------------------------------------------------------- nested sequences

struct SequenceData {
  std::vector<int64_t> shape;
  std::vector<Scalar> values;
  bool any_float = false, any_int = false, any_bool = false;
  int64_t leaf_depth = -1;  // depth of the first number seen: every number must sit there
};

constexpr size_t kMaxDims = 64;

std::string type_name(py::handle o) { return py::str(o.get_type().attr("__name__")); }

// Data that nests: a tensor or array of one or more dimensions, or any Python sequence but a
// string (a deque, a range, ...), as PyTorch's PySequence_Check.
bool is_sequence_like(py::handle o) {
  if (is_tensor(o)) return as_tensor_unchecked(o).dim() > 0;
  if (is_ndarray(o)) return py::reinterpret_borrow<py::array>(o).ndim() > 0;
  if (PyUnicode_Check(o.ptr()) || PyBytes_Check(o.ptr()) || PyByteArray_Check(o.ptr())) return false;
  return PyList_Check(o.ptr()) || PyTuple_Check(o.ptr()) || PySequence_Check(o.ptr());
}

void scan(py::handle o, size_t depth, SequenceData& out) {
  if (is_sequence_like(o)) {
    GRAFT_CHECK(out.leaf_depth < 0 || static_cast<int64_t>(depth) < out.leaf_depth, TypeError,
                "must be real number, not ", type_name(o));
    GRAFT_CHECK(depth < kMaxDims, ValueError, "too many dimensions '", type_name(o), "' (more than ", kMaxDims, ")");
    // owning references while we look at them: items of an ndarray are new objects
    py::object seq = py::reinterpret_borrow<py::object>(o);
    if (is_tensor(o)) seq = py::reinterpret_steal<py::object>(PySequence_List(o.ptr()));
    int64_t n = static_cast<int64_t>(py::len(seq));
    if (depth == out.shape.size()) {
      out.shape.push_back(n);
    } else {
      GRAFT_CHECK(depth < out.shape.size(), ValueError, "expected a number at dim ", depth, " but got a sequence");
      GRAFT_CHECK(out.shape[depth] == n, ValueError, "expected sequence of length ", out.shape[depth], " at dim ",
                  depth, " (got ", n, ")");
    }
    for (py::handle item : seq) scan(item, depth + 1, out);  // py::iterator owns each item
    return;
  }
  GRAFT_CHECK(depth == out.shape.size(), ValueError, "expected sequence of length ", out.shape[depth], " at dim ",
              depth, " (got a number)");
  if (out.leaf_depth < 0) out.leaf_depth = static_cast<int64_t>(depth);
  if (PyBool_Check(o.ptr())) {
    out.any_bool = true;
  } else if (PyLong_Check(o.ptr())) {
    out.any_int = true;
  } else if (PyFloat_Check(o.ptr())) {
    out.any_float = true;
  } else if (is_tensor(o)) {
    Tensor t = as_tensor_unchecked(o);
    GRAFT_CHECK(t.numel() == 1, ValueError, "only one element tensors can be converted to Python scalars");
    if (t.is_floating_point())
      out.any_float = true;
    else if (t.dtype() == kBool)
      out.any_bool = true;
    else
      out.any_int = true;
  } else if (is_number(o)) {
    Scalar s = to_scalar(o);
    (s.is_floating_point() ? out.any_float : s.is_bool() ? out.any_bool : out.any_int) = true;
  } else {
    throw TypeError("new(): invalid data type '" + type_name(o) + "'");
  }
  out.values.push_back(to_scalar(o));
}

/// Scalar -> element type T, refusing integers that do not fit (PyTorch's overflow error).
template <class T>
T checked_cast(const Scalar& s, DType d) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    if (s.is_integral()) {
      int64_t v = s.to_long();
      GRAFT_CHECK(v >= std::numeric_limits<T>::min() && v <= std::numeric_limits<T>::max(), RuntimeError,
                  "value cannot be converted to type ", dtype_name(d), " without overflow");
    } else if (s.is_floating_point()) {
      double v = s.to_double();
      GRAFT_CHECK(std::isfinite(v) && v >= static_cast<double>(std::numeric_limits<T>::min()) &&
                      v <= static_cast<double>(std::numeric_limits<T>::max()),
                  RuntimeError, "value cannot be converted to type ", dtype_name(d), " without overflow");
    }
  }
  return s.to<T>();
}

Tensor from_sequence(py::handle data, std::optional<DType> dtype) {
  SequenceData sd;
  scan(data, 0, sd);
  DType inferred = sd.any_float ? default_dtype() : sd.any_int ? kInt64 : sd.any_bool ? kBool : default_dtype();
  DType d = dtype.value_or(inferred);
  GRAFT_CHECK(static_cast<int64_t>(sd.values.size()) == compute_numel(sd.shape), ValueError,
              "tensor(): ragged nested sequence (", sd.values.size(), " numbers for shape ", IntArrayRef(sd.shape),
              ")");
  Tensor t = empty(sd.shape, TensorOptions(d).device(kCPU));  // host values, moved by the caller
  GRAFT_DISPATCH_ALL_AND_REDUCED(d, "tensor", [&] {
    auto* p = t.data_ptr<scalar_t>();
    for (size_t i = 0; i < sd.values.size(); ++i) p[i] = checked_cast<scalar_t>(sd.values[i], d);
  });
  return t;
}

// ---------------------------------------------------------------- NumPy

/// The item size of a dtype, from Python: pybind11 2.10's dtype::itemsize() and array::itemsize() read
/// the descriptor's struct as NumPy 1.x lays it out, and NumPy 2 moved its `elsize`.
py::ssize_t itemsize_of(const py::dtype& dt) { return dt.attr("itemsize").cast<py::ssize_t>(); }

std::optional<DType> dtype_of_numpy(const py::dtype& dt) {
  const char kind = dt.kind();  // (at the same place in NumPy 1.x and 2)
  const py::ssize_t size = itemsize_of(dt);
  if (kind == 'b' && size == 1) return kBool;
  if (kind == 'f' && size == 2) return kFloat16;
  if (kind == 'f' && size == 4) return kFloat32;
  if (kind == 'f' && size == 8) return kFloat64;
  if (kind == 'i' && size == 8) return kInt64;
  if (kind == 'i' && size == 4) return kInt32;
  return std::nullopt;
}

py::dtype numpy_dtype(DType d) {
  switch (d) {
    case kBool:
      return py::dtype::of<bool>();
    case kInt32:
      return py::dtype::of<int32_t>();
    case kInt64:
      return py::dtype::of<int64_t>();
    case kFloat32:
      return py::dtype::of<float>();
    case kFloat64:
      return py::dtype::of<double>();
    case kFloat16:
      return py::dtype("float16");
    case kBFloat16:  // NumPy has no bfloat16
      break;
  }
  throw TypeError(detail::str("Got unsupported ScalarType ", scalar_type_name(d)));
}

/// A deleter for memory owned by a Python object: drops the reference with the GIL held
/// (tensors can die on any thread, e.g. inside backward).
std::function<void(void*)> python_owner_deleter(py::object owner) {
  auto* raw = owner.release().ptr();
  return [raw](void*) {
    if (!Py_IsInitialized()) return;  // interpreter gone at exit: leak rather than crash
    py::gil_scoped_acquire gil;
    Py_DECREF(raw);
  };
}

Tensor from_numpy(py::handle obj) {
  GRAFT_CHECK(is_ndarray(obj), TypeError, "expected np.ndarray (got ", type_name(obj), ")");
  py::array arr = py::reinterpret_borrow<py::array>(obj);
  std::optional<DType> d = dtype_of_numpy(arr.dtype());
  GRAFT_CHECK(d.has_value(), TypeError, "can't convert np.ndarray of type numpy.",
              std::string(py::str(arr.dtype().attr("name"))),
              ". The only supported types are: float64, float32, float16, int64, int32, and bool.");
  GRAFT_CHECK(arr.dtype().attr("isnative").cast<bool>(), ValueError,
              "given numpy array has byte order different from the native byte order. Conversion between byte "
              "orders is currently not supported.");
  const auto item = static_cast<int64_t>(itemsize_of(arr.dtype()));
  std::vector<int64_t> sizes(arr.ndim()), strides(arr.ndim());
  for (py::ssize_t i = 0; i < arr.ndim(); ++i) {
    sizes[i] = arr.shape(i);
    GRAFT_CHECK(arr.strides(i) >= 0, ValueError,
                "At least one stride in the given numpy array is negative, and tensors with negative strides are not "
                "currently supported. (You can probably work around this by making a copy of your array  with "
                "array.copy().) ");
    GRAFT_CHECK(arr.strides(i) % item == 0, ValueError,
                "given numpy array strides not a multiple of the element byte size. Copy the numpy array to "
                "reallocate the memory.");
    strides[i] = arr.strides(i) / item;
  }
  if (!arr.writeable())
    PyErr_WarnEx(PyExc_UserWarning,
                 "The given NumPy array is not writable, and PyTorch does not support non-writable tensors. This means "
                 "writing to this tensor will result in undefined behavior. You may want to copy the array to protect "
                 "its data or make it writable before converting it to a tensor. This type of warning will be "
                 "suppressed for the rest of this program.",
                 1);
  void* data = const_cast<void*>(arr.data());
  return from_blob(data, sizes, strides, python_owner_deleter(arr), TensorOptions(*d));
}

py::array to_numpy(const Tensor& t, bool force) {
  ensure_numpy();
  Tensor src = t;
  if (force) src = t.detach();
  GRAFT_CHECK(!src.requires_grad(), RuntimeError,
              "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.");
  GRAFT_CHECK(src.device().is_cpu(), TypeError, "can't convert ", src.device().str(),
              " device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory first.");
  std::vector<py::ssize_t> shape(src.sizes().begin(), src.sizes().end()), strides(src.dim());
  for (int64_t i = 0; i < src.dim(); ++i) strides[i] = src.strides()[i] * static_cast<py::ssize_t>(src.element_size());
  // the array's base keeps the tensor (and so the memory) alive
  auto* keep = new Tensor(src);
  py::capsule base(keep, [](void* p) { delete static_cast<Tensor*>(p); });
  return py::array(numpy_dtype(src.dtype()), shape, strides, src.data_ptr(), base);
}

// ---------------------------------------------------------------- tolist

py::object tolist_rec(const char* p, const Tensor& t, int64_t dim) {
  if (dim == t.dim()) {
    switch (t.dtype()) {
      case kBool:
        return py::bool_(*reinterpret_cast<const bool*>(p));
      case kInt32:
        return py::int_(*reinterpret_cast<const int32_t*>(p));
      case kInt64:
        return py::int_(*reinterpret_cast<const int64_t*>(p));
      case kFloat32:
        return py::float_(*reinterpret_cast<const float*>(p));
      case kFloat64:
        return py::float_(*reinterpret_cast<const double*>(p));
      case kFloat16:
        return py::float_(static_cast<float>(*reinterpret_cast<const Half*>(p)));
      case kBFloat16:
        return py::float_(static_cast<float>(*reinterpret_cast<const BFloat16*>(p)));
    }
  }
  py::list out(t.size(dim));
  const int64_t step = t.stride(dim) * static_cast<int64_t>(t.element_size());
  for (int64_t i = 0; i < t.size(dim); ++i) out[i] = tolist_rec(p + i * step, t, dim + 1);
  return out;
}

// ---------------------------------------------------------------- DLPack

struct DLPackContext {
  Tensor tensor;
  std::vector<int64_t> shape, strides;
  DLManagedTensor managed;
};

DLDataType dl_dtype(DType d) {
  switch (d) {
    case kBool:
      return {kDLBoolCode, 8, 1};
    case kInt32:
      return {kDLInt, 32, 1};
    case kInt64:
      return {kDLInt, 64, 1};
    case kFloat32:
      return {kDLFloat, 32, 1};
    case kFloat64:
      return {kDLFloat, 64, 1};
    case kFloat16:
      return {kDLFloat, 16, 1};
    case kBFloat16:
      return {kDLBfloat, 16, 1};
  }
  return {kDLFloat, 32, 1};
}

DType dtype_of_dl(DLDataType t) {
  GRAFT_CHECK(t.lanes == 1, TypeError, "from_dlpack: vector dtypes (lanes=", t.lanes, ") are not supported");
  if (t.code == kDLFloat && t.bits == 32) return kFloat32;
  if (t.code == kDLFloat && t.bits == 64) return kFloat64;
  if (t.code == kDLFloat && t.bits == 16) return kFloat16;
  if (t.code == kDLBfloat && t.bits == 16) return kBFloat16;
  if (t.code == kDLInt && t.bits == 64) return kInt64;
  if (t.code == kDLInt && t.bits == 32) return kInt32;
  if (t.code == kDLBoolCode && t.bits == 8) return kBool;
  throw TypeError(detail::str("from_dlpack: unsupported DLPack dtype (code ", int(t.code), ", bits ", int(t.bits),
                              "); graft has float32, float64, float16, bfloat16, int64, int32 and bool"));
}

py::capsule to_dlpack(const Tensor& t) {
  GRAFT_CHECK(!t.requires_grad(), RuntimeError, "Can't export tensors that require gradient, use tensor.detach()");
  auto* ctx = new DLPackContext{t, {t.sizes().begin(), t.sizes().end()}, {t.strides().begin(), t.strides().end()}, {}};
  DLTensor& dl = ctx->managed.dl_tensor;
  dl.data = t.data_ptr();
  dl.device = {kDLCPU, 0};
  dl.ndim = static_cast<int32_t>(t.dim());
  dl.dtype = dl_dtype(t.dtype());
  dl.shape = ctx->shape.data();
  dl.strides = ctx->strides.data();
  dl.byte_offset = 0;
  ctx->managed.manager_ctx = ctx;
  ctx->managed.deleter = [](DLManagedTensor* self) { delete static_cast<DLPackContext*>(self->manager_ctx); };
  // An unconsumed capsule frees the tensor when it dies; a consumer renames it "used_dltensor".
  return py::capsule(&ctx->managed, "dltensor", [](PyObject* cap) {
    if (!PyCapsule_IsValid(cap, "dltensor")) return;
    auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(cap, "dltensor"));
    if (m && m->deleter) m->deleter(m);
  });
}

Tensor from_dlpack(py::handle obj) {
  py::object cap = py::reinterpret_borrow<py::object>(obj);
  if (py::hasattr(obj, "__dlpack__")) {
    if (is_tensor(obj)) return as_tensor_unchecked(obj);
    cap = obj.attr("__dlpack__")();
  }
  GRAFT_CHECK(PyCapsule_IsValid(cap.ptr(), "dltensor"), ValueError,
              "from_dlpack: expected a DLPack capsule named 'dltensor' (or an object with __dlpack__); a capsule can "
              "be consumed only once");
  auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(cap.ptr(), "dltensor"));
  const DLTensor& dl = m->dl_tensor;
  GRAFT_CHECK(dl.device.device_type == kDLCPU || dl.device.device_type == kDLCUDAHost, RuntimeError,
              "from_dlpack: only CPU tensors can be imported in this build (device type ", int(dl.device.device_type),
              ")");
  DType d = dtype_of_dl(dl.dtype);
  std::vector<int64_t> sizes(dl.shape, dl.shape + dl.ndim), strides;
  if (dl.strides)
    strides.assign(dl.strides, dl.strides + dl.ndim);
  else {
    Shape s = contiguous_strides(sizes);
    strides.assign(s.begin(), s.end());
  }
  void* data = static_cast<char*>(dl.data) + dl.byte_offset;
  PyCapsule_SetName(cap.ptr(), "used_dltensor");
  return from_blob(
      data, sizes, strides,
      [m](void*) {
        if (m->deleter) m->deleter(m);
      },
      TensorOptions(d));
}

}  // namespace

void init_conversion(py::module_& m, py::class_<TensorImpl, intrusive_ptr<TensorImpl>>& cls) {
  m.def(
      "tensor",
      [](py::handle data, std::optional<DType> dtype, py::object device, bool requires_grad, bool /*pin_memory*/) {
        Tensor t;
        if (is_tensor(data)) {
          PyErr_WarnEx(PyExc_UserWarning,
                       "To copy construct from a tensor, it is recommended to use sourceTensor.clone().detach() or "
                       "sourceTensor.clone().detach().requires_grad_(True), rather than torch.tensor(sourceTensor).",
                       1);
          t = as_tensor_unchecked(data).detach().clone();
          if (dtype) t = t.to(*dtype);
        } else if (is_ndarray(data)) {
          t = from_numpy(data).clone();
          if (dtype) t = t.to(*dtype);
        } else {
          t = from_sequence(data, dtype);  // numbers too (0-d), with the overflow check
        }
        // no device: the default one (graft.set_default_device), as PyTorch
        const Device target = device.is_none() ? default_device() : to_device(device);
        if (t.device() != target) t = t.to(target);
        if (requires_grad) t.requires_grad_(true);
        return t;
      },
      py::arg("data"), py::kw_only(), py::arg("dtype") = py::none(), py::arg("device") = py::none(),
      py::arg("requires_grad") = false, py::arg("pin_memory") = false);
  m.def(
      "as_tensor",
      [](py::handle data, std::optional<DType> dtype, py::object device) {
        Tensor t;
        if (is_tensor(data))
          t = as_tensor_unchecked(data);
        else if (is_ndarray(data) && dtype_of_numpy(py::reinterpret_borrow<py::array>(data).dtype()))
          t = from_numpy(data);
        else if (is_number(data)) {
          Scalar s = to_scalar(data);
          t = scalar_tensor(s, TensorOptions(dtype.value_or(s.natural_dtype())));
        } else if (is_ndarray(data)) {
          t = from_sequence(data.attr("tolist")(), dtype);
        } else {
          t = from_sequence(data, dtype);
        }
        if (dtype && t.dtype() != *dtype) t = t.to(*dtype);
        if (!device.is_none())
          t = t.to(to_device(device));
        else if (!is_tensor(data) && t.device() != default_device())
          t = t.to(default_device());
        return t;
      },
      py::arg("data"), py::arg("dtype") = py::none(), py::arg("device") = py::none());
  m.def("from_numpy", &from_numpy, py::arg("ndarray"));
  m.def("from_dlpack", &from_dlpack, py::arg("ext_tensor"));
  m.def("_to_dlpack", &to_dlpack);

  cls.def("numpy", &to_numpy, py::kw_only(), py::arg("force") = false)
      .def(
          "__array__",
          [](const Tensor& t, py::object dtype) -> py::object {
            py::array a = to_numpy(t, false);
            if (dtype.is_none()) return a;
            return a.attr("astype")(dtype, py::arg("copy") = false);
          },
          py::arg("dtype") = py::none())
      .def("tolist",
           [](const Tensor& t) {
             Tensor c = t;
             GRAFT_CHECK(!c.device().is_meta(), NotImplementedError, "Cannot copy out of meta tensor; no data!");
             return tolist_rec(static_cast<const char*>(c.data_ptr()), c, 0);
           })
      .def(
          "__dlpack__", [](const Tensor& t, py::object) { return to_dlpack(t); }, py::arg("stream") = py::none())
      .def("__dlpack_device__", [](const Tensor&) { return py::make_tuple(static_cast<int>(kDLCPU), 0); });
}

}  // namespace graft::python
