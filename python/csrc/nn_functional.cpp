// graft._C._nn: the C++ neural-network ops (include/graft/ops/nn_ops.h) with the argument
// names and defaults of torch.nn.functional, the initialisers of torch.nn.init, gradient
// clipping, and the identity node behind nn.Module's full backward hooks. The pure-Python
// package graft.nn.functional / graft.nn.init re-exports these.
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

/// kernel_size / stride / padding / dilation: an int (both dims) or a sequence of ints.
std::vector<int64_t> int_or_tuple(py::handle o, const char* fn, const char* name) {
  if (PyLong_Check(o.ptr())) return {o.cast<int64_t>()};
  GRAFT_CHECK(py::isinstance<py::sequence>(o) && !py::isinstance<py::str>(o), TypeError, fn, "(): argument '", name,
              "' must be an int or a tuple of ints, not ", type_name(o));
  std::vector<int64_t> out;
  for (py::handle v : o) {
    GRAFT_CHECK(PyLong_Check(v.ptr()), TypeError, fn, "(): argument '", name,
                "' must be an int or a tuple of ints, but found element of type ", type_name(v));
    out.push_back(v.cast<int64_t>());
  }
  return out;
}

Tensor opt(const std::optional<Tensor>& t) { return t.value_or(Tensor()); }

/// The reduction string for PyTorch's legacy size_average / reduce arguments (with its
/// deprecation warning), or `reduction` when both are None.
Reduction legacy_reduction(py::handle size_average, py::handle reduce, const std::string& reduction) {
  if (size_average.is_none() && reduce.is_none()) return reduction_from_string(reduction);
  const bool sa = size_average.is_none() ? true : size_average.cast<bool>();
  const bool rd = reduce.is_none() ? true : reduce.cast<bool>();
  const char* r = !rd ? "none" : sa ? "mean" : "sum";
  std::string msg =
      std::string("size_average and reduce args will be deprecated, please use reduction='") + r + "' instead.";
  if (PyErr_WarnEx(PyExc_UserWarning, msg.c_str(), 2) < 0) throw py::error_already_set();
  return reduction_from_string(r);
}

/// graft.Size(...) as Python prints it, for the messages PyTorch writes in Python.
std::string size_repr(const Tensor& t) { return py::repr(make_size(t.sizes())).cast<std::string>(); }

bool heavy(std::initializer_list<const Tensor*> ts) {
  for (const Tensor* t : ts)
    if (t->defined() && is_heavy(*t)) return true;
  return false;
}

Tensor conv_nd(size_t dims, const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
               py::handle stride_o, py::handle padding_o, py::handle dilation_o, int64_t groups) {
  const char* fn = dims == 1 ? "conv1d" : "conv2d";
  std::vector<int64_t> stride = int_or_tuple(stride_o, fn, "stride");
  std::vector<int64_t> dilation = int_or_tuple(dilation_o, fn, "dilation");
  Tensor b = opt(bias);
  if (py::isinstance<py::str>(padding_o)) {  // 'valid' / 'same': the library's string overloads
    const ConvPaddingMode mode = conv_padding_mode(padding_o.cast<std::string>());
    return maybe_without_gil(heavy({&input, &weight}), [&] {
      return dims == 1 ? conv1d(input, weight, b, stride, mode, dilation, groups)
                       : conv2d(input, weight, b, stride, mode, dilation, groups);
    });
  }
  std::vector<int64_t> padding = int_or_tuple(padding_o, fn, "padding");
  return maybe_without_gil(heavy({&input, &weight}), [&] {
    return dims == 1 ? conv1d(input, weight, b, stride, padding, dilation, groups)
                     : conv2d(input, weight, b, stride, padding, dilation, groups);
  });
}

/// adaptive_avg_pool2d's output_size: an int, or a pair whose None entries keep the input size.
std::vector<int64_t> adaptive_size(const Tensor& input, py::handle output_size) {
  if (PyLong_Check(output_size.ptr())) return {output_size.cast<int64_t>(), output_size.cast<int64_t>()};
  std::vector<int64_t> out;
  int64_t i = 0;
  const py::object seq = py::reinterpret_borrow<py::object>(output_size);
  const int64_t n = static_cast<int64_t>(py::len(seq));
  for (py::handle v : seq) {  // py::iterator keeps each item alive (ndarray items are new objects)
    out.push_back(v.is_none() ? input.size(input.dim() - n + i) : v.cast<int64_t>());
    ++i;
  }
  return out;
}

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

void check_no_generator(py::handle generator, const char* fn) {
  GRAFT_CHECK(
      generator.is_none(), NotImplementedError, fn,
      ": a generator argument is not supported (graft draws from the default generator; use graft.manual_seed)");
}

