"""graft.optim.lr_scheduler: learning-rate sequences against torch 1.13 (written in below),
param_groups bookkeeping (initial_lr, momentum cycling), state dicts, warnings and errors."""
import re
import warnings

import pytest

import graft
from graft import optim
from graft.optim import lr_scheduler as L


def make_optimizer():
    a = graft.zeros(2, requires_grad=True)
    b = graft.zeros(1, requires_grad=True)
    return optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.01}], lr=0.1, momentum=0.9)


# (scheduler, options, get_last_lr() after construction and after each of 11 steps), from torch 1.13.
SEQUENCES = [
    ('StepLR', dict(step_size=3, gamma=0.5), [[0.1, 0.01], [0.1, 0.01], [0.1, 0.01], [0.05, 0.005], [0.05, 0.005], [0.05, 0.005], [0.025, 0.0025], [0.025, 0.0025], [0.025, 0.0025], [0.0125, 0.00125], [0.0125, 0.00125], [0.0125, 0.00125]]),
    ('MultiStepLR', dict(milestones=[2, 5, 5, 8], gamma=0.1), [[0.1, 0.01], [0.1, 0.01], [0.010000000000000002, 0.001], [0.010000000000000002, 0.001], [0.010000000000000002, 0.001], [0.00010000000000000005, 1.0000000000000003e-05], [0.00010000000000000005, 1.0000000000000003e-05], [0.00010000000000000005, 1.0000000000000003e-05], [1.0000000000000006e-05, 1.0000000000000004e-06], [1.0000000000000006e-05, 1.0000000000000004e-06], [1.0000000000000006e-05, 1.0000000000000004e-06], [1.0000000000000006e-05, 1.0000000000000004e-06]]),
    ('ExponentialLR', dict(gamma=0.9), [[0.1, 0.01], [0.09000000000000001, 0.009000000000000001], [0.08100000000000002, 0.008100000000000001], [0.07290000000000002, 0.007290000000000001], [0.06561000000000002, 0.006561000000000002], [0.05904900000000002, 0.005904900000000002], [0.05314410000000002, 0.005314410000000002], [0.04782969000000002, 0.004782969000000002], [0.043046721000000024, 0.004304672100000002], [0.03874204890000002, 0.003874204890000002], [0.03486784401000002, 0.003486784401000002], [0.03138105960900001, 0.003138105960900002]]),
    ('CosineAnnealingLR', dict(T_max=4, eta_min=0.001), [[0.1, 0.01], [0.0855017856687341, 0.008681980515339464], [0.0505, 0.0055000000000000005], [0.0154982143312659, 0.0023180194846605367], [0.001, 0.001], [0.015498214331265896, 0.002318019484660536], [0.05050000000000001, 0.0055000000000000005], [0.08550178566873413, 0.008681980515339466], [0.10000000000000003, 0.010000000000000002], [0.08550178566873413, 0.008681980515339464], [0.05050000000000003, 0.005500000000000001], [0.015498214331265945, 0.00231801948466054]]),
    ('LinearLR', dict(start_factor=0.25, end_factor=1.0, total_iters=4), [[0.025, 0.0025], [0.043750000000000004, 0.004375], [0.06250000000000001, 0.00625], [0.08125000000000002, 0.008125], [0.10000000000000002, 0.01], [0.10000000000000002, 0.01], [0.10000000000000002, 0.01], [0.10000000000000002, 0.01], [0.10000000000000002, 0.01], [0.10000000000000002, 0.01], [0.10000000000000002, 0.01], [0.10000000000000002, 0.01]]),
    ('OneCycleLR', dict(max_lr=[1.0, 0.1], total_steps=12), [[0.040000000000000036, 0.0040000000000000036], [0.3497896542195831, 0.0349789654219583], [0.8792851591221287, 0.08792851591221287], [0.9944154354509117, 0.09944154354509119], [0.9330129698414117, 0.09330129698414118], [0.811745653949763, 0.0811745653949763], [0.6473789976951033, 0.06473789976951033], [0.46263710266697505, 0.046263710266697504], [0.28306099820869923, 0.028306099820869922], [0.1334775301888306, 0.01334775301888306], [0.03456698742539522, 0.0034566987425395223], [4e-06, 4e-07]]),
    ('OneCycleLR', dict(max_lr=1.0, total_steps=12, anneal_strategy='linear', three_phase=True, pct_start=0.25), [[0.04, 0.04], [0.52, 0.52], [1.0, 1.0], [0.52, 0.52], [0.040000000000000036, 0.040000000000000036], [0.034286285714285714, 0.034286285714285714], [0.02857257142857143, 0.02857257142857143], [0.022858857142857143, 0.022858857142857143], [0.01714514285714286, 0.01714514285714286], [0.011431428571428568, 0.011431428571428568], [0.005717714285714284, 0.005717714285714284], [3.9999999999970615e-06, 3.9999999999970615e-06]]),
]


