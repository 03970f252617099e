"""graft.func's autograd transforms: grad, grad_and_value, vjp, jvp, jacrev, jacfwd and hessian,
with torch.func's signatures, pytree handling, result nesting and error messages.

They run on graft's reverse-mode engine (``autograd.grad``), one tape shared by all levels (see
graft/func/_level.py). graft has no forward-mode AD: jvp and jacfwd use the double-vjp trick —
``u -> J^T u`` is linear in the dummy cotangent ``u``, so its vector-Jacobian product with a
tangent ``v`` is ``J v`` — which needs double backward of the operations ``func`` uses. jacrev
runs one backward pass per output element, jacfwd one forward and first backward pass and then
one more backward pass per input element (PyTorch batches these with vmap)."""
import functools

from .. import _C
from .. import autograd as _autograd
from ._level import Level
from ._pytree import tree_flatten, tree_unflatten, tree_map, treespec_pprint
from ._vmap import check_randomness_arg, randomness_error

_Tensor = _C.Tensor

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian"]

jvp_str = "jvp(f, primals, tangents)"


# ---------------------------------------------------------------------------------------------
# argnums


def _validate_and_wrap_argnum(argnum, num_args):
    if not isinstance(argnum, int):
        raise RuntimeError(f"argnum must be int, got: {type(argnum)}")
    if 0 <= argnum < num_args:
        return argnum
    if -num_args <= argnum < 0:
        return argnum + num_args
    raise RuntimeError(f"Got argnum={argnum}, but only {num_args} positional inputs")


def _argnum_positions(args, argnums):
    """The (wrapped) positions of ``argnums`` in ``args``, validated as functorch's _slice_argnums."""
    if not isinstance(argnums, (int, tuple)):
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    if isinstance(argnums, int):
        return (_validate_and_wrap_argnum(argnums, len(args)),)
    positions = tuple(_validate_and_wrap_argnum(a, len(args)) for a in argnums)
    if len(positions) == 0:
        raise RuntimeError("argnums must be non-empty")
    if len(set(positions)) != len(positions):
        raise RuntimeError(f"argnums elements must be unique, got {positions}")
    return positions


def _slice_argnums(args, argnums):
    """``args[argnums]``: one argument for an int ``argnums``, a tuple of them for a tuple."""
    positions = _argnum_positions(args, argnums)
    return args[positions[0]] if isinstance(argnums, int) else tuple(args[p] for p in positions)


def _differentiable_args(level, args, argnums):
    """``(new_args, diff)``: ``args`` with the Tensors of the ``argnums`` arguments (all of them
    when None) made differentiable at ``level``, and those arguments as _slice_argnums gives them."""
    positions = range(len(args)) if argnums is None else _argnum_positions(args, argnums)
    new_args = list(args)
    for p in positions:
        new_args[p] = tree_map(level.differentiable, args[p])
    new_args = tuple(new_args)
    if argnums is None:
        return new_args, new_args
    return new_args, _slice_argnums(new_args, argnums)


