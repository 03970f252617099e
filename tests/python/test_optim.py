"""graft.optim: every optimizer and option against numbers from torch 1.13 (float64, four
steps), state contents, parameter groups, lr changes, zero_grad, closures, state dicts and
PyTorch's error messages."""
import re

import pytest

import graft
from graft import optim

P0 = [0.5, -1.0, 2.0, 0.25]
GRADS = [[0.1, -0.2, 0.3, -0.4], [0.5, 0.25, -0.75, 1.0], [-0.3, 0.6, 0.2, -0.1], [0.05, -0.05, 0.05, -0.05]]

# (optimizer, options, parameter after the four GRADS steps), computed with torch 1.13 in float64.
CASES = [
    ('SGD', {'lr': 0.1}, [0.465, -1.06, 2.02, 0.205]),
    ('SGD', {'lr': 0.1, 'weight_decay': 0.1}, [0.446290015, -1.02009253, 1.94079055, 0.19585096249999998]),
    ('SGD', {'lr': 0.1, 'momentum': 0.9}, [0.38211, -1.10797, 2.05708, 0.14055999999999996]),
    ('SGD', {'lr': 0.1, 'momentum': 0.9, 'dampening': 0.5}, [0.42385999999999996, -1.019595, 1.9769549999999998, 0.26405999999999996]),
    ('SGD', {'lr': 0.1, 'momentum': 0.9, 'nesterov': True, 'weight_decay': 0.01}, [0.353454178739687, -1.1449969648543739, 2.047064221546427, 0.10365424157689902]),
    ('SGD', {'lr': 0.1, 'momentum': 0.5, 'maximize': True}, [0.5662500000000001, -0.9087500000000001, 1.9599999999999997, 0.33]),
    ('Adam', {'lr': 0.1}, [0.26367717825550047, -1.0251809525469324, 1.9731215980778674, 0.257321266697898]),
    ('Adam', {'lr': 0.1, 'betas': (0.8, 0.9), 'eps': 1e-06, 'weight_decay': 0.1}, [0.24861214466302803, -0.9548286705586206, 1.858828043363247, 0.24013792458780645]),
    ('Adam', {'lr': 0.1, 'betas': (0.9, 0.5), 'amsgrad': True}, [0.28202091057446105, -1.001166361166802, 1.962339524316616, 0.2734461780979759]),
    ('Adam', {'lr': 0.1, 'maximize': True}, [0.7363228217444996, -0.9748190474530676, 2.0268784019221324, 0.24267873330210196]),
    ('AdamW', {'lr': 0.1}, [0.26217695229113097, -1.021391831271087, 1.965327072264921, 0.2561395920736486]),
    ('AdamW', {'lr': 0.1, 'betas': (0.9, 0.5), 'weight_decay': 0.5, 'amsgrad': True}, [0.21199612657029993, -0.8258488150617299, 1.601017546425855, 0.2177986506381203]),
    ('Adam', {'lr': 0.1, 'betas': (0.9, 0.5)}, [0.2697204961766164, -1.015100606729341, 1.9741549646605847, 0.25037024535754665]),
    ('AdamW', {'lr': 0.1, 'betas': (0.5, 0.6), 'maximize': True}, [0.6927903364512583, -0.9234592043052922, 2.0149184854212234, 0.2553480792357223]),
    ('RMSprop', {'lr': 0.1}, [-1.0566713345514802, -1.5922092855272114, 1.6268826696682568, 0.46052846096436373]),
    ('RMSprop', {'lr': 0.1, 'alpha': 0.9, 'eps': 0.0001, 'weight_decay': 0.1}, [0.014405316149347938, -1.036551190701881, 1.686751818603095, 0.29488103962981244]),
    ('RMSprop', {'lr': 0.1, 'momentum': 0.9}, [-4.714630928731351, -1.2863631337589307, 0.5592039296796784, 1.3944145751376964]),
    ('RMSprop', {'lr': 0.1, 'centered': True}, [-1.0680618189003308, -1.5910839978953522, 1.6231853077776135, 0.4642395248841501]),
    ('RMSprop', {'lr': 0.1, 'momentum': 0.5, 'centered': True, 'maximize': True}, [3.4333317706107076, -0.2575928911610832, 2.6791559035850754, -0.19224689482744342]),
    ('Adagrad', {'lr': 0.1}, [0.34422966861603155, -1.0589802798582042, 1.9628163969498875, 0.2710149051296303]),
    ('Adagrad', {'lr': 0.1, 'lr_decay': 0.5, 'weight_decay': 0.1}, [0.35175856068149275, -0.9635121715981549, 1.9154483943290046, 0.29131016593385883]),
    ('Adagrad', {'lr': 0.1, 'initial_accumulator_value': 0.5, 'eps': 0.001}, [0.45582342815361565, -1.0609975238175797, 2.0079233586393763, 0.2332166915835933]),
    ('Adagrad', {'lr': 0.1, 'maximize': True}, [0.6557703313839685, -0.9410197201417956, 2.0371836030501123, 0.22898509487036972]),
]


