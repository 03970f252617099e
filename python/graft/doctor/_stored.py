"""Where a reference was stored: the line of the program that put a held tensor where its holder
path finds it (``loss_history.append(loss)``, ``total += loss``, ``state['out'] = out``, a hook's
``seen.append(output)``), read from the source of the file the path's root lives in.

A holder path reads as Python (``self.history[3]``, ``state['total']``,
``probe._forward_hooks[3].<closure seen>[2]``): its last step names how the tensor was stored (an
element of a container, a key, an attribute, a name) and the steps before it name the container.
The file's syntax tree is searched for statements that store that way into an expression whose
tail matches the container (``self.history`` matches ``model.history``). Among the matches, the
one that matches the longest tail wins, then a mutation (``append``, ``+=``) over an assignment,
then the root's file, then the store nearest after the line that made the tensor (``out =
model(x)`` then ``preds.append(out)``; the same line best), then a statement inside a loop, then
the first in the file. Assignments of constants and empty
containers (``total = 0``, ``history = []``) store no tensor and are never chosen.
"""
import ast
import os
import re

__all__ = ["stored_at"]

_ADDERS = {"append", "extend", "insert", "appendleft", "extendleft", "add", "put", "put_nowait"}
_KEYED = {"update", "setdefault", "__setitem__"}
_cache = {}  # path -> (mtime, [stores])

_LABEL = re.compile(r"\.<closure (\w+)>|\.(\w+)|\[([^\]]*)\]")


def _labels(pieces):
    """Path pieces as (kind, value): ("name", n), ("attr", a), ("index", None), ("key", text)."""
    out = [("name", pieces[0].rsplit(".", 1)[-1])]
    for p in pieces[1:]:
        for m in _LABEL.finditer(p):
            if m.group(1):
                out.append(("name", m.group(1)))  # a closure cell: the function's variable
            elif m.group(2):
                out.append(("attr", m.group(2)))
            else:
                text = m.group(3)
                out.append(("index", None) if re.fullmatch(r"-?\d+", text) else ("key", text))
    return out


def _chain(node):
    """An expression as (kind, value) labels, outermost last: ``self.h['k']`` -> name, attr, key."""
    out = []
    while True:
        if isinstance(node, ast.Attribute):
            out.append(("attr", node.attr))
            node = node.value
        elif isinstance(node, ast.Subscript):
            s = node.slice
            out.append(("key", repr(s.value)) if isinstance(s, ast.Constant) and not isinstance(s.value, int)
                       else ("index", None))
            node = node.value
        elif isinstance(node, ast.Name):
            out.append(("name", node.id))
            break
        else:
            out.append(("expr", None))
            break
    return out[::-1]


def _same(a, b):
    """Two labels name the same thing: an attribute and a name of the same word do (a path's
    root ``history`` is ``self.history`` in a method)."""
    if a[0] in ("name", "attr") and b[0] in ("name", "attr"):
        return a[1] == b[1]
    if a[0] == "index" or b[0] == "index":
        return a[0] in ("index", "key") and b[0] in ("index", "key")
    return a == b


def _tail_match(expr, want):
    """How many trailing labels of `expr` match those of `want` (0: the last does not)."""
    n = 0
    for a, b in zip(reversed(expr), reversed(want)):
        if not _same(a, b):
            break
        n += 1
    return n


def _is_empty_or_constant(value):
    if isinstance(value, ast.Constant):
        return True
    if isinstance(value, (ast.List, ast.Tuple, ast.Set)) and not value.elts:
        return True
    if isinstance(value, ast.Dict) and not value.keys:
        return True
    return isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and not value.args and \
        value.func.id in ("list", "dict", "set", "deque", "OrderedDict", "defaultdict")


