"""Training loops with the classic memory habits, each with its fixed twin, for graft.doctor's
tests (test_doctor_*.py). A line that the doctor must name carries a ``# <-- LDxxx`` marker;
the tests find it with ``line_of``. Every function runs ``steps`` steps and returns nothing:
what it leaks dies with its frame (the suite's leak check holds)."""
import collections
import contextlib
import importlib
_FRAMEWORK = globals().get("_FRAMEWORK", "graft")  # or PyTorch itself: on_torch() (the golden files keep
torch = importlib.import_module(_FRAMEWORK)         # these fixtures' line numbers: a line added above moves them)
nn, F = importlib.import_module(_FRAMEWORK + ".nn"), importlib.import_module(_FRAMEWORK + ".nn.functional")

_SOURCE = None


def line_of(marker):
    """'doctor_fixtures.py:<line>' of the line carrying ``# <-- marker``."""
    global _SOURCE
    if _SOURCE is None:
        with open(__file__, encoding="utf-8") as f:
            _SOURCE = f.read().splitlines()
    for i, text in enumerate(_SOURCE, 1):
        if text.rstrip().endswith("# <-- " + marker):
            return f"doctor_fixtures.py:{i}"
    raise KeyError(marker)


def _mlp(seed=0):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(32, 8), torch.randn(32, 1)
    return model, opt, x, y


# ---- LD001: a running total of losses ----
def running_total(steps, fixed=False):
    model, opt, x, y = _mlp()
    state = {"total": 0}
    for _ in range(steps):
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        if fixed:
            state["total"] += loss.detach()
        else:
            state["total"] += loss  # <-- LD001
        opt.step()


class Trainer:
    """LD001 through an attribute: a list of losses kept with their graphs."""

    def __init__(self):
        self.model, self.opt, self.x, self.y = _mlp()
        self.history = []

    def train(self, steps, fixed=False):
        for _ in range(steps):
            self.opt.zero_grad()
            loss = F.mse_loss(self.model(self.x), self.y)  # <-- LD001 list made
            loss.backward()
            self.history.append(loss.detach().item() if fixed else loss)  # <-- LD001 list stored
            self.opt.step()


def losses_list(steps, fixed=False):
    Trainer().train(steps, fixed)


# ---- LD002: state carried into the next step with its graph ----
def carried_state(steps, fixed=False):
    torch.manual_seed(0)
    cell = nn.Linear(8, 8)
    opt = torch.optim.SGD(cell.parameters(), lr=0.01)
    x = torch.randn(1, 8)
    state = {"h": torch.zeros(1, 8)}
    for _ in range(steps):
        opt.zero_grad()
        h = state["h"].detach() if fixed else state["h"]
        state["h"] = torch.tanh(h * 0.5 + cell(x))  # <-- LD002
        state["h"].pow(2).sum().backward(retain_graph=not fixed)
        opt.step()


# ---- LD003: evaluation outputs kept under grad mode ----
def eval_outputs_kept(dr, steps, fixed=False):
    model, opt, x, y = _mlp()
    preds = []
    for _ in range(steps):
        if fixed:
            with torch.no_grad():
                preds.append(model(x).tolist())  # numbers: a tensor kept each step would be LD011
        else:
            out = model(x)  # <-- LD003
            preds.append(out)  # <-- LD003 stored
        dr.step()


# ---- LD004: backward(create_graph=True) leaving graphs in .grad ----
def create_graph_grads(steps, fixed=False):
    model, opt, x, y = _mlp()
    for _ in range(steps):
        loss = F.mse_loss(model(x), y)
        loss.backward(create_graph=True)  # <-- LD004
        opt.step()
        if fixed:
            for p in model.parameters():
                p.grad = None
    for p in model.parameters():  # break the cycle before the frame goes (the suite checks memory)
        p.grad = None


# ---- LD005: a forward hook keeping outputs ----
def _keep_outputs(module, detach):
    store, latest = [], []

    def keep(mod, inputs, output):
        store.append(output)  # <-- LD005 stored

    def keep_latest(mod, inputs, output):
        latest[:] = [output.detach()]  # the latest output only (keeping every one would be LD011)

    return module.register_forward_hook(keep_latest if detach else keep)  # <-- LD005 registered


def hook_capture(steps, fixed=False):
    model, opt, x, y = _mlp()
    handle = _keep_outputs(model[0], detach=fixed)
    for _ in range(steps):
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)  # <-- LD005
        loss.backward()
        opt.step()
    handle.remove()


class _Cache:
    """Holds a tensor and itself: a reference cycle."""

    def __init__(self, tensor, cyclic):
        self.tensor = tensor
        self.me = self if cyclic else None