def param(values=P0, dtype=graft.float64):
    return graft.tensor(values, dtype=dtype, requires_grad=True)


def run_steps(opt, p, grads=GRADS, dtype=graft.float64):
    for g in grads:
        p.grad = graft.tensor(g, dtype=dtype)
        opt.step()


@pytest.mark.parametrize("name,options,expected", CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_values_match_torch(name, options, expected):
    p = param()
    opt = getattr(optim, name)([p], **options)
    run_steps(opt, p)
    assert p.tolist() == pytest.approx(expected, rel=1e-12, abs=1e-15)


def test_float32_values_match_torch():
    p = param(dtype=graft.float32)
    opt = optim.Adam([p], lr=0.1, betas=(0.9, 0.5), amsgrad=True)
    run_steps(opt, p, dtype=graft.float32)
    assert p.tolist() == pytest.approx([0.2820209264755249, -1.0011663436889648, 1.9623394012451172,
                                        0.2734461724758148], rel=2e-7)
    q = param(dtype=graft.float32)
    opt = optim.RMSprop([q], lr=0.01, momentum=0.9, centered=True)
    run_steps(opt, q, dtype=graft.float32)
    assert q.tolist() == pytest.approx([-0.024943901225924492, -1.0276813507080078, 1.8545628786087036,
                                        0.3657994568347931], rel=2e-7)
    assert p.dtype == graft.float32 and opt.state[q]["square_avg"].dtype == graft.float32


def test_defaults_and_group_keys():
    p = param()
    assert optim.SGD([p]).param_groups[0]["lr"] == 1e-3
    assert optim.Adam([p]).defaults == dict(lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False,
                                            maximize=False, foreach=None, capturable=False, differentiable=False,
                                            fused=None)
    assert optim.AdamW([p]).defaults["weight_decay"] == 1e-2
    assert optim.RMSprop([p]).defaults["lr"] == 1e-2 and optim.RMSprop([p]).defaults["alpha"] == 0.99
    assert optim.Adagrad([p]).defaults["eps"] == 1e-10
    group = optim.SGD([p], lr=0.1, momentum=0.9).param_groups[0]
    assert set(group) == {"params", "lr", "momentum", "dampening", "weight_decay", "nesterov", "maximize", "foreach",
                          "differentiable", "fused"}
    assert group["params"][0] is p


def test_sgd_momentum_state():
    p = param()
    opt = optim.SGD([p], lr=0.1, momentum=0.9)
    run_steps(opt, p)
    assert list(opt.state[p]) == ["momentum_buffer"]
    assert opt.state[p]["momentum_buffer"].tolist() == pytest.approx([0.2579, 0.5467, -0.1588, 0.3784], rel=1e-12)


def test_sgd_without_momentum_keeps_no_state():
    p = param()
    opt = optim.SGD([p], lr=0.1)
    run_steps(opt, p)
    assert len(opt.state) == 0
    assert opt.state_dict()["state"] == {}


def test_adam_state():
    p = param()
    opt = optim.Adam([p], lr=0.1)
    run_steps(opt, p)
    st = opt.state[p]
    assert list(st) == ["step", "exp_avg", "exp_avg_sq"]
    assert st["step"].dim() == 0 and st["step"].dtype == graft.float32 and st["step"].item() == 4.0
    assert st["exp_avg"].tolist() == pytest.approx([0.02579, 0.05467, -0.01588, 0.03784], rel=1e-12)
    assert st["exp_avg_sq"].tolist() == pytest.approx(
        [0.0003518802799900003, 0.0004643951824600004, 0.0006935658324100007, 0.001170011479840001], rel=1e-12)
    ams = optim.Adam([param()], amsgrad=True)
    q = ams.param_groups[0]["params"][0]
    run_steps(ams, q, GRADS[:1])
    assert list(ams.state[q]) == ["step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"]


def test_rmsprop_and_adagrad_state():
    p = param()
    opt = optim.RMSprop([p], momentum=0.5, centered=True)
    run_steps(opt, p, GRADS[:2])
    assert sorted(opt.state[p]) == ["grad_avg", "momentum_buffer", "square_avg", "step"]
    assert opt.state[p]["step"].item() == 2.0
    q = param()
    ada = optim.Adagrad([q], initial_accumulator_value=0.25)
    # Adagrad creates its state in the constructor, as PyTorch's.
    assert ada.state[q]["step"].item() == 0.0 and ada.state[q]["sum"].tolist() == [0.25] * 4
    run_steps(ada, q, GRADS[:1])
    assert ada.state[q]["sum"].tolist() == pytest.approx([0.26, 0.29, 0.34, 0.41], rel=1e-12)


def test_optional_buffers_made_when_an_option_turns_them_on():
    # PyTorch's order of the state entries, and buffers made at the first step that needs them
    # (an option switched on later) without touching the others.
    p = param()
    opt = optim.RMSprop([p], lr=0.01)
    run_steps(opt, p, GRADS[:1])
    assert list(opt.state[p]) == ["step", "square_avg"]
    square_avg = opt.state[p]["square_avg"]
    opt.param_groups[0]["centered"] = True
    opt.param_groups[0]["momentum"] = 0.5
    run_steps(opt, p, GRADS[1:2])
    assert list(opt.state[p]) == ["step", "square_avg", "momentum_buffer", "grad_avg"]
    assert opt.state[p]["square_avg"] is square_avg and opt.state[p]["step"].item() == 2.0
    q = param()
    adam = optim.Adam([q], lr=0.1)
    run_steps(adam, q, GRADS[:1])
    adam.param_groups[0]["amsgrad"] = True
    run_steps(adam, q, GRADS[1:2])
    assert list(adam.state[q]) == ["step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"]
    assert adam.state[q]["step"].item() == 2.0


def test_state_is_tagged_optimizer_state():
    p = param()
    opt = optim.Adam([p], amsgrad=True)
    run_steps(opt, p, GRADS[:1])
    for t in opt.state[p].values():
        assert graft._C._optim.memory_category(t) == "optimizer_state"
    sgd = optim.SGD([p], lr=0.1, momentum=0.9)
    run_steps(sgd, p, GRADS[:1])
    assert graft._C._optim.memory_category(sgd.state[p]["momentum_buffer"]) == "optimizer_state"


def test_param_groups_with_own_options():
    a, b = param(), param([1.0, -2.0])
    opt = optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.01, "momentum": 0}], lr=0.1, momentum=0.9)
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.01]
    assert [g["momentum"] for g in opt.param_groups] == [0.9, 0]
    for g in GRADS:
        a.grad = graft.tensor(g, dtype=graft.float64)
        b.grad = graft.tensor(g[:2], dtype=graft.float64)
        opt.step()
    assert a.tolist() == pytest.approx([0.38211, -1.10797, 2.05708, 0.14056], rel=1e-12)
    assert b.tolist() == pytest.approx([0.9965, -2.006], rel=1e-12)
    assert list(opt.state) == [a]  # no momentum in the second group: no state there


