#pragma once
/// Custom autograd Functions, shaped like libtorch's torch::autograd::Function<T>:
///
///   struct Cube : graft::autograd::Function<Cube> {
///     static graft::Tensor forward(graft::autograd::AutogradContext* ctx, graft::Tensor x) {
///       ctx->save_for_backward({x});
///       return x * x * x;
///     }
///     static graft::TensorList backward(graft::autograd::AutogradContext* ctx, graft::TensorList g) {
///       auto x = ctx->get_saved_variables()[0];
///       return {g[0] * 3 * x * x};   // written with graft ops: double backward works
///     }
///   };
///   graft::Tensor y = Cube::apply(x);
///
/// The node it creates ("CubeBackward") runs through the same engine path as built-in ops.
/// A Function whose backward is not differentiable declares
/// `static constexpr bool once_differentiable = true;` (Python's @once_differentiable): its
/// backward then runs without recording, and differentiating its result raises
/// "trying to differentiate twice a function that was marked with @once_differentiable".
#include <cxxabi.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <typeinfo>
#include <unordered_map>
#include <variant>
#include <vector>

#include "graft/autograd/node.h"
#include "graft/core/grad_mode.h"

namespace graft::autograd {

/// A small dynamic value for AutogradContext::saved_data (libtorch's IValue, reduced).
class IValue {
 public:
  IValue() = default;
  IValue(bool v) : v_(v) {}
  IValue(int v) : v_(static_cast<int64_t>(v)) {}
  IValue(int64_t v) : v_(v) {}
  IValue(double v) : v_(v) {}
  IValue(Tensor v) : v_(std::move(v)) {}
  IValue(std::string v) : v_(std::move(v)) {}
  IValue(const char* v) : v_(std::string(v)) {}
  IValue(std::vector<int64_t> v) : v_(std::move(v)) {}
  bool isNone() const { return v_.index() == 0; }
  bool isTensor() const { return std::holds_alternative<Tensor>(v_); }
  bool toBool() const { return get<bool>("bool"); }
  int64_t toInt() const { return get<int64_t>("int"); }
  double toDouble() const {
    return v_.index() == 2 ? static_cast<double>(std::get<int64_t>(v_)) : get<double>("double");
  }
  const Tensor& toTensor() const { return get<Tensor>("Tensor"); }
  const std::string& toStringRef() const { return get<std::string>("string"); }
  const std::vector<int64_t>& toIntVector() const { return get<std::vector<int64_t>>("int list"); }

 private:
  template <class T>
  const T& get(const char* what) const {
    if (auto* p = std::get_if<T>(&v_)) return *p;
    throw TypeError(std::string("IValue: expected ") + what);
  }
  std::variant<std::monostate, bool, int64_t, double, Tensor, std::string, std::vector<int64_t>> v_;
};

class AutogradContext;
namespace detail {
class CppNodeBase;
bool connect_inputs(CppNodeBase* node, const TensorList& tensors);
void wrap_outputs(CppNodeBase* node, const TensorList& inputs, TensorList& outputs, bool is_executable);
}  // namespace detail

/// The `ctx` of a custom Function: what forward leaves for backward.
class AutogradContext {
 public:
  /// Saves tensors for backward (inputs or outputs of forward); version-checked on use and
  /// released after backward unless retain_graph.
  void save_for_backward(TensorList to_save);
  /// The tensors given to save_for_backward, in order. Throws PyTorch's "backward through the
  /// graph a second time" error once released.
  TensorList get_saved_variables() const;
  /// Declares inputs that forward modified in place; they must also be returned.
  void mark_dirty(const TensorList& inputs);
  /// Declares outputs that are not differentiable (they get requires_grad=false).
  void mark_non_differentiable(const TensorList& outputs);
  /// When false, backward receives undefined tensors (not zeros) for outputs without gradient.
  void set_materialize_grads(bool value) { materialize_grads_ = value; }
  /// True when forward input `index` requires grad (false for non-tensor inputs).
  bool needs_input_grad(size_t index) const { return index < needs_input_grad_.size() && needs_input_grad_[index]; }
  /// The number of forward arguments, tensors or not (needs_input_grad's range).
  size_t num_inputs() const { return needs_input_grad_.size(); }
  /// Non-tensor state for backward.
  std::unordered_map<std::string, IValue> saved_data;

