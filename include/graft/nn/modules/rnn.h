#pragma once
/// Recurrent layers with PyTorch's parameters and formulas: RNN (tanh or relu), LSTM and GRU
/// over whole sequences (multi-layer, optionally bidirectional, dropout between layers), and
/// the one-step cells RNNCell, LSTMCell and GRUCell. All are written with graft's
/// differentiable ops, so backward and double backward work.
///
/// Shapes (L sequence length, N batch, D = 2 if bidirectional else 1, H hidden_size,
/// H_out = proj_size if set (LSTM) else hidden_size):
///   input  [L, N, input_size] ([N, L, input_size] with batch_first, or unbatched [L, input_size])
///   h_0    [D * num_layers, N, H_out] (unbatched: [D * num_layers, H_out]); zeros when not given
///   c_0    [D * num_layers, N, H] (LSTM only)
///   output [L, N, D * H_out] (batch_first respected), h_n like h_0, c_n like c_0.
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "graft/nn/module.h"
#include "graft/nn/options.h"

namespace graft::nn {

// ---- one time step of each recurrence, PyTorch's formulas ----
// gi is the input projection x W_ih^T + b_ih (the layers compute it for a whole sequence at
// once); b_hh may be undefined (bias=False). The modules here and the Python package's
// (graft.nn.RNN, LSTM, GRU and their cells) all step through these.

/// h' = act(gi + h W_hh^T + b_hh), act tanh or relu.
Tensor rnn_cell_step(const Tensor& gi, const Tensor& h, const Tensor& w_hh, const Tensor& b_hh, bool relu);
/// (h', c'): i, f, g, o = chunks of gi + h W_hh^T + b_hh; c' = sigmoid(f) c + sigmoid(i) tanh(g);
/// h' = sigmoid(o) tanh(c'), then h' W_hr^T when w_hr is defined (proj_size).
std::pair<Tensor, Tensor> lstm_cell_step(const Tensor& gi, const Tensor& h, const Tensor& c, const Tensor& w_hh,
                                         const Tensor& b_hh, const Tensor& w_hr = Tensor());
/// r, z = sigmoid(gi_r + gh_r), sigmoid(gi_z + gh_z) with gh = h W_hh^T + b_hh;
/// n = tanh(gi_n + r gh_n); h' = (1 - z) n + z h.
Tensor gru_cell_step(const Tensor& gi, const Tensor& h, const Tensor& w_hh, const Tensor& b_hh);

/// The chainable options every recurrent layer has, with the (input_size, hidden_size)
/// constructor: num_layers, bias, batch_first, dropout (on the outputs of every layer but the
/// last, in training mode only) and bidirectional, with PyTorch's defaults.
#define GRAFT_RECURRENT_OPTIONS(Options)                                                                   \
  Options(int64_t input_size, int64_t hidden_size) : input_size_(input_size), hidden_size_(hidden_size) {} \
  GRAFT_ARG(int64_t, input_size);                                                                          \
  GRAFT_ARG(int64_t, hidden_size);                                                                         \
  GRAFT_ARG(int64_t, num_layers) = 1;                                                                      \
  GRAFT_ARG(bool, bias) = true;                                                                            \
  GRAFT_ARG(bool, batch_first) = false;                                                                    \
  GRAFT_ARG(double, dropout) = 0.0;                                                                        \
  GRAFT_ARG(bool, bidirectional) = false

/// Options for RNN (libtorch's RNNOptions). nonlinearity is "tanh" or "relu".
struct RNNOptions {
  GRAFT_RECURRENT_OPTIONS(RNNOptions);
  GRAFT_ARG(std::string, nonlinearity) = "tanh";
};

/// Options for LSTM (libtorch's LSTMOptions). proj_size > 0 adds weight_hr_l{k} [proj_size,
/// hidden_size] and makes h (not c) proj_size wide, as PyTorch's LSTM with projections.
struct LSTMOptions {
  GRAFT_RECURRENT_OPTIONS(LSTMOptions);
  GRAFT_ARG(int64_t, proj_size) = 0;
};

/// Options for GRU (libtorch's GRUOptions).
struct GRUOptions {
  GRAFT_RECURRENT_OPTIONS(GRUOptions);
};

namespace detail {

/// The recurrence a layer runs (PyTorch's mode strings).
enum class RNNMode { RNN_TANH, RNN_RELU, LSTM, GRU };

/// The options RNN, LSTM and GRU share (libtorch's detail::RNNOptionsBase).
struct RNNOptionsBase {
  RNNOptionsBase(RNNMode mode, int64_t input_size, int64_t hidden_size) : RNNOptionsBase(input_size, hidden_size) {
    mode_ = mode;
  }
  GRAFT_RECURRENT_OPTIONS(RNNOptionsBase);
  GRAFT_ARG(RNNMode, mode) = RNNMode::RNN_TANH;
  GRAFT_ARG(int64_t, proj_size) = 0;
};

/// The two constructors of a recurrent module, (input_size, hidden_size) and (options), and
/// its `options` member.
#define GRAFT_RECURRENT_CONSTRUCTORS(Impl, Options)                                         \
  Impl(int64_t input_size, int64_t hidden_size) : Impl(Options(input_size, hidden_size)) {} \
  explicit Impl(const Options& options);                                                    \
  Options options

/// Parameters, validation and the layer loop shared by RNN, LSTM and GRU. Per layer k and
/// direction (suffix "" or "_reverse") it registers, in PyTorch's order, weight_ih_l{k}
/// [G*H, in_k], weight_hh_l{k} [G*H, H_out], bias_ih_l{k} [G*H], bias_hh_l{k} [G*H] (and
/// weight_hr_l{k} [proj_size, H] for a projected LSTM), with G = 1 (RNN), 4 (LSTM: gates
/// i, f, g, o) or 3 (GRU: r, z, n) and in_k = input_size for k = 0, else D * H_out.
class RNNImplBase : public Module {
 public:
  RNNImplBase(std::string name, const RNNOptionsBase& options);
  /// Every parameter ~ U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)), as PyTorch.
  void reset_parameters();
  /// The parameters in flat_weights_names() order (the module's current tensors).
  std::vector<Tensor> all_weights() const;
  /// Parameter names in PyTorch's _flat_weights_names order.
  const std::vector<std::string>& flat_weights_names() const { return flat_weights_names_; }
  void pretty_print(std::ostream& os) const override;
  RNNOptionsBase options_base;

