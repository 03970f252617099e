"""graft.doctor: says which graph leaks, who holds it, at which line, and how to fix it.

    with graft.doctor.watch() as dr:        # every optimizer.step() is a doctor step
        for x, y in loader:
            ...
            opt.step()
    print(dr.report())                      # findings with rule ids, holders and fixes
    dr.render("report.html")                # the timeline and the live graphs, one file

Every graph node, saved tensor and storage records the step that made it; a leak is a set of
graph objects from ever more past steps that stays alive. After a warm-up of 2 steps, growth
confirmed over 3 more is reported at step 5, never earlier, with a rule (LD001..LD011), the
holder's path from a named root (``state['total']``, ``model.fc.weight.grad``) and the line
that made it. ``python -m graft.doctor train.py`` runs an unchanged script under it.
The doctor holds only weak references. Guide: docs/doctor.md; design: docs/notes/doctor.md.
"""
import contextlib
import gc
import json
import os
import sys
import weakref

from .. import _C
from ..optim import optimizer as _optimizer
from . import _holders, _cycles, _scopes, _torch

__all__ = ["watch", "Doctor", "Finding", "Holder", "step", "current", "assert_no_leak", "rules", "load_timeline",
           "render_timeline"]

_C._doctor_configure(os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep)

_current = None  # the Doctor watching now
_FULL_EVERY = 8  # steps between two full collections after the first verdict (see _cycles.py)


class Holder:
    """Who holds a graph: ``path`` from a named root, the line that stored the reference
    (``stored_at``: an append, ``+=``, an assignment, a hook's body; "" when unknown), the line
    and step that made the handle, and whether the path goes through a hook."""

    __slots__ = ("path", "created_at", "created_step", "through_hook", "stored_at", "hook_registered_at")

    def __init__(self, path, created_at="", created_step=0, through_hook=False, stored_at="", hook_registered_at=""):
        self.path, self.created_at, self.created_step, self.through_hook = path, created_at, created_step, through_hook
        self.stored_at, self.hook_registered_at = stored_at, hook_registered_at

    def __repr__(self):
        elsewhere = self.stored_at and self.stored_at != self.created_at.split(" ")[0]
        parts = [f"stored at {self.stored_at}"] if elsewhere else []
        if self.created_at:
            parts.append(f"made at {self.created_at}, step {self.created_step}")
        return self.path + (f" ({'; '.join(parts)})" if parts else "")

    def _dict(self):
        return {"path": self.path, "created_at": self.created_at, "created_step": self.created_step,
                "through_hook": self.through_hook, "stored_at": self.stored_at,
                "hook_registered_at": self.hook_registered_at}


class Finding:
    """One diagnosis: ``id`` (stable: "LD001"), ``name``, ``severity`` ("leak", "warning",
    "info", "growth"), ``step`` it was reported at, ``message`` (with this run's numbers), ``fix``,
    ``line`` (where the first holder stored the reference, else the user's line that made it),
    ``made_at`` (the line that made the held tensor, when another), ``holders`` (Holder list),
    the graph's ``nodes``, ``saved_bytes``, ``host_bytes``, ``nodes_per_step``, and for tensors
    without a graph (LD011) their ``tensor_bytes`` and ``bytes_per_step``."""

    def __init__(self, d):
        self.__dict__.update(d)
        self.holders = [Holder(**{k: v for k, v in h.items() if k != "tensor"}) for h in d["holders"]]

    def __repr__(self):
        return f"<Finding {self.id} {self.name} at {self.line or '?'}, step {self.step}>"

    def __str__(self):
        made = f" (made at {self.made_at})" if getattr(self, "made_at", "") else ""
        lines = [f"{self.id} {self.name} ({self.severity})" + (f" at {self.line}" if self.line else "") + made
                 + f", reported at step {self.step}", f"    {self.message}"]
        lines += [f"    held by {h!r}" for h in self.holders]
        lines += [f"    why: {self.summary}", f"    fix: {self.fix}"]
        return "\n".join(lines)


