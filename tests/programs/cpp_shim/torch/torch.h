#pragma once
// The one line a libtorch program changes to build against graft, put where its
// `#include <torch/torch.h>` finds it, so that the shipped programs stay byte for byte upstream's.
#include <graft/graft.h>
namespace torch = graft;
