"""graft.load's Python entry points under hostile input: the seeded mutation fuzz of the C++
suite (tests/serialize/fuzz_test.cpp) run through graft.load from a path, from a file object and
from a file object whose read() returns a strided memoryview. Every mutant either loads, the
same way from all three, or raises one of graft's errors (ValueError, TypeError, RuntimeError);
nothing crashes or hangs. The mutants include the nested-structure description graft.save adds
for checkpoints. Also: FIFOs and devices are refused before they are opened, strided buffers
are read in order, and stale temporaries of killed saves are removed by the next save."""
import collections
import io
import json
import os
import random
import signal
import subprocess
import sys
import threading

import pytest

import graft


def _seeds():
    flat = collections.OrderedDict(w=graft.arange(6, dtype=graft.float32).view(2, 3), b=graft.tensor([1, -2], dtype=graft.int64),
                                   m=graft.tensor([True, False]))
    nested = {"model": {"w": graft.ones(3)}, "step": 7, "lrs": [0.1, 0.01], "name": "run", "pair": (1, 2.5)}
    out = []
    for obj in (flat, nested):
        buf = io.BytesIO()
        graft.serialization.save_safetensors(obj, buf)
        out.append(buf.getvalue())
    return out


class _Mutator:
    def __init__(self, seed):
        self.r = random.Random(seed)

    def mutate(self, data):
        r = self.r
        b = bytearray(data)
        kind = r.randrange(7)
        n = int.from_bytes(b[:8], "little") if len(b) >= 8 else 0
        if kind == 0 and b:  # bit flips
            for _ in range(r.randint(1, 4)):
                i = r.randrange(len(b))
                b[i] ^= 1 << r.randrange(8)
        elif kind == 1 and b:  # overwrite bytes with extremes
            for _ in range(r.randint(1, 4)):
                b[r.randrange(len(b))] = r.choice((0, 0xFF, 0x7F, 0x80, ord('"'), ord("}"), ord("9")))
        elif kind == 2:  # truncate
            del b[r.randrange(len(b) + 1):]
        elif kind == 3:  # extend
            b += bytes(r.randrange(256) for _ in range(r.randint(1, 64)))
        elif kind == 4 and len(b) >= 8:  # header length edits
            delta = r.choice((-1, 1, -8, 8, 1 << 40, -(n), 2**63))
            b[:8] = ((n + delta) % 2**64).to_bytes(8, "little")
        elif kind == 5 and 8 + n <= len(b):  # JSON token edits that keep the header length
            header = bytes(b[8:8 + n])
            for old, new in ((b"F32", b"F64"), (b"I64", b"I32"), (b"[2,3]", b"[3,2]"), (b"[2, 3]", b"[3, 2]"),
                             (b'"dtype"', b'"dtypf"'), (b"true", b"null"), (b"0", b"9"), (b"1", b"0"),
                             (b"tensor", b"tenzor"), (b"list", b"dict"), (b"version", b"versiom")):
                if old in header and len(old) == len(new) and r.random() < 0.5:
                    i = header.find(old)
                    header = header[:i] + new + header[i + len(old):]
            b[8:8 + n] = header
        elif kind == 6 and 8 + n <= len(b):  # rewrite the structure description's JSON values
            try:
                meta = json.loads(bytes(b[8:8 + n]))
                desc = json.loads(meta["__metadata__"]["graft.structure"])
            except (ValueError, KeyError, TypeError):
                return bytes(b)
            desc["root"] = r.choice(([], {"tensor": "nope"}, {"dict": [[1]]}, {"list": 5}, {"float": "x"},
                                     {"size": ["a"]}, {"tuple": [{"tensor": "model.w"}]}, 3))
            meta["__metadata__"]["graft.structure"] = json.dumps(desc)
            header = json.dumps(meta).encode()
            b = bytearray(len(header).to_bytes(8, "little")) + header + b[8 + n:]
        return bytes(b)


class _StridedReader:
    """A file object whose read() returns every byte of `data` through a strided memoryview."""

    def __init__(self, data):
        doubled = bytearray(len(data) * 2)
        doubled[::2] = data
        self.view = memoryview(bytes(doubled))[::2]

    def read(self, *_):
        return self.view


def _outcome(fn):
    try:
        return ("ok", _fingerprint(fn()))
    except (ValueError, TypeError, RuntimeError) as e:
        return (type(e).__name__, None)


