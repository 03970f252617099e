"""The doctor on PyTorch itself: what the C++ doctor asks of a framework (docs/notes/doctor.md,
"Frameworks"), answered for a program that runs on real PyTorch.

At each step boundary one walk finds the live ``torch.Tensor`` objects (the garbage collector
tracks them all) and, from their ``grad_fn``, every live autograd graph. A node is stamped with the
step that first saw it, in its own ``metadata`` dict (which lives as long as the node, not its
Python wrapper); a tensor in a table by identity. The walk counts graph nodes, saved slots and
bytes (``_saved_*``; a slot that raises "backward through the graph a second time" is released),
and live storages by owner: parameters (leaves that require grad), gradients, optimizer state,
what graphs save, and the rest. The same rules, verdict and reports as on graft then apply.
What PyTorch does not record is not reported: the lines that made tensors and nodes (a finding's
line is where its holder stored the reference), the retained-graph and evaluation rules (LD009,
LD010) and the peak within a step.

Steps come from the program as on graft: torch's optimizers' steps, each iteration that ran
``backward()`` when no optimizer steps, and forward-only loops of modules (the hooks below).
"""
import gc
import itertools
import os
import threading
import weakref

from ..utils._frames import first_user_frame

_STEP = "graft.doctor.step"    # node.metadata: the step that first saw the node
_SHAPE = "graft.doctor.shape"  # node.metadata: the shape of the tensor it made, when a handle showed it
_SITE = "graft.doctor.site"  # node.metadata: the user's line that called the module whose output it made
_RELEASED = "graft.doctor.released"  # node.metadata: a backward without retain_graph ran it (its slots are freed)
_UNREADABLE = "graft.doctor.unreadable"  # node.metadata: slots whose tensor changed in place since (they raise)

_MAX_HOOK_LINES = 10_000  # hook registration lines kept (the oldest go first)
_CATEGORY_ORDER = ("parameter", "gradient", "optimizer_state", "saved_for_backward", "other")


class _Walk:
    """One walk of the live tensors and graphs, at one step."""

    _graft_doctor_private = True  # the holder search never goes through it

    def __init__(self, step):
        self.step = step
        self.tensors = []      # the live tensors (strong references until the boundary is over)
        self.nodes = {}        # id(node wrapper) -> node dict
        self.wrappers = []     # the node wrappers (their ids stay unique while the walk lives)
        self.handles = []
        self.storages = {}     # storage id -> (bytes, category)
        self.counts = None
        self.by_id = None      # id -> tensor (the holder search's lookups)
        self.owner = None      # the thread that took it