# ---- LD006: tensors held by reference cycles ----
def cycle_held(steps, fixed=False, start=0):
    """From step ``start + 1`` on (0: the first), each step's cache is a reference cycle."""
    model, opt, x, y = _mlp()
    for i in range(steps):
        opt.zero_grad()
        out = model(x)
        cache = _Cache(out.detach() * 1, cyclic=not fixed and i >= start)  # <-- LD006
        loss = F.mse_loss(out, y)
        loss.backward()
        opt.step()
    del cache


# ---- LD007: carried state detached only every few steps ----
def detached_every(steps, every=3):
    torch.manual_seed(0)
    cell = nn.Linear(8, 8)
    opt = torch.optim.SGD(cell.parameters(), lr=0.01)
    x = torch.randn(1, 8)
    h = torch.zeros(1, 8)
    for i in range(steps):
        opt.zero_grad()
        if i % every == 0:
            h = h.detach()
        h = torch.tanh(h * 0.5 + cell(x))  # <-- LD007
        h.pow(2).sum().backward(retain_graph=True)
        opt.step()


# ---- LD008: no zero_grad ----
def no_zero_grad(steps, fixed=False):
    model, opt, x, y = _mlp()
    for _ in range(steps):
        if fixed:
            opt.zero_grad()
        F.mse_loss(model(x), y).backward()  # <-- LD008
        opt.step()


def gradient_accumulation(steps, micro=4):
    """Accumulation done right: zero_grad and step every `micro` micro-batches."""
    model, opt, x, y = _mlp()
    for _ in range(steps):
        opt.zero_grad()
        for k in range(micro):
            (F.mse_loss(model(x[k::micro]), y[k::micro]) / micro).backward()
        opt.step()


# ---- LD009: retain_graph that nothing uses ----
def retain_unused(steps, fixed=False):
    model, opt, x, y = _mlp()
    for _ in range(steps):
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward(retain_graph=not fixed)  # <-- LD009
        opt.step()


def gradient_penalty(steps):
    """Double backward that needs the graph kept: grad with create_graph, then backward through both."""
    model, opt, x, y = _mlp()
    for _ in range(steps):
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        grads = torch.autograd.grad(loss, list(model.parameters()), create_graph=True)
        penalty = sum(g.pow(2).sum() for g in grads)
        (loss + 0.1 * penalty).backward()
        opt.step()


# ---- LD010: evaluation under grad mode ----
def eval_under_grad(dr, steps, fixed=False):
    model, opt, x, y = _mlp()
    correct = 0
    for _ in range(steps):
        if fixed:
            with torch.no_grad():
                out = model(x)
        else:
            out = model(x)  # <-- LD010
        correct += int((out > 0).sum())
        dr.step()


# ---- patterns from the articles on PyTorch memory ----
def fast_weights_kept(steps):
    """A double-backward loop that keeps create_graph results across iterations (MAML-style fast
    weights carried into the next iteration without detach): LD002."""
    torch.manual_seed(0)
    w = torch.randn(8, 1, requires_grad=True)
    x, y = torch.randn(16, 8), torch.randn(16, 1)
    opt = torch.optim.SGD([w], lr=0.01)
    state = {"fast": w}
    for _ in range(steps):
        opt.zero_grad()
        inner = F.mse_loss(x @ state["fast"], y)
        (g,) = torch.autograd.grad(inner, state["fast"], create_graph=True)
        state["fast"] = state["fast"] - 0.1 * g  # <-- fast-weights
        F.mse_loss(x @ state["fast"], y).backward(retain_graph=True)
        opt.step()


def intermediate_kept(steps):
    """An intermediate kept in a variable after backward: its graph lives until the next step
    rebinds the name, as in PyTorch; nothing grows: clean."""
    model, opt, x, y = _mlp()
    for _ in range(steps):
        opt.zero_grad()
        hidden = model[1](model[0](x))
        loss = F.mse_loss(model[2](hidden), y)
        loss.backward()
        opt.step()
    return None


# ---- a custom Function's ctx keeping the previous step's output ----
class KeepPrevious(torch.autograd.Function):
    """Passes x through, and keeps `previous` on ctx (for a smoothing term it never computes)."""

    @staticmethod
    def forward(ctx, x, previous):
        ctx.previous = previous[0]  # a list: not an input of the graph, just kept
        return x * 1.0

    @staticmethod
    def backward(ctx, grad):
        return grad, None


def ctx_keeps_previous(steps, fixed=False):
    model, opt, x, y = _mlp()
    state = {"last": None}
    for _ in range(steps):
        opt.zero_grad()
        previous = None if state["last"] is None else (state["last"].detach() if fixed else state["last"])  # <-- ctx stored
        out = KeepPrevious.apply(model(x), [previous])  # <-- ctx
        F.mse_loss(out, y).backward()
        state["last"] = out
        opt.step()


# ---- several optimizers: one doctor step per iteration ----
def _gan(seed=0):
    torch.manual_seed(seed)
    gen = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 6))
    disc = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 1))
    return gen, disc, torch.optim.SGD(gen.parameters(), lr=0.01), torch.optim.SGD(disc.parameters(), lr=0.01)