class Doctor:
    """A watching session (use ``graft.doctor.watch()``). One watches at a time.

    Arguments: ``backend`` ("graft", the default; "torch": a program that runs on PyTorch
    itself, see docs/doctor.md), ``tier`` ("sites": creation lines, the default; "counters": verdicts only),
    ``warmup`` and ``confirm`` (steps), ``step_on_optimizer`` (steps end by themselves: at
    every optimizer.step(); without an optimizer after each iteration that ran backward; at
    each forward of an evaluation under grad mode; False: only dr.step() ends them),
    ``collect_cycles`` (a forced cyclic collection at each step finds tensors
    only the garbage collector frees: LD006), ``max_holders`` (paths per finding),
    ``oom_report`` (a file written on OutOfMemoryError), ``progress`` (a line per step on
    stderr), ``deterministic`` (sequence numbers instead of times in the timeline)."""

    _graft_doctor_private = True  # the holder search never goes through the doctor itself

    def __init__(self, tier="sites", warmup=2, confirm=3, step_on_optimizer=True, collect_cycles=True, max_holders=5,
                 oom_report=None, max_events=100000, deterministic=False, progress=False, backend="graft"):
        if backend not in ("graft", "torch"):
            raise ValueError(f"graft.doctor: backend must be 'graft' or 'torch', got {backend!r}")
        self.backend = backend
        if isinstance(tier, int):
            tier = {0: "counters", 1: "sites"}.get(tier, str(tier))
        self._options = dict(tier=tier, warmup=int(warmup), confirm=int(confirm),
                             step_on_optimizer=bool(step_on_optimizer), max_holders=int(max_holders),
                             oom_report_path=os.fspath(oom_report) if oom_report else "", max_events=int(max_events),
                             deterministic=bool(deterministic))
        self.collect_cycles = collect_cycles
        self.progress = progress
        self._session = None
        self._hooks = []
        self._hook_attrs = {}      # id(module) -> set of attribute names set inside hooks (LD005)
        self._reported = 0         # findings printed by the progress line
        self._ids_seen = []        # their ids, in order
        self._progress_line = None
        self._joinable = False     # the command line's session: a watch() inside the script joins it
        self._on_step = []         # callables(doctor) after each step
        # automatic steps (docs/notes/doctor.md, "Steps"): optimizer steps; without an optimizer each
        # iteration that ran backward; forward-only loops under grad mode one forward each
        self._optimizer_seen = False    # an optimizer stepped: its steps are the doctor's
        self._manual = False            # the program calls dr.step() itself
        self._backward_seen = False
        self._backward_pending = False  # a backward ended this iteration: the next forward starts a step
        self._forward_only = False      # no backward or optimizer step since the last outermost forward
        self._last_outermost = None     # id() of the module of that call
        self._framework = None          # the PyTorch backend's framework (None: graft's own)
        self._tensors = _holders.GRAFT  # what the holder search and the cycle rule ask of tensors
        self._live_optimizers = _optimizer._live
        self._grad_enabled = _C.is_grad_enabled
        self._accumulation = 1          # declared gradient accumulation (micro steps)

    # ---- lifecycle ----
    def start(self):
        global _current
        if self._session is not None:
            raise RuntimeError("this graft.doctor session has already started")
        if self.backend == "torch":
            torch = _real_torch()
            self._framework = self._tensors = _torch.TorchFramework(torch)
            self._live_optimizers = self._framework.optimizers
            self._grad_enabled = torch.is_grad_enabled
        # the C++ session holds its callbacks weakly: no Doctor <-> session cycle the collector cannot see
        self._session = _C._DoctorSession(holders=_weak(self._find_holders, []), boundary=_weak(self._boundary, None),
                                          framework=self._framework, **self._options)
        _current = self
        if self._framework is not None:
            self._start_torch_hooks(torch)
        else:
            self._start_graft_hooks()
        if self.collect_cycles:
            # the doctor runs the cyclic collector at each step boundary instead of at random
            # times, so that what only it frees is seen (LD006) and seen at the same step each run;
            # what lives already is frozen (unless someone froze objects before), so that each of
            # those collections costs what the program made since the session started (on PyTorch the
            # backend remembers the frozen tensors: it finds the others through the collector)
            self._gc_was_enabled = gc.isenabled()
            gc.disable()
            self._froze = gc.get_freeze_count() == 0
            if self._froze:
                gc.collect()
                self._freeze()
        return self

    def _start_graft_hooks(self):
        from ..nn.modules import module as _module
        # steps follow the optimizers' (one per training iteration, whatever their number; see
        # docs/notes/doctor.md); after each step the parameters it updated are told (LD008: did
        # it use gradients carried over a step?)
        self._hooks.append(_optimizer.register_optimizer_step_pre_hook(self._optimizer_stepping))
        self._hooks.append(_optimizer.register_optimizer_step_post_hook(self._optimizer_stepped))
        self._hooks += _scopes.install(self._outermost_forward, scopes=self._options["tier"] == "sites")
        if self._options["step_on_optimizer"]:
            _C._set_backward_finished_callback(_weak(self._backward_finished, None))
        _module._doctor_note_hook_setattr = self._note_hook_setattr

    def _start_torch_hooks(self, torch):
        """Steps on PyTorch: its optimizers' steps, backward() and module calls (_torch.TorchSteps)."""
        hooks = _torch.TorchSteps(torch, self, self._framework)
        self._hooks.append(hooks)  # (removed at stop even if installing stopped half-way)
        try:
            hooks.install()
        except BaseException:
            self.stop()
            raise

    def stop(self):
        """Stops watching (findings and reports stay available)."""
        global _current
        if self._session is None or not self._session.watching:
            return
        from ..nn.modules import module as _module
        for h in self._hooks:
            h.remove()
        self._hooks.clear()
        if self._options["step_on_optimizer"]:
            if self._framework is None:
                _C._set_backward_finished_callback(None)
            if self._backward_pending:  # the last iteration of a loop without an optimizer ends its step
                self._automatic_step()
        _module._doctor_note_hook_setattr = None
        if self.collect_cycles:
            if getattr(self, "_froze", False):
                gc.unfreeze()
            if getattr(self, "_gc_was_enabled", False):
                gc.enable()
        self._session.stop()
        self._end_progress()
        if _current is self:
            _current = None

    def __enter__(self):
        return self.start()

    def __exit__(self, exc_type, exc, tb):
        if exc is not None and not isinstance(exc, (SystemExit, GeneratorExit)):
            self.note_stopped(exc)
        self.stop()
        return False

    def note_stopped(self, exc):
        """Records the exception the watched program stopped with: the report and the page lead
        with it (with the OOM report for an OutOfMemoryError). ``with watch()`` does it itself."""
        oom = isinstance(exc, _C.OutOfMemoryError)  # (graft writes an OOM report; PyTorch's OOM is an error here)
        message = str(exc).strip().splitlines()  # the first line (an OOM's message goes on with the report)
        self._require().note_stopped(type(exc).__name__ + (": " + message[0] if message else ""), oom)

    @property
    def verdict(self):
        """The report's first paragraph as sentences: too few steps for a verdict, the error that
        stopped the program, growth no finding explains, or "No findings: nothing grows ..."
        (said only when allocated memory and live graphs were flat after the warm-up)."""
        try:
            return list(self._require().verdict())
        finally:
            self._release()

    # ---- steps ----
    def step(self):
        """Ends the current step. Steps also end by themselves (unless step_on_optimizer=False): at
        each optimizer step; without an optimizer, after each iteration that ran backward; and
        in forward-only loops under grad mode (an evaluation), at each forward. A program that
        calls step() itself marks its own steps: only optimizer steps still end steps by themselves."""
        self._require()
        self._manual = True
        self._backward_pending = False
        self._session.step()
        self._after_step()

    def _automatic_step(self):
        self._backward_pending = False
        self._session.step()
        self._after_step()

    def _backward_finished(self):
        """After each outermost backward(): without an optimizer, an iteration that ran backward
        ends at the next outermost forward (or the next backward's end)."""
        self._backward_seen = True
        self._forward_only = False
        if self._manual or self._optimizer_seen or self._live_optimizers or not self._session.watching:
            return  # an optimizer exists (gradient accumulation before its first step): its steps end steps
        if self._backward_pending:
            self._automatic_step()
        self._backward_pending = True

    def _outermost_forward(self, module):
        """Before each call of a module made outside any module's forward."""
        if self._manual or not self._options["step_on_optimizer"] or not self._session.watching:
            return
        try:
            if self._backward_pending and not self._optimizer_seen:
                self._automatic_step()
            elif self._forward_only and self._grad_enabled() and (not module.training or (
                    not self._backward_seen and id(module) == self._last_outermost and not self._live_optimizers)):
                # a forward-only loop under grad mode (an evaluation in eval mode; a script without an
                # optimizer that calls one model again and again and never backward): a step per forward
                self._automatic_step()
        finally:
            self._forward_only = True
            self._last_outermost = id(module)

    @property
    def steps(self):
        """Steps ended so far."""
        return self._require().steps

    @property
    def watching(self):
        return self._session is not None and self._session.watching

    def _stale_gradients(self, line, stale):
        """PyTorch's backward() added into gradients an optimizer step already used (LD008's evidence)."""
        params = [p for p, streak in stale if streak >= self._accumulation]
        if not params:
            return
        handles = [{"tensor": id(p), "step": 0, "site": ""} for p in params]
        holders = [h._dict() for h in _holders.find(handles, self._options["max_holders"], self._hook_attrs,
                                                    tensors=_torch.KnownTensors(self._framework, params))]
        message = (f"backward{' at ' + line if line else ''} added into gradients that {len(params)} parameter(s) "
                   "kept from before their previous optimizer step, and the optimizer used them")
        self._session.add_evidence("LD008", line, message, holders, sum(p.numel() * p.element_size() for p in params))

    def _optimizer_stepping(self, optimizer, args, kwargs):
        self._optimizer_seen = True
        self._backward_pending = self._forward_only = False
        if self._session.note_optimizer_step(optimizer, False):
            self._after_step()

    def _optimizer_stepped(self, optimizer, args, kwargs):
        # LD008's evidence on graft: the parameters stepped (graft's gradients know their history)
        params = (p for g in optimizer.param_groups for p in g["params"]) if self._framework is None else None
        if self._session.note_optimizer_step(optimizer, True, params):
            self._after_step()

    def _after_step(self):
        try:
            if self.progress:
                self._print_progress()
            for fn in list(self._on_step):
                fn(self)
        finally:
            if self._framework is not None:
                self._framework.release()  # the boundary's strong references to every live tensor

    def _print_progress(self):
        if self._progress_line is None:
            self._progress_line = _ProgressLine(sys.stderr, self._options["warmup"] + self._options["confirm"])
        rec = self._session.last_step()
        new = []
        if rec["findings"]:  # the ids reported at this step
            findings = self._session.findings()
            new = [Finding(f) for f in findings[self._reported:]]
            self._reported = len(findings)
            self._ids_seen.extend(f.id for f in new)
        ids = " ".join(dict.fromkeys(self._ids_seen)) or "none"
        line = (f"[graft.doctor] step {rec['step']}: {rec['graph_nodes']} graph nodes, {_fmt(rec['saved_bytes'])} "
                f"saved, {_fmt(rec['allocated'])} allocated | findings: {ids}")
        self._progress_line.show(rec["step"], line, ["[graft.doctor] " + str(f).replace("\n", "\n[graft.doctor] ")
                                                     for f in new])

    def _end_progress(self):
        if self._progress_line is not None:
            self._progress_line.close()

    # ---- what the C++ session asks of Python ----
    def _find_holders(self, handles, max_paths):
        return [h._dict() for h in _holders.find(handles, max_paths, self._hook_attrs, tensors=self._tensors)]

    def _boundary(self, step):
        if not self.collect_cycles:
            return
        # a full collection in the steps of the first verdict, then every _FULL_EVERY steps (a young
        # one between them: what was alive at a boundary and became cyclic garbage waits for a full one)
        full = step <= self._options["warmup"] + self._options["confirm"] + 1 or step % _FULL_EVERY == 0
        # what lives at the end of step 1 (imports, data, model, optimizer state) is frozen too, so
        # that a full collection costs what the program made since, not all it holds; when what
        # survived since is a quarter of what is frozen (CPython's own rule for its oldest
        # generation), everything is collected once (frozen cycles that became garbage) and frozen again
        refreeze = getattr(self, "_froze", False) and (
            step == 1 or (full and 4 * len(gc.get_objects(generation=2)) > self._frozen))
        if refreeze and step > 1:
            gc.unfreeze()
        _cycles.collect(self, step, full=full)
        if refreeze:
            self._freeze()

    def _freeze(self):
        if self._framework is not None:
            self._framework.before_freeze()
        gc.freeze()
        self._frozen = gc.get_freeze_count()  # it walks the frozen objects: counted once per freeze

    def _note_hook_setattr(self, module, name):
        self._hook_attrs.setdefault(id(module), set()).add(name)

    def _require(self):
        if self._session is None:
            raise RuntimeError("this graft.doctor session has not started: use `with graft.doctor.watch() as dr:`")
        return self._session

    # ---- findings ----
    @property
    def findings(self):
        """Every finding so far (Finding objects), in the order reported."""
        return [Finding(f) for f in self._require().findings()]

    def report(self):
        """The text report: findings, live graphs, the step's peak, the memory ledger, fragmentation."""
        try:
            return self._require().report()
        finally:
            self._release()

    def assert_no_leak(self):
        """Raises AssertionError listing the leak, warning and growth findings, if any (for test suites)."""
        bad = [f for f in self.findings if f.severity != "info"]
        if bad:
            raise AssertionError(f"graft.doctor found {len(bad)} problem(s):\n" + "\n".join(str(f) for f in bad))

    @contextlib.contextmanager
    def expect_flat(self):
        """Asserts that no leak, warning or growth finding appears while the block runs."""
        before = len(self._require().findings())
        yield self
        new = [Finding(f) for f in self._session.findings()[before:]]
        bad = [f for f in new if f.severity != "info"]
        if bad:
            raise AssertionError("memory did not stay flat:\n" + "\n".join(str(f) for f in bad))

    def allow_window(self, steps):
        """Graphs carried across up to ``steps`` steps are intended (truncated BPTT): LD007 stays quiet."""
        self._require().allow_window(int(steps))

    def declare_accumulation(self, micro_steps):
        """Gradients accumulate over ``micro_steps`` optimizer steps on purpose: LD008 stays quiet."""
        self._require().declare_accumulation(int(micro_steps))
        self._accumulation = int(micro_steps)

    def allow(self, path_or_line):
        """Intended retention: findings held at this path or under it (``"replay"`` covers
        ``replay[3]`` and ``replay.items``, not ``replay_old``) or made at this line
        (``"train.py:42"``) are not reported."""
        self._require().allow(str(path_or_line))

    # ---- views ----
    def live_graphs(self):
        """Every live backward graph: a list of dicts with ``nodes``, ``nodes_by_type``,
        ``saved_bytes`` (each storage once; parameters excluded), ``host_bytes``, the
        ``oldest_step``/``newest_step``, ``lines``, ``executed`` and ``holders`` (paths)."""
        try:
            _, graphs = self._require().live_graphs()
            for g in graphs:
                g["holders"] = _holders.find(g["handles"], self._options["max_holders"], self._hook_attrs,
                                             tensors=self._tensors)
        finally:
            self._release()
        return graphs

    def diff(self, a, b):
        """What was made in steps (a, b] and is still alive, grouped by kind, line and type."""
        return _Diff(self._require().diff(int(a), int(b)))

    def peak(self):
        """What was live at the last step's peak, by category and by creation line."""
        return self._require().peak()

    def ledger(self, device="cpu"):
        """Where the reserved bytes go, in parts that add up to them exactly (with sentences)."""
        return _C._doctor_ledger(device)

    def fragmentation(self, device="cpu"):
        """Per-pool fragmentation and the largest allocation that would succeed now."""
        return _C._doctor_fragmentation(device)

    @property
    def last_oom_report(self):
        """The report written for the last OutOfMemoryError in this session ("" if none)."""
        return self._require().last_oom_report()

    def timeline(self):
        """The timeline (schema "graft.doctor.timeline", version 1) as a dict."""
        try:
            return json.loads(self._require().timeline_json())
        finally:
            self._release()

    def render(self, path=None, format=None, graph=None):
        """Renders a report and returns it (and writes it to ``path`` when given).

        ``format``: "html" (the timeline, findings and live graphs in one self-contained page),
        "svg" / "dot" (the live graphs, or the graph of ``graph``: a component id or a
        tensor), "json" (the timeline), "text" (the report). Without ``format`` the path's
        extension decides (".html" by default)."""
        try:
            return self._render(path, format, graph)
        finally:
            self._release()

    def _render(self, path, format, graph):
        s = self._require()
        if format is None:
            ext = os.path.splitext(os.fspath(path))[1].lower() if path else ".html"
            format = {".html": "html", ".htm": "html", ".svg": "svg", ".dot": "dot", ".gv": "dot", ".json": "json",
                      ".txt": "text"}.get(ext, "html")
        component = self._component_of(graph)
        labels = self._labels()
        if format == "html":
            out = _C._doctor_render_html(s.timeline_json(), s.graph_svg(component, labels), s.report())
        elif format == "svg":
            out = s.graph_svg(component, labels)
        elif format == "dot":
            out = s.graph_dot(component, labels)
        elif format == "json":
            out = s.timeline_json()
        elif format == "text":
            out = s.report()
        else:
            raise ValueError(f"graft.doctor.render: unknown format '{format}' (html, svg, dot, json, text)")
        if path is not None:
            with open(path, "w", encoding="utf-8") as f:
                f.write(out)
        return out

    def _component_of(self, graph):
        if graph is None:
            return -1
        if isinstance(graph, int):
            return graph
        if isinstance(graph, self._tensors.type):
            tid = _C._doctor_tensor_id(graph) if self._framework is None else id(graph)
            _, graphs = self._session.live_graphs()
            for g in graphs:
                if any(h["tensor"] == tid for h in g["handles"]):
                    return g["id"]
            raise ValueError("graft.doctor.render: this tensor holds no live graph")
        raise TypeError("graft.doctor.render: graph must be a component id or a tensor")

    def _labels(self):
        try:
            _, graphs = self._session.live_graphs()
            labels = {}
            for g in graphs:
                for h in _holders.find(g["handles"], self._options["max_holders"], self._hook_attrs, with_ids=True,
                                       tensors=self._tensors):
                    labels.setdefault(h.tensor, h.path)
        finally:
            self._release()
        return labels

    def _release(self):
        if self._framework is not None:
            self._framework.release()

    # ---- activation checkpointing advice ----
    def checkpoint_advice(self, step_fn, model, candidates=None):
        """Measures what checkpointing each candidate segment would save: runs ``step_fn()``
        once plainly and once per candidate with that module's forward wrapped in
        ``graft.utils.checkpoint.checkpoint`` (non-reentrant), and compares the peaks of live
        tensor memory. ``candidates``: names of ``model``'s submodules (default: its
        children). Returns a list of dicts (``segment``, ``peak_bytes``, ``saving_bytes``),
        the biggest saving first. Note: ``step_fn`` runs 2 + len(candidates) times (to warm up,
        plainly, then once per candidate; an optimizer inside it steps each time)."""
        from ..utils.checkpoint import checkpoint
        modules = dict(model.named_modules())
        names = list(candidates) if candidates is not None else [n for n, _ in model.named_children()]

        def peak_of():
            _C._reset_peak_memory_stats("cpu")
            start = _C._cpu_memory_allocated()
            step_fn()
            return _C._max_memory_allocated("cpu") - start

        step_fn()  # warm: lazily made state (optimizer moments) is not a segment's cost
        base = peak_of()
        out = []
        for name in names:
            m = modules[name]
            original = m.forward

            def wrapped(*args, _f=original, **kwargs):
                return checkpoint(_f, *args, use_reentrant=False, **kwargs)

            m.forward = wrapped
            try:
                peak = peak_of()
            finally:
                del m.forward  # the class's forward again
            out.append({"segment": name, "peak_bytes": peak, "saving_bytes": base - peak, "baseline_bytes": base})
        out.sort(key=lambda d: -d["saving_bytes"])
        return out