class TorchFramework:
    """The framework interface for PyTorch (the C++ side calls ``name``, ``count``, ``census``,
    ``kept_tensors`` and ``memory_sentences``), and what the holder search and the cycle rule
    need of tensors (``type``, ``package_dir``, ``object_of``, ``grad_of``, ``allocated``,
    ``site_of``, ``hook_registered_at``)."""

    _graft_doctor_private = True

    def __init__(self, torch):
        self.torch = torch
        self.type = torch.Tensor
        self.package_dir = os.path.dirname(os.path.abspath(torch.__file__)) + os.sep
        self.optimizers = weakref.WeakSet()  # every optimizer made or stepped while watching
        self._tensor_steps = {}              # id(tensor) -> (weakref, step, order)
        self._order = itertools.count(1)
        self._kinds = {}                     # node type -> _NodeKind
        self._walk = None                    # the boundary's walk, until release()
        self._frozen = []                    # weakrefs to the tensors gc.freeze() hid from the collector
        self._nbytes = {}                    # storage identity -> bytes (one walk's)
        self.hook_lines = {}                 # a hook handle's id -> the user's line that registered it
        self.packed_since = None             # the first step in which saved_tensors_hooks were used
        if hasattr(torch.Tensor, "untyped_storage"):
            self._storage = lambda t: t.untyped_storage()
        else:  # torch 1.x
            self._storage = lambda t: t.storage()
        self.stamp(0)                        # what lives before the session belongs to step 0
        optimizer = torch.optim.Optimizer    # and the optimizers made before it are known
        self.optimizers.update(o for o in gc.get_objects() if issubclass(type(o), optimizer))

    # ---- the framework interface ----
    def name(self):
        return "torch " + self.torch.__version__.split("+")[0]

    def count(self, step):
        self._walk = self._take(step)
        return self._walk.counts

    def _keep(self, w):
        w.owner = threading.get_ident()
        self._walk = w

    def census(self, step):
        w = self._walk if self._walk is not None and self._walk.step == step else self._take(step)
        if w is not self._walk:
            self._keep(w)  # live_graphs() outside a boundary: kept for the holders until release()
        return list(w.nodes.values()), w.handles

    def kept_tensors(self, step, graph_storages):
        w = self._walk if self._walk is not None and self._walk.step == step else self._take(step)
        out = []
        for t in w.tensors:
            if t.grad_fn is not None or t.requires_grad:
                continue
            entry = self._tensor_steps.get(id(t))
            if entry is None or entry[1] == 0 or entry[1] >= step:
                continue
            sid, nbytes = self._storage_of(t)
            if not sid or sid in graph_storages or w.storages.get(sid, (0, "other"))[1] != "other":
                continue
            out.append({"tensor": id(t), "step": entry[1], "shape": list(t.shape), "storage": sid, "bytes": nbytes,
                        "order": entry[2]})
        return out

    def memory_sentences(self):
        torch = self.torch
        out = []
        if torch.cuda.is_available() and torch.cuda.is_initialized():
            for i in range(torch.cuda.device_count()):
                stats = torch.cuda.memory_stats(i)
                allocated = stats.get("allocated_bytes.all.current", 0)
                reserved = stats.get("reserved_bytes.all.current", 0)
                out.append(f"cuda:{i}: {_fmt(allocated)} allocated, {_fmt(reserved)} reserved by PyTorch's caching "
                           f"allocator ({_fmt(reserved - allocated)} cached: torch.cuda.empty_cache() returns the "
                           "whole free segments of it).")
        w = self._walk
        if w is not None:
            by = _by_category(w.storages)
            parts = ", ".join(f"{k} {_fmt(by[k])}" for k in _CATEGORY_ORDER if by.get(k))
            out.append(f"Live tensor storages at step {w.step}: {_fmt(sum(by.values()))}" + (f" ({parts})." if parts
                                                                                            else "."))
        return out

    # ---- what the holder search and the cycle rule ask ----
    def object_of(self, tid):
        w = self._walk
        if w is None:
            return None
        if w.by_id is None:
            w.by_id = {id(t): t for t in w.tensors}
        return w.by_id.get(tid)

    def grad_of(self, t):
        """The tensor's .grad (read only on leaves: PyTorch warns for the others)."""
        return t.grad if t.is_leaf else None

    def allocated(self):
        self._nbytes = {}
        seen, total = set(), 0
        for o in self._live_tensors():
            sid, nbytes = self._storage_of(o)
            if sid and sid not in seen:
                seen.add(sid)
                total += nbytes
        return total

    def before_freeze(self):
        """The doctor is about to freeze what lives (gc.freeze(): the collector lists those objects no
        more, so that a collection and this walk cost what the program made since): the tensors
        among them are remembered here, weakly."""
        self._frozen = [weakref.ref(t) for t in self._tracked_tensors()]

    def _live_tensors(self):
        """Every live tensor: those frozen that still live, and those the collector tracks (all of
        them: tensors take part in collection)."""
        # (no _fix_weakref() on these, though PyTorch's warning asks for it: on 1.13 it keeps the tensor's
        # graph alive for good)
        tensors = [t for t in (r() for r in self._frozen) if t is not None]
        seen = {id(t) for t in tensors}
        return tensors + [t for t in self._tracked_tensors() if id(t) not in seen]

    def _tracked_tensors(self):
        """By type, not isinstance(): that reads __class__, which some objects answer with a warning."""
        tensor = self.type
        return [o for o in gc.get_objects() if issubclass(type(o), tensor)]

    def site_of(self, t):
        return ""  # PyTorch records no creation line

    def hook_registered_at(self, handle_id):
        return self.hook_lines.get(handle_id, "")

    def release(self):
        """Drops the walk this thread took (its strong references to every live tensor); another
        thread's boundary may be using its own."""
        w = self._walk
        if w is not None and w.owner == threading.get_ident():
            self._walk = None

    # ---- the walk ----
    def stamp(self, step):
        """Stamps every live tensor and graph node not seen before with `step`."""
        self._take(step)

    def _storage_of(self, t):
        """(identity, bytes) of a tensor's storage: its data pointer, from the tensor's (a storage
        object is made only for the bytes of one not seen in this walk)."""
        try:
            sid = t.data_ptr() - t.storage_offset() * t.element_size()
            if sid <= 0:  # no memory (a meta or fake tensor)
                return 0, 0
            nbytes = self._nbytes.get(sid)
            if nbytes is None:
                nbytes = self._nbytes[sid] = self._storage(t).nbytes()
            return sid, nbytes
        except Exception:  # a tensor without storage (sparse, nested, a functional wrapper)
            return 0, 0

    def _take(self, step):
        w = _Walk(step)
        w.owner = threading.get_ident()
        self._nbytes = {}  # storage identity -> bytes, for this walk
        w.tensors = [t for t in self._live_tensors() if _defined(t)]
        self._stamp_tensors(w)
        self._categorize(w)
        self._walk_graphs(w)
        self._count(w)
        return w

    def _stamp_tensors(self, w):
        stamps = {}
        for t in w.tensors:
            old = self._tensor_steps.get(id(t))
            stamps[id(t)] = old if old is not None and old[0]() is t else (weakref.ref(t), w.step, next(self._order))
        self._tensor_steps = stamps

    def _categorize(self, w):
        """Each live storage once, by its owner: parameters, their gradients, optimizer state."""
        storages = w.storages

        def put(t, category):
            sid, nbytes = self._storage_of(t)
            if sid and sid not in storages:
                storages[sid] = (nbytes, category)

        for t in w.tensors:
            if t.requires_grad and t.grad_fn is None:
                put(t, "parameter")
        for t in w.tensors:
            if t.requires_grad and t.grad_fn is None and t.grad is not None:
                put(t.grad, "gradient")
        for opt in list(self.optimizers):
            for state in list(getattr(opt, "state", {}).values()):
                for v in (state.values() if isinstance(state, dict) else ()):
                    if isinstance(v, self.type):
                        put(v, "optimizer_state")

    def _walk_graphs(self, w):
        """Every node reachable from a live tensor's grad_fn (or a leaf's .grad's: LD004)."""
        stack = []
        for t in w.tensors:
            fn = t.grad_fn
            grad_of_leaf = False
            if fn is None and t.requires_grad:
                g = t.grad
                fn = g.grad_fn if g is not None else None
                grad_of_leaf = fn is not None
            if fn is None:
                continue
            md = _metadata(fn)
            if not grad_of_leaf and md is not None and _SHAPE not in md:
                md[_SHAPE] = list(t.shape)
            stack.append(fn)
            _, tensor_step, order = self._tensor_steps[id(t)]
            w.handles.append({"tensor": id(t), "node": id(fn), "grad_of_leaf": grad_of_leaf,
                              "leaf": id(t) if grad_of_leaf else 0, "step": tensor_step, "shape": list(t.shape),
                              "order": order, "site": md.get(_SITE, 0) if md is not None and not grad_of_leaf else 0})
        w.handles.sort(key=lambda h: -h["order"])  # the newest first, as graft's census lists them
        while stack:
            fn = stack.pop()
            if id(fn) in w.nodes:
                continue
            w.wrappers.append(fn)
            node = self._describe(fn, w)
            w.nodes[id(fn)] = node
            for nxt, _ in getattr(fn, "next_functions", ()):
                if nxt is not None:
                    node["next"].append(id(nxt))
                    stack.append(nxt)
        # PyTorch keeps one AccumulateGrad per leaf for as long as a graph uses it; graft makes one per
        # graph: it belongs to the step of its newest user (so that it never makes a graph stale)
        users_step = {}
        for node in w.nodes.values():
            for nxt in node["next"]:
                users_step[nxt] = max(users_step.get(nxt, 0), node["step"])
        for node in w.nodes.values():
            if node["name"] == "AccumulateGrad":
                node["step"] = users_step.get(node["id"], w.step)

    def _describe(self, fn, w):
        kind = self._kinds.get(type(fn))
        if kind is None:
            kind = self._kinds[type(fn)] = _NodeKind(fn)
        md = _metadata(fn)
        if md is None:
            step, site, shape, released = w.step, 0, [-1], False
        else:
            step = md.setdefault(_STEP, w.step)
            site, shape, released = md.get(_SITE, 0), md.get(_SHAPE, [-1]), md.get(_RELEASED, False)
        saved = kind.released if released else self._saved(fn, kind, md, w)
        node = {"id": id(fn), "name": kind.name if kind.name is not None else _name(fn), "step": step, "next": [],
                "saved": saved, "site": site, "executed": released or saved is kind.released, "output_shape": shape}
        if kind.accumulate_grad:
            variable = getattr(fn, "variable", None)
            if variable is not None:
                node["variable"] = id(variable)
        if kind.sequence_nr:
            node["sequence_nr"] = fn._sequence_nr()
        return node

    def _saved(self, fn, kind, md, w):
        """The tensors a node saved for its backward: its _saved_* attributes (a custom Function's
        saved_tensors); the kind's `released` list once a backward freed them. Reading a slot raises
        when it was freed (all of the node's are) or when its tensor was changed in place since (an
        optimizer's step on a saved weight): each raise costs 0.2 ms, so either is remembered. A
        node made once saved_tensors_hooks were in use (activation checkpointing, save_on_cpu) is
        not read at all: reading unpacks (recomputes, copies back); its slots count as packed."""
        if self.packed_since is not None and md is not None and md.get(_STEP, 0) >= self.packed_since:
            return [{"what": what, "packed": True} for what, _ in kind.items]
        unreadable = md.get(_UNREADABLE, ()) if md is not None else ()
        out = []
        for what, attr in kind.items:
            if attr in unreadable:
                continue
            try:
                value = getattr(fn, attr)
            except RuntimeError as e:
                if "a second time" in str(e) or "already been freed" in str(e):
                    if md is not None:
                        md[_RELEASED] = True  # freed by a backward pass without retain_graph
                    return kind.released
                if md is not None:
                    md.setdefault(_UNREADABLE, set()).add(attr)
                continue
            except Exception:
                continue
            for t in value if isinstance(value, (tuple, list)) else (value,):
                if isinstance(t, self.type):
                    sid, nbytes = self._storage_of(t)
                    category = w.storages.get(sid, (0, None))[1]
                    if sid and category is None:
                        w.storages[sid] = (nbytes, "saved_for_backward")
                    out.append({"what": what, "shape": list(t.shape), "dtype": str(t.dtype).replace("torch.", ""),
                                "bytes": nbytes, "storage": sid, "parameter": category == "parameter"})
        return out

    def _count(self, w):
        seen_storage = set()
        nodes = stale_nodes = slots = stale_slots = saved_bytes = 0
        stale_steps = set()
        for n in w.nodes.values():
            nodes += 1
            stale = n["step"] < w.step
            if stale:
                stale_nodes += 1
                stale_steps.add(n["step"])
            for s in n["saved"]:
                if s.get("released"):
                    continue
                slots += 1
                stale_slots += stale
                if not s.get("parameter") and s.get("storage") and s["storage"] not in seen_storage:
                    seen_storage.add(s["storage"])
                    saved_bytes += s["bytes"]
        for t in w.tensors:  # the rest of the live storages
            sid, nbytes = self._storage_of(t)
            if sid and sid not in w.storages:
                w.storages[sid] = (nbytes, "other")
        by = _by_category(w.storages)
        reserved = sum(by.values())
        torch = self.torch
        if torch.cuda.is_available() and torch.cuda.is_initialized():
            reserved += sum(torch.cuda.memory_reserved(i) - torch.cuda.memory_allocated(i)
                            for i in range(torch.cuda.device_count()))
        w.counts = {"graph_nodes": nodes, "stale_nodes": stale_nodes, "saved_slots": slots,
                    "stale_saved_slots": stale_slots, "saved_bytes": saved_bytes, "stale_generations": len(stale_steps),
                    "bytes_by_category": by, "reserved": reserved}


