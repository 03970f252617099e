"""graft.doctor's clean matrix (design F1): training loops written the right way run 200 steps
each under a doctor and report nothing, while their long-lived state (optimizer moments made
lazily, EMA weights, a replay buffer, carried hidden state, a validation history) is made, kept
and replaced as real programs do. Besides "no findings", each loop's timeline must show the
doctor counted every step and that no graph object outlived its step: at every step boundary
no node or saved slot of an earlier step is alive, and the live graph (the step's own, held by
``loss``) has the same size every step. The models are tiny: the file runs in about a second."""
import pytest

import graft as torch
import graft.doctor as doctor
import graft.nn as nn
import graft.nn.functional as F

STEPS = 200


def _data(*shapes):
    torch.manual_seed(0)
    return [torch.randn(*s) for s in shapes]


def mlp():
    x, y = _data((16, 8), (16, 1))
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    for _ in range(STEPS):
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()


def cnn():
    x, = _data((4, 1, 8, 8))
    y = torch.tensor([0, 1, 2, 1])
    model = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Conv2d(4, 4, 3, padding=1), nn.ReLU(), nn.AvgPool2d(2),
                          nn.Flatten(), nn.Linear(4 * 2 * 2, 3))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for _ in range(STEPS):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()


def lstm_detached():
    seq, = _data((STEPS + 4, 2, 3))  # (time, batch, features): a chunk of 4 per step
    lstm, head = nn.LSTM(3, 6), nn.Linear(6, 3)
    opt = torch.optim.SGD(list(lstm.parameters()) + list(head.parameters()), lr=0.01)
    state = None
    for i in range(STEPS):
        opt.zero_grad()
        if state is not None:
            state = tuple(s.detach() for s in state)  # truncated BPTT: one chunk per graph
        out, state = lstm(seq[i:i + 4], state)
        loss = F.mse_loss(head(out), seq[i + 1:i + 5])
        loss.backward()
        opt.step()


def gradient_accumulation():
    x, y = _data((16, 8), (16, 1))
    model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for _ in range(STEPS):
        opt.zero_grad()
        for k in range(4):  # 4 micro-steps, one optimizer step
            loss = F.mse_loss(model(x[k::4]), y[k::4]) / 4
            loss.backward()
        opt.step()


def ema_weights():
    x, y = _data((16, 8), (16, 1))
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
    ema = [p.detach().clone() for p in model.parameters()]
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for _ in range(STEPS):
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        with torch.no_grad():
            for e, p in zip(ema, model.parameters()):
                e.mul_(0.99).add_(p, alpha=0.01)


def replay_buffer():
    x, = _data((8, 4))
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 4))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    capacity, buffer = 32, []
    for i in range(STEPS):
        opt.zero_grad()
        out = model(x)
        item = out.detach()[i % 8].clone()
        if len(buffer) < capacity:
            buffer.append(item)          # grows to its capacity...
        else:
            buffer[i % capacity] = item  # ...then cycles
        replay = torch.stack(buffer[-8:])
        loss = F.mse_loss(out, x) + F.mse_loss(model(replay), replay)
        loss.backward()
        opt.step()
    assert len(buffer) == capacity


def validation_no_grad():
    x, y, vx, vy = _data((16, 8), (16, 1), (8, 8), (8, 1))
    model = nn.Sequential(nn.Linear(8, 16), nn.Dropout(0.1), nn.ReLU(), nn.Linear(16, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    history = []
    for i in range(STEPS):
        model.train()
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        if i % 5 == 4:
            model.eval()
            with torch.no_grad():
                history.append(F.mse_loss(model(vx), vy))  # kept, and fine: no graph
    assert len(history) == STEPS // 5


def adam_lazy_state():
    x, y = _data((16, 8), (16, 1))
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    assert len(opt.state) == 0  # the moments are made by the first step()
    for _ in range(STEPS):
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
    assert len(opt.state) == 4


LOOPS = [mlp, cnn, lstm_detached, gradient_accumulation, ema_weights, replay_buffer, validation_no_grad,
         adam_lazy_state]


@pytest.mark.parametrize("loop", LOOPS, ids=[f.__name__ for f in LOOPS])
def test_a_clean_loop_reports_nothing_over_200_steps(loop):
    with doctor.watch(deterministic=True, max_events=0) as dr:  # step records only: no event ring
        loop()
    assert dr.findings == [], "\n".join(str(f) for f in dr.findings)
    records = dr.timeline()["steps"]
    assert dr.steps == STEPS and [r["step"] for r in records] == list(range(1, STEPS + 1))
    stale = [(r["step"], r["stale_nodes"], r["stale_saved_slots"], r["stale_generations"]) for r in records
             if r["stale_nodes"] or r["stale_saved_slots"] or r["stale_generations"]]
    assert stale == []
    # the step's own graph, held by `loss` at the optimizer step: one size, every step
    assert {r["graph_nodes"] for r in records} == {records[0]["graph_nodes"]}
    assert records[0]["graph_nodes"] > 0
