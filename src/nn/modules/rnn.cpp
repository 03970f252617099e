// RNN, LSTM, GRU and their cells, written with graft's differentiable ops: the input
// projections of a whole layer are one linear() over [L, N, in], then each time step adds
// h W_hh^T + b_hh and applies the gates. The cells run the same step functions.
#include "graft/nn/modules/rnn.h"

#include <cmath>
#include <sstream>

#include "graft/autograd/autograd.h"
#include "graft/nn/init.h"
#include "graft/ops/nn_ops.h"

namespace graft::nn {

namespace {

using detail::RNNMode;

int64_t gate_count(RNNMode mode) {
  switch (mode) {
    case RNNMode::LSTM:
      return 4;
    case RNNMode::GRU:
      return 3;
    default:
      return 1;
  }
}

std::string tuple_str(IntArrayRef s) {  // Python's tuple repr: (1, 2, 3)
  std::ostringstream os;
  os << "(";
  for (size_t i = 0; i < s.size(); ++i) os << (i ? ", " : "") << s[i];
  os << (s.size() == 1 ? ",)" : ")");
  return os.str();
}

std::string list_str(IntArrayRef s) {  // Python's list repr: [1, 2, 3]
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < s.size(); ++i) os << (i ? ", " : "") << s[i];
  os << "]";
  return os.str();
}

Tensor find_param(const OrderedDict<std::string, Tensor>& params, const std::string& name) {
  const Tensor* t = params.find(name);
  return t ? *t : Tensor();
}

void check_dropout(double p, int64_t num_layers) {
  GRAFT_CHECK(p >= 0.0 && p <= 1.0, ValueError,
              "dropout should be a number in range [0, 1] representing the probability of an element being zeroed");
  if (p > 0.0 && num_layers == 1)
    autograd::warn(
        ::graft::detail::str("dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                             "expects num_layers greater than 1, but got dropout=",
                             p, " and num_layers=", num_layers));
}

RNNMode rnn_mode(const std::string& nonlinearity) {
  if (nonlinearity == "tanh") return RNNMode::RNN_TANH;
  if (nonlinearity == "relu") return RNNMode::RNN_RELU;
  throw ValueError(::graft::detail::str("Unknown nonlinearity '", nonlinearity, "'. Select from 'tanh' or 'relu'."));
}

}  // namespace

Tensor rnn_cell_step(const Tensor& gi, const Tensor& h, const Tensor& w_hh, const Tensor& b_hh, bool relu) {
  Tensor pre = gi + linear(h, w_hh, b_hh);
  return relu ? graft::relu(pre) : tanh(pre);
}

std::pair<Tensor, Tensor> lstm_cell_step(const Tensor& gi, const Tensor& h, const Tensor& c, const Tensor& w_hh,
                                         const Tensor& b_hh, const Tensor& w_hr) {
  std::vector<Tensor> g = (gi + linear(h, w_hh, b_hh)).chunk(4, -1);
  Tensor i = sigmoid(g[0]), f = sigmoid(g[1]), cand = tanh(g[2]), o = sigmoid(g[3]);
  Tensor c_next = f * c + i * cand;
  Tensor h_next = o * tanh(c_next);
  if (w_hr.defined()) h_next = linear(h_next, w_hr);
  return {h_next, c_next};
}

Tensor gru_cell_step(const Tensor& gi, const Tensor& h, const Tensor& w_hh, const Tensor& b_hh) {
  std::vector<Tensor> x = gi.chunk(3, -1);
  std::vector<Tensor> hh = linear(h, w_hh, b_hh).chunk(3, -1);
  Tensor r = sigmoid(x[0] + hh[0]);
  Tensor z = sigmoid(x[1] + hh[1]);
  Tensor n = tanh(x[2] + r * hh[2]);
  return (1.0 - z) * n + z * h;
}

// ---------------------------------------------------------------------------------------
// RNNImplBase