def _fingerprint(obj):
    if isinstance(obj, graft.Tensor):
        return ("T", tuple(obj.shape), str(obj.dtype), obj.flatten().tolist())
    if isinstance(obj, dict):
        return tuple((k, _fingerprint(v)) for k, v in obj.items())
    if isinstance(obj, (list, tuple)):
        return (type(obj).__name__,) + tuple(_fingerprint(v) for v in obj)
    return obj


def test_mutants_load_the_same_way_from_every_entry_point_or_raise_graft_errors(tmp_path):
    seeds = _seeds()
    mut = _Mutator(0x5AFE7E45)
    path = tmp_path / "mutant.safetensors"
    counts = collections.Counter()
    for i in range(1500):
        data = mut.mutate(seeds[i % len(seeds)])
        path.write_bytes(data)
        from_path = _outcome(lambda: graft.load(path))
        from_bytes = _outcome(lambda: graft.load(io.BytesIO(data)))
        from_strided = _outcome(lambda: graft.load(_StridedReader(data)))
        assert from_path == from_bytes == from_strided, (i, data[:200], from_path[0], from_bytes[0], from_strided[0])
        counts[from_path[0]] += 1
    # the mutator reaches every outcome
    assert counts["ok"] > 100 and counts["ValueError"] > 300, counts


def test_a_fifo_or_a_device_is_refused_without_opening_it(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    done = []
    t = threading.Thread(target=lambda: done.append(_outcome(lambda: graft.load(fifo))), daemon=True)
    t.start()
    t.join(10)
    assert done == [("RuntimeError", None)]  # before: open() waited for a writer forever
    with pytest.raises(RuntimeError, match="is not a regular file"):
        graft.load("/dev/null")
    with pytest.raises(IsADirectoryError):
        graft.load(tmp_path)
    with pytest.raises(FileNotFoundError):
        graft.load(tmp_path / "missing")


def test_a_strided_buffer_is_read_in_order():
    data = _seeds()[0]
    loaded = graft.load(_StridedReader(data))
    assert loaded["w"].tolist() == [[0, 1, 2], [3, 4, 5]] and loaded["b"].tolist() == [1, -2]
    with pytest.raises(TypeError, match="not bytes"):
        graft.load(type("R", (), {"read": lambda self: 5})())


def _dead_pid():
    # pid_max itself is never given to a process (pids stay below it): no reuse race
    with open("/proc/sys/kernel/pid_max") as f:
        return int(f.read())


def test_stale_temporaries_of_dead_processes_are_removed_by_the_next_save(tmp_path):
    import fcntl
    dead = _dead_pid()
    stale = tmp_path / f".model.safetensors.tmp-{dead}-0"
    stale_other = tmp_path / f".other.bin.tmp-{dead}-3"
    live = tmp_path / f".model.safetensors.tmp-{os.getppid()}-0"  # a live process's (pytest's parent)
    locked = tmp_path / f".model.safetensors.tmp-{dead}-1"          # a writer still holds it locked
    not_ours = tmp_path / f"model.safetensors.tmp-{dead}-0"        # not a graft temporary's name
    for p in (stale, stale_other, live, locked, not_ours):
        p.write_bytes(b"x" * 1000)
    with open(locked, "rb") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        graft.save({"w": graft.ones(2)}, tmp_path / "model.safetensors")
    assert not stale.exists() and not stale_other.exists()
    assert live.exists() and locked.exists() and not_ours.exists()
    assert graft.load(tmp_path / "model.safetensors")["w"].tolist() == [1.0, 1.0]


_SAVER = """
import sys, graft
x = graft.ones(8 * 1024 * 1024)
print("ready", flush=True)
while True:
    graft.save({"x": x}, sys.argv[1])
"""


def test_a_save_killed_mid_write_leaves_a_temporary_the_next_save_removes(tmp_path):
    target = tmp_path / "big.safetensors"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    proc = subprocess.Popen([sys.executable, "-c", _SAVER, str(target)], stdout=subprocess.PIPE, env=env)
    try:
        assert proc.stdout.readline().strip() == b"ready"
        temps = []
        for _ in range(2000):  # until a temporary is seen, then kill -9 at once
            temps = [p for p in tmp_path.iterdir() if p.name.startswith(".big.safetensors.tmp-")]
            if temps:
                break
            threading.Event().wait(0.005)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
    left = [p for p in tmp_path.iterdir() if p.name.startswith(".big.safetensors.tmp-")]
    if not left:
        pytest.skip("the kill landed between two saves: no temporary was left this time")
    graft.save({"y": graft.zeros(1)}, target)
    assert [p for p in tmp_path.iterdir() if p.name.startswith(".big.safetensors.tmp-")] == []
    assert graft.load(target)["y"].tolist() == [0.0]
