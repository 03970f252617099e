#pragma once
/// A pause in the running of backward passes, for a walk over live graphs made by other threads
/// (the leak doctor's census): each outermost backward pass runs under a shared hold of this
/// lock; a walker that holds it exclusively sees no node run or release what it saved meanwhile.
/// A walker must not take it from inside a backward pass of its own thread (current_graph_task_id()
/// >= 0): that pass holds it shared.
#include <shared_mutex>

namespace graft::autograd {

std::shared_mutex& graph_walk_mutex();

}  // namespace graft::autograd