namespace detail {

RNNImplBase::RNNImplBase(std::string name, const RNNOptionsBase& o) : Module(std::move(name)), options_base(o) {
  check_dropout(o.dropout(), o.num_layers());
  GRAFT_CHECK(o.input_size() >= 0, ValueError, "input_size must be non-negative, got ", o.input_size());
  GRAFT_CHECK(o.hidden_size() > 0, ValueError, "hidden_size must be greater than zero");
  GRAFT_CHECK(o.num_layers() > 0, ValueError, "num_layers must be greater than zero");
  GRAFT_CHECK(o.proj_size() >= 0, ValueError, "proj_size should be a positive integer or zero to disable projections");
  GRAFT_CHECK(o.proj_size() < o.hidden_size(), ValueError, "proj_size has to be smaller than hidden_size");
  const int64_t D = o.bidirectional() ? 2 : 1;
  const int64_t G = gate_count(o.mode()) * o.hidden_size();
  const int64_t H_out = o.proj_size() > 0 ? o.proj_size() : o.hidden_size();
  for (int64_t layer = 0; layer < o.num_layers(); ++layer) {
    const int64_t in = layer == 0 ? o.input_size() : H_out * D;
    for (int64_t d = 0; d < D; ++d) {
      const std::string sfx = "_l" + std::to_string(layer) + (d == 1 ? "_reverse" : "");
      std::vector<std::pair<std::string, std::vector<int64_t>>> ps = {{"weight_ih" + sfx, {G, in}},
                                                                      {"weight_hh" + sfx, {G, H_out}}};
      if (o.bias()) {
        ps.push_back({"bias_ih" + sfx, {G}});
        ps.push_back({"bias_hh" + sfx, {G}});
      }
      if (o.proj_size() > 0) ps.push_back({"weight_hr" + sfx, {o.proj_size(), o.hidden_size()}});
      for (auto& [pname, shape] : ps) {
        register_parameter(pname, empty(IntArrayRef(shape)));
        flat_weights_names_.push_back(pname);
      }
    }
  }
  reset_parameters();
}

void RNNImplBase::reset_parameters() {
  const double bound = 1.0 / std::sqrt(static_cast<double>(options_base.hidden_size()));
  for (Tensor& p : all_weights()) init::uniform_(p, -bound, bound);
}

std::vector<Tensor> RNNImplBase::all_weights() const {
  auto params = named_parameters(/*recurse=*/false);
  std::vector<Tensor> out;
  for (const auto& n : flat_weights_names_) out.push_back(params[n]);
  return out;
}

void RNNImplBase::pretty_print(std::ostream& os) const {
  const auto& o = options_base;
  os << std::boolalpha << name() << "(input_size=" << o.input_size() << ", hidden_size=" << o.hidden_size()
     << ", num_layers=" << o.num_layers() << ", bias=" << o.bias() << ", batch_first=" << o.batch_first()
     << ", dropout=" << o.dropout() << ", bidirectional=" << o.bidirectional();
  if (o.proj_size() > 0) os << ", proj_size=" << o.proj_size();
  os << ")" << std::noboolalpha;
}

std::tuple<Tensor, Tensor, Tensor> RNNImplBase::run(const Tensor& input_in, bool has_state, const Tensor& h0_in,
                                                    const Tensor& c0_in) const {
  const auto& o = options_base;
  const RNNMode mode = o.mode();
  const bool lstm = mode == RNNMode::LSTM;
  const char* who = lstm ? "LSTM" : mode == RNNMode::GRU ? "GRU" : "RNN";

  // ---- PyTorch's checks, in its order ----
  GRAFT_CHECK(input_in.dim() == 2 || input_in.dim() == 3, ValueError, who, ": Expected input to be 2D or 3D, got ",
              input_in.dim(),
              mode == RNNMode::RNN_TANH || mode == RNNMode::RNN_RELU ? "D tensor instead" : "D instead");
  const bool batched = input_in.dim() == 3;
  const int64_t batch_dim = o.batch_first() ? 0 : 1;
  Tensor input = batched ? input_in : input_in.unsqueeze(batch_dim);
  Tensor h0 = h0_in, c0 = c0_in;
  if (has_state) {
    const int64_t want = batched ? 3 : 2;
    if (lstm) {
      GRAFT_CHECK(h0.dim() == want && c0.dim() == want, RuntimeError, "For ", batched ? "batched 3-D" : "unbatched 2-D",
                  " input, hx and cx should also be ", want, "-D but got (", h0.dim(), "-D, ", c0.dim(), "-D) tensors");
    } else {
      GRAFT_CHECK(h0.dim() == want, RuntimeError, "For ", batched ? "batched 3-D" : "unbatched 2-D",
                  " input, hx should also be ", want, "-D but got ", h0.dim(), "-D tensor");
    }
    if (!batched) {
      h0 = h0.unsqueeze(1);
      if (lstm) c0 = c0.unsqueeze(1);
    }
  }
  const auto params = named_parameters(/*recurse=*/false);
  const DType wdtype = params[flat_weights_names_[0]].dtype();
  GRAFT_CHECK(input.dtype() == wdtype, ValueError, "input must have the type torch.", dtype_name(wdtype),
              ", got type torch.", dtype_name(input.dtype()));
  GRAFT_CHECK(input.size(-1) == o.input_size(), RuntimeError, "input.size(-1) must be equal to input_size. Expected ",
              o.input_size(), ", got ", input.size(-1));
  const int64_t D = o.bidirectional() ? 2 : 1;
  const int64_t N = input.size(batch_dim);
  const int64_t H = o.hidden_size();
  const int64_t H_out = o.proj_size() > 0 ? o.proj_size() : H;
  const std::vector<int64_t> h_shape = {o.num_layers() * D, N, H_out};
  const std::vector<int64_t> c_shape = {o.num_layers() * D, N, H};
  if (has_state) {
    const char* hname = lstm ? "Expected hidden[0] size " : "Expected hidden size ";
    GRAFT_CHECK(h0.sizes().equals(IntArrayRef(h_shape)), RuntimeError, hname, tuple_str(h_shape), ", got ",
                list_str(h0.sizes()));
    if (lstm)
      GRAFT_CHECK(c0.sizes().equals(IntArrayRef(c_shape)), RuntimeError, "Expected hidden[1] size ", tuple_str(c_shape),
                  ", got ", list_str(c0.sizes()));
    for (const Tensor* s : {&h0, &c0})
      GRAFT_CHECK(!s->defined() || s->dtype() == input.dtype(), RuntimeError,
                  "Input and hidden tensors are not the same dtype, found input tensor with ",
                  scalar_type_name(input.dtype()), " and hidden tensor with ", scalar_type_name(s->dtype()));
  } else {
    h0 = zeros(IntArrayRef(h_shape), TensorOptions(input.dtype()).device(input.device()));
    if (lstm) c0 = zeros(IntArrayRef(c_shape), TensorOptions(input.dtype()).device(input.device()));
  }
  if (o.batch_first()) input = input.transpose(0, 1);
  const int64_t L = input.size(0);
  GRAFT_CHECK(L > 0, RuntimeError, "Expected sequence length to be larger than 0 in RNN");

  // ---- the layers ----
  Tensor layer_input = input;
  std::vector<Tensor> h_n, c_n;
  for (int64_t layer = 0; layer < o.num_layers(); ++layer) {
    std::vector<Tensor> outputs;  // one [L, N, H_out] per direction
    for (int64_t d = 0; d < D; ++d) {
      const std::string sfx = "_l" + std::to_string(layer) + (d == 1 ? "_reverse" : "");
      const Tensor w_ih = params["weight_ih" + sfx], w_hh = params["weight_hh" + sfx];
      const Tensor b_ih = find_param(params, "bias_ih" + sfx), b_hh = find_param(params, "bias_hh" + sfx);
      const Tensor w_hr = find_param(params, "weight_hr" + sfx);
      const Tensor gi = linear(layer_input, w_ih, b_ih);  // [L, N, G*H], all steps at once
      Tensor h = h0.select(0, layer * D + d);
      Tensor c = lstm ? c0.select(0, layer * D + d) : Tensor();
      std::vector<Tensor> steps(static_cast<size_t>(L));
      for (int64_t s = 0; s < L; ++s) {
        const int64_t t = d == 0 ? s : L - 1 - s;
        const Tensor x = gi.select(0, t);
        switch (mode) {
          case RNNMode::RNN_TANH:
            h = rnn_cell_step(x, h, w_hh, b_hh, false);
            break;
          case RNNMode::RNN_RELU:
            h = rnn_cell_step(x, h, w_hh, b_hh, true);
            break;
          case RNNMode::LSTM:
            std::tie(h, c) = lstm_cell_step(x, h, c, w_hh, b_hh, w_hr);
            break;
          case RNNMode::GRU:
            h = gru_cell_step(x, h, w_hh, b_hh);
            break;
        }
        steps[static_cast<size_t>(t)] = h;
      }
      outputs.push_back(stack(steps, 0));
      h_n.push_back(h);
      if (lstm) c_n.push_back(c);
    }
    layer_input = D == 1 ? outputs[0] : cat(outputs, 2);
    if (layer + 1 < o.num_layers() && o.dropout() > 0.0 && is_training())
      layer_input = graft::dropout(layer_input, o.dropout(), true);
  }

  Tensor output = o.batch_first() ? layer_input.transpose(0, 1) : layer_input;
  Tensor hn = stack(h_n, 0);
  Tensor cn = lstm ? stack(c_n, 0) : Tensor();
  if (!batched) {
    output = output.squeeze(batch_dim);
    hn = hn.squeeze(1);
    if (lstm) cn = cn.squeeze(1);
  }
  return {output, hn, cn};
}

}  // namespace detail

