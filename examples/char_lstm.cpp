// A character-level LSTM on Shakespeare's Sonnets (data/sonnets, public domain), trained with
// truncated backpropagation through time: the text is read as 16 parallel streams, each step
// trains on the next 32 characters of every stream, and the hidden state is carried across
// steps but detached at every step boundary, so each backward stops at the segment start.
// Live memory is printed as training goes and must stay flat: it is checked at the end.
//
// For contrast it first runs a few steps the leaky way, carrying the hidden state without
// detaching and calling backward(retain_graph=true) as the error message suggests: every step
// then keeps the previous steps' graphs alive and live memory grows.
//
//   ./build/examples/char_lstm [path/to/sonnets.txt] [steps]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>

#include "graft/graft.h"
#include "graft/nn/utils/clip_grad.h"
#include "graft/optim/optim.h"

using namespace graft;

namespace {

struct CharModelImpl : nn::Module {
  CharModelImpl(int64_t vocab, int64_t embed, int64_t hidden) : Module("CharModel") {
    emb = register_module("emb", nn::Embedding(vocab, embed));
    lstm = register_module("lstm", nn::LSTM(embed, hidden));
    head = register_module("head", nn::Linear(hidden, vocab));
  }
  /// x [T, B] character ids, state (h, c) -> logits [T, B, V] and the new state.
  std::pair<Tensor, std::tuple<Tensor, Tensor>> forward(const Tensor& x, const std::tuple<Tensor, Tensor>& state) {
    auto [out, new_state] = lstm->forward(emb->forward(x), state);
    return {head->forward(out), new_state};
  }
  nn::Embedding emb{nullptr};
  nn::LSTM lstm{nullptr};
  nn::Linear head{nullptr};
};
GRAFT_MODULE(CharModel);

std::string mib(int64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : "data/sonnets/sonnets.txt";
  const int steps = argc > 2 ? std::atoi(argv[2]) : 500;
  if (steps < 3) {
    std::fprintf(stderr, "steps must be at least 3 (memory is compared from step 3 on)\n");
    return 2;
  }
  std::ifstream in(path);
  if (!in) {
    std::fprintf(stderr, "cannot open %s (run from the repository root or pass the path)\n", path.c_str());
    return 2;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  std::string chars = text;
  std::sort(chars.begin(), chars.end());
  chars.erase(std::unique(chars.begin(), chars.end()), chars.end());
  std::map<char, int64_t> id;
  for (size_t i = 0; i < chars.size(); ++i) id[chars[i]] = static_cast<int64_t>(i);
  const auto V = static_cast<int64_t>(chars.size());

  // 16 parallel streams over the text: data[t, b] = text[b * stream_len + t].
  const int64_t B = 16, T = 32, H = 128;
  const auto stream_len = static_cast<int64_t>(text.size()) / B;
  std::vector<int64_t> ids(static_cast<size_t>(stream_len * B));
  for (int64_t t = 0; t < stream_len; ++t)
    for (int64_t b = 0; b < B; ++b)
      ids[static_cast<size_t>(t * B + b)] = id[text[static_cast<size_t>(b * stream_len + t)]];
  Tensor data = tensor(ids).view({stream_len, B});
  std::printf("sonnets: %zu characters, vocabulary %lld, %lld streams of %lld\n", text.size(),
              static_cast<long long>(V), static_cast<long long>(B), static_cast<long long>(stream_len));

  manual_seed(0);
  CharModel model(V, 32, H);
  optim::Adam opt(model->parameters(), optim::AdamOptions(3e-3));
  auto zero_state = [&] { return std::tuple<Tensor, Tensor>{zeros({1, B, H}), zeros({1, B, H})}; };
  auto batch_at = [&](int64_t pos) {
    return std::pair<Tensor, Tensor>{data.narrow(0, pos, T), data.narrow(0, pos + 1, T)};
  };
  auto step_loss = [&](const Tensor& x, const Tensor& y, std::tuple<Tensor, Tensor>& state) {
    auto [logits, next] = model->forward(x, state);
    state = next;
    return cross_entropy(logits.reshape({-1, V}), y.reshape({-1}));
  };

  // ---- the leak, for contrast: no detach, retain_graph=true ----
  {
    std::printf("\nwithout detaching the hidden state (backward with retain_graph=true):\n");
    auto state = zero_state();
    for (int64_t s = 0; s < 5; ++s) {
      auto [x, y] = batch_at(s * T);
      Tensor loss = step_loss(x, y, state);
      opt.zero_grad();
      loss.backward(Tensor(), true);
      std::printf("  step %lld  live %s\n", static_cast<long long>(s + 1), mib(memory_allocated()).c_str());
    }
    std::printf("  -> every step keeps all earlier steps' graphs alive through the hidden state\n");
  }  // the state (and with it every graph) is released here

  // ---- truncated BPTT: detach at every step boundary ----
  std::printf("\ntruncated BPTT over %lld characters per step (state detached each step):\n",
              static_cast<long long>(T));
  reset_peak_memory_stats();  // the peak from here on is the steady state's
  auto state = zero_state();
  int64_t pos = 0;
  int64_t flat_min = INT64_MAX, flat_max = 0;
  double smooth = std::log(static_cast<double>(V));
  for (int s = 1; s <= steps; ++s) {
    if (pos + T + 1 > stream_len) {
      pos = 0;
      state = zero_state();
    }
    auto [x, y] = batch_at(pos);
    pos += T;
    state = {std::get<0>(state).detach(), std::get<1>(state).detach()};
    Tensor loss = step_loss(x, y, state);
    opt.zero_grad();
    loss.backward();
    nn::utils::clip_grad_norm_(model->parameters(), 1.0);
    opt.step();
    smooth = 0.95 * smooth + 0.05 * loss.item<float>();
    const int64_t live = memory_allocated();
    if (s > 2) {  // after the optimizer state exists
      flat_min = std::min(flat_min, live);
      flat_max = std::max(flat_max, live);
    }
    if (s % 25 == 0 || s == 1)
      std::printf("  step %4d  loss %.3f  live %s  peak %s\n", s, smooth, mib(live).c_str(),
                  mib(max_memory_allocated()).c_str());
  }
  std::printf("live memory over steps 3..%d: min %s, max %s\n", steps, mib(flat_min).c_str(), mib(flat_max).c_str());

  // ---- sample 240 characters ----
  {
    NoGradGuard ng;
    model->eval();
    std::mt19937 gen(7);
    auto st = std::tuple<Tensor, Tensor>{zeros({1, 1, H}), zeros({1, 1, H})};
    int64_t c = id.at(text[0]);  // start from the text's first character
    std::string out(1, text[0]);
    for (int i = 0; i < 240; ++i) {
      auto [logits, next] = model->forward(tensor(std::vector<int64_t>{c}).view({1, 1}), st);
      st = next;
      std::vector<double> p = softmax(logits.reshape({V}) / 0.8, 0).to_vector<double>();
      c = std::discrete_distribution<int64_t>(p.begin(), p.end())(gen);
      out += chars[static_cast<size_t>(c)];
    }
    std::printf("\nsample:\n%s\n", out.c_str());
  }
  if (flat_max != flat_min) {
    std::fprintf(stderr, "live memory was not flat across steps (%lld bytes apart)\n",
                 static_cast<long long>(flat_max - flat_min));
    return 1;
  }
  return 0;
}