class _Diff(dict):
    """Step diff: ``entries`` (kind, line, type, count, bytes) and ``sentences``; str() is the text."""

    def __str__(self):
        return "\n".join(self["sentences"])


def _weak(method, default):
    """A callable that calls `method` while its object lives (else returns `default`)."""
    ref = weakref.WeakMethod(method)

    def call(*args):
        m = ref()
        return default if m is None else m(*args)

    return call


def _fmt(b):
    units = ["B", "KiB", "MiB", "GiB"]
    v, i = float(b), 0
    while v >= 1024 and i < 3:
        v /= 1024
        i += 1
    return f"{int(v)} B" if i == 0 else f"{v:.1f} {units[i]}"


class _ProgressLine:
    """The progress on stderr: on a terminal one line updated in place, each finding printed
    once above it; otherwise plain lines, one per step until the first verdict is due, then at
    powers of two, every 100th step and at each step with a new finding."""

    def __init__(self, stream, verdict_step):
        self.stream = stream
        self.tty = bool(getattr(stream, "isatty", lambda: False)())
        self.verdict_step = verdict_step
        self.open = False  # an updating line is on the terminal
        self.unshown = None  # the last step's line, when it was not printed

    def show(self, step, line, findings):
        w = self.stream.write
        if self.tty:
            w("\r\x1b[K")
            for f in findings:
                w(f + "\n")
            w(line)
            self.open = True
        elif findings or step <= self.verdict_step + 1 or step & (step - 1) == 0 or step % 100 == 0:
            w(line + "\n")
            for f in findings:
                w(f + "\n")
            self.unshown = None
        else:
            self.unshown = line
        self.stream.flush()

    def close(self):
        """Ends the progress: the terminal's line stays, the last step's line is printed."""
        if self.open:
            self.stream.write("\n")
        elif self.unshown:
            self.stream.write(self.unshown + "\n")
        self.open, self.unshown = False, None
        self.stream.flush()


