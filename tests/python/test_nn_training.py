"""End to end: graft.nn models written as in PyTorch (a Module subclass with __init__ and
forward), trained to convergence with a hand-written SGD step on small deterministic
problems."""
import math

import graft
import graft.nn as nn
import graft.nn.functional as F


def spirals(points_per_class, turns=1.5):
    """Two interleaved spirals in the plane: inputs [2n, 2] and int64 labels [2n]."""
    pts, labels = [], []
    for cls in range(2):
        for i in range(points_per_class):
            r = 0.2 + 0.8 * i / points_per_class
            a = 2 * math.pi * turns * i / points_per_class + cls * math.pi
            pts.append([r * math.cos(a), r * math.sin(a)])
            labels.append(cls)
    return graft.tensor(pts), graft.tensor(labels)


class SpiralNet(nn.Module):
    def __init__(self, hidden=32):
        super().__init__()
        self.fc1 = nn.Linear(2, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.out = nn.Linear(hidden, 2)

    def forward(self, x):
        x = F.relu(self.fc1(x))
        x = graft.tanh(self.fc2(x))
        return self.out(x)


def sgd_step(model, lr):
    with graft.no_grad():
        for p in model.parameters():
            p -= lr * p.grad


def test_spiral_classifier_converges():
    graft.manual_seed(0)
    x, y = spirals(80)
    model = SpiralNet()
    criterion = nn.CrossEntropyLoss()
    params = list(model.parameters())
    losses = []
    for _ in range(4000):
        loss = criterion(model(x), y)
        model.zero_grad()
        loss.backward()
        sgd_step(model, lr=0.5)
        losses.append(loss.detach().item())
        if losses[-1] < 0.02:
            break
    assert losses[0] > 0.6 and losses[-1] < 0.02
    assert all(p is q for p, q in zip(params, model.parameters()))  # updated in place
    model.eval()
    with graft.no_grad():
        logits = model(x)
    assert (logits.argmax(1) == y).all().item()
    # the trained weights survive a state_dict round trip into a fresh model
    fresh = SpiralNet()
    fresh.load_state_dict(model.state_dict())
    with graft.no_grad():
        assert graft.equal(fresh(x), logits)


def test_xor_with_sequential_and_bce_with_logits():
    graft.manual_seed(3)
    x = graft.tensor([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
    y = graft.tensor([[0.0], [1.0], [1.0], [0.0]])
    model = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 1))
    criterion = nn.BCEWithLogitsLoss()
    for _ in range(2000):
        loss = criterion(model(x), y)
        model.zero_grad()
        loss.backward()
        sgd_step(model, lr=1.0)
        if loss.detach().item() < 0.01:
            break
    assert loss.detach().item() < 0.01
    with graft.no_grad():
        assert (model(x) > 0).float().tolist() == y.tolist()