def test_lr_change_takes_effect_on_next_step():
    p = param()
    opt = optim.SGD([p], lr=0.1, momentum=0.9)
    for i, g in enumerate(GRADS):
        if i == 2:
            opt.param_groups[0]["lr"] = 0.5
        p.grad = graft.tensor(g, dtype=graft.float64)
        opt.step()
    assert p.tolist() == pytest.approx([0.18655, -1.59185, 2.2134, -0.2012], rel=1e-12)
    opt.param_groups[0]["lr"] = 0.0
    before = p.tolist()
    opt.step()
    assert p.tolist() == before


def test_generator_of_parameters_and_tensor_lr():
    a, b = param(), param([3.0])
    opt = optim.SGD((t for t in [a, b]), lr=graft.tensor(0.5))
    assert opt.param_groups[0]["params"] == [a, b]
    a.grad = graft.ones(4, dtype=graft.float64)
    opt.step()
    assert a.tolist() == [0.0, -1.5, 1.5, -0.25]
    assert b.tolist() == [3.0] and b not in opt.state  # no gradient: skipped, no state


def test_add_param_group():
    a, b = param(), param([1.0])
    opt = optim.Adam([a], lr=0.1)
    opt.add_param_group({"params": b, "lr": 0.5})
    assert opt.param_groups[1]["params"] == [b] and opt.param_groups[1]["lr"] == 0.5
    assert opt.param_groups[1]["betas"] == (0.9, 0.999)
    with pytest.raises(ValueError, match="^some parameters appear in more than one parameter group$"):
        opt.add_param_group({"params": [a]})
    with pytest.raises(TypeError, match="^param_group must be a dict, but got list$"):
        opt.add_param_group([a])
    assert len(opt.param_groups) == 2
    c = param([2.0])
    ada = optim.Adagrad([a], lr=0.1)
    ada.add_param_group({"params": [c]})
    c.grad = graft.tensor([0.5], dtype=graft.float64)
    ada.step()
    assert c.tolist() == pytest.approx([2.0 - 0.1 * 0.5 / (0.5 + 1e-10)], rel=1e-15)  # its state made lazily


