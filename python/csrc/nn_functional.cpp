// graft._C._nn's hand-written part: the initialisers of torch.nn.init, gradient clipping, the
// identity node behind nn.Module's full backward hooks and the recurrences' steps. The
// neural-network ops themselves are declared in src/ops/ops.yaml and bound by the generator
// (python: nn); graft.nn.functional is their Python layer.
#include <cmath>
#include <utility>

#include "graft/autograd/function.h"
#include "graft/nn/init.h"
#include "graft/nn/utils/clip_grad.h"
#include "graft/ops/nn_ops.h"
#include "python_common.h"

namespace graft::python {
namespace {

std::string type_name(py::handle o) { return py::str(o.get_type().attr("__name__")).cast<std::string>(); }

Tensor opt(const std::optional<Tensor>& t) { return t.value_or(Tensor()); }

// ---- full backward hooks: an identity node that calls back into Python ----

/// Passes `tensors` through the autograd layer's BackwardHookNode (PyTorch's
/// BackwardHookFunctionBackward) with a hook that hands the incoming gradients (None where
/// undefined) to the Python callable `fn`, whose result (None, or one Tensor/None per gradient)
/// replaces them.
py::tuple backward_hook_identity(const std::vector<Tensor>& tensors, py::function fn) {
  SafePyObject callable(std::move(fn));
  auto hook = [callable](const TensorList& grads) -> std::optional<TensorList> {
    py::gil_scoped_acquire gil;
    py::tuple g(grads.size());
    for (size_t i = 0; i < grads.size(); ++i) g[i] = py::cast(grads[i]);
    py::object r = callable.get()(g);
    if (r.is_none()) return std::nullopt;
    TensorList out;
    for (py::handle h : r) out.push_back(h.is_none() ? Tensor() : h.cast<Tensor>());
    return out;
  };
  TensorList outs = autograd::detail::backward_hook_identity(tensors, std::move(hook));
  py::tuple r(outs.size());
  for (size_t i = 0; i < outs.size(); ++i) r[i] = py::cast(outs[i]);
  return r;
}

std::vector<Tensor> tensors_from(py::handle parameters) {
  if (is_tensor(parameters)) return {as_tensor_unchecked(parameters)};
  std::vector<Tensor> out;
  for (py::handle h : parameters) {
    GRAFT_CHECK(is_tensor(h), TypeError, "expected an iterable of Tensors, but found an element of type ",
                type_name(h));
    out.push_back(as_tensor_unchecked(h));
  }
  return out;
}

void check_fan_mode(const std::string& mode) {
  GRAFT_CHECK(mode == "fan_in" || mode == "fan_out", ValueError, "Mode ", mode,
              " not supported, please use one of ['fan_in', 'fan_out']");
}

void init_init_part(py::module_& i) {
  i.def(
      "calculate_gain",
      [](const std::string& nonlinearity, py::handle param) {
        double p = 0.01;
        if (nonlinearity == "leaky_relu" && !param.is_none()) {
          GRAFT_CHECK(!PyBool_Check(param.ptr()) && (PyLong_Check(param.ptr()) || PyFloat_Check(param.ptr())),
                      ValueError, "negative_slope ", py::str(param).cast<std::string>(), " not a valid number");
          p = param.cast<double>();
        }
        return nn::init::calculate_gain(nonlinearity, p);
      },
      py::arg("nonlinearity"), py::arg("param") = py::none());
  i.def(
      "_calculate_fan_in_and_fan_out",
      [](const Tensor& t) {
        auto [in, out] = nn::init::calculate_fan_in_and_fan_out(t);
        return py::make_tuple(in, out);
      },
      py::arg("tensor"));
  // uniform_(a, b) and normal_(mean, std): two numbers (defaults 0 and 1) and a generator
  for (auto [name, init, first, second] : {std::tuple{"uniform_", &nn::init::uniform_, "a", "b"},
                                           std::tuple{"normal_", &nn::init::normal_, "mean", "std"}})
    i.def(
        name,
        [name, init](const Tensor& t, double x, double y, py::handle generator) {
          return init(t, x, y, generator_arg(generator, name));
        },
        py::arg("tensor"), py::arg(first) = 0.0, py::arg(second) = 1.0, py::arg("generator") = py::none());
  i.def(
      "trunc_normal_",
      [](const Tensor& t, double mean, double std, double a, double b, py::handle generator) {
        return nn::init::trunc_normal_(t, mean, std, a, b, generator_arg(generator, "trunc_normal_"));
      },
      py::arg("tensor"), py::arg("mean") = 0.0, py::arg("std") = 1.0, py::arg("a") = -2.0, py::arg("b") = 2.0,
      py::arg("generator") = py::none());
  i.def(
      "constant_", [](const Tensor& t, double val) { return nn::init::constant_(t, val); }, py::arg("tensor"),
      py::arg("val"));
  i.def(
      "ones_", [](const Tensor& t) { return nn::init::ones_(t); }, py::arg("tensor"));
  i.def(
      "zeros_", [](const Tensor& t) { return nn::init::zeros_(t); }, py::arg("tensor"));
  i.def(
      "eye_", [](const Tensor& t) { return nn::init::eye_(t); }, py::arg("tensor"));
  for (auto [name, init] : {std::pair{"xavier_uniform_", &nn::init::xavier_uniform_},
                            std::pair{"xavier_normal_", &nn::init::xavier_normal_}})
    i.def(
        name,
        [name, init](const Tensor& t, double gain, py::handle generator) {
          return init(t, gain, generator_arg(generator, name));
        },
        py::arg("tensor"), py::arg("gain") = 1.0, py::arg("generator") = py::none());
  // kaiming_uniform_ and kaiming_normal_: the same arguments and checks
  for (auto [name, init] : {std::pair{"kaiming_uniform_", &nn::init::kaiming_uniform_},
                            std::pair{"kaiming_normal_", &nn::init::kaiming_normal_}})
    i.def(
        name,
        [name, init](const Tensor& t, double a, const std::string& mode, const std::string& nonlinearity,
                     py::handle generator) {
          const std::optional<Generator> gen = generator_arg(generator, name);
          check_fan_mode(mode);
          if (t.numel() == 0 && PyErr_WarnEx(PyExc_UserWarning, "Initializing zero-element tensors is a no-op", 1) < 0)
            throw py::error_already_set();
          return init(t, a, mode, nonlinearity, gen);
        },
        py::arg("tensor"), py::arg("a") = 0.0, py::arg("mode") = "fan_in", py::arg("nonlinearity") = "leaky_relu",
        py::arg("generator") = py::none());
}

void init_utils_part(py::module_& u) {
  u.def(
      "clip_grad_norm_",
      [](py::handle parameters, double max_norm, double norm_type, bool error_if_nonfinite, py::handle foreach) {
        (void)foreach;  // one implementation: the per-tensor loop is the foreach path too
        std::vector<Tensor> ps = tensors_from(parameters);
        return nn::utils::clip_grad_norm_(ps, max_norm, norm_type, error_if_nonfinite);
      },
      py::arg("parameters"), py::arg("max_norm"), py::arg("norm_type") = 2.0, py::arg("error_if_nonfinite") = false,
      py::arg("foreach") = py::none());
  u.def(
      "clip_grad_value_",
      [](py::handle parameters, double clip_value, py::handle foreach) {
        (void)foreach;
        nn::utils::clip_grad_value_(tensors_from(parameters), clip_value);
      },
      py::arg("parameters"), py::arg("clip_value"), py::arg("foreach") = py::none());
}

}  // namespace

void init_nn_functional(py::module_& m) {
  py::module_ nn = m.def_submodule("_nn");  // made by init_tensor_ops, which binds the generated activations in it
  py::module_ init = nn.def_submodule("init", "torch.nn.init's initialisers");
  init_init_part(init);
  py::module_ utils = nn.def_submodule("utils", "torch.nn.utils' gradient clipping");
  init_utils_part(utils);
  nn.def("_backward_hook_identity", &backward_hook_identity, py::arg("tensors"), py::arg("hook"));
  // one step of each recurrence (graft::nn::*_cell_step), for graft.nn.RNN/LSTM/GRU and their cells
  nn.def(
      "_rnn_cell_step",
      [](const Tensor& gi, const Tensor& h, const Tensor& w_hh, const std::optional<Tensor>& b_hh, bool relu) {
        return nn::rnn_cell_step(gi, h, w_hh, opt(b_hh), relu);
      },
      py::arg("gi"), py::arg("h"), py::arg("w_hh"), py::arg("b_hh"), py::arg("relu"));
  nn.def(
      "_lstm_cell_step",
      [](const Tensor& gi, const Tensor& h, const Tensor& c, const Tensor& w_hh, const std::optional<Tensor>& b_hh) {
        return nn::lstm_cell_step(gi, h, c, w_hh, opt(b_hh));
      },
      py::arg("gi"), py::arg("h"), py::arg("c"), py::arg("w_hh"), py::arg("b_hh"));
  nn.def(
      "_gru_cell_step",
      [](const Tensor& gi, const Tensor& h, const Tensor& w_hh, const std::optional<Tensor>& b_hh) {
        return nn::gru_cell_step(gi, h, w_hh, opt(b_hh));
      },
      py::arg("gi"), py::arg("h"), py::arg("w_hh"), py::arg("b_hh"));
}

}  // namespace graft::python
