// Optimizer::state_dict / load_state_dict: PyTorch's nested {"state": ..., "param_groups": ...}
// flattened into a StateDict. Loading checks everything before it changes anything.
#include <algorithm>
#include <cstring>
#include <map>
#include <unordered_set>

#include "graft/core/allocator.h"
#include "graft/core/grad_mode.h"
#include "graft/ops/ops.h"
#include "graft/optim/optimizer.h"

namespace graft::optim {

namespace {

constexpr const char* kStatePrefix = "state.";
constexpr const char* kGroupPrefix = "param_groups.";

struct OptionTensorWriter final : OptionVisitor {
  StateDict& out;
  std::string prefix;
  OptionTensorWriter(StateDict& o, std::string p) : out(o), prefix(std::move(p)) {}
  void number(const char* name, double& v) override { out.insert(prefix + name, scalar_tensor(v, kFloat64)); }
  void flag(const char* name, bool& v) override { out.insert(prefix + name, scalar_tensor(v ? 1.0 : 0.0, kFloat64)); }
  void pair(const char* name, std::tuple<double, double>& v) override {
    out.insert(prefix + name, tensor({std::get<0>(v), std::get<1>(v)}, kFloat64));
  }
};

struct OptionKinds final : OptionVisitor {
  struct Kind {
    std::string name;
    size_t count;
    bool is_flag;
  };
  std::vector<Kind> kinds;
  void number(const char* name, double&) override { kinds.push_back({name, 1, false}); }
  void flag(const char* name, bool&) override { kinds.push_back({name, 1, true}); }
  void pair(const char* name, std::tuple<double, double>&) override { kinds.push_back({name, 2, false}); }
};

// "<int>.<name>" -> (int, name); false when it does not parse.
bool split_index(const std::string& rest, int64_t& index, std::string& name) {
  const size_t dot = rest.find('.');
  if (dot == 0 || dot == std::string::npos || dot + 1 == rest.size() || dot > 18) return false;
  index = 0;
  for (size_t i = 0; i < dot; ++i) {
    if (rest[i] < '0' || rest[i] > '9') return false;
    index = index * 10 + (rest[i] - '0');
  }
  name = rest.substr(dot + 1);
  return true;
}

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

}  // namespace

StateDict Optimizer::state_dict() const {
  StateDict out;
  // PyTorch numbers the parameters over all groups in order; a repeated parameter keeps the
  // number of its first appearance.
  std::unordered_map<const TensorImpl*, int64_t> index;
  std::vector<std::vector<int64_t>> group_indices;
  std::vector<std::pair<int64_t, const TensorImpl*>> numbered;
  int64_t next = 0;
  for (const auto& g : param_groups_) {
    std::vector<int64_t> idx;
    for (const Tensor& p : g.params()) {
      auto [it, inserted] = index.emplace(p.impl(), next);
      if (inserted) numbered.emplace_back(next, p.impl());
      idx.push_back(it->second);
      ++next;
    }
    group_indices.push_back(std::move(idx));
  }
  for (const auto& [i, impl] : numbered) {
    auto it = state_.find(impl);
    if (it == state_.end()) continue;
    for (const auto& item : it->second) out.insert(detail::str(kStatePrefix, i, ".", item.key()), item.value());
  }
  for (size_t g = 0; g < param_groups_.size(); ++g) {
    const std::string prefix = detail::str(kGroupPrefix, g, ".");
    auto options = param_groups_[g].options().clone();
    OptionTensorWriter writer(out, prefix);
    options->visit(writer);
    if (param_groups_[g].initial_lr())
      out.insert(prefix + "initial_lr", scalar_tensor(*param_groups_[g].initial_lr(), kFloat64));
    out.insert(prefix + "params", tensor(group_indices[g], kInt64));
  }
  return out;
}

void Optimizer::load_state_dict(const StateDict& state_dict) {
  // ---- 1. sort the keys into groups and per-parameter states ----
  std::map<int64_t, std::map<std::string, Tensor>> groups;
  std::map<int64_t, std::vector<std::pair<std::string, Tensor>>> states;
  for (const auto& item : state_dict) {
    const std::string& key = item.key();
    int64_t index = 0;
    std::string name;
    GRAFT_CHECK(item.value().defined(), ValueError, "load_state_dict: '", key, "' is an undefined tensor");
    if (starts_with(key, kStatePrefix) && split_index(key.substr(std::strlen(kStatePrefix)), index, name)) {
      states[index].emplace_back(name, item.value());
    } else if (starts_with(key, kGroupPrefix) && split_index(key.substr(std::strlen(kGroupPrefix)), index, name)) {
      groups[index][name] = item.value();
    } else {
      throw KeyError(detail::str("load_state_dict: unexpected key '", key,
                                 "' (expected 'state.<i>.<name>' or 'param_groups.<g>.<option>')"));
    }
  }

  // ---- 2. parameter groups: count, sizes, options ----
  const size_t num_groups = groups.empty() ? 0 : static_cast<size_t>(groups.rbegin()->first) + 1;
  GRAFT_CHECK(num_groups == param_groups_.size(), ValueError,
              "loaded state dict has a different number of parameter groups");
  std::vector<std::unique_ptr<OptimizerOptions>> new_options(num_groups);
  std::vector<std::optional<double>> new_initial_lr(num_groups);
  // saved parameter number -> (current parameter, its group)
  std::unordered_map<int64_t, std::pair<Tensor, size_t>> id_map;
  for (size_t g = 0; g < num_groups; ++g) {
    const std::string prefix = detail::str(kGroupPrefix, g, ".");
    auto git = groups.find(static_cast<int64_t>(g));
    GRAFT_CHECK(git != groups.end() && git->second.count("params"), KeyError, "load_state_dict: missing key '", prefix,
                "params'");
    auto& entries = git->second;
    const Tensor& params = entries.at("params");
    GRAFT_CHECK(params.dtype() == kInt64, TypeError, "load_state_dict: '", prefix, "params' has dtype ", params.dtype(),
                ", expected ", kInt64);
    GRAFT_CHECK(params.dim() == 1, ValueError, "load_state_dict: '", prefix, "params' has shape ", params.sizes(),
                ", expected a 1-D tensor");
    const auto& current = param_groups_[g].params();
    GRAFT_CHECK(static_cast<size_t>(params.numel()) == current.size(), ValueError,
                "loaded state dict contains a parameter group that doesn't match the size of optimizer's group");

    auto options = param_groups_[g].options().clone();
    OptionKinds kinds;
    options->visit(kinds);
    for (const auto& k : kinds.kinds) {
      const std::string key = prefix + k.name;
      auto it = entries.find(k.name);
      GRAFT_CHECK(it != entries.end(), KeyError, "load_state_dict: missing key '", key, "'");
      const Tensor& t = it->second;
      GRAFT_CHECK(t.dtype() == kFloat64, TypeError, "load_state_dict: '", key, "' has dtype ", t.dtype(), ", expected ",
                  kFloat64);
      const bool shape_ok = k.count == 1 ? t.dim() == 0 : (t.dim() == 1 && t.size(0) == static_cast<int64_t>(k.count));
      GRAFT_CHECK(shape_ok, ValueError, "load_state_dict: '", key, "' has shape ", t.sizes(), ", expected ",
                  k.count == 1 ? "a 0-d tensor" : "a 1-D tensor of 2 values");
      std::vector<double> values = t.to_vector<double>();
      if (k.is_flag)
        GRAFT_CHECK(values[0] == 0 || values[0] == 1, ValueError, "load_state_dict: '", key,
                    "' is a flag and must be 0 or 1, got ", values[0]);
      options->set_option(k.name, values);
    }
    for (const auto& [name, t] : entries) {
      if (name == "params") continue;
      if (name == "initial_lr") {
        GRAFT_CHECK(t.dtype() == kFloat64, TypeError, "load_state_dict: '", prefix, "initial_lr' has dtype ", t.dtype(),
                    ", expected ", kFloat64);
        GRAFT_CHECK(t.dim() == 0, ValueError, "load_state_dict: '", prefix, "initial_lr' has shape ", t.sizes(),
                    ", expected a 0-d tensor");
        new_initial_lr[g] = t.item<double>();
        continue;
      }
      GRAFT_CHECK(std::any_of(kinds.kinds.begin(), kinds.kinds.end(), [&](const auto& k) { return k.name == name; }),
                  KeyError, "load_state_dict: unexpected key '", prefix, name, "' (", this->name(), " has no option '",
                  name, "')");
    }
    options->validate();
    new_options[g] = std::move(options);

    const std::vector<int64_t> saved = params.to_vector<int64_t>();
    for (size_t j = 0; j < current.size(); ++j) {
      auto [it, inserted] = id_map.emplace(saved[j], std::make_pair(current[j], g));
      GRAFT_CHECK(inserted || it->second.first.is_same(current[j]), ValueError, "load_state_dict: parameter number ",
                  saved[j], " appears twice in the loaded param_groups for different parameters");
    }
  }

  // ---- 3. per-parameter state: known names, dtypes, shapes ----
  std::unordered_set<const TensorImpl*> seen;
  for (const auto& [index, entries] : states) {
    auto it = id_map.find(index);
    GRAFT_CHECK(it != id_map.end(), ValueError, "load_state_dict: 'state.", index,
                "' belongs to no parameter of the loaded param_groups");
    const Tensor& param = it->second.first;
    GRAFT_CHECK(seen.insert(param.impl()).second, ValueError, "load_state_dict: two loaded states ('state.", index,
                "' and another) belong to the same parameter");
    const StateSchema schema = state_schema(*new_options[it->second.second]);
    for (const auto& [name, t] : entries) {
      const std::string key = detail::str(kStatePrefix, index, ".", name);
      GRAFT_CHECK(std::find(schema.allowed.begin(), schema.allowed.end(), name) != schema.allowed.end(), KeyError,
                  "load_state_dict: unexpected key '", key, "' (", this->name(), " keeps no state called '", name,
                  "')");
      GRAFT_CHECK(t.is_floating_point(), TypeError, "load_state_dict: '", key, "' has dtype ", t.dtype(),
                  ", expected a floating point dtype");
      if (name == "step") {
        GRAFT_CHECK(t.dim() == 0, ValueError, "load_state_dict: '", key, "' has shape ", t.sizes(),
                    ", expected a 0-d tensor");
      } else {
        GRAFT_CHECK(t.sizes().equals(param.sizes()), ValueError, "load_state_dict: '", key, "' has shape ", t.sizes(),
                    " but its parameter has shape ", param.sizes());
      }
    }
    for (const auto& name : schema.required)
      GRAFT_CHECK(std::any_of(entries.begin(), entries.end(), [&](const auto& e) { return e.first == name; }), KeyError,
                  "load_state_dict: missing key 'state.", index, ".", name, "'");
  }

  // ---- 4. copies (allocations may fail: still nothing changed) ----
  std::unordered_map<const TensorImpl*, ParamState> new_state;
  {
    NoGradGuard no_grad;
    MemoryCategoryGuard category(MemoryCategory::OptimizerState);
    for (const auto& [index, entries] : states) {
      const Tensor& param = id_map.at(index).first;
      ParamState& st = new_state[param.impl()];
      for (const auto& [name, t] : entries)
        st.insert(name, name == "step" ? t.detach().clone() : t.detach().to(param.dtype(), /*copy=*/true));
    }
  }

  // ---- 5. commit (nothing below throws) ----
  for (size_t g = 0; g < num_groups; ++g) {
    param_groups_[g].set_options(std::move(new_options[g]));
    param_groups_[g].set_initial_lr(new_initial_lr[g]);
  }
  state_ = std::move(new_state);
}

}  // namespace graft::optim