def assert_close_rows(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g == pytest.approx(w, rel=1e-12, abs=1e-18)


def lr_sequence(optimizer, scheduler, steps=11):
    lrs = [scheduler.get_last_lr()]
    for _ in range(steps):
        optimizer.step()
        scheduler.step()
        lrs.append(scheduler.get_last_lr())
    return lrs


@pytest.mark.parametrize("name,options,expected", SEQUENCES, ids=[f"{s[0]}-{s[1]}" for s in SEQUENCES])
def test_sequences_match_torch(name, options, expected):
    opt = make_optimizer()
    sched = getattr(L, name)(opt, **options)
    lrs = lr_sequence(opt, sched)
    assert_close_rows(lrs, expected)
    assert [g["lr"] for g in opt.param_groups] == lrs[-1]


def test_epochs_that_keep_the_lr_keep_the_value_itself():
    # As PyTorch's: an epoch without a change returns group["lr"] as it is (an int lr stays an
    # int), an epoch with one multiplies it.
    cases = [("StepLR", dict(step_size=2, gamma=0.5), [1, 1, 0.5], [int, int, float]),
             ("MultiStepLR", dict(milestones=[2]), [1, 1, 0.1], [int, int, float]),
             ("ExponentialLR", dict(gamma=0.5), [1, 0.5, 0.25], [int, float, float]),
             ("LinearLR", dict(start_factor=1.0, total_iters=1), [1, 1, 1], [float, float, float])]
    for name, options, values, types in cases:
        opt = optim.SGD([graft.zeros(1, requires_grad=True)], lr=1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # stepping the scheduler alone warns about the order
            sched = getattr(L, name)(opt, **options)
            lrs = [sched.get_last_lr()[0]]
            for _ in range(2):
                sched.step()
                lrs.append(sched.get_last_lr()[0])
        assert lrs == values and [type(lr) for lr in lrs] == types, name


def test_one_cycle_cycles_momentum_and_betas():
    opt = make_optimizer()
    sched = L.OneCycleLR(opt, max_lr=[1.0, 0.1], total_steps=12)
    assert opt.param_groups[0]["momentum"] == 0.95
    assert opt.param_groups[0]["max_lr"] == 1.0 and opt.param_groups[1]["initial_lr"] == pytest.approx(0.004)
    moms = []
    for _ in range(3):
        opt.step()
        sched.step()
        moms.append(opt.param_groups[1]["momentum"])
    assert moms == pytest.approx([0.9177302443521267, 0.8625744625914449, 0.8505584586887436], rel=1e-12)
    adam = optim.Adam([graft.zeros(1, requires_grad=True)], betas=(0.9, 0.99))
    L.OneCycleLR(adam, max_lr=0.5, total_steps=10)
    assert adam.param_groups[0]["betas"] == (0.95, 0.99)
    with pytest.raises(ValueError, match="^Tried to step 13 times. The specified number of total steps is 12$"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the epoch argument is deprecated
            sched.step(13)


def test_lambda_lr_and_chaining():
    opt = make_optimizer()
    sched = L.LambdaLR(opt, [lambda e: 0.5 ** e, lambda e: 1.0 / (e + 1)])
    assert_close_rows(lr_sequence(opt, sched, 5),
                      [[0.1, 0.01], [0.05, 0.005], [0.025, 0.003333333333333333], [0.0125, 0.0025],
                       [0.00625, 0.002], [0.003125, 0.0016666666666666666]])
    opt = make_optimizer()
    s1, s2 = L.ExponentialLR(opt, gamma=0.9), L.StepLR(opt, step_size=2, gamma=0.1)
    lrs = []
    for _ in range(5):
        opt.step()
        s1.step()
        s2.step()
        lrs.append([g["lr"] for g in opt.param_groups])
    assert_close_rows(lrs, [[0.09, 0.009], [0.0081, 0.00081], [0.00729, 0.000729], [0.0006561, 6.561e-05],
                            [0.00059049, 5.9049e-05]])


def test_epoch_argument_uses_closed_form_with_warning():
    opt = make_optimizer()
    sched = L.StepLR(opt, step_size=3, gamma=0.5)
    with pytest.warns(UserWarning, match=re.escape("The epoch parameter in `scheduler.step()` was not necessary")):
        sched.step(7)
    assert sched.get_last_lr() == [0.025, 0.0025] and sched.last_epoch == 7
    opt = make_optimizer()
    sched = L.CosineAnnealingLR(opt, T_max=4, eta_min=0.001)
    with pytest.warns(UserWarning):
        sched.step(3)
    assert sched.get_last_lr() == pytest.approx([0.0154982143312659, 0.0023180194846605367], rel=1e-12)


def test_initial_lr_and_resume():
    opt = make_optimizer()
    with pytest.raises(KeyError, match=re.escape("param 'initial_lr' is not specified in param_groups[0] when "
                                                 "resuming an optimizer")):
        L.StepLR(opt, step_size=2, last_epoch=3)
    L.StepLR(opt, step_size=2)
    assert [g["initial_lr"] for g in opt.param_groups] == [0.1, 0.01]
    opt.param_groups[0]["lr"] = 0.5
    L.ExponentialLR(opt, gamma=0.5)  # a second scheduler keeps the first one's initial_lr
    assert opt.param_groups[0]["initial_lr"] == 0.1


def test_order_warning():
    opt = make_optimizer()
    sched = L.StepLR(opt, step_size=2)
    with pytest.warns(UserWarning, match=re.escape("Detected call of `lr_scheduler.step()` before "
                                                   "`optimizer.step()`. In PyTorch 1.1.0 and later")):
        sched.step()
    opt = make_optimizer()
    sched = L.StepLR(opt, step_size=2)
    opt.step()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sched.step()
        sched.step()
    assert opt.step.__doc__ == optim.SGD.step.__doc__


def test_get_lr_outside_step_warns():
    opt = make_optimizer()
    sched = L.StepLR(opt, step_size=2)
    with pytest.warns(UserWarning, match=re.escape("To get the last learning rate computed by the scheduler, please "
                                                   "use `get_last_lr()`.")):
        assert sched.get_lr() == [0.1, 0.01]


def test_state_dict_round_trip():
    opt = make_optimizer()
    sched = L.CosineAnnealingLR(opt, T_max=5)
    for _ in range(3):
        opt.step()
        sched.step()
    sd = sched.state_dict()
    assert "optimizer" not in sd and sd["last_epoch"] == 3 and sd["T_max"] == 5 and sd["base_lrs"] == [0.1, 0.01]
    opt2 = make_optimizer()
    opt2.load_state_dict(opt.state_dict())
    sched2 = L.CosineAnnealingLR(opt2, T_max=5)
    sched2.load_state_dict(sd)
    opt.step()
    opt2.step()
    sched.step()
    sched2.step()
    assert sched2.get_last_lr() == sched.get_last_lr()
    assert [g["lr"] for g in opt2.param_groups] == sched.get_last_lr()


def test_lambda_lr_state_dict():
    class Scale:
        def __init__(self, factor):
            self.factor = factor

        def __call__(self, epoch):
            return self.factor ** epoch

    opt = make_optimizer()
    sched = L.LambdaLR(opt, [lambda e: 1.0, Scale(0.5)])
    sd = sched.state_dict()
    assert sd["lr_lambdas"] == [None, {"factor": 0.5}]
    other = L.LambdaLR(make_optimizer(), [lambda e: 1.0, Scale(0.9)])
    other.load_state_dict(sd)
    assert other.lr_lambdas[1].factor == 0.5
    with pytest.raises(ValueError, match="^Expected 2 lr_lambdas, but got 1$"):
        L.LambdaLR(make_optimizer(), [lambda e: 1.0])


def test_constructor_errors():
    opt = make_optimizer()
    cases = [
        (lambda: L.StepLR(object(), step_size=1), TypeError, "object is not an Optimizer"),
        (lambda: L.LinearLR(opt, start_factor=0), ValueError,
         "Starting multiplicative factor expected to be greater than 0 and less or equal to 1."),
        (lambda: L.LinearLR(opt, end_factor=1.5), ValueError,
         "Ending multiplicative factor expected to be between 0 and 1."),
        (lambda: L.OneCycleLR(opt, max_lr=1.0), ValueError,
         "You must define either total_steps OR (epochs AND steps_per_epoch)"),
        (lambda: L.OneCycleLR(opt, max_lr=1.0, total_steps=0), ValueError,
         "Expected positive integer total_steps, but got 0"),
        (lambda: L.OneCycleLR(opt, max_lr=1.0, epochs=2, steps_per_epoch=-1), ValueError,
         "Expected positive integer steps_per_epoch, but got -1"),
        (lambda: L.OneCycleLR(opt, max_lr=1.0, total_steps=5, pct_start=2.0), ValueError,
         "Expected float between 0 and 1 pct_start, but got 2.0"),
        (lambda: L.OneCycleLR(opt, max_lr=1.0, total_steps=5, anneal_strategy="exp"), ValueError,
         "anneal_strategy must be one of 'cos' or 'linear', instead got exp"),
        (lambda: L.OneCycleLR(opt, max_lr=[1.0], total_steps=5), ValueError,
         "max_lr must have the same length as optimizer.param_groups. max_lr has 1 values, param_groups has 2."),
        (lambda: L.OneCycleLR(optim.Adagrad([graft.zeros(1, requires_grad=True)]), max_lr=1.0, total_steps=5),
         ValueError, "optimizer must support momentum or beta1 with `cycle_momentum` option enabled"),
        (lambda: L.ReduceLROnPlateau(opt, factor=1.0), ValueError, "Factor should be < 1.0."),
        (lambda: L.ReduceLROnPlateau(opt, mode="avg"), ValueError, "mode avg is unknown!"),
        (lambda: L.ReduceLROnPlateau(opt, threshold_mode="x"), ValueError, "threshold mode x is unknown!"),
        (lambda: L.ReduceLROnPlateau(opt, min_lr=[0.1]), ValueError, "expected 2 min_lrs, got 1"),
    ]
    for fn, exc, msg in cases:
        with pytest.raises(exc, match="^" + re.escape(msg) + "$"):
            fn()


def test_reduce_lr_on_plateau():
    opt = make_optimizer()
    sched = L.ReduceLROnPlateau(opt, mode="min", factor=0.5, patience=1, cooldown=1, min_lr=[0.02, 0.0])
    history = []
    for metric in [1.0, 0.9, 0.95, 0.95, 0.95, 0.95, 0.8, 0.85, 0.85, 0.85]:
        sched.step(metric)
        history.append([g["lr"] for g in opt.param_groups])
    assert history == [[0.1, 0.01], [0.1, 0.01], [0.1, 0.01], [0.05, 0.005], [0.05, 0.005], [0.05, 0.005],
                       [0.05, 0.005], [0.05, 0.005], [0.025, 0.0025], [0.025, 0.0025]]
    assert sched.get_last_lr() == [0.025, 0.0025]
    sd = sched.state_dict()
    assert sd["best"] == 0.8 and "optimizer" not in sd
    again = L.ReduceLROnPlateau(make_optimizer(), mode="max")
    again.load_state_dict(sd)
    assert again.mode == "min" and again.mode_worse == float("inf")
    floor = L.ReduceLROnPlateau(make_optimizer(), factor=0.1, patience=0, min_lr=0.05)
    floor.step(1.0)
    floor.step(2.0)
    assert [g["lr"] for g in floor.optimizer.param_groups] == [0.05, 0.01]  # never below min_lr, never raised
