"""graft.cpu's memory API (torch.cuda's names over graft's CPU caching allocator) and graft.cuda
on a build without CUDA: the lifecycle of tensor memory under Python's reference counting,
statistics, summary, snapshot, categories, history, the per-process cap and OutOfMemoryError.
Sizes follow docs/memory.md: blocks are rounded up to 512 bytes, small-pool segments are
2 MiB, a 1-10 MiB request gets a 20 MiB large-pool segment."""
import collections
import gc
import json
import re

import pytest

import graft
from graft import cpu

KiB = 1024
MiB = 1024 * 1024


def allocated():
    return cpu.memory_allocated()


# ---- the lifecycle under reference counting ----

@pytest.mark.parametrize("numel, block", [(1, 512), (128, 512), (129, 1024), (1000, 4096), (1024, 4096),
                                          (262144, MiB)])
def test_new_tensor_counts_its_rounded_block_and_del_frees_it(numel, block):
    before = allocated()
    requested = cpu.memory_stats()["requested_bytes.all.current"]
    t = graft.zeros(numel)
    assert allocated() == before + block
    assert cpu.memory_stats()["requested_bytes.all.current"] == requested + 4 * numel
    del t
    assert allocated() == before


def test_op_result_is_counted_and_freed_when_its_last_name_goes():
    a = graft.ones(1000)
    before = allocated()
    b = a * 2
    assert allocated() == before + 4096
    b = b + 1  # rebinding drops the product at once; the sum takes its place
    assert allocated() == before + 4096
    del b
    assert allocated() == before
    del a


def test_view_keeps_the_whole_block_alive():
    before = allocated()
    t = graft.zeros(1000)
    v = t[10:20]
    del t
    assert allocated() == before + 4096
    assert v.shape == (10,)
    del v
    assert allocated() == before


def test_tensor_kept_by_a_list_a_dict_or_a_closure_stays_counted():
    before = allocated()
    kept = [graft.zeros(1000)]
    assert allocated() == before + 4096
    kept.clear()
    assert allocated() == before

    table = {"w": graft.zeros(1000)}
    assert allocated() == before + 4096
    del table["w"]
    assert allocated() == before

    def make():
        t = graft.zeros(1000)
        return lambda: t.sum()

    f = make()
    assert allocated() == before + 4096  # the closure cell holds the tensor
    assert f().item() == 0.0
    del f
    assert allocated() == before


def test_reference_cycle_frees_only_at_gc_collect():
    class Holder:
        pass

    gc.collect()
    gc.disable()
    try:
        before = allocated()
        h = Holder()
        h.me = h
        h.t = graft.zeros(1000)
        del h
        assert allocated() == before + 4096  # unreachable, but the cycle keeps it
        gc.collect()
        assert allocated() == before
    finally:
        gc.enable()


# ---- peaks, reserved memory, the cache ----

def test_peaks_follow_the_maximum_until_reset():
    cpu.reset_peak_memory_stats()
    base = allocated()
    assert cpu.max_memory_allocated() == base
    assert cpu.max_memory_reserved() == cpu.memory_reserved()
    t = graft.zeros(262144)  # 1 MiB
    assert cpu.max_memory_allocated() == base + MiB
    del t
    assert allocated() == base
    assert cpu.max_memory_allocated() == base + MiB  # the peak stays
    cpu.reset_peak_memory_stats()
    assert cpu.max_memory_allocated() == base
    assert cpu.memory_stats()["allocated_bytes.all.peak"] == base


def test_reset_accumulated_memory_stats_zeroes_totals_not_current():
    t = graft.zeros(1000)
    del t
    stats = cpu.memory_stats()
    assert stats["allocated_bytes.all.allocated"] >= 4096
    assert stats["allocation.all.freed"] >= 1
    current = stats["allocated_bytes.all.current"]
    cpu.reset_accumulated_memory_stats()
    stats = cpu.memory_stats()
    for key in ("allocated_bytes.all.allocated", "allocated_bytes.all.freed", "allocation.small_pool.allocated",
                "segment.all.allocated", "num_ooms", "num_alloc_retries", "num_device_alloc"):
        assert stats[key] == 0, key
    assert stats["allocated_bytes.all.current"] == current


