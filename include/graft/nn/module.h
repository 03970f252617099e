#pragma once
/// nn::Module: the base of every layer, as libtorch's torch::nn::Module. A module owns named
/// parameters (tensors that require grad), buffers (state such as running statistics) and
/// submodules; it walks them recursively for parameters(), state_dict(), train()/eval(),
/// zero_grad() and to(). Parameters and buffers are tagged MemoryCategory::Parameter in the
/// allocator. Layers are written as `XImpl : Module` and used through a ModuleHolder `X`
/// (GRAFT_MODULE), so `nn::Linear lin(4, 3); lin->forward(x)` reads as in libtorch.
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <type_traits>
#include <unordered_set>
#include <vector>

#include "graft/core/ordered_dict.h"
#include "graft/core/tensor.h"

namespace graft::nn {

/// Keys load_state_dict(strict=false) did not match (PyTorch's _IncompatibleKeys).
struct IncompatibleKeys {
  std::vector<std::string> missing_keys;
  std::vector<std::string> unexpected_keys;
};

class Module : public std::enable_shared_from_this<Module> {
 public:
  /// `name` is the type name shown by pretty_print and in errors ("Linear").
  explicit Module(std::string name = "Module");
  virtual ~Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  const std::string& name() const { return name_; }

  // ---- registration ----
  /// Adds a parameter (requires_grad set as given; undefined tensors are allowed, as
  /// PyTorch's None parameters, and skipped by parameters()). Returns the stored handle.
  Tensor& register_parameter(std::string name, Tensor tensor, bool requires_grad = true);
  /// Adds a buffer; non-persistent buffers are left out of state_dict().
  Tensor& register_buffer(std::string name, Tensor tensor, bool persistent = true);
  /// Adds a submodule; its parameters appear as "<name>.<param>".
  template <class M>
  std::shared_ptr<M> register_module(std::string name, std::shared_ptr<M> module) {
    register_module_impl(std::move(name), module);
    return module;
  }
  /// Same for a ModuleHolder (nn::Linear, nn::Conv2d, ...): returns the holder.
  template <class Holder>
  requires requires(const Holder& h) { h.ptr(); }
  Holder register_module(std::string name, Holder holder) {
    register_module_impl(std::move(name), holder.ptr());
    return holder;
  }
  /// Replaces an existing submodule of the same name (e.g. to swap a layer).
  template <class M>
  std::shared_ptr<M> replace_module(const std::string& name, std::shared_ptr<M> module) {
    replace_module_impl(name, module);
    return module;
  }

  // ---- traversal ----
  std::vector<Tensor> parameters(bool recurse = true) const;
  OrderedDict<std::string, Tensor> named_parameters(bool recurse = true) const;
  std::vector<Tensor> buffers(bool recurse = true) const;
  OrderedDict<std::string, Tensor> named_buffers(bool recurse = true) const;
  std::vector<std::shared_ptr<Module>> children() const;
  OrderedDict<std::string, std::shared_ptr<Module>> named_children() const;
  /// This module and every descendant, depth first (this one first, as PyTorch).
  std::vector<std::shared_ptr<Module>> modules();
  OrderedDict<std::string, std::shared_ptr<Module>> named_modules(const std::string& prefix = "");
  /// Calls fn on this module and every descendant.
  void apply(const std::function<void(Module&)>& fn);

  // ---- mode and housekeeping ----
  /// Sets training mode here and in every descendant.
  virtual void train(bool on = true);
  void eval() { train(false); }
  bool is_training() const { return training_; }
  /// set_to_none (default, as PyTorch 2.x): every parameter's grad becomes undefined; else
  /// existing grads are detached and zeroed in place.
  void zero_grad(bool set_to_none = true);
  /// Moves parameters and buffers to `device` / converts floating ones to `dtype`, in place
  /// (Tensor::set_data): every handle to them, an optimizer's included, sees the change
  /// (optimizer state already created keeps its dtype: convert before the first step).
  void to(Device device);
  void to(DType dtype);

