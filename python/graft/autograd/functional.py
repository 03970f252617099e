"""graft.autograd.functional: higher-level derivatives of a whole function (vjp, jvp, jacobian,
hessian, vhp, hvp), with torch.autograd.functional's names, argument forms, result nesting and
error messages. Everything is computed with graft's reverse-mode engine (``autograd.grad`` with
``create_graph``); jvp and hvp use the double-backward trick. graft has no forward-mode AD and no
vmap, so ``vectorize=True`` and ``strategy="forward-mode"`` raise NotImplementedError."""
from .. import _C
from .. import autograd as _autograd  # the package: its grad() is looked up when called

__all__ = ["vjp", "jvp", "jacobian", "hessian", "vhp", "hvp"]

_STRATEGY_MSG = 'Expected strategy to be either "forward-mode" or "reverse-mode".'
_JACOBIAN_STRATEGY_MSG = (_STRATEGY_MSG + ' Hint: If your function has more outputs than inputs, "forward-mode" '
                          'tends to be more performant. Otherwise, prefer to use "reverse-mode".')

# Raised by _check_requires_grad when a tensor it checks does not require grad (strict mode).
_NO_GRAD_MSGS = {
    "outputs": "Output {} of the user-provided function does not require gradients. The outputs must be "
               "computed in a differentiable manner from the input when running in strict mode.",
    "grad_inputs": "The gradient with respect to input {} is independent of the inputs of the user-provided "
                   "function. This is not allowed in strict mode.",
    "jacobian": "While computing the hessian, found that the jacobian of the user-provided function with "
                "respect to input {} is independent of the input. This is not allowed in strict mode. You "
                "should ensure that your function is twice differentiable and that the jacobian depends on "
                "the inputs (this would be violated by a linear function for example).",
}

# Raised by _fill_in_zeros, per stage, when a gradient is missing (strict mode).
_MISSING_GRAD_MSGS = {
    "back": "The output of the user-provided function is independent of input {}. This is not allowed in "
            "strict mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {} in the grad_outputs when "
                  "using the double backward trick to compute forward mode gradients. This is not allowed in "
                  "strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {}. This is not allowed "
                   "in strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry {} in the "
                         "grad_jacobian. This is not allowed in strict mode as it prevents from using the double "
                         "backward trick to replace forward mode AD.",
}

_CONSTANT_JACOBIAN_MSG = ("The jacobian of the user-provided function is independent of input {}. This is not "
                          "allowed in strict mode when create_graph=True.")
_CONSTANT_HESSIAN_MSG = ("The hessian of the user-provided function is independent of input {}. This is not "
                         "allowed in strict mode when create_graph=True.")

_V_NONE_OUTPUT_MSG = ("The vector v can only be None if the user-provided function returns a single Tensor "
                      "with a single element.")
_V_NONE_INPUT_MSG = ("The vector v can only be None if the input to the user-provided function is a single "
                     "Tensor with a single element.")


# ---------------------------------------------------------------------------------------------
# Helpers


def _as_tuple(value, arg_name, fn_name):
    """Returns ``(was_tuple, tuple_of_tensors)`` for a Tensor or a tuple of Tensors; raises
    TypeError naming ``arg_name`` and ``fn_name`` for anything else."""
    was_tuple = isinstance(value, tuple)
    items = value if was_tuple else (value,)
    for index, item in enumerate(items):
        if isinstance(item, _C.Tensor):
            continue
        where = f"value at index {index}" if was_tuple else f"given {arg_name}"
        raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of Tensors "
                        f"but the {where} has type {type(item)}.")
    return was_tuple, items


def _tuple_postprocess(res, was_tuple):
    """Undoes _as_tuple on a result: ``was_tuple`` is one flag (a flat tuple) or a pair of flags
    (outer, inner) for a tuple of tuples; a False flag unwraps that level."""
    if isinstance(was_tuple, tuple):
        outer, inner = was_tuple
        if not inner:
            res = tuple(row[0] for row in res)
        return res if outer else res[0]
    return res if was_tuple else res[0]


