"""graft.Generator (torch.Generator): every op that takes `generator=` draws from it and leaves
the default generator alone, as PyTorch's; its API and errors are PyTorch's."""
import pickle

import pytest

import graft
import graft.nn as nn
from graft.utils.data import DataLoader, RandomSampler, SubsetRandomSampler, random_split


def test_api_as_torch():
    g = graft.Generator()
    assert g.initial_seed() == 67280421310721  # PyTorch's default seed for a new generator
    assert g.device == graft.device("cpu")
    assert graft.Generator(device="cpu").initial_seed() == 67280421310721
    assert g.manual_seed(3) is g and g.initial_seed() == 3
    assert g.manual_seed(-1).initial_seed() == 2 ** 64 - 1  # wraps as PyTorch's
    with pytest.raises(RuntimeError, match="^Overflow when unpacking long$"):
        g.manual_seed(2 ** 64)
    s = g.seed()
    assert isinstance(s, int) and g.initial_seed() == s
    assert isinstance(graft.default_generator, graft.Generator)
    assert graft.manual_seed(5) is graft.default_generator
    assert graft.default_generator.initial_seed() == 5 == graft.initial_seed()
    assert graft.random.default_generator is graft.default_generator


@pytest.mark.parametrize("device, name", [("cuda", "CUDA"), ("meta", "META")])
def test_other_devices_refused_as_torch(device, name):
    with pytest.raises(RuntimeError, match=f"^Device type {name} is not supported for torch.Generator\\(\\) api.$"):
        graft.Generator(device)


def test_not_picklable():
    with pytest.raises(TypeError, match="^cannot pickle 'Generator' object$"):
        pickle.dumps(graft.Generator())


def _draws(g):
    x = graft.empty(4)
    return [graft.rand(3, generator=g).tolist(), graft.randn(2, 2, generator=g).tolist(),
            graft.randint(0, 50, (5,), generator=g).tolist(), graft.randint(7, (3,), generator=g).tolist(),
            graft.randperm(10, generator=g).tolist(),
            graft.multinomial(graft.tensor([0.2, 0.3, 0.5]), 2, generator=g).tolist(),
            graft.tensor([0.2, 0.8]).multinomial(4, True, generator=g).tolist(),
            x.uniform_(-2, 2, generator=g).tolist(), x.normal_(1, 2, generator=g).tolist(),
            x.bernoulli_(0.3, generator=g).tolist(), x.exponential_(generator=g).tolist(),
            x.geometric_(0.5, generator=g).tolist(), x.log_normal_(generator=g).tolist(),
            x.cauchy_(generator=g).tolist(), graft.empty(3, dtype=graft.int64).random_(generator=g).tolist(),
            graft.empty(3, dtype=graft.int64).random_(5, generator=g).tolist(),
            graft.empty(3, dtype=graft.int64).random_(2, 9, generator=g).tolist(),
            nn.init.uniform_(graft.empty(3), generator=g).tolist(),
            nn.init.normal_(graft.empty(3), generator=g).tolist(),
            nn.init.xavier_uniform_(graft.empty(2, 3), generator=g).tolist(),
            nn.init.xavier_normal_(graft.empty(2, 3), generator=g).tolist(),
            nn.init.kaiming_uniform_(graft.empty(2, 3), generator=g).tolist(),
            nn.init.kaiming_normal_(graft.empty(2, 3), generator=g).tolist(),
            nn.init.trunc_normal_(graft.empty(3), generator=g).tolist()]


def test_every_op_draws_from_its_generator():
    a, b = graft.Generator().manual_seed(8), graft.Generator().manual_seed(8)
    assert _draws(a) == _draws(b)
    assert _draws(a) != _draws(graft.Generator().manual_seed(8))  # a advanced


def test_the_default_generator_is_left_alone():
    graft.manual_seed(13)
    plain = graft.rand(6).tolist()
    graft.manual_seed(13)
    first = graft.rand(3).tolist()
    _draws(graft.Generator())
    assert first + graft.rand(3).tolist() == plain
    assert graft.initial_seed() == 13


def test_the_default_generator_object_is_the_default():
    graft.default_generator.manual_seed(4)
    with_object = graft.rand(5, generator=graft.default_generator).tolist()
    graft.manual_seed(4)
    assert graft.rand(5).tolist() == with_object


def test_state_round_trips_and_bad_states_change_nothing():
    g = graft.Generator().manual_seed(2)
    state = g.get_state()
    assert state.dtype == graft.int64 and state.dim() == 1
    after = graft.rand(4, generator=g).tolist()
    assert g.set_state(state) is g
    assert graft.rand(4, generator=g).tolist() == after
    g.set_state(state)
    with pytest.raises(TypeError, match="^RNG state must be a torch.LongTensor$"):
        g.set_state(graft.zeros(3))
    with pytest.raises(TypeError, match="^expected a torch.LongTensor, but got list$"):
        g.set_state([1, 2])
    with pytest.raises(RuntimeError, match="^Expected a graft RNG state of size"):
        g.set_state(graft.zeros(3, dtype=graft.int64))
    assert graft.rand(4, generator=g).tolist() == after


@pytest.mark.parametrize("call", [lambda: graft.rand(2, generator=5), lambda: graft.randperm(3, generator="g"),
                                  lambda: graft.randint(3, (2,), generator=1.5)])
def test_a_generator_that_is_not_one_is_refused(call):
    with pytest.raises(TypeError, match="argument 'generator' must be graft.Generator, not"):
        call()


def test_generated_bindings_refuse_other_objects():
    with pytest.raises(TypeError, match="generator"):
        graft.empty(2).uniform_(generator=3)


def test_samplers_draw_from_their_generator():
    data = list(range(20))

    def epochs(seed):
        g = graft.Generator().manual_seed(seed)
        sampler = RandomSampler(data, generator=g)
        return [list(sampler), list(sampler)]

    assert epochs(1) == epochs(1)
    assert epochs(1)[0] != epochs(1)[1]  # the generator advances between epochs
    assert sorted(epochs(1)[0]) == data
    g = graft.Generator().manual_seed(3)
    assert sorted(SubsetRandomSampler([1, 5, 9], generator=g)) == [1, 5, 9]

    def split(seed):
        parts = random_split(data, [15, 5], generator=graft.Generator().manual_seed(seed))
        return [list(p.indices) for p in parts]

    assert split(6) == split(6)
    graft.manual_seed(0)
    state = graft.get_rng_state()
    order = [b.tolist() for b in DataLoader(data, batch_size=5, shuffle=True, generator=graft.Generator())]
    assert graft.equal(graft.get_rng_state(), state)  # the loader's generator, not the default
    assert order == [b.tolist() for b in DataLoader(data, batch_size=5, shuffle=True, generator=graft.Generator())]
    with pytest.raises(TypeError, match="^generator must be a Generator, but got int$"):
        list(RandomSampler(data, generator=5))


def test_mingpt_adder_split():
    """minGPT's adder project splits its data this way (projects/adder/adder.py)."""
    rng = graft.Generator()
    rng.manual_seed(1337)
    perm = graft.randperm(100, generator=rng)
    assert sorted(perm.tolist()) == list(range(100))
    rng2 = graft.Generator()
    rng2.manual_seed(1337)
    assert graft.randperm(100, generator=rng2).tolist() == perm.tolist()
