#pragma once
/// graft's data-loading layer (namespace graft::data): datasets, samplers, collation and the
/// DataLoader. See docs/data.md.
#include "graft/data/collate.h"
#include "graft/data/dataloader.h"
#include "graft/data/dataset.h"
#include "graft/data/sampler.h"
