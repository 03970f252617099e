// Sequential, ModuleList, ModuleDict.
#include "graft/nn/modules/container.h"

namespace graft::nn {

Tensor SequentialImpl::forward(const Tensor& input) {
  GRAFT_CHECK(!calls_.empty(), ValueError, "Cannot call forward() on an empty Sequential");
  Tensor x = input;
  for (auto& call : calls_) x = call(x);
  return x;
}
std::shared_ptr<Module> SequentialImpl::operator[](size_t index) const {
  GRAFT_CHECK(index < modules_.size(), IndexError, "Index ", index, " is out of range (Sequential has ",
              modules_.size(), " modules)");
  return modules_[index];
}
std::shared_ptr<Module> ModuleListImpl::operator[](size_t index) const {
  GRAFT_CHECK(index < modules_.size(), IndexError, "Index ", index, " is out of range (ModuleList has ",
              modules_.size(), " modules)");
  return modules_[index];
}
std::shared_ptr<Module> ModuleDictImpl::operator[](const std::string& key) const {
  auto kids = named_children();
  const auto* m = kids.find(key);
  GRAFT_CHECK(m != nullptr, KeyError, "ModuleDict has no module named '", key, "'");
  return *m;
}

}  // namespace graft::nn