 private:
  // what the custom-Function machinery (custom_function.cpp) keeps and reads
  friend class detail::CppNodeBase;
  friend bool detail::connect_inputs(detail::CppNodeBase* node, const TensorList& tensors);
  friend void detail::wrap_outputs(detail::CppNodeBase* node, const TensorList& inputs, TensorList& outputs,
                                   bool is_executable);
  std::vector<bool> needs_input_grad_;
  TensorList to_save_;
  std::vector<SavedVariable> saved_;
  std::vector<TensorImpl*> dirty_, non_differentiable_;
  bool materialize_grads_ = true;
  bool has_freed_buffers_ = false;
  Node* node_ = nullptr;
};

namespace detail {
/// The node of a custom Function; its apply() calls the user's backward.
class CppNodeBase : public Node {
 public:
  CppNodeBase() { ctx.node_ = this; }
  TensorList apply(TensorList&& grads) override;
  void release_variables() override;
  void visit_held(HeldVisitor& v) const override;
  bool call_with_undefined_grads() const override { return true; }
  /// Materializes grads, calls the user's backward and checks what it returned.
  TensorList run_backward(TensorList&& grads);
  AutogradContext ctx;
  std::vector<bool> is_tensor_input;  // per forward argument
  std::vector<int> edge_of_input;     // per forward argument: edge index or -1
  std::string name_;
  bool once_differentiable_ = false;

 protected:
  virtual TensorList call_backward(TensorList grads) = 0;
};

template <class T>
class CppNode final : public CppNodeBase {
 public:
  std::string name() const override { return name_; }

 protected:
  TensorList call_backward(TensorList grads) override { return T::backward(&ctx, std::move(grads)); }
};

/// The node of nn.Module's full backward hooks (PyTorch's BackwardHookFunctionBackward):
/// identity in forward; in backward it hands the incoming gradients (undefined where none came)
/// to `hook`, whose result replaces them (nullopt: unchanged; else one tensor per gradient).
class BackwardHookNode final : public CppNodeBase {
 public:
  using Hook = std::function<std::optional<TensorList>(const TensorList&)>;
  explicit BackwardHookNode(Hook hook) : hook_(std::move(hook)) {}
  std::string name() const override { return "BackwardHookFunctionBackward"; }

 protected:
  TensorList call_backward(TensorList grads) override;

 private:
  Hook hook_;
};
/// `tensors` passed through a BackwardHookNode calling `hook`: aliases that share its grad_fn
/// (those that do not require grad come back as plain aliases).
TensorList backward_hook_identity(const TensorList& tensors, BackwardHookNode::Hook hook);

std::string custom_node_name(const char* mangled);
/// Connects `node` to forward's tensor arguments (PyTorch's _wrap_inputs): for each forward
/// argument (node->is_tensor_input must be filled), whether it needs a gradient and which edge it
/// feeds; `tensors` are the tensor arguments in order. Returns whether the node is executable:
/// grad mode is on and some tensor requires grad (else every edge is invalid).
bool connect_inputs(CppNodeBase* node, const TensorList& tensors);
/// Attaches history to forward's outputs and saves ctx's tensors (PyTorch's _wrap_outputs).
void wrap_outputs(CppNodeBase* node, const TensorList& inputs, TensorList& outputs, bool is_executable);

inline void collect_arg(std::vector<Tensor>& tensors, std::vector<bool>& is_tensor, const Tensor& t) {
  tensors.push_back(t);
  is_tensor.push_back(true);
}
template <class A>
void collect_arg(std::vector<Tensor>&, std::vector<bool>& is_tensor, const A&) {
  is_tensor.push_back(false);
}
inline TensorList as_list(const Tensor& t) { return {t}; }
inline TensorList as_list(TensorList t) { return t; }
}  // namespace detail

/// Base of a custom Function T with static forward(ctx, args...) and backward(ctx, grads).
template <class T>
struct Function {
  template <class... Args>
  static auto apply(Args&&... args) {
    auto node = make_intrusive<detail::CppNode<T>>();
    node->name_ = detail::custom_node_name(typeid(T).name());
    if constexpr (requires { T::once_differentiable; }) node->once_differentiable_ = T::once_differentiable;
    std::vector<Tensor> tensors;
    (detail::collect_arg(tensors, node->is_tensor_input, args), ...);
    const bool executable = detail::connect_inputs(node.get(), tensors);
    using Out = decltype(T::forward(&node->ctx, std::forward<Args>(args)...));
    Out result;
    {
      AutoGradMode no_grad(false);
      result = T::forward(&node->ctx, std::forward<Args>(args)...);
    }
    TensorList outs = detail::as_list(result);
    detail::wrap_outputs(node.get(), tensors, outs, executable);
    if constexpr (std::is_same_v<Out, Tensor>)
      return outs[0];
    else
      return outs;
  }
};

}  // namespace graft::autograd
