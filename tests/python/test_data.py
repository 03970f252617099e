"""graft.utils.data: datasets, samplers, default_collate and the DataLoader (ordering,
batching, drop_last, len, shuffling, option errors, worker threads: errors, init, sharding,
timeouts, shutdown, persistence, memory tagging)."""
import collections
import gc
import re
import threading

import numpy as np
import pytest

import graft
from graft.utils.data import (BatchSampler, ConcatDataset, DataLoader, Dataset, IterableDataset, RandomSampler,
                              SequentialSampler, Subset, SubsetRandomSampler, TensorDataset, default_collate,
                              default_convert, get_worker_info, random_split)


def category(t):
    return graft._C._optim.memory_category(t)


def worker_threads():
    return [t for t in threading.enumerate() if t.name.startswith("graft DataLoader worker")]


def tensor_dataset(n=10):
    return TensorDataset(graft.arange(float(n)), graft.arange(n))


def batches(loader):
    return [[t.tolist() for t in b] for b in loader]


class Squares(Dataset):
    def __init__(self, n, fail_at=None, exc=ValueError):
        self.n, self.fail_at, self.exc = n, fail_at, exc

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if i == self.fail_at:
            raise self.exc(f"bad index {i}")
        return i * i


@pytest.mark.parametrize("num_workers", [0, 1, 3])
def test_batches_in_order_and_len(num_workers):
    loader = DataLoader(tensor_dataset(), batch_size=4, num_workers=num_workers)
    assert len(loader) == 3
    assert batches(loader) == [[[0.0, 1.0, 2.0, 3.0], [0, 1, 2, 3]], [[4.0, 5.0, 6.0, 7.0], [4, 5, 6, 7]],
                               [[8.0, 9.0], [8, 9]]]
    dropped = DataLoader(tensor_dataset(), batch_size=4, drop_last=True, num_workers=num_workers)
    assert len(dropped) == 2 and [b[1] for b in batches(dropped)] == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert worker_threads() == []


def test_batch_size_none_and_default_convert():
    loader = DataLoader(tensor_dataset(3), batch_size=None)
    items = list(loader)
    assert len(loader) == 3 and len(items) == 3
    x, y = items[1]  # a tuple sample comes back as a list, values unbatched
    assert isinstance(items[1], list) and x.dim() == 0 and x.item() == 1.0 and y.item() == 1
    assert default_convert({"a": np.array([1.5, 2.5]), "b": "s"})["a"].tolist() == [1.5, 2.5]


def test_shuffle_is_a_reproducible_permutation():
    ds = tensor_dataset(20)
    graft.manual_seed(7)
    first = [i for b in DataLoader(ds, batch_size=6, shuffle=True) for i in b[1].tolist()]
    graft.manual_seed(7)
    loader = DataLoader(ds, batch_size=6, shuffle=True)
    again = [i for b in loader for i in b[1].tolist()]
    second_epoch = [i for b in loader for i in b[1].tolist()]
    assert first == again and sorted(first) == list(range(20))
    assert second_epoch != first and sorted(second_epoch) == list(range(20))
    assert first != list(range(20))


def test_generator_seeds_the_shuffle():
    ds = tensor_dataset(12)
    orders = []
    for _ in range(2):
        loader = DataLoader(ds, batch_size=12, shuffle=True, generator=graft.Generator().manual_seed(3))
        orders.append([b[1].tolist() for b in loader] + [b[1].tolist() for b in loader])
    assert orders[0] == orders[1]
    assert orders[0][0] != orders[0][1]  # the generator advances: a new order every epoch
    with pytest.raises(TypeError, match="^generator must be a Generator"):
        list(RandomSampler(ds, generator=5))


