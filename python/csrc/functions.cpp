// Module-level functions: the factories (graft.zeros(2, 3, dtype=..., requires_grad=True),
// *_like, arange, rand...), joining and splitting (cat, stack, split), shape functions, the
// random seed and thread settings.
#include "python_common.h"

namespace graft::python {
namespace {

/// dtype= / device= / requires_grad= keywords of a factory (others PyTorch accepts, like
/// layout and pin_memory, have one possible value here and are ignored; memory_format is
/// accepted, and the factories make row-major tensors whatever it says: see docs/python.md).
TensorOptions factory_options(const py::kwargs& kw, const char* fn, std::optional<DType> fallback = std::nullopt) {
  TensorOptions o;
  if (fallback) o = o.dtype(*fallback);
  for (auto [k, v] : kw) {
    std::string key = k.cast<std::string>();
    if (key == "dtype") {
      if (!v.is_none()) o = o.dtype(v.cast<DType>());
    } else if (key == "device") {
      if (!v.is_none()) o = o.device(to_device(v));
    } else if (key == "requires_grad") {
      o = o.requires_grad(v.cast<bool>());
    } else if (key == "layout" || key == "pin_memory" || key == "memory_format" || (key == "out" && v.is_none())) {
    } else {
      throw TypeError(detail::str(fn, "() got an unexpected keyword argument '", key, "'"));
    }
  }
  return o;
}

/// Tensor options for a *_like factory: the input's dtype and device unless overridden.
TensorOptions like(const Tensor& t, const py::kwargs& kw, const char* fn) {
  TensorOptions o = TensorOptions(t.dtype()).device(t.device());
  TensorOptions given = factory_options(kw, fn);
  if (given.has_dtype_) o = o.dtype(given.dtype_);
  if (given.has_device_) o = o.device(given.device_);  // device=None keeps the input's
  return o.requires_grad(given.requires_grad_);
}

/// Finishes a factory: requires_grad is set on the finished leaf (so the fill is not recorded).
Tensor finish(Tensor t, const TensorOptions& o) {
  if (o.requires_grad_) t.requires_grad_(true);
  return t;
}

TensorOptions no_grad_opts(TensorOptions o) { return o.requires_grad(false); }

/// The size of zeros/ones/empty/rand/randn: varargs (`zeros(2, 3)`), one sequence
/// (`zeros((2, 3))`) or the `size=` keyword (`zeros(size=(2, 3))`, removed from `kw`).
std::vector<int64_t> factory_sizes(const py::args& a, py::kwargs& kw, const char* fn) {
  if (!kw.contains("size")) {
    GRAFT_CHECK(!a.empty(), TypeError, fn, "() missing 1 required positional arguments: \"size\"");
    return sizes_from_args(a, fn);
  }
  GRAFT_CHECK(a.empty(), TypeError, fn, "() got multiple values for argument 'size'");
  py::object size = kw["size"];
  PyDict_DelItemString(kw.ptr(), "size");
  GRAFT_CHECK(!PyLong_Check(size.ptr()), TypeError, fn, "(): argument 'size' must be tuple of ints, not int");
  return dims_from_object(size);
}

/// Pops keyword `key` from `kw` (None when absent).
py::object pop_kw(py::kwargs& kw, const char* key) {
  if (!kw.contains(key)) return py::none();
  py::object v = kw[key];
  PyDict_DelItemString(kw.ptr(), key);
  return v;
}

/// zeros, ones, empty, rand, randn, full, arange, ... with PyTorch's size forms.
void bind_factories(py::module_& m) {
  // ---- factories ----
  /// Binds graft::fn(sizes, options) as `fn(*size, *, dtype=None, device=None, requires_grad=False, ...)`.
#define GRAFT_DEF_SIZED(fn)                                \
  m.def(#fn, [](py::args a, py::kwargs k) {                \
    std::vector<int64_t> sizes = factory_sizes(a, k, #fn); \
    auto o = factory_options(k, #fn);                      \
    return finish(fn(sizes, no_grad_opts(o)), o);          \
  })
  GRAFT_DEF_SIZED(zeros);
  GRAFT_DEF_SIZED(ones);
  GRAFT_DEF_SIZED(empty);
  /// The same for a random factory, with `generator=` (popped from `k` before the options).
#define GRAFT_DEF_SIZED_RANDOM(fn)                                                   \
  m.def(#fn, [](py::args a, py::kwargs k) {                                          \
    std::vector<int64_t> sizes = factory_sizes(a, k, #fn);                           \
    const std::optional<Generator> gen = generator_arg(pop_kw(k, "generator"), #fn); \
    auto o = factory_options(k, #fn);                                                \
    return finish(fn(sizes, gen, no_grad_opts(o)), o);                               \
  })
  GRAFT_DEF_SIZED_RANDOM(rand);
  GRAFT_DEF_SIZED_RANDOM(randn);
  m.def(
      "full",
      [](py::handle size, const Scalar& value, py::kwargs k) {
        auto o = factory_options(k, "full", value.natural_dtype());
        return finish(full(dims_from_object(size), value, no_grad_opts(o)), o);
      },
      py::arg("size"), py::arg("fill_value"));
  m.def("randint", [](py::args a, py::kwargs k) {
    // randint(high, size) or randint(low=0, high, size), positionally or by keyword
    std::vector<py::object> pos;
    for (py::handle h : a) pos.push_back(py::reinterpret_borrow<py::object>(h));
    py::object size = pop_kw(k, "size"), high = pop_kw(k, "high"), low = pop_kw(k, "low");
    if (size.is_none() && !pos.empty()) size = pos.back(), pos.pop_back();
    if (high.is_none() && !pos.empty()) high = pos.back(), pos.pop_back();
    if (low.is_none() && !pos.empty()) low = pos.back(), pos.pop_back();
    GRAFT_CHECK(pos.empty() && !size.is_none() && !high.is_none(), TypeError,
                "randint() received an invalid combination of arguments: expected (high, size) or (low, high, size)");
    GRAFT_CHECK(!PyLong_Check(size.ptr()), TypeError, "randint(): argument 'size' must be tuple of ints, not int");
    const std::optional<Generator> gen = generator_arg(pop_kw(k, "generator"), "randint");
    auto o = factory_options(k, "randint", kInt64);
    return finish(randint(low.is_none() ? 0 : low.cast<int64_t>(), high.cast<int64_t>(), dims_from_object(size), gen,
                          no_grad_opts(o)),
                  o);
  });
  m.def(
      "randperm",
      [](int64_t n, py::kwargs k) {
        const std::optional<Generator> gen = generator_arg(pop_kw(k, "generator"), "randperm");
        auto o = factory_options(k, "randperm", kInt64);
        return finish(randperm(n, gen, no_grad_opts(o)), o);
      },
      py::arg("n"));
  m.def("arange", [](py::args a, py::kwargs k) {
    std::vector<Scalar> s;
    for (py::handle h : a) s.push_back(to_scalar(h));
    for (const char* key : {"start", "end", "step"})
      if (k.contains(key)) s.push_back(to_scalar(k[key])), PyDict_DelItemString(k.ptr(), key);
    GRAFT_CHECK(!s.empty() && s.size() <= 3, TypeError, "arange() takes 1 to 3 positional arguments");
    auto o = factory_options(k, "arange");
    TensorOptions go = no_grad_opts(o);
    Tensor t = s.size() == 1 ? arange(s[0], go) : arange(s[0], s[1], s.size() == 3 ? s[2] : Scalar(1), go);
    return finish(t, o);
  });
  m.def(
      "linspace",
      [](double start, double end, int64_t steps, py::kwargs k) {
        auto o = factory_options(k, "linspace");
        return finish(linspace(start, end, steps, no_grad_opts(o)), o);
      },
      py::arg("start"), py::arg("end"), py::arg("steps"));
  m.def(
      "eye",
      [](int64_t n, std::optional<int64_t> mcols, py::kwargs k) {
        auto o = factory_options(k, "eye");
        return finish(eye(n, mcols, no_grad_opts(o)), o);
      },
      py::arg("n"), py::arg("m") = py::none());
  m.def(
      "scalar_tensor",
      [](const Scalar& s, py::kwargs k) {
        auto o = factory_options(k, "scalar_tensor", default_dtype());  // not the number's kind, as PyTorch
        return finish(scalar_tensor(s, no_grad_opts(o)), o);
      },
      py::arg("s"));
}

/// zeros_like, ones_like, ... and the other factories from a tensor.
void bind_like_factories(py::module_& m) {
  /// Binds graft::fn(input, options) as `fn(input, *, dtype=None, device=None, requires_grad=False, ...)`.
#define GRAFT_DEF_LIKE(fn)                        \
  m.def(                                          \
      #fn,                                        \
      [](const Tensor& t, py::kwargs k) {         \
        auto o = like(t, k, #fn);                 \
        return finish(fn(t, no_grad_opts(o)), o); \
      },                                          \
      py::arg("input"))
  GRAFT_DEF_LIKE(zeros_like);
  GRAFT_DEF_LIKE(ones_like);
  GRAFT_DEF_LIKE(empty_like);
  GRAFT_DEF_LIKE(rand_like);
  GRAFT_DEF_LIKE(randn_like);
  m.def(
      "full_like",
      [](const Tensor& t, const Scalar& v, py::kwargs k) {
        auto o = like(t, k, "full_like");
        return finish(full_like(t, v, no_grad_opts(o)), o);
      },
      py::arg("input"), py::arg("fill_value"));
  m.def(
      "randint_like",
      [](const Tensor& t, int64_t low, std::optional<int64_t> high, py::kwargs k) {
        auto o = like(t, k, "randint_like");
        if (!high) return finish(randint_like(t, 0, low, no_grad_opts(o)), o);
        return finish(randint_like(t, low, *high, no_grad_opts(o)), o);
      },
      py::arg("input"), py::arg("low"), py::arg("high") = py::none());
  // autocast's per-thread state on the CPU (graft/ops/autocast.h), for graft.amp.autocast
  m.def("_is_autocast_cpu_enabled", []() { return autocast::is_enabled(DeviceType::CPU); });
  m.def(
      "_set_autocast_cpu_enabled", [](bool on) { autocast::set_enabled(DeviceType::CPU, on); }, py::arg("enabled"));
  m.def("_get_autocast_cpu_dtype", []() { return autocast::get_dtype(DeviceType::CPU); });
  m.def(
      "_set_autocast_cpu_dtype", [](DType dtype) { autocast::set_dtype(DeviceType::CPU, dtype); }, py::arg("dtype"));
  m.def(
      "manual_seed", [](uint64_t seed) { manual_seed(seed); }, py::arg("seed"));
  m.def("initial_seed", []() { return initial_seed(); });
  m.def(
      "get_rng_state", []() { return get_rng_state(); },
      "The default generator's state: a 1-D int64 tensor (the initial seed, then the engine's words).");
  m.def(
      "set_rng_state",
      [](py::handle state) {
        GRAFT_CHECK(is_tensor(state), TypeError, "expected a torch.LongTensor, but got ",
                    py::str(state.get_type().attr("__name__")).cast<std::string>());
        set_rng_state(as_tensor_unchecked(state));
      },
      py::arg("new_state"), "Restores a get_rng_state() result.");
}

/// cat, stack, split, chunk and the shape functions.
void bind_joining_and_shapes(py::module_& m) {
  // ---- joining, splitting, shapes ----
  m.attr("concat") = m.attr("cat");  // cat and stack are generated (op_bindings.inc), bound first
  m.def(
      "split", [](py::handle t, py::handle s, int64_t dim) { return py::tuple(t.attr("split")(s, dim)); },
      py::arg("tensor"), py::arg("split_size_or_sections"), py::arg("dim") = 0);
  for (const char* name : {"unflatten", "detach", "numel", "swapaxes", "is_floating_point"}) {
    std::string n = name;
    m.def(
        name,
        [n](py::handle input, py::args args, py::kwargs kwargs) {
          GRAFT_CHECK(is_tensor(input), TypeError, n, "(): argument 'input' (position 1) must be Tensor, not ",
                      std::string(py::str(input.get_type().attr("__name__"))));
          return input.attr(n.c_str())(*args, **kwargs);
        },
        py::arg("input"));
  }
}

}  // namespace

void init_functions(py::module_& m) {
  bind_factories(m);
  bind_like_factories(m);
  bind_joining_and_shapes(m);
  // the test suites' leak check (conftest.py) reads this before graft.cpu exists
  m.def("_cpu_memory_allocated", []() { return memory_allocated(kCPU); });
  m.def(
      "is_tensor", [](py::handle o) { return is_tensor(o); }, py::arg("obj"));
  m.def(
      "set_num_threads", [](int n) { set_num_threads(n); }, py::arg("num"));
  m.def("get_num_threads", []() { return get_num_threads(); });
  m.def("get_default_dtype", []() { return default_dtype(); });
  m.def(
      "set_default_dtype",
      [](py::handle d) {
        GRAFT_CHECK(py::detail::make_caster<DType>().load(d, false), TypeError,
                    "invalid dtype object: only floating-point types are supported as the default type");
        set_default_dtype(d.cast<DType>());
      },
      py::arg("d"));
}

}  // namespace graft::python
