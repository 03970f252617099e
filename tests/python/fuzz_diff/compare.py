"""Normalising results and errors of one side, and classifying a case from both sides.

Classes (one per case, the first that applies, in this order):
  crash, hang           set by the parent (the child died / timed out in graft's half)
  torch_crash, torch_hang   the same in torch's half (not a graft finding; the case is skipped)
  setup_difference      building the inputs (from_numpy, a layout view) failed on one side only
  mutated_on_error      graft raised and its inputs' storage or shape changed (and torch's did not
                        change the same way)
  wrong_value           both returned, and the results differ in structure, shape, dtype or values,
                        or the inputs differ after the call (in-place writes)
  wrong_grad            requires_grad of an output, or the gradients of sum(out * w) w.r.t. the
                        inputs, differ
  overflow_order        a wrong_value or wrong_grad on a case whose float inputs hold "extreme" values
                        (near float overflow, subnormal, 2**63): results there depend on accumulation
                        order and intermediate precision; listed, not gating
  slow                  (set by the child) a non-gating case whose graft half took > 2 s and 10x torch's
  identity              one side returns one of its input objects (x.add_() is x) and the other not
  accept_refuse         one side raised, the other returned
  error_type            both raised, with different exception families
  error_text            both raised the same family with different messages
  ok
"""
import json
import math

import numpy as np

GATING = ("crash", "hang", "wrong_value", "wrong_grad", "mutated_on_error", "accept_refuse", "error_type")
MAX_COMPARE = 10_000_000  # elements compared by value (bigger results: shape and dtype only)

# Normalisations divide rounding residues of (x - mean) by sqrt(var + eps): a float32 row of equal
# values gives 0 in one library and ~1e-5 in the other. Their absolute tolerance is looser.
LOOSE = {"F.layer_norm", "F.group_norm", "F.batch_norm"}


def family(exc):
    """The exception family torch and graft are compared on."""
    for cls in (IndexError, TypeError, ValueError, NotImplementedError, KeyError, OverflowError,
                ZeroDivisionError, AttributeError):
        if isinstance(exc, cls):
            return cls.__name__
    if isinstance(exc, RuntimeError):
        return "RuntimeError"
    return type(exc).__name__


def message(exc):
    return str(exc).strip()


def _dtype_name(dt):
    return str(dt).rsplit(".", 1)[-1]


def to_numpy(t):
    """A tensor's values as a fresh numpy array (None if the conversion itself fails)."""
    try:
        return np.array(t.detach().numpy(), copy=True)
    except Exception:
        try:
            return np.array(t.detach().tolist())
        except Exception:
            return None


def normalize(obj, lib, inputs=()):
    """Turns a result into plain data: tensors -> dict with dtype, shape, values, requires_grad and
    whether it is one of the input objects."""
    if isinstance(obj, lib.Tensor):
        n = 1
        for s in obj.shape:
            n *= int(s)
        alias = next((i for i, x in enumerate(inputs) if x is obj), None)
        return {"t": "T", "dtype": _dtype_name(obj.dtype), "shape": tuple(int(s) for s in obj.shape),
                "a": to_numpy(obj) if n <= MAX_COMPARE else None, "rg": bool(obj.requires_grad), "alias": alias}
    if isinstance(obj, (bool, np.bool_)):
        return {"t": "bool", "v": bool(obj)}
    if isinstance(obj, int):
        return {"t": "int", "v": int(obj)}
    if isinstance(obj, float):
        return {"t": "float", "v": float(obj)}
    if obj is None:
        return {"t": "None"}
    if isinstance(obj, str):
        return {"t": "str", "v": obj.replace("graft", "torch")}
    if isinstance(obj, lib.dtype):
        return {"t": "dtype", "v": _dtype_name(obj)}
    if isinstance(obj, np.ndarray):
        return {"t": "nd", "dtype": str(obj.dtype), "shape": obj.shape, "a": np.array(obj, copy=True)}
    if isinstance(obj, (tuple, list)):
        kind = "Size" if type(obj).__name__ == "Size" else "list" if isinstance(obj, list) else "tuple"
        return {"t": "seq", "kind": kind, "items": [normalize(x, lib, inputs) for x in obj]}
    if isinstance(obj, lib.device):
        return {"t": "device", "v": str(obj)}
    if isinstance(obj, dict):
        return {"t": "dict", "keys": sorted(map(str, obj))}
    return {"t": "obj", "type": type(obj).__name__}


