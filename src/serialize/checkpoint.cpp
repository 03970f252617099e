// graft::save / graft::load for tensors, modules, optimizers and model + optimizer files.
#include "graft/serialize/checkpoint.h"

namespace graft {

namespace {
constexpr const char* kModelPrefix = "model.";
constexpr const char* kOptimizerPrefix = "optimizer.";

StateDict with_prefix(const StateDict& sd, const std::string& prefix) {
  StateDict out;
  for (const auto& it : sd) out.insert(prefix + it.key(), it.value());
  return out;
}
// The entries under `prefix`, prefix removed; entries without a known prefix are an error.
StateDict take_prefix(const StateDict& sd, const std::string& prefix, const std::string& path) {
  StateDict out;
  for (const auto& it : sd) {
    const std::string& k = it.key();
    if (k.rfind(prefix, 0) == 0)
      out.insert(k.substr(prefix.size()), it.value());
    else if (k.rfind(kModelPrefix, 0) != 0 && k.rfind(kOptimizerPrefix, 0) != 0)
      throw ValueError(detail::str(path, ": not a save_checkpoint file: tensor '", k,
                                   "' is neither under \"model.\" nor under \"optimizer.\""));
  }
  return out;
}
}  // namespace

void save(const Tensor& tensor, const std::string& path) {
  StateDict sd;
  sd.insert("tensor", tensor.detach());
  safetensors::save(sd, path);
}
void load(Tensor& tensor, const std::string& path) {
  StateDict sd = safetensors::load(path);
  GRAFT_CHECK(sd.size() == 1 && sd.contains("tensor"), ValueError, path,
              ": not a file of one tensor (graft::save(Tensor, path) writes one, under the key \"tensor\")");
  tensor = sd["tensor"];
}

void save(const std::vector<Tensor>& tensors, const std::string& path) {
  StateDict sd;
  for (size_t i = 0; i < tensors.size(); ++i) sd.insert(std::to_string(i), tensors[i].detach());
  safetensors::save(sd, path);
}
void load(std::vector<Tensor>& tensors, const std::string& path) {
  StateDict sd = safetensors::load(path);
  std::vector<Tensor> out;
  for (size_t i = 0; i < sd.size(); ++i) {
    GRAFT_CHECK(sd.contains(std::to_string(i)), ValueError, path,
                ": not a file of a tensor list (graft::save(std::vector<Tensor>, path) writes the keys 0, 1, ...)");
    out.push_back(sd[std::to_string(i)]);
  }
  tensors = std::move(out);
}

void save(const nn::Module& module, const std::string& path, const Metadata& metadata) {
  safetensors::save(module.state_dict(), path, metadata);
}
Metadata load(nn::Module& module, const std::string& path, bool strict) {
  safetensors::SafetensorsFile f = safetensors::load_file(path);
  module.load_state_dict(f.tensors, strict);
  return f.metadata;
}

void save(const optim::Optimizer& optimizer, const std::string& path, const Metadata& metadata) {
  safetensors::save(optimizer.state_dict(), path, metadata);
}
Metadata load(optim::Optimizer& optimizer, const std::string& path) {
  safetensors::SafetensorsFile f = safetensors::load_file(path);
  optimizer.load_state_dict(f.tensors);
  return f.metadata;
}

void save_checkpoint(const nn::Module& model, const optim::Optimizer& optimizer, const std::string& path,
                     const Metadata& metadata) {
  StateDict all = with_prefix(model.state_dict(), kModelPrefix);
  all.update(with_prefix(optimizer.state_dict(), kOptimizerPrefix));
  safetensors::save(all, path, metadata);
}

Metadata load_checkpoint(nn::Module& model, optim::Optimizer& optimizer, const std::string& path, bool strict) {
  safetensors::SafetensorsFile f = safetensors::load_file(path);
  StateDict model_sd = take_prefix(f.tensors, kModelPrefix, path);
  StateDict optim_sd = take_prefix(f.tensors, kOptimizerPrefix, path);
  // Keep a copy of the model's state so a rejected optimizer part can be undone.
  StateDict backup;
  for (const auto& it : model.state_dict()) backup.insert(it.key(), it.value().clone());
  model.load_state_dict(model_sd, strict);
  try {
    optimizer.load_state_dict(optim_sd);
  } catch (...) {
    model.load_state_dict(backup, false);
    throw;
  }
  return f.metadata;
}

}  // namespace graft
