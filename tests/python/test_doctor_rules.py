"""graft.doctor's rules from Python: each leaking loop (tests/python/doctor_fixtures.py) fires
exactly its rule, with the holder's path from a named root and the user's line, at step 5 for
the growth rules (warm-up 2 + confirmation 3) and never earlier; each fixed twin fires
nothing; the look-alikes that are fine (gradient accumulation, a double backward that needs
retain_graph, an intermediate kept after backward) fire nothing."""
import pytest

import graft
import graft.doctor as doctor

import doctor_fixtures as fx


def run(fn, steps=8, **opts):
    """Runs fn(steps) (or fn(dr, steps)) under a fresh doctor; returns (doctor, {id: step reported})."""
    with doctor.watch(**opts) as dr:
        try:
            fn(dr, steps)
        except TypeError as e:
            if "positional argument" not in str(e):
                raise
            fn(steps)
    return dr, {f.id: f.step for f in dr.findings}


def only(dr, rule):
    fs = dr.findings
    assert [f.id for f in fs] == [rule], "\n".join(str(f) for f in fs)
    return fs[0]


def test_running_total_is_ld001_at_step_5_with_its_holder_and_line():
    dr, at = run(lambda n: fx.running_total(n))
    f = only(dr, "LD001")
    assert f.step == 5 and f.severity == "leak"
    assert f.line == fx.line_of("LD001")
    assert f.holders[0].path == "state['total']"
    assert f.holders[0].created_at == fx.line_of("LD001")
    assert f.holders[0].stored_at == fx.line_of("LD001") and f.made_at == ""  # made where it is stored
    assert f.saved_bytes == 0  # backward freed what was saved: host-only growth
    assert f.host_bytes > 0 and f.nodes_per_step > 0


def test_ld001_is_not_reported_before_step_5():
    dr, _ = run(lambda n: fx.running_total(n), steps=4)
    assert dr.findings == []


def test_running_total_detached_is_clean():
    dr, _ = run(lambda n: fx.running_total(n, fixed=True), steps=12)
    assert dr.findings == []


def test_losses_kept_in_an_attribute_are_ld001_held_by_self_history():
    dr, _ = run(lambda n: fx.losses_list(n))
    f = only(dr, "LD001")
    assert f.step == 5
    assert f.holders[0].path.startswith("self.history[")
    # the line that stored the reference first, the line that made the loss after it
    assert (f.line, f.made_at) == (fx.line_of("LD001 list stored"), fx.line_of("LD001 list made"))
    assert f.holders[0].stored_at == fx.line_of("LD001 list stored")
    assert f"stored at {fx.line_of('LD001 list stored')}; made at {fx.line_of('LD001 list made')}, step " in str(f)
    dr, _ = run(lambda n: fx.losses_list(n, fixed=True), steps=12)
    assert dr.findings == []


def test_carried_state_with_retain_graph_is_ld002():
    dr, _ = run(lambda n: fx.carried_state(n))
    f = only(dr, "LD002")
    assert f.step == 5
    assert f.line == fx.line_of("LD002")
    assert f.holders[0].path == "state['h']"
    assert f.saved_bytes > 0
    dr, _ = run(lambda n: fx.carried_state(n, fixed=True), steps=12)
    assert dr.findings == []


def test_outputs_kept_under_grad_mode_are_ld003():
    dr, _ = run(fx.eval_outputs_kept)
    f = only(dr, "LD003")
    assert f.step == 5
    assert (f.line, f.made_at) == (fx.line_of("LD003 stored"), fx.line_of("LD003"))
    assert [h.path for h in f.holders[:2]] == ["preds[3]", "preds[2]"] or f.holders[0].path.startswith("preds[")
    dr, _ = run(lambda d, n: fx.eval_outputs_kept(d, n, fixed=True), steps=12)
    assert dr.findings == []


def test_create_graph_grads_are_ld004_held_by_the_parameters_grad():
    with pytest.warns(UserWarning, match="create_graph=True"):
        dr, _ = run(lambda n: fx.create_graph_grads(n))
    f = only(dr, "LD004")
    assert f.step == 5
    assert f.line == fx.line_of("LD004")
    assert any(h.path.startswith("model.") and h.path.endswith(".grad") for h in f.holders), f.holders
    with pytest.warns(UserWarning, match="create_graph=True"):
        dr, _ = run(lambda n: fx.create_graph_grads(n, fixed=True), steps=12)
    assert dr.findings == []


def test_outputs_kept_by_a_hook_closure_are_ld005():
    dr, _ = run(lambda n: fx.hook_capture(n))
    f = only(dr, "LD005")
    assert f.step == 5
    assert (f.line, f.made_at) == (fx.line_of("LD005 stored"), fx.line_of("LD005"))  # the hook's body first
    assert f.holders[0].hook_registered_at == fx.line_of("LD005 registered")
    assert f.message.endswith(f"; the hook was registered at {fx.line_of('LD005 registered')}"), f.message
    assert f.holders[0].through_hook
    assert "._forward_hooks[" in f.holders[0].path and ".<closure store>[" in f.holders[0].path
    dr, _ = run(lambda n: fx.hook_capture(n, fixed=True), steps=12)
    assert dr.findings == []