 protected:
  /// Validates input and the initial state with PyTorch's checks and messages, runs every
  /// layer, and returns (output, h_n, c_n) with c_n undefined unless LSTM. `has_state`:
  /// whether the caller gave h_0 (and c_0).
  std::tuple<Tensor, Tensor, Tensor> run(const Tensor& input, bool has_state, const Tensor& h0, const Tensor& c0) const;

 private:
  std::vector<std::string> flat_weights_names_;
};

}  // namespace detail

/// Elman RNN: h_t = act(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh), act tanh or relu.
class RNNImpl : public detail::RNNImplBase {
 public:
  GRAFT_RECURRENT_CONSTRUCTORS(RNNImpl, RNNOptions);
  /// Returns (output, h_n); hx is h_0 (zeros when undefined).
  std::tuple<Tensor, Tensor> forward(const Tensor& input, const Tensor& hx = Tensor());
  void pretty_print(std::ostream& os) const override;
};
GRAFT_MODULE(RNN);

/// LSTM: i, f, o = sigmoid(.), g = tanh(.) of x W_i*^T + b_i* + h W_h*^T + b_h*;
/// c' = f * c + i * g; h' = o * tanh(c') (then h' W_hr^T with proj_size).
class LSTMImpl : public detail::RNNImplBase {
 public:
  GRAFT_RECURRENT_CONSTRUCTORS(LSTMImpl, LSTMOptions);
  /// Returns (output, (h_n, c_n)); hx is (h_0, c_0) (zeros when not given), as libtorch.
  std::tuple<Tensor, std::tuple<Tensor, Tensor>> forward(
      const Tensor& input, const std::optional<std::tuple<Tensor, Tensor>>& hx = std::nullopt);
};
GRAFT_MODULE(LSTM);

/// GRU: r, z = sigmoid(x W_i*^T + b_i* + h W_h*^T + b_h*);
/// n = tanh(x W_in^T + b_in + r * (h W_hn^T + b_hn)); h' = (1 - z) * n + z * h.
class GRUImpl : public detail::RNNImplBase {
 public:
  GRAFT_RECURRENT_CONSTRUCTORS(GRUImpl, GRUOptions);
  /// Returns (output, h_n); hx is h_0 (zeros when undefined).
  std::tuple<Tensor, Tensor> forward(const Tensor& input, const Tensor& hx = Tensor());
};
GRAFT_MODULE(GRU);

// ---- cells: one time step ----

/// Options for RNNCell (libtorch's RNNCellOptions); nonlinearity "tanh" or "relu".
struct RNNCellOptions {
  RNNCellOptions(int64_t input_size, int64_t hidden_size) : input_size_(input_size), hidden_size_(hidden_size) {}
  GRAFT_ARG(int64_t, input_size);
  GRAFT_ARG(int64_t, hidden_size);
  GRAFT_ARG(bool, bias) = true;
  GRAFT_ARG(std::string, nonlinearity) = "tanh";
};

/// Options for LSTMCell and GRUCell.
struct LSTMCellOptions {
  LSTMCellOptions(int64_t input_size, int64_t hidden_size) : input_size_(input_size), hidden_size_(hidden_size) {}
  GRAFT_ARG(int64_t, input_size);
  GRAFT_ARG(int64_t, hidden_size);
  GRAFT_ARG(bool, bias) = true;
};
using GRUCellOptions = LSTMCellOptions;

namespace detail {
/// Parameters of a cell: weight_ih [G*H, input_size], weight_hh [G*H, H], bias_ih [G*H],
/// bias_hh [G*H], all ~ U(-1/sqrt(H), 1/sqrt(H)).
class RNNCellImplBase : public Module {
 public:
  RNNCellImplBase(std::string name, int64_t input_size, int64_t hidden_size, bool bias, int64_t gates);
  void reset_parameters();
  void pretty_print(std::ostream& os) const override;
  int64_t input_size, hidden_size;
  bool bias;
  /// Handles to the registered tensors (as libtorch's members); Module::to() converts in
  /// place, so they stay current.
  Tensor weight_ih, weight_hh, bias_ih, bias_hh;

