"""graft.nn.init: torch.nn.init's initialisers. Each fills its tensor in place without
recording a graph, draws from graft's default generator (graft.manual_seed) and returns the
same tensor object. orthogonal_ is written here over graft.linalg.qr."""
from .. import _C, linalg
from ..autograd.grad_mode import no_grad

_init = _C._nn.init

calculate_gain = _init.calculate_gain
_calculate_fan_in_and_fan_out = _init._calculate_fan_in_and_fan_out
uniform_, normal_, trunc_normal_ = _init.uniform_, _init.normal_, _init.trunc_normal_
constant_, ones_, zeros_, eye_ = _init.constant_, _init.ones_, _init.zeros_, _init.eye_
xavier_uniform_, xavier_normal_ = _init.xavier_uniform_, _init.xavier_normal_
kaiming_uniform_, kaiming_normal_ = _init.kaiming_uniform_, _init.kaiming_normal_


def orthogonal_(tensor, gain=1, generator=None):
    """Fills ``tensor`` with a (semi-)orthogonal matrix (Saxe et al. 2013), scaled by ``gain``: the
    tensor seen as rows = size(0) by cols = the other dims flattened, filled from normal draws (of
    ``generator``, else graft's default one) orthonormalized by a QR decomposition, the signs of
    R's diagonal folded into Q so that the result is uniformly distributed; orthonormal rows when
    rows < cols, else orthonormal columns. A tensor with no elements is returned unchanged;
    ValueError for fewer than 2 dimensions. Returns ``tensor``."""
    if tensor.dim() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0 or getattr(tensor, "is_meta", False):
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    flattened = tensor.new_empty((rows, cols)).normal_(0, 1, generator=generator)
    if rows < cols:
        flattened = flattened.t()
    q, r = linalg.qr(flattened)
    q = q * r.diagonal().sign()
    if rows < cols:
        q = q.t()
    with no_grad():
        tensor.view_as(q).copy_(q)
        tensor.mul_(gain)
    return tensor
