// RNN, LSTM, GRU and the cells: PyTorch's parameter names, shapes and init bounds; forward
// values against a hand-worked case and a scalar double-precision reference written from
// the PyTorch formulas (multi-layer, bidirectional, projections); batch_first / unbatched
// consistency; dropout between layers; gradcheck / gradgradcheck; PyTorch's error texts.
#include <cmath>
#include <map>
#include <sstream>

#include "support/test_util.h"

namespace graft {
namespace {

using testing::expect_tensor;
using testing::values;
using Vec = std::vector<double>;

// ---- helpers ----

// Deterministic, distinct, small parameter values.
void fill_params(nn::Module& m, double scale = 0.5) {
  NoGradGuard ng;
  int64_t idx = 0;
  for (auto& it : m.named_parameters()) {
    Tensor p = it.value();
    Vec v(static_cast<size_t>(p.numel()));
    for (size_t k = 0; k < v.size(); ++k) v[k] = scale * std::sin(1.7 * static_cast<double>(k) + 0.9 * idx + 0.3);
    p.copy_(tensor(v, TensorOptions(p.dtype())).reshape(p.sizes()));
    ++idx;
  }
}

Tensor seq(std::vector<int64_t> sizes, double phase, DType dtype = kFloat32) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  Vec v(static_cast<size_t>(n));
  for (size_t k = 0; k < v.size(); ++k) v[k] = 0.9 * std::sin(0.37 * static_cast<double>(k) + phase);
  return tensor(v, TensorOptions(dtype)).reshape(sizes);
}

std::map<std::string, Vec> param_values(const nn::Module& m) {
  std::map<std::string, Vec> out;
  for (const auto& it : m.named_parameters()) out[it.key()] = values(it.value());
  return out;
}

void copy_params(const nn::Module& from, nn::Module& to) { to.load_state_dict(from.state_dict()); }

// ---- the reference: scalar loops in double, from the PyTorch docs' formulas ----

struct RefConfig {
  std::string mode;  // "tanh", "relu", "lstm", "gru"
  int64_t in, H, layers = 1, D = 1, proj = 0;
  bool bias = true;
  bool zero_between_layers = false;  // what dropout(p=1) does to every layer's output but the last
};
struct RefResult {
  Vec out, hn, cn;  // out [L, N, D*H_out], hn [layers*D, N, H_out], cn [layers*D, N, H]
};

double sig(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// y = W x + b for W [rows, cols] (b may be null).
Vec affine(const Vec& W, const Vec* b, int64_t cols, const Vec& x) {
  const int64_t rows = static_cast<int64_t>(W.size()) / cols;
  Vec y(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) {
    double s = b ? (*b)[r] : 0.0;
    for (int64_t c = 0; c < cols; ++c) s += W[r * cols + c] * x[c];
    y[r] = s;
  }
  return y;
}

// x [L, N, in] seq-first; h0 [layers*D, N, H_out] and c0 [layers*D, N, H], empty = zeros.
RefResult ref_rnn(const RefConfig& c, const std::map<std::string, Vec>& P, const Vec& x, int64_t L, int64_t N,
                  const Vec& h0 = {}, const Vec& c0 = {}) {
  const int64_t H = c.H, Hout = c.proj > 0 ? c.proj : c.H;
  RefResult r;
  r.hn.assign(c.layers * c.D * N * Hout, 0.0);
  r.cn.assign(c.layers * c.D * N * H, 0.0);
  std::vector<Vec> layer_in(L * N);
  for (int64_t i = 0; i < L * N; ++i) layer_in[i] = Vec(x.begin() + i * c.in, x.begin() + (i + 1) * c.in);
  for (int64_t layer = 0; layer < c.layers; ++layer) {
    const int64_t in_dim = layer == 0 ? c.in : c.D * Hout;
    std::vector<Vec> layer_out(L * N, Vec(c.D * Hout));
    for (int64_t d = 0; d < c.D; ++d) {
      const std::string sfx = "_l" + std::to_string(layer) + (d ? "_reverse" : "");
      const Vec &Wih = P.at("weight_ih" + sfx), &Whh = P.at("weight_hh" + sfx);
      const Vec* bih = c.bias ? &P.at("bias_ih" + sfx) : nullptr;
      const Vec* bhh = c.bias ? &P.at("bias_hh" + sfx) : nullptr;
      const int64_t idx = layer * c.D + d;
      for (int64_t n = 0; n < N; ++n) {
        Vec h(Hout, 0.0), cell(H, 0.0);
        if (!h0.empty()) h.assign(h0.begin() + (idx * N + n) * Hout, h0.begin() + (idx * N + n + 1) * Hout);
        if (!c0.empty()) cell.assign(c0.begin() + (idx * N + n) * H, c0.begin() + (idx * N + n + 1) * H);
        for (int64_t s = 0; s < L; ++s) {
          const int64_t t = d == 0 ? s : L - 1 - s;
          const Vec gi = affine(Wih, bih, in_dim, layer_in[t * N + n]);
          const Vec gh = affine(Whh, bhh, Hout, h);
          if (c.mode == "tanh" || c.mode == "relu") {
            for (int64_t j = 0; j < H; ++j) {
              const double a = gi[j] + gh[j];
              h[j] = c.mode == "tanh" ? std::tanh(a) : std::max(a, 0.0);
            }
          } else if (c.mode == "lstm") {
            Vec hh(H);
            for (int64_t j = 0; j < H; ++j) {
              const double i = sig(gi[j] + gh[j]), f = sig(gi[H + j] + gh[H + j]);
              const double g = std::tanh(gi[2 * H + j] + gh[2 * H + j]), o = sig(gi[3 * H + j] + gh[3 * H + j]);
              cell[j] = f * cell[j] + i * g;
              hh[j] = o * std::tanh(cell[j]);
            }
            h = c.proj > 0 ? affine(P.at("weight_hr" + sfx), nullptr, H, hh) : hh;
          } else {  // gru
            for (int64_t j = 0; j < H; ++j) {
              const double rr = sig(gi[j] + gh[j]), z = sig(gi[H + j] + gh[H + j]);
              const double nn = std::tanh(gi[2 * H + j] + rr * gh[2 * H + j]);
              h[j] = (1.0 - z) * nn + z * h[j];
            }
          }
          for (int64_t j = 0; j < Hout; ++j) layer_out[t * N + n][d * Hout + j] = h[j];
        }
        for (int64_t j = 0; j < Hout; ++j) r.hn[(idx * N + n) * Hout + j] = h[j];
        for (int64_t j = 0; j < H; ++j) r.cn[(idx * N + n) * H + j] = cell[j];
      }
    }
    if (c.zero_between_layers && layer + 1 < c.layers)
      for (auto& v : layer_out) std::fill(v.begin(), v.end(), 0.0);
    layer_in = layer_out;
  }
  for (const auto& v : layer_in) r.out.insert(r.out.end(), v.begin(), v.end());
  return r;
}

// ---- parameters ----

std::vector<std::pair<std::string, std::vector<int64_t>>> names_and_shapes(const nn::Module& m) {
  std::vector<std::pair<std::string, std::vector<int64_t>>> out;
  for (const auto& it : m.named_parameters()) out.push_back({it.key(), it.value().sizes().vec()});
  return out;
}
using NS = std::vector<std::pair<std::string, std::vector<int64_t>>>;

TEST(RNNParameters, NamesAndShapesAsPyTorch) {
  nn::RNN rnn(nn::RNNOptions(3, 4).num_layers(2));
  EXPECT_EQ(names_and_shapes(*rnn), (NS{{"weight_ih_l0", {4, 3}},
                                        {"weight_hh_l0", {4, 4}},
                                        {"bias_ih_l0", {4}},
                                        {"bias_hh_l0", {4}},
                                        {"weight_ih_l1", {4, 4}},
                                        {"weight_hh_l1", {4, 4}},
                                        {"bias_ih_l1", {4}},
                                        {"bias_hh_l1", {4}}}));
  nn::LSTM lstm(3, 5);
  EXPECT_EQ(names_and_shapes(*lstm),
            (NS{{"weight_ih_l0", {20, 3}}, {"weight_hh_l0", {20, 5}}, {"bias_ih_l0", {20}}, {"bias_hh_l0", {20}}}));
  nn::GRU gru(nn::GRUOptions(3, 5).num_layers(2).bidirectional(true));
  EXPECT_EQ(names_and_shapes(*gru), (NS{{"weight_ih_l0", {15, 3}},
                                        {"weight_hh_l0", {15, 5}},
                                        {"bias_ih_l0", {15}},
                                        {"bias_hh_l0", {15}},
                                        {"weight_ih_l0_reverse", {15, 3}},
                                        {"weight_hh_l0_reverse", {15, 5}},
                                        {"bias_ih_l0_reverse", {15}},
                                        {"bias_hh_l0_reverse", {15}},
                                        {"weight_ih_l1", {15, 10}},
                                        {"weight_hh_l1", {15, 5}},
                                        {"bias_ih_l1", {15}},
                                        {"bias_hh_l1", {15}},
                                        {"weight_ih_l1_reverse", {15, 10}},
                                        {"weight_hh_l1_reverse", {15, 5}},
                                        {"bias_ih_l1_reverse", {15}},
                                        {"bias_hh_l1_reverse", {15}}}));
  nn::LSTM nobias(nn::LSTMOptions(2, 3).bias(false));
  EXPECT_EQ(names_and_shapes(*nobias), (NS{{"weight_ih_l0", {12, 2}}, {"weight_hh_l0", {12, 3}}}));
  nn::LSTM proj(nn::LSTMOptions(2, 5).proj_size(3).num_layers(2).bidirectional(true));
  EXPECT_EQ(names_and_shapes(*proj), (NS{{"weight_ih_l0", {20, 2}},
                                         {"weight_hh_l0", {20, 3}},
                                         {"bias_ih_l0", {20}},
                                         {"bias_hh_l0", {20}},
                                         {"weight_hr_l0", {3, 5}},
                                         {"weight_ih_l0_reverse", {20, 2}},
                                         {"weight_hh_l0_reverse", {20, 3}},
                                         {"bias_ih_l0_reverse", {20}},
                                         {"bias_hh_l0_reverse", {20}},
                                         {"weight_hr_l0_reverse", {3, 5}},
                                         {"weight_ih_l1", {20, 6}},
                                         {"weight_hh_l1", {20, 3}},
                                         {"bias_ih_l1", {20}},
                                         {"bias_hh_l1", {20}},
                                         {"weight_hr_l1", {3, 5}},
                                         {"weight_ih_l1_reverse", {20, 6}},
                                         {"weight_hh_l1_reverse", {20, 3}},
                                         {"bias_ih_l1_reverse", {20}},
                                         {"bias_hh_l1_reverse", {20}},
                                         {"weight_hr_l1_reverse", {3, 5}}}));
  // flat_weights_names / all_weights follow the same order
  EXPECT_EQ(proj->flat_weights_names().size(), 20u);
  EXPECT_EQ(proj->flat_weights_names()[4], "weight_hr_l0");
  EXPECT_TRUE(proj->all_weights()[4].is_same(proj->named_parameters()["weight_hr_l0"]));
  for (const auto& p : proj->parameters()) EXPECT_TRUE(p.requires_grad());
}

TEST(RNNParameters, CellNamesAndShapes) {
  EXPECT_EQ(names_and_shapes(*nn::RNNCell(3, 4)),
            (NS{{"weight_ih", {4, 3}}, {"weight_hh", {4, 4}}, {"bias_ih", {4}}, {"bias_hh", {4}}}));
  EXPECT_EQ(names_and_shapes(*nn::LSTMCell(3, 4)),
            (NS{{"weight_ih", {16, 3}}, {"weight_hh", {16, 4}}, {"bias_ih", {16}}, {"bias_hh", {16}}}));
  EXPECT_EQ(names_and_shapes(*nn::GRUCell(nn::GRUCellOptions(3, 4).bias(false))),
            (NS{{"weight_ih", {12, 3}}, {"weight_hh", {12, 4}}}));
}

// U(-1/sqrt(H), 1/sqrt(H)) for every parameter, biases included; the draws spread over the range.
void expect_uniform_init(const nn::Module& m, double bound) {
  for (const auto& it : m.named_parameters()) {
    auto v = values(it.value());
    double lo = 1e9, hi = -1e9;
    for (double x : v) lo = std::min(lo, x), hi = std::max(hi, x);
    EXPECT_GE(lo, -bound) << it.key();
    EXPECT_LE(hi, bound) << it.key();
    if (v.size() >= 64) {  // enough draws to reach the outer quarters of the range
      EXPECT_LT(lo, -0.5 * bound) << it.key();
      EXPECT_GT(hi, 0.5 * bound) << it.key();
    }
  }
}

TEST(RNNParameters, InitBounds) {
  manual_seed(0);
  expect_uniform_init(*nn::RNN(nn::RNNOptions(8, 16).num_layers(2)), 0.25);
  expect_uniform_init(*nn::LSTM(nn::LSTMOptions(8, 64).proj_size(16)), 0.125);  // weight_hr too
  expect_uniform_init(*nn::GRU(20, 25), 0.2);
  expect_uniform_init(*nn::GRUCell(20, 25), 0.2);
  expect_uniform_init(*nn::LSTMCell(20, 16), 0.25);
  // reset_parameters redraws every parameter
  nn::LSTM lstm(4, 16);
  fill_params(*lstm, 3.0);
  lstm->reset_parameters();
  expect_uniform_init(*lstm, 0.25);
}

// ---- forward values ----

TEST(RNNForward, HandWorkedOneUnit) {
  // input_size = hidden_size = 1: h_t = act(0.5 x_t + 0.1 + (-0.3) h_{t-1} + 0.2), h_0 = 0.4
  for (const std::string act : {"tanh", "relu"}) {
    nn::RNN rnn(nn::RNNOptions(1, 1).nonlinearity(act));
    {
      NoGradGuard ng;
      auto p = rnn->named_parameters();
      p["weight_ih_l0"].fill_(0.5);
      p["bias_ih_l0"].fill_(0.1);
      p["weight_hh_l0"].fill_(-0.3);
      p["bias_hh_l0"].fill_(0.2);
    }
    auto f = [&](double a) { return act == "tanh" ? std::tanh(a) : std::max(a, 0.0); };
    const double x1 = 1.0, x2 = -2.0, x3 = 3.0;
    const double h1 = f(0.5 * x1 + 0.1 - 0.3 * 0.4 + 0.2);
    const double h2 = f(0.5 * x2 + 0.1 - 0.3 * h1 + 0.2);
    const double h3 = f(0.5 * x3 + 0.1 - 0.3 * h2 + 0.2);
    auto [out, hn] = rnn(tensor({x1, x2, x3}).reshape({3, 1, 1}), full({1, 1, 1}, 0.4));
    expect_tensor(out, {3, 1, 1}, {h1, h2, h3}, 1e-6);
    expect_tensor(hn, {1, 1, 1}, {h3}, 1e-6);
    if (act == "relu") {
      EXPECT_EQ(h2, 0.0);  // the relu branch really clips
    }
  }
}

TEST(RNNForward, HandWorkedLSTMAndGRUOneUnit) {
  // One unit, weights per gate: ih = (0.5, -0.4, 0.3, 0.2 | ...), hh = 0.1 each, biases 0.
  nn::LSTM lstm(1, 1);
  nn::GRU gru(1, 1);
  {
    NoGradGuard ng;
    auto lp = lstm->named_parameters();
    lp["weight_ih_l0"].copy_(tensor({0.5, -0.4, 0.3, 0.2}).reshape({4, 1}));
    lp["weight_hh_l0"].fill_(0.1);
    lp["bias_ih_l0"].zero_();
    lp["bias_hh_l0"].copy_(tensor({0.0, 1.0, 0.0, 0.0}));  // forget-gate bias 1
    auto gp = gru->named_parameters();
    gp["weight_ih_l0"].copy_(tensor({0.5, -0.4, 0.3}).reshape({3, 1}));
    gp["weight_hh_l0"].copy_(tensor({0.2, 0.1, -0.6}).reshape({3, 1}));
    gp["bias_ih_l0"].zero_();
    gp["bias_hh_l0"].copy_(tensor({0.0, 0.0, 0.25}));  // b_hn sits inside r * (...)
  }
  const double xs[3] = {1.0, 2.0, -1.0};
  double h = 0, c = 0;
  Vec lh;
  for (double x : xs) {
    const double i = sig(0.5 * x + 0.1 * h), f = sig(-0.4 * x + 0.1 * h + 1.0);
    const double g = std::tanh(0.3 * x + 0.1 * h), o = sig(0.2 * x + 0.1 * h);
    c = f * c + i * g;
    h = o * std::tanh(c);
    lh.push_back(h);
  }
  auto [out, state] = lstm(tensor({1.0, 2.0, -1.0}).reshape({3, 1, 1}));
  expect_tensor(out, {3, 1, 1}, lh, 1e-6);
  expect_tensor(std::get<0>(state), {1, 1, 1}, {h}, 1e-6);
  expect_tensor(std::get<1>(state), {1, 1, 1}, {c}, 1e-6);

  h = 0;
  Vec gh;
  for (double x : xs) {
    const double r = sig(0.5 * x + 0.2 * h), z = sig(-0.4 * x + 0.1 * h);
    const double n = std::tanh(0.3 * x + r * (-0.6 * h + 0.25));
    h = (1 - z) * n + z * h;
    gh.push_back(h);
  }
  auto [gout, ghn] = gru(tensor({1.0, 2.0, -1.0}).reshape({3, 1, 1}));
  expect_tensor(gout, {3, 1, 1}, gh, 1e-6);
  expect_tensor(ghn, {1, 1, 1}, {h}, 1e-6);
}

struct Case {
  std::string mode;
  int64_t layers, D, proj;
};

// Runs module `m` (already filled) and the reference on the same input and state.
void check_against_reference(nn::Module& m, const Case& cs, int64_t in, int64_t H, bool with_state) {
  const int64_t L = 3, N = 2, Hout = cs.proj ? cs.proj : H;
  Tensor x = seq({L, N, in}, 0.2);
  Tensor h0 = seq({cs.layers * cs.D, N, Hout}, 1.1), c0 = seq({cs.layers * cs.D, N, H}, 2.3);
  RefConfig rc{cs.mode, in, H, cs.layers, cs.D, cs.proj};
  RefResult ref = with_state ? ref_rnn(rc, param_values(m), values(x), L, N, values(h0), values(c0))
                             : ref_rnn(rc, param_values(m), values(x), L, N);
  Tensor out, hn, cn;
  if (auto* r = dynamic_cast<nn::RNNImpl*>(&m)) {
    std::tie(out, hn) = with_state ? r->forward(x, h0) : r->forward(x);
  } else if (auto* g = dynamic_cast<nn::GRUImpl*>(&m)) {
    std::tie(out, hn) = with_state ? g->forward(x, h0) : g->forward(x);
  } else {
    auto* l = dynamic_cast<nn::LSTMImpl*>(&m);
    std::tuple<Tensor, Tensor> st;
    std::tie(out, st) = with_state ? l->forward(x, std::make_tuple(h0, c0)) : l->forward(x);
    std::tie(hn, cn) = st;
  }
  expect_tensor(out, {L, N, cs.D * Hout}, ref.out, 1e-5);
  expect_tensor(hn, {cs.layers * cs.D, N, Hout}, ref.hn, 1e-5);
  if (cs.mode == "lstm") expect_tensor(cn, {cs.layers * cs.D, N, H}, ref.cn, 1e-5);
}

std::shared_ptr<nn::Module> make(const Case& cs, int64_t in, int64_t H) {
  if (cs.mode == "lstm")
    return nn::LSTM(nn::LSTMOptions(in, H).num_layers(cs.layers).bidirectional(cs.D == 2).proj_size(cs.proj)).ptr();
  if (cs.mode == "gru") return nn::GRU(nn::GRUOptions(in, H).num_layers(cs.layers).bidirectional(cs.D == 2)).ptr();
  return nn::RNN(nn::RNNOptions(in, H).nonlinearity(cs.mode).num_layers(cs.layers).bidirectional(cs.D == 2)).ptr();
}

TEST(RNNForward, MatchesReference) {
  const std::vector<Case> cases = {
      {"tanh", 1, 1, 0}, {"relu", 1, 1, 0}, {"lstm", 1, 1, 0}, {"gru", 1, 1, 0},  // one layer
      {"tanh", 2, 2, 0}, {"relu", 3, 1, 0}, {"lstm", 2, 2, 0}, {"gru", 2, 2, 0},  // stacked, bidirectional
      {"lstm", 2, 2, 2}, {"lstm", 1, 1, 2},                                       // projections
  };
  for (const auto& cs : cases) {
    for (bool with_state : {false, true}) {
      SCOPED_TRACE(cs.mode + " layers=" + std::to_string(cs.layers) + " D=" + std::to_string(cs.D) +
                   " proj=" + std::to_string(cs.proj) + (with_state ? " with h0" : " zero h0"));
      auto m = make(cs, 2, 3);
      fill_params(*m);
      check_against_reference(*m, cs, 2, 3, with_state);
    }
  }
}

TEST(RNNForward, NoBias) {
  nn::GRU gru(nn::GRUOptions(2, 3).bias(false).num_layers(2));
  fill_params(*gru);
  Tensor x = seq({4, 2, 2}, 0.5);
  RefConfig rc{"gru", 2, 3, 2};
  rc.bias = false;
  RefResult ref = ref_rnn(rc, param_values(*gru), values(x), 4, 2);
  auto [out, hn] = gru(x);
  expect_tensor(out, {4, 2, 3}, ref.out, 1e-5);
  expect_tensor(hn, {2, 2, 3}, ref.hn, 1e-5);
}

TEST(RNNForward, BatchFirstIsTransposedSeqFirst) {
  for (const Case& cs : {Case{"tanh", 2, 2, 0}, Case{"lstm", 2, 1, 0}, Case{"gru", 1, 2, 0}}) {
    SCOPED_TRACE(cs.mode);
    auto a = make(cs, 2, 3);
    fill_params(*a);
    Tensor x = seq({5, 3, 2}, 0.1);  // [L, N, in]
    Tensor h0 = seq({cs.layers * cs.D, 3, 3}, 0.7), c0 = seq({cs.layers * cs.D, 3, 3}, 0.9);
    Tensor out_sf, hn_sf, cn_sf, out_bf, hn_bf, cn_bf;
    if (cs.mode == "lstm") {
      nn::LSTM bf(nn::LSTMOptions(2, 3).num_layers(cs.layers).bidirectional(cs.D == 2).batch_first(true));
      copy_params(*a, *bf);
      std::tuple<Tensor, Tensor> s1, s2;
      std::tie(out_sf, s1) = std::dynamic_pointer_cast<nn::LSTMImpl>(a)->forward(x, std::make_tuple(h0, c0));
      std::tie(out_bf, s2) = bf(x.transpose(0, 1), std::make_tuple(h0, c0));
      std::tie(hn_sf, cn_sf) = s1;
      std::tie(hn_bf, cn_bf) = s2;
      EXPECT_TRUE(allclose(cn_bf, cn_sf, 0, 1e-6));
    } else if (cs.mode == "gru") {
      nn::GRU bf(nn::GRUOptions(2, 3).num_layers(cs.layers).bidirectional(cs.D == 2).batch_first(true));
      copy_params(*a, *bf);
      std::tie(out_sf, hn_sf) = std::dynamic_pointer_cast<nn::GRUImpl>(a)->forward(x, h0);
      std::tie(out_bf, hn_bf) = bf(x.transpose(0, 1), h0);
    } else {
      nn::RNN bf(nn::RNNOptions(2, 3).num_layers(cs.layers).bidirectional(cs.D == 2).batch_first(true));
      copy_params(*a, *bf);
      std::tie(out_sf, hn_sf) = std::dynamic_pointer_cast<nn::RNNImpl>(a)->forward(x, h0);
      std::tie(out_bf, hn_bf) = bf(x.transpose(0, 1), h0);
    }
    EXPECT_EQ(out_bf.sizes().vec(), (std::vector<int64_t>{3, 5, cs.D * 3}));
    EXPECT_TRUE(allclose(out_bf.transpose(0, 1), out_sf, 0, 1e-6));
    EXPECT_TRUE(allclose(hn_bf, hn_sf, 0, 1e-6));  // h_n is never batch-first
  }
}

TEST(RNNForward, UnbatchedIsBatchOfOne) {
  nn::LSTM lstm(nn::LSTMOptions(2, 3).num_layers(2).bidirectional(true));
  fill_params(*lstm);
  Tensor x = seq({4, 2}, 0.3), h0 = seq({4, 3}, 0.6), c0 = seq({4, 3}, 0.8);
  auto [out, st] = lstm(x, std::make_tuple(h0, c0));
  auto [out1, st1] = lstm(x.unsqueeze(1), std::make_tuple(h0.unsqueeze(1), c0.unsqueeze(1)));
  EXPECT_EQ(out.sizes().vec(), (std::vector<int64_t>{4, 6}));
  EXPECT_EQ(std::get<0>(st).sizes().vec(), (std::vector<int64_t>{4, 3}));
  EXPECT_TRUE(allclose(out, out1.squeeze(1)));
  EXPECT_TRUE(allclose(std::get<0>(st), std::get<0>(st1).squeeze(1)));
  EXPECT_TRUE(allclose(std::get<1>(st), std::get<1>(st1).squeeze(1)));
  // batch_first is ignored for unbatched input
  nn::RNN a(2, 3), b(nn::RNNOptions(2, 3).batch_first(true));
  fill_params(*a);
  copy_params(*a, *b);
  EXPECT_TRUE(allclose(std::get<0>(a(x)), std::get<0>(b(x))));
  EXPECT_EQ(std::get<1>(b(x)).sizes().vec(), (std::vector<int64_t>{1, 3}));
}

TEST(RNNForward, DropoutBetweenLayersOnlyInTraining) {
  nn::GRU drop(nn::GRUOptions(2, 3).num_layers(3).dropout(1.0));
  fill_params(*drop);
  Tensor x = seq({3, 2, 2}, 0.4);
  RefConfig rc{"gru", 2, 3, 3};
  // eval: no dropout at all
  drop->eval();
  RefResult plain = ref_rnn(rc, param_values(*drop), values(x), 3, 2);
  expect_tensor(std::get<0>(drop(x)), {3, 2, 3}, plain.out, 1e-5);
  // training with p = 1: every layer's output but the last is zeroed
  drop->train();
  rc.zero_between_layers = true;
  RefResult zeroed = ref_rnn(rc, param_values(*drop), values(x), 3, 2);
  auto [out, hn] = drop(x);
  expect_tensor(out, {3, 2, 3}, zeroed.out, 1e-5);
  expect_tensor(hn, {3, 2, 3}, zeroed.hn, 1e-5);  // h_n of inner layers is not dropped
  // p = 0.5 in training is random but leaves the last layer's own state undropped
  nn::LSTM half(nn::LSTMOptions(2, 3).num_layers(2).dropout(0.5));
  fill_params(*half);
  manual_seed(1);
  Tensor o1 = std::get<0>(half(x));
  half->eval();
  Tensor o2 = std::get<0>(half(x));
  EXPECT_FALSE(allclose(o1, o2));
}

TEST(RNNForward, DropoutWithOneLayerWarnsAsPyTorch) {
  testing::WarningCapture w;
  nn::RNN rnn(nn::RNNOptions(2, 3).dropout(0.5));
  ASSERT_EQ(w.messages().size(), 1u);
  EXPECT_EQ(w.messages()[0],
            "dropout option adds dropout after all but last recurrent layer, so non-zero dropout expects num_layers "
            "greater than 1, but got dropout=0.5 and num_layers=1");
  // ... and the single layer is not dropped in training
  fill_params(*rnn);
  Tensor x = seq({3, 2, 2}, 0.4);
  RefResult ref = ref_rnn(RefConfig{"tanh", 2, 3}, param_values(*rnn), values(x), 3, 2);
  expect_tensor(std::get<0>(rnn(x)), {3, 2, 3}, ref.out, 1e-5);
}

TEST(RNNForward, Float64AfterTo) {
  nn::LSTM lstm(nn::LSTMOptions(2, 3).num_layers(2));
  fill_params(*lstm);
  lstm->to(kFloat64);
  Tensor x = seq({3, 2, 2}, 0.2, kFloat64);
  RefResult ref = ref_rnn(RefConfig{"lstm", 2, 3, 2}, param_values(*lstm), values(x), 3, 2);
  auto [out, st] = lstm(x);
  EXPECT_EQ(out.dtype(), kFloat64);
  expect_tensor(out, {3, 2, 3}, ref.out, 1e-12);
  expect_tensor(std::get<1>(st), {2, 2, 3}, ref.cn, 1e-12);
}

// ---- cells ----

TEST(RNNCells, OneStepOfTheLayer) {
  Tensor x = seq({2, 3}, 0.2), h = seq({2, 4}, 0.9), c = seq({2, 4}, 1.9);
  for (const std::string act : {"tanh", "relu"}) {
    nn::RNNCell cell(nn::RNNCellOptions(3, 4).nonlinearity(act));
    fill_params(*cell);
    RefResult ref = ref_rnn(
        RefConfig{act, 3, 4},
        [&] {
          std::map<std::string, Vec> p;
          for (const auto& it : cell->named_parameters()) p[it.key() + "_l0"] = values(it.value());
          return p;
        }(),
        values(x), 1, 2, values(h));
    expect_tensor(cell(x, h), {2, 4}, ref.hn, 1e-6);
    expect_tensor(cell(x[1], h[1]), {4}, Vec(ref.hn.begin() + 4, ref.hn.end()), 1e-6);  // unbatched
  }
  auto as_layer = [](const nn::Module& cell) {
    std::map<std::string, Vec> p;
    for (const auto& it : cell.named_parameters()) p[it.key() + "_l0"] = values(it.value());
    return p;
  };
  nn::LSTMCell lc(3, 4);
  fill_params(*lc);
  RefResult lref = ref_rnn(RefConfig{"lstm", 3, 4}, as_layer(*lc), values(x), 1, 2, values(h), values(c));
  auto [h1, c1] = lc(x, std::make_tuple(h, c));
  expect_tensor(h1, {2, 4}, lref.hn, 1e-6);
  expect_tensor(c1, {2, 4}, lref.cn, 1e-6);
  RefResult lzero = ref_rnn(RefConfig{"lstm", 3, 4}, as_layer(*lc), values(x), 1, 2);
  expect_tensor(std::get<1>(lc(x)), {2, 4}, lzero.cn, 1e-6);  // zero state when none given
  auto [uh, uc] = lc(x[0], std::make_tuple(h[0], c[0]));
  expect_tensor(uc, {4}, Vec(lref.cn.begin(), lref.cn.begin() + 4), 1e-6);

  nn::GRUCell gc(3, 4);
  fill_params(*gc);
  RefResult gref = ref_rnn(RefConfig{"gru", 3, 4}, as_layer(*gc), values(x), 1, 2, values(h));
  expect_tensor(gc(x, h), {2, 4}, gref.hn, 1e-6);
  RefResult gzero = ref_rnn(RefConfig{"gru", 3, 4}, as_layer(*gc), values(x), 1, 2);
  expect_tensor(gc(x), {2, 4}, gzero.hn, 1e-6);
}

// ---- gradients ----

autograd::GradcheckOptions fast() {
  autograd::GradcheckOptions o;
  o.fast_mode = true;
  return o;
}

TEST(RNNGradients, GradcheckEveryInputAndParameter) {
  const std::vector<Case> cases = {{"tanh", 2, 2, 0}, {"lstm", 2, 2, 0}, {"gru", 2, 2, 0}, {"lstm", 1, 1, 1}};
  for (const auto& cs : cases) {
    SCOPED_TRACE(cs.mode + " proj=" + std::to_string(cs.proj));
    auto m = make(cs, 2, 2);
    m->to(kFloat64);
    const int64_t Hout = cs.proj ? cs.proj : 2;
    Tensor x = seq({3, 2, 2}, 0.2, kFloat64).requires_grad_();
    Tensor h0 = seq({cs.layers * cs.D, 2, Hout}, 1.0, kFloat64).requires_grad_();
    Tensor c0 = seq({cs.layers * cs.D, 2, 2}, 2.0, kFloat64).requires_grad_();
    TensorList inputs = {x, h0, c0};
    for (const auto& p : m->parameters()) inputs.push_back(p);  // perturbed in place by gradcheck
    auto fn = [&](const TensorList& in) -> TensorList {
      if (auto* l = dynamic_cast<nn::LSTMImpl*>(m.get())) {
        auto [out, st] = l->forward(in[0], std::make_tuple(in[1], in[2]));
        return {out, std::get<0>(st), std::get<1>(st)};
      }
      if (auto* g = dynamic_cast<nn::GRUImpl*>(m.get())) {
        auto [out, hn] = g->forward(in[0], in[1]);
        return {out, hn};
      }
      auto [out, hn] = dynamic_cast<nn::RNNImpl*>(m.get())->forward(in[0], in[1]);
      return {out, hn};
    };
    EXPECT_TRUE(autograd::gradcheck(fn, inputs));
  }
}

TEST(RNNGradients, DoubleBackward) {
  for (const std::string mode : {"lstm", "gru"}) {
    SCOPED_TRACE(mode);
    auto m = make(Case{mode, 1, 1, 0}, 2, 2);
    m->to(kFloat64);
    Tensor x = seq({2, 1, 2}, 0.2, kFloat64).requires_grad_();
    TensorList inputs = {x};
    for (const auto& p : m->parameters()) inputs.push_back(p);
    auto fn = [&](const TensorList& in) -> TensorList {
      if (auto* l = dynamic_cast<nn::LSTMImpl*>(m.get())) return {std::get<0>(l->forward(in[0]))};
      return {std::get<0>(dynamic_cast<nn::GRUImpl*>(m.get())->forward(in[0]))};
    };
    EXPECT_TRUE(autograd::gradgradcheck(fn, inputs, {}, fast()));
  }
}

TEST(RNNGradients, CellsGradcheck) {
  nn::LSTMCell lc(2, 3);
  nn::GRUCell gc(2, 3);
  nn::RNNCell rc(2, 3);
  lc->to(kFloat64);
  gc->to(kFloat64);
  rc->to(kFloat64);
  Tensor x = seq({2, 2}, 0.1, kFloat64).requires_grad_();
  Tensor h = seq({2, 3}, 0.5, kFloat64).requires_grad_();
  Tensor c = seq({2, 3}, 0.9, kFloat64).requires_grad_();
  TensorList in = {x, h, c};
  for (const auto& p : lc->parameters()) in.push_back(p);
  EXPECT_TRUE(autograd::gradcheck(
      [&](const TensorList& t) -> TensorList {
        auto [h1, c1] = lc(t[0], std::make_tuple(t[1], t[2]));
        return {h1, c1};
      },
      in));
  TensorList gin = {x, h};
  for (const auto& p : gc->parameters()) gin.push_back(p);
  EXPECT_TRUE(autograd::gradcheck([&](const TensorList& t) -> TensorList { return {gc(t[0], t[1])}; }, gin));
  TensorList rin = {x, h};
  for (const auto& p : rc->parameters()) rin.push_back(p);
  EXPECT_TRUE(autograd::gradcheck([&](const TensorList& t) -> TensorList { return {rc(t[0], t[1])}; }, rin));
}

TEST(RNNGradients, BackwardReachesEveryParameter) {
  nn::LSTM lstm(nn::LSTMOptions(2, 3).num_layers(2).bidirectional(true));
  auto [out, st] = lstm(seq({3, 2, 2}, 0.3));
  (out.sum() + std::get<1>(st).sum()).backward();
  for (const auto& it : lstm->named_parameters()) {
    ASSERT_TRUE(it.value().grad().defined()) << it.key();
    EXPECT_GT(values(it.value().grad().abs().sum())[0], 0.0) << it.key();
  }
}

// ---- errors and printing ----

TEST(RNNErrors, ConstructorMessages) {
  EXPECT_THROW_MSG(nn::RNN(nn::RNNOptions(2, 3).nonlinearity("sigmoid")), ValueError,
                   "Unknown nonlinearity 'sigmoid'. Select from 'tanh' or 'relu'.");
  EXPECT_THROW_MSG(nn::RNNCell(nn::RNNCellOptions(2, 3).nonlinearity("gelu")), ValueError,
                   "Unknown nonlinearity 'gelu'. Select from 'tanh' or 'relu'.");
  EXPECT_THROW_MSG(nn::GRU(nn::GRUOptions(2, 3).dropout(1.5)), ValueError,
                   "dropout should be a number in range [0, 1] representing the probability of an element being "
                   "zeroed");
  EXPECT_THROW_MSG(nn::LSTM(2, 0), ValueError, "hidden_size must be greater than zero");
  EXPECT_THROW_MSG(nn::GRU(nn::GRUOptions(2, 3).num_layers(0)), ValueError, "num_layers must be greater than zero");
  EXPECT_THROW_MSG(nn::LSTM(nn::LSTMOptions(2, 3).proj_size(3)), ValueError,
                   "proj_size has to be smaller than hidden_size");
  EXPECT_THROW_MSG(nn::LSTM(nn::LSTMOptions(2, 3).proj_size(-1)), ValueError,
                   "proj_size should be a positive integer or zero to disable projections");
}

TEST(RNNErrors, ForwardMessages) {
  nn::RNN rnn(3, 4);
  nn::LSTM lstm(3, 4);
  nn::GRU gru(nn::GRUOptions(3, 4).num_layers(2));
  EXPECT_THROW_MSG(rnn(zeros({2, 1, 1, 3})), ValueError, "RNN: Expected input to be 2D or 3D, got 4D tensor instead");
  EXPECT_THROW_MSG(lstm(zeros({3})), ValueError, "LSTM: Expected input to be 2D or 3D, got 1D instead");
  EXPECT_THROW_MSG(gru(zeros({3})), ValueError, "GRU: Expected input to be 2D or 3D, got 1D instead");
  EXPECT_THROW_MSG(rnn(zeros({5, 2, 4})), RuntimeError,
                   "input.size(-1) must be equal to input_size. Expected 3, got 4");
  EXPECT_THROW_MSG(rnn(zeros({5, 2, 3}, kFloat64)), ValueError,
                   "input must have the type torch.float32, got type torch.float64");
  EXPECT_THROW_MSG(rnn(zeros({5, 2, 3}), zeros({2, 4})), RuntimeError,
                   "For batched 3-D input, hx should also be 3-D but got 2-D tensor");
  EXPECT_THROW_MSG(gru(zeros({5, 3}), zeros({2, 1, 4})), RuntimeError,
                   "For unbatched 2-D input, hx should also be 2-D but got 3-D tensor");
  EXPECT_THROW_MSG(lstm(zeros({5, 2, 3}), std::make_tuple(zeros({1, 2, 4}), zeros({2, 4}))), RuntimeError,
                   "For batched 3-D input, hx and cx should also be 3-D but got (3-D, 2-D) tensors");
  EXPECT_THROW_MSG(lstm(zeros({5, 3}), std::make_tuple(zeros({1, 4}), zeros({1, 1, 4}))), RuntimeError,
                   "For unbatched 2-D input, hx and cx should also be 2-D but got (2-D, 3-D) tensors");
  EXPECT_THROW_MSG(gru(zeros({5, 2, 3}), zeros({2, 3, 4})), RuntimeError,
                   "Expected hidden size (2, 2, 4), got [2, 3, 4]");
  EXPECT_THROW_MSG(lstm(zeros({5, 2, 3}), std::make_tuple(zeros({1, 2, 5}), zeros({1, 2, 4}))), RuntimeError,
                   "Expected hidden[0] size (1, 2, 4), got [1, 2, 5]");
  EXPECT_THROW_MSG(lstm(zeros({5, 2, 3}), std::make_tuple(zeros({1, 2, 4}), zeros({2, 2, 4}))), RuntimeError,
                   "Expected hidden[1] size (1, 2, 4), got [2, 2, 4]");
  EXPECT_THROW_MSG(rnn(zeros({5, 2, 3}), zeros({1, 2, 4}, kFloat64)), RuntimeError,
                   "Input and hidden tensors are not the same dtype, found input tensor with Float and hidden tensor "
                   "with Double");
  EXPECT_THROW_MSG(rnn(zeros({0, 2, 3})), RuntimeError, "Expected sequence length to be larger than 0 in RNN");
  nn::LSTM proj(nn::LSTMOptions(3, 4).proj_size(2));
  EXPECT_THROW_MSG(proj(zeros({5, 2, 3}), std::make_tuple(zeros({1, 2, 4}), zeros({1, 2, 4}))), RuntimeError,
                   "Expected hidden[0] size (1, 2, 2), got [1, 2, 4]");
}

TEST(RNNErrors, CellMessages) {
  nn::RNNCell rc(3, 4);
  nn::LSTMCell lc(3, 4);
  nn::GRUCell gc(3, 4);
  EXPECT_THROW_MSG(rc(zeros({1, 2, 3})), ValueError, "RNNCell: Expected input to be 1D or 2D, got 3D instead");
  EXPECT_THROW_MSG(gc(zeros({2, 3}), zeros({1, 2, 4})), ValueError,
                   "GRUCell: Expected hidden to be 1D or 2D, got 3D instead");
  EXPECT_THROW_MSG(lc(zeros({2, 3}), std::make_tuple(zeros({2, 4}), zeros({1, 2, 4}))), ValueError,
                   "LSTMCell: Expected hx[1] to be 1D or 2D, got 3D instead");
  EXPECT_THROW_MSG(rc(zeros({2, 5})), RuntimeError, "input has inconsistent input_size: got 5 expected 3");
  EXPECT_THROW_MSG(gc(zeros({2, 3}), zeros({3, 4})), RuntimeError,
                   "Input batch size 2 doesn't match hidden0 batch size 3");
  EXPECT_THROW_MSG(rc(zeros({2, 3}), zeros({2, 5})), RuntimeError,
                   "hidden0 has inconsistent hidden_size: got 5, expected 4");
  EXPECT_THROW_MSG(lc(zeros({2, 3}), std::make_tuple(zeros({2, 4}), zeros({2, 5}))), RuntimeError,
                   "hidden1 has inconsistent hidden_size: got 5, expected 4");
  EXPECT_THROW_MSG(gc(zeros({2, 3}, kFloat64), zeros({2, 4}, kFloat64)), RuntimeError,
                   "mat1 and mat2 must have the same dtype, but got Double and Float");
}

TEST(RNNPrinting, PrettyPrint) {
  auto str = [](const nn::Module& m) {
    std::ostringstream os;
    m.pretty_print(os);
    return os.str();
  };
  EXPECT_EQ(str(*nn::LSTM(nn::LSTMOptions(10, 20).num_layers(2).batch_first(true))),
            "LSTM(input_size=10, hidden_size=20, num_layers=2, bias=true, batch_first=true, dropout=0, "
            "bidirectional=false)");
  EXPECT_EQ(str(*nn::RNN(nn::RNNOptions(3, 4).nonlinearity("relu"))),
            "RNN(input_size=3, hidden_size=4, num_layers=1, bias=true, batch_first=false, dropout=0, "
            "bidirectional=false, nonlinearity=relu)");
  EXPECT_EQ(str(*nn::GRUCell(nn::GRUCellOptions(3, 4).bias(false))), "GRUCell(3, 4, bias=false)");
  EXPECT_EQ(str(*nn::RNNCell(nn::RNNCellOptions(3, 4).nonlinearity("relu"))), "RNNCell(3, 4, nonlinearity=relu)");
}

}  // namespace
}  // namespace graft