def _grad_preprocess(tensors, create_graph, need_graph):
    """New tensor objects for ``tensors``: a differentiable alias (view) of those that require
    grad when ``create_graph``, else detached copies of the handle that require grad iff
    ``need_graph``. New objects let the engine tell the arguments apart from the same tensors
    captured by the user's function."""
    res = []
    for t in tensors:
        if create_graph and t.requires_grad:
            res.append(t.clone() if t.is_sparse else t.view_as(t))
        else:
            res.append(t.detach().requires_grad_(need_graph))
    return tuple(res)


def _grad_postprocess(tensors, create_graph):
    """Detaches the results (recursively for tuples of tuples) unless ``create_graph``."""
    if isinstance(tensors[0], _C.Tensor):
        return tensors if create_graph else tuple(t.detach() for t in tensors)
    return tuple(_grad_postprocess(row, create_graph) for row in tensors)


def _validate_v(v, refs, refs_was_tuple):
    """Checks that the tuple ``v`` has one tensor per tensor of ``refs``, each of the same size."""
    if len(v) != len(refs):
        if refs_was_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(refs)} but got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for index, (v_el, ref) in enumerate(zip(v, refs)):
        if v_el.size() != ref.size():
            prefix = f"Entry {index} in " if refs_was_tuple else ""
            raise RuntimeError(f"{prefix}v has invalid size: should be {ref.size()} but got {v_el.size()}.")


def _check_requires_grad(tensors, kind, strict):
    """In strict mode, raises when an entry of ``tensors`` is None or does not require grad,
    with the message for ``kind`` (see _NO_GRAD_MSGS)."""
    if not strict:
        return
    for index, t in enumerate(tensors):
        if t is None:
            raise RuntimeError(_MISSING_GRAD_MSGS["back"].format(index))
        if not t.requires_grad:
            raise RuntimeError(_NO_GRAD_MSGS[kind].format(index))


def _autograd_grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None):
    """autograd.grad over the outputs that exist and require grad (None entries and constants
    are skipped); returns None for the inputs they do not reach, or for all inputs when no
    output is differentiable."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    pairs = [(out, g) for out, g in zip(outputs, grad_outputs) if out is not None and out.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    outs = tuple(out for out, _ in pairs)
    gouts = tuple(g for _, g in pairs)
    return _autograd.grad(outs, inputs, gouts, allow_unused=True, create_graph=create_graph,
                          retain_graph=retain_graph)


def _fill_in_zeros(grads, refs, strict, create_graph, stage):
    """Replaces the None entries of ``grads`` by zeros shaped like ``refs``; in strict mode a None
    (or, with ``create_graph``, a gradient that does not require grad) raises instead, with the
    message for ``stage`` (see _MISSING_GRAD_MSGS)."""
    res = []
    for index, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_MISSING_GRAD_MSGS[stage].format(index))
            g = _C.zeros_like(refs[index])
        elif strict and create_graph and not g.requires_grad:
            msg = _CONSTANT_HESSIAN_MSG if "double" in stage else _CONSTANT_JACOBIAN_MSG
            raise RuntimeError(msg.format(index))
        res.append(g)
    return tuple(res)


def _prepare_v(v, refs, refs_was_tuple, fn_name, create_graph, none_msg):
    """Tuples, detaches and checks the vector ``v`` against ``refs``; None is allowed only when
    ``refs`` is a single one-element tensor (autograd then seeds it with a one)."""
    if v is None:
        if len(refs) != 1 or refs[0].nelement() != 1:
            raise RuntimeError(none_msg)
        return None
    _, v = _as_tuple(v, "v", fn_name)
    v = _grad_preprocess(v, create_graph=create_graph, need_graph=False)
    _validate_v(v, refs, refs_was_tuple)
    return v


def _last_backward(outputs, inputs, v, refs, strict, create_graph, stage):
    """The final backward pass of vjp/jvp/vhp/hvp, zeros filled in for independent entries. It runs in
    the caller's grad mode: the engine itself records a graph iff ``create_graph``, even under no_grad."""
    grads = _autograd_grad(outputs, inputs, v, create_graph=create_graph)
    return _fill_in_zeros(grads, refs, strict, create_graph, stage)


