"""graft.optim.LBFGS: PyTorch's L-BFGS (a fixed step or the strong-Wolfe line search), in Python
with graft's tensor ops, following PyTorch 2.x's torch/optim/lbfgs.py step for step (the scalars
of the search stay 0-d tensors of the parameters' dtype, as there)."""
from .. import _C
from ..autograd.grad_mode import enable_grad, no_grad
from ._single_tensor import check_tensor_lr
from .optimizer import Optimizer, _check_nonnegative


def _cubic_interpolate(x1, f1, g1, x2, f2, g2, bounds=None):
    """The minimiser of the cubic through (x1, f1, g1) and (x2, f2, g2), kept within ``bounds``
    (default: the interval between x1 and x2); their midpoint when the cubic has none."""
    if bounds is not None:
        xmin_bound, xmax_bound = bounds
    else:
        xmin_bound, xmax_bound = (x1, x2) if x1 <= x2 else (x2, x1)
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 ** 2 - g1 * g2
    if d2_square >= 0:
        d2 = d2_square.sqrt()
        if x1 <= x2:
            min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
        return min(max(min_pos, xmin_bound), xmax_bound)
    return (xmin_bound + xmax_bound) / 2.0


class _Bracket:
    """The strong-Wolfe search's bracket: step sizes ``t``, losses ``f``, flat gradients ``g``
    and directional derivatives ``gtd`` of its one or two ends."""

    def __init__(self, t, f, g, gtd):
        self.t, self.f, self.g, self.gtd = t, f, g, gtd

    def set(self, pos, t, f, g, gtd):
        """Replaces the end ``pos``."""
        self.t[pos], self.f[pos], self.g[pos], self.gtd[pos] = t, f, g, gtd

    def low_high(self):
        """The positions of the lower-loss end and of the other."""
        return (0, 1) if self.f[0] <= self.f[-1] else (1, 0)


def _wolfe_bracket(obj_func, x, t, d, f, g, gtd, c1, c2, max_ls):
    """The bracketing phase: returns (bracket, done, ls_iter, ls_func_evals, f_new, g_new)."""
    f_new, g_new = obj_func(x, t, d)
    ls_func_evals = 1
    gtd_new = g_new.dot(d)
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    ls_iter = 0
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            return (_Bracket([t_prev, t], [f_prev, f_new], [g_prev, g_new.clone()], [gtd_prev, gtd_new]), False,
                    ls_iter, ls_func_evals, f_new, g_new)
        if abs(gtd_new) <= -c2 * gtd:
            return _Bracket([t], [f_new], [g_new], None), True, ls_iter, ls_func_evals, f_new, g_new
        if gtd_new >= 0:
            return (_Bracket([t_prev, t], [f_prev, f_new], [g_prev, g_new.clone()], [gtd_prev, gtd_new]), False,
                    ls_iter, ls_func_evals, f_new, g_new)
        # interpolate
        min_step = t + 0.01 * (t - t_prev)
        max_step = t * 10
        tmp = t
        t = _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, bounds=(min_step, max_step))
        # next step
        t_prev, f_prev, g_prev, gtd_prev = tmp, f_new, g_new.clone(), gtd_new
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
    # reached the maximum number of iterations (PyTorch keeps no gtd for this bracket either)
    return _Bracket([0, t], [f, f_new], [g, g_new], None), False, ls_iter, ls_func_evals, f_new, g_new


def _wolfe_zoom_trial(bracket, insuf_progress):
    """The zoom phase's next trial step (cubic interpolation, moved 10% of the bracket away from a
    boundary it comes too close to) and the new insufficient-progress flag."""
    t = _cubic_interpolate(bracket.t[0], bracket.f[0], bracket.gtd[0], bracket.t[1], bracket.f[1], bracket.gtd[1])
    hi, lo = max(bracket.t), min(bracket.t)
    eps = 0.1 * (hi - lo)
    if min(hi - t, t - lo) < eps:
        # interpolation close to boundary
        if insuf_progress or t >= hi or t <= lo:
            # evaluate at 0.1 away from boundary
            t = hi - eps if abs(t - hi) < abs(t - lo) else lo + eps
            return t, False
        return t, True
    return t, False