def test_construction_errors():
    p = param()
    cases = [
        (lambda: optim.SGD([p], lr=-1.0), ValueError, "Invalid learning rate: -1.0"),
        (lambda: optim.SGD([p], lr=0.1, momentum=-0.5), ValueError, "Invalid momentum value: -0.5"),
        (lambda: optim.SGD([p], weight_decay=-1e-05), ValueError, "Invalid weight_decay value: -1e-05"),
        (lambda: optim.SGD([p], lr=0.1, nesterov=True), ValueError,
         "Nesterov momentum requires a momentum and zero dampening"),
        (lambda: optim.SGD([p], lr=0.1, momentum=0.9, dampening=0.1, nesterov=True), ValueError,
         "Nesterov momentum requires a momentum and zero dampening"),
        (lambda: optim.Adam([p], lr=-1), ValueError, "Invalid learning rate: -1"),
        (lambda: optim.Adam([p], eps=-1.0), ValueError, "Invalid epsilon value: -1.0"),
        (lambda: optim.Adam([p], betas=(1.0, 0.999)), ValueError, "Invalid beta parameter at index 0: 1.0"),
        (lambda: optim.AdamW([p], betas=(0.9, -0.1)), ValueError, "Invalid beta parameter at index 1: -0.1"),
        (lambda: optim.AdamW([p], weight_decay=-0.01), ValueError, "Invalid weight_decay value: -0.01"),
        (lambda: optim.RMSprop([p], alpha=-0.5), ValueError, "Invalid alpha value: -0.5"),
        (lambda: optim.RMSprop([p], momentum=-1.0), ValueError, "Invalid momentum value: -1.0"),
        (lambda: optim.Adagrad([p], lr_decay=-1.0), ValueError, "Invalid lr_decay value: -1.0"),
        (lambda: optim.Adagrad([p], initial_accumulator_value=-1.0), ValueError,
         "Invalid initial_accumulator_value value: -1.0"),
        (lambda: optim.Adagrad([p], eps=-1.0), ValueError, "Invalid epsilon value: -1.0"),
        (lambda: optim.SGD([], lr=0.1), ValueError, "optimizer got an empty parameter list"),
        (lambda: optim.SGD(p, lr=0.1), TypeError, "params argument given to the optimizer should be an iterable "
                                                  "of Tensors or dicts, but got graft.DoubleTensor"),
        (lambda: optim.SGD([p, 1.5], lr=0.1), TypeError, "optimizer can only optimize Tensors, but one of the "
                                                         "params is float"),
        (lambda: optim.SGD([p * 2], lr=0.1), ValueError, "can't optimize a non-leaf Tensor"),
        (lambda: optim.SGD([{"params": {p}}], lr=0.1), TypeError, "optimizer parameters need to be organized in ordered "
                                                    "collections, but the ordering of tensors in sets will change "
                                                    "between runs. Please use a list instead."),
        (lambda: optim.SGD([{"params": [p]}, {"params": [p]}], lr=0.1), ValueError,
         "some parameters appear in more than one parameter group"),
        (lambda: optim.Adam([p], differentiable=True), NotImplementedError,
         "graft.optim does not support differentiable=True"),
    ]
    for fn, exc, msg in cases:
        with pytest.raises(exc, match="^" + re.escape(msg)):
            fn()