def tolerances(dtype, grad=False):
    if dtype in ("float32",):
        return (1e-3, 1e-4) if grad else (2e-4, 1e-5)
    if dtype in ("float64",):
        return (1e-6, 1e-8) if grad else (1e-7, 1e-9)
    return (0.0, 0.0)


def arrays_differ(a, b, dtype, grad=False, loose=False):
    """None when equal (NaN == NaN, dtype-aware tolerance), else a short description."""
    if a is None or b is None:
        return None if a is None and b is None else "values unreadable on one side"
    if a.shape != b.shape:
        return f"shape {a.shape} vs {b.shape}"
    if a.size == 0:
        return None
    if a.dtype.kind in "fc" or b.dtype.kind in "fc":
        rtol, atol = tolerances(dtype, grad)
        if dtype not in ("float32", "float64"):
            rtol, atol = 2e-4, 1e-5
        if loose:
            atol = max(atol, 1e-3 if dtype != "float64" else 1e-7)
        with np.errstate(all="ignore"):
            af, bf = a.astype(np.float64), b.astype(np.float64)
            ok = np.isclose(af, bf, rtol=rtol, atol=atol, equal_nan=True)
        if ok.all():
            return None
        k = int(np.argmin(ok.reshape(-1)))
        return (f"{int((~ok).sum())}/{ok.size} elements differ, e.g. [{k}] torch {af.reshape(-1)[k]!r} "
                f"graft {bf.reshape(-1)[k]!r}")
    if np.array_equal(a, b):
        return None
    neq = a.reshape(-1) != b.reshape(-1)
    k = int(np.argmax(neq))
    return f"{int(neq.sum())}/{neq.size} elements differ, e.g. [{k}] torch {a.reshape(-1)[k]!r} graft {b.reshape(-1)[k]!r}"


def tree_diff(t, g, path="out", values=True, lowp=False, loose=False):
    """First difference between two normalised results (None when they agree); returns (kind, text)
    with kind 'value', 'grad' (requires_grad only) or 'identity'."""
    if t["t"] != g["t"]:
        return "value", f"{path}: torch returns {t['t']} {_brief(t)}, graft {g['t']} {_brief(g)}"
    k = t["t"]
    if k == "T":
        if t["shape"] != g["shape"]:
            return "value", f"{path}: shape torch {list(t['shape'])} graft {list(g['shape'])}"
        if t["dtype"] != g["dtype"]:
            return "value", f"{path}: dtype torch {t['dtype']} graft {g['dtype']}"
        if values:
            d = arrays_differ(t["a"], g["a"], "float32" if lowp else t["dtype"], loose=loose)
            if d:
                return "value", f"{path}: {d}"
        if (t["alias"] is None) != (g["alias"] is None):
            return "identity", f"{path}: torch {'returns input' if t['alias'] is not None else 'returns a new tensor'}, " \
                               f"graft {'returns input' if g['alias'] is not None else 'returns a new tensor'}"
        if t["rg"] != g["rg"]:
            return "grad", f"{path}: requires_grad torch {t['rg']} graft {g['rg']}"
        return None
    if k == "seq":
        if len(t["items"]) != len(g["items"]):
            return "value", f"{path}: torch {t['kind']} of {len(t['items'])}, graft {g['kind']} of {len(g['items'])}"
        first = None
        for i, (a, b) in enumerate(zip(t["items"], g["items"])):
            d = tree_diff(a, b, f"{path}[{i}]", values, lowp, loose)
            if d and (d[0] == "value" or first is None):
                if d[0] == "value":
                    return d
                first = d
        if first:
            return first
        if t["kind"] != g["kind"] and "Size" in (t["kind"], g["kind"]):
            return "value", f"{path}: torch {t['kind']} graft {g['kind']}"
        return None
    if k in ("bool", "int", "str", "dtype", "device"):
        return None if t["v"] == g["v"] else ("value", f"{path}: torch {t['v']!r} graft {g['v']!r}")
    if k == "float":
        a, b = t["v"], g["v"]
        if not values or a == b or (a != a and b != b) or math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-9):
            return None
        return "value", f"{path}: torch {a!r} graft {b!r}"
    if k == "nd":
        if t["shape"] != g["shape"] or t["dtype"] != g["dtype"]:
            return "value", f"{path}: ndarray {t['dtype']}{list(t['shape'])} vs {g['dtype']}{list(g['shape'])}"
        d = arrays_differ(t["a"], g["a"], "float32" if lowp else t["dtype"]) if values else None
        return ("value", f"{path}: {d}") if d else None
    if k == "dict":
        return None if t["keys"] == g["keys"] else ("value", f"{path}: dict keys differ")
    if k == "obj":
        return None if t["type"] == g["type"] else None  # library-specific classes: not compared
    return None


