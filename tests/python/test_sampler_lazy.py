"""RandomSampler with replacement draws its indices lazily, 32 at a time as PyTorch 2.x does, so
that num_samples far beyond memory (10**10) costs nothing until indices are taken; the draws
follow the sampler's seed discipline (graft.manual_seed, or a graft.Generator)."""
import collections
import itertools
import time

import graft
from graft import _C
from graft.utils.data import DataLoader, RandomSampler
from graft.utils.data import sampler as sampler_module


def test_huge_num_samples_is_drawn_lazily():
    data = range(1000)
    rs = RandomSampler(data, replacement=True, num_samples=10 ** 10)
    assert len(rs) == 10 ** 10
    start = time.perf_counter()
    graft.manual_seed(7)
    first = list(itertools.islice(iter(rs), 1000))
    elapsed = time.perf_counter() - start
    assert elapsed < 0.5, elapsed  # the eager path would allocate 80 GB of indices first
    assert len(first) == 1000 and all(isinstance(i, int) and 0 <= i < 1000 for i in first)
    assert len(set(first)) > 500
    graft.manual_seed(7)
    assert list(itertools.islice(iter(rs), 1000)) == first  # reproducible under manual_seed
    assert list(itertools.islice(iter(rs), 1000)) != first  # and a new draw each epoch


def test_huge_num_samples_through_a_dataloader():
    loader = DataLoader(list(range(10)), batch_size=4, sampler=RandomSampler(range(10), True, 10 ** 10))
    assert len(loader) == 25 * 10 ** 8
    start = time.perf_counter()
    batches = list(itertools.islice(iter(loader), 3))
    assert time.perf_counter() - start < 0.5
    assert [b.shape for b in batches] == [(4,)] * 3 and all(0 <= v < 10 for b in batches for v in b.tolist())


def test_draws_are_those_of_one_seeded_epoch():
    # chunked or not, the indices are the seed's stream: the same as one epoch of all draws
    for num_samples in (1, 31, 32, 33, 64, 100):
        graft.manual_seed(3)
        seed = sampler_module._draw_seed()
        expected = _C._data.RandomSampler(10, True, num_samples, seed).next_epoch()
        graft.manual_seed(3)
        drawn = list(RandomSampler(range(10), replacement=True, num_samples=num_samples))
        assert drawn == expected and len(drawn) == num_samples


def test_generator_seeds_the_draws():
    data = range(50)
    runs = []
    for _ in range(2):
        rs = RandomSampler(data, replacement=True, num_samples=10 ** 12, generator=graft.Generator().manual_seed(11))
        runs.append([list(itertools.islice(iter(rs), 70)) for _ in range(2)])
    assert runs[0] == runs[1]  # the same generator seed, the same epochs
    assert runs[0][0] != runs[0][1]  # the generator advances between epochs


def test_draws_are_uniform():
    graft.manual_seed(0)
    n, draws = 5, 50000
    counts = collections.Counter(RandomSampler(range(n), replacement=True, num_samples=draws))
    assert sum(counts.values()) == draws and set(counts) == set(range(n))
    expected = draws / n
    chi2 = sum((c - expected) ** 2 / expected for c in counts.values())
    assert chi2 < 20, counts  # 4 degrees of freedom: p < 0.001 above 18.5


def test_without_replacement_is_unchanged():
    graft.manual_seed(1)
    order = list(RandomSampler(range(20)))
    assert sorted(order) == list(range(20))
    graft.manual_seed(1)
    longer = list(RandomSampler(range(5), num_samples=12))
    assert sorted(longer[:5]) == sorted(longer[5:10]) == list(range(5)) and len(longer) == 12