def test_attribute_set_inside_a_hook_is_ld005():
    model, opt, x, y = fx._mlp()

    def remember(mod, inputs, output):
        mod.seen = getattr(mod, "seen", []) + [output]  # an attribute written by a hook

    handle = model[2].register_forward_hook(remember)
    with doctor.watch() as dr:
        for _ in range(8):
            opt.zero_grad()
            graft.nn.functional.mse_loss(model(x), y).backward()
            opt.step()
    handle.remove()
    del model[2].seen
    f = only(dr, "LD005")
    assert f.holders[0].path.startswith("model.2.seen[") and f.holders[0].through_hook


def test_reference_cycles_holding_tensors_are_ld006():
    dr, _ = run(lambda n: fx.cycle_held(n))
    f = only(dr, "LD006")
    assert f.step == 5
    assert f.line == fx.line_of("LD006")
    assert "_Cache" in f.holders[0].path and ".me" in f.holders[0].path
    assert f.saved_bytes > 0  # the bytes the forced collection returned
    dr, _ = run(lambda n: fx.cycle_held(n, fixed=True), steps=12)
    assert dr.findings == []


def test_cycles_that_start_after_the_first_verdict_are_found_by_the_full_collections():
    # after step 6 a boundary collects the young generations, and every 8th step everything: a
    # cache that lived through a boundary is found by the next full collection (steps 16, 24, 32)
    dr, _ = run(lambda n: fx.cycle_held(n, start=9), steps=40)
    f = only(dr, "LD006")
    assert f.step == 32 and f.first_step == 16


def test_detaching_every_third_step_is_ld007_unless_the_window_is_declared():
    dr, _ = run(lambda n: fx.detached_every(n), steps=12)
    f = only(dr, "LD007")
    assert f.severity == "warning" and f.line == fx.line_of("LD007")
    with doctor.watch() as dr:
        dr.allow_window(3)
        fx.detached_every(12)
    assert dr.findings == []


def test_missing_zero_grad_is_ld008_unless_declared_and_real_accumulation_is_clean():
    dr, _ = run(lambda n: fx.no_zero_grad(n))
    f = only(dr, "LD008")
    assert f.step == 5 and f.severity == "warning"
    assert f.line == fx.line_of("LD008")
    assert {h.path for h in f.holders} >= {"model.0.weight", "model.0.bias"}, f.holders
    dr, _ = run(lambda n: fx.no_zero_grad(n, fixed=True), steps=12)
    assert dr.findings == []
    with doctor.watch() as dr:
        dr.declare_accumulation(100)
        fx.no_zero_grad(12)
    assert dr.findings == []
    dr, _ = run(lambda n: fx.gradient_accumulation(n), steps=12)
    assert dr.findings == []


def test_unused_retain_graph_is_ld009_and_a_gradient_penalty_is_clean():
    dr, _ = run(lambda n: fx.retain_unused(n))
    f = only(dr, "LD009")
    assert f.severity == "info" and f.line == fx.line_of("LD009")
    dr, _ = run(lambda n: fx.retain_unused(n, fixed=True), steps=12)
    assert dr.findings == []
    dr, _ = run(lambda n: fx.gradient_penalty(n), steps=12)
    assert dr.findings == []


def test_evaluation_under_grad_mode_is_ld010():
    dr, _ = run(fx.eval_under_grad, steps=10)
    f = only(dr, "LD010")
    assert f.severity == "info" and f.line == fx.line_of("LD010")
    assert f.saved_bytes > 0
    dr, _ = run(lambda d, n: fx.eval_under_grad(d, n, fixed=True), steps=12)
    assert dr.findings == []


def test_fast_weights_kept_across_iterations_are_ld002():
    dr, _ = run(lambda n: fx.fast_weights_kept(n))
    f = only(dr, "LD002")
    assert f.line == fx.line_of("fast-weights")
    assert f.holders[0].path == "state['fast']"


def test_an_intermediate_kept_after_backward_is_clean():
    dr, _ = run(lambda n: fx.intermediate_kept(n), steps=12)
    assert dr.findings == []


def test_two_handles_to_one_graph_are_both_listed():
    model, opt, x, y = fx._mlp()
    state = {"total": 0}
    with doctor.watch() as dr:
        for _ in range(6):
            opt.zero_grad()
            loss = graft.nn.functional.mse_loss(model(x), y)
            loss.backward()
            state["total"] += loss
            state["scaled"] = state["total"] * 2  # a second tensor holding the same chain
            opt.step()
    paths = sorted(h.path for h in only(dr, "LD001").holders)
    assert paths == ["state['scaled']", "state['total']"], paths


def test_allow_suppresses_an_intended_holder():
    with doctor.watch() as dr:
        dr.allow("state['total']")
        fx.running_total(8)
    assert dr.findings == []