def _call(func, inputs, fn_name, strict):
    """Runs ``func(*inputs)``; returns (was_tuple, tuple of outputs), checked as the outputs of
    ``fn_name``."""
    was_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", fn_name)
    _check_requires_grad(outputs, "outputs", strict=strict)
    return was_tuple, outputs


# ---------------------------------------------------------------------------------------------
# vjp, jvp


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """Computes ``func(*inputs)`` and the vector-Jacobian product ``v^T J`` at ``inputs``.

    ``inputs`` is a Tensor or a tuple of Tensors; ``v`` matches the output(s) of ``func`` and may
    be None only when ``func`` returns a single one-element Tensor. Returns
    ``(func_output, vjp)``, ``vjp`` shaped (and tupled) as ``inputs``. ``create_graph=True`` makes
    both differentiable (with history back to ``inputs`` that require grad); ``strict=True``
    raises when an input does not influence the outputs instead of returning zeros for it."""
    with _autograd.enable_grad():
        inputs_was_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        outputs_was_tuple, outputs = _call(func, inputs, "vjp", strict)
        v = _prepare_v(v, outputs, outputs_was_tuple, "vjp", create_graph, _V_NONE_OUTPUT_MSG)
    res = _last_backward(outputs, inputs, v, inputs, strict, create_graph, "back")
    outputs = _grad_postprocess(outputs, create_graph)
    res = _grad_postprocess(res, create_graph)
    return _tuple_postprocess(outputs, outputs_was_tuple), _tuple_postprocess(res, inputs_was_tuple)


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """Computes ``func(*inputs)`` and the Jacobian-vector product ``J v`` at ``inputs``.

    ``v`` matches ``inputs`` (a Tensor or a tuple of Tensors) and may be None only when the input
    is a single one-element Tensor. Returns ``(func_output, jvp)``, ``jvp`` shaped (and tupled)
    as the output. graft has no forward-mode AD: this uses the double-backward trick (``u -> J^T u``
    is linear, and its vector-Jacobian product with ``v`` is ``J v``), so the operations in ``func``
    need double backward in graft's engine. ``create_graph`` and ``strict`` are as for :func:`vjp`."""
    with _autograd.enable_grad():
        inputs_was_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        v = _prepare_v(v, inputs, inputs_was_tuple, "jvp", create_graph, _V_NONE_INPUT_MSG)
        outputs_was_tuple, outputs = _call(func, inputs, "jvp", strict)
        # u: dummy cotangents; J^T u is linear in u, so differentiating it by u against v gives J v.
        u = tuple(_C.zeros_like(out, requires_grad=True) for out in outputs)
        grad_inputs = _autograd_grad(outputs, inputs, u, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict=strict)
    res = _last_backward(grad_inputs, u, v, outputs, strict, create_graph, "back_trick")
    outputs = _grad_postprocess(outputs, create_graph)
    res = _grad_postprocess(res, create_graph)
    return _tuple_postprocess(outputs, outputs_was_tuple), _tuple_postprocess(res, outputs_was_tuple)


# ---------------------------------------------------------------------------------------------
# jacobian, hessian


def _no_vectorize(strict):
    """vectorize=True on the reverse-mode path: PyTorch's strict-mode error first, then graft's
    missing feature."""
    if strict:
        raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not "
                           "supported together. Please either set `strict=False` or `vectorize=False`.")
    raise NotImplementedError("graft.autograd.functional.jacobian: vectorize=True needs batched gradients "
                              "(vmap, autograd.grad(is_grads_batched=True)), which graft does not have. "
                              "Use vectorize=False: the result is the same, computed one row at a time.")


