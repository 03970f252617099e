// A downstream program built against an installed graft (find_package(graft CONFIG)).
#include <graft/graft.h>

#include <iostream>

int main() {
  graft::Tensor x = graft::tensor({1.0, 2.0}).requires_grad_();
  (x * x).sum().backward();
  const auto g = x.grad().to_vector<double>();
  const bool ok = g.size() == 2 && g[0] == 2.0 && g[1] == 4.0;
  std::cout << x.grad() << (ok ? " ok" : " WRONG") << "\n";
  return ok ? 0 : 1;
}
