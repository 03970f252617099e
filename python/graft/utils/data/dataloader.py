"""graft.utils.data.DataLoader: PyTorch's DataLoader over Python datasets.

Options, defaults, errors, batching, ordering and len() are PyTorch's. The difference is how
``num_workers > 0`` loads: with worker *threads* of this process, not processes. Python code
in datasets and collate functions runs under the GIL (one worker at a time); graft's kernels
(graft.stack in default_collate, tensor ops in transforms) release it for large tensors. The
dataset object is shared by the workers, not copied; worker i builds the batches sent to it
(batches go to workers in turn, at most ``prefetch_factor * num_workers`` outstanding) and
batches come back in sampler order. An exception in a worker is re-raised in the main thread
as PyTorch does ("Caught ValueError in DataLoader worker process 1. Original Traceback ...").
Abandoning the iterator (leaving the loop, dropping the loader) stops and joins the workers and
frees the queued batches. Each worker gets WorkerInfo (get_worker_info()) with its id and a seed
(base seed + id); the workers share graft's default generator and Python's `random`, which
are not reseeded. Batches are built in the allocator's "data_batch" category. pin_memory is
accepted and does nothing (graft has no pinned host memory), with PyTorch's warning when no
accelerator is present."""
import atexit
import itertools
import queue
import sys
import threading
import traceback
import warnings
import weakref

from ... import _C
from .._frames import first_user_frame, is_user_code
from . import _utils
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler, _draw_seed

__all__ = ["DataLoader", "get_worker_info", "WorkerInfo", "default_collate", "default_convert"]

default_collate = _utils.collate.default_collate
default_convert = _utils.collate.default_convert


class _DatasetKind:
    Map = 0
    Iterable = 1


class WorkerInfo:
    """What get_worker_info() returns inside a worker: id, num_workers, seed, dataset."""

    __initialized = False

    def __init__(self, **kwargs):
        for k, v in kwargs.items():
            setattr(self, k, v)
        self.__keys = tuple(kwargs.keys())
        self.__initialized = True

    def __setattr__(self, key, val):
        if self.__initialized:
            raise RuntimeError(f"Cannot assign attributes to {self.__class__.__name__} objects")
        return super().__setattr__(key, val)

    def __repr__(self):
        items = [f"{k}={getattr(self, k)}" for k in self.__keys]
        return f"{self.__class__.__name__}({', '.join(items)})"


_worker_local = threading.local()


def get_worker_info():
    """The WorkerInfo of the calling DataLoader worker thread, None in any other thread."""
    return getattr(_worker_local, "info", None)


class _KeyErrorMessage(str):
    """A KeyError's message printed as is (KeyError repr()s its argument)."""

    def __repr__(self):
        return self


class _ExceptionWrapper:
    """An exception caught in a worker, kept as its type and formatted traceback (no frames)."""

    def __init__(self, where):
        exc_type, exc, tb = sys.exc_info()
        self.exc_type = exc_type
        self.exc_msg = "".join(traceback.format_exception(exc_type, exc, tb))
        self.where = where

    def reraise(self):
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type == KeyError:
            msg = _KeyErrorMessage(msg)
        elif getattr(self.exc_type, "message", None):
            raise self.exc_type(message=msg)
        try:
            exception = self.exc_type(msg)
        except TypeError:
            raise RuntimeError(msg) from None
        raise exception


class _IterableDatasetStopIteration:
    def __init__(self, worker_id):
        self.worker_id = worker_id


class _ResumeIteration:
    """Tells a persistent worker that a new epoch starts."""


class _InfiniteConstantSampler(Sampler):
    """The sampler of an IterableDataset: None forever (the dataset decides when to stop)."""

    def __iter__(self):
        while True:
            yield None


class _MapDatasetFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset = dataset
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn

    def fetch(self, possibly_batched_index):
        if self.auto_collation:
            getitems = getattr(self.dataset, "__getitems__", None)
            if callable(getitems):
                data = getitems(possibly_batched_index)
            else:
                data = [self.dataset[idx] for idx in possibly_batched_index]
        else:
            data = self.dataset[possibly_batched_index]
        return self.collate_fn(data)