// ---------------------------------------------------------------------------------------
// RNN, LSTM, GRU

namespace {
/// The layer options of RNN, LSTM or GRU options `o` (their shared fields), running `mode`.
template <class Options>
detail::RNNOptionsBase base_options(RNNMode mode, const Options& o, int64_t proj_size = 0) {
  return detail::RNNOptionsBase(mode, o.input_size(), o.hidden_size())
      .num_layers(o.num_layers())
      .bias(o.bias())
      .batch_first(o.batch_first())
      .dropout(o.dropout())
      .bidirectional(o.bidirectional())
      .proj_size(proj_size);
}
}  // namespace

RNNImpl::RNNImpl(const RNNOptions& o)
    : detail::RNNImplBase("RNN", base_options(rnn_mode(o.nonlinearity()), o)), options(o) {}

std::tuple<Tensor, Tensor> RNNImpl::forward(const Tensor& input, const Tensor& hx) {
  auto [output, h_n, c_n] = run(input, hx.defined(), hx, Tensor());
  return {output, h_n};
}

void RNNImpl::pretty_print(std::ostream& os) const {
  std::ostringstream base;
  detail::RNNImplBase::pretty_print(base);
  std::string s = base.str();
  s.pop_back();  // the closing parenthesis
  os << s << ", nonlinearity=" << options.nonlinearity() << ")";
}

