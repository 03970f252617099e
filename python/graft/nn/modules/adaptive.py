"""AdaptiveLogSoftmaxWithLoss (torch.nn.modules.adaptive): the adaptive softmax of Grave et al.,
an efficient softmax approximation for many classes split by frequency into a shortlist (in the
head) and tail clusters (each reached through one head entry and its own smaller projection)."""
import collections

from ... import _C
from .. import functional as F
from .container import ModuleList, Sequential
from .linear import Linear
from .module import Module

__all__ = ["AdaptiveLogSoftmaxWithLoss"]

_ASMoutput = collections.namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    """Classes [0, cutoffs[0]) are the head's shortlist; cluster i holds [cutoffs[i], cutoffs[i+1])
    (the last one ends at n_classes) and projects in_features to in_features // div_value**(i+1)
    then to its class count, without bias. forward(input, target) returns ``_ASMoutput(output,
    loss)``: each target's log-probability and the mean negative one."""

    def __init__(self, in_features, n_classes, cutoffs, div_value=4.0, head_bias=False, device=None, dtype=None):
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if (cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs)):
            raise ValueError("cutoffs should be a sequence of unique, positive integers sorted in an increasing "
                             "order, where each value is between 1 and n_classes-1")
        self.in_features = in_features
        self.n_classes = n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value = div_value
        self.head_bias = head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(self.in_features, self.head_size, bias=self.head_bias, **kw)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hsz = int(self.in_features // (self.div_value ** (i + 1)))
            osz = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(Linear(self.in_features, hsz, bias=False, **kw),
                                        Linear(hsz, osz, bias=False, **kw)))

    def reset_parameters(self):
        self.head.reset_parameters()
        for i2h, h2o in self.tail:
            i2h.reset_parameters()
            h2o.reset_parameters()

    @staticmethod
    def _check_shapes(input_, target_):
        targ_dim = target_.dim()
        if targ_dim == 1:
            if input_.size(0) != target_.size(0):
                raise RuntimeError("Input and target should have the same size in the batch dimension.")
            if input_.dim() != 2:
                raise RuntimeError(f"1D target tensor expects 2D input tensors, but found inputs with size "
                                   f"{input_.size()}")
        elif targ_dim == 0:
            if input_.dim() != 1:
                raise RuntimeError(f"0D target tensor expects 1D input tensors, but found inputs with size "
                                   f"{input_.size()}")
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")

    def forward(self, input_, target_):
        self._check_shapes(input_, target_)
        is_batched = target_.dim() > 0
        input = input_ if is_batched else input_.unsqueeze(0)
        target = target_ if is_batched else target_.unsqueeze(0)
        batch_size = target.size(0)
        output = input.new_zeros(batch_size)
        gather_inds = target  # a tail cluster's rows gather their cluster's head entry
        used_rows = 0
        cutoff_values = [0] + self.cutoffs
        for i in range(len(cutoff_values) - 1):
            low_idx, high_idx = cutoff_values[i], cutoff_values[i + 1]
            target_mask = (target >= low_idx) & (target < high_idx)
            row_indices = target_mask.nonzero().reshape(-1)
            if row_indices.numel() == 0:
                continue
            if i > 0:
                relative_target = target[target_mask] - low_idx
                cluster_output = self.tail[i - 1](input.index_select(0, row_indices))
                gather_inds = gather_inds.masked_fill(target_mask, self.shortlist_size + i - 1)
                cluster_logprob = F.log_softmax(cluster_output, dim=1)
                local_logprob = cluster_logprob.gather(1, relative_target.unsqueeze(1))
                output = output.index_add(0, row_indices, local_logprob.squeeze(1))
            used_rows += row_indices.numel()
        if used_rows != batch_size:
            raise RuntimeError(f"Target values should be in [0, {self.n_classes - 1}], but values in range "
                               f"[{target.min().item()}, {target.max().item()}] were found. ")
        head_logprob = F.log_softmax(self.head(input), dim=1)
        output = output + head_logprob.gather(1, gather_inds.unsqueeze(1)).squeeze(1)
        loss = (-output).mean()
        if not is_batched:
            output = output.squeeze(0)
        return _ASMoutput(output, loss)

    def _get_full_log_prob(self, input, head_output):
        """The log-probabilities of all n_classes from the input and the head's output."""
        head_logprob = F.log_softmax(head_output, dim=1)
        parts = [head_logprob[:, :self.shortlist_size]]
        for i in range(self.n_clusters):
            cluster_logprob = F.log_softmax(self.tail[i](input), dim=1)
            parts.append(cluster_logprob + head_logprob[:, self.shortlist_size + i].unsqueeze(1))
        return _C.cat(parts, 1)

    def log_prob(self, input):
        """The log-probabilities of every class, (N, n_classes)."""
        return self._get_full_log_prob(input, self.head(input))

    def predict(self, input):
        """The most probable class of each row (as log_prob(input).argmax(1), computing the tail
        clusters only for rows whose head's best entry is a cluster)."""
        head_output = self.head(input)
        output = _C.argmax(head_output, dim=1)
        not_in_shortlist = output >= self.shortlist_size
        if not bool(not_in_shortlist.any()):
            return output
        if bool(not_in_shortlist.all()):
            return _C.argmax(self._get_full_log_prob(input, head_output), dim=1)
        log_prob = self._get_full_log_prob(input[not_in_shortlist], head_output[not_in_shortlist])
        output[not_in_shortlist] = _C.argmax(log_prob, dim=1)
        return output