def test_samplers():
    ds = list(range(7))
    assert list(SequentialSampler(ds)) == list(range(7)) and len(SequentialSampler(ds)) == 7
    rs = RandomSampler(ds, replacement=True, num_samples=20)
    drawn = list(rs)
    assert len(rs) == 20 and len(drawn) == 20 and set(drawn) <= set(range(7))
    assert sorted(SubsetRandomSampler([10, 20, 30])) == [10, 20, 30]
    bs = BatchSampler(SequentialSampler(ds), 3, drop_last=False)
    assert list(bs) == [[0, 1, 2], [3, 4, 5], [6]] and len(bs) == 3
    assert list(BatchSampler(ds, 3, drop_last=True)) == [[0, 1, 2], [3, 4, 5]]
    with pytest.raises(ValueError, match=r"^batch_size should be a positive integer value, but got batch_size=0$"):
        BatchSampler(ds, 0, False)
    with pytest.raises(ValueError, match=r"^drop_last should be a boolean value, but got drop_last=1$"):
        BatchSampler(ds, 2, 1)
    with pytest.raises(ValueError, match=r"^num_samples should be a positive integer value, but got num_samples=0$"):
        RandomSampler([])
    with pytest.raises(TypeError, match=r"^replacement should be a boolean value, but got replacement=1$"):
        RandomSampler(ds, replacement=1)
    custom = DataLoader(tensor_dataset(6), batch_sampler=[[5, 0], [3]])
    assert [b[1].tolist() for b in custom] == [[5, 0], [3]] and len(custom) == 2
    by_sampler = DataLoader(tensor_dataset(6), sampler=[4, 2, 0], batch_size=2)
    assert [b[1].tolist() for b in by_sampler] == [[4, 2], [0]]


Point = collections.namedtuple("Point", ["x", "y"])


def test_default_collate():
    out = default_collate([graft.tensor([1.0, 2.0]), graft.tensor([3.0, 4.0])])
    assert out.tolist() == [[1.0, 2.0], [3.0, 4.0]] and out.dtype == graft.float32
    ints = default_collate([1, 2, 3])
    assert ints.dtype == graft.int64 and ints.tolist() == [1, 2, 3]
    floats = default_collate([0.5, 1.5])
    assert floats.dtype == graft.float64 and floats.tolist() == [0.5, 1.5]
    assert default_collate([True, False]).dtype == graft.bool
    assert default_collate(["a", "b"]) == ["a", "b"]
    arrays = default_collate([np.array([1, 2], dtype=np.int32), np.array([3, 4], dtype=np.int32)])
    assert arrays.dtype == graft.int32 and arrays.tolist() == [[1, 2], [3, 4]]
    scalars = default_collate([np.float32(1.5), np.float32(2.5)])
    assert scalars.dtype == graft.float32 and scalars.tolist() == [1.5, 2.5]
    d = default_collate([{"x": 1, "name": "a"}, {"x": 2, "name": "b"}])
    assert list(d) == ["x", "name"] and d["x"].tolist() == [1, 2] and d["name"] == ["a", "b"]
    od = default_collate([collections.OrderedDict(a=1.0), collections.OrderedDict(a=2.0)])
    assert type(od) is collections.OrderedDict and od["a"].tolist() == [1.0, 2.0]
    p = default_collate([Point(1, 2.0), Point(3, 4.0)])
    assert type(p) is Point and p.x.tolist() == [1, 3] and p.y.tolist() == [2.0, 4.0]
    t = default_collate([(1, "a"), (2, "b")])
    assert isinstance(t, list) and t[0].tolist() == [1, 2] and t[1] == ("a", "b")  # strings: the batch as is
    lst = default_collate([[1, 2], [3, 4]])
    assert [x.tolist() for x in lst] == [[1, 3], [2, 4]]
    with pytest.raises(RuntimeError, match=re.escape("stack expects each tensor to be equal size, but got [1] at "
                                                      "entry 0 and [2] at entry 1")):
        default_collate([graft.zeros(1), graft.zeros(2)])
    with pytest.raises(RuntimeError, match="^each element in list of batch should be of equal size$"):
        default_collate([[1, 2], [1]])
    with pytest.raises(TypeError, match=re.escape("default_collate: batch must contain tensors, numpy arrays, "
                                                  "numbers, dicts or lists; found <class 'object'>")):
        default_collate([object()])
    with pytest.raises(TypeError, match=re.escape("default_collate: batch must contain tensors, numpy arrays, "
                                                  "numbers, dicts or lists; found <U1")):
        default_collate([np.array(["a"]), np.array(["b"])])