LSTMImpl::LSTMImpl(const LSTMOptions& o)
    : detail::RNNImplBase("LSTM", base_options(RNNMode::LSTM, o, o.proj_size())), options(o) {}

std::tuple<Tensor, std::tuple<Tensor, Tensor>> LSTMImpl::forward(const Tensor& input,
                                                                 const std::optional<std::tuple<Tensor, Tensor>>& hx) {
  Tensor h0, c0;
  if (hx) std::tie(h0, c0) = *hx;
  GRAFT_CHECK(!hx || (h0.defined() && c0.defined()), ValueError, "LSTM: hx must hold two defined tensors (h_0, c_0)");
  auto [output, h_n, c_n] = run(input, hx.has_value(), h0, c0);
  return {output, {h_n, c_n}};
}

GRUImpl::GRUImpl(const GRUOptions& o) : detail::RNNImplBase("GRU", base_options(RNNMode::GRU, o)), options(o) {}

std::tuple<Tensor, Tensor> GRUImpl::forward(const Tensor& input, const Tensor& hx) {
  auto [output, h_n, c_n] = run(input, hx.defined(), hx, Tensor());
  return {output, h_n};
}

// ---------------------------------------------------------------------------------------
// cells

namespace detail {

RNNCellImplBase::RNNCellImplBase(std::string name, int64_t in, int64_t hidden, bool with_bias, int64_t gates)
    : Module(std::move(name)), input_size(in), hidden_size(hidden), bias(with_bias) {
  GRAFT_CHECK(in >= 0 && hidden > 0, ValueError, this->name(),
              ": input_size must be non-negative and hidden_size positive, got ", in, " and ", hidden);
  weight_ih = register_parameter("weight_ih", empty({gates * hidden, in}));
  weight_hh = register_parameter("weight_hh", empty({gates * hidden, hidden}));
  if (with_bias) {
    bias_ih = register_parameter("bias_ih", empty({gates * hidden}));
    bias_hh = register_parameter("bias_hh", empty({gates * hidden}));
  }
  reset_parameters();
}

void RNNCellImplBase::reset_parameters() {
  const double bound = 1.0 / std::sqrt(static_cast<double>(hidden_size));
  for (Tensor& p : parameters(/*recurse=*/false)) init::uniform_(p, -bound, bound);
}

void RNNCellImplBase::pretty_print(std::ostream& os) const {
  os << name() << "(" << input_size << ", " << hidden_size;
  if (!bias) os << ", bias=false";
  os << ")";
}

RNNCellImplBase::Step RNNCellImplBase::prepare(const Tensor& input, const std::vector<Tensor>& hidden) const {
  const auto params = named_parameters(/*recurse=*/false);
  const Tensor w_ih = params["weight_ih"];
  GRAFT_CHECK(input.size(1) == input_size, RuntimeError, "input has inconsistent input_size: got ", input.size(1),
              " expected ", input_size);
  for (size_t i = 0; i < hidden.size(); ++i) {
    const Tensor& h = hidden[i];
    GRAFT_CHECK(input.size(0) == h.size(0), RuntimeError, "Input batch size ", input.size(0), " doesn't match hidden",
                i, " batch size ", h.size(0));
    GRAFT_CHECK(h.size(1) == hidden_size, RuntimeError, "hidden", i, " has inconsistent hidden_size: got ", h.size(1),
                ", expected ", hidden_size);
    GRAFT_CHECK(h.dtype() == input.dtype(), RuntimeError,
                "Input and hidden tensors are not the same dtype, found input tensor with ",
                scalar_type_name(input.dtype()), " and hidden tensor with ", scalar_type_name(h.dtype()));
  }
  GRAFT_CHECK(input.dtype() == w_ih.dtype(), RuntimeError, "mat1 and mat2 must have the same dtype, but got ",
              scalar_type_name(input.dtype()), " and ", scalar_type_name(w_ih.dtype()));
  return {linear(input, w_ih, find_param(params, "bias_ih")), params["weight_hh"], find_param(params, "bias_hh")};
}

}  // namespace detail

