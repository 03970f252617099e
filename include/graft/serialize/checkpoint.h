#pragma once
/// graft::save / graft::load: safetensors checkpoints of tensors, modules, optimizers, or a
/// model and its optimizer together (docs/checkpoints.md). Writes are atomic; loads validate
/// the file, then the state dict (keys, shapes), before anything in the model or optimizer
/// changes: a bad file leaves them exactly as they were.
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "graft/nn/module.h"
#include "graft/optim/optimizer.h"
#include "graft/serialize/safetensors.h"

namespace graft {

using Metadata = safetensors::Metadata;

// graft::save(StateDict, path, metadata) and graft::load(path) -> StateDict come from
// graft/serialize/safetensors.h; these overloads add modules and optimizers.

/// One tensor to `path` (libtorch's torch::save(tensor, path)), a safetensors file holding it
/// under the key "tensor" (its data, dtype and shape; not its autograd history).
void save(const Tensor& tensor, const std::string& path);
/// Reads a file save(Tensor) wrote into `tensor` (libtorch's torch::load(tensor, path)).
void load(Tensor& tensor, const std::string& path);
/// Tensors to `path` under the keys "0", "1", ... (libtorch's torch::save(std::vector<Tensor>)).
void save(const std::vector<Tensor>& tensors, const std::string& path);
/// Reads a file save(std::vector<Tensor>) wrote, in order.
void load(std::vector<Tensor>& tensors, const std::string& path);

/// A module's state_dict() to `path`.
void save(const nn::Module& module, const std::string& path, const Metadata& metadata = {});
/// Loads `path` into `module` (load_state_dict with `strict`); returns the file's metadata.
/// With strict = false, call module.load_state_dict(graft::load(path), false) instead to see
/// which keys were missing or unexpected.
Metadata load(nn::Module& module, const std::string& path, bool strict = true);

/// An optimizer's state_dict() (state and param groups, flattened) to `path`.
void save(const optim::Optimizer& optimizer, const std::string& path, const Metadata& metadata = {});
/// Loads `path` into `optimizer`; returns the file's metadata.
Metadata load(optim::Optimizer& optimizer, const std::string& path);

/// A module through its holder or shared pointer, as libtorch programs write it
/// (`torch::save(model, "model.pt")` with `model` a ModuleHolder or std::shared_ptr<Net>).
template <class M>
requires std::is_base_of_v<nn::Module, M>
void save(const std::shared_ptr<M>& module, const std::string& path) {
  save(static_cast<const nn::Module&>(*module), path);
}
template <class M>
requires std::is_base_of_v<nn::Module, M>
void load(const std::shared_ptr<M>& module, const std::string& path) { load(static_cast<nn::Module&>(*module), path); }
template <class Impl>
void save(const nn::ModuleHolder<Impl>& module, const std::string& path) {
  save(static_cast<const nn::Module&>(*module), path);
}
template <class Impl>
void load(const nn::ModuleHolder<Impl>& module, const std::string& path) {
  load(static_cast<nn::Module&>(*module), path);
}

/// Model and optimizer in one file: keys "model.<name>" and "optimizer.<name>", plus
/// `metadata` (say, the epoch). Resuming from it continues training exactly.
void save_checkpoint(const nn::Module& model, const optim::Optimizer& optimizer, const std::string& path,
                     const Metadata& metadata = {});
/// Loads a save_checkpoint file into both, all or nothing: if the optimizer's part is
/// rejected after the model's was accepted, the model is put back as it was.
Metadata load_checkpoint(nn::Module& model, optim::Optimizer& optimizer, const std::string& path, bool strict = true);

}  // namespace graft
