"""LD006 cycle-held: at each step boundary the doctor runs the cyclic garbage collector itself,
keeps what it would free (gc.DEBUG_SAVEALL), and reports tensors that only it frees, with the
reference cycle that held them and the bytes the collection returned.

A full collection costs far more than the few objects it scans (it empties the interpreter's
free lists, which the next step fills again): 0.25 ms in a 5 ms step. So a boundary collects the
young generations (what the program made since the previous boundary) and only some boundaries
collect everything (Doctor._boundary decides): garbage the young collection found that holds no
tensor waits for the next full one (DEBUG_SAVEALL moved it to the oldest generation); garbage with
tensors is freed at once, by a full collection, to measure what it held."""
import gc


def _describe(obj):
    return type(obj).__qualname__


def _cycle_path(start, garbage_ids, tensors, limit=12):
    """A reference path start -> ... -> start through the garbage (labels as attribute / index
    / key names), or [] if none within `limit` hops."""
    from ._holders import labelled_referents
    frontier = [(start, [])]
    seen = {id(start)}
    for _ in range(limit):
        nxt = []
        for obj, path in frontier:
            for label, ref in labelled_referents(obj, tensors):
                if ref is start:
                    return path + [label]
                if id(ref) in garbage_ids and id(ref) not in seen:
                    seen.add(id(ref))
                    nxt.append((ref, path + [label]))
        frontier = nxt
        if not frontier:
            break
    return []


def collect(doctor, step, full=True):
    """Runs a collection (``full``, else of generations 0 and 1) keeping the garbage; reports
    tensors found in it (LD006)."""
    framework = doctor._tensors  # graft's tensors, or the PyTorch backend's
    old = gc.get_debug()
    gc.set_debug(old | gc.DEBUG_SAVEALL)
    try:
        gc.collect(2 if full else 1)
        garbage = list(gc.garbage)
        gc.garbage.clear()
    finally:
        gc.set_debug(old)
    # the tensors in the garbage, and those it holds directly (a tensor object need not be
    # tracked by the collector itself)
    from ._holders import labelled_referents
    tensors, seen = [], set()
    for o in garbage:
        for t in [o] + [r for _, r in labelled_referents(o, framework)]:
            if isinstance(t, framework.type) and id(t) not in seen:
                seen.add(id(t))
                tensors.append(t)
    if not tensors:
        if garbage and full:  # kept by DEBUG_SAVEALL: collect it for real (after a young one: at the next full)
            del garbage
            gc.collect()
        return
    before = framework.allocated()  # the garbage (kept by DEBUG_SAVEALL) is still alive
    garbage_ids = {id(o) for o in garbage}
    # a container in the cycle names it best: start from an object that refers to a tensor
    holder_path, line = "", ""
    for obj in garbage:
        if isinstance(obj, (framework.type, dict, list, tuple)):
            continue
        path = _cycle_path(obj, garbage_ids, framework)
        if path:
            holder_path = f"a {_describe(obj)} object" + "".join(path) + " (a reference cycle)"
            break
    biggest = max(tensors, key=lambda t: t.numel() * t.element_size())
    line = framework.site_of(biggest)
    n = len(tensors)
    del garbage, tensors, biggest, t, o
    gc.collect()  # now free what the cycles held
    freed = before - framework.allocated()
    if freed <= 0:  # the tensors the garbage referred to live on elsewhere: nothing was held by it
        return
    holders = [{"path": holder_path or "a reference cycle", "created_at": line, "created_step": step,
                "through_hook": False}]
    message = (f"the cyclic garbage collector freed {n} tensor(s) ({_fmt(freed)}) at the end of step {step}: "
               "they were held by a reference cycle, not by anything the program still uses")
    doctor._session.add_evidence("LD006", line, message, holders, max(freed, 0))


def _fmt(b):
    from . import _fmt as fmt
    return fmt(b)
