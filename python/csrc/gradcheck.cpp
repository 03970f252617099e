// graft.autograd.gradcheck / gradgradcheck over the C++ graft::autograd::gradcheck: the Python
// function is called with the tensors the check perturbs, non-tensor arguments passed through.
#include "graft/autograd/gradcheck.h"

#include <array>
#include <string_view>

#include "python_common.h"

namespace graft::python {
namespace {

/// fn(*inputs) as a function of the tensor entries of `inputs` (the others stay as given).
/// Its tensor outputs (one tensor, or a tuple/list of them) are what gradcheck compares.
autograd::DiffFn as_diff_fn(py::function fn, const py::tuple& inputs) {
  std::vector<size_t> tensor_pos;
  for (size_t i = 0; i < inputs.size(); ++i)
    if (is_tensor(inputs[i])) tensor_pos.push_back(i);
  SafePyObject f(std::move(fn)), in(inputs);
  return [f, in, tensor_pos](const TensorList& ts) -> TensorList {
    py::gil_scoped_acquire gil;
    py::tuple given = py::reinterpret_borrow<py::tuple>(in.get());
    py::tuple args(given.size());
    for (size_t i = 0; i < given.size(); ++i) args[i] = given[i];
    for (size_t k = 0; k < tensor_pos.size(); ++k) args[tensor_pos[k]] = py::cast(ts[k]);
    py::object r = f.get()(*args);
    TensorList out;
    if (is_tensor(r)) {
      out.push_back(as_tensor_unchecked(r));
    } else if (PyTuple_Check(r.ptr()) || PyList_Check(r.ptr())) {
      for (py::handle o : r) out.push_back(is_tensor(o) ? as_tensor_unchecked(o) : Tensor());
    }
    return out;
  };
}

/// True for the messages of a failed check (PyTorch's GradcheckError), as opposed to errors of
/// the function itself.
bool is_check_failure(std::string_view msg) {
  constexpr std::array<std::string_view, 4> prefixes = {"Jacobian mismatch", "Backward is not reentrant",
                                                        "Gradcheck failed in fast mode",
                                                        "Analytical gradient has incorrect size"};
  for (std::string_view p : prefixes)
    if (msg.substr(0, p.size()) == p) return true;
  return false;
}

/// Runs the check; returns None when it passes, the failure message otherwise.
template <class F>
py::object run_check(F&& check) {
  try {
    check();
  } catch (const RuntimeError& e) {
    if (!is_check_failure(e.what())) throw;
    return py::str(e.what());
  }
  return py::none();
}

autograd::GradcheckOptions options(double eps, double atol, double rtol, bool fast_mode, double nondet_tol) {
  autograd::GradcheckOptions o;
  o.eps = eps;
  o.atol = atol;
  o.rtol = rtol;
  o.fast_mode = fast_mode;
  o.nondet_tol = nondet_tol;
  o.raise_exception = true;
  return o;
}

TensorList tensors_in(const py::tuple& inputs) {
  TensorList ts;
  for (py::handle h : inputs)
    if (is_tensor(h)) ts.push_back(as_tensor_unchecked(h));
  return ts;
}

}  // namespace

void init_gradcheck(py::module_& m) {
  m.def(
      "_gradcheck",
      [](py::function fn, const py::tuple& inputs, double eps, double atol, double rtol, bool fast_mode,
         double nondet_tol) {
        auto f = as_diff_fn(std::move(fn), inputs);
        auto o = options(eps, atol, rtol, fast_mode, nondet_tol);
        return run_check([&] { autograd::gradcheck(f, tensors_in(inputs), o); });
      },
      py::arg("func"), py::arg("inputs"), py::arg("eps"), py::arg("atol"), py::arg("rtol"), py::arg("fast_mode"),
      py::arg("nondet_tol"));
  m.def(
      "_gradgradcheck",
      [](py::function fn, const py::tuple& inputs, py::object grad_outputs, double eps, double atol, double rtol,
         bool fast_mode, double nondet_tol) {
        auto f = as_diff_fn(std::move(fn), inputs);
        auto o = options(eps, atol, rtol, fast_mode, nondet_tol);
        TensorList gos;
        if (!grad_outputs.is_none()) gos = tensors_in(grad_outputs.cast<py::tuple>());
        return run_check([&] { autograd::gradgradcheck(f, tensors_in(inputs), gos, o); });
      },
      py::arg("func"), py::arg("inputs"), py::arg("grad_outputs"), py::arg("eps"), py::arg("atol"), py::arg("rtol"),
      py::arg("fast_mode"), py::arg("nondet_tol"));
}

}  // namespace graft::python