def test_duplicate_parameter_warns():
    p = param()
    with pytest.warns(UserWarning, match=re.escape("optimizer contains a parameter group with duplicate parameters; "
                                                   "in future, this will cause an error; see "
                                                   "github.com/pytorch/pytorch/issues/40967 for more information")):
        optim.SGD([p, p], lr=0.1)


def test_required_option():
    p = param()

    class NeedsLr(optim.Optimizer):
        def __init__(self, params, lr=optim.optimizer.required):
            super().__init__(params, dict(lr=lr))

    with pytest.raises(ValueError, match="^parameter group didn't specify a value of required optimization "
                                         "parameter lr$"):
        NeedsLr([p])
    assert NeedsLr([{"params": [p], "lr": 0.5}]).param_groups[0]["lr"] == 0.5


def test_zero_grad():
    p = param()
    opt = optim.SGD([p], lr=0.1)
    p.grad = graft.ones(4, dtype=graft.float64)
    opt.zero_grad()
    assert p.grad is None  # set_to_none=True is the default (PyTorch 2.x)
    p.grad = graft.ones(4, dtype=graft.float64)
    g = p.grad
    opt.zero_grad(set_to_none=False)
    assert p.grad is g and g.tolist() == [0.0] * 4


def test_step_with_closure_returns_loss():
    p = param([1.0, 2.0])
    opt = optim.SGD([p], lr=0.1)
    calls = []

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        calls.append(graft.is_grad_enabled())
        loss.backward()
        return loss

    with graft.no_grad():
        loss = opt.step(closure)
    assert calls == [True]  # the closure runs with grad enabled
    assert loss.detach().item() == 5.0
    assert p.tolist() == pytest.approx([0.8, 1.6], rel=1e-12)
    assert opt.step() is None


def test_parameters_without_grad_are_skipped():
    a, b = param(), param([1.0])
    opt = optim.Adam([a, b], lr=0.1)
    a.grad = graft.ones(4, dtype=graft.float64)
    opt.step()
    assert b.tolist() == [1.0] and b not in opt.state and a in opt.state


def test_non_contiguous_parameter():
    base = graft.tensor([[0.5, -1.0], [2.0, 0.25]], dtype=graft.float64)
    p = base.t().contiguous().t().detach().requires_grad_(True)  # a transposed (non-contiguous) leaf
    assert not p.is_contiguous()
    q = param([0.5, -1.0, 2.0, 0.25])
    opt_p = optim.Adam([p], lr=0.1, amsgrad=True, weight_decay=0.1)
    opt_q = optim.Adam([q], lr=0.1, amsgrad=True, weight_decay=0.1)
    for g in GRADS:
        p.grad = graft.tensor(g, dtype=graft.float64).reshape(2, 2)
        q.grad = graft.tensor(g, dtype=graft.float64)
        opt_p.step()
        opt_q.step()
    assert p.reshape(4).tolist() == q.tolist()
    assert opt_p.state[p]["exp_avg"].reshape(4).tolist() == opt_q.state[q]["exp_avg"].tolist()


def test_step_version_counter_and_no_graph():
    p = param()
    opt = optim.SGD([p], lr=0.1)
    v = p._version
    p.grad = graft.ones(4, dtype=graft.float64)
    opt.step()
    assert p._version > v
    assert p.is_leaf and p.grad_fn is None and p.requires_grad