namespace {

/// conv1d, conv2d and conv_transpose2d with PyTorch's bias=None and padding strings.
void bind_convolution(py::module_& f) {
  // ---- convolution ----
  for (const auto& [name, spatial_dims] : {std::pair{"conv1d", size_t{1}}, std::pair{"conv2d", size_t{2}}})
    f.def(
        name,
        [dims = spatial_dims](const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                              py::handle stride, py::handle padding, py::handle dilation, int64_t groups) {
          return conv_nd(dims, input, weight, bias, stride, padding, dilation, groups);
        },
        py::arg("input"), py::arg("weight"), py::arg("bias") = py::none(), py::arg("stride") = 1,
        py::arg("padding") = 0, py::arg("dilation") = 1, py::arg("groups") = 1);
  f.def(
      "unfold",
      [](const Tensor& input, py::handle kernel_size, py::handle dilation, py::handle padding, py::handle stride) {
        const char* fn = "unfold";
        auto k = int_or_tuple(kernel_size, fn, "kernel_size"), d = int_or_tuple(dilation, fn, "dilation"),
             p = int_or_tuple(padding, fn, "padding"), s = int_or_tuple(stride, fn, "stride");
        return maybe_without_gil(heavy({&input}), [&] { return im2col(input, k, d, p, s); });
      },
      py::arg("input"), py::arg("kernel_size"), py::arg("dilation") = 1, py::arg("padding") = 0, py::arg("stride") = 1);
  f.def(
      "fold",
      [](const Tensor& input, py::handle output_size, py::handle kernel_size, py::handle dilation, py::handle padding,
         py::handle stride) {
        const char* fn = "fold";
        auto o = int_or_tuple(output_size, fn, "output_size"), k = int_or_tuple(kernel_size, fn, "kernel_size"),
             d = int_or_tuple(dilation, fn, "dilation"), p = int_or_tuple(padding, fn, "padding"),
             s = int_or_tuple(stride, fn, "stride");
        return maybe_without_gil(heavy({&input}), [&] { return col2im(input, o, k, d, p, s); });
      },
      py::arg("input"), py::arg("output_size"), py::arg("kernel_size"), py::arg("dilation") = 1, py::arg("padding") = 0,
      py::arg("stride") = 1);
}

/// The pooling functions, with PyTorch's kernel, stride and padding forms.
void bind_pooling(py::module_& f) {
  // ---- pooling ----
  f.def(
      "max_pool2d",
      [](const Tensor& input, py::handle kernel_size, py::handle stride, py::handle padding, py::handle dilation,
         bool ceil_mode, bool return_indices) -> py::object {
        const char* fn = "max_pool2d";
        auto k = int_or_tuple(kernel_size, fn, "kernel_size");
        std::vector<int64_t> s = stride.is_none() ? std::vector<int64_t>{} : int_or_tuple(stride, fn, "stride");
        auto p = int_or_tuple(padding, fn, "padding"), d = int_or_tuple(dilation, fn, "dilation");
        auto [v, i] =
            maybe_without_gil(heavy({&input}), [&] { return max_pool2d_with_indices(input, k, s, p, d, ceil_mode); });
        if (return_indices) return py::make_tuple(v, i);
        return py::cast(v);
      },
      py::arg("input"), py::arg("kernel_size"), py::arg("stride") = py::none(), py::arg("padding") = 0,
      py::arg("dilation") = 1, py::arg("ceil_mode") = false, py::arg("return_indices") = false);
  f.def(
      "avg_pool2d",
      [](const Tensor& input, py::handle kernel_size, py::handle stride, py::handle padding, bool ceil_mode,
         bool count_include_pad, std::optional<int64_t> divisor_override) {
        const char* fn = "avg_pool2d";
        auto k = int_or_tuple(kernel_size, fn, "kernel_size");
        std::vector<int64_t> s = stride.is_none() ? std::vector<int64_t>{} : int_or_tuple(stride, fn, "stride");
        auto p = int_or_tuple(padding, fn, "padding");
        return maybe_without_gil(heavy({&input}), [&] {
          return avg_pool2d(input, k, s, p, ceil_mode, count_include_pad, divisor_override);
        });
      },
      py::arg("input"), py::arg("kernel_size"), py::arg("stride") = py::none(), py::arg("padding") = 0,
      py::arg("ceil_mode") = false, py::arg("count_include_pad") = true, py::arg("divisor_override") = py::none());
  f.def(
      "adaptive_avg_pool2d",
      [](const Tensor& input, py::handle output_size) {
        return adaptive_avg_pool2d(input, adaptive_size(input, output_size));
      },
      py::arg("input"), py::arg("output_size"));
}

/// pad, dropout, embedding and scaled dot-product attention.
void bind_padding_dropout_embedding(py::module_& f) {
  // ---- padding, dropout, embedding, attention ----
  f.def(
      "pad",
      [](const Tensor& input, py::handle pads, const std::string& mode, std::optional<double> value) {
        GRAFT_CHECK(mode == "constant", NotImplementedError, "pad: mode='", mode,
                    "' is not supported by graft (only mode='constant')");
        return pad(input, int_or_tuple(pads, "pad", "pad"), value.value_or(0.0));
      },
      py::arg("input"), py::arg("pad"), py::arg("mode") = "constant", py::arg("value") = py::none());
  f.def(
      "dropout",
      [](py::handle input_obj, double p, bool training, bool inplace) -> py::object {
        GRAFT_CHECK(!(p < 0.0 || p > 1.0), ValueError, "dropout probability has to be between 0 and 1, but got ",
                    py::repr(py::float_(p)).cast<std::string>());
        Tensor input = py::cast<Tensor>(input_obj);
        Tensor r = dropout(input, p, training);
        if (!inplace) return py::cast(r);
        if (!r.is_same(input)) input.copy_(r);
        return py::reinterpret_borrow<py::object>(input_obj);
      },
      py::arg("input"), py::arg("p") = 0.5, py::arg("training") = true, py::arg("inplace") = false);
  f.def(
      "embedding",
      [](const Tensor& input, const Tensor& weight, std::optional<int64_t> padding_idx, py::handle max_norm,
         double /*norm_type*/, bool scale_grad_by_freq, bool sparse) {
        GRAFT_CHECK(max_norm.is_none(), NotImplementedError, "embedding: max_norm is not supported by graft");
        GRAFT_CHECK(!sparse, NotImplementedError, "embedding: sparse gradients are not supported by graft");
        GRAFT_CHECK(input.dtype() == kInt64 || input.dtype() == kInt32, RuntimeError,
                    "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; "
                    "but got graft.",
                    legacy_type_name(input.dtype()), " instead (while checking arguments for embedding)");
        if (padding_idx) {
          const int64_t n = weight.dim() > 0 ? weight.size(0) : 0;
          if (*padding_idx >= n || *padding_idx < -n) {
            PyErr_SetString(PyExc_AssertionError, "Padding_idx must be within num_embeddings");
            throw py::error_already_set();
          }
          if (*padding_idx < 0) padding_idx = *padding_idx + n;
        }
        return embedding(weight, input, padding_idx, scale_grad_by_freq);
      },
      py::arg("input"), py::arg("weight"), py::arg("padding_idx") = py::none(), py::arg("max_norm") = py::none(),
      py::arg("norm_type") = 2.0, py::arg("scale_grad_by_freq") = false, py::arg("sparse") = false);
  f.def(
      "scaled_dot_product_attention",
      [](const Tensor& q, const Tensor& k, const Tensor& v, const std::optional<Tensor>& attn_mask, double dropout_p,
         bool is_causal, std::optional<double> scale) {
        Tensor m = opt(attn_mask);
        GRAFT_CHECK(!(is_causal && m.defined()), RuntimeError,
                    "_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True");
        return maybe_without_gil(heavy({&q, &k, &v}),
                                 [&] { return scaled_dot_product_attention(q, k, v, m, dropout_p, is_causal, scale); });
      },
      py::arg("query"), py::arg("key"), py::arg("value"), py::arg("attn_mask") = py::none(), py::arg("dropout_p") = 0.0,
      py::arg("is_causal") = false, py::kw_only(), py::arg("scale") = py::none());
}

/// batch_norm, layer_norm, group_norm and normalize.
void bind_normalization(py::module_& f) {
  // ---- normalization ----
  f.def(
      "batch_norm",
      [](const Tensor& input, const std::optional<Tensor>& running_mean, const std::optional<Tensor>& running_var,
         const std::optional<Tensor>& weight, const std::optional<Tensor>& bias, bool training, double momentum,
         double eps) {
        GRAFT_CHECK(training || running_mean, RuntimeError, "running_mean must be defined in evaluation mode");
        GRAFT_CHECK(training || running_var, RuntimeError, "running_var must be defined in evaluation mode");
        if (training) {  // PyTorch's _verify_batch_size: the batch times the spatial sizes (not numel / C)
          int64_t per_channel = input.dim() >= 1 ? input.size(0) : 1;
          for (int64_t d = 2; d < input.dim(); ++d) per_channel *= input.size(d);
          GRAFT_CHECK(per_channel != 1, ValueError,
                      "Expected more than 1 value per channel when training, got input size ", size_repr(input));
        }
        return batch_norm(input, opt(running_mean), opt(running_var), opt(weight), opt(bias), training, momentum, eps);
      },
      py::arg("input"), py::arg("running_mean"), py::arg("running_var"), py::arg("weight") = py::none(),
      py::arg("bias") = py::none(), py::arg("training") = false, py::arg("momentum") = 0.1, py::arg("eps") = 1e-5);
  f.def(
      "group_norm",
      [](const Tensor& input, int64_t num_groups, const std::optional<Tensor>& weight,
         const std::optional<Tensor>& bias, double eps) {
        // torch.nn.functional.group_norm's _verify_batch_size over [N * C / G, G, *spatial]
        if (input.dim() >= 2 && num_groups > 0) {
          int64_t n = input.size(0) * (input.size(1) / num_groups);
          for (int64_t d = 2; d < input.dim(); ++d) n *= input.size(d);
          std::vector<int64_t> shape{input.size(0) * (input.size(1) / num_groups), num_groups};
          for (int64_t d = 2; d < input.dim(); ++d) shape.push_back(input.size(d));
          GRAFT_CHECK(n != 1, ValueError, "Expected more than 1 value per channel when training, got input size ",
                      IntArrayRef(shape));
        }
        return group_norm(input, num_groups, opt(weight), opt(bias), eps);
      },
      py::arg("input"), py::arg("num_groups"), py::arg("weight") = py::none(), py::arg("bias") = py::none(),
      py::arg("eps") = 1e-5);
}

/// The losses, with PyTorch's reduction strings and legacy arguments.
void bind_losses(py::module_& f) {
  // ---- losses ----
  f.def(
      "nll_loss",
      [](const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight, py::handle size_average,
         int64_t ignore_index, py::handle reduce, const std::string& reduction) {
        GRAFT_CHECK(target.dtype() == kInt64, RuntimeError, "expected scalar type Long but found ",
                    scalar_type_name(target.dtype()));
        return nll_loss(input, target, opt(weight), legacy_reduction(size_average, reduce, reduction), ignore_index);
      },
      py::arg("input"), py::arg("target"), py::arg("weight") = py::none(), py::arg("size_average") = py::none(),
      py::arg("ignore_index") = -100, py::arg("reduce") = py::none(), py::arg("reduction") = "mean");
}

/// linear, bilinear and the activations with a C++ kernel.
void bind_dense_and_activations(py::module_& f) {
  // ---- dense layers and activations with a C++ kernel ----
  f.def(
      "gelu",
      [](const Tensor& input, const std::string& approximate) {
        GRAFT_CHECK(approximate == "none" || approximate == "tanh", RuntimeError,
                    "approximate argument must be either none or tanh.");
        return gelu(input, approximate);
      },
      py::arg("input"), py::kw_only(), py::arg("approximate") = "none");
}

}  // namespace