def gan(steps, fixed=True, leak=False):
    """A GAN's iteration: the discriminator's update, then the generator's, whose backward goes
    through the discriminator and adds into its .grad after its step; the discriminator's
    zero_grad clears that before its next step (fine). Unfixed: the discriminator never clears
    its gradients (LD008 at its backward). With ``leak``, the generator's losses are summed
    with their graphs (LD001)."""
    gen, disc, opt_g, opt_d = _gan()
    real = torch.randn(16, 6)
    state = {"g_total": 0}
    for _ in range(steps):
        z = torch.randn(16, 4)
        if fixed:
            opt_d.zero_grad()
        d_loss = F.softplus(-disc(real)).mean() + F.softplus(disc(gen(z).detach())).mean()
        d_loss.backward()  # <-- LD008 gan
        opt_d.step()
        opt_g.zero_grad()
        g_loss = F.softplus(-disc(gen(z))).mean()
        g_loss.backward()
        opt_g.step()
        if leak:
            state["g_total"] += g_loss  # <-- LD001 gan
        else:
            state["g_total"] += g_loss.detach().item()


def two_stages(steps, switch):
    """A second training stage with a new optimizer (the first one never steps again)."""
    model, opt, x, y = _mlp()
    opt2 = torch.optim.SGD(model.parameters(), lr=0.001)
    for i in range(steps):
        o = opt if i < switch else opt2
        o.zero_grad()
        F.mse_loss(model(x), y).backward()
        o.step()


def late_second_leak(steps, start):
    """A running total from the first step and, from step ``start``, a list of outputs of a
    second forward kept under grad mode (a graph of its own)."""
    model, opt, x, y = _mlp()
    state = {"total": 0}
    kept = []
    for i in range(steps):
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        state["total"] += loss  # <-- LD001 first
        if i >= start:
            kept.append(model(x[:4]))  # <-- LD003 late
        opt.step()


# ---- LD011: tensors without a graph kept step after step ----
def kept_predictions(steps, keep="tensor"):
    """keep: "tensor" (the leak), "number" (the fix), "window" (a bounded deque: the fix too)."""
    model, opt, x, y = _mlp()
    history = collections.deque(maxlen=3) if keep == "window" else []
    for _ in range(steps):
        opt.zero_grad()
        out = model(x)
        F.mse_loss(out, y).backward()
        opt.step()
        pred = (out.detach() > 0).float()  # <-- LD011 made
        history.append(pred.mean().item() if keep == "number" else pred)  # <-- LD011 stored


# ---- steps without an optimizer ----
def manual_sgd(steps, leak=False):
    """Parameters updated by hand: each iteration that runs backward is a step."""
    model, _, x, y = _mlp()
    state = {"total": 0.0}
    for _ in range(steps):
        loss = F.mse_loss(model(x), y)
        loss.backward()
        with torch.no_grad():
            for p in model.parameters():
                p -= 0.01 * p.grad
                p.grad = None
        state["total"] += loss if leak else loss.detach().item()  # <-- LD001 manual


def raw_tensors(steps, leak=False):
    """No module and no optimizer: backward() alone marks the iterations."""
    torch.manual_seed(0)
    w = torch.randn(8, 1, requires_grad=True)
    x, y = torch.randn(32, 8), torch.randn(32, 1)
    losses = []
    for _ in range(steps):
        loss = ((x @ w - y) ** 2).mean()  # <-- LD001 raw
        loss.backward()
        with torch.no_grad():
            w -= 0.01 * w.grad
            w.grad = None
        losses.append(loss if leak else loss.detach().item())


def epochs_with_eval(epochs, batches, grad_mode_eval=True, after=False):
    """Training with an evaluation between epochs (or once after training, ``after``), in eval
    mode, under grad mode (LD010) or under no_grad (the fix)."""
    model, opt, x, y = _mlp()

    def evaluate():
        model.eval()
        total = 0.0
        with contextlib.nullcontext() if grad_mode_eval else torch.no_grad():
            for _ in range(batches):
                out = model(x)  # <-- LD010 eval
                total += F.mse_loss(out, y).detach().item()
        model.train()
        return total

    for _ in range(epochs):
        for _ in range(batches):
            opt.zero_grad()
            F.mse_loss(model(x), y).backward()
            opt.step()
        if not after:
            evaluate()
    if after:
        evaluate()


def inference_under_grad(steps):
    """A forward-only script that never calls backward, under grad mode (the module stays in
    training mode)."""
    model, _, x, _ = _mlp()
    total = 0.0
    for _ in range(steps):
        out = model(x)  # <-- LD010 inference
        total += float(out.sum())


def on_torch():
    """These fixtures again, as a module of their own that runs them on PyTorch (same file, same lines)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("doctor_fixtures_on_torch", __file__)
    module = importlib.util.module_from_spec(spec)
    module._FRAMEWORK = "torch"
    spec.loader.exec_module(module)
    return module
