// A tiny regression trained with graft's autograd: fit y = 3x - 2 + noise with a 1-16-1 MLP,
// plain SGD written with in-place updates under NoGradGuard, as PyTorch users write it.
// Ends by printing the CPU caching allocator's memory summary of the run.
#include <cstdio>

#include <graft/graft.h>

int main() {
  using namespace graft;
  manual_seed(0);
  Tensor x = linspace(-1, 1, 64).reshape({64, 1});
  Tensor y = x * 3 - 2 + randn({64, 1}) * 0.05;

  Tensor w1 = (randn({16, 1}) * 0.5).requires_grad_();
  Tensor b1 = zeros({16}, requires_grad());
  Tensor w2 = (randn({1, 16}) * 0.25).requires_grad_();
  Tensor b2 = zeros({1}, requires_grad());
  std::vector<Tensor> params{w1, b1, w2, b2};

  const double lr = 0.1;
  double first = 0, last = 0;
  for (int step = 0; step <= 200; ++step) {
    Tensor h = tanh(linear(x, w1, b1));
    Tensor pred = linear(h, w2, b2);
    Tensor loss = (pred - y).pow(2).mean();
    loss.backward();
    {
      NoGradGuard no_grad;
      for (auto& p : params) {
        p.sub_(p.grad() * lr);
        p.mutable_grad() = Tensor();  // zero_grad(set_to_none=True)
      }
    }
    last = loss.item<double>();
    if (step == 0) first = last;
    if (step % 20 == 0) std::printf("step %3d  loss %.6f\n", step, last);
  }
  std::printf("loss fell from %.4f to %.4f\n", first, last);
  // what the run's memory looked like, as torch.cuda.memory_summary() shows it
  std::printf("\n%s", memory_summary().c_str());
  return last < first / 10 ? 0 : 1;
}
