#pragma once
/// graft::nn: modules, initialisers and containers (libtorch's torch::nn).
#include "graft/nn/init.h"
#include "graft/nn/module.h"
#include "graft/nn/modules/activation.h"
#include "graft/nn/modules/container.h"
#include "graft/nn/modules/conv.h"
#include "graft/nn/modules/dropout.h"
#include "graft/nn/modules/embedding.h"
#include "graft/nn/modules/linear.h"
#include "graft/nn/modules/normalization.h"
#include "graft/nn/modules/pooling.h"
#include "graft/nn/modules/rnn.h"
#include "graft/nn/modules/transformer.h"