def _strong_wolfe(obj_func, x, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9, max_ls=25):
    """PyTorch's strong-Wolfe line search (ported from torch/optim's lswolfe.lua): returns
    (f_new, g_new, t, ls_func_evals)."""
    d_norm = d.abs().max()
    g = g.clone()
    bracket, done, ls_iter, ls_func_evals, f_new, g_new = _wolfe_bracket(obj_func, x, t, d, f, g, gtd, c1, c2,
                                                                         max_ls)
    # zoom phase: refine the bracket until a point satisfies the criteria
    insuf_progress = False
    low_pos, high_pos = bracket.low_high()
    while not done and ls_iter < max_ls:
        # line-search bracket is so small
        if abs(bracket.t[1] - bracket.t[0]) * d_norm < tolerance_change:
            break
        t, insuf_progress = _wolfe_zoom_trial(bracket, insuf_progress)
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
        if f_new > (f + c1 * t * gtd) or f_new >= bracket.f[low_pos]:
            # Armijo condition not satisfied or not lower than lowest point
            bracket.set(high_pos, t, f_new, g_new.clone(), gtd_new)
            low_pos, high_pos = (0, 1) if bracket.f[0] <= bracket.f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True  # Wolfe conditions satisfied
            elif gtd_new * (bracket.t[high_pos] - bracket.t[low_pos]) >= 0:
                # old high becomes new low
                bracket.set(high_pos, bracket.t[low_pos], bracket.f[low_pos], bracket.g[low_pos],
                            bracket.gtd[low_pos])
            # new point becomes new low
            bracket.set(low_pos, t, f_new, g_new.clone(), gtd_new)
    return bracket.f[low_pos], bracket.g[low_pos], bracket.t[low_pos], ls_func_evals


# the search's tensors LBFGS keeps in its state between steps (written at the end of each step)
_RUN_KEYS = ("d", "t", "old_dirs", "old_stps", "ro", "H_diag", "prev_flat_grad", "prev_loss")