def test_reserved_stays_after_del_until_empty_cache():
    cpu.empty_cache()
    reserved = cpu.memory_reserved()
    before = allocated()
    big = graft.zeros(3 * MiB // 4)  # a 3 MiB request: a new 20 MiB large-pool segment
    assert allocated() == before + 3 * MiB
    assert cpu.memory_reserved() == reserved + 20 * MiB
    stats = cpu.memory_stats()
    assert stats["inactive_split_bytes.large_pool.current"] == 17 * MiB  # the rest of the segment
    del big
    assert allocated() == before
    assert cpu.memory_reserved() == reserved + 20 * MiB  # cached, not returned
    cpu.empty_cache()
    assert cpu.memory_reserved() == reserved
    assert allocated() == before


def test_empty_cache_never_frees_live_tensors():
    t = graft.full((3 * MiB // 4,), 2.0)
    cpu.empty_cache()
    assert cpu.memory_stats()["reserved_bytes.large_pool.current"] >= 20 * MiB
    assert t.sum().item() == 2.0 * (3 * MiB // 4)
    del t
    cpu.empty_cache()
    assert cpu.memory_stats()["reserved_bytes.large_pool.current"] == 0


# ---- statistics ----

STAT_ARRAYS = ["allocation", "segment", "active", "inactive_split", "allocated_bytes", "reserved_bytes",
               "active_bytes", "inactive_split_bytes", "requested_bytes"]
FIELDS = ["current", "peak", "allocated", "freed"]
EXPECTED_KEYS = sorted(
    [f"{a}.{p}.{f}" for a in STAT_ARRAYS for p in ("all", "small_pool", "large_pool") for f in FIELDS]
    + [f"{s}.{f}" for s in ("oversize_allocations", "oversize_segments") for f in FIELDS]
    + ["num_alloc_retries", "num_ooms", "num_sync_all_streams", "num_device_alloc", "num_device_free",
       "max_split_size"])


def test_memory_stats_has_the_documented_keys_sorted():
    stats = cpu.memory_stats()
    assert type(stats) is collections.OrderedDict
    assert list(stats) == EXPECTED_KEYS  # 9 arrays x 3 pools x 4 fields + 8 oversize + 6 counters
    assert len(stats) == 122
    assert stats["max_split_size"] == -1  # unlimited
    assert all(type(v) is int for v in stats.values())


def test_memory_stats_agree_with_the_convenience_functions():
    t = graft.zeros(1000)
    stats = cpu.memory_stats()
    assert stats["allocated_bytes.all.current"] == cpu.memory_allocated()
    assert stats["allocated_bytes.all.peak"] == cpu.max_memory_allocated()
    assert stats["reserved_bytes.all.current"] == cpu.memory_reserved()
    assert stats["reserved_bytes.all.peak"] == cpu.max_memory_reserved()
    assert stats["allocated_bytes.all.current"] == (stats["allocated_bytes.small_pool.current"]
                                                     + stats["allocated_bytes.large_pool.current"])
    del t


def test_memory_stats_as_nested_dict_nests_the_flat_keys():
    nested = cpu.memory_stats_as_nested_dict()
    flat = cpu.memory_stats()
    assert nested["allocated_bytes"]["all"]["current"] == flat["allocated_bytes.all.current"]
    assert nested["segment"]["small_pool"]["peak"] == flat["segment.small_pool.peak"]
    assert nested["oversize_segments"]["freed"] == flat["oversize_segments.freed"]
    assert nested["num_ooms"] == flat["num_ooms"]
    assert sorted(nested) == sorted(STAT_ARRAYS + ["oversize_allocations", "oversize_segments", "num_alloc_retries",
                                                   "num_ooms", "num_sync_all_streams", "num_device_alloc",
                                                   "num_device_free", "max_split_size"])


ROWS = ["Allocated memory", "Active memory", "Requested memory", "CPU reserved memory", "Non-releasable memory",
        "Allocations", "Active allocs", "CPU reserved segments", "Non-releasable allocs", "Oversize allocations",
        "Oversize CPU segments"]


def test_memory_summary_is_pytorchs_table_titled_for_graft():
    t = graft.zeros(1000)
    text = cpu.memory_summary()
    lines = text.rstrip("\n").split("\n")
    assert lines[0] == "|" + "=" * 75 + "|"
    assert lines[1] == "|                  graft CPU memory summary, device ID 0                    |"
    assert all(len(line) == 77 and line[0] == "|" and line[-1] == "|" for line in lines)
    positions = [text.index("| " + row) for row in ROWS]
    assert positions == sorted(positions)
    assert text.count("from large pool") == 9 and text.count("from small pool") == 9
    stats = cpu.memory_stats()
    assert f"CPU OOMs: {stats['num_ooms']} " in lines[3]
    allocs = re.search(r"\| Allocations +\| +(\d+) +\|", text)
    assert int(allocs.group(1)) == stats["allocation.all.current"]
    del t


def test_memory_summary_abbreviated_keeps_one_row_per_group():
    text = cpu.memory_summary(abbreviated=True)
    assert "from large pool" not in text and "from small pool" not in text
    assert all("| " + row in text for row in ROWS)
    assert text == cpu.memory_summary(device="cpu", abbreviated=True)


# ---- snapshot ----

def test_memory_snapshot_is_shaped_as_pytorchs():
    t = graft.zeros(1000)
    snapshot = cpu.memory_snapshot()
    addresses = [s["address"] for s in snapshot]
    assert addresses == sorted(addresses)
    for seg in snapshot:
        assert {"device", "address", "total_size", "allocated_size", "active_size", "requested_size", "stream",
                "segment_type", "segment_pool_id", "is_expandable", "frames", "blocks"} <= set(seg)
        assert seg["segment_type"] in ("small", "large")
        address = seg["address"]
        for block in seg["blocks"]:  # the blocks tile the segment
            assert block["address"] == address
            address += block["size"]
            assert block["size"] % 512 == 0
            assert block["state"] in ("active_allocated", "inactive")
            assert (block["category"] is None) == (block["state"] == "inactive")
        assert address == seg["address"] + seg["total_size"]
        assert seg["allocated_size"] == sum(b["size"] for b in seg["blocks"] if b["state"] == "active_allocated")
    assert sum(s["total_size"] for s in snapshot) == cpu.memory_reserved()
    assert sum(s["allocated_size"] for s in snapshot) == cpu.memory_allocated()

    [(seg, block)] = [(s, b) for s in snapshot for b in s["blocks"] if b["address"] == t.data_ptr()]
    assert block["size"] == 4096 and block["requested_size"] == 4000
    assert block["state"] == "active_allocated" and block["category"] == "other"
    assert block["frames"] == [] and block["op"] is None  # history is off
    assert seg["segment_type"] == "small" and seg["total_size"] == 2 * MiB
    address = t.data_ptr()
    del t
    assert not [b for s in cpu.memory_snapshot() for b in s["blocks"]
                if b["address"] == address and b["state"] == "active_allocated"]


# ---- who owns the bytes ----

def test_memory_by_category_tracks_parameters_gradients_and_saved_tensors():
    def by_cat():
        cats = cpu.memory_by_category()
        assert sum(cats.values()) == cpu.memory_allocated()
        return cats

    start = by_cat()
    assert list(start) == ["parameter", "gradient", "saved_for_backward", "optimizer_state", "data_batch", "other"]

    p = graft.nn.Parameter(graft.ones(1000))  # nn.Parameter's constructor tags the storage
    assert p.requires_grad and p.is_leaf
    cats = by_cat()
    assert cats["parameter"] == start["parameter"] + 4096
    assert cats["other"] == start["other"]
    [block] = [b for s in cpu.memory_snapshot() for b in s["blocks"] if b["address"] == p.data_ptr()]
    assert block["category"] == "parameter"

    loss = p.exp().sum()  # exp saves its 4096-byte result for backward
    cats = by_cat()
    assert cats["saved_for_backward"] == start["saved_for_backward"] + 4096
    assert cats["other"] == start["other"] + 512  # the 0-d loss
    loss.backward()
    cats = by_cat()
    assert cats["saved_for_backward"] == start["saved_for_backward"]  # released by backward
    assert cats["gradient"] == start["gradient"] + 4096
    assert p.grad.sum().item() == pytest.approx(1000 * 2.718281828, rel=1e-6)
    del loss
    p.grad = None
    assert by_cat()["gradient"] == start["gradient"]
    del p
    assert by_cat() == start


def test_retained_graph_keeps_saved_tensors_counted():
    x = graft.ones(1000, requires_grad=True)
    start = cpu.memory_by_category()["saved_for_backward"]
    loss = x.exp().sum()
    loss.backward(retain_graph=True)
    assert cpu.memory_by_category()["saved_for_backward"] == start + 4096
    del loss  # the graph goes with its last reference
    assert cpu.memory_by_category()["saved_for_backward"] == start
    del x


# ---- history ----

@pytest.fixture
def history_off():
    """Turns history off after the test whatever happens (it is process-wide)."""
    yield
    cpu.memory._record_memory_history(enabled=None)


def test_history_dump_names_the_ops(tmp_path, history_off):
    x = graft.ones(1000)
    w = graft.full((1000,), 3.0)
    cpu.memory._record_memory_history(enabled="all", context="all", stacks="python", max_entries=1000)
    y = x * w
    address = y.data_ptr()
    [block] = [b for s in cpu.memory_snapshot() for b in s["blocks"] if b["address"] == address]
    assert block["op"] == "mul"
    del y
    path = tmp_path / "dump_snapshot.pickle"
    cpu.memory._dump_snapshot(str(path))
    with open(path) as f:
        dump = json.load(f)  # graft's JSON, whatever the file name says
    assert dump["schema"] == "graft.memory_snapshot" and dump["version"] == 1
    assert dump["device"] == "cpu"
    assert list(dump["stats"]) == EXPECTED_KEYS
    assert dump["history"]["enabled"] is True and dump["history"]["max_entries"] == 1000
    events = [(e["action"], e["addr"], e["size"], e["context"]["op"] if e["context"] else None)
              for e in dump["history"]["entries"]]
    assert events == [("alloc", address, 4096, "mul"), ("free_requested", address, 4096, None),
                      ("free_completed", address, 4096, None)]
    assert dump["history"]["entries"][0]["requested_size"] == 4000
    assert dump["history"]["entries"][0]["context"]["frames"] == []  # stacks="python": no C++ frames
    assert cpu.memory._snapshot()["history"]["entries"] == dump["history"]["entries"]
    del x, w


def test_history_names_backward_ops_and_cpp_stacks(history_off):
    x = graft.ones(1000, requires_grad=True)
    cpu.memory._record_memory_history(enabled="all", stacks="all")
    loss = x.exp().sum()
    loss.backward()
    entries = cpu.memory._snapshot()["history"]["entries"]
    allocs = [e["context"]["op"] for e in entries if e["action"] == "alloc"]
    assert allocs[:2] == ["exp", "sum"]
    assert "mul" in allocs[2:]  # ExpBackward0 multiplies by its saved result
    assert all(e["context"]["frames"] and all(isinstance(f, str) for f in e["context"]["frames"])
               for e in entries if e["action"] == "alloc")
    del loss, x


def test_history_stops_and_keeps_nothing(history_off):
    cpu.memory._record_memory_history(enabled="all")
    t = graft.zeros(10)
    del t
    cpu.memory._record_memory_history(enabled=None)
    history = cpu.memory._snapshot()["history"]
    assert history["enabled"] is False and history["entries"] == []


def test_history_legacy_bool_form_and_state(history_off):
    cpu.memory._record_memory_history(True)  # 1.13's form: a history of one event, as 2.x's legacy path
    a, b = graft.zeros(10), graft.zeros(10)
    history = cpu.memory._snapshot()["history"]
    assert history["enabled"] is True and history["max_entries"] == 1
    assert [e["action"] for e in history["entries"]] == ["alloc"]
    cpu.memory._record_memory_history(False)
    assert cpu.memory._snapshot()["history"]["enabled"] is False
    cpu.memory._record_memory_history(True, trace_alloc_max_entries=5)
    assert cpu.memory._snapshot()["history"]["max_entries"] == 5
    cpu.memory._record_memory_history(enabled="state")  # live blocks keep their op; one event
    c = a + b
    history = cpu.memory._snapshot()["history"]
    assert history["max_entries"] == 1
    [block] = [b for s in cpu.memory_snapshot() for b in s["blocks"] if b["address"] == c.data_ptr()]
    assert block["op"] == "add"
    del a, b, c


def test_history_rejects_unknown_options_with_pytorchs_messages(history_off):
    with pytest.raises(RuntimeError, match=r"^expected state to be 'state', 'all', or None$"):
        cpu.memory._record_memory_history(enabled="everything")
    with pytest.raises(RuntimeError, match=r"^expected context to be 'state', 'alloc', 'all', or None$"):
        cpu.memory._record_memory_history(context="some")
    with pytest.raises(RuntimeError, match=r"^expected stacks to be 'python', or 'all'$"):
        cpu.memory._record_memory_history(stacks="cpp")
    assert cpu.memory._snapshot()["history"]["enabled"] is False  # nothing started


# ---- devices, mem_get_info ----

def test_cpu_device_arguments():
    t = graft.zeros(1000)
    n = cpu.memory_allocated()
    assert cpu.memory_allocated("cpu") == cpu.memory_allocated(graft.device("cpu")) == cpu.memory_allocated(0) == n
    with pytest.raises(ValueError, match=r"^Expected a cpu device, but got: cuda:0$"):
        cpu.memory_allocated("cuda:0")
    with pytest.raises(ValueError, match=r"^Expected the CPU device index 0, but got: 1$"):
        cpu.memory_stats(1)
    with pytest.raises(TypeError, match=r"^Expected a graft.device, a string or an int, but got: float$"):
        cpu.memory_reserved(0.0)
    assert cpu.is_available() is True and cpu.device_count() == 1 and cpu.current_device() == "cpu"
    assert cpu.synchronize() is None
    del t


def test_mem_get_info_reports_the_machines_memory():
    free, total = cpu.mem_get_info()
    with open("/proc/meminfo") as f:
        mem_total_kib = int(re.search(r"MemTotal:\s+(\d+) kB", f.read()).group(1))
    assert total == mem_total_kib * 1024
    assert 0 < free <= total


# ---- the per-process cap and OutOfMemoryError ----

@pytest.fixture
def no_cap():
    """Removes the per-process cap after the test whatever happens (it is process-wide)."""
    yield
    graft._C._set_per_process_memory_limit(None, "cpu")


def format_size(n):
    """PyTorch's format_size for OOM messages (reference 11.7)."""
    if n <= 1024:
        return f"{n} bytes"
    if n <= MiB:
        return f"{n / KiB:.2f} KiB"
    if n <= 1024 * MiB:
        return f"{n / MiB:.2f} MiB"
    return f"{n / (1024 * MiB):.2f} GiB"


def test_format_size_helper():
    assert [format_size(n) for n in (512, 4096, MiB, 2 * MiB, 16 * MiB, 3 << 30)] == [
        "512 bytes", "4.00 KiB", "1024.00 KiB", "2.00 MiB", "16.00 MiB", "3.00 GiB"]


def test_allocation_beyond_the_cap_raises_out_of_memory_and_loses_nothing(no_cap):
    cpu.empty_cache()
    a = graft.full((1000,), 1.5)
    total = cpu.mem_get_info()[1]
    cap = cpu.memory_reserved() + 4 * MiB  # room for two more small segments, not for 16 MiB
    cpu.set_per_process_memory_fraction(cap / total)
    assert cpu.memory._snapshot()["memory_limit"] == pytest.approx(cap, abs=1)
    allocated_before = cpu.memory_allocated()
    ooms = cpu.memory_stats()["num_ooms"]
    with pytest.raises(graft.OutOfMemoryError) as info:
        graft.zeros(4 * MiB)  # 16 MiB: a segment of its own, beyond the cap
    assert isinstance(info.value, RuntimeError)
    unallocated = cpu.memory_reserved() - cpu.memory_allocated()  # what the message saw
    expected = (r"^CPU out of memory\. Tried to allocate 16\.00 MiB\. CPU 0 has a total capacity of "
                + re.escape(format_size(total)) + r" of which \d+\.\d\d [KMG]iB is free\. "
                + re.escape(f"{format_size(int(cap / total * total))} allowed; Of the allocated memory "
                            f"{format_size(allocated_before)} is allocated by graft, and {format_size(unallocated)} "
                            "is reserved by graft but unallocated. If reserved but unallocated memory is large try "
                            "setting GRAFT_ALLOC_CONF=max_split_size_mb:<MB> to avoid fragmentation.  See "
                            "documentation for Memory Management  (docs/memory.md)") + "$")
    assert re.match(expected, str(info.value)), str(info.value)
    assert cpu.memory_stats()["num_ooms"] == ooms + 1
    assert cpu.memory_allocated() == allocated_before  # nothing was handed out, nothing lost
    assert a.sum().item() == 1500.0  # the live tensor is untouched
    small = graft.ones(1000)  # under the cap
    assert small.sum().item() == 1000.0
    cpu.set_per_process_memory_fraction(1.0)  # the whole memory: the cap is lifted
    big = graft.ones(4 * MiB)
    assert big.sum().item() == 4 * MiB
    assert cpu.memory_allocated() == allocated_before + 4096 + 16 * MiB
    del a, small, big
    cpu.empty_cache()


def test_set_per_process_memory_fraction_checks_its_argument(no_cap):
    with pytest.raises(TypeError, match=r"^Invalid type for fraction argument, must be `float`$"):
        cpu.set_per_process_memory_fraction(1)
    with pytest.raises(ValueError, match=r"^Invalid fraction value: 1\.5\. Allowed range: 0~1$"):
        cpu.set_per_process_memory_fraction(1.5)
    with pytest.raises(ValueError, match=r"^Invalid fraction value: -0\.1\. Allowed range: 0~1$"):
        cpu.set_per_process_memory_fraction(-0.1)
    assert cpu.memory._snapshot()["memory_limit"] is None  # a rejected call sets nothing


def test_out_of_memory_error_names():
    assert graft.cuda.OutOfMemoryError is graft.OutOfMemoryError
    assert issubclass(graft.OutOfMemoryError, RuntimeError)


# ---- graft.cuda: torch.cuda on a build without CUDA (observed on Debian's torch 1.13) ----

NOT_COMPILED = r"^Torch not compiled with CUDA enabled$"


def test_cuda_is_not_available():
    assert graft.cuda.is_available() is False
    assert graft.cuda.device_count() == 0
    assert graft.cuda.is_initialized() is False


@pytest.mark.parametrize("device", [None, 0, "cuda:0", "cpu"])
def test_cuda_statistics_read_zero_and_empty_before_initialisation(device):
    for fn in (graft.cuda.memory_allocated, graft.cuda.max_memory_allocated, graft.cuda.memory_reserved,
               graft.cuda.max_memory_reserved):
        assert fn(device) == 0
    stats = graft.cuda.memory_stats(device)
    assert type(stats) is collections.OrderedDict and stats == {}
    assert graft.cuda.memory_stats_as_nested_dict(device) == {}
    assert graft.cuda.memory_by_category(device) == {
        "parameter": 0, "gradient": 0, "saved_for_backward": 0, "optimizer_state": 0, "data_batch": 0, "other": 0}


def test_cuda_functions_raise_as_pytorch_without_cuda():
    assert graft.cuda.empty_cache() is None
    with pytest.raises(AttributeError, match=r"^module 'graft\._C' has no attribute '_cuda_resetPeakMemoryStats'$"):
        graft.cuda.reset_peak_memory_stats()
    with pytest.raises(AttributeError,
                       match=r"^module 'graft\._C' has no attribute '_cuda_resetAccumulatedMemoryStats'$"):
        graft.cuda.reset_accumulated_memory_stats(0)
    with pytest.raises(ValueError, match=r"^Expected a cuda device, but got: cpu$"):
        graft.cuda.reset_peak_memory_stats("cpu")
    with pytest.raises(KeyError, match=r"^'allocated_bytes\.all\.current'$"):
        graft.cuda.memory_summary()
    with pytest.raises(ValueError, match=r"^Expected a cuda device, but got: cpu$"):
        graft.cuda.memory_summary("cpu")
    with pytest.raises(AttributeError, match=r"^module 'graft\._C' has no attribute '_cuda_memorySnapshot'$"):
        graft.cuda.memory_snapshot()
    with pytest.raises(AssertionError, match=NOT_COMPILED):
        graft.cuda.set_per_process_memory_fraction(0.5)
    with pytest.raises(AssertionError, match=NOT_COMPILED):
        graft.cuda.mem_get_info()
    with pytest.raises(AssertionError, match=NOT_COMPILED):
        graft.cuda.mem_get_info(0)
    with pytest.raises(ValueError, match=r"^Expected a cuda device, but got: cpu$"):
        graft.cuda.mem_get_info("cpu")
    with pytest.raises(AssertionError, match=NOT_COMPILED):
        graft.cuda.memory._record_memory_history(True)
    with pytest.raises(AssertionError, match=NOT_COMPILED):
        graft.cuda.memory._record_memory_history(enabled="all", stacks="python")
    with pytest.raises(AssertionError, match=NOT_COMPILED):
        graft.cuda.memory._snapshot()
    with pytest.raises(AssertionError, match=NOT_COMPILED):
        graft.cuda.memory._dump_snapshot()
    for fn in (graft.cuda.current_device, graft.cuda.synchronize, graft.cuda.init):
        with pytest.raises(AssertionError, match=NOT_COMPILED):
            fn()


def test_cuda_tensors_are_refused():
    with pytest.raises(RuntimeError, match=r"graft was built without CUDA support"):
        graft.zeros(3, device="cuda")