def _autograd_grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False):
    """autograd.grad over the outputs that require grad, zeros for the inputs they do not reach."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    pairs = [(out, g) for out, g in zip(outputs, grad_outputs) if out.requires_grad]
    if not pairs:
        return tuple(_C.zeros_like(inp) for inp in inputs)
    grads = _autograd.grad(tuple(p[0] for p in pairs), tuple(inputs), tuple(p[1] for p in pairs),
                           retain_graph=retain_graph, create_graph=create_graph, allow_unused=True)
    return tuple(_C.zeros_like(inp) if g is None else g for g, inp in zip(grads, inputs))


def _split_aux(output, has_aux, api):
    if not has_aux:
        return output, None
    if not (isinstance(output, tuple) and len(output) == 2):
        raise RuntimeError(f"{api}: output of function f should be a tuple: (output, aux) if has_aux is True")
    return output


def _assert_non_empty_tensor_output(output, api):
    if output == [None] or len(output) < 1:
        raise RuntimeError(f"{api}: Expected f to be a function that has non-empty output (got output = {output})")
    for o in output:
        if not isinstance(o, _Tensor):
            raise RuntimeError(f"{api}: expected f(*primals) to return only tensors, got unsupported type {type(o)}")


def _assert_non_empty_list_of_tensors(output, api, argname):
    if len(output) == 0:
        raise RuntimeError(f"{api}: Expected {argname} to contain at least one Tensor.")
    for out in output:
        if not isinstance(out, _Tensor):
            raise RuntimeError(f"{api}: Expected {argname} to only contain Tensors, got {type(out)}")


# ---------------------------------------------------------------------------------------------
# grad, grad_and_value


def _grad_and_value_call(func, argnums, has_aux, args, kwargs):
    level = Level()
    with _autograd.enable_grad():
        args, diff_args = _differentiable_args(level, args, argnums)
        output, aux = _split_aux(func(*args, **kwargs), has_aux, "grad_and_value(f)(*args)")
        if not isinstance(output, _Tensor):
            raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got {type(output)}")
        if output.dim() != 0:
            raise RuntimeError("grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got tensor "
                               f"with {output.dim()} dims. Maybe you wanted to use the vjp or jacrev APIs instead?")
        flat_diff, spec = tree_flatten(diff_args)
        create_graph = level.reaches_outer((output,))
        # retain_graph: the graph may be shared with aux or with results of enclosing levels; it
        # goes when the tensors holding it do.
        flat_grads = _autograd_grad((output,), flat_diff, retain_graph=True, create_graph=create_graph)
        grads = tree_unflatten([level.unwrap(g) for g in flat_grads], spec)
        output = level.unwrap(output)
        aux = level.unwrap_aux(aux) if has_aux else None
    if has_aux:
        return grads, (output, aux)
    return grads, output


def grad_and_value(func, argnums=0, has_aux=False):
    """Returns a function computing ``(gradient, value)`` of the scalar function ``func`` with
    respect to the ``argnums`` arguments (an int, or a tuple of ints for a tuple of gradients; each
    argument may be a pytree of Tensors, its gradient has the same structure). With ``has_aux``,
    ``func`` returns ``(output, aux)`` and the result is ``(gradient, (value, aux))``.

    The arguments need not require grad, and nothing is written to their ``.grad``. Results are
    differentiable for enclosing transforms (``grad(grad(f))``) and for tensors outside that require
    grad, and plain tensors otherwise. Grad mode outside is ignored; a ``no_grad`` inside ``func``
    is obeyed."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        return _grad_and_value_call(func, argnums, has_aux, args, kwargs)
    return wrapper


