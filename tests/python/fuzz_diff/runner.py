"""Running cases: the parent side (Driver, run) and the child side (child_main).

The parent never imports graft or torch. It starts `python -m fuzz_diff.runner --child`, writes one
case per line to the child's stdin and reads the child's protocol lines (JSON on a private pipe; the
child's own stdout goes to its stderr file):

    {"ready": ...}                      after the imports
    {"phase": "torch", "key": K}        before torch's half of case K
    {"phase": "graft", "key": K, ...}   before graft's half (with torch's outcome)
    {"result": {...}}                   the classification of case K

A child that dies is blamed on the case and half named by its last phase line (crash, or
torch_crash); one silent for longer than the per-phase timeout is killed and the case is a hang (or
torch_hang). Either way the parent starts a fresh child and goes on with the next case.
"""
import copy
import json
import operator
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
PKG_PARENT = os.path.dirname(HERE)  # tests/python: what the child needs on sys.path for fuzz_diff
CHILD_MEMORY_LIMIT = 6 << 30        # address space of a child: huge allocations fail fast
SLOW_S = 2.0                        # graft's half slower than this (and 10x torch's): class "slow"


# =============================================================================================
# Parent side

def child_env(graft_path=None):
    env = dict(os.environ)
    parts = [PKG_PARENT]
    if graft_path:
        parts.append(graft_path)
    if env.get("PYTHONPATH"):  # absolute: the children run in another folder
        parts += [os.path.abspath(p) for p in env["PYTHONPATH"].split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join(parts)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["OMP_NUM_THREADS"] = "1"
    env["MKL_NUM_THREADS"] = "1"
    return env


def discover_surface(graft_path=None, python=sys.executable, timeout=300):
    """The surface (generator.discover) computed in a child, so that the parent stays clean."""
    out = subprocess.run([python, "-m", "fuzz_diff.runner", "--discover"], env=child_env(graft_path),
                         capture_output=True, text=True, timeout=timeout, cwd=PKG_PARENT)
    if out.returncode != 0:
        raise RuntimeError(f"surface discovery failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


class Driver:
    """One child at a time; run_case() returns the result dict of one case."""

    def __init__(self, graft_path=None, timeout=10.0, python=sys.executable, startup_timeout=180.0):
        self.env = child_env(graft_path)
        self.timeout = timeout
        self.python = python
        self.startup_timeout = startup_timeout
        self.proc = None
        self.buf = b""
        self.errfile = None
        self.restarts = 0

    # -- child management ------------------------------------------------------------------
    def _start(self):
        if self.errfile is not None:
            self.errfile.close()
        self.errfile = tempfile.TemporaryFile()
        r, w = os.pipe()
        self.proc = subprocess.Popen(
            [self.python, "-m", "fuzz_diff.runner", "--child", str(w)], stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL, stderr=self.errfile, env=self.env, cwd=PKG_PARENT, pass_fds=(w,),
            start_new_session=True)
        os.close(w)
        self.fd = r
        self.buf = b""
        msg = self._read(time.monotonic() + self.startup_timeout)
        if not msg or "ready" not in msg:
            tail = self._stderr_tail()
            self._kill()
            raise RuntimeError(f"fuzz child did not start: {msg!r}\n{tail}")
        self.restarts += 1

    def _kill(self):
        if self.proc is not None:
            if self.proc.poll() is None:
                try:
                    self.proc.kill()  # only the child we started, by its pid
                except ProcessLookupError:
                    pass
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                pass
            try:
                self.proc.stdin.close()
            except Exception:
                pass
            try:
                os.close(self.fd)
            except OSError:
                pass
            self.proc = None

    def close(self):
        if self.proc is not None and self.proc.poll() is None:
            try:
                self.proc.stdin.close()
                self.proc.wait(timeout=10)
            except Exception:
                pass
        self._kill()
        if self.errfile is not None:
            self.errfile.close()
            self.errfile = None

    def _stderr_tail(self, n=1500):
        try:
            self.errfile.seek(0, os.SEEK_END)
            size = self.errfile.tell()
            self.errfile.seek(max(0, size - n))
            return self.errfile.read().decode("utf-8", "replace")
        except Exception:
            return ""

    def _read(self, deadline):
        """Next protocol message, or None on EOF, or 'timeout'."""
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                return "timeout"
            ready, _, _ = select.select([self.fd], [], [], left)
            if not ready:
                return "timeout"
            chunk = os.read(self.fd, 1 << 16)
            if not chunk:
                return None
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    # -- one case --------------------------------------------------------------------------
    def run_case(self, case):
        if self.proc is None:
            self._start()
        try:
            self.proc.stdin.write((json.dumps(case) + "\n").encode())
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            self._kill()
            self._start()
            self.proc.stdin.write((json.dumps(case) + "\n").encode())
            self.proc.stdin.flush()
        phase, torch_outcome = None, None
        while True:
            msg = self._read(time.monotonic() + self.timeout)
            if msg == "timeout" or msg is None:
                dead = msg is None
                if not dead:
                    self._kill()
                    rc = None
                else:
                    try:
                        rc = self.proc.wait(timeout=30)
                    except subprocess.TimeoutExpired:
                        rc = None
                tail = self._stderr_tail()
                self._kill()
                side = "graft" if phase == "graft" else "torch"
                if dead:
                    sig = -rc if rc is not None and rc < 0 else None
                    how = signal.Signals(sig).name if sig else f"exit status {rc}"
                    cls = "crash" if side == "graft" else "torch_crash"
                    detail = f"child died ({how}) in {side}'s half"
                else:
                    cls = "hang" if side == "graft" else "torch_hang"
                    detail = f"no answer within {self.timeout:g}s in {side}'s half"
                stderr_lines = [ln for ln in tail.strip().splitlines() if ln.strip()][-3:]
                if stderr_lines and dead:
                    detail += " | stderr: " + " / ".join(stderr_lines)[-400:]
                return {"key": case["key"], "id": case["id"], "class": cls, "detail": detail,
                        "torch": torch_outcome or "", "graft": cls}
            if "phase" in msg:
                phase = msg["phase"]
                torch_outcome = msg.get("torch", torch_outcome)
                continue
            if "result" in msg:
                return msg["result"]


def load_known(path):
    with open(path) as f:
        entries = json.load(f)
    return {(e["callable"], e["class"]): e for e in entries}


def run(seed, n_cases, start=0, graft_path=None, timeout=10.0, progress=0, surface=None, log=None,
        only=None):
    """Runs n_cases cases of seed (case i calls surface[i % len] in round i // len) and returns the
    summary dict: counts by class, distinct findings by (callable, class) with reproducers."""
    from . import generator
    t0 = time.monotonic()
    if surface is None:
        surface = discover_surface(graft_path)
    if only:
        surface = [e for e in surface if any(o == e["id"] or o == e["name"] for o in only)]
    drv = Driver(graft_path, timeout)
    counts, findings, directions = {}, {}, {}
    done = 0
    try:
        for case in generator.case_stream(surface, seed, n_cases, start):
            res = drv.run_case(case)
            cls = res["class"]
            counts[cls] = counts.get(cls, 0) + 1
            if cls == "accept_refuse":
                way = "graft_accepts" if res.get("detail", "").startswith("graft accepts") else "graft_refuses"
                directions[way] = directions.get(way, 0) + 1
            done += 1
            if cls != "ok":
                fk = (res["id"], cls)
                f = findings.get(fk)
                if f is None:
                    findings[fk] = {
                        "callable": res["id"], "class": cls, "count": 1, "detail": res.get("detail", ""),
                        "call": generator.short_call(case), "torch": res.get("torch", ""),
                        "graft": res.get("graft", ""), "key": case["key"],
                        "repro": generator.snippet(case, "graft") if cls in ("crash", "hang") or len(
                            generator.snippet(case, "graft")) < 2000 else "",
                    }
                else:
                    f["count"] += 1
                if log is not None and cls in ("crash", "hang"):
                    log(f"  {cls}: {res['id']}: {generator.short_call(case)} ({res.get('detail', '')[:200]})")
            if progress and done % progress == 0:
                el = time.monotonic() - t0
                brief = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
                (log or print)(f"[fuzz_diff] {done}/{n_cases} cases, {el:.0f}s: {brief}")
    finally:
        drv.close()
    order = {c: i for i, c in enumerate(("crash", "hang", "mutated_on_error", "wrong_value", "wrong_grad", "slow", "identity",
                                         "setup_difference", "accept_refuse", "error_type", "error_text",
                                         "torch_crash", "torch_hang"))}
    return {
        "seed": seed, "start": start, "cases": done, "callables": len(surface),
        "elapsed_s": round(time.monotonic() - t0, 1), "child_starts": drv.restarts,
        "counts": dict(sorted(counts.items())),
        "accept_refuse_directions": directions,
        "distinct": {c: sum(1 for f in findings.values() if f["class"] == c) for c in sorted({f["class"] for f in findings.values()})},
        "findings": sorted(findings.values(), key=lambda f: (order.get(f["class"], 99), f["callable"])),
    }


def gate(summary, known):
    """(new gating findings, stale known entries) of a summary against known differences."""
    from .compare import GATING
    seen = {(f["callable"], f["class"]) for f in summary["findings"]}
    new = [f for f in summary["findings"] if f["class"] in GATING and (f["callable"], f["class"]) not in known]
    stale = [e for k, e in known.items() if k not in seen]
    return new, stale


# =============================================================================================
# Child side

def _build(spec, lib, ctx):
    from .generator import make_array
    import numpy as np
    k = spec["k"]
    if k == "py":
        return spec["v"]
    if k == "T":
        a = make_array(spec)
        base = lib.from_numpy(a.copy())
        if spec.get("grad"):
            base.requires_grad_()
        lay, shape = spec.get("layout", "contig"), tuple(spec["shape"])
        if lay == "transposed":
            v = base.transpose(-1, -2)
        elif lay == "strided":
            v = base[..., ::2]
        elif lay == "expanded":
            v = base.expand(*shape)
        elif lay == "offset":
            v = base[spec["off"]:].view(shape)
        elif lay == "overlap":
            v = base.as_strided(shape, tuple(spec["strides"]))
        else:
            v = base
        if tuple(v.shape) != shape:
            raise RuntimeError(f"layout {lay} built shape {tuple(v.shape)}, wanted {shape}")
        ctx.append({"view": v, "leaf": base, "spec": spec})
        return v
    if k == "tuple":
        return tuple(_build(s, lib, ctx) for s in spec["items"])
    if k == "list":
        return [_build(s, lib, ctx) for s in spec["items"]]
    if k == "dtype":
        return getattr(lib, spec["v"])
    if k == "slice":
        return slice(*spec["v"])
    if k == "ellipsis":
        return Ellipsis
    if k == "obj":
        return object()
    if k == "dict":
        return {}
    if k == "nested":
        return make_array(spec["spec"]).tolist()
    if k == "nd":
        with np.errstate(all="ignore"):
            return make_array(spec["spec"]).astype(spec["np_dtype"])
    raise ValueError(f"unknown spec {k}")


_OPS = {
    "__add__": operator.add, "__sub__": operator.sub, "__mul__": operator.mul, "__truediv__": operator.truediv,
    "__floordiv__": operator.floordiv, "__mod__": operator.mod, "__pow__": operator.pow, "__matmul__": operator.matmul,
    "__and__": operator.and_, "__or__": operator.or_, "__xor__": operator.xor, "__eq__": operator.eq,
    "__ne__": operator.ne, "__lt__": operator.lt, "__le__": operator.le, "__gt__": operator.gt, "__ge__": operator.ge,
    "__iadd__": operator.iadd, "__isub__": operator.isub, "__imul__": operator.imul, "__itruediv__": operator.itruediv,
    "__ifloordiv__": operator.ifloordiv, "__imod__": operator.imod, "__ipow__": operator.ipow,
    "__iand__": operator.iand, "__ior__": operator.ior, "__ixor__": operator.ixor, "__getitem__": operator.getitem,
}
_ROPS = {"__radd__": operator.add, "__rsub__": operator.sub, "__rmul__": operator.mul,
         "__rtruediv__": operator.truediv, "__rfloordiv__": operator.floordiv, "__rmod__": operator.mod,
         "__rpow__": operator.pow, "__rmatmul__": operator.matmul, "__rand__": operator.and_,
         "__ror__": operator.or_, "__rxor__": operator.xor}
_UNARY = {"__neg__": operator.neg, "__pos__": operator.pos, "__abs__": abs, "__invert__": operator.invert,
          "__len__": len, "__bool__": bool, "__float__": float, "__int__": int, "__index__": operator.index,
          "__iter__": lambda x: list(iter(x)), "__deepcopy__": copy.deepcopy}


def _invoke(lib, case, args, kwargs):
    ns, name = case["ns"], case["name"]
    if case["kind"] == "attr":
        return getattr(args[0], name)
    if ns == "Tensor":
        if not kwargs:
            if name in _OPS and len(args) == 2:
                return _OPS[name](args[0], args[1])
            if name in _ROPS and len(args) == 2:
                return _ROPS[name](args[1], args[0])
            if name in _UNARY and len(args) == 1:
                return _UNARY[name](args[0])
            if name == "__setitem__" and len(args) == 3:
                return operator.setitem(args[0], args[1], args[2])
        return getattr(args[0], name)(*args[1:], **kwargs)
    if ns == "F":
        return getattr(lib.nn.functional, name)(*args, **kwargs)
    if ns == "linalg":
        return getattr(lib.linalg, name)(*args, **kwargs)
    return getattr(lib, name)(*args, **kwargs)


def _snapshot(ctx):
    from .compare import to_numpy
    out = []
    for c in ctx:
        out.append({"shape": tuple(int(s) for s in c["view"].shape), "base": to_numpy(c["leaf"]),
                    "dtype": c["spec"]["dtype"]})
    return out


def _flatten_tensors(obj, lib, out):
    if isinstance(obj, lib.Tensor):
        out.append(obj)
    elif isinstance(obj, (tuple, list)):
        for x in obj:
            _flatten_tensors(x, lib, out)
    return out


def _grads(lib, case, res, ctx):
    """Gradients of sum_j (out_j * w_j).sum() w.r.t. the inputs created with requires_grad."""
    import numpy as np
    leaves = [c for c in ctx if c["spec"].get("grad")]
    if not leaves:
        return None
    outs = [t for t in _flatten_tensors(res, lib, []) if t.requires_grad and t.dtype in (lib.float32, lib.float64)]
    if not outs or sum(t.numel() for t in outs) > 1_000_000:
        return None
    try:
        loss = None
        for j, o in enumerate(outs):
            rng = np.random.default_rng([zlib.crc32(case["key"].encode()), j])
            w = np.round(rng.standard_normal(tuple(o.shape)), 2).astype("float32" if o.dtype == lib.float32 else "float64")
            term = (o * lib.from_numpy(w)).sum()
            loss = term if loss is None else loss + term
        loss.backward()
    except Exception as e:  # noqa: BLE001 (any failure of backward is a difference to report)
        return {"error": f"{type(e).__name__}: {e}"}
    from .compare import to_numpy
    return {"grads": [None if c["leaf"].grad is None else to_numpy(c["leaf"].grad) for c in leaves],
            "dtypes": [c["spec"]["dtype"] for c in leaves]}


def _side(lib, case):
    from . import compare
    ctx = []
    try:
        args = []
        for a in case["args"]:
            if a["k"] == "star":
                args.extend(_build(s, lib, ctx) for s in a["items"])
            else:
                args.append(_build(a, lib, ctx))
        kwargs = {k: _build(v, lib, ctx) for k, v in case["kwargs"].items()}
    except Exception as e:  # noqa: BLE001
        return {"setup_error": f"{type(e).__name__}: {e}"}
    before = _snapshot(ctx)
    inputs = [c["view"] for c in ctx]
    try:
        res = _invoke(lib, case, args, kwargs)
    except Exception as e:  # noqa: BLE001 (every exception is an outcome to compare)
        out = {"exc": {"family": compare.family(e), "type": type(e).__name__, "msg": compare.message(e)}}
    else:
        out = {"res": compare.normalize(res, lib, inputs)}
        from .generator import VALUES_UNSPECIFIED
        if case["id"] not in VALUES_UNSPECIFIED:
            out["grads"] = _grads(lib, case, res, ctx)
    out["before"] = before
    out["after"] = _snapshot(ctx)
    return out


def child_main(proto_fd):
    import resource
    import warnings
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    try:
        resource.setrlimit(resource.RLIMIT_AS, (CHILD_MEMORY_LIMIT, CHILD_MEMORY_LIMIT))
    except (ValueError, OSError):
        pass
    proto = os.fdopen(proto_fd, "w", buffering=1)
    os.dup2(2, 1)  # stray prints from either library go to the stderr file, not the protocol
    sys.stdout = sys.stderr
    warnings.simplefilter("ignore")
    import torch
    import graft
    from . import compare
    from .generator import VALUES_UNSPECIFIED
    torch.set_num_threads(1)
    graft.set_num_threads(1)

    def send(msg):
        proto.write(json.dumps(msg) + "\n")
        proto.flush()

    send({"ready": True, "torch": torch.__version__})
    for line in sys.stdin:
        if not line.strip():
            continue
        case = json.loads(line)
        send({"phase": "torch", "key": case["key"]})
        torch.manual_seed(0)
        t0 = time.perf_counter()
        t = _side(torch, case)
        t1 = time.perf_counter()
        send({"phase": "graft", "key": case["key"], "torch": compare.brief_outcome(t)})
        graft.manual_seed(0)
        g = _side(graft, case)
        t2 = time.perf_counter()
        try:
            cls, detail = compare.classify(case, t, g, case["id"] in VALUES_UNSPECIFIED)
        except Exception as e:  # noqa: BLE001 (a comparison bug is reported, not fatal)
            cls, detail = "harness_error", f"{type(e).__name__}: {e}"
        if cls not in compare.GATING and t2 - t1 > SLOW_S and t2 - t1 > 10 * (t1 - t0):
            cls, detail = "slow", f"graft's half took {t2 - t1:.1f}s, torch's {t1 - t0:.2f}s ({cls}: {detail[:150]})"
        send({"result": {"key": case["key"], "id": case["id"], "class": cls, "detail": detail,
                         "torch": compare.brief_outcome(t), "graft": compare.brief_outcome(g)}})
        del t, g


def discover_main():
    import warnings
    warnings.simplefilter("ignore")
    import torch
    import graft
    from .generator import discover
    print(json.dumps(discover(graft, torch)))


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        child_main(int(sys.argv[2]))
    elif sys.argv[1:2] == ["--discover"]:
        discover_main()
    else:
        sys.exit("usage: python -m fuzz_diff.runner --child FD | --discover")