void init_functions_part(py::module_& f) {
  bind_convolution(f);
  bind_pooling(f);
  bind_padding_dropout_embedding(f);
  bind_normalization(f);
  bind_losses(f);
  bind_dense_and_activations(f);
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
          check_no_generator(generator, name);
          return init(t, x, y);
        },
        py::arg("tensor"), py::arg(first) = 0.0, py::arg(second) = 1.0, py::arg("generator") = py::none());
  i.def(
      "trunc_normal_",
      [](const Tensor& t, double mean, double std, double a, double b, py::handle generator) {
        check_no_generator(generator, "trunc_normal_");
        return nn::init::trunc_normal_(t, mean, std, a, b);
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
          check_no_generator(generator, name);
          return init(t, gain);
        },
        py::arg("tensor"), py::arg("gain") = 1.0, py::arg("generator") = py::none());
  // kaiming_uniform_ and kaiming_normal_: the same arguments and checks
  for (auto [name, init] : {std::pair{"kaiming_uniform_", &nn::init::kaiming_uniform_},
                            std::pair{"kaiming_normal_", &nn::init::kaiming_normal_}})
    i.def(
        name,
        [name, init](const Tensor& t, double a, const std::string& mode, const std::string& nonlinearity,
                     py::handle generator) {
          check_no_generator(generator, name);
          check_fan_mode(mode);
          if (t.numel() == 0 && PyErr_WarnEx(PyExc_UserWarning, "Initializing zero-element tensors is a no-op", 1) < 0)
            throw py::error_already_set();
          return init(t, a, mode, nonlinearity);
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
  init_functions_part(nn);
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
