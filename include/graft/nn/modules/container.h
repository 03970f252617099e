#pragma once
/// Containers: Sequential (calls its modules in order), ModuleList and ModuleDict (hold
/// submodules so their parameters are registered), and Functional (a function as a module).
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "graft/nn/module.h"

namespace graft::nn {

/// Wraps a Tensor -> Tensor function as a module (libtorch's Functional).
class FunctionalImpl : public Module {
 public:
  explicit FunctionalImpl(std::function<Tensor(const Tensor&)> fn) : Module("Functional"), fn_(std::move(fn)) {}
  Tensor forward(const Tensor& input) { return fn_(input); }

 private:
  std::function<Tensor(const Tensor&)> fn_;
};
GRAFT_MODULE(Functional);

namespace detail {
/// The shared Impl behind a holder, a shared_ptr, or a function wrapped in Functional.
template <class M>
auto as_module(M&& m) {
  using D = std::decay_t<M>;
  if constexpr (requires { m.ptr(); }) {
    return m.ptr();
  } else if constexpr (requires { std::shared_ptr<Module>(m); }) {
    return D(m);
  } else {
    static_assert(std::is_invocable_r_v<Tensor, D, const Tensor&>,
                  "Sequential accepts modules (holders or shared_ptr) or Tensor(const Tensor&) functions");
    return std::make_shared<FunctionalImpl>(std::function<Tensor(const Tensor&)>(std::forward<M>(m)));
  }
}
}  // namespace detail

/// Calls each module's forward(Tensor) in order; modules are named "0", "1", ... unless named.
class SequentialImpl : public Module {
 public:
  SequentialImpl() : Module("Sequential") {}
  template <class... Ms>
  requires(sizeof...(Ms) > 0) explicit SequentialImpl(Ms&&... modules) : Module("Sequential") {
    (push_back(std::forward<Ms>(modules)), ...);
  }
  template <class M>
  void push_back(M&& module) {
    push_back(std::to_string(modules_.size()), std::forward<M>(module));
  }
  template <class M>
  void push_back(std::string name, M&& module) {
    auto impl = detail::as_module(std::forward<M>(module));
    using Impl = typename decltype(impl)::element_type;
    static_assert(std::is_invocable_r_v<Tensor, decltype(&Impl::forward), Impl&, const Tensor&>,
                  "a Sequential module needs Tensor forward(const Tensor&)");
    register_module(name, impl);
    modules_.push_back(impl);
    calls_.push_back([p = impl.get()](const Tensor& x) { return p->forward(x); });
  }
  /// Runs the modules in order.
  Tensor forward(const Tensor& input);
  size_t size() const { return modules_.size(); }
  bool is_empty() const { return modules_.empty(); }
  std::shared_ptr<Module> operator[](size_t index) const;
  /// The module at `index` as its concrete type (nullptr if it is another type).
  template <class T>
  std::shared_ptr<T> ptr(size_t index) const {
    return std::dynamic_pointer_cast<T>((*this)[index]);
  }

 private:
  std::vector<std::shared_ptr<Module>> modules_;
  std::vector<std::function<Tensor(const Tensor&)>> calls_;
};
GRAFT_MODULE(Sequential);

/// A list of submodules, registered as "0", "1", ...; forward is up to the owner.
class ModuleListImpl : public Module {
 public:
  ModuleListImpl() : Module("ModuleList") {}
  template <class M>
  void push_back(M&& module) {
    auto impl = detail::as_module(std::forward<M>(module));
    register_module(std::to_string(modules_.size()), impl);
    modules_.push_back(impl);
  }
  size_t size() const { return modules_.size(); }
  std::shared_ptr<Module> operator[](size_t index) const;
  template <class T>
  std::shared_ptr<T> ptr(size_t index) const {
    return std::dynamic_pointer_cast<T>((*this)[index]);
  }
  auto begin() const { return modules_.begin(); }
  auto end() const { return modules_.end(); }

 private:
  std::vector<std::shared_ptr<Module>> modules_;
};
GRAFT_MODULE(ModuleList);

/// Named submodules in insertion order.
class ModuleDictImpl : public Module {
 public:
  ModuleDictImpl() : Module("ModuleDict") {}
  template <class M>
  void insert(std::string key, M&& module) {
    register_module(std::move(key), detail::as_module(std::forward<M>(module)));
  }
  size_t size() const { return named_children().size(); }
  bool contains(const std::string& key) const { return named_children().contains(key); }
  std::shared_ptr<Module> operator[](const std::string& key) const;
  template <class T>
  std::shared_ptr<T> ptr(const std::string& key) const {
    return std::dynamic_pointer_cast<T>((*this)[key]);
  }
  std::vector<std::string> keys() const { return named_children().keys(); }
};
GRAFT_MODULE(ModuleDict);

}  // namespace graft::nn