 protected:
  /// x W_ih^T + b_ih and the current weight_hh / bias_hh, after PyTorch's checks of input and
  /// hidden sizes. `input` is 2-D, each of `hidden` 2-D.
  struct Step {
    Tensor gi, w_hh, b_hh;
  };
  Step prepare(const Tensor& input, const std::vector<Tensor>& hidden) const;
};
}  // namespace detail

/// One step of RNN: h' = act(x W_ih^T + b_ih + h W_hh^T + b_hh).
class RNNCellImpl : public detail::RNNCellImplBase {
 public:
  GRAFT_RECURRENT_CONSTRUCTORS(RNNCellImpl, RNNCellOptions);
  /// input [N, input_size] or [input_size]; hx [N, H] or [H] (zeros when undefined).
  Tensor forward(const Tensor& input, const Tensor& hx = Tensor());
  void pretty_print(std::ostream& os) const override;
};
GRAFT_MODULE(RNNCell);

/// One step of LSTM; returns (h', c').
class LSTMCellImpl : public detail::RNNCellImplBase {
 public:
  GRAFT_RECURRENT_CONSTRUCTORS(LSTMCellImpl, LSTMCellOptions);
  std::tuple<Tensor, Tensor> forward(const Tensor& input,
                                     const std::optional<std::tuple<Tensor, Tensor>>& hx = std::nullopt);
};
GRAFT_MODULE(LSTMCell);

/// One step of GRU.
class GRUCellImpl : public detail::RNNCellImplBase {
 public:
  GRAFT_RECURRENT_CONSTRUCTORS(GRUCellImpl, GRUCellOptions);
  Tensor forward(const Tensor& input, const Tensor& hx = Tensor());
};
GRAFT_MODULE(GRUCell);

}  // namespace graft::nn
