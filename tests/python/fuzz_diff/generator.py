"""The surface (what is called) and the cases (with what).

The surface is derived from the package: public functions of ``graft``, public methods, properties
and Python operators of ``graft.Tensor``, and public functions of ``graft.nn.functional`` (ids
F.name) and of ``graft.linalg`` (ids linalg.name), each kept when torch has the same name in the
same place, less DENY below. Each callable's parameters come
from its own signature (pybind11's ``name(arg: type = default)`` docstring lines, every overload, or
``inspect.signature``); where graft only says ``(*args, **kwargs)`` the first line of torch's
docstring is used instead. ``discover()`` needs graft and torch and runs in a child
(runner.py --discover); everything else here is numpy only.

A case is a JSON object. Its arguments are *specs*: tensors as a recipe (shape, dtype, layout,
value kind, seed, requires_grad) that make_array() and runner.build() turn into identical inputs
for both libraries; Python values as literals; tuples, lists, slices, dtypes, numpy arrays and
plain objects as tagged dicts. A case is a pure function of (seed, callable id, round), so adding
a callable to graft does not change the cases drawn for the others.
"""
import keyword
import math
import re
import zlib

import numpy as np

# ---------------------------------------------------------------------------------------------
# What is not compared (keep this short; every entry says why).
DENY = {
    # global state: calling them changes the behaviour of every later case in the child
    "torch.manual_seed": "global RNG state setter",
    "torch.seed": "reseeds the global RNG from the clock (random value)",
    "torch.initial_seed": "value depends on the RNG history of the process",
    "torch.get_rng_state": "RNG states are library-specific byte layouts",
    "torch.set_rng_state": "global RNG state setter; the state layout is library-specific",
    "torch.set_num_threads": "global thread-pool setter",
    "torch.get_num_threads": "machine-dependent value",
    "torch.set_default_dtype": "global default-dtype setter",
    "torch.set_autocast_enabled": "global autocast-state setter (1.13 takes (enabled), 2.x (device_type, enabled); "
                                  "tests/python/test_autocast.py)",
    "torch.set_autocast_cpu_enabled": "global autocast-state setter (tests/python/test_autocast.py)",
    "torch.set_autocast_cpu_dtype": "global autocast-state setter (tests/python/test_autocast.py)",
    "torch.is_autocast_enabled": "1.13 takes no argument, 2.x a device_type (tests/python/test_autocast.py)",
    # I/O and foreign-memory protocols
    "torch.save": "file I/O (tests/python/test_serialization.py)",
    "torch.load": "file I/O (tests/python/test_serialization.py)",
    "torch.from_dlpack": "needs a DLPack producer object, not a value",
    "Tensor.__dlpack__": "returns an opaque capsule",
    "Tensor.__dlpack_device__": "device-type enum of the DLPack protocol, not a tensor value",
    # identities, addresses, library-specific objects
    "Tensor.data_ptr": "a memory address",
    "Tensor.__hash__": "id()-based",
    "Tensor.grad_fn": "autograd node objects (tests/python/test_parity_autograd.py)",
    "Tensor.register_hook": "takes a Python callable; hooks are covered by test_parity_autograd.py",
    "Tensor.__repr__": "printing has golden tests in tests/core; float formatting is not a value",
    "Tensor.__format__": "printing (see __repr__)",
    "Tensor.__reduce_ex__": "pickling protocol: library-specific reconstructors",
    "Tensor.__copy__": "not in torch.Tensor (torch falls back to object.__copy__)",
    "Tensor.__init__": "constructor protocol, not an operation",
}

# Callables whose values are random or uninitialised: shapes, dtypes and errors are compared,
# values and gradients are not.
VALUES_UNSPECIFIED = {
    "torch.rand", "torch.randn", "torch.randint", "torch.randperm", "torch.rand_like",
    "torch.randn_like", "torch.randint_like", "torch.empty", "torch.empty_like", "Tensor.new_empty",
    "Tensor.normal_", "Tensor.uniform_", "F.dropout", "Tensor.bernoulli_", "Tensor.random_", "Tensor.exponential_",
    "Tensor.geometric_", "Tensor.log_normal_", "Tensor.cauchy_", "F.dropout1d", "F.dropout2d", "F.dropout3d",
    "F.alpha_dropout", "F.feature_alpha_dropout", "F.rrelu", "torch.bernoulli", "Tensor.bernoulli", "torch.normal",
}

# torch-level functions and Tensor methods made of torch.linalg's factorizations: drawn with the
# linalg recipes (CaseGen.linalg_recipe), as the functions of graft.linalg (ids linalg.name) are.
TORCH_LINALG = {"det", "slogdet", "logdet", "inverse", "svd", "pinverse", "cholesky_solve", "cholesky_inverse",
                "triangular_solve", "qr", "cholesky", "matrix_power"}

# Parameters never generated (covered elsewhere or meaningless on a CPU-only build).
SKIP_PARAMS = {
    "out": "out= is not part of graft's surface",
    "layout": "only strided tensors exist",
    "device": "CPU-only builds on both sides",
    "pin_memory": "CPU-only builds on both sides",
    "memory_format": "graft has one memory format",
    "generator": "random generators are library-specific objects",
    "_stacklevel": "private warning plumbing",
    "hook": "callables (see DENY)",
    "kwargs": "**kwargs placeholder",
}

# Python object protocol dunders that graft.Tensor defines but are not operations.
OBJECT_PROTOCOL = {"__init__", "__dict__", "__doc__", "__module__", "__new__", "__getattribute__",
                   "__setattr__", "__delattr__", "__dir__", "__sizeof__", "__subclasshook__",
                   "__init_subclass__", "__class__", "__reduce__", "__getstate__", "__str__"}

DTYPES = ["float32", "float64", "int64", "int32", "bool"]
FLOAT_DTYPES = ("float32", "float64")

# "special" float values: NaN, infinities, signed zeros, exact halves and ones (ties, rounding)
SPECIAL_FLOATS = [math.nan, math.inf, -math.inf, -0.0, 0.0, 0.5, -0.5, 1.5, 2.5, 1.0, -1.0]
# "extreme" float values: near overflow, subnormal, beyond int range. Results on these depend on
# accumulation order and intermediate precision, so value differences are classed overflow_order.
EXTREME_FLOATS = [1e38, -1e38, 3.4e38, -3.4e38, 1e308, -1e308, 1e-45, 1e-310, 2.0 ** 31, 2.0 ** 63, -2.0 ** 63,
                  math.nan, math.inf]
SPECIAL_INTS = [0, -1, 1, 2 ** 31 - 1, -2 ** 31, 2 ** 62, 2 ** 63 - 1, -2 ** 63, 2 ** 31, 255, -128]
HUGE_INTS = [2 ** 31, 2 ** 31 - 1, 2 ** 32, 2 ** 40, 2 ** 62, 2 ** 63 - 1, -2 ** 63, 2 ** 63, 2 ** 64, -2 ** 62]

LAYOUTS = ["contig", "transposed", "strided", "expanded", "offset", "overlap"]


# ---------------------------------------------------------------------------------------------
# Signatures

def _split_top(s):
    """Splits a parameter list on top-level commas (brackets and quotes respected)."""
    out, depth, cur, quote = [], 0, [], None
    for ch in s:
        if quote:
            cur.append(ch)
            if ch == quote:
                quote = None
            continue
        if ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
            continue
        cur.append(ch)
    if "".join(cur).strip():
        out.append("".join(cur).strip())
    return out


def parse_params(text):
    """'a: T = d, *, b=1, *size' -> [{'name','type','default','required','kwonly','var'}]."""
    params, kwonly = [], False
    for tok in _split_top(text):
        tok = tok.replace("\\*", "*").strip()
        if tok in ("*", "/"):
            kwonly = kwonly or tok == "*"
            continue
        if tok.startswith("**"):
            continue
        var = tok.startswith("*")
        tok = tok.lstrip("*")
        default = None
        if "=" in tok:
            tok, default = tok.split("=", 1)
            default = default.strip()
        name, _, typ = tok.partition(":")
        name = name.strip()
        if not name.isidentifier():
            continue
        params.append({"name": name, "type": typ.strip(), "default": default,
                       "required": default is None and not var, "kwonly": kwonly, "var": var})
        if var:
            kwonly = True
    return params


def _doc_signatures(doc, name):
    """Every 'name(...)' line of a pybind11 / torch docstring, as parameter lists."""
    sigs = []
    for line in (doc or "").splitlines():
        line = line.strip()
        m = re.match(r"^(?:\d+\.\s*)?" + (re.escape(name) if name else r"[A-Za-z_]\w*") + r"\((.*?)\)\s*(?:->.*)?$", line)
        if m:
            sigs.append(parse_params(m.group(1)))
    return sigs


def _is_vague(params):
    """(*args, **kwargs) or (input, *args, **kwargs): nothing to go on."""
    return any(p["var"] and p["name"] == "args" for p in params)


