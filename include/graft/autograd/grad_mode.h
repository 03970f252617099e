#pragma once
/// GradMode, NoGradGuard, EnableGradGuard, AutoGradMode and InferenceMode: declared in
/// graft/core/grad_mode.h (they are core flags); this header keeps the autograd path working.
#include "graft/core/grad_mode.h"