namespace {
// Checks a cell's input and hidden dims (PyTorch's messages) and adds the batch dim to
// unbatched ones; `hidden` entries may be undefined (zeros are made for them).
bool batch_cell_args(const char* who, Tensor& input, std::vector<Tensor>& hidden, int64_t hidden_size, bool lstm) {
  GRAFT_CHECK(input.dim() == 1 || input.dim() == 2, ValueError, who, ": Expected input to be 1D or 2D, got ",
              input.dim(), "D instead");
  for (size_t i = 0; i < hidden.size(); ++i) {
    const Tensor& h = hidden[i];
    if (!h.defined()) continue;
    if (lstm)
      GRAFT_CHECK(h.dim() == 1 || h.dim() == 2, ValueError, who, ": Expected hx[", i, "] to be 1D or 2D, got ", h.dim(),
                  "D instead");
    else
      GRAFT_CHECK(h.dim() == 1 || h.dim() == 2, ValueError, who, ": Expected hidden to be 1D or 2D, got ", h.dim(),
                  "D instead");
  }
  const bool batched = input.dim() == 2;
  if (!batched) input = input.unsqueeze(0);
  for (Tensor& h : hidden) {
    if (!h.defined())
      h = zeros({input.size(0), hidden_size}, TensorOptions(input.dtype()).device(input.device()));
    else if (!batched)
      h = h.unsqueeze(0);
  }
  return batched;
}
}  // namespace