def _brief(n):
    k = n["t"]
    if k == "T":
        return f"Tensor[{n['dtype']}]{list(n['shape'])}"
    if k == "seq":
        return f"{n['kind']}({', '.join(_brief(x) for x in n['items'][:4])}{', ...' if len(n['items']) > 4 else ''})"
    if k in ("bool", "int", "float", "str", "dtype", "device"):
        return repr(n["v"])
    if k == "nd":
        return f"ndarray[{n['dtype']}]{list(n['shape'])}"
    return k


def brief_outcome(side):
    """One line for the report: 'ok: <result>' or 'Family: message'."""
    if side.get("setup_error"):
        return f"setup error: {side['setup_error'][:200]}"
    if "exc" in side:
        return f"{side['exc']['type']}: {side['exc']['msg'][:300]}"
    return "ok: " + _brief(side["res"])


def snapshots_differ(before, after):
    """Index of the first input whose storage or shape changed, else None."""
    for i, (b, a) in enumerate(zip(before, after)):
        if b["shape"] != a["shape"]:
            return i
        if b["base"] is None or a["base"] is None:
            continue
        if b["base"].shape != a["base"].shape:
            return i
        if b["base"].dtype.kind == "f":
            same = np.array_equal(b["base"], a["base"], equal_nan=True)
            # -0.0 vs 0.0 counts as a write
            same = same and np.array_equal(np.signbit(b["base"]), np.signbit(a["base"]))
        else:
            same = np.array_equal(b["base"], a["base"])
        if not same:
            return i
    return None


def _has_extreme(spec):
    if isinstance(spec, list):
        return any(_has_extreme(s) for s in spec)
    if not isinstance(spec, dict):
        return False
    if spec.get("k") == "T":
        return spec.get("vals") == "extreme" and spec["dtype"] in ("float32", "float64")
    return any(_has_extreme(v) for v in spec.values() if isinstance(v, (dict, list)))


def classify(case, t, g, values_unspecified=False):
    """Compares torch's side t with graft's side g; returns (class, detail)."""
    cls, detail = _classify(case, t, g, values_unspecified)
    if cls in ("wrong_value", "wrong_grad") and (_has_extreme(case["args"]) or _has_extreme(list(case["kwargs"].values()))):
        return "overflow_order", f"[{cls}] {detail}"
    return cls, detail