def test_state_dict_format():
    a, b = param(), param([1.0, 2.0])
    opt = optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.5}], lr=0.1, momentum=0.9)
    a.grad = graft.ones(4, dtype=graft.float64)
    b.grad = graft.ones(2, dtype=graft.float64)
    opt.step()
    sd = opt.state_dict()
    assert list(sd) == ["state", "param_groups"]
    assert list(sd["state"]) == [0, 1]
    assert sd["state"][0]["momentum_buffer"] is opt.state[a]["momentum_buffer"]
    assert sd["param_groups"] == [
        dict(lr=0.1, momentum=0.9, dampening=0, weight_decay=0, nesterov=False, maximize=False, foreach=None,
             differentiable=False, fused=None, params=[0]),
        dict(lr=0.5, momentum=0.9, dampening=0, weight_decay=0, nesterov=False, maximize=False, foreach=None,
             differentiable=False, fused=None, params=[1]),
    ]


def test_load_state_dict_resumes_exactly():
    p = param()
    opt = optim.Adam([p], lr=0.1, amsgrad=True)
    run_steps(opt, p, GRADS[:2])
    sd = opt.state_dict()
    q = param(p.tolist())
    opt2 = optim.Adam([q], lr=0.5)
    opt2.load_state_dict(sd)
    assert opt2.param_groups[0]["lr"] == 0.1 and opt2.param_groups[0]["params"][0] is q
    assert opt2.state[q]["step"].item() == 2.0
    run_steps(opt, p, GRADS[2:])
    run_steps(opt2, q, GRADS[2:])
    assert q.tolist() == p.tolist()


def test_load_state_dict_casts_to_parameter_dtype():
    p = param()
    opt = optim.Adam([p], lr=0.1)
    run_steps(opt, p, GRADS[:1])
    q = param(dtype=graft.float32)
    opt2 = optim.Adam([q])
    opt2.load_state_dict(opt.state_dict())
    assert opt2.state[q]["exp_avg"].dtype == graft.float32
    assert opt2.state[q]["step"].dtype == graft.float32  # 'step' keeps its own dtype
    assert graft._C._optim.memory_category(opt2.state[q]["exp_avg"]) == "optimizer_state"


def test_load_state_dict_errors_change_nothing():
    a, b = param(), param([1.0])
    opt = optim.SGD([a, b], lr=0.1, momentum=0.9)
    two_groups = optim.SGD([{"params": [a]}, {"params": [b]}], lr=0.2).state_dict()
    with pytest.raises(ValueError, match="^loaded state dict has a different number of parameter groups$"):
        opt.load_state_dict(two_groups)
    one_param = optim.SGD([a], lr=0.3).state_dict()
    with pytest.raises(ValueError, match="^loaded state dict contains a parameter group that doesn't match the "
                                         "size of optimizer's group$"):
        opt.load_state_dict(one_param)
    assert opt.param_groups[0]["lr"] == 0.1 and len(opt.state) == 0


def test_load_state_dict_converts_number_steps():
    p = param()
    opt = optim.RMSprop([p], lr=0.1)
    sd = {"state": {0: {"step": 3, "square_avg": graft.full((4,), 0.5, dtype=graft.float64)}},
          "param_groups": [dict(lr=0.1, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                                params=[0])]}
    opt.load_state_dict(sd)  # a state dict of PyTorch 1.13 (int step, fewer group keys)
    assert opt.state[p]["step"].item() == 3.0 and opt.param_groups[0]["maximize"] is False
    p.grad = graft.ones(4, dtype=graft.float64)
    opt.step()
    assert opt.state[p]["step"].item() == 4.0


def test_repr():
    opt = optim.SGD([param()], lr=0.1)
    group = ("    dampening: 0\n    differentiable: False\n    foreach: None\n    fused: None\n    lr: {}\n"
             "    maximize: False\n    momentum: 0\n    nesterov: False\n    weight_decay: 0\n")
    assert repr(opt) == "SGD (\nParameter Group 0\n" + group.format(0.1) + ")"
    opt.add_param_group({"params": [param([1.0])], "lr": 0.5})
    assert repr(opt) == ("SGD (\nParameter Group 0\n" + group.format(0.1) + "\nParameter Group 1\n" + group.format(0.5)
                         + ")")
