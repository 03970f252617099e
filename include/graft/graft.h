#pragma once
/// graft: a C++20 tensor library with PyTorch's define-by-run autograd.
/// Include this one header; everything lives in namespace graft.
#include "graft/autograd/autograd.h"
#include "graft/autograd/function.h"
#include "graft/autograd/grad_mode.h"
#include "graft/autograd/gradcheck.h"
#include "graft/autograd/node.h"
#include "graft/core/allocator.h"
#include "graft/core/device.h"
#include "graft/core/dtype.h"
#include "graft/core/error.h"
#include "graft/core/scalar.h"
#include "graft/core/tensor.h"
#include "graft/core/ordered_dict.h"
#include "graft/memory.h"
#include "graft/ops/ops.h"
#include "graft/ops/nn_ops.h"
#include "graft/ops/op_table.h"