class _Joined:
    """``watch()`` inside a script run by ``python -m graft.doctor``: the command line's session,
    which the block uses and leaves running (its own options are not applied)."""

    def __init__(self, doctor):
        self.doctor = doctor

    def __enter__(self):
        return self.doctor

    def __exit__(self, exc_type, exc, tb):
        return False

    def start(self):
        return self.doctor

    def stop(self):
        pass

    def __getattr__(self, name):
        return getattr(self.doctor, name)


def watch(tier="sites", warmup=2, confirm=3, step_on_optimizer=True, collect_cycles=True, max_holders=5,
          oom_report=None, max_events=100000, deterministic=False, progress=False, backend="graft"):
    """Starts a Doctor (a context manager): ``with graft.doctor.watch() as dr: ...``. Under
    ``python -m graft.doctor`` it joins the command line's session instead of starting one.
    ``backend="torch"`` watches a program that runs on PyTorch itself."""
    if _current is not None and _current._joinable and _current.watching:
        return _Joined(_current)
    return Doctor(tier=tier, warmup=warmup, confirm=confirm, step_on_optimizer=step_on_optimizer,
                  collect_cycles=collect_cycles, max_holders=max_holders, oom_report=oom_report,
                  max_events=max_events, deterministic=deterministic, progress=progress, backend=backend)