class _NodeKind:
    """What one type of node looks like, found once: its name, its saved slots' attributes, the
    released slots' list (shared), whether it is an AccumulateGrad and has _sequence_nr (torch 2.x)."""

    def __init__(self, fn):
        names = [a for a in dir(fn) if a.startswith("_saved_")]
        self.items = [(a[len("_saved_"):], a) for a in names]
        if hasattr(fn, "_forward_cls"):  # a custom autograd.Function's node (its name is its class's)
            self.items.append(("saved_tensors", "saved_tensors"))
        self.name = None if hasattr(fn, "_forward_cls") else _name(fn)
        self.released = [{"what": what, "released": True} for what, _ in self.items]
        self.accumulate_grad = self.name == "AccumulateGrad"
        self.sequence_nr = hasattr(fn, "_sequence_nr")


def _wrapped_chain(f, limit=16):
    """`f` and the functions it wraps (``__wrapped__``, as functools.wraps records it)."""
    out = []
    while f is not None and len(out) < limit:
        out.append(f)
        f = getattr(f, "__wrapped__", None)
    return out


def _mark_released(tensors):
    """After a backward without retain_graph: the nodes it ran freed their saved slots. They are the
    nodes reachable from its roots (except the few a backward with `inputs=` or an unused branch
    skips; reading their slots tells)."""
    stack = [t.grad_fn for t in (tensors if isinstance(tensors, (tuple, list)) else (tensors,))
             if getattr(t, "grad_fn", None) is not None]
    seen = set()
    keep = []  # the wrappers, so that ids stay unique during the walk
    while stack:
        fn = stack.pop()
        if id(fn) in seen:
            continue
        seen.add(id(fn))
        keep.append(fn)
        md = _metadata(fn)
        if md is not None:
            md[_RELEASED] = True
        stack.extend(n for n, _ in getattr(fn, "next_functions", ()) if n is not None)