def test_option_errors():
    ds = tensor_dataset(4)
    cases = [
        (dict(sampler=[0, 1], shuffle=True), "sampler option is mutually exclusive with shuffle"),
        (dict(batch_sampler=[[0]], batch_size=2), "batch_sampler option is mutually exclusive with batch_size, "
                                                  "shuffle, sampler, and drop_last"),
        (dict(batch_sampler=[[0]], drop_last=True), "batch_sampler option is mutually exclusive with batch_size, "
                                                    "shuffle, sampler, and drop_last"),
        (dict(num_workers=-1), "num_workers option should be non-negative; use num_workers=0 to disable "
                               "multiprocessing."),
        (dict(timeout=-1), "timeout option should be non-negative"),
        (dict(prefetch_factor=2), "prefetch_factor option could only be specified in multiprocessing.let "
                                  "num_workers > 0 to enable multiprocessing, otherwise set prefetch_factor to None."),
        (dict(persistent_workers=True), "persistent_workers option needs num_workers > 0"),
        (dict(batch_size=None, drop_last=True), "batch_size=None option disables auto-batching and is mutually "
                                                "exclusive with drop_last"),
        (dict(batch_size=0), "batch_size should be a positive integer value, but got batch_size=0"),
    ]
    for kwargs, msg in cases:
        with pytest.raises(ValueError, match="^" + re.escape(msg) + "$"):
            DataLoader(ds, **kwargs)
    loader = DataLoader(ds)
    with pytest.raises(ValueError, match="^batch_size attribute should not be set after DataLoader is "
                                         "initialized$"):
        loader.batch_size = 3
    with pytest.raises(ValueError, match="^DataLoader with IterableDataset: expected unspecified shuffle option, "
                                         "but got shuffle=True$"):
        DataLoader(Stream(4), shuffle=True)


def test_worker_exception_is_reraised_with_worker_id():
    loader = DataLoader(Squares(8, fail_at=3), batch_size=2, num_workers=2)
    it = iter(loader)
    assert next(it).tolist() == [0, 1]
    with pytest.raises(ValueError) as info:
        next(it)  # batch 1 (indices 2, 3) was built by worker 1
    msg = str(info.value)
    assert msg.startswith("Caught ValueError in DataLoader worker process 1.\nOriginal Traceback (most recent call "
                          "last):\n")
    assert msg.endswith("ValueError: bad index 3\n")
    assert next(it).tolist() == [16, 25]  # the loader goes on with the next batch
    del it, info
    gc.collect()
    with pytest.raises(KeyError) as info:
        list(DataLoader(Squares(4, fail_at=0, exc=KeyError), num_workers=1))
    assert repr(info.value).startswith("KeyError(Caught KeyError in DataLoader worker process 0.")
    with pytest.raises(ValueError, match="^bad index 1$"):
        list(DataLoader(Squares(4, fail_at=1)))  # no workers: the original exception
    del info
    gc.collect()
    assert worker_threads() == []