RNNCellImpl::RNNCellImpl(const RNNCellOptions& o)
    : detail::RNNCellImplBase("RNNCell", o.input_size(), o.hidden_size(), o.bias(), 1), options(o) {
  rnn_mode(o.nonlinearity());  // validates
}

Tensor RNNCellImpl::forward(const Tensor& input, const Tensor& hx) {
  Tensor x = input;
  std::vector<Tensor> hidden = {hx};
  const bool batched = batch_cell_args("RNNCell", x, hidden, hidden_size, false);
  const Step s = prepare(x, hidden);
  Tensor h = rnn_cell_step(s.gi, hidden[0], s.w_hh, s.b_hh, options.nonlinearity() == "relu");
  return batched ? h : h.squeeze(0);
}

void RNNCellImpl::pretty_print(std::ostream& os) const {
  os << "RNNCell(" << input_size << ", " << hidden_size;
  if (!bias) os << ", bias=false";
  if (options.nonlinearity() != "tanh") os << ", nonlinearity=" << options.nonlinearity();
  os << ")";
}

LSTMCellImpl::LSTMCellImpl(const LSTMCellOptions& o)
    : detail::RNNCellImplBase("LSTMCell", o.input_size(), o.hidden_size(), o.bias(), 4), options(o) {}

std::tuple<Tensor, Tensor> LSTMCellImpl::forward(const Tensor& input,
                                                 const std::optional<std::tuple<Tensor, Tensor>>& hx) {
  Tensor x = input;
  std::vector<Tensor> hidden(2);
  if (hx) {
    hidden = {std::get<0>(*hx), std::get<1>(*hx)};
    GRAFT_CHECK(hidden[0].defined() && hidden[1].defined(), ValueError,
                "LSTMCell: hx must hold two defined tensors (h, c)");
  }
  const bool batched = batch_cell_args("LSTMCell", x, hidden, hidden_size, true);
  const Step s = prepare(x, hidden);
  auto [h, c] = lstm_cell_step(s.gi, hidden[0], hidden[1], s.w_hh, s.b_hh);
  if (!batched) return {h.squeeze(0), c.squeeze(0)};
  return {h, c};
}

GRUCellImpl::GRUCellImpl(const GRUCellOptions& o)
    : detail::RNNCellImplBase("GRUCell", o.input_size(), o.hidden_size(), o.bias(), 3), options(o) {}

Tensor GRUCellImpl::forward(const Tensor& input, const Tensor& hx) {
  Tensor x = input;
  std::vector<Tensor> hidden = {hx};
  const bool batched = batch_cell_args("GRUCell", x, hidden, hidden_size, false);
  const Step s = prepare(x, hidden);
  Tensor h = gru_cell_step(s.gi, hidden[0], s.w_hh, s.b_hh);
  return batched ? h : h.squeeze(0);
}

}  // namespace graft::nn