class _IterableDatasetFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset_iter = iter(dataset)
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last
        self.ended = False

    def fetch(self, possibly_batched_index):
        if self.ended:
            raise StopIteration
        if self.auto_collation:
            data = []
            for _ in possibly_batched_index:
                try:
                    data.append(next(self.dataset_iter))
                except StopIteration:
                    self.ended = True
                    break
            if len(data) == 0 or (self.drop_last and len(data) < len(possibly_batched_index)):
                raise StopIteration
        else:
            data = next(self.dataset_iter)
        return self.collate_fn(data)


def _create_fetcher(kind, dataset, auto_collation, collate_fn, drop_last):
    cls = _MapDatasetFetcher if kind == _DatasetKind.Map else _IterableDatasetFetcher
    return cls(dataset, auto_collation, collate_fn, drop_last)


def _fetch(fetcher, index):
    """One batch, its allocations tagged data_batch."""
    with _C._data.memory_category("data_batch"):
        return fetcher.fetch(index)


def _user_code(fn):
    """The code object of `fn` when it is the user's Python (not graft's), else None."""
    code = getattr(getattr(fn, "__func__", fn), "__code__", None)
    return code if is_user_code(code) else None


def _batch_site(dataset, collate_fn, made_at):
    """The line a worker's batches are attributed to (no user frame is on a worker's stack):
    the user's collate function, else the dataset's __getitem__, else the DataLoader's line."""
    code = _user_code(collate_fn) or _user_code(getattr(type(dataset), "__getitem__", None))
    if code is not None:
        return code.co_filename, code.co_firstlineno, code.co_qualname
    return made_at


def _made_at():
    """(file, line, function) of the first frame outside graft: where a DataLoader is made."""
    f = first_user_frame(1)
    return (f.f_code.co_filename, f.f_lineno, f.f_code.co_qualname) if f is not None else ("", 0, "")


def _worker_loop(kind, dataset, index_queue, data_queue, done_event, auto_collation, collate_fn, drop_last, seed,
                 init_fn, worker_id, num_workers, site=("", 0, "")):
    """A worker thread: builds the batches sent to it until it receives None."""
    _C._doctor_set_thread_site(*site)  # what the doctor says made its batches
    _worker_local.info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed + worker_id, dataset=dataset)
    where = f"in DataLoader worker process {worker_id}"
    init_exception = None
    fetcher = None
    try:
        if init_fn is not None:
            init_fn(worker_id)
        fetcher = _create_fetcher(kind, dataset, auto_collation, collate_fn, drop_last)
    except BaseException:
        init_exception = _ExceptionWrapper(where)
    iteration_end = False
    while True:
        r = index_queue.get()
        if r is None:
            break
        if isinstance(r, _ResumeIteration):
            data_queue.put((r, None))
            iteration_end = False
            if init_exception is None:
                try:
                    fetcher = _create_fetcher(kind, dataset, auto_collation, collate_fn, drop_last)
                except BaseException:
                    init_exception = _ExceptionWrapper(where)
            continue
        if done_event.is_set() or iteration_end:
            continue
        idx, index = r
        if init_exception is not None:
            data, init_exception = init_exception, None
        else:
            try:
                data = _fetch(fetcher, index)
            except BaseException as e:
                if isinstance(e, StopIteration) and kind == _DatasetKind.Iterable:
                    data = _IterableDatasetStopIteration(worker_id)
                    iteration_end = True
                else:
                    data = _ExceptionWrapper(where)
        data_queue.put((idx, data))
        del data, idx, index, r


def _accelerator_available():
    cuda = getattr(_C, "cuda", None) or getattr(sys.modules.get("graft"), "cuda", None)
    is_available = getattr(cuda, "is_available", None)
    return bool(is_available()) if callable(is_available) else False