def _forward_mode_jacobian(create_graph, strict, vectorize):
    """strategy="forward-mode": raises PyTorch's errors for the combinations it rejects, and
    NotImplementedError for the rest, as graft has no forward-mode AD."""
    if create_graph:
        raise NotImplementedError('torch.autograd.functional.jacobian: `create_graph=True` and '
                                  '`strategy="forward-mode"` are not supported together (yet). Please either '
                                  'set `create_graph=False` or `strategy="reverse-mode"`.')
    if strict:
        raise RuntimeError('torch.autograd.functional.jacobian: `strict=True` and `strategy="forward-mode"` '
                           'are not supported together (yet). Please either set `strict=False` or '
                           '`strategy="reverse-mode"`.')
    if not vectorize:
        raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse Hessian is"
                                  "only implemented for `vectorize=True`.")
    raise NotImplementedError('graft.autograd.functional.jacobian: strategy="forward-mode" needs forward-mode '
                              'AD (dual tensors) and vmap, which graft does not have. Use '
                              'strategy="reverse-mode".')


def _jacobian_rows(out, out_index, inputs, create_graph, strict):
    """The Jacobian of one output with respect to each input, one backward pass per element of
    ``out``: a tuple with, per input, a tensor of size ``out.size() + input.size()``."""
    rows = tuple([] for _ in inputs)
    flat = out.reshape(-1)
    for k in range(out.nelement()):
        grads = _autograd_grad((flat[k],), inputs, retain_graph=True, create_graph=create_graph)
        for in_index, (g, inp) in enumerate(zip(grads, inputs)):
            if g is None:
                if strict:
                    raise RuntimeError(f"Output {out_index} of the user-provided function is independent of "
                                       f"input {in_index}. This is not allowed in strict mode.")
                g = _C.zeros_like(inp)
            elif strict and create_graph and not g.requires_grad:
                raise RuntimeError(_CONSTANT_JACOBIAN_MSG.format(in_index))
            rows[in_index].append(g)
    return tuple(_C.stack(r, dim=0).view(out.size() + inp.size()) for r, inp in zip(rows, inputs))


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    """Computes the Jacobian of ``func`` at ``inputs`` (a Tensor or a tuple of Tensors).

    For one input and one output the result is a Tensor of size ``output.size() + input.size()``;
    when either is a tuple the result is a tuple over it, and when both are, a tuple (over outputs)
    of tuples (over inputs), ``result[i][j]`` being d output_i / d input_j. It is computed in
    reverse mode, one backward pass per output element. ``create_graph=True`` makes it
    differentiable; ``strict=True`` raises when an output is independent of an input instead of
    returning zeros. ``vectorize=True`` and ``strategy="forward-mode"`` need vmap / forward-mode AD,
    which graft lacks: they raise (PyTorch's own error first where it has one)."""
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError(_JACOBIAN_STRATEGY_MSG)
    if strategy == "forward-mode":
        _forward_mode_jacobian(create_graph, strict, vectorize)
    with _autograd.enable_grad():
        inputs_was_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        outputs_was_tuple, outputs = _call(func, inputs, "jacobian", strict)
        if vectorize:
            _no_vectorize(strict)
        jac = tuple(_jacobian_rows(out, i, inputs, create_graph, strict) for i, out in enumerate(outputs))
        jac = _grad_postprocess(jac, create_graph)
        return _tuple_postprocess(jac, (outputs_was_tuple, inputs_was_tuple))


