"""graft.optim: PyTorch's optimizers (SGD, Adam, AdamW, RMSprop, Adagrad) and learning-rate
schedulers over graft tensors. The Python classes keep PyTorch's param_groups / state / state
dict structures; each group's update runs in graft's fused C++ loops with the GIL released."""
from .optimizer import Optimizer
from .sgd import SGD
from .adam import Adam, AdamW
from .rmsprop import RMSprop
from .adagrad import Adagrad
from . import lr_scheduler

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "lr_scheduler"]