def grad(func, argnums=0, has_aux=False):
    """Returns a function computing the gradient of the scalar function ``func`` with respect to
    its ``argnums`` arguments (see :func:`grad_and_value`); with ``has_aux`` it returns
    ``(gradient, aux)``. Compose it freely: ``grad(grad(f))``, ``vmap(grad(f))`` (per-sample
    gradients), ``jacrev(grad(f))``."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        results = _grad_and_value_call(func, argnums, has_aux, args, kwargs)
        if has_aux:
            grads, (_, aux) = results
            return grads, aux
        return results[0]
    return wrapper


# ---------------------------------------------------------------------------------------------
# vjp, jacrev


class _ReverseLinearization:
    """``func`` run once at ``args`` on a new level, ready for vector-Jacobian products with
    respect to the ``argnums`` arguments (all arguments when None)."""

    def __init__(self, func, args, argnums, has_aux):
        self.level = Level()
        with _autograd.enable_grad():
            args, diff = _differentiable_args(self.level, args, argnums)
            output, aux = _split_aux(func(*args), has_aux, "vjp(f, *primals)")
            self.flat_out, self.out_spec = tree_flatten(output)
            _assert_non_empty_tensor_output(self.flat_out, "vjp(f, *primals)")
            for out in self.flat_out:
                if not out.is_floating_point():
                    raise RuntimeError("vjp(f, ...): All outputs of f must be floating-point or complex Tensors, "
                                       f"got Tensor with dtype {out.dtype}")
            self.flat_diff, self.diff_spec = tree_flatten(diff)
            self.outputs_reach_outer = self.level.reaches_outer(self.flat_out)
            self.output = tree_unflatten([self.level.unwrap(o) for o in self.flat_out], self.out_spec)
            self.aux = self.level.unwrap_aux(aux) if has_aux else None

    def pull(self, flat_cotangents, create_graph, retain_graph=True):
        """Flat vector-Jacobian products with the flat ``cotangents``, one per differentiated Tensor."""
        with _autograd.enable_grad():
            create_graph = create_graph and (self.outputs_reach_outer or self.level.reaches_outer(flat_cotangents))
            grads = _autograd_grad(self.flat_out, self.flat_diff, flat_cotangents, retain_graph=retain_graph,
                                   create_graph=create_graph)
            return [self.level.unwrap(g) for g in grads]


def vjp(func, *primals, has_aux=False):
    """Returns ``(func(*primals), vjp_fn)`` (``(output, vjp_fn, aux)`` with ``has_aux``):
    ``vjp_fn(cotangents)``, ``cotangents`` structured as the output, returns the tuple of
    vector-Jacobian products with respect to each of ``primals`` (pytrees of Tensors), each
    structured as its primal. ``vjp_fn`` may be called several times; its results are
    differentiable when it is called with grad mode on and they depend on an outer level or on
    cotangents that require grad (``create_graph=`` overrides the grad-mode default)."""
    lin = _ReverseLinearization(func, primals, None, has_aux)

    def wrapper(cotangents, retain_graph=True, create_graph=None):
        if create_graph is None:
            create_graph = _C.is_grad_enabled()
        flat_cotangents, cotangents_spec = tree_flatten(cotangents)
        if cotangents_spec != lin.out_spec:
            raise RuntimeError("Expected pytree structure of cotangents to be the same as pytree structure of outputs "
                               f"to the function. cotangents: {treespec_pprint(cotangents_spec)}, primal output: "
                               f"{treespec_pprint(lin.out_spec)}")
        return tree_unflatten(lin.pull(flat_cotangents, create_graph, retain_graph), lin.diff_spec)

    if has_aux:
        return lin.output, wrapper, lin.aux
    return lin.output, wrapper


def _jacrev_rows(lin):
    """Per differentiated input, the Jacobian rows of all outputs: a list of lists (input, then
    output) of tensors of size ``output.size() + input.size()``."""
    create_graph = _C.is_grad_enabled()
    per_input = [[] for _ in lin.flat_diff]
    for j, out in enumerate(lin.flat_out):
        rows = [[] for _ in lin.flat_diff]
        eye = _C.eye(out.numel(), dtype=out.dtype, device=out.device)
        for k in range(out.numel()):
            cotangents = [eye[k].view(out.shape) if i == j else _C.zeros_like(o) for i, o in enumerate(lin.flat_out)]
            for i, g in enumerate(lin.pull(cotangents, create_graph)):
                rows[i].append(g)
        for i, inp in enumerate(lin.flat_diff):
            if rows[i]:
                jac = _C.stack(rows[i], dim=0).view(out.shape + inp.shape)
            else:
                jac = inp.new_zeros(out.shape + inp.shape)
            per_input[i].append(jac)
    return per_input


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """Returns a function computing the Jacobian of ``func`` with respect to the ``argnums``
    arguments in reverse mode. For output ``o`` and input ``i`` the block has size
    ``o.shape + i.shape``; blocks nest as the output structure, then (for a tuple ``argnums``) a
    tuple over the arguments, then each argument's own structure. With ``has_aux`` it returns
    ``(jacobian, aux)``. graft computes one backward pass per output element (``chunk_size`` is
    checked and otherwise has no effect)."""
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    @functools.wraps(func)
    def wrapper_fn(*args):
        lin = _ReverseLinearization(func, args, argnums, has_aux)
        per_input = _jacrev_rows(lin)
        per_input = [[lin.level.unwrap(jac) for jac in jacs] for jacs in per_input]
        flat_output_input = tuple(tree_unflatten(list(col), lin.diff_spec) for col in zip(*per_input))
        result = tree_unflatten(list(flat_output_input), lin.out_spec)
        if has_aux:
            return result, lin.aux
        return result
    return wrapper_fn


# ---------------------------------------------------------------------------------------------
# jvp, jacfwd (double-vjp trick)


class _ForwardLinearization:
    """``func`` run once at ``args`` on a new level, with the first backward pass of the
    double-vjp trick done: ``g = J^T u`` for dummy cotangents ``u`` (zeros requiring grad), kept
    with its graph so that ``J v`` is the vector-Jacobian product of ``g`` with ``v``."""

    def __init__(self, func, args, argnums, has_aux):
        self.level = level = Level()
        with _autograd.enable_grad():
            args, diff = _differentiable_args(level, args, argnums)
            output, aux = _split_aux(func(*args), has_aux, jvp_str)
            self.flat_out, self.out_spec = tree_flatten(output)
            _assert_non_empty_tensor_output(self.flat_out, jvp_str)
            self.flat_diff = tree_flatten(diff)[0]
            self.u = [level.leaf(_C.zeros_like(o)) if o.requires_grad else None for o in self.flat_out]
            pairs = [(o, u) for o, u in zip(self.flat_out, self.u) if u is not None]
            self.g = [None] * len(self.flat_diff)
            if pairs:
                self.g = list(_autograd.grad(tuple(p[0] for p in pairs), tuple(self.flat_diff),
                                             tuple(p[1] for p in pairs), create_graph=True, allow_unused=True))
            self.outputs_reach_outer = level.reaches_outer(self.flat_out)
            self.output = tree_unflatten([level.unwrap(o) for o in self.flat_out], self.out_spec)
            self.aux = level.unwrap_aux(aux) if has_aux else None

    def push(self, flat_tangents, strict=False):
        """The flat Jacobian-vector products (one per output) with the flat ``tangents``."""
        with _autograd.enable_grad():
            pairs = [(g, t) for g, t in zip(self.g, flat_tangents) if g is not None and g.requires_grad]
            used_u = [u for u in self.u if u is not None]
            res = [None] * len(used_u)
            if pairs and used_u:
                create_graph = self.outputs_reach_outer or self.level.reaches_outer(flat_tangents)
                res = _autograd.grad(tuple(p[0] for p in pairs), tuple(used_u), tuple(p[1] for p in pairs),
                                     retain_graph=True, create_graph=create_graph, allow_unused=True)
            res = iter(res)
            tangents_out = []
            for out, u in zip(self.flat_out, self.u):
                t = next(res) if u is not None else None
                if t is None:
                    if strict:
                        raise RuntimeError("jvp(f, primals, tangents, strict=True): The output of f is independent "
                                           "of the inputs. This is not allowed with strict=True.")
                    t = _C.zeros_like(out)
                tangents_out.append(self.level.unwrap(t))
            return tangents_out


def _tangents_to_flat(primals, tangents, argnums):
    """Checks ``primals`` and ``tangents`` as functorch's jvp does; returns the flat tangents."""
    if not isinstance(primals, tuple):
        raise RuntimeError(f"{jvp_str}: Expected primals to be a tuple. E.g. it should be valid to call f(*primals).")
    diff_args = primals if argnums is None else _slice_argnums(primals, argnums)
    flat_primals, primals_spec = tree_flatten(diff_args)
    flat_tangents, tangents_spec = tree_flatten(tangents)
    if primals_spec != tangents_spec:
        raise RuntimeError(f"{jvp_str}: Expected primals and tangents to have the same python structure. For "
                           "example, if primals is a tuple of 3 tensors, tangents also must be. Got primals with "
                           f"structure {primals_spec} and tangents with structure {tangents_spec}")
    _assert_non_empty_list_of_tensors(flat_primals, jvp_str, "primals")
    _assert_non_empty_list_of_tensors(flat_tangents, jvp_str, "tangents")
    for p, t in zip(flat_primals, flat_tangents):
        if p.shape != t.shape:
            raise RuntimeError("Trying to set a forward gradient that has a different size than that of the original "
                               f"Tensor, this is not supported. Tensor is of size {list(p.shape)} while the given "
                               f"forward gradient is of size {list(t.shape)}.")
    return flat_tangents


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """Returns ``(func(*primals), J v)`` (``(output, jvp_out, aux)`` with ``has_aux``): the
    Jacobian of ``func`` at ``primals`` (a tuple of pytrees of Tensors) times ``tangents`` (the
    same structure and sizes), structured as the output.

    graft has no forward-mode AD: this is computed with the double-vjp trick (see the module
    docstring), so ``func`` must be twice differentiable in graft's engine. ``strict=True``
    raises when an output does not depend on the inputs."""
    flat_tangents = _tangents_to_flat(primals, tangents, None)
    lin = _ForwardLinearization(func, primals, None, has_aux)
    tangents_out = tree_unflatten(lin.push(flat_tangents, strict), lin.out_spec)
    if has_aux:
        return lin.output, tangents_out, lin.aux
    return lin.output, tangents_out