def _stores(tree):
    """(line, kind, chain of the stored-into expression, mutation?, in a loop?) for every store."""
    out = []

    def visit(node, loop):
        inner = loop or isinstance(node, (ast.For, ast.While, ast.AsyncFor, ast.comprehension))
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            aug = isinstance(node, ast.AugAssign)
            if aug or not _is_empty_or_constant(node.value):
                for t in targets:
                    for leaf in (t.elts if isinstance(t, (ast.Tuple, ast.List)) else [t]):
                        out.append((node.lineno, "set", _chain(leaf), aug, loop))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr in _ADDERS:
                out.append((node.lineno, "add", _chain(node.func.value), True, loop))
            elif node.func.attr in _KEYED:
                out.append((node.lineno, "keyed", _chain(node.func.value), True, loop))
        for child in ast.iter_child_nodes(node):
            visit(child, inner)

    visit(tree, False)
    return out


def _stores_of(path):
    try:
        mtime = os.path.getmtime(path)
    except OSError:
        return []
    hit = _cache.get(path)
    if hit and hit[0] == mtime:
        return hit[1]
    try:
        with open(path, encoding="utf-8") as f:
            stores = _stores(ast.parse(f.read(), path))
    except (OSError, SyntaxError, ValueError):
        stores = []
    _cache[path] = (mtime, stores)
    return stores


def _candidates(labels):
    """(what the store looks like, the container's labels) for a path's labels."""
    last = labels[-1]
    container = labels[:-1]
    # (kind, labels to match, how many must match): an element or a key set by subscript must
    # match its container too, not just "some subscript"
    if last[0] == "index":  # an element of a list, deque, set: added to the container, or set at an index
        return [("add", container, 1), ("keyed", container, 1), ("set", labels, 2)]
    if last[0] == "key":
        return [("set", labels, 2), ("keyed", container, 1)]
    return [("set", labels, 1)]  # an attribute or a name: assigned (or += on it)


def _nearness(filename, line, made):
    """Higher for a store just after the made-at line ("file.py:LINE ...") in the same file."""
    try:
        made_file, made_line = made.split(" ")[0].rsplit(":", 1)
        made_line = int(made_line)
    except ValueError:
        return -1 << 30
    if made_file != os.path.basename(filename):
        return -1 << 30
    return -(line - made_line) if line >= made_line else -(made_line - line) - (1 << 20)


def _near_frame(filename, line, loop, at):
    """Higher for a store in the function a frame runs now (``at``: "file.py:FIRST-LAST:LINE", its
    function's lines and the one it runs), in a loop (a reference stored again every step), just
    before the line it runs, else after it."""
    try:
        at_file, lines, at_line = at.rsplit(":", 2)
        first, last = (int(x) for x in lines.split("-"))
        at_line = int(at_line)
    except ValueError:
        return (-1, False, -1 << 30)
    if at_file != os.path.basename(filename):
        return (-1, False, -1 << 30)
    distance = (at_line - line) if line <= at_line else (line - at_line) + (1 << 20)
    return (0 if first <= line <= last else -1, bool(loop), -distance)


def stored_at(pieces, filenames, made="", at=""):
    """"file.py:LINE" where the reference at the end of holder path `pieces` (its labels, the
    root's first) was stored, searched in `filenames` (the root's file, then the files of the
    user's classes along the path); `made` is where the tensor was made ("file.py:LINE"), else
    `at` where the root's frame is ("file.py:FIRST-LAST:LINE": a store in its function, in a
    loop, nearest before the line it runs wins); "" when no statement matches."""
    if isinstance(filenames, str):
        filenames = (filenames,)
    filenames = [f for f in filenames if f and not f.startswith("<")]
    if not filenames or not pieces:
        return ""
    labels = _labels(pieces)
    if labels[-1] == ("attr", "grad") or len(labels) > 1 and labels[-1][0] == "attr" and labels[-1][1].startswith("_"):
        return ""  # .grad is written by backward; private attributes by the library
    best = None
    for order, filename in enumerate(filenames):
        for kind, want, least in _candidates(labels):
            if len(want) < least:
                continue
            for line, k, chain, mutation, loop in _stores_of(filename):
                if k != kind:
                    continue
                n = _tail_match(chain, want)
                if n < least:
                    continue
                near = _nearness(filename, line, made) if made else _near_frame(filename, line, loop, at)
                rank = (n, mutation, -order, near, loop, -line)
                if best is None or rank > best[0]:
                    best = (rank, f"{os.path.basename(filename)}:{line}")
    return best[1] if best else ""
