"""End to end: linear regression written with graft tensors (w, b leaves requiring grad),
trained from a shuffling multi-worker DataLoader with SGD / Adam and LR schedulers, plus a
checkpoint (model, optimizer, scheduler, epoch) saved mid-run and resumed bit for bit."""
import pytest

import graft
from graft import optim
from graft.optim import lr_scheduler
from graft.utils.data import DataLoader, TensorDataset

TRUE_W = [2.0, -3.0, 0.5]
TRUE_B = 0.25


def make_data(n=64):
    graft.manual_seed(0)
    x = graft.randn(n, 3)
    y = x.matmul(graft.tensor(TRUE_W)) + TRUE_B
    return TensorDataset(x, y)


def make_model():
    return graft.zeros(3, requires_grad=True), graft.zeros(1, requires_grad=True)


def train_epoch(loader, w, b, opt, sched=None, per_batch_sched=False):
    total = 0.0
    for xb, yb in loader:
        opt.zero_grad()
        loss = ((xb.matmul(w) + b - yb) ** 2).mean()
        loss.backward()
        opt.step()
        if per_batch_sched:
            sched.step()
        total += loss.detach().item() * xb.size(0)
    if sched is not None and not per_batch_sched:
        sched.step()
    return total / len(loader.dataset)


def test_sgd_with_step_lr_converges():
    w, b = make_model()
    loader = DataLoader(make_data(), batch_size=8, shuffle=True, num_workers=2)
    opt = optim.SGD([{"params": [w]}, {"params": [b], "lr": 0.05}], lr=0.1, momentum=0.5)
    sched = lr_scheduler.StepLR(opt, step_size=10, gamma=0.5)
    losses = [train_epoch(loader, w, b, opt, sched) for _ in range(30)]
    assert losses[0] > 1.0 and losses[-1] < 1e-10
    assert w.tolist() == pytest.approx(TRUE_W, abs=1e-5) and b.detach().item() == pytest.approx(TRUE_B, abs=1e-5)
    assert [g["lr"] for g in opt.param_groups] == pytest.approx([0.0125, 0.00625])


def test_adam_with_one_cycle_converges():
    w, b = make_model()
    loader = DataLoader(make_data(), batch_size=16, shuffle=True)
    opt = optim.Adam([w, b], lr=0.1)
    sched = lr_scheduler.OneCycleLR(opt, max_lr=0.3, epochs=60, steps_per_epoch=len(loader))
    for _ in range(60):
        loss = train_epoch(loader, w, b, opt, sched, per_batch_sched=True)
    assert loss < 1e-6
    assert w.tolist() == pytest.approx(TRUE_W, abs=1e-3) and b.detach().item() == pytest.approx(TRUE_B, abs=1e-3)


def test_checkpoint_resume_is_exact(tmp_path):
    data = make_data()

    def setup():
        w, b = make_model()
        opt = optim.AdamW([w, b], lr=0.05, weight_decay=0.01)
        sched = lr_scheduler.CosineAnnealingLR(opt, T_max=10)
        return w, b, opt, sched

    # Sequential sampling so that the resumed run sees the same batches.
    loader = DataLoader(data, batch_size=16)
    w, b, opt, sched = setup()
    for _ in range(3):
        train_epoch(loader, w, b, opt, sched)
    path = tmp_path / "ckpt.safetensors"
    graft.save({"model": {"w": w.detach(), "b": b.detach()}, "optimizer": opt.state_dict(),
                "scheduler": sched.state_dict(), "epoch": 3}, path)
    for _ in range(3):
        train_epoch(loader, w, b, opt, sched)

    w2, b2, opt2, sched2 = setup()
    ckpt = graft.load(path)
    with graft.no_grad():
        w2.copy_(ckpt["model"]["w"])
        b2.copy_(ckpt["model"]["b"])
    opt2.load_state_dict(ckpt["optimizer"])
    sched2.load_state_dict(ckpt["scheduler"])
    assert ckpt["epoch"] == 3
    for _ in range(3):
        train_epoch(loader, w2, b2, opt2, sched2)
    assert w2.tolist() == w.tolist() and b2.tolist() == b.tolist()
    assert sched2.get_last_lr() == sched.get_last_lr()