def _standard_basis(flat_primals):
    """One flat tuple of tangents per element of the flat primals: the standard basis."""
    numels = [p.numel() for p in flat_primals]
    for i, p in enumerate(flat_primals):
        eye = _C.eye(numels[i], dtype=p.dtype, device=p.device)
        for k in range(numels[i]):
            yield [eye[k].view(p.shape) if j == i else _C.zeros_like(q) for j, q in enumerate(flat_primals)]


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """Returns a function computing the Jacobian of ``func`` with respect to the ``argnums``
    arguments, nested as :func:`jacrev`'s. PyTorch computes it in forward mode; graft, which has
    no forward-mode AD, uses the double-vjp trick: one forward and first backward pass, then one
    backward pass per input element (``func`` must be twice differentiable in graft's engine).
    ``func`` runs once, so ``randomness`` only matters as ``"error"``: random operations in
    ``func`` then raise vmap's error, as PyTorch's vmapped jvp does."""
    check_randomness_arg(randomness)

    @functools.wraps(func)
    def wrapper_fn(*args):
        primals = _slice_argnums(args, argnums)
        flat_primals, primals_spec = tree_flatten(primals)
        state = _C.get_rng_state() if randomness == "error" else None
        lin = _ForwardLinearization(func, args, argnums, has_aux)
        if state is not None and not _C.equal(state, _C.get_rng_state()):
            _C.set_rng_state(state)
            randomness_error()
        columns = [lin.push(basis) for basis in _standard_basis(flat_primals)]
        numels = [p.numel() for p in flat_primals]
        jac_outs_ins = []
        for j, out in enumerate(lin.flat_out):
            if columns:
                jac = lin.level.unwrap(_C.stack([col[j] for col in columns], dim=-1))
                blocks = jac.split(numels, dim=-1)
            else:
                blocks = [out.new_zeros(out.shape + (0,)) for _ in flat_primals]
            blocks = [b.reshape(out.shape + p.shape) for b, p in zip(blocks, flat_primals)]
            jac_outs_ins.append(tree_unflatten(blocks, primals_spec))
        result = tree_unflatten(jac_outs_ins, lin.out_spec)
        if has_aux:
            return result, lin.aux
        return result
    return wrapper_fn


def hessian(func, argnums=0):
    """Returns a function computing the Hessian of ``func`` with respect to the ``argnums``
    arguments: ``jacfwd(jacrev(func, argnums), argnums)``, as PyTorch (here forward-over-reverse
    is reverse-over-reverse through the double-vjp trick)."""
    return jacfwd(jacrev(func, argnums), argnums)