  // ---- checkpoints ----
  /// Parameters and persistent buffers by dotted name, sharing storage with the module
  /// (detached): save it, or copy from it.
  StateDict state_dict() const;
  /// Copies every entry into the matching parameter or buffer (under no_grad, converting
  /// dtype). Everything is validated first: missing and unexpected keys (strict) and shape
  /// mismatches (always) raise one RuntimeError listing them all, as PyTorch's, and then the
  /// module is left exactly as it was.
  IncompatibleKeys load_state_dict(const StateDict& state, bool strict = true);

  /// One-line description of this module's own configuration ("Linear(in_features=4, ...)").
  virtual void pretty_print(std::ostream& os) const;

 protected:
  std::string name_;

 private:
  void register_module_impl(std::string name, std::shared_ptr<Module> module);
  void replace_module_impl(const std::string& name, std::shared_ptr<Module> module);
  void collect(const std::string& prefix, bool params, bool buffers, bool persistent_only, bool recurse,
               OrderedDict<std::string, Tensor>& out, std::unordered_set<const void*>* seen = nullptr) const;
  /// The parameters and/or buffers by dotted name, each tensor once (named_parameters, named_buffers).
  OrderedDict<std::string, Tensor> named_tensors(bool params, bool buffers, bool recurse) const;
  template <class F>
  void for_each_tensor(F&& f);
  void convert_tensors(const std::function<Tensor(const Tensor&)>& fn);

  OrderedDict<std::string, Tensor> parameters_{"Parameter"};
  OrderedDict<std::string, Tensor> buffers_{"Buffer"};
  std::vector<std::string> non_persistent_;
  OrderedDict<std::string, std::shared_ptr<Module>> children_{"Submodule"};
  bool training_ = true;
};

/// Prints the module tree as PyTorch's repr does:
///   Sequential(
///     (0): Linear(in_features=4, out_features=3, bias=true)
///   )
std::ostream& operator<<(std::ostream& os, const Module& m);

/// A value-like handle to a shared module implementation (libtorch's ModuleHolder):
/// construct with the Impl's arguments, reach members with ->, call forward with ().
template <class Impl>
class ModuleHolder {
 public:
  using ImplType = Impl;
  /// Constructs the implementation from the given arguments.
  template <class... Args>
  requires(!(sizeof...(Args) == 1 &&
             (std::is_base_of_v<ModuleHolder, std::decay_t<Args>> && ...))) explicit ModuleHolder(Args&&... args)
      : impl_(std::make_shared<Impl>(std::forward<Args>(args)...)) {}
  ModuleHolder(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}  // NOLINT: implicit, as libtorch
  /// An empty holder (libtorch's `Linear lin{nullptr}`).
  ModuleHolder(std::nullptr_t) {}  // NOLINT
  Impl* operator->() const { return checked(); }
  Impl& operator*() const { return *checked(); }
  const std::shared_ptr<Impl>& ptr() const { return impl_; }
  Impl* get() const { return impl_.get(); }
  bool is_empty() const { return impl_ == nullptr; }
  template <class... Args>
  auto operator()(Args&&... args) const {
    return checked()->forward(std::forward<Args>(args)...);
  }

 private:
  Impl* checked() const {
    if (!impl_) throw ValueError("Accessing empty ModuleHolder");
    return impl_.get();
  }
  std::shared_ptr<Impl> impl_;
};

/// Declares `Name` as ModuleHolder<NameImpl>, as libtorch's TORCH_MODULE.
#define GRAFT_MODULE(Name)                                     \
  class Name : public ::graft::nn::ModuleHolder<Name##Impl> {  \
   public:                                                     \
    using ::graft::nn::ModuleHolder<Name##Impl>::ModuleHolder; \
  }

}  // namespace graft::nn