def _signatures(obj, name, torch_obj, torch_fallback=None, method=False, kwonly_marks=False):
    """Overloads of a callable: graft's docstring lines, else inspect, else torch's docstring.
    kwonly_marks: keep inspect's keyword-only marks (a bare '*' before the first keyword-only
    parameter); the namespaces discovered before graft.linalg go without them, so that their cases
    stay as they were drawn."""
    import inspect
    # pybind11 names aliases by their target (absolute -> "abs(input: Tensor)"): any name will do
    sigs = [s for s in _doc_signatures(getattr(obj, "__doc__", ""), None) if not _is_vague(s)]
    src = "graft-doc"
    if not sigs and not _doc_signatures(getattr(obj, "__doc__", ""), None):
        try:
            sig = inspect.signature(obj)
            parts, starred = [], False
            for p in sig.parameters.values():
                if kwonly_marks and p.kind == p.KEYWORD_ONLY and not starred:
                    parts.append("*")
                starred = starred or p.kind in (p.KEYWORD_ONLY, p.VAR_POSITIONAL)
                parts.append(str(p))
            text = ", ".join(parts)
            params = parse_params(text)
            if not _is_vague(params):
                sigs, src = [params], "inspect"
        except (TypeError, ValueError):
            pass
    if not sigs:
        sigs = _doc_signatures(getattr(torch_obj, "__doc__", ""), name)
        src = "torch-doc"
        if not sigs and torch_fallback is not None:
            sigs = [s[1:] for s in _doc_signatures(getattr(torch_fallback, "__doc__", ""), name)]
        if not sigs:  # nothing known: a function of one tensor, a method of none
            sigs, src = ([[]] if method else [parse_params("input")]), "none"
    if method:  # drop the receiver
        sigs = [[p for p in s if p["name"] != "self"] for s in sigs]
    else:
        sigs = [[p for p in s if p["name"] != "self"] for s in sigs]
    # dedup
    seen, uniq = set(), []
    for s in sigs:
        key = tuple((p["name"], p["required"], p["kwonly"], p["var"]) for p in s)
        if key not in seen:
            seen.add(key)
            uniq.append(s)
    return uniq, src


def discover(graft, torch):
    """The compared surface: a sorted list of {'id','ns','name','kind','overloads','src'}."""
    import inspect
    import graft.nn.functional as GF
    import torch.nn.functional as TF
    out = []

    def add(ns, name, kind, overloads=None, src=""):
        cid = f"{ns}.{name}"
        if cid in DENY:
            return
        out.append({"id": cid, "ns": ns, "name": name, "kind": kind, "overloads": overloads or [[]], "src": src})

    def functions(module, reference, ns, kwonly_marks=False):  # the public functions `reference` has too
        for name in dir(module):
            if name.startswith("_") or not hasattr(reference, name):
                continue
            obj = getattr(module, name)
            if inspect.ismodule(obj) or isinstance(obj, type) or not callable(obj):
                continue
            sigs, src = _signatures(obj, name, getattr(reference, name), kwonly_marks=kwonly_marks)
            add(ns, name, "call", sigs, src)

    functions(graft, torch, "torch")
    for name in dir(graft.Tensor):
        dunder = name.startswith("__") and name.endswith("__")
        if name.startswith("_") and not dunder:
            continue
        if dunder and (name not in vars(graft.Tensor) or name in OBJECT_PROTOCOL):
            continue
        if not hasattr(torch.Tensor, name):
            continue
        obj = getattr(graft.Tensor, name)
        if isinstance(obj, property) or not callable(obj):
            add("Tensor", name, "attr", [[]], "property")
            continue
        sigs, src = _signatures(obj, name, getattr(torch.Tensor, name), getattr(torch, name, None), method=True)
        add("Tensor", name, "call", sigs, src)
    functions(GF, TF, "F")
    functions(graft.linalg, torch.linalg, "linalg", kwonly_marks=True)
    out.sort(key=lambda e: e["id"])
    return out


# ---------------------------------------------------------------------------------------------
# Value construction (shared by the child and the reproducer)

def base_shape(spec):
    """Shape of the contiguous base tensor from which the layout view is taken."""
    shape, lay = list(spec["shape"]), spec.get("layout", "contig")
    if lay == "transposed":
        shape[-1], shape[-2] = shape[-2], shape[-1]
    elif lay == "strided":
        shape[-1] = shape[-1] * 2
    elif lay == "expanded":
        for d in spec["edims"]:
            shape[d] = 1
    elif lay == "offset":
        shape = [int(np.prod(shape, dtype=np.int64)) + spec["off"]]
    elif lay == "overlap":
        n = 0 if 0 in shape else 1 + sum((s - 1) * st for s, st in zip(shape, spec["strides"]))
        shape = [n]
    return shape


# Matrix values with structure (the last two dims of the tensor as seen, whatever its layout):
# symmetric positive-definite, symmetric, lower / upper triangular with a positive diagonal (a
# Cholesky factor), and of a rank below min(rows, cols) (small integers: exact in every dtype).
STRUCTURED = ("spd", "sym", "lowtri", "uptri", "rankdef")


def _structured(spec, base, rng):
    """The flat base values of a STRUCTURED spec: the structured matrices, placed where the layout
    view reads them (an overlap view, or an expanded matrix dim, reads filler values instead)."""
    shape, lay = [int(s) for s in spec["shape"]], spec.get("layout", "contig")
    filler = np.round(rng.standard_normal(int(np.prod(base, dtype=np.int64))) * 2.0, 2).reshape(base)
    if len(shape) < 2:
        return filler.reshape(-1)
    r, c, vals = shape[-2], shape[-1], spec["vals"]
    m = np.round(rng.standard_normal(shape) * 2.0, 2)
    if vals == "spd" and r == c:
        m = np.round(rng.standard_normal(shape), 1)
        m = m @ np.swapaxes(m, -1, -2) + r * np.eye(r)
        m = (m + np.swapaxes(m, -1, -2)) / 2
    elif vals == "sym" and r == c:
        m = (m + np.swapaxes(m, -1, -2)) / 2
    elif vals in ("lowtri", "uptri"):
        diag = np.round(rng.uniform(0.5, 2.5, shape[:-2] + [min(r, c)]), 2)
        m = np.tril(m, -1) if vals == "lowtri" else np.triu(m, 1)
        k = np.arange(min(r, c))
        m[..., k, k] = diag
    elif vals == "rankdef":
        k = int(rng.integers(0, min(r, c))) if min(r, c) > 0 else 0
        m = rng.integers(-2, 3, shape[:-2] + [r, k]).astype(np.float64) @ \
            rng.integers(-2, 3, shape[:-2] + [k, c]).astype(np.float64)
    if lay == "contig":
        out = m
    elif lay == "transposed":
        out = np.swapaxes(m, -1, -2)
    elif lay == "strided":
        out = filler
        out[..., ::2] = m
    elif lay == "expanded":
        out = m[tuple(slice(0, 1) if d in spec["edims"] else slice(None) for d in range(len(shape)))]
    elif lay == "offset":
        out = filler
        out[spec["off"]:] = m.reshape(-1)
    else:
        out = filler
    return np.ascontiguousarray(out).reshape(-1)


def make_array(spec):
    """The base array of a tensor spec (numpy, exact dtype), deterministic from spec['seed']."""
    rng = np.random.default_rng(spec["seed"])
    shape = base_shape(spec)
    n = int(np.prod(shape, dtype=np.int64))
    dt, vals = spec["dtype"], spec.get("vals", "normal")
    if vals == "normal":
        a = np.round(rng.standard_normal(n) * 2.0, 2)
    elif vals == "smallint":
        a = rng.integers(-3, 4, n).astype(np.float64)
    elif vals == "pos":
        a = np.round(rng.uniform(0.1, 3.0, n), 2)
    elif vals == "prob":
        a = np.round(rng.uniform(0.0, 1.0, n), 2)
    elif vals == "index":
        a = rng.integers(spec.get("lo", 0), max(spec.get("hi", 1), spec.get("lo", 0) + 1), n).astype(np.float64)
    elif vals in STRUCTURED:
        a = _structured(spec, shape, rng)
    elif vals == "nan":  # NaNs among plain values, no infinities (LAPACK's SVD never returns on those)
        a = np.round(rng.standard_normal(n) * 2.0, 2)
        a[rng.random(n) < 0.2] = math.nan
    elif vals in ("special", "extreme"):
        a = np.round(rng.standard_normal(n) * 2.0, 2)
        pool = (SPECIAL_FLOATS if vals == "special" else EXTREME_FLOATS) if dt in FLOAT_DTYPES else SPECIAL_INTS
        hit = rng.random(n) < 0.35
        picks = rng.integers(0, len(pool), n)
        a = a.astype(object)
        for k in np.nonzero(hit)[0]:
            a[k] = pool[picks[k]]
    else:
        raise ValueError(vals)
    if dt == "bool":
        out = np.array([bool(v) and v == v for v in a.tolist()], dtype=np.bool_) if vals in ("special", "extreme") \
            else (np.asarray(a, dtype=np.float64) > 0)
        if vals in ("smallint", "index"):
            out = np.asarray(a, dtype=np.float64) != 0
    elif dt in FLOAT_DTYPES:
        with np.errstate(all="ignore"):
            out = np.array([float(v) for v in a.tolist()], dtype=np.float64).astype(dt)
    else:
        info = np.iinfo(dt)

        def to_int(v):
            if isinstance(v, float):
                if v != v or v in (math.inf, -math.inf):
                    return 0
                v = int(v)
            return min(max(int(v), int(info.min)), int(info.max))
        out = np.array([to_int(v) for v in a.tolist()], dtype=dt)
    return out.reshape(shape)


# ---------------------------------------------------------------------------------------------
# Case generation

def T(shape, dtype, vals="normal", layout="contig", grad=False, **extra):
    spec = {"k": "T", "shape": [int(s) for s in shape], "dtype": dtype, "vals": vals, "layout": layout,
            "grad": bool(grad and dtype in FLOAT_DTYPES)}
    spec.update(extra)
    return spec


def py(v):
    return {"k": "py", "v": v}


def tup(items):
    return {"k": "tuple", "items": list(items)}


def lst(items):
    return {"k": "list", "items": list(items)}


def dtype_spec(name):
    return {"k": "dtype", "v": name}


def star(items):
    """Spread into positional arguments (varargs)."""
    return {"k": "star", "items": list(items)}