def test_worker_init_fn_and_worker_info():
    seen = []
    lock = threading.Lock()

    def init(worker_id):
        info = get_worker_info()
        with lock:
            seen.append((worker_id, info.id, info.num_workers))

    class WhoAmI(Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            return get_worker_info().id

    out = [b.tolist() for b in DataLoader(WhoAmI(), batch_size=1, num_workers=2, worker_init_fn=init)]
    assert out == [[0], [1], [0], [1]]  # batches go to the workers in turn
    assert sorted(seen) == [(0, 0, 2), (1, 1, 2)]
    assert get_worker_info() is None
    with pytest.raises(ValueError, match=r"^Caught ValueError in DataLoader worker process 0\.\n"):
        list(DataLoader(WhoAmI(), num_workers=1, worker_init_fn=lambda i: int("x")))


class Stream(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = get_worker_info()
        if info is None:
            return iter(range(self.n))
        per = self.n // info.num_workers
        return iter(range(info.id * per, (info.id + 1) * per))

    def __len__(self):
        return self.n


def test_iterable_dataset():
    assert [b.tolist() for b in DataLoader(Stream(5), batch_size=2)] == [[0, 1], [2, 3], [4]]
    assert [b.tolist() for b in DataLoader(Stream(5), batch_size=2, drop_last=True)] == [[0, 1], [2, 3]]
    assert len(DataLoader(Stream(5), batch_size=2)) == 3
    sharded = DataLoader(Stream(8), batch_size=2, num_workers=2)
    assert [b.tolist() for b in sharded] == [[0, 1], [4, 5], [2, 3], [6, 7]]
    assert list(DataLoader(Stream(3), batch_size=None)) == [0, 1, 2]  # unbatched ints stay ints


def test_abandoned_iterator_stops_its_workers():
    loader = DataLoader(tensor_dataset(40), batch_size=2, num_workers=3)
    it = iter(loader)
    next(it)
    assert len(worker_threads()) == 3
    del it
    gc.collect()
    assert worker_threads() == []
    for b in loader:
        break  # leaving the loop early
    gc.collect()
    assert worker_threads() == []


def test_persistent_workers_survive_epochs():
    loader = DataLoader(tensor_dataset(6), batch_size=4, num_workers=2, persistent_workers=True)
    first = batches(loader)
    threads = worker_threads()
    assert len(threads) == 2
    assert batches(loader) == first == [[[0.0, 1.0, 2.0, 3.0], [0, 1, 2, 3]], [[4.0, 5.0], [4, 5]]]
    assert worker_threads() == threads
    stream = DataLoader(Stream(4), batch_size=2, num_workers=2, persistent_workers=True)
    assert [b.tolist() for b in stream] == [[0, 1], [2, 3]] == [b.tolist() for b in stream]
    del loader, stream
    gc.collect()
    assert worker_threads() == []


def test_timeout():
    gate = threading.Event()

    class Blocked(Dataset):
        def __len__(self):
            return 2

        def __getitem__(self, i):
            gate.wait()
            return i

    loader = DataLoader(Blocked(), num_workers=1, timeout=0.05)
    it = iter(loader)
    with pytest.raises(RuntimeError, match=r"^DataLoader timed out after 0\.05 seconds$"):
        next(it)
    gate.set()
    del it
    gc.collect()
    assert worker_threads() == []


def test_pin_memory_warns_and_changes_nothing():
    loader = DataLoader(tensor_dataset(4), batch_size=2, pin_memory=True)
    with pytest.warns(UserWarning, match=re.escape("'pin_memory' argument is set as true but no accelerator is "
                                                   "found, then device pinned memory won't be used.")):
        out = batches(loader)
    assert out == [[[0.0, 1.0], [0, 1]], [[2.0, 3.0], [2, 3]]]


@pytest.mark.parametrize("num_workers", [0, 2])
def test_batches_are_tagged_data_batch(num_workers):
    for x, y in DataLoader(tensor_dataset(8), batch_size=4, num_workers=num_workers):
        assert category(x) == "data_batch" and category(y) == "data_batch"
    assert category(graft.zeros(4)) == "other"


def test_datasets_and_random_split():
    ds = tensor_dataset(5)
    with pytest.raises(AssertionError, match="^Size mismatch between tensors$"):
        TensorDataset(graft.zeros(3), graft.zeros(4))
    assert [t.item() for t in ds[2]] == [2.0, 2]
    sub = Subset(list(range(10, 20)), [3, 1])
    assert len(sub) == 2 and sub[0] == 13 and sub[1] == 11
    cat = ConcatDataset([list(range(3)), list(range(10, 12))])
    assert len(cat) == 5 and [cat[i] for i in range(5)] == [0, 1, 2, 10, 11] and cat[-1] == 11
    with pytest.raises(ValueError, match="^absolute value of index should not exceed dataset length$"):
        cat[-6]
    assert len(Squares(2) + Squares(3)) == 5
    graft.manual_seed(0)
    a, b = random_split(range(10), [7, 3])
    graft.manual_seed(0)
    a2, b2 = random_split(range(10), [0.7, 0.3])
    assert (list(a), list(b)) == (list(a2), list(b2))
    assert len(a) == 7 and sorted(list(a) + list(b)) == list(range(10))
    # floor(10 * fraction) each, the remainder handed out round-robin from the first split
    assert [len(p) for p in random_split(range(10), [0.5, 0.25, 0.25])] == [6, 2, 2]
    assert [len(p) for p in random_split(range(10), [0.45, 0.45, 0.1])] == [5, 4, 1]
    with pytest.raises(ValueError, match="^Sum of input lengths does not equal the length of the input dataset!$"):
        random_split(range(10), [5, 4])
    with pytest.raises(ValueError, match="^Fraction at index 1 is not between 0 and 1$"):
        random_split(range(10), [0.5, -0.5, 1.0])
    with pytest.raises(NotImplementedError, match="^Subclasses of Dataset should implement __getitem__.$"):
        Dataset()[0]
