"""graft.func.vmap: the vectorizing map, with torch.func.vmap's signature, in_dims/out_dims
handling and error messages.

graft has no batching rules (no BatchedTensor): vmap evaluates ``func`` once per sample — each
mapped input is sliced at its in_dim (``select``, a differentiable view), ``func`` runs on the
slices, and every output is stacked at its out_dim. This is the semantics of PyTorch's own
fallback for operators without a batching rule: the results are those of a batched run (and
compose with graft.func's autograd transforms and with nested vmap), the speed is that of a
Python loop over the batch."""
import functools

from .. import _C
from ._pytree import tree_flatten, tree_unflatten, broadcast_to_and_flatten, tree_map

_Tensor = _C.Tensor

__all__ = ["vmap"]

_RANDOM_ERROR = ("vmap: called random operation while in randomness error mode. Please either use the 'same' or "
                 "'different' randomness flags on vmap or perform the randomness operation out of vmap")


def check_randomness_arg(randomness):
    if randomness not in ["error", "different", "same"]:
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}")


def randomness_error():
    raise RuntimeError(_RANDOM_ERROR)


def _get_name(func):
    if hasattr(func, "__name__"):
        return func.__name__
    if isinstance(func, functools.partial):
        return f"functools.partial({_get_name(func.func)}, ...)"
    return repr(func)


def _check_out_dims(out_dims, func):
    def check(x):
        if x is not None and not isinstance(x, int):
            raise ValueError(f"vmap({_get_name(func)}, ..., out_dims={out_dims}): `out_dims` must be an int, None or a "
                             "python collection of ints representing where in the outputs the vmapped dimension "
                             "should appear.")
    if not isinstance(out_dims, int):
        tree_map(check, out_dims)