class CaseGen:
    """Draws one case for one callable from a seeded numpy Generator."""

    def __init__(self, entry, seed, rnd):
        self.e = entry
        self.name = entry["name"]
        self.cid = entry["id"]
        self.rng = np.random.default_rng([seed & 0xFFFFFFFF, zlib.crc32(entry["id"].encode()), rnd])
        self.inplace = (self.name.endswith("_") and not self.name.endswith("__")) or \
            re.match(r"^__i[a-z]+__$", self.name) is not None and self.name not in ("__index__", "__int__", "__iter__")
        # F.relu(x, inplace=True) & co. write into x as well
        self.inplace = self.inplace or self.name == "__setitem__" or \
            any(p["name"] == "inplace" for ov in entry["overloads"] for p in ov)
        self.prim = None  # the primary tensor spec

    # -- random helpers ---------------------------------------------------------------------
    def p(self, prob):
        return self.rng.random() < prob

    def choice(self, seq, weights=None):
        if weights is not None:
            w = np.asarray(weights, dtype=float)
            return seq[int(self.rng.choice(len(seq), p=w / w.sum()))]
        return seq[int(self.rng.integers(0, len(seq)))]

    def seed(self):
        return int(self.rng.integers(0, 2 ** 31))

    def size(self):
        return int(self.choice([0, 1, 2, 3, 4, 5], [0.06, 0.2, 0.26, 0.24, 0.14, 0.1]))

    def shape(self, ndim=None):
        if ndim is None:
            ndim = int(self.choice([0, 1, 2, 3, 4], [0.12, 0.25, 0.3, 0.2, 0.13]))
        return [self.size() for _ in range(ndim)]

    def dtype(self, floats_only=False):
        if floats_only:
            return self.choice(["float32", "float64"], [0.7, 0.3])
        return self.choice(DTYPES, [0.4, 0.2, 0.2, 0.08, 0.12])

    def tensor(self, shape=None, dtype=None, vals=None, layout=None, grad=None, floats_only=False, **more):
        shape = self.shape() if shape is None else list(shape)
        dtype = dtype or self.dtype(floats_only)
        if vals is None:
            vals = self.choice(["normal", "special", "smallint", "pos", "extreme"], [0.57, 0.2, 0.13, 0.05, 0.05])
        if layout is None:
            layout = self.choice(LAYOUTS, [0.55, 0.09, 0.09, 0.09, 0.09, 0.09])
            if layout == "overlap" and self.inplace and self.prim is None:
                layout = "contig"  # writes through overlapping views are order-dependent in both
        nd = len(shape)
        extra = dict(more)
        if layout in ("transposed",) and nd < 2 or layout in ("strided", "expanded") and nd < 1:
            layout = "contig"
        if layout == "expanded":
            extra["edims"] = sorted({int(d) for d in self.rng.integers(0, nd, max(1, nd // 2))})
        elif layout == "offset":
            extra["off"] = int(self.rng.integers(1, 4))
        elif layout == "overlap":
            extra["strides"] = [int(self.choice([0, 1, 1, 2])) for _ in range(nd)]
        if grad is None:
            grad = self.p(0.15 if self.inplace else 0.5)
        return T(shape, dtype, vals, layout, grad, seed=self.seed(), **extra)

    def like(self, ref, dtype=None, **kw):
        """A tensor related to ref's shape: same, broadcastable, 0-d or unrelated."""
        shape = list(ref["shape"]) if ref else self.shape()
        r = self.rng.random()
        if r < 0.5:
            pass
        elif r < 0.75 and shape:
            shape = shape[int(self.rng.integers(0, len(shape) + 1)):]
            shape = [1 if self.p(0.3) else s for s in shape]
        elif r < 0.85:
            shape = []
        else:
            shape = self.shape()
        if dtype is None:
            dtype = ref["dtype"] if ref and self.p(0.6) else self.dtype()
        return self.tensor(shape, dtype, **kw)

    def number(self, kind="any"):
        r = self.rng.random()
        if kind == "int":
            if r < 0.75:
                return int(self.rng.integers(-3, 6))
            if r < 0.9:
                return self.choice(HUGE_INTS)
            return self.choice(SPECIAL_INTS)
        if kind == "float":
            if r < 0.7:
                return float(np.round(self.rng.standard_normal() * 2, 2))
            return self.choice(SPECIAL_FLOATS)
        if r < 0.35:
            return int(self.rng.integers(-3, 6))
        if r < 0.7:
            return float(np.round(self.rng.standard_normal() * 2, 2))
        if r < 0.82:
            return self.choice(SPECIAL_FLOATS)
        if r < 0.9:
            return self.choice(HUGE_INTS)
        return bool(self.p(0.5))

    def wrong(self):
        """A value of a wrong type."""
        return self.choice([py("abc"), py(None), lst([py(1.5), py("x")]), {"k": "obj"}, py(1.5), py(True),
                            tup([]), py(2 ** 63), dtype_spec("float32")])

    def ndim(self):
        return len(self.prim["shape"]) if self.prim else 0

    def dim(self, extra=0, allow_tuple=False, allow_none=False):
        nd = self.ndim()
        lo, hi = -max(nd + extra, 1), max(nd + extra, 1) - 1
        r = self.rng.random()
        if allow_tuple and r < 0.2:
            k = int(self.rng.integers(0, nd + 2))
            dims = [int(self.rng.integers(lo, hi + 1)) for _ in range(k)]
            return tup([py(d) for d in dims]) if self.p(0.7) else lst([py(d) for d in dims])
        if allow_none and r < 0.27:
            return py(None)
        if r < 0.85:
            return py(int(self.rng.integers(lo, hi + 1)))
        if r < 0.93:
            return py(self.choice([nd + extra, -nd - extra - 1, nd + extra + 3]))
        if r < 0.97:
            return py(self.choice([2 ** 62, -2 ** 63, 2 ** 63 - 1, 2 ** 31]))
        return self.choice([py(None), py(1.0), py("0"), lst([py(0)])])

    def sizes_for(self, numel):
        """A shape whose product is numel (or a deliberately wrong one)."""
        if self.p(0.15):
            return [self.size() for _ in range(int(self.rng.integers(0, 4)))]
        dims, n = [], numel
        for f in (2, 3, 5):
            while n % f == 0 and n > 0 and self.p(0.7):
                dims.append(f)
                n //= f
        if n != 1 or not dims:
            dims.append(n)
        self.rng.shuffle(dims)
        if self.p(0.3):
            dims.insert(int(self.rng.integers(0, len(dims) + 1)), 1)
        if self.p(0.25) and dims:
            dims[int(self.rng.integers(0, len(dims)))] = -1
        return [int(d) for d in dims]

    def kernel(self, maxv=3, nd=2, allow_zero=True):
        r = self.rng.random()
        if r < 0.5:
            return py(int(self.rng.integers(1, maxv + 1)))
        if r < 0.78:
            return tup([py(int(self.rng.integers(1, maxv + 1))) for _ in range(nd)])
        if r < 0.88:
            return self.choice([py(0), py(-1), tup([py(1)]), tup([py(1), py(1), py(1)]), py(None), py(1.5),
                                tup([py(0), py(2)])])
        huge = self.choice([2 ** 31, 2 ** 32, 2 ** 62, 2 ** 63 - 1, -2 ** 63, 2 ** 63, 2 ** 40])
        if self.p(0.5):
            return py(huge)
        items = [py(int(self.rng.integers(1, maxv + 1))) for _ in range(nd)]
        items[int(self.rng.integers(0, nd))] = py(huge)
        return tup(items)

    # -- parameter kinds by name -----------------------------------------------------------
    def param(self, prm):
        name, typ = prm["name"], prm["type"]
        prim = self.prim
        if name in ("input", "self", "tensor") and "Tensor" in (typ or "Tensor") or name in ("ndarray",):
            return prim if prim is not None else self.tensor()
        if name in ("other", "arg0", "exponent", "value", "src", "source", "condition", "mask"):
            if name in ("mask", "condition"):
                return self.like(prim, dtype="bool")
            if "Tensor" in typ or self.p(0.55):
                t = self.like(prim)
                if name in ("src", "source") and self.p(0.7):
                    t["dtype"] = prim["dtype"] if prim else t["dtype"]
                return t
            return py(self.number())
        if name in ("mat2", "vec2"):
            return self.like(prim)
        if name in ("index",):
            if "Tensor" in typ:
                hi = max(prim["shape"]) if prim and prim["shape"] else 2
                return self.tensor([self.size()], "int64", vals="index", layout="contig", grad=False, lo=-1, hi=hi + 1)
            return py(self.number("int"))
        if name in ("weight", "bias", "running_mean", "running_var", "pos_weight", "target", "gradient",
                    "attn_mask", "query", "key"):
            if self.p(0.2) and not prm["required"]:
                return py(None)
            return self.like(prim, dtype=self.dtype(floats_only=True))
        if name in ("tensors",):
            k = int(self.rng.integers(0, 4))
            return lst([self.like(prim) for _ in range(k)])
        if name in ("dim", "dim0", "dim1", "axis0", "axis1", "start_dim", "end_dim"):
            return self.dim(allow_tuple="object" in typ or "tuple" in typ, allow_none=not prm["required"])
        if name in ("dims",):
            perm = list(self.rng.permutation(self.ndim()))
            if self.p(0.15) and perm:
                perm[0] = perm[-1]
            return [py(int(d)) for d in perm]
        if name in ("keepdim", "training", "ceil_mode", "count_include_pad", "inplace", "equal_nan", "as_tuple",
                    "is_causal", "return_indices", "requires_grad", "non_blocking", "scale_grad_by_freq", "sparse",
                    "force", "create_graph", "retain_graph", "unbiased", "copy", "size_average", "reduce"):
            if name == "unbiased" and self.p(0.2):
                return py(None)
            return py(bool(self.p(0.5)))
        if name == "dtype":
            return py(None) if self.p(0.15) else dtype_spec(self.dtype())
        if name == "reduction":
            return py(self.choice(["mean", "sum", "none", "none", "mean", "bogus"]))
        if name == "rounding_mode":
            return py(self.choice([None, "trunc", "floor", "bogus"]))
        if name == "approximate":
            return py(self.choice(["none", "tanh", "bogus"]))
        if name == "mode":
            return py(self.choice(["constant", "constant", "reflect", "replicate", "circular", "bogus"]))
        if name == "correction":
            return py(self.choice([None, 0, 1, 2, -1, 1.5]))
        if name in ("alpha", "min", "max", "fill_value", "s", "negative_slope", "beta", "threshold", "scale",
                    "start", "end", "step", "low", "high", "mean", "std", "from", "to", "norm_type"):
            if name in ("min", "max") and self.p(0.3):
                return py(None) if self.p(0.4) else self.like(prim)
            return py(self.number())
        if name in ("p", "eps", "rtol", "atol", "momentum", "label_smoothing", "dropout_p", "max_norm"):
            return py(self.choice([0.0, 0.1, 0.5, 1.0, 2.0, 1e-5, -0.5, 1.5, math.nan, math.inf, 3]))
        if name in ("chunks", "split_size_or_sections", "n", "m", "steps", "length", "num_groups", "groups",
                    "padding_idx", "ignore_index", "num_classes", "divisor_override", "storage_offset", "num",
                    "sections"):
            return py(self.number("int"))
        if name in ("kernel_size", "stride", "padding", "dilation", "output_size", "output_padding"):
            return self.kernel()
        if name in ("size", "sizes", "shape"):
            return [py(s) for s in self.shape()]
        if name in ("data", "obj"):
            return self.data_literal()
        if name == "memo":
            return {"k": "dict"}
        if name == "inputs":
            return py(None)
        if name == "pad":
            return tup([py(int(self.rng.integers(-1, 3))) for _ in range(2 * int(self.rng.integers(0, 3)))])
        if name == "normalized_shape":
            return tup([py(s) for s in (prim["shape"][-1:] if prim else [2])])
        if name == "args":  # Tensor.to(*args): a dtype, a tensor to match, or something wrong
            r = self.rng.random()
            return dtype_spec(self.dtype()) if r < 0.6 else self.tensor(grad=False) if r < 0.8 else self.wrong()
        # unknown: a number, a tensor or a wrong type
        r = self.rng.random()
        return py(self.number()) if r < 0.5 else self.like(prim) if r < 0.8 else self.wrong()

    def data_literal(self):
        r = self.rng.random()
        if r < 0.5:
            t = self.tensor(grad=False, layout="contig")
            return {"k": "nested", "spec": t}  # nested Python list built from a tensor recipe
        if r < 0.65:
            return py(self.number())
        if r < 0.75:
            return {"k": "nd", "spec": self.tensor(grad=False), "np_dtype": self.choice(["float32", "int64", "float16",
                                                                                          "uint8", "bool", "int16"])}
        if r < 0.85:
            return self.tensor()
        return self.choice([lst([]), lst([lst([py(1)]), lst([py(1), py(2)])]), lst([py(1), py(2.5), py(True)]),
                            lst([py(2 ** 63)]), lst([py(math.nan), py(-math.inf)]), py("abc"), lst([lst([])])])

    # -- recipes for callables whose arguments must agree in shape --------------------------
    def recipe(self):
        """Returns {param name: spec} for callables where random arguments would only ever be
        shape errors; None when the generic per-parameter kinds do."""
        n = self.name.strip("_") if self.name.startswith("__") else self.name
        if n.startswith("r") and self.name.startswith("__r"):
            n = n[1:]
        n = n.rstrip("_")
        if self.e["ns"] == "linalg" or self.name in TORCH_LINALG:
            return self.linalg_recipe(self.name)
        F = lambda: self.dtype(floats_only=True)  # noqa: E731
        S = self.size
        if n in ("allclose", "equal", "eq", "ne", "isclose", "dist", "maximum", "minimum"):
            # the same values (same seed) on both sides, some replaced by special ones: mostly-equal pairs
            x = self.tensor()
            y = dict(x, vals=self.choice(["normal", "special", "extreme"]), grad=x["grad"] and self.p(0.5))
            if self.p(0.2):
                y["dtype"] = self.dtype()
            other = "other" if self.name == n else "arg0"
            return {"_prim": x, other: y}
        if n in ("mm",):
            a, k, b = S(), S(), S()
            dt = self.dtype()
            return {"_prim": self.tensor([a, k], dt), "mat2": self.tensor([k if self.p(0.85) else k + 1, b], dt)}
        if n == "bmm":
            bt, a, k, b = S(), S(), S(), S()
            dt = self.dtype()
            return {"_prim": self.tensor([bt, a, k], dt), "mat2": self.tensor([bt, k, b], dt)}
        if n == "dot":
            k = S()
            dt = self.dtype()
            return {"_prim": self.tensor([k], dt), "other": self.tensor([k if self.p(0.85) else k + 1], dt)}
        if n == "outer":
            dt = self.dtype()
            return {"_prim": self.tensor(self.shape(1 if self.p(0.85) else 2), dt), "vec2": self.tensor([S()], dt)}
        if n == "matmul":
            k = S()
            dt = self.dtype()
            lead = self.shape(int(self.rng.integers(0, 3)))
            sa = lead + ([S(), k] if self.p(0.7) else [k])
            sb = ([k, S()] if self.p(0.7) else [k])
            if self.p(0.3):
                sb = lead[-1:] + sb
            other = "other" if self.name == "matmul" else "arg0"
            return {"_prim": self.tensor(sa, dt), other: self.tensor(sb, dt)}
        if n == "linear":
            i, o = S(), S()
            dt = F()
            return {"_prim": self.tensor(self.shape(int(self.rng.integers(0, 3))) + [i], dt),
                    "weight": self.tensor([o, i], dt), "bias": self.tensor([o], dt) if self.p(0.7) else py(None)}
        if n in ("conv1d", "conv2d", "conv_transpose2d"):
            sp = 1 if n == "conv1d" else 2
            g = int(self.choice([1, 1, 1, 2]))
            c, o = g * int(self.rng.integers(0, 3)), g * int(self.rng.integers(1, 3))
            dt = F()
            x = [S()] * (self.p(0.85)) + [c] + [int(self.rng.integers(1, 6)) for _ in range(sp)]
            k = [int(self.rng.integers(1, 4)) for _ in range(sp)]
            w = [o, c // g] + k if n != "conv_transpose2d" else [c, o // g] + k
            r = {"_prim": self.tensor(x, dt), "weight": self.tensor(w, dt), "groups": py(g)}
            r["bias"] = self.tensor([o], dt) if self.p(0.6) else py(None)
            for key in ("stride", "padding", "dilation"):
                if self.p(0.4):
                    r[key] = self.kernel(2, sp)
            return r
        if n in ("max_pool2d", "max_pool2d_with_indices", "avg_pool2d", "adaptive_avg_pool2d", "unfold"):
            x = [S()] * self.p(0.8) + [S(), int(self.rng.integers(1, 7)), int(self.rng.integers(1, 7))]
            r = {"_prim": self.tensor(x, F() if self.p(0.9) else self.dtype())}
            if n == "adaptive_avg_pool2d":
                r["output_size"] = self.choice([py(int(self.rng.integers(1, 4))),
                                                tup([py(int(self.rng.integers(1, 4))), py(None)]),
                                                tup([py(2 ** 62), py(4)]), py(0), tup([py(2), py(3)]), py(-1)])
            else:
                r["kernel_size"] = self.kernel(3)
                for key in ("stride", "padding", "dilation"):
                    if self.p(0.35):
                        r[key] = self.kernel(2)
            return r
        if n == "fold":
            c, k, s = S(), int(self.rng.integers(1, 3)), int(self.rng.integers(1, 3))
            H, W = int(self.rng.integers(1, 6)), int(self.rng.integers(1, 6))
            L = max(0, (H - k) // s + 1) * max(0, (W - k) // s + 1)
            x = [S()] * self.p(0.8) + [c * k * k, L if self.p(0.85) else L + 1]
            return {"_prim": self.tensor(x, F()), "output_size": tup([py(H), py(W)]), "kernel_size": py(k),
                    "stride": py(s)}
        if n in ("batch_norm", "group_norm", "layer_norm"):
            c = S()
            x = [S(), c] + self.shape(int(self.rng.integers(0, 3)))
            dt = F()
            r = {"_prim": self.tensor(x, dt)}
            if n == "batch_norm":
                r["running_mean"] = self.tensor([c], dt, grad=False) if self.p(0.8) else py(None)
                r["running_var"] = self.tensor([c], dt, vals="pos", grad=False) if self.p(0.8) else py(None)
                r["weight"] = self.tensor([c], dt) if self.p(0.5) else py(None)
                r["bias"] = self.tensor([c], dt) if self.p(0.5) else py(None)
                r["training"] = py(bool(self.p(0.5)))
            elif n == "group_norm":
                r["num_groups"] = py(self.choice([1, c, 2, 0, -1]) if c else self.choice([1, 0]))
                r["weight"] = self.tensor([c], dt) if self.p(0.5) else py(None)
                r["bias"] = self.tensor([c], dt) if self.p(0.5) else py(None)
            else:
                k = int(self.rng.integers(1, len(x) + 1))
                ns = x[-k:] if self.p(0.85) else [s + 1 for s in x[-k:]]
                r["normalized_shape"] = tup([py(s) for s in ns]) if self.p(0.7) else lst([py(s) for s in ns])
                r["weight"] = self.tensor(ns, dt) if self.p(0.5) else py(None)
                r["bias"] = self.tensor(ns, dt) if self.p(0.5) else py(None)
            return r
        if n in ("mse_loss", "l1_loss", "smooth_l1_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits"):
            sh = self.shape()
            dt = F()
            vals = "prob" if n == "binary_cross_entropy" else None
            r = {"_prim": self.tensor(sh, dt, vals=vals), "target": self.tensor(sh if self.p(0.85) else self.shape(), dt,
                                                                                vals="prob" if "binary" in n else None)}
            if "binary" in n and self.p(0.3):
                r["weight"] = self.tensor(sh, dt)
            if n.endswith("logits") and self.p(0.3):
                r["pos_weight"] = self.tensor(sh[-1:], dt)
            return r
        if n in ("nll_loss", "cross_entropy"):
            N, C = S(), S()
            extra = self.shape(int(self.choice([0, 0, 1, 2])))
            dt = F()
            x = ([N, C] if self.p(0.85) else [C]) + extra
            tshape = ([N] if len(x) > 1 + len(extra) else []) + extra
            if n == "cross_entropy" and self.p(0.25):
                target = self.tensor(x, dt, vals="prob")
            else:
                target = self.tensor(tshape, "int64", vals="index", lo=-1 if self.p(0.1) else 0, hi=C + (1 if self.p(0.1) else 0),
                                     grad=False)
            r = {"_prim": self.tensor(x, dt), "target": target}
            if self.p(0.3):
                r["weight"] = self.tensor([C], dt, vals="pos", grad=False)
            if self.p(0.3):
                r["ignore_index"] = py(self.choice([-100, 0, 1, -1]))
            return r
        if n == "embedding":
            num, d = S(), S()
            return {"_prim": self.tensor(self.shape(), "int64", vals="index", lo=-1 if self.p(0.1) else 0,
                                         hi=num + (1 if self.p(0.1) else 0), grad=False),
                    "weight": self.tensor([num, d], F())}
        if n == "one_hot":
            k = S()
            return {"_prim": self.tensor(self.shape(), "int64" if self.p(0.85) else self.dtype(), vals="index", hi=k + 1,
                                         grad=False),
                    "num_classes": py(self.choice([-1, k, k + 1, 0, 2 ** 62]))}
        if n in ("cat", "concat", "stack"):
            base = self.shape(int(self.rng.integers(1, 4)))
            d = int(self.rng.integers(-len(base), len(base)))
            items = []
            for _ in range(int(self.rng.integers(0, 4))):
                sh = list(base)
                if n != "stack" and self.p(0.5):
                    sh[d] = self.size()
                if self.p(0.1):
                    sh = self.shape()
                items.append(self.tensor(sh, self.dtype() if self.p(0.2) else "float32"))
            self.prim = T(base, "float32")
            return {"tensors": lst(items) if self.p(0.8) else tup(items), "dim": self.dim(extra=int(n == "stack"))}
        if n in ("gather", "scatter_add", "index_add", "index_select"):
            x = self.shape(int(self.rng.integers(1, 4)))
            nd = len(x)
            d = int(self.rng.integers(-nd, nd))
            hi = x[d] + (1 if self.p(0.1) else 0)
            lo = -1 if self.p(0.1) else 0
            dt = self.dtype() if self.p(0.3) else F()
            r = {"_prim": self.tensor(x, dt), "dim": py(d if self.p(0.9) else nd)}
            if n in ("gather", "scatter_add"):
                ish = [min(s, self.size()) if self.p(0.8) else self.size() for s in x]
                r["index"] = self.tensor(ish, "int64", vals="index", lo=lo, hi=max(hi, 1), grad=False)
                if n == "scatter_add":
                    r["src"] = self.tensor([s + int(self.p(0.3)) for s in ish], dt)
            else:
                k = self.size()
                r["index"] = self.tensor([k] if self.p(0.9) else [k, 1], "int64" if self.p(0.9) else "int32",
                                         vals="index", lo=lo, hi=max(hi, 1), grad=False)
                if n == "index_add":
                    sh = list(x)
                    sh[d] = k if self.p(0.9) else k + 1
                    r["source"] = self.tensor(sh, dt)
            return r
        if n in ("masked_fill", "masked_select", "where"):
            x = self.shape()
            r = {"_prim": self.tensor(x)}
            ms = x[int(self.rng.integers(0, len(x) + 1)):] if x and self.p(0.7) else (x if self.p(0.6) else self.shape())
            mask = self.tensor(ms, "bool" if self.p(0.9) else self.dtype(), vals="normal", grad=False)
            if n == "where":
                if self.name == "where" and self.e["ns"] == "Tensor":
                    r["condition"] = mask
                    r["other"] = self.like(r["_prim"]) if self.p(0.7) else py(self.number())
                else:
                    r["_prim"] = mask
                    r["input"] = self.tensor(x) if self.p(0.7) else py(self.number())
                    r["other"] = self.like(T(x, "float32")) if self.p(0.7) else py(self.number())
            else:
                r["mask"] = mask
                if n == "masked_fill":
                    r["value"] = py(self.number()) if self.p(0.7) else self.tensor(self.choice([[], [1], [2]]))
            return r
        if n in ("narrow", "select"):
            x = self.shape(int(self.rng.integers(0, 4)))
            self.prim = T(x, "float32")
            r = {"_prim": self.tensor(x), "dim": self.dim()}
            if n == "narrow":
                r["start"] = py(self.choice([0, 1, -1, 2, 5, 2 ** 62]))
                r["length"] = py(self.choice([0, 1, 2, -1, 2 ** 62]))
            else:
                r["index"] = py(self.choice([0, 1, -1, 2, -3, 5, 2 ** 62, -2 ** 63]))
            return r
        if n == "as_strided":
            x = self.shape()
            nel = int(np.prod(x, dtype=np.int64))
            sz = self.shape()
            st = [int(self.choice([0, 1, 2, 3, -1] if self.p(0.1) else [0, 1, 1, 2])) for _ in sz]
            r = {"_prim": self.tensor(x, layout="contig"), "size": lst([py(s) for s in sz]),
                 "stride": lst([py(s) for s in st] if self.p(0.9) else [py(1)])}
            if self.p(0.4):
                r["storage_offset"] = py(self.choice([0, 1, nel, nel + 1, -1, 2 ** 62]))
            return r
        if n in ("getitem", "setitem"):
            x = self.shape(int(self.rng.integers(0, 4)))
            self.prim = T(x, "float32")
            lay = self.choice(LAYOUTS[:5], [0.6, 0.1, 0.1, 0.1, 0.1]) if n == "setitem" else None
            r = {"_prim": self.tensor(x, layout=lay), "arg0": self.index_expr(x)}
            if n == "setitem":
                r["arg1"] = py(self.number()) if self.p(0.5) else self.tensor(self.choice([[], [1], x[-1:], x, [2, 2]]))
            return r
        if n in ("reshape", "view"):
            x = self.shape()
            self.prim = T(x, "float32")
            dims = self.sizes_for(int(np.prod(x, dtype=np.int64)))
            return {"_prim": self.tensor(x), "shape": [py(d) for d in dims] if self.p(0.7) else [tup([py(d) for d in dims])]}
        if n == "expand":
            x = self.shape()
            tgt = [s if s != 1 or self.p(0.5) else self.size() for s in x]
            tgt = [-1 if self.p(0.15) else s for s in tgt]
            if self.p(0.3):
                tgt = [self.size()] + tgt
            if self.p(0.1):
                tgt = self.shape()
            if self.p(0.05):
                tgt = [2 ** 62] + tgt
            return {"_prim": self.tensor(x), "sizes": [py(s) for s in tgt] if self.p(0.8) else [tup([py(s) for s in tgt])]}
        if n == "repeat":
            x = self.shape()
            reps = [int(self.rng.integers(0, 3)) for _ in range(len(x) + int(self.rng.integers(-1, 2)))]
            if self.p(0.05):
                reps = [2 ** 62] + reps
            return {"_prim": self.tensor(x), "sizes": [py(s) for s in reps]}
        if n == "unflatten":
            x = self.shape(int(self.rng.integers(1, 4)))
            self.prim = T(x, "float32")
            d = self.dim()
            dv = d["v"] if isinstance(d.get("v"), int) and -len(x) <= d["v"] < len(x) else 0
            return {"_prim": self.tensor(x), "dim": d,
                    "sizes": tup([py(s) for s in self.sizes_for(x[dv])]) if self.p(0.8) else lst([py(s) for s in self.sizes_for(x[dv])])}
        if n in ("split", "chunk"):
            x = self.shape(int(self.rng.integers(0, 4)))
            self.prim = T(x, "float32")
            d = self.dim()
            r = {"_prim": self.tensor(x), "dim": d}
            if n == "chunk":
                r["chunks"] = py(self.choice([1, 2, 3, 0, -1, 5, 2 ** 62]))
            else:
                dv = d["v"] if isinstance(d.get("v"), int) and -len(x) <= d["v"] < len(x) else 0
                L = x[dv] if x else 0
                if self.p(0.5):
                    v = py(self.choice([1, 2, 3, 0, -1, 2 ** 62]))
                else:
                    parts, left = [], L
                    while left > 0:
                        q = int(self.rng.integers(0, left + 1))
                        parts.append(q)
                        left -= q
                    if self.p(0.2):
                        parts.append(1)
                    v = lst([py(q) for q in parts]) if self.p(0.7) else tup([py(q) for q in parts])
                r["split_size_or_sections"] = v
                r["split_size"] = v
            return r
        if n in ("zeros", "ones", "empty", "rand", "randn"):
            sh = self.shape() if self.p(0.85) else [self.choice([-1, 2 ** 62, 2 ** 31, 2 ** 63 - 1])] + self.shape(1)
            return {"size": [py(s) for s in sh] if self.p(0.6) else [tup([py(s) for s in sh])]}
        if n == "full":
            sh = self.shape() if self.p(0.9) else [self.choice([-1, 2 ** 62])]
            return {"size": tup([py(s) for s in sh]) if self.p(0.8) else lst([py(s) for s in sh]),
                    "fill_value": py(self.number())}
        if n == "randint":
            return {"low": py(self.number("int")), "high": py(self.number("int")), "size": tup([py(s) for s in self.shape()])}
        if n == "backward":
            x = self.shape()
            return {"_prim": self.tensor(x, F(), grad=True, layout="contig") if self.p(0.8) else self.tensor(x),
                    "gradient": self.tensor(x if self.p(0.8) else self.shape(), F()) if self.p(0.4) else py(None)}
        if n == "pad":
            x = self.shape(int(self.rng.integers(1, 5)))
            k = int(self.rng.integers(0, len(x) + 1))
            vals = [int(self.choice([0, 1, 2, -1, 3])) for _ in range(2 * k)]
            if self.p(0.05):
                vals = [2 ** 62, 0]
            r = {"_prim": self.tensor(x), "pad": tup([py(v) for v in vals]) if self.p(0.8) else lst([py(v) for v in vals])}
            return r
        if n in ("clamp", "clip"):
            x = self.shape()
            r = {"_prim": self.tensor(x)}
            for key in ("min", "max"):
                q = self.rng.random()
                r[key] = py(None) if q < 0.25 else py(self.number()) if q < 0.75 else self.like(r["_prim"])
            return r
        return None

    # -- linear algebra: matrices of the shapes and structures the factorizations want ----------
    def mat_dtype(self):
        return self.choice(["float32", "float64", "int64", "int32", "bool"], [0.5, 0.4, 0.04, 0.03, 0.03])

    def batch(self):
        k = int(self.choice([0, 1, 2], [0.55, 0.33, 0.12]))
        return [int(self.choice([0, 1, 2, 3], [0.06, 0.36, 0.36, 0.22])) for _ in range(k)]

    def msize(self):
        return int(self.choice([0, 1, 2, 3, 4, 5], [0.05, 0.15, 0.25, 0.25, 0.2, 0.1]))

    def matrix(self, rows, cols, dtype, structure=None, batch=None, grad=None, finite=False):
        """A batch of rows x cols matrices: `structure` (STRUCTURED) nine times in ten, else plain,
        integer, rank-deficient, special or extreme values (`finite`: NaNs, no infinities, for the
        functions that call LAPACK's SVD, which hangs on them in PyTorch as in graft); any layout."""
        shape = (self.batch() if batch is None else list(batch)) + [rows, cols]
        if structure and self.p(0.9):
            vals = structure
        else:
            vals = self.choice(["normal", "smallint", "rankdef", "special", "extreme", "pos"],
                               [0.6, 0.14, 0.1, 0.08, 0.04, 0.04])
            if finite and vals in ("special", "extreme"):
                vals = "nan"
        layout = self.choice(LAYOUTS, [0.6, 0.12, 0.1, 0.08, 0.06, 0.04])
        return self.tensor(shape, dtype, vals=vals, layout=layout, grad=grad)

    def linalg_recipe(self, n):
        """Arguments of torch.linalg's functions and of the torch / Tensor functions built on
        them: square matrices (nine in ten), batches, symmetric positive-definite inputs for
        cholesky, symmetric ones for eigh and hermitian=True, triangular factors for
        cholesky_solve / cholesky_inverse, rank-deficient ones for pinv, matrix_rank and lstsq;
        right-hand sides that fit (mostly), and the option values each function knows (and a
        wrong one now and then). Optional arguments are left out about half the time."""
        ns = self.e["ns"]
        dt = self.mat_dtype()
        N = self.msize()
        lin = ns == "linalg"
        r = {}

        def opt(key, value, prob=0.5):
            if self.p(prob):
                r[key] = value

        def flag():
            return py(bool(self.p(0.5)))

        def not_a_matrix(grad=None):
            return self.tensor(self.shape(int(self.choice([0, 1], [0.3, 0.7]))), dt, grad=grad,
                               vals=self.choice(["normal", "smallint", "nan"], [0.7, 0.2, 0.1]))

        def square(structure=None, grad=None, batch=None, finite=False):
            q = self.rng.random()
            if q < 0.92:
                return self.matrix(N, N, dt, structure, batch, grad, finite)
            if q < 0.97:
                return self.matrix(N, self.msize(), dt, structure, batch, grad, finite)
            return not_a_matrix(grad)

        def rect(structure=None, grad=None):  # (the SVD's inputs: finite)
            if self.p(0.96):
                return self.matrix(N if self.p(0.3) else self.msize(), self.msize(), dt, structure, grad=grad,
                                   finite=True)
            return not_a_matrix(grad)

        def rhs(A, left=True, vector_ok=True):
            """B for A X = B (X A = B when not left): matrices of A's size with a batch that
            broadcasts, a vector now and then, and a mismatched size or dtype rarely."""
            shape = list(A["shape"])
            n_ = shape[-1] if shape else 0
            batch = shape[:-2]
            q = self.rng.random()
            if q < 0.25:
                batch = batch[int(self.rng.integers(0, len(batch) + 1)):]
            elif q < 0.35:
                batch = [1 if self.p(0.5) else s for s in batch]
            elif q < 0.4:
                batch = self.batch() + batch
            k = self.msize()
            q = self.rng.random()
            if vector_ok and q < 0.15:
                sh = [n_] if self.p(0.5) else shape[:-1]
            elif q < 0.94:
                sh = batch + ([n_, k] if left else [k, n_])
            else:
                sh = batch + [self.msize(), self.msize()]
            bdt = dt if self.p(0.93) else self.mat_dtype()
            return self.tensor(sh, bdt, vals=self.choice(["normal", "smallint", "special"], [0.8, 0.12, 0.08]),
                               layout=self.choice(LAYOUTS, [0.6, 0.12, 0.1, 0.08, 0.06, 0.04]))

        def tol():
            return py(self.choice([0.0, 1e-5, 0.1, 0.5, 1.0, 1e-15, -1.0, math.nan, 2]))

        def stable_grad(A):
            """No gradient through singular vectors of degenerate matrices (rank-deficient, integer,
            overlapping or stride-0 ones): it divides by (differences of) singular values near zero, and both
            libraries return rounding noise (PyTorch's documentation says as much)."""
            degenerate = A.get("vals") in ("rankdef", "smallint", "nan", "special", "extreme") or \
                A.get("layout") == "overlap" or \
                A.get("layout") == "expanded" and any(d >= len(A["shape"]) - 2 for d in A.get("edims", []))
            if degenerate:
                A["grad"] = False
            return A

        if n in ("det", "slogdet", "logdet", "inverse", "inv"):
            A = square()
            return {"_prim": A, "A": A}
        if n == "matrix_power":
            A = square()
            k = self.choice([0, 1, 2, 3, 4, 7, -1, -2, -3, -6, 2 ** 40, -2 ** 62],
                            [0.1, 0.12, 0.14, 0.12, 0.06, 0.06, 0.14, 0.1, 0.06, 0.04, 0.03, 0.03])
            return {"_prim": A, "A": A, "n": py(int(k))}
        if n == "cholesky":
            A = square("spd")
            r.update({"_prim": A, "A": A})
            opt("upper", flag())
            return r
        if n in ("cholesky_inverse", "cholesky_solve"):
            upper = self.p(0.5)
            structure = "uptri" if upper else "lowtri"
            if self.p(0.1):  # the other triangle, or none: only the upper / lower one is read
                structure = self.choice(["uptri", "lowtri", None])
            L = square(structure)
            if n == "cholesky_inverse":
                r.update({"_prim": L, "input": L})
            else:
                B = rhs(L, vector_ok=False)
                r.update({"_prim": B, "input": B, "input2": L})
            if upper or self.p(0.3):
                r["upper"] = py(upper)
            return r
        if n in ("triangular_solve", "solve_triangular"):
            A = square()
            left = n == "triangular_solve" or self.p(0.75)
            B = rhs(A, left, vector_ok=False)
            if n == "triangular_solve":
                r.update({"_prim": B, "b": B, "A": A})
                opt("upper", flag())
                opt("transpose", flag())
                opt("unitriangular", flag(), 0.3)
            else:
                r.update({"_prim": A, "A": A, "B": B, "upper": flag()})
                if not left or self.p(0.3):
                    r["left"] = py(left)
                opt("unitriangular", flag(), 0.3)
            return r
        if n == "solve":
            A = square()
            left = self.p(0.75)
            r.update({"_prim": A, "A": A, "B": rhs(A, left)})
            if not left or self.p(0.3):
                r["left"] = py(left)
            return r
        if n == "qr":
            A = stable_grad(rect())  # (QR's gradient solves with R: defined for full-rank A only)
            r.update({"_prim": A, "A": A})
            if lin:
                opt("mode", py(self.choice(["reduced", "complete", "r", "bogus"], [0.35, 0.35, 0.25, 0.05])))
            else:
                opt("some", flag())
            return r
        if n in ("svd", "svdvals"):
            A = stable_grad(rect()) if n == "svd" else rect()
            r.update({"_prim": A, "A": A})
            if n == "svd" and lin:
                opt("full_matrices", flag())
            elif n == "svd":
                opt("some", flag())
                opt("compute_uv", flag(), 0.3)
            if lin:
                opt("driver", py(self.choice([None, "gesvd", "gesvdj", "bogus"])), 0.1)
            return r
        if n in ("eigh", "eigvalsh"):
            A = stable_grad(square("sym"))
            r.update({"_prim": A, "A": A})
            opt("UPLO", py(self.choice(["L", "U", "l", "u", "bogus"], [0.4, 0.4, 0.07, 0.07, 0.06])))
            return r
        if n in ("pinv", "pinverse", "matrix_rank"):
            hermitian = n != "pinverse" and self.p(0.25)
            if hermitian:
                A = square("sym", finite=True)
            else:
                A = rect("rankdef" if self.p(0.3) else None)
            stable_grad(A)
            r.update({"_prim": A, "A": A})
            if n == "pinverse":
                opt("rcond", tol())
                return r
            q = self.rng.random()
            if q < 0.25:
                r["rcond" if n == "pinv" else "tol"] = tol()
            elif q < 0.6:
                opt("atol", tol())
                opt("rtol", tol())
            if hermitian or self.p(0.1):
                r["hermitian"] = py(hermitian)
            return r
        if n == "lstsq":
            A = stable_grad(rect("rankdef" if self.p(0.25) else None))
            r.update({"_prim": A, "A": A})
            m = A["shape"][-2] if len(A["shape"]) >= 2 else 0
            k = self.msize()
            batch = A["shape"][:-2]
            q = self.rng.random()
            sh = batch + [m, k] if q < 0.8 else [m] if q < 0.9 else batch + [self.msize(), k]
            r["B"] = r["b"] = self.tensor(sh, dt if self.p(0.95) else self.mat_dtype(),
                                 vals=self.choice(["normal", "smallint", "special"], [0.8, 0.12, 0.08]),
                                 layout=self.choice(LAYOUTS, [0.6, 0.12, 0.1, 0.08, 0.06, 0.04]))
            opt("rcond", py(self.choice([None, 1e-5, 0.1, -1.0, 0.0])), 0.25)
            opt("driver", py(self.choice(["gelsy", "gelsd", "gelss", "gels", "bogus"], [0.3, 0.25, 0.25, 0.15, 0.05])),
                0.35)
            return r
        if n == "cond":
            p = self.choice([None, 2, -2, 1, -1, math.inf, -math.inf, "fro", "nuc", 3, "bogus"])
            A = square(finite=p in (None, 2, -2, "nuc"))
            if p in (None, 2, -2, "nuc"):
                stable_grad(A)
            r.update({"_prim": A, "A": A})
            r["p"] = py(p)  # always drawn here: a generic number could be 2 for an input with infinities
            return r
        ords = {"vector_norm": [2, 1, 0, math.inf, -math.inf, 3, 0.5, -1, -2, 1.5, "fro"],
                "matrix_norm": ["fro", "nuc", 2, -2, 1, -1, math.inf, -math.inf, 3, 0, "bogus"],
                "norm": [None, "fro", "nuc", 2, -2, 1, -1, math.inf, -math.inf, 0, 3, 0.5]}
        if n in ords:
            nd = int(self.choice([0, 1, 2, 3, 4], [0.05, 0.2, 0.4, 0.25, 0.1] if n != "matrix_norm"
                                 else [0.02, 0.04, 0.5, 0.3, 0.14]))
            shape = self.batch()[:max(nd - 2, 0)] + [self.msize() for _ in range(min(nd, 2))]
            if len(shape) < nd:
                shape = [self.msize() for _ in range(nd - len(shape))] + shape
            ord_ = self.choice(ords[n])
            spectral = ord_ in ("nuc", 2, -2) and n != "vector_norm"
            vals = self.choice(["normal", "smallint", "rankdef", "special", "extreme"], [0.62, 0.12, 0.12, 0.1, 0.04])
            x = self.tensor(shape, dt if self.p(0.9) else self.dtype(),
                            vals="nan" if spectral and vals in ("special", "extreme") else vals,
                            layout=self.choice(LAYOUTS, [0.6, 0.12, 0.1, 0.08, 0.06, 0.04]))
            self.prim = x
            r.update({"_prim": x, "A": x, "x": x, "input": x})
            r["ord"] = py(ord_)  # (the default among them; not left to a generic number, as cond's p)
            nd = len(shape)
            q = self.rng.random()
            pair = [int(d) for d in self.rng.permutation(nd)[:2]] if nd >= 2 else [0, -1]
            pair = [d - nd if self.p(0.5) else d for d in pair]
            if n == "matrix_norm" or (n == "norm" and q < 0.35):
                if self.p(0.93):
                    dims = pair
                else:
                    dims = self.choice([[0, 0], [-1], [0, 1, 2], [nd, 0]])
                opt("dim", tup([py(d) for d in dims]) if self.p(0.7) else lst([py(d) for d in dims]),
                    0.5 if n == "matrix_norm" else 1.0)
            elif q < 0.85:
                opt("dim", self.dim(allow_tuple=n == "vector_norm", allow_none=True), 0.7)
            opt("keepdim", flag(), 0.3)
            opt("dtype", dtype_spec(self.choice(["float32", "float64", "int64"], [0.4, 0.5, 0.1])), 0.15)
            return r
        if n == "vecdot":
            x = self.tensor(self.batch() + [N], dt)
            self.prim = x
            y = self.like(x, dtype=dt if self.p(0.9) else None)
            r.update({"_prim": x, "x": x, "y": y})
            opt("dim", self.dim(), 0.35)
            return r
        if n == "multi_dot":
            k = int(self.choice([0, 1, 2, 3, 4], [0.03, 0.07, 0.4, 0.3, 0.2]))
            sizes = [self.msize() for _ in range(k + 1)]
            items = []
            for i in range(k):
                sh = [sizes[i], sizes[i + 1]]
                if i == 0 and self.p(0.25):
                    sh = sh[1:]
                elif i == k - 1 and k > 1 and self.p(0.25):
                    sh = sh[:1]
                if self.p(0.05):
                    sh = self.shape()
                items.append(self.tensor(sh, dt if self.p(0.95) else self.mat_dtype(),
                                         vals=self.choice(["normal", "smallint", "special"], [0.8, 0.12, 0.08]),
                                         layout=self.choice(LAYOUTS, [0.6, 0.12, 0.1, 0.08, 0.06, 0.04])))
            self.prim = T([1, 1], "float32")
            return {"tensors": lst(items) if self.p(0.7) else tup(items)}
        if n == "diagonal":
            x = self.tensor(self.batch() + [self.msize(), self.msize()] if self.p(0.9) else self.shape(),
                            dt if self.p(0.8) else self.dtype())
            self.prim = x
            r.update({"_prim": x, "A": x})
            opt("offset", py(self.choice([0, 1, -1, 2, -3, 5])), 0.4)
            opt("dim1", self.dim(), 0.25)
            opt("dim2", self.dim(), 0.25)
            return r
        if n == "cross":
            shape = self.batch() + [3] + ([self.msize()] if self.p(0.3) else [])
            if self.p(0.05):
                shape = self.shape()
            x = self.tensor(shape, dt if self.p(0.9) else self.dtype())
            self.prim = x
            r.update({"_prim": x, "input": x, "other": self.like(x, dtype=dt if self.p(0.9) else None)})
            three = [d for d, s in enumerate(shape) if s == 3]
            if self.p(0.5) or len(shape) and shape[-1] != 3:
                d = self.choice(three) if three and self.p(0.85) else int(self.rng.integers(0, max(len(shape), 1)))
                r["dim"] = py(d - len(shape) if self.p(0.5) else d)
            return r
        return None

    def index_expr(self, shape):
        """A __getitem__/__setitem__ key for a tensor of this shape."""
        nd = len(shape)

        def one(d):
            s = shape[d] if d < nd else 1
            r = self.rng.random()
            if r < 0.3:
                return py(int(self.rng.integers(-s - 1 if self.p(0.1) else -max(s, 1), s + 1 if self.p(0.1) else max(s, 1))))
            if r < 0.55:
                return {"k": "slice", "v": [self.choice([None, 0, 1, -1, -5, 2 ** 62]), self.choice([None, 2, -1, 5, 0]),
                                            self.choice([None, None, 1, 2, 3, -1, 0])]}
            if r < 0.62:
                return py(None)
            if r < 0.67:
                return {"k": "ellipsis"}
            if r < 0.8:
                k = self.size()
                return lst([py(int(self.rng.integers(-max(s, 1), max(s, 1) + (1 if self.p(0.1) else 0)))) for _ in range(k)])
            if r < 0.9:
                return self.tensor([self.size()], "int64", vals="index", lo=-max(s, 1), hi=max(s, 1), layout="contig", grad=False)
            if r < 0.95:
                return self.tensor(shape[d:d + 1], "bool", vals="normal", layout="contig", grad=False)
            return self.choice([py(True), py(False), py(1.5), py("a"), py(2 ** 63)])
        k = int(self.rng.integers(1, nd + 2))
        items = [one(d) for d in range(k)]
        if k == 1 and self.p(0.6):
            return items[0]
        return tup(items)

    # -- assembly ---------------------------------------------------------------------------
    def case(self):
        e = self.e
        ov = self.choice(e["overloads"]) if e["overloads"] else []
        rec = None
        try:
            rec = self.recipe()
        except Exception:  # a recipe bug must not stop the run; fall back to generic arguments
            rec = None
        if rec and "_prim" in rec:
            self.prim = rec.pop("_prim")
        elif self.prim is None and (e["ns"] in ("Tensor",) or any(p["name"] in ("input", "self", "tensor") for p in ov[:1])):
            self.prim = self.tensor()
        rec = rec or {}
        args, kwargs = [], {}
        if e["ns"] == "Tensor":
            args.append(self.prim if self.prim is not None else self.tensor())
        positional_ok = True
        for prm in ov:
            name = prm["name"]
            if name in SKIP_PARAMS:
                continue
            if name in rec:
                val, include = rec[name], True
            elif name == "self":
                continue
            else:
                include = prm["required"] or prm["var"] or self.p(0.35)
                val = self.param(prm) if include else None
            if name in ("input", "tensor") and self.prim is not None and name not in rec and e["ns"] != "Tensor":
                val = self.prim
            if not include:
                positional_ok = False
                continue
            if isinstance(val, list) and not prm["var"]:
                val = tup(val)
            if prm["var"]:
                items = val if isinstance(val, list) else [val]
                args.append(star(items))
                continue
            posonly = re.match(r"^arg\d+$", name) is not None or self.name.startswith("__")
            if posonly and not positional_ok:
                continue  # a positional-only parameter after a skipped one: leave the rest out
            if posonly or not prm["kwonly"] and positional_ok and self.p(0.8):
                args.append(val)
            else:
                positional_ok = False
                kwargs[name] = val
        # pybind handle-typed operators (arg0, arg1) came through the loop; a mutation now
        if self.p(0.12):
            self.mutate(args, kwargs, ov)
        case = {"id": e["id"], "ns": e["ns"], "name": e["name"], "kind": e["kind"], "args": args, "kwargs": kwargs}
        return case

    def mutate(self, args, kwargs, ov):
        r = self.rng.random()
        if self.name.startswith("__"):
            r *= 0.45  # operators: wrong types only (x + "abc"), not wrong argument counts
        slots = [("a", i) for i in range(len(args))] + [("k", k) for k in kwargs]
        if self.e["ns"] == "Tensor":
            slots = slots[1:]
        if r < 0.45 and slots:
            kind, key = self.choice(slots)
            cur = args[key] if kind == "a" else kwargs[key]
            if isinstance(cur, dict) and cur.get("k") == "py" and isinstance(cur["v"], int) and not isinstance(cur["v"], bool) \
                    and self.p(0.5):
                new = py(self.choice(HUGE_INTS + [-1, -2]))
            else:
                new = self.wrong()
            if kind == "a":
                args[key] = new
            else:
                kwargs[key] = new
        elif r < 0.6 and slots:
            kind, key = slots[-1]
            if kind == "a":
                args.pop(key)
            else:
                kwargs.pop(key)
        elif r < 0.7 and not self.name.startswith("__"):
            kwargs["bogus_kw"] = py(1)
        else:
            args.append(py(self.number()) if self.p(0.5) else self.tensor())


def make_case(entry, seed, rnd):
    case = CaseGen(entry, seed, rnd).case()
    case["key"] = f"{seed}:{entry['id']}:{rnd}"
    return case


def case_stream(surface, seed, n, start=0):
    """Case i calls surface[i % len] in round i // len: every callable is drawn in turn."""
    m = len(surface)
    for i in range(start, start + n):
        yield make_case(surface[i % m], seed, i // m)


# ---------------------------------------------------------------------------------------------
# Reproducers

def _fmt_float(v):
    if v != v:
        return "nan"
    if v in (math.inf, -math.inf):
        return "inf" if v > 0 else "-inf"
    return repr(float(v))


def _literal(a):
    if a.dtype == np.bool_:
        return repr(a.tolist())
    if a.dtype.kind == "f":
        conv = np.float32 if a.dtype == np.float32 else float

        def rec(x):
            if isinstance(x, list):
                return "[" + ", ".join(rec(y) for y in x) + "]"
            if x != x or x in (math.inf, -math.inf):
                return _fmt_float(x)
            return str(conv(x))  # shortest repr that round-trips in the tensor's own dtype
        return rec(a.astype(np.float64).tolist())
    return repr(a.tolist())


def tensor_expr(spec, lib="torch"):
    a = make_array(spec)
    shape = tuple(spec["shape"])
    bshape = tuple(base_shape(spec))
    if a.size == 0:
        base = f"{lib}.zeros({bshape}, dtype={lib}.{spec['dtype']})"
    elif a.ndim == 0:
        base = f"{lib}.tensor({_literal(a)}, dtype={lib}.{spec['dtype']})"
    else:
        base = f"{lib}.tensor({_literal(a)}, dtype={lib}.{spec['dtype']})"
    if spec.get("grad"):
        base += ".requires_grad_()"
    lay = spec.get("layout", "contig")
    if lay == "transposed":
        base += ".transpose(-1, -2)"
    elif lay == "strided":
        base += "[..., ::2]"
    elif lay == "expanded":
        base += f".expand({shape})"
    elif lay == "offset":
        base += f"[{spec['off']}:].view({shape})"
    elif lay == "overlap":
        base += f".as_strided({shape}, {tuple(spec['strides'])})"
    return base


def spec_expr(spec, lib, defs):
    """Python source for one argument spec; tensors are hoisted into `defs`."""
    if isinstance(spec, list):
        return ", ".join(spec_expr(s, lib, defs) for s in spec)
    k = spec["k"]
    if k == "py":
        v = spec["v"]
        return _fmt_float(v) if isinstance(v, float) else repr(v)
    if k == "T":
        name = f"x{len(defs)}"
        defs.append(f"{name} = {tensor_expr(spec, lib)}")
        return name
    if k == "tuple":
        inner = ", ".join(spec_expr(s, lib, defs) for s in spec["items"])
        return f"({inner},)" if len(spec["items"]) == 1 else f"({inner})"
    if k == "list":
        return "[" + ", ".join(spec_expr(s, lib, defs) for s in spec["items"]) + "]"
    if k == "star":
        return ", ".join(spec_expr(s, lib, defs) for s in spec["items"])
    if k == "dtype":
        return f"{lib}.{spec['v']}"
    if k == "slice":
        a, b, c = spec["v"]
        return "slice(" + ", ".join(repr(x) for x in (a, b, c)) + ")"
    if k == "ellipsis":
        return "..."
    if k == "obj":
        return "object()"
    if k == "dict":
        return "{}"
    if k == "nested":
        a = make_array(spec["spec"])
        return _literal(a) if a.size else repr(a.tolist())
    if k == "nd":
        return f"np.array({_literal(make_array(spec['spec']))}, dtype=np.{spec['np_dtype']})"
    raise ValueError(k)


OPERATORS = {
    "__add__": "{0} + {1}", "__radd__": "{1} + {0}", "__sub__": "{0} - {1}", "__rsub__": "{1} - {0}",
    "__mul__": "{0} * {1}", "__rmul__": "{1} * {0}", "__truediv__": "{0} / {1}", "__rtruediv__": "{1} / {0}",
    "__floordiv__": "{0} // {1}", "__rfloordiv__": "{1} // {0}", "__mod__": "{0} % {1}", "__rmod__": "{1} % {0}",
    "__pow__": "{0} ** {1}", "__rpow__": "{1} ** {0}", "__matmul__": "{0} @ {1}", "__rmatmul__": "{1} @ {0}",
    "__and__": "{0} & {1}", "__rand__": "{1} & {0}", "__or__": "{0} | {1}", "__ror__": "{1} | {0}",
    "__xor__": "{0} ^ {1}", "__rxor__": "{1} ^ {0}", "__eq__": "{0} == {1}", "__ne__": "{0} != {1}",
    "__lt__": "{0} < {1}", "__le__": "{0} <= {1}", "__gt__": "{0} > {1}", "__ge__": "{0} >= {1}",
    "__iadd__": "{0} += {1}", "__isub__": "{0} -= {1}", "__imul__": "{0} *= {1}", "__itruediv__": "{0} /= {1}",
    "__ifloordiv__": "{0} //= {1}", "__imod__": "{0} %= {1}", "__ipow__": "{0} **= {1}", "__iand__": "{0} &= {1}",
    "__ior__": "{0} |= {1}", "__ixor__": "{0} ^= {1}",
    "__neg__": "-{0}", "__pos__": "+{0}", "__abs__": "abs({0})", "__invert__": "~{0}", "__len__": "len({0})",
    "__bool__": "bool({0})", "__float__": "float({0})", "__int__": "int({0})", "__index__": "operator.index({0})",
    "__iter__": "list({0})", "__getitem__": "{0}[{1}]", "__setitem__": "{0}[{1}] = {2}",
    "__deepcopy__": "copy.deepcopy({0})",
}


def call_expr(case, lib="torch"):
    """(definitions, call expression) of a case, as Python source."""
    defs = []
    args = [spec_expr(a, lib, defs) for a in case["args"]]
    kwargs = [f"**{{{k!r}: {spec_expr(v, lib, defs)}}}" if keyword.iskeyword(k) else f"{k}={spec_expr(v, lib, defs)}"
              for k, v in case["kwargs"].items()]
    ns, name = case["ns"], case["name"]
    if case["kind"] == "attr":
        return defs, f"{args[0]}.{name}"
    if ns == "Tensor" and name in OPERATORS and not kwargs and len(args) == OPERATORS[name].count("{") and \
            all(a.get("k") != "star" for a in case["args"]):
        return defs, OPERATORS[name].format(*args)
    allargs = ", ".join(args[1:] + kwargs) if ns == "Tensor" else ", ".join(args + kwargs)
    if ns == "Tensor":
        return defs, f"{args[0]}.{name}({allargs})" if args else f"{lib}.Tensor.{name}()"
    prefix = f"{lib}.nn.functional" if ns == "F" else f"{lib}.linalg" if ns == "linalg" else lib
    return defs, f"{prefix}.{name}({allargs})"


def snippet(case, lib="torch"):
    """A standalone Python snippet reproducing the case with `lib` (torch or graft)."""
    defs, expr = call_expr(case, lib)
    head = f"import copy, operator; import numpy as np; from math import nan, inf; import {lib}"
    return "; ".join([head] + defs + [expr])


def short_call(case, lib="torch"):
    """A compact one-line description: tensors as dtype[shape]layout/values."""
    def short(spec):
        if isinstance(spec, list):
            return ", ".join(short(s) for s in spec)
        k = spec["k"]
        if k == "T":
            lay = spec.get("layout", "contig")
            tag = "" if lay == "contig" else f"{lay}"
            vals = "" if spec.get("vals") == "normal" else f"{spec.get('vals')}"
            mark = ",".join(x for x in (tag, vals, "grad" if spec.get("grad") else "") if x)
            return f"T<{spec['dtype']}{list(spec['shape'])}{'|' + mark if mark else ''}>"
        if k in ("tuple", "list", "star"):
            inner = ", ".join(short(s) for s in spec["items"])
            return {"tuple": f"({inner})", "list": f"[{inner}]", "star": inner}[k]
        if k == "nested":
            return f"list<{short(spec['spec'])}>"
        if k == "nd":
            return f"ndarray<{spec['np_dtype']}{list(spec['spec']['shape'])}>"
        defs = []
        return spec_expr(spec, lib, defs)
    args = [short(a) for a in case["args"]]
    kwargs = [f"{k}={short(v)}" for k, v in case["kwargs"].items()]
    if case["kind"] == "attr":
        return f"{args[0]}.{case['name']}"
    if case["ns"] == "Tensor":
        return f"{args[0] if args else '?'}.{case['name']}({', '.join(args[1:] + kwargs)})"
    prefix = "F" if case["ns"] == "F" else f"{lib}.linalg" if case["ns"] == "linalg" else lib
    return f"{prefix}.{case['name']}({', '.join(args + kwargs)})"