def _scalar_output(func, inputs, fn_name, strict):
    """Runs ``func(*inputs)`` and checks that it returned a single one-element Tensor."""
    was_tuple, outputs = _call(func, inputs, fn_name, strict)
    if was_tuple:
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if outputs[0].nelement() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should contain a single "
                           "element")
    return outputs


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse-mode"):
    """Computes the Hessian of the scalar function ``func`` at ``inputs`` (a Tensor or a tuple of
    Tensors), as the Jacobian of its gradient.

    For one input the result is a Tensor of size ``input.size() + input.size()``; for a tuple of
    inputs it is a tuple of tuples, ``result[i][j]`` being d^2 func / d input_i d input_j, of size
    ``input_i.size() + input_j.size()``. ``func`` must return a single one-element Tensor.
    ``create_graph`` and ``strict`` are as for :func:`jacobian`; ``vectorize=True`` and
    ``outer_jacobian_strategy="forward-mode"`` raise, as there."""
    inputs_was_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError(_STRATEGY_MSG)

    def scalar_func(*inp):
        return _scalar_output(func, inp, "hessian", strict)[0].squeeze()

    def gradient(*inp):
        grads = jacobian(scalar_func, inp, create_graph=True)
        _check_requires_grad(grads, "jacobian", strict=strict)
        return grads

    res = jacobian(gradient, inputs, create_graph=create_graph, strict=strict, vectorize=vectorize,
                   strategy=outer_jacobian_strategy)
    return _tuple_postprocess(res, (inputs_was_tuple, inputs_was_tuple))


# ---------------------------------------------------------------------------------------------
# vhp, hvp


def _first_gradient(func, inputs, v, fn_name, create_graph, strict):
    """Common start of vhp and hvp: prepares ``inputs`` and ``v``, runs the scalar function and
    returns (inputs_was_tuple, inputs, v, outputs, gradient of the output built with a graph)."""
    inputs_was_tuple, inputs = _as_tuple(inputs, "inputs", fn_name)
    inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
    v = _prepare_v(v, inputs, inputs_was_tuple, fn_name, create_graph, _V_NONE_INPUT_MSG)
    outputs = _scalar_output(func, inputs, fn_name, strict)
    grads = _autograd_grad(outputs, inputs, create_graph=True)
    _check_requires_grad(grads, "jacobian", strict=strict)
    return inputs_was_tuple, inputs, v, outputs, grads


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """Computes ``func(*inputs)`` and the vector-Hessian product ``v^T H`` of the scalar function
    ``func`` at ``inputs``.

    ``v`` matches ``inputs`` and may be None only when the input is a single one-element Tensor.
    Returns ``(func_output, vhp)``, ``vhp`` shaped (and tupled) as ``inputs``. ``create_graph``
    and ``strict`` are as for :func:`vjp`."""
    with _autograd.enable_grad():
        inputs_was_tuple, inputs, v, outputs, grads = _first_gradient(func, inputs, v, "vhp", create_graph, strict)
    res = _last_backward(grads, inputs, v, inputs, strict, create_graph, "double_back")
    outputs = _grad_postprocess(outputs, create_graph)
    res = _grad_postprocess(res, create_graph)
    return outputs[0], _tuple_postprocess(res, inputs_was_tuple)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """Computes ``func(*inputs)`` and the Hessian-vector product ``H v`` of the scalar function
    ``func`` at ``inputs``.

    Arguments and result are as for :func:`vhp` (``H v == (v^T H)^T``, so the two agree for a
    twice continuously differentiable ``func``); this one uses the double-backward trick on top
    of the gradient, one backward pass more than :func:`vhp`."""
    with _autograd.enable_grad():
        inputs_was_tuple, inputs, v, outputs, grads = _first_gradient(func, inputs, v, "hvp", create_graph, strict)
        # u: dummy cotangents; H^T u is linear in u, so differentiating it by u against v gives H v.
        u = tuple(_C.zeros_like(inp, requires_grad=True) for inp in inputs)
        double_back = _autograd_grad(grads, inputs, u, create_graph=True)
    res = _last_backward(double_back, u, v, inputs, strict, create_graph, "double_back_trick")
    outputs = _grad_postprocess(outputs, create_graph)
    res = _grad_postprocess(res, create_graph)
    return outputs[0], _tuple_postprocess(res, inputs_was_tuple)