class _BaseDataLoaderIter:
    def __init__(self, loader):
        self._dataset = loader.dataset
        self._dataset_kind = loader._dataset_kind
        self._IterableDataset_len_called = loader._IterableDataset_len_called
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        if loader.pin_memory and not loader.pin_memory_device and not _accelerator_available():
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, then device pinned "
                          "memory won't be used.")
        self._timeout = loader.timeout
        self._collate_fn = loader.collate_fn
        self._sampler_iter = iter(self._index_sampler)
        self._persistent_workers = loader.persistent_workers
        self._num_yielded = 0

    def __iter__(self):
        return self

    def _reset(self, loader, first_iter=False):
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._IterableDataset_len_called = loader._IterableDataset_len_called

    def _next_index(self):
        return next(self._sampler_iter)

    def _next_data(self):
        raise NotImplementedError

    def __next__(self):
        if self._sampler_iter is None:
            raise StopIteration
        data = self._next_data()
        self._num_yielded += 1
        if (self._dataset_kind == _DatasetKind.Iterable and self._IterableDataset_len_called is not None
                and self._num_yielded > self._IterableDataset_len_called):
            msg = (f"Length of IterableDataset {self._dataset} was reported to be {self._IterableDataset_len_called}"
                   f" (when accessing len(dataloader)), but {self._num_yielded} samples have been fetched. ")
            if self._num_workers > 0:
                msg += ("For multiprocessing data-loading, this could be caused by not properly configuring the "
                        "IterableDataset replica at each worker. Please see "
                        "https://pytorch.org/docs/stable/data.html#torch.utils.data.IterableDataset for examples.")
            warnings.warn(msg)
        return data

    def __len__(self):
        return len(self._index_sampler)

    def __getstate__(self):
        raise NotImplementedError(f"{self.__class__.__name__} cannot be pickled")


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader):
        super().__init__(loader)
        self._fetcher = _create_fetcher(self._dataset_kind, self._dataset, self._auto_collation, self._collate_fn,
                                        self._drop_last)

    def _next_data(self):
        index = self._next_index()
        return _fetch(self._fetcher, index)


_live_iterators = weakref.WeakSet()


@atexit.register
def _shutdown_all_workers():
    for it in list(_live_iterators):
        it._shutdown_workers()


class _MultiThreadDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader):
        super().__init__(loader)
        self._prefetch_factor = loader.prefetch_factor
        self._shutdown = False
        self._data_queue = queue.Queue()
        self._done_event = threading.Event()
        self._index_queues = []
        self._workers = []
        base_seed = _draw_seed(loader.generator)
        for i in range(self._num_workers):
            index_queue = queue.Queue()
            w = threading.Thread(
                target=_worker_loop, name=f"graft DataLoader worker {i}", daemon=True,
                args=(self._dataset_kind, self._dataset, index_queue, self._data_queue, self._done_event,
                      self._auto_collation, self._collate_fn, self._drop_last, base_seed, loader.worker_init_fn, i,
                      self._num_workers, _batch_site(self._dataset, self._collate_fn, loader._made_at)))
            self._index_queues.append(index_queue)
            self._workers.append(w)
            w.start()
        _live_iterators.add(self)
        self._reset(loader, first_iter=True)

    def _reset(self, loader, first_iter=False):
        super()._reset(loader, first_iter)
        self._send_idx = 0
        self._rcvd_idx = 0
        self._task_info = {}
        self._tasks_outstanding = 0
        self._workers_status = [True] * self._num_workers
        self._worker_queue_idx_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:
            for q in self._index_queues:
                q.put(_ResumeIteration())
            pending = self._num_workers
            while pending > 0:
                idx, _ = self._get_data()
                if isinstance(idx, _ResumeIteration):
                    pending -= 1
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _try_put_index(self):
        try:
            index = self._next_index()
        except StopIteration:
            return
        for _ in range(self._num_workers):
            worker = next(self._worker_queue_idx_cycle)
            if self._workers_status[worker]:
                break
        else:
            return  # every worker has reached the end of its iterable dataset
        self._index_queues[worker].put((self._send_idx, index))
        self._task_info[self._send_idx] = (worker,)
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _get_data(self):
        if self._timeout > 0:
            try:
                return self._data_queue.get(timeout=self._timeout)
            except queue.Empty:
                raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds") from None
        return self._data_queue.get()

    def _next_data(self):
        while True:
            while self._rcvd_idx < self._send_idx:
                info = self._task_info[self._rcvd_idx]
                if len(info) == 2 or self._workers_status[info[0]]:
                    break
                del self._task_info[self._rcvd_idx]  # its worker has stopped: nothing will come
                self._rcvd_idx += 1
            else:
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration
            if len(self._task_info[self._rcvd_idx]) == 2:
                data = self._task_info.pop(self._rcvd_idx)[1]
                return self._process_data(data)
            idx, data = self._get_data()
            self._tasks_outstanding -= 1
            if isinstance(data, _IterableDatasetStopIteration):
                self._workers_status[data.worker_id] = False
                self._try_put_index()
                continue
            if idx != self._rcvd_idx:
                self._task_info[idx] += (data,)  # early: kept until its turn
            else:
                del self._task_info[idx]
                return self._process_data(data)

    def _process_data(self, data):
        self._rcvd_idx += 1
        self._try_put_index()
        if isinstance(data, _ExceptionWrapper):
            data.reraise()
        return data

    def _shutdown_workers(self):
        """Stops and joins the workers and drops the queued batches (idempotent)."""
        if getattr(self, "_shutdown", True):
            return
        self._shutdown = True
        self._done_event.set()
        for q in self._index_queues:
            q.put(None)
        for w in self._workers:
            if w is not threading.current_thread():  # a garbage collection may run __del__ in a worker
                w.join()
        while True:
            try:
                self._data_queue.get_nowait()
            except queue.Empty:
                break
        self._task_info = {}
        self._sampler_iter = None
        _live_iterators.discard(self)

    def __del__(self):
        self._shutdown_workers()