def _user_line(framework_dir):
    """"file.py:LINE" of the first frame outside graft and the framework, or ""."""
    f = first_user_frame(1, (framework_dir,))
    return f"{os.path.basename(f.f_code.co_filename)}:{f.f_lineno}" if f is not None else ""


def _defined(t):
    """False for a Python object whose tensor is gone (PyTorch's objects can outlive it)."""
    try:
        t.grad_fn
        return True
    except RuntimeError:
        return False


def _metadata(fn):
    try:
        return fn.metadata
    except Exception:  # a node type without metadata
        return None


def _name(fn):
    """The node's type as graft names it: "AccumulateGrad" for "torch::autograd::AccumulateGrad"."""
    try:
        name = fn.name()
    except Exception:
        name = type(fn).__name__
    return name.rsplit("::", 1)[-1]


def _by_category(storages):
    by = {}
    for nbytes, category in storages.values():
        by[category] = by.get(category, 0) + nbytes
    return by


def _fmt(b):
    from . import _fmt as fmt
    return fmt(b)


class KnownTensors:
    """The framework's tensors for a holder search of tensors the caller has at hand (LD008's parameters)."""

    def __init__(self, framework, tensors):
        self._framework = framework
        self._by_id = {id(t): t for t in tensors}

    def object_of(self, tid):
        return self._by_id.get(tid)

    def __getattr__(self, name):
        return getattr(self._framework, name)


