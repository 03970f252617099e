"""graft.nn.parallel: DataParallel as PyTorch's behaves without GPUs (compared with torch 1.13 on
this CPU-only machine), DistributedDataParallel's refusal without a process group, and
data_parallel's error."""
import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="parity tier: PyTorch (Debian python3-torch) is not installed")

import graft  # noqa: E402
import graft.nn.parallel  # noqa: E402,F401  (import form PyTorch code uses)


class TwoInputs:
    """A module class factory: forward(x, scale=1.0) of a Linear layer."""

    @staticmethod
    def make(lib):
        class Net(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = lib.nn.Linear(3, 2)

            def forward(self, x, scale=1.0):
                return self.fc(x) * scale

        return Net()


def test_data_parallel_wraps_the_module_as_pytorch_without_gpus():
    reprs, keys = [], []
    for lib in (graft, torch):
        assert not lib.cuda.is_available()
        net = TwoInputs.make(lib)
        dp = lib.nn.DataParallel(net, device_ids=[0, 1], output_device=0, dim=1)
        assert dp.module is net and dp.device_ids == []
        assert not hasattr(dp, "dim") and not hasattr(dp, "output_device")
        assert [id(p) for p in dp.parameters()] == [id(p) for p in net.parameters()]
        reprs.append(repr(dp))
        keys.append(list(dp.state_dict()))
        dp.eval()
        assert not net.training and not net.fc.training
    assert reprs[0] == reprs[1]
    assert keys[0] == keys[1] == ["module.fc.weight", "module.fc.bias"]


def test_data_parallel_forward_and_backward_call_the_module():
    net = TwoInputs.make(graft)
    dp = graft.nn.parallel.DataParallel(net)
    x = graft.randn(4, 3)
    out = dp(x, scale=2.0)
    np.testing.assert_allclose(out.detach().numpy(), (net(x) * 2.0).detach().numpy())
    out.sum().backward()
    assert net.fc.weight.grad is not None
    np.testing.assert_allclose(net.fc.bias.grad.numpy(), [8.0, 8.0])


def test_data_parallel_state_dict_round_trip_with_torch():
    t_dp = torch.nn.DataParallel(TwoInputs.make(torch))
    g_dp = graft.nn.DataParallel(TwoInputs.make(graft))
    state = {k: graft.from_numpy(v.detach().numpy().copy()) for k, v in t_dp.state_dict().items()}
    result = g_dp.load_state_dict(state)
    assert not result.missing_keys and not result.unexpected_keys
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    np.testing.assert_allclose(g_dp(graft.tensor(x)).detach().numpy(), t_dp(torch.tensor(x)).detach().numpy(),
                               rtol=1e-6)
    # the wrapped module's own state dict has no prefix
    assert list(g_dp.module.state_dict()) == ["fc.weight", "fc.bias"]


def test_aliases():
    assert graft.nn.DataParallel is graft.nn.parallel.DataParallel
    assert graft.nn.parallel.DistributedDataParallel.__name__ == "DistributedDataParallel"
    assert set(graft.nn.parallel.__all__) >= {"DataParallel", "DistributedDataParallel", "data_parallel"}


def test_distributed_data_parallel_needs_a_process_group():
    net = graft.nn.Linear(2, 2)
    with pytest.raises(ValueError) as got:  # PyTorch 2.x's type; 1.13 raised RuntimeError
        graft.nn.parallel.DistributedDataParallel(net)
    with pytest.raises(RuntimeError) as want:
        torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(2, 2))
    assert str(got.value) == str(want.value) == ("Default process group has not been initialized, please make sure "
                                                 "to call init_process_group.")


def test_distributed_data_parallel_argument_checks():
    net = graft.nn.Linear(2, 2)
    DDP = graft.nn.parallel.DistributedDataParallel
    with pytest.raises(ValueError, match="^delay_all_reduce_named_params and param_to_hook_all_reduce need to be set "
                                         "at the same time.$"):
        DDP(net, delay_all_reduce_named_params=[("weight", net.weight)])
    with pytest.raises(RuntimeError, match="^Cannot specify both process_group and device_mesh arguments.$"):
        DDP(net, process_group=object(), device_mesh=object())
    with pytest.raises(NotImplementedError, match="graft.distributed has no collective backend yet"):
        DDP(net, process_group=object())


def test_functional_data_parallel_needs_a_device_type():
    with pytest.raises(RuntimeError, match="^device type could not be determined$"):
        graft.nn.parallel.data_parallel(graft.nn.Linear(2, 2), graft.ones(1, 2))
