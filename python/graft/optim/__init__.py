"""graft.optim: PyTorch's optimizers and learning-rate schedulers over graft tensors. The Python
classes keep PyTorch's param_groups / state / state dict structures. SGD, Adam, AdamW, RMSprop and
Adagrad update each group in graft's fused C++ loops with the GIL released; Adadelta, Adamax,
NAdam, RAdam, Rprop, ASGD and LBFGS run PyTorch 2.x's single-tensor updates with graft's tensor
ops."""
from .optimizer import Optimizer
from .sgd import SGD
from .adam import Adam, AdamW
from .rmsprop import RMSprop
from .adagrad import Adagrad
from .adadelta import Adadelta
from .adamax import Adamax
from .nadam import NAdam
from .radam import RAdam
from .rprop import Rprop
from .asgd import ASGD
from .lbfgs import LBFGS
from . import lr_scheduler

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam",
           "Rprop", "ASGD", "LBFGS", "lr_scheduler"]
