"""Where graft.doctor's steps end when nobody says: at each optimizer step; without an
optimizer, after each iteration that ran backward; in a forward-only loop under grad mode (an
evaluation in eval mode, or a script that never calls backward), at each forward. A program that
calls dr.step() itself keeps its own steps. The loops are in doctor_fixtures.py."""
import graft
import graft.doctor as doctor

import doctor_fixtures as fx


def watched(fn, **opts):
    with doctor.watch(**opts) as dr:
        fn()
    return dr


def ids(dr):
    return [f.id for f in dr.findings]


def test_a_loop_without_an_optimizer_makes_a_step_per_iteration_that_ran_backward():
    dr = watched(lambda: fx.manual_sgd(9))
    assert dr.steps == 9 and dr.findings == []
    assert dr.verdict[0].startswith("No findings: nothing grows")


def test_a_running_total_without_an_optimizer_is_ld001_at_step_5():
    dr = watched(lambda: fx.manual_sgd(9, leak=True))
    assert ids(dr) == ["LD001"], dr.report()
    f = dr.findings[0]
    assert f.step == 5 and f.line == fx.line_of("LD001 manual")
    assert f.holders[0].path == "state['total']"


def test_raw_tensors_and_backward_alone_make_steps():
    dr = watched(lambda: fx.raw_tensors(8))
    assert dr.steps == 8 and dr.findings == []
    dr = watched(lambda: fx.raw_tensors(8, leak=True))
    assert ids(dr) == ["LD001"], dr.report()
    assert dr.findings[0].step == 5 and dr.findings[0].made_at in ("", fx.line_of("LD001 raw"))


def test_an_optimizer_keeps_one_step_per_iteration():
    # evaluation under no_grad between the epochs adds no step
    dr = watched(lambda: fx.epochs_with_eval(3, 4, grad_mode_eval=False))
    assert dr.steps == 12 and dr.findings == []


def test_evaluation_between_epochs_under_grad_mode_is_watched_and_is_ld010():
    dr = watched(lambda: fx.epochs_with_eval(3, 4))
    # 4 optimizer steps per epoch, then a step per evaluation forward after the first
    assert dr.steps == 3 * 4 + 3 * 3
    assert ids(dr) == ["LD010"], dr.report()
    f = dr.findings[0]
    assert f.line == fx.line_of("LD010 eval") and f.severity == "info"
    assert "for a backward that never ran" in f.message


def test_evaluation_after_training_under_grad_mode_is_ld010():
    dr = watched(lambda: fx.epochs_with_eval(2, 6, after=True))
    assert ids(dr) == ["LD010"], dr.report()
    assert dr.findings[0].line == fx.line_of("LD010 eval")
    dr = watched(lambda: fx.epochs_with_eval(2, 6, grad_mode_eval=False, after=True))
    assert dr.findings == [] and dr.steps == 12


def test_a_script_that_never_calls_backward_steps_at_each_forward():
    dr = watched(lambda: fx.inference_under_grad(8))
    assert dr.steps == 7  # the first forward starts step 1, each next one ends a step
    assert ids(dr) == ["LD010"], dr.report()
    assert dr.findings[0].line == fx.line_of("LD010 inference")


def test_a_program_that_calls_step_itself_keeps_its_steps():
    model, _, x, y = fx._mlp()
    with doctor.watch() as dr:
        for i in range(5):
            for _ in range(1 if i == 0 else 3):  # then three backward passes per step of the program
                graft.nn.functional.mse_loss(model(x), y).backward()
            dr.step()
    assert dr.steps == 5


def test_step_on_optimizer_false_turns_the_automatic_steps_off():
    dr = watched(lambda: fx.manual_sgd(6), step_on_optimizer=False)
    assert dr.steps == 0
    dr = watched(lambda: fx.inference_under_grad(6), step_on_optimizer=False)
    assert dr.steps == 0


def test_backward_after_the_session_calls_nothing():
    dr = watched(lambda: fx.manual_sgd(3))
    assert dr.steps == 3
    fx.manual_sgd(3)  # the callback is gone: no step, no error
    assert dr.steps == 3