class TorchSteps:
    """The hooks that tell the doctor where PyTorch program's steps are: optimizer steps, the end of
    each outermost backward(), and calls of modules outside any module's forward. Installed by
    ``install`` and removed by ``remove``; the doctor's methods decide what is a step."""

    def __init__(self, torch, doctor, framework):
        self.torch = torch
        self.doctor = weakref.ref(doctor)
        self.framework = framework
        self._undo = []
        self._local = threading.local()
        self._grads = {}  # id(param) -> (param ref, gradient ref, its version, steps in a row): after a step
        self._accumulated = {}  # id(param) -> the line of a backward that added into that gradient since
        self._sites = {}  # (code, line) -> the interned site of a user's line that called a module
        self._wrappers = set()  # the optimizer step wrappers this session made
        self._backward_running = 0  # outermost backward passes running (any thread)

    def _call(self, method, *args):
        d = self.doctor()
        if d is not None and d.watching:
            getattr(d, method)(*args)

    def install(self):
        torch = self.torch
        import torch.optim  # noqa: F401  (the optimizers' module)
        from torch.nn.modules import module as nn_module
        optimizer_cls = torch.optim.Optimizer
        steps = self

        # every optimizer made while watching (an optimizer exists: its steps are the doctor's)
        original_init = optimizer_cls.__init__

        def init(opt, *args, **kwargs):
            original_init(opt, *args, **kwargs)
            steps.framework.optimizers.add(opt)

        self._patch(optimizer_cls, "__init__", init)
        self._wrap_optimizer_steps(optimizer_cls)
        # backward(): Tensor.backward calls torch.autograd.backward
        original_backward = torch.autograd.backward

        def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, *args, **kwargs):
            depth = getattr(steps._local, "backward", 0)
            steps._local.backward = depth + 1
            steps._backward_running += 1
            if depth == 0:
                steps._gradients_cleared_by_hand()
            try:
                result = original_backward(tensors, grad_tensors, retain_graph, create_graph, *args, **kwargs)
            finally:
                steps._local.backward = depth
                steps._backward_running -= 1
            inputs = kwargs.get("inputs", args[1] if len(args) > 1 else None)
            if not (create_graph if retain_graph is None else retain_graph) and not inputs:
                _mark_released(tensors)  # (with inputs= some nodes do not run: their slots tell)
            if depth == 0:
                steps._local.forward = 0
                steps._stale_gradients()
                steps._call("_backward_finished")
            return result

        self._patch(torch.autograd, "backward", backward)
        # zero_grad() of an optimizer or a module clears what LD008 remembers of their gradients
        for owner, params in ((optimizer_cls, lambda o: [p for g in o.param_groups for p in g["params"]]),
                              (torch.nn.Module, lambda m: list(m.parameters()))):
            self._wrap_zero_grad(owner, params)
        # saved_tensors_hooks (activation checkpointing, save_on_cpu): from the step they are first used
        # in, the walk does not unpack saved slots (that would run the hooks)
        hooks_cls = torch.autograd.graph.saved_tensors_hooks
        original_enter = hooks_cls.__enter__

        def enter(ctx, *args, **kwargs):
            d = steps.doctor()
            if steps.framework.packed_since is None and d is not None and d.watching:
                steps.framework.packed_since = d.steps + 1
            return original_enter(ctx, *args, **kwargs)

        self._patch(hooks_cls, "__enter__", enter)
        # the user's line that registered each hook (LD005 names it): a handle is made per hook
        handle_cls = torch.utils.hooks.RemovableHandle
        original_handle_init = handle_cls.__init__

        def handle_init(handle, *args, **kwargs):
            original_handle_init(handle, *args, **kwargs)
            lines = steps.framework.hook_lines
            lines[handle.id] = _user_line(steps.framework.package_dir)
            if len(lines) > _MAX_HOOK_LINES:
                del lines[next(iter(lines))]

        self._patch(handle_cls, "__init__", handle_init)
        # module calls outside any module's forward
        pre = nn_module.register_module_forward_pre_hook(self._forward_pre)
        try:  # torch 2.x: also after a forward that raised (the depth stays right)
            post = nn_module.register_module_forward_hook(self._forward_post, always_call=True)
        except TypeError:
            post = nn_module.register_module_forward_hook(self._forward_post)
        self._undo += [pre.remove, post.remove]

    def _forward_pre(self, module, args):
        depth = getattr(self._local, "forward", 0)
        self._local.forward = depth + 1
        if depth == 0 and not self._backward_running:  # (a checkpoint's recomputation is no new iteration)
            self._call("_outermost_forward", module)

    def _forward_post(self, module, args, output):
        depth = max(0, getattr(self._local, "forward", 0) - 1)
        self._local.forward = depth
        if depth == 0 and not self._backward_running:
            self._stamp_site(output)

    def _stamp_site(self, output):
        """The outputs of a module call made outside any module's forward: their nodes are stamped with
        the user's line that called it (graft records that line for every object it makes; PyTorch
        records none, and this one is what tells two kept outputs of the same model apart)."""
        outputs = output.values() if isinstance(output, dict) else output if isinstance(output, (tuple, list)) else (
            output,)
        site = None
        for t in outputs:
            fn = getattr(t, "grad_fn", None) if isinstance(t, self.torch.Tensor) else None
            md = _metadata(fn) if fn is not None else None
            if md is None or _SITE in md:
                continue
            if site is None:
                site = self._user_site()
            md[_SITE] = site

    def _user_site(self):
        f = first_user_frame(2, (self.framework.package_dir,))
        if f is None:
            return 0
        key = (f.f_code, f.f_lineno)
        site = self._sites.get(key)
        if site is None:
            from .. import _C
            site = self._sites[key] = _C._doctor_intern_site(f.f_code.co_filename, f.f_lineno, f.f_code.co_name)
        return site

    def _wrap_optimizer_steps(self, base):
        """Wraps ``step`` of every optimizer class (and of those defined later): the outermost
        optimizer step on a thread begins and ends a doctor's optimizer step."""
        steps = self

        def wrap(cls):
            original = cls.__dict__.get("step")
            if original is None or original in steps._wrappers:
                return

            def step(opt, *args, **kwargs):
                depth = getattr(steps._local, "optimizer", 0)
                steps._local.optimizer = depth + 1
                try:
                    if depth == 0:
                        steps.framework.optimizers.add(opt)
                        steps._check_stale_gradients(opt)
                        steps._local.forward = 0
                        steps._call("_optimizer_stepping", opt, args, kwargs)
                    result = original(opt, *args, **kwargs)
                finally:
                    steps._local.optimizer = depth
                if depth == 0:
                    steps._remember_gradients(opt)
                    steps._call("_optimizer_stepped", opt, args, kwargs)
                return result

            steps._wrappers.add(step)
            step.__wrapped__ = original
            step.__name__, step.__qualname__, step.__doc__ = original.__name__, original.__qualname__, original.__doc__
            self._patch(cls, "step", step)

        pending = [base]
        while pending:
            cls = pending.pop()
            wrap(cls)
            pending.extend(cls.__subclasses__())

        def init_subclass(cls, **kwargs):
            super(base, cls).__init_subclass__(**kwargs)
            wrap(cls)

        self._patch(base, "__init_subclass__", classmethod(init_subclass))

    def _wrap_zero_grad(self, owner, params_of):
        original = owner.__dict__["zero_grad"]
        steps = self

        def zero_grad(obj, *args, **kwargs):
            result = original(obj, *args, **kwargs)
            for p in params_of(obj):
                steps._grads.pop(id(p), None)
                steps._accumulated.pop(id(p), None)
            return result

        zero_grad.__wrapped__ = original
        self._patch(owner, "zero_grad", zero_grad)

    # ---- LD008: gradients accumulated across optimizer steps ----
    def _remember_gradients(self, opt):
        """After an optimizer step: each gradient it used, its version, and how many steps in a row used it."""
        for group in opt.param_groups:
            for p in group["params"]:
                g = p.grad
                if g is None:
                    continue
                old = self._grads.get(id(p))
                streak = old[3] + 1 if old is not None and old[0]() is p and old[1]() is g else 1
                self._grads[id(p)] = (weakref.ref(p), weakref.ref(g), g._version, streak)

    def _gradients_cleared_by_hand(self):
        """Before a backward: a remembered gradient whose version moved since (p.grad.zero_(), p.grad *= 0)
        was cleared by hand: forgotten, as zero_grad() forgets it."""
        for key, (p_ref, g_ref, version, _) in list(self._grads.items()):
            p = p_ref()
            g = p.grad if p is not None else None
            if g is None or g is not g_ref() or g._version != version:
                self._grads.pop(key, None)
                self._accumulated.pop(key, None)

    def _stale_gradients(self):
        """After a backward: the parameters whose gradient it added into is still the one their
        optimizer's last step used (no zero_grad() since, no .grad = None): until their optimizer
        steps again, with the backward's line."""
        line = None
        for key, (p_ref, g_ref, version, streak) in list(self._grads.items()):
            p = p_ref()
            if p is None:
                self._grads.pop(key, None)
                self._accumulated.pop(key, None)
                continue
            g = p.grad
            if g is not None and g is g_ref() and g._version > version:
                if line is None:
                    line = _user_line(self.framework.package_dir)
                self._accumulated[key] = line
                self._grads[key] = (p_ref, g_ref, g._version, streak)  # (a later change by hand shows)

    def _check_stale_gradients(self, opt):
        """Before an optimizer step: the gradients it is about to use that kept what a backward added
        before its previous step (LD008's evidence)."""
        stale, line = [], ""
        for group in opt.param_groups:
            for p in group["params"]:
                where = self._accumulated.pop(id(p), None)
                entry = self._grads.get(id(p))
                if where is not None and entry is not None and entry[0]() is p:
                    stale.append((p, entry[3]))
                    line = line or where
        if stale:
            self._call("_stale_gradients", line, stale)

    def _patch(self, owner, name, value):
        had = name in vars(owner)
        old = vars(owner)[name] if had else None
        setattr(owner, name, value)
        self._undo.append(lambda: setattr(owner, name, old) if had else delattr(owner, name))

    def remove(self):
        for undo in reversed(self._undo):
            undo()
        self._undo.clear()
        # an optimizer made while watching may have had PyTorch put its profiling wrapper around ours
        # into its own class (Optimizer._patch_step_function): such a class had no step of its own
        pending = [self.torch.optim.Optimizer]
        while pending:
            cls = pending.pop()
            pending.extend(cls.__subclasses__())
            if any(f in self._wrappers for f in _wrapped_chain(cls.__dict__.get("step"))):
                delattr(cls, "step")
        self._wrappers.clear()
