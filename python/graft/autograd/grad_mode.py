"""Grad modes as context managers and decorators, with PyTorch's names: no_grad,
enable_grad, set_grad_enabled, inference_mode. The modes are thread-local C++ state."""
import functools

from .. import _C


class _DecoratorContextManager:
    """A context manager that also decorates functions (and generator functions), entering
    the mode around every call, as torch's grad modes do."""

    def __call__(self, func):
        import inspect  # lazily: it costs a fifth of `import graft`, and only decorators need it
        if inspect.isclass(func):
            raise RuntimeError("grad modes cannot decorate classes")
        if inspect.isgeneratorfunction(func):
            @functools.wraps(func)
            def gen_wrapper(*args, **kwargs):
                gen = func(*args, **kwargs)
                with self.clone():
                    response = gen.send(None)
                while True:
                    try:
                        request = yield response
                    except GeneratorExit:
                        with self.clone():
                            gen.close()
                        raise
                    except BaseException as e:  # noqa: BLE001 (re-thrown into the generator)
                        with self.clone():
                            response = gen.throw(e)
                    else:
                        try:
                            with self.clone():
                                response = gen.send(request)
                        except StopIteration as e:
                            return e.value
            return gen_wrapper

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.clone():
                return func(*args, **kwargs)
        return wrapper

    def clone(self):
        return self.__class__()


class _GradModeScope(_DecoratorContextManager):
    """Sets grad mode to the class's ``_mode`` in its scope and restores it after."""

    _mode = False

    def __init__(self):
        self.prev = False

    def __enter__(self):
        self.prev = _C.is_grad_enabled()
        _C._set_grad_enabled(self._mode)

    def __exit__(self, *exc):
        _C._set_grad_enabled(self.prev)


class no_grad(_GradModeScope):
    """Disables graph recording in its scope: results of ops do not require grad."""

    _mode = False


class enable_grad(_GradModeScope):
    """Enables graph recording in its scope, even inside no_grad."""

    _mode = True


class set_grad_enabled(_DecoratorContextManager):
    """Sets grad mode to ``mode``: at once (as a function call) and for a ``with`` block."""

    def __init__(self, mode):
        self.prev = _C.is_grad_enabled()
        self.mode = bool(mode)
        _C._set_grad_enabled(self.mode)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _C._set_grad_enabled(self.prev)

    def clone(self):
        return self.__class__(self.mode)


class inference_mode(_DecoratorContextManager):
    """Inference mode: no recording, and tensors made here are inference tensors that cannot
    be saved for backward later (torch.inference_mode)."""

    def __init__(self, mode=True):
        self.mode = mode
        self._guard = None

    def __new__(cls, mode=True):
        if isinstance(mode, bool):
            return super().__new__(cls)
        return cls()(mode)  # used as a bare decorator: @inference_mode

    def __enter__(self):
        self._guard = _C._InferenceMode(self.mode)
        self._guard.__enter__()

    def __exit__(self, *exc):
        self._guard.__exit__(None, None, None)

    def clone(self):
        return self.__class__(self.mode)
