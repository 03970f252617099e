#pragma once
/// graft's data-loading layer (namespace graft::data): datasets, samplers, collation and the
/// DataLoader; and libtorch's templated datasets (MNIST), transforms, samplers and
/// make_data_loader, as libtorch programs write them. See docs/data.md.
#include "graft/data/collate.h"
#include "graft/data/dataloader.h"
#include "graft/data/dataset.h"
#include "graft/data/datasets/base.h"
#include "graft/data/datasets/mnist.h"
#include "graft/data/example.h"
#include "graft/data/sampler.h"
#include "graft/data/samplers.h"
#include "graft/data/stateless_loader.h"
#include "graft/data/transforms.h"