def _process_batched_inputs(in_dims, args, func):
    """``(batch_size, flat_in_dims, flat_args, args_spec)``, validated as torch.func.vmap does."""
    name = _get_name(func)
    if not isinstance(in_dims, (int, tuple)):
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` to be int or a "
                         f"(potentially nested) tuple matching the structure of inputs, got: {type(in_dims)}.")
    if len(args) == 0:
        raise ValueError(f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you are trying "
                         "to vmap over a function with no inputs. The latter is unsupported.")
    flat_args, args_spec = tree_flatten(args)
    flat_in_dims = broadcast_to_and_flatten(in_dims, args_spec)
    if flat_in_dims is None:
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible with the "
                         f"structure of `inputs`. in_dims has structure {tree_flatten(in_dims)[1]} but inputs has "
                         f"structure {args_spec}.")
    for i, (arg, in_dim) in enumerate(zip(flat_args, flat_in_dims)):
        prefix = f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={in_dim}"
        if not isinstance(in_dim, int) and in_dim is not None:
            raise ValueError(f"{prefix} for an input but in_dim must be either an integer dimension or None.")
        if isinstance(in_dim, int) and not isinstance(arg, _Tensor):
            raise ValueError(f"{prefix} for an input but the input is of type {type(arg)}. We cannot vmap over "
                             "non-Tensor arguments, please use None as the respective in_dim")
        if in_dim is not None and not -arg.dim() <= in_dim < arg.dim():
            raise ValueError(f"{prefix} for some input, but that input is a Tensor of dimensionality {arg.dim()} so "
                             f"expected in_dim to satisfy -{arg.dim()} <= in_dim < {arg.dim()}.")
        if in_dim is not None and in_dim < 0:
            flat_in_dims[i] = in_dim % arg.dim()
    batch_sizes = [arg.size(d) for d, arg in zip(flat_in_dims, flat_args) if d is not None]
    if not batch_sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(size != batch_sizes[0] for size in batch_sizes):
        raise ValueError("vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
                         f"{batch_sizes} for the mapped dimension")
    return batch_sizes[0], flat_in_dims, flat_args, args_spec


def _run_per_sample(func, batch_size, flat_in_dims, flat_args, args_spec, kwargs, randomness):
    """``func`` on each sample; random operations are checked ('error') or replayed ('same')
    through the default generator's state."""
    if batch_size == 0:
        raise NotImplementedError("graft.func.vmap: a batch of size 0 is not supported (graft's vmap runs the "
                                  "function once per sample, and there is no sample to run it on)")
    start_state = _C.get_rng_state() if randomness != "different" else None
    outputs = []
    for i in range(batch_size):
        flat = [a if d is None else a.select(d, i) for a, d in zip(flat_args, flat_in_dims)]
        if randomness == "same":
            _C.set_rng_state(start_state)
        out = func(*tree_unflatten(flat, args_spec), **kwargs)
        if randomness == "error" and not _C.equal(start_state, _C.get_rng_state()):
            _C.set_rng_state(start_state)
            raise RuntimeError(_RANDOM_ERROR)
        outputs.append(out)
    return outputs


def _flat_out_dims(first_output, output_spec, out_dims, func):
    def incompatible_error():
        raise ValueError(f"vmap({_get_name(func)}, ..., out_dims={out_dims})(<inputs>): out_dims is not compatible "
                         f"with the structure of `outputs`. out_dims has structure {tree_flatten(out_dims)[1]} but "
                         f"outputs has structure {output_spec}.")

    if isinstance(first_output, _Tensor):
        if isinstance(out_dims, int) or out_dims is None:
            return [out_dims]
        if isinstance(out_dims, tuple) and len(out_dims) == 1:
            return list(out_dims)
        incompatible_error()
    flat = broadcast_to_and_flatten(out_dims, output_spec)
    if flat is None:
        incompatible_error()
    return flat


def _unbatched(name, samples):
    """The value of an output with out_dim None: the same in every sample (a Tensor that differs
    between samples is batched, and raises as in PyTorch)."""
    first = samples[0]
    if isinstance(first, _Tensor):
        for s in samples[1:]:
            if s is not first and not (isinstance(s, _Tensor) and s.shape == first.shape and _C.equal(s, first)):
                raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor when out_dim is None")
    return first


def _stack_outputs(outputs, out_dims, func):
    name = _get_name(func)
    flat_first, output_spec = tree_flatten(outputs[0])
    flat_samples = [flat_first]
    for out in outputs[1:]:
        flat, spec = tree_flatten(out)
        if spec != output_spec:
            raise ValueError(f"vmap({name}, ...): `{name}` returned outputs of different structures for different "
                             f"samples ({output_spec} and {spec}); graft's vmap runs it once per sample and needs one "
                             "structure")
        flat_samples.append(flat)
    flat_out_dims = _flat_out_dims(outputs[0], output_spec, out_dims, func)
    results = []
    for j, out_dim in enumerate(flat_out_dims):
        samples = [flat[j] for flat in flat_samples]
        if out_dim is None or samples[0] is None:
            results.append(_unbatched(name, samples))
            continue
        for s in samples:
            if not isinstance(s, _Tensor):
                raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type {type(s)}. Did you "
                                 "mean to set out_dims= to None for output?")
        results.append(_C.stack(samples, dim=out_dim))
    return tree_unflatten(results, output_spec)


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """Returns the vectorized ``func``: it takes the same inputs with an extra (batch) dimension
    at ``in_dims`` and returns the same outputs with the batch dimension at ``out_dims``.

    ``in_dims`` is an int or a (nested) tuple matching the positional arguments (None: not mapped,
    passed whole to every sample); keyword arguments are never mapped. ``out_dims`` is an int,
    None or a pytree of them matching the outputs (None: the output is the same for every sample
    and is returned once). ``randomness``: "error" raises when ``func`` draws from graft's
    default generator, "same" gives every sample the same draws, "different" independent ones.
    ``chunk_size`` is checked and otherwise has no effect.

    graft's vmap evaluates per sample (it has no batching rules yet): ``func`` runs once per batch
    element on slices of the inputs and the outputs are stacked. Results, autograd through it
    (``grad(vmap(f))``), nesting (``vmap(vmap(f))``) and composition with the autograd transforms
    (``vmap(grad(f))``: per-sample gradients) are those of PyTorch's vmap; the speed is that of a
    Python loop. Side effects in ``func`` happen once per sample."""
    check_randomness_arg(randomness)
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        _check_out_dims(out_dims, func)
        batch_size, flat_in_dims, flat_args, args_spec = _process_batched_inputs(in_dims, args, func)
        outputs = _run_per_sample(func, batch_size, flat_in_dims, flat_args, args_spec, kwargs, randomness)
        return _stack_outputs(outputs, out_dims, func)

    return wrapped