def test_a_custom_function_ctx_is_a_holder_path():
    dr, _ = run(lambda n: fx.ctx_keeps_previous(n))
    f = only(dr, "LD003")
    # `previous` was stored by its assignment; what it holds was made by the Function's apply
    assert f.step == 5 and (f.line, f.made_at) == (fx.line_of("ctx stored"), fx.line_of("ctx"))
    # the newest kept output is the local `previous`; each older one hangs off the ctx of the next
    assert [h.path for h in f.holders[:2]] == ["previous", "previous.grad_fn.previous"], f.holders
    dr, _ = run(lambda n: fx.ctx_keeps_previous(n, fixed=True), steps=12)
    assert dr.findings == []


# ---- several optimizers (docs/notes/doctor.md, "Steps") ----
def test_a_gan_with_two_optimizers_is_one_step_per_iteration_and_clean():
    # the generator's backward adds into the discriminator's .grad after its step; the
    # discriminator's zero_grad clears it before its next step: no LD008
    dr, _ = run(lambda n: fx.gan(n), steps=12)
    assert dr.steps == 12
    assert dr.findings == []


def test_a_gan_whose_discriminator_never_clears_its_gradients_is_ld008():
    dr, _ = run(lambda n: fx.gan(n, fixed=False), steps=8)
    f = only(dr, "LD008")
    assert f.step == 5 and f.line == fx.line_of("LD008 gan")
    assert any(h.path.startswith("disc.") for h in f.holders), f.holders


def test_a_gan_leaking_its_generator_losses_is_ld001_at_step_5():
    dr, _ = run(lambda n: fx.gan(n, leak=True), steps=8)
    f = only(dr, "LD001")
    assert f.step == 5 and f.line == fx.line_of("LD001 gan")
    assert f.holders[0].path == "state['g_total']"


def test_a_new_optimizer_in_a_second_stage_still_ends_steps():
    # 6 iterations with the first optimizer, 10 with the second: the first iteration of the
    # second stage runs into the next one (the doctor learns the new last optimizer), then
    # every iteration is a step again
    dr, _ = run(lambda n: fx.two_stages(n, switch=6), steps=16)
    assert dr.steps == 15
    assert dr.findings == []


def test_a_second_leak_that_starts_after_the_first_report_is_still_reported():
    dr, _ = run(lambda n: fx.late_second_leak(n, start=10), steps=40)
    at = {f.id: f for f in dr.findings}
    assert sorted(at) == ["LD001", "LD003"], [str(f) for f in dr.findings]
    assert at["LD001"].step == 5 and at["LD001"].line == fx.line_of("LD001 first")
    # the censuses after the first report are 1, 2, 4, 8 steps later, then every 8 steps: the
    # late leak (count 1 at boundary 11) rises at observed boundaries 13, 21, 29
    assert at["LD003"].line == fx.line_of("LD003 late")
    assert 13 <= at["LD003"].step <= 10 + 2 + 3 * 8
    assert at["LD003"].holders[0].path.startswith("kept[")


# ---- LD011: tensors without a graph ----
def test_predictions_kept_as_tensors_are_ld011_growth_with_both_lines():
    dr, at = run(lambda n: fx.kept_predictions(n))
    f = only(dr, "LD011")
    assert f.step == 5 and f.severity == "growth"
    # the line that stored the reference first, the line that made the tensor after it
    assert (f.line, f.made_at) == (fx.line_of("LD011 stored"), fx.line_of("LD011 made"))
    assert f.holders[0].path.startswith("history[")
    assert f.holders[0].stored_at == fx.line_of("LD011 stored")
    # a [32, 1] float32 prediction per step, 128 B each, made after the optimizer's step (so in
    # the next step): at step 5 those of steps 2..4 are past, one more than at step 3 + 1
    assert f.tensor_bytes == 3 * 128 and f.bytes_per_step == 128
    assert f.nodes == 0 and "3 tensors without a graph made at" in f.message
    assert "item()" in f.fix and "deque(maxlen=N)" in f.fix


@pytest.mark.parametrize("keep", ["number", "window"])
def test_predictions_kept_as_numbers_or_in_a_bounded_window_are_clean(keep):
    dr, _ = run(lambda n: fx.kept_predictions(n, keep=keep), steps=12)
    assert dr.findings == []


def test_ld011_is_not_reported_before_step_5():
    dr, _ = run(lambda n: fx.kept_predictions(n), steps=4)
    assert dr.findings == []


def test_ld011_in_the_counters_tier_has_no_line_but_its_holder():
    dr, _ = run(lambda n: fx.kept_predictions(n), tier="counters")
    f = only(dr, "LD011")
    assert f.step == 5 and f.holders[0].path.startswith("history[")


def test_a_growth_finding_fails_assert_no_leak():
    state = {"kept": []}

    def step():
        x = graft.randn(64)
        state["kept"].append(x * 2)

    with pytest.raises(AssertionError, match="LD011"):
        doctor.assert_no_leak(step, steps=8)
