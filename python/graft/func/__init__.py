"""graft.func: composable function transforms, as torch.func (functorch) in PyTorch 2.x —
grad, grad_and_value, vjp, jvp, jacrev, jacfwd, hessian, vmap, functional_call and
stack_module_state — over pytrees (tuples, lists, dicts, namedtuples) of Tensors.

How graft does them (same results, different machinery; see each module's docstring):

- grad, vjp, jacrev run on graft's reverse-mode autograd engine, one tape for all levels;
  results are detached unless they depend on an enclosing transform or on outside tensors that
  require grad, so nothing is left in ``.grad`` and no graph stays alive.
- jvp, jacfwd (and so hessian) use the double-vjp trick, as graft has no forward-mode AD: the
  function must be twice differentiable in graft's engine.
- vmap evaluates the function once per sample and stacks the outputs (graft has no batching
  rules yet); in_dims/out_dims, nesting and composition with the other transforms behave as
  PyTorch's.
"""
from ._eager_transforms import grad, grad_and_value, vjp, jvp, jacrev, jacfwd, hessian
from ._vmap import vmap
from ._functional_call import functional_call, stack_module_state

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "vmap", "functional_call",
           "stack_module_state"]
