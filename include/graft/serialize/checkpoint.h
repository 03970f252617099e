#pragma once
/// graft::save / graft::load: safetensors checkpoints of tensors, modules, optimizers, or a
/// model and its optimizer together (docs/checkpoints.md). Writes are atomic; loads validate
/// the file, then the state dict (keys, shapes), before anything in the model or optimizer
/// changes: a bad file leaves them exactly as they were.
#include <string>

#include "graft/nn/module.h"
#include "graft/optim/optimizer.h"
#include "graft/serialize/safetensors.h"

namespace graft {

using Metadata = safetensors::Metadata;

// graft::save(StateDict, path, metadata) and graft::load(path) -> StateDict come from
// graft/serialize/safetensors.h; these overloads add modules and optimizers.

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

/// Model and optimizer in one file: keys "model.<name>" and "optimizer.<name>", plus
/// `metadata` (say, the epoch). Resuming from it continues training exactly.
void save_checkpoint(const nn::Module& model, const optim::Optimizer& optimizer, const std::string& path,
                     const Metadata& metadata = {});
/// Loads a save_checkpoint file into both, all or nothing: if the optimizer's part is
/// rejected after the model's was accepted, the model is put back as it was.
Metadata load_checkpoint(nn::Module& model, optim::Optimizer& optimizer, const std::string& path, bool strict = true);

}  // namespace graft