def _real_torch():
    """PyTorch itself (not graft under the name ``torch``), or a RuntimeError that says why not."""
    import importlib
    try:
        torch = importlib.import_module("torch")
    except ImportError as e:
        raise RuntimeError("graft.doctor: backend='torch' watches a program on PyTorch, and PyTorch is not "
                           f"installed here ({e})") from None
    from .. import _as_torch
    if not _as_torch.is_real_torch(torch):
        raise RuntimeError("graft.doctor: backend='torch' needs PyTorch itself, and `import torch` resolves to graft "
                           "here; run without the redirect (python -m graft.doctor --torch)")
    return torch


def current():
    """The Doctor watching now, or None."""
    return _current


def step():
    """Ends the current step of the Doctor watching now; does nothing when none watches (a loop
    marked up with it runs unchanged under plain ``python``)."""
    if _current is not None and _current.watching:
        _current.step()


def assert_no_leak(step_fn, steps=20, warmup=2, confirm=3, **options):
    """Runs ``step_fn()`` ``steps`` times under a fresh doctor (a step per call, or per optimizer
    step inside it) and raises AssertionError with the findings if anything leaks."""
    with watch(warmup=warmup, confirm=confirm, **options) as dr:
        for _ in range(int(steps)):
            before = dr.steps
            step_fn()
            if dr.steps == before:
                dr.step()
    dr.assert_no_leak()
    return dr


def rules():
    """The rule catalogue: dicts with ``id``, ``name``, ``severity``, ``summary``, ``fix``."""
    return _C._doctor_rules()


def load_timeline(path):
    """Reads a timeline written by ``render(format="json")`` and checks its schema."""
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    if not isinstance(data, dict) or data.get("schema") != "graft.doctor.timeline":
        raise ValueError(f"{path}: not a graft.doctor timeline")
    if data.get("version") != 1:
        raise ValueError(f"{path}: timeline version {data.get('version')} is not supported (expected 1)")
    for key in ("session", "categories", "steps", "findings", "events"):
        if key not in data:
            raise ValueError(f"{path}: the timeline has no '{key}'")
    return data


def render_timeline(timeline, path=None, report_text=""):
    """The HTML page for a saved timeline (a path or load_timeline()'s dict)."""
    data = load_timeline(timeline) if isinstance(timeline, (str, os.PathLike)) else timeline
    page = _C._doctor_render_html(json.dumps(data), "", report_text)
    if path is not None:
        with open(path, "w", encoding="utf-8") as f:
            f.write(page)
    return page