class LBFGS(Optimizer):
    """PyTorch's L-BFGS (after minFunc). One parameter group only; ``step(closure)`` needs a closure
    that recomputes the loss (and its gradients). Its state, kept under the first parameter as
    PyTorch keeps it: ``func_evals``, ``n_iter``, ``d``, ``t``, ``old_dirs``, ``old_stps``, ``ro``,
    ``H_diag``, ``prev_flat_grad``, ``prev_loss`` and ``al``."""

    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7, tolerance_change=1e-9,
                 history_size=100, line_search_fn=None):
        check_tensor_lr(lr)
        _check_nonnegative(("learning rate", lr))
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = dict(lr=lr, max_iter=max_iter, max_eval=max_eval, tolerance_grad=tolerance_grad,
                        tolerance_change=tolerance_change, history_size=history_size, line_search_fn=line_search_fn)
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]
        self._numel_cache = None

    def _numel(self):
        if self._numel_cache is None:
            self._numel_cache = sum(p.numel() for p in self._params)
        return self._numel_cache

    def _gather_flat_grad(self):
        views = []
        for p in self._params:
            grad = p.grad
            views.append(_C.zeros(p.numel(), dtype=p.dtype) if grad is None else grad.reshape(-1))
        return _C.cat(views, 0)

    def _add_grad(self, step_size, update):
        offset = 0
        alpha = float(step_size)
        for p in self._params:
            numel = p.numel()
            p.add_(update[offset:offset + numel].view_as(p), alpha=alpha)
            offset += numel
        assert offset == self._numel()

    def _clone_param(self):
        return [p.clone(memory_format=_C.contiguous_format) for p in self._params]

    def _set_param(self, params_data):
        for p, pdata in zip(self._params, params_data):
            p.copy_(pdata)

    def _directional_evaluate(self, closure, x, t, d):
        self._add_grad(t, d)
        loss = float(closure())
        flat_grad = self._gather_flat_grad()
        self._set_param(x)
        return loss, flat_grad

    def _direction(self, state, run, flat_grad, history_size):
        """The L-BFGS search direction from the gradient and the history in ``run`` (updated)."""
        if state["n_iter"] == 1:
            run["old_dirs"], run["old_stps"], run["ro"], run["H_diag"] = [], [], [], 1
            return flat_grad.neg()
        old_dirs, old_stps, ro = run["old_dirs"], run["old_stps"], run["ro"]
        y = flat_grad.sub(run["prev_flat_grad"])
        s = run["d"].mul(run["t"])
        ys = y.dot(s)  # y*s
        if ys > 1e-10:
            if len(old_dirs) == history_size:
                # shift history by one (limited-memory)
                old_dirs.pop(0)
                old_stps.pop(0)
                ro.pop(0)
            old_dirs.append(y)
            old_stps.append(s)
            ro.append(1.0 / ys)
            # update scale of initial Hessian approximation
            run["H_diag"] = ys / y.dot(y)
        num_old = len(old_dirs)
        if "al" not in state:
            state["al"] = [None] * history_size
        al = state["al"]
        # the two-loop recursion, collapsed onto one buffer
        q = flat_grad.neg()
        for i in range(num_old - 1, -1, -1):
            al[i] = old_stps[i].dot(q) * ro[i]
            q.add_(old_dirs[i], alpha=-float(al[i]))
        r = _C.mul(q, run["H_diag"])
        for i in range(num_old):
            be_i = old_dirs[i].dot(r) * ro[i]
            r.add_(old_stps[i], alpha=float(al[i] - be_i))
        return r

    def _move(self, closure, run, group, loss, flat_grad, gtd, last_iter):
        """Moves along ``run['d']`` by ``run['t']`` (or the line search's step): returns
        (loss, flat_grad, opt_cond, ls_func_evals)."""
        d, t = run["d"], run["t"]
        opt_cond = False
        ls_func_evals = 0
        line_search_fn = group["line_search_fn"]
        if line_search_fn is not None:
            if line_search_fn != "strong_wolfe":
                raise RuntimeError("only 'strong_wolfe' is supported")
            x_init = self._clone_param()

            def obj_func(x, t, d):
                return self._directional_evaluate(closure, x, t, d)

            loss, flat_grad, t, ls_func_evals = _strong_wolfe(obj_func, x_init, t, d, loss, flat_grad, gtd)
            run["t"] = t
            self._add_grad(t, d)
            opt_cond = flat_grad.abs().max() <= group["tolerance_grad"]
        else:
            # no line search, simply move with fixed-step
            self._add_grad(t, d)
            if not last_iter:
                # re-evaluate the function only if not in the last iteration
                with enable_grad():
                    loss = float(closure())
                flat_grad = self._gather_flat_grad()
                opt_cond = flat_grad.abs().max() <= group["tolerance_grad"]
                ls_func_evals = 1
        return loss, flat_grad, opt_cond, ls_func_evals

    def _iterate(self, closure, state, run, group, loss, flat_grad):
        """The iterations of one step, from the first evaluation's loss and gradient; ``run`` holds
        the search's tensors (direction, step, history) between iterations."""
        lr, max_iter, tolerance_change = group["lr"], group["max_iter"], group["tolerance_change"]
        current_evals = 1
        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            run["d"] = d = self._direction(state, run, flat_grad, group["history_size"])
            if run["prev_flat_grad"] is None:
                run["prev_flat_grad"] = flat_grad.clone(memory_format=_C.contiguous_format)
            else:
                run["prev_flat_grad"].copy_(flat_grad)
            run["prev_loss"] = prev_loss = loss
            # initial guess for the step length
            run["t"] = min(1.0, 1.0 / flat_grad.abs().sum()) * lr if state["n_iter"] == 1 else lr
            gtd = flat_grad.dot(d)  # directional derivative
            if gtd > -tolerance_change:
                break
            loss, flat_grad, opt_cond, ls_func_evals = self._move(closure, run, group, loss, flat_grad, gtd,
                                                                  n_iter == max_iter)
            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals
            if n_iter == max_iter or current_evals >= group["max_eval"] or opt_cond:
                break
            # lack of progress
            if d.mul(run["t"]).abs().max() <= tolerance_change or abs(loss - prev_loss) < tolerance_change:
                break

    def step(self, closure):
        """Performs one L-BFGS step (up to ``max_iter`` iterations) and returns the closure's
        first loss. The closure runs with grad mode on; the updates run without recording."""
        assert len(self.param_groups) == 1
        closure = enable_grad()(closure)
        with no_grad():
            group = self.param_groups[0]
            # LBFGS's state is global; PyTorch keeps it under the first parameter (so that
            # load_state_dict casts it)
            state = self.state[self._params[0]]
            state.setdefault("func_evals", 0)
            state.setdefault("n_iter", 0)
            orig_loss = closure()
            loss = float(orig_loss)
            state["func_evals"] += 1
            flat_grad = self._gather_flat_grad()
            if flat_grad.abs().max() <= group["tolerance_grad"]:
                return orig_loss
            run = {key: state.get(key) for key in _RUN_KEYS}
            self._iterate(closure, state, run, group, loss, flat_grad)
            for key in _RUN_KEYS:
                state[key] = run[key]
        return orig_loss
