"""graft.nn.init: torch.nn.init's initialisers. Each fills its tensor in place without
recording a graph, draws from graft's default generator (graft.manual_seed) and returns the
same tensor object."""
from .. import _C

_init = _C._nn.init

calculate_gain = _init.calculate_gain
_calculate_fan_in_and_fan_out = _init._calculate_fan_in_and_fan_out
uniform_, normal_, trunc_normal_ = _init.uniform_, _init.normal_, _init.trunc_normal_
constant_, ones_, zeros_, eye_ = _init.constant_, _init.ones_, _init.zeros_, _init.eye_
xavier_uniform_, xavier_normal_ = _init.xavier_uniform_, _init.xavier_normal_
kaiming_uniform_, kaiming_normal_ = _init.kaiming_uniform_, _init.kaiming_normal_