def _classify(case, t, g, values_unspecified=False):
    if t.get("setup_error") or g.get("setup_error"):
        if t.get("setup_error") and g.get("setup_error"):
            return "ok", "inputs could not be built on either side"
        side = "torch" if t.get("setup_error") else "graft"
        return "setup_difference", f"building the inputs failed on {side} only: {(t.get('setup_error') or g.get('setup_error'))[:200]}"
    t_exc, g_exc = t.get("exc"), g.get("exc")
    if g_exc is not None:
        i = snapshots_differ(g["before"], g["after"])
        if i is not None:
            j = snapshots_differ(t["before"], t["after"]) if t_exc is not None else None
            if j != i or not _same_after(t["after"], g["after"], i):
                return "mutated_on_error", f"graft raised {g_exc['type']} ({g_exc['msg'][:120]}) after changing input {i}"
    if t_exc is not None and g_exc is not None:
        if t_exc["family"] != g_exc["family"]:
            return "error_type", f"torch {t_exc['type']}, graft {g_exc['type']}"
        if t_exc["msg"] != g_exc["msg"]:
            return "error_text", f"torch {t_exc['msg'][:160]!r} graft {g_exc['msg'][:160]!r}"
        return "ok", ""
    if (t_exc is None) != (g_exc is None):
        if t_exc is None:
            return "accept_refuse", f"graft refuses ({g_exc['type']}: {g_exc['msg'][:160]}), torch accepts"
        return "accept_refuse", f"graft accepts, torch refuses ({t_exc['type']}: {t_exc['msg'][:160]})"
    # both returned
    # float32 anywhere in the case (an input, dtype=float32) bounds the precision of everything
    lowp = '"float32"' in json.dumps(case)
    loose = case["id"] in LOOSE
    d = tree_diff(t["res"], g["res"], values=not values_unspecified, lowp=lowp, loose=loose)
    if d and d[0] == "value":
        return "wrong_value", d[1]
    if not values_unspecified:
        for i, (a, b) in enumerate(zip(t["after"], g["after"])):
            if a["shape"] != b["shape"]:
                return "wrong_value", f"input {i} after the call: shape torch {a['shape']} graft {b['shape']}"
            dd = arrays_differ(a["base"], b["base"], "float32" if lowp else a["dtype"])
            if dd:
                return "wrong_value", f"input {i} after the call (storage): {dd}"
    if d and d[0] == "grad":
        return "wrong_grad", d[1]
    if not values_unspecified:
        gd = grads_differ(t.get("grads"), g.get("grads"), lowp, loose)
        if gd:
            return "wrong_grad", gd
    if d and d[0] == "identity":
        return "identity", d[1]
    return "ok", ""


def _same_after(ta, ga, i):
    a, b = ta[i], ga[i]
    if a["shape"] != b["shape"]:
        return False
    return arrays_differ(a["base"], b["base"], a["dtype"]) is None


def grads_differ(tg, gg, lowp=False, loose=False):
    """Gradients are dicts {'error': str} or {'grads': [array|None per input leaf], 'dtypes': [...]}."""
    if tg is None and gg is None:
        return None
    if tg is None or gg is None:
        return None
    if "error" in tg or "error" in gg:
        if "error" in tg and "error" in gg:
            return None
        if "error" in tg:  # torch cannot differentiate this (1.13 lacks the formula): nothing to compare
            return None
        return f"backward raised on graft only: {gg['error'][:200]}"
    for i, (a, b) in enumerate(zip(tg["grads"], gg["grads"])):
        if a is None and b is None:
            continue
        if a is None:
            a = np.zeros_like(b)
        if b is None:
            b = np.zeros_like(a)
        d = arrays_differ(a, b, "float32" if lowp else tg["dtypes"][i], grad=True, loose=loose)
        if d:
            return f"grad of input {i}: {d}"
    return None


ERROR_TEXT_KINDS = {
    "arg_parsing": "a TypeError about the arguments: pybind11's 'incompatible function arguments' text, or graft's "
                   "class names (graft._C.Tensor), where torch's argument parser words it its own way",
    "added_context": "graft's text is torch's with the op's name before it or the shapes after it",
    "other_check": "another wording, or another of the call's faults reported first",
}


def error_text_kind(t_msg, g_msg):
    """Which ERROR_TEXT_KINDS an error_text difference (same family, other message) is."""
    import re
    t, g = t_msg.split("\n")[0], g_msg.split("\n")[0]
    if "incompatible function arguments" in g or "graft._C." in g or "Unable to cast" in g:
        return "arg_parsing"
    core = re.sub(r"; shapes are .*$", "", re.sub(r"^[\w.]+: ", "", g))
    if t and (t in g or core == t or (core and core in t)):
        return "added_context"
    return "other_check"
