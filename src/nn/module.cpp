// nn::Module: registration, recursive traversal, train/eval, zero_grad, to(), and
// state_dict / load_state_dict with PyTorch's error report (validated before anything is
// copied, so a failed load changes nothing).
#include "graft/nn/module.h"

#include <algorithm>
#include <sstream>
#include <unordered_set>

#include "graft/core/grad_mode.h"
#include "graft/memory.h"
#include "graft/ops/ops.h"

namespace graft::nn {

namespace {
void check_name(const std::string& name, const char* what) {
  GRAFT_CHECK(!name.empty(), KeyError, what, " name can't be empty string \"\"");
  GRAFT_CHECK(name.find('.') == std::string::npos, KeyError, what, " name can't contain \".\", got: ", name);
}
std::string join(const std::string& prefix, const std::string& name) {
  return prefix.empty() ? name : prefix + "." + name;
}
std::string size_str(IntArrayRef s) {
  std::ostringstream os;
  os << "torch.Size([";
  for (size_t i = 0; i < s.size(); ++i) os << (i ? ", " : "") << s[i];
  os << "])";
  return os.str();
}
}  // namespace

Module::Module(std::string name) : name_(std::move(name)) {}

Tensor& Module::register_parameter(std::string name, Tensor tensor, bool requires_grad) {
  check_name(name, "parameter");
  GRAFT_CHECK(!parameters_.contains(name) && !buffers_.contains(name) && !children_.contains(name), KeyError,
              "attribute '", name, "' already exists");
  if (tensor.defined()) {
    GRAFT_CHECK(!tensor.grad_fn(), ValueError, "Cannot assign non-leaf Tensor to parameter '", name,
                "'. Model parameters must be created explicitly. To express '", name,
                "' as a function of another Tensor, compute the value in the forward() method.");
    set_memory_category(tensor, MemoryCategory::Parameter);
    tensor.requires_grad_(requires_grad);
  }
  return parameters_.insert(std::move(name), std::move(tensor));
}

Tensor& Module::register_buffer(std::string name, Tensor tensor, bool persistent) {
  check_name(name, "buffer");
  GRAFT_CHECK(!parameters_.contains(name) && !buffers_.contains(name) && !children_.contains(name), KeyError,
              "attribute '", name, "' already exists");
  if (tensor.defined()) set_memory_category(tensor, MemoryCategory::Parameter);
  if (!persistent) non_persistent_.push_back(name);
  return buffers_.insert(std::move(name), std::move(tensor));
}

void Module::register_module_impl(std::string name, std::shared_ptr<Module> module) {
  check_name(name, "module");
  GRAFT_CHECK(module != nullptr, ValueError, "register_module: module '", name, "' is null");
  GRAFT_CHECK(!parameters_.contains(name) && !buffers_.contains(name) && !children_.contains(name), KeyError,
              "attribute '", name, "' already exists");
  children_.insert(std::move(name), std::move(module));
}

void Module::replace_module_impl(const std::string& name, std::shared_ptr<Module> module) {
  GRAFT_CHECK(module != nullptr, ValueError, "replace_module: module '", name, "' is null");
  children_[name] = std::move(module);
}

void Module::collect(const std::string& prefix, bool params, bool bufs, bool persistent_only, bool recurse,
                     OrderedDict<std::string, Tensor>& out, std::unordered_set<const void*>* seen) const {
  // `seen` (traversals, as PyTorch's remove_duplicate=True): a module or tensor reached twice
  // through sharing is listed once. state_dict passes none and keeps every name.
  auto first_time = [&](const void* p) { return seen == nullptr || seen->insert(p).second; };
  if (params)
    for (const auto& it : parameters_)
      if (it.value().defined() && first_time(it.value().impl())) out.insert(join(prefix, it.key()), it.value());
  if (bufs)
    for (const auto& it : buffers_) {
      if (!it.value().defined()) continue;
      if (persistent_only &&
          std::find(non_persistent_.begin(), non_persistent_.end(), it.key()) != non_persistent_.end())
        continue;
      if (first_time(it.value().impl())) out.insert(join(prefix, it.key()), it.value());
    }
  if (recurse)
    for (const auto& it : children_)
      if (first_time(it.value().get()))
        it.value()->collect(join(prefix, it.key()), params, bufs, persistent_only, true, out, seen);
}

OrderedDict<std::string, Tensor> Module::named_tensors(bool params, bool buffers, bool recurse) const {
  OrderedDict<std::string, Tensor> out;
  std::unordered_set<const void*> seen;
  collect("", params, buffers, false, recurse, out, &seen);
  return out;
}
std::vector<Tensor> Module::parameters(bool recurse) const { return named_parameters(recurse).values(); }
OrderedDict<std::string, Tensor> Module::named_parameters(bool recurse) const {
  return named_tensors(/*params=*/true, /*buffers=*/false, recurse);
}
std::vector<Tensor> Module::buffers(bool recurse) const { return named_buffers(recurse).values(); }
OrderedDict<std::string, Tensor> Module::named_buffers(bool recurse) const {
  return named_tensors(/*params=*/false, /*buffers=*/true, recurse);
}
std::vector<std::shared_ptr<Module>> Module::children() const { return named_children().values(); }
OrderedDict<std::string, std::shared_ptr<Module>> Module::named_children() const {
  OrderedDict<std::string, std::shared_ptr<Module>> out;
  std::unordered_set<const Module*> seen;
  for (const auto& it : children_)
    if (seen.insert(it.value().get()).second) out.insert(it.key(), it.value());
  return out;
}

std::vector<std::shared_ptr<Module>> Module::modules() { return named_modules().values(); }
OrderedDict<std::string, std::shared_ptr<Module>> Module::named_modules(const std::string& prefix) {
  OrderedDict<std::string, std::shared_ptr<Module>> out;
  std::unordered_set<const Module*> seen;
  std::function<void(const std::string&, const std::shared_ptr<Module>&)> walk = [&](const std::string& p,
                                                                                     const std::shared_ptr<Module>& m) {
    if (!seen.insert(m.get()).second) return;  // shared: listed once, as PyTorch
    out.insert(p, m);
    for (const auto& it : m->children_) walk(join(p, it.key()), it.value());
  };
  std::shared_ptr<Module> self;
  try {
    self = shared_from_this();
  } catch (const std::bad_weak_ptr&) {
    throw ValueError(
        "named_modules: the module must be owned by a std::shared_ptr (use a ModuleHolder or "
        "std::make_shared)");
  }
  walk(prefix, self);
  return out;
}

void Module::apply(const std::function<void(Module&)>& fn) {
  fn(*this);
  for (auto& it : children_) it.value()->apply(fn);
}

void Module::train(bool on) {
  training_ = on;
  for (auto& it : children_) it.value()->train(on);
}

void Module::zero_grad(bool set_to_none) {
  for (Tensor& p : parameters()) {
    if (!p.grad().defined()) continue;
    if (set_to_none) {
      p.mutable_grad() = Tensor();
    } else {
      Tensor& g = p.mutable_grad();
      if (g.grad_fn())
        g = g.detach();
      else
        g.requires_grad_(false);
      g.zero_();
    }
  }
}

template <class F>
void Module::for_each_tensor(F&& f) {
  for (auto& it : parameters_) f(it.value(), true);
  for (auto& it : buffers_) f(it.value(), false);
  for (auto& it : children_) it.value()->for_each_tensor(f);
}

// Converts in place with set_data, so members and optimizers holding these handles keep
// seeing the module's tensors (PyTorch's Module._apply on param.data); grads follow their
// parameters. Detached aliases taken earlier (an old state_dict()) keep the old data.
void Module::convert_tensors(const std::function<Tensor(const Tensor&)>& fn) {
  NoGradGuard ng;
  for_each_tensor([&](Tensor& t, bool) {
    if (!t.defined()) return;
    Tensor converted = fn(t);
    if (converted.is_same(t)) return;
    set_memory_category(converted, MemoryCategory::Parameter);
    t.set_data(converted);
    if (t.grad().defined()) t.mutable_grad() = fn(t.grad());
  });
}

void Module::to(Device device) {
  convert_tensors([&](const Tensor& t) { return t.device() == device ? t : t.detach().to(device); });
}

void Module::to(DType dtype) {
  GRAFT_CHECK(is_floating_point(dtype), TypeError, "nn.Module.to only accepts floating point dtypes, but got ", dtype);
  convert_tensors(
      [&](const Tensor& t) { return (!t.is_floating_point() || t.dtype() == dtype) ? t : t.detach().to(dtype); });
}

StateDict Module::state_dict() const {
  StateDict out;
  collect("", true, true, true, true, out);
  for (auto& it : out) it.value() = it.value().detach();
  return out;
}

IncompatibleKeys Module::load_state_dict(const StateDict& state, bool strict) {
  OrderedDict<std::string, Tensor> own;
  collect("", true, true, true, true, own);
  IncompatibleKeys keys;
  std::vector<std::string> size_errors;
  for (const auto& it : own) {
    const Tensor* src = state.find(it.key());
    if (!src) {
      keys.missing_keys.push_back(it.key());
      continue;
    }
    GRAFT_CHECK(src->defined(), ValueError, "load_state_dict: entry '", it.key(), "' is an undefined tensor");
    if (!src->sizes().equals(it.value().sizes()))
      size_errors.push_back("size mismatch for " + it.key() + ": copying a param with shape " + size_str(src->sizes()) +
                            " from checkpoint, the shape in current model is " + size_str(it.value().sizes()) + ".");
  }
  for (const auto& it : state)
    if (!own.contains(it.key())) keys.unexpected_keys.push_back(it.key());
  std::vector<std::string> errors;
  if (strict) {
    auto list = [](const std::vector<std::string>& v) {
      std::string s;
      for (size_t i = 0; i < v.size(); ++i) s += (i ? ", \"" : "\"") + v[i] + "\"";
      return s;
    };
    // PyTorch's order: missing, then unexpected, then size mismatches.
    if (!keys.missing_keys.empty()) errors.push_back("Missing key(s) in state_dict: " + list(keys.missing_keys) + ". ");
    if (!keys.unexpected_keys.empty())
      errors.push_back("Unexpected key(s) in state_dict: " + list(keys.unexpected_keys) + ". ");
  }
  errors.insert(errors.end(), size_errors.begin(), size_errors.end());
  if (!errors.empty()) {
    std::string msg = "Error(s) in loading state_dict for " + name_ + ":";
    for (const auto& e : errors) msg += "\n\t" + e;
    throw RuntimeError(msg);
  }
  NoGradGuard ng;
  for (auto& it : own)
    if (const Tensor* src = state.find(it.key())) {
      Tensor dst = it.value();
      dst.copy_(*src);
    }
  return keys;
}

void Module::pretty_print(std::ostream& os) const { os << name_; }

namespace {
void print_tree(std::ostream& os, const Module& m, int indent) {
  m.pretty_print(os);
  auto kids = m.named_children();
  if (kids.empty()) return;
  os << "(\n";
  for (const auto& it : kids) {
    os << std::string(static_cast<size_t>(indent + 2), ' ') << "(" << it.key() << "): ";
    print_tree(os, *it.value(), indent + 2);
    os << "\n";
  }
  os << std::string(static_cast<size_t>(indent), ' ') << ")";
}
}  // namespace

std::ostream& operator<<(std::ostream& os, const Module& m) {
  print_tree(os, m, 0);
  return os;
}

}  // namespace graft::nn