class DataLoader:
    """Batches of a dataset, PyTorch's DataLoader (worker threads instead of processes; see the
    module docstring)."""

    __initialized = False

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=None, persistent_workers=False,
                 pin_memory_device="", in_order=True):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable "
                             "multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing.let num_workers > 0 "
                             "to enable multiprocessing, otherwise set prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        if multiprocessing_context is not None and num_workers == 0:
            raise ValueError("multiprocessing_context can only be used with multi-process loading (num_workers > 0),"
                             f" but got num_workers={num_workers}")
        if not in_order:
            raise NotImplementedError("graft's DataLoader returns batches in sampler order only (in_order=True)")
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order

        if isinstance(dataset, IterableDataset):
            self._dataset_kind = _DatasetKind.Iterable
            if isinstance(shuffle, bool) and shuffle or shuffle not in {False, None}:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified shuffle option, but got "
                                 f"shuffle={shuffle}")
            if sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified sampler option, but got "
                                 f"sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified batch_sampler option, but "
                                 f"got batch_sampler={batch_sampler}")
        else:
            shuffle = bool(shuffle)
            self._dataset_kind = _DatasetKind.Map

        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and "
                                 "drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with drop_last")

        if sampler is None:
            if self._dataset_kind == _DatasetKind.Iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self._made_at = _made_at()  # the user's line, for the doctor's attribution of worker-made batches
        self.__initialized = True
        self._IterableDataset_len_called = None
        self._iterator = None

    def __setattr__(self, attr, val):
        if self.__initialized and attr in ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset",
                                           "persistent_workers"):
            raise ValueError(f"{attr} attribute should not be set after {self.__class__.__name__} is initialized")
        super().__setattr__(attr, val)

    def _get_iterator(self):
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        return _MultiThreadDataLoaderIter(self)

    def __iter__(self):
        """One epoch of batches. With persistent_workers the worker threads are kept between epochs."""
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None:
                self._iterator = self._get_iterator()
            else:
                self._iterator._reset(self)
            return self._iterator
        return self._get_iterator()

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def __len__(self):
        """Batches per epoch: ceil(N / batch_size), or floor with drop_last."""
        if self._dataset_kind == _DatasetKind.Iterable:
            length = self._IterableDataset_len_called = len(self.dataset)
            if self.batch_size is not None:
                if self.drop_last:
                    length = length // self.batch_size
                else:
                    length = -(-length // self.batch_size)
            return length
        return len(self._index_sampler)
