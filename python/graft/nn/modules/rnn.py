"""Recurrent layers: RNN, LSTM, GRU and their single-step cells. The time loop runs in Python;
each step is the C++ library's (the input projections of a whole sequence are one matmul per
layer). The layers also take a PackedSequence (graft.nn.utils.rnn) and then return one."""
import math
import numbers
import warnings

from ... import _C
from .. import functional as F
from .. import init
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from ._layer_utils import changed_options
from .module import Module

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


# one time step of each recurrence: the C++ library's (graft::nn::rnn_cell_step, lstm_cell_step,
# gru_cell_step), shared with the C++ modules; x_proj = x W_ih^T + b_ih
_rnn_step = _C._nn._rnn_cell_step
_lstm_step = _C._nn._lstm_cell_step
_gru_step = _C._nn._gru_cell_step


class RNNBase(Module):
    """What RNN, LSTM and GRU share: parameters weight_ih_l{k}[_reverse], weight_hh_l{k},
    bias_ih_l{k}, bias_hh_l{k} (uniform in +-1/sqrt(hidden_size)), argument checks, the
    layer/direction loops, and repr."""

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        if not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1 or isinstance(dropout, bool):
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an element "
                             "being zeroed")
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                          f"expects num_layers greater than 1, but got dropout={dropout} and "
                          f"num_layers={num_layers}")
        if not isinstance(hidden_size, int):
            raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if proj_size != 0:
            raise NotImplementedError("LSTM with proj_size > 0 is not supported by graft")
        gate_size = _GATES[mode] * hidden_size
        directions = 2 if bidirectional else 1
        kw = {"device": device, "dtype": dtype}
        self._flat_weights_names = []
        for layer in range(num_layers):
            for direction in range(directions):
                layer_input = input_size if layer == 0 else hidden_size * directions
                suffix = "_reverse" if direction == 1 else ""
                names = [f"weight_ih_l{layer}{suffix}", f"weight_hh_l{layer}{suffix}"]
                shapes = [(gate_size, layer_input), (gate_size, hidden_size)]
                if bias:
                    names += [f"bias_ih_l{layer}{suffix}", f"bias_hh_l{layer}{suffix}"]
                    shapes += [(gate_size,), (gate_size,)]
                for name, shape in zip(names, shapes):
                    setattr(self, name, Parameter(_C.empty(shape, **kw)))
                self._flat_weights_names.extend(names)
        self.reset_parameters()

    @property
    def _flat_weights(self):
        return [getattr(self, n) for n in self._flat_weights_names]

    @property
    def all_weights(self):
        return [self._layer_weights(layer, d) for layer in range(self.num_layers)
                for d in range(2 if self.bidirectional else 1)]

    def flatten_parameters(self):
        """A no-op, as PyTorch's is off cuDNN: graft's recurrent layers use their parameters
        where they are, so there is nothing to pack into one buffer."""
        return None

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _layer_weights(self, layer, direction):
        suffix = "_reverse" if direction == 1 else ""
        w_ih = getattr(self, f"weight_ih_l{layer}{suffix}")
        w_hh = getattr(self, f"weight_hh_l{layer}{suffix}")
        b_ih = getattr(self, f"bias_ih_l{layer}{suffix}") if self.bias else None
        b_hh = getattr(self, f"bias_hh_l{layer}{suffix}") if self.bias else None
        return w_ih, w_hh, b_ih, b_hh

    def extra_repr(self):
        return f"{self.input_size}, {self.hidden_size}" + changed_options(
            self, proj_size=0, num_layers=1, bias=True, batch_first=False, dropout=0, bidirectional=False)

    def _check_input(self, input):
        if input.dim() not in (2, 3):
            raise ValueError(f"{type(self).__name__}: Expected input to be 2D or 3D, got {input.dim()}D instead")
        if input.size(-1) != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                               f"got {input.size(-1)}")

    def _expected_hidden(self, batch):
        return (self.num_layers * (2 if self.bidirectional else 1), batch, self.hidden_size)

    @staticmethod
    def _check_hidden(hx, expected, msg="Expected hidden size {}, got {}"):
        if tuple(hx.shape) != expected:
            raise RuntimeError(msg.format(expected, list(hx.shape)))

    def _prepare(self, input, states):
        """(input as [T, N, C], states as [layers*dirs, N, H], batched) with PyTorch's checks;
        ``states`` is a list of hidden tensors (one, or h and c for LSTM), or None."""
        self._check_input(input)
        batched = input.dim() == 3
        if states is not None:
            dims = [s.dim() for s in states]
            if batched and any(d != 3 for d in dims):
                if len(states) == 1:
                    raise RuntimeError(f"For batched 3-D input, hx should also be 3-D but got {dims[0]}-D tensor")
                raise RuntimeError(f"For batched 3-D input, hx and cx should also be 3-D but got ({dims[0]}-D, "
                                   f"{dims[1]}-D) tensors")
            if not batched and any(d != 2 for d in dims):
                if len(states) == 1:
                    raise RuntimeError(f"For unbatched 2-D input, hx should also be 2-D but got {dims[0]}-D tensor")
                raise RuntimeError(f"For unbatched 2-D input, hx and cx should also be 2-D but got ({dims[0]}-D, "
                                   f"{dims[1]}-D) tensors")
        if not batched:
            input = input.unsqueeze(1)
            states = None if states is None else [s.unsqueeze(1) for s in states]
        elif self.batch_first:
            input = input.transpose(0, 1)
        expected = self._expected_hidden(input.size(1))
        if states is None:
            states = [_C.zeros(expected, dtype=input.dtype, device=input.device)
                      for _ in range(2 if self.mode == "LSTM" else 1)]
        else:
            if len(states) == 1:
                self._check_hidden(states[0], expected)
            else:
                self._check_hidden(states[0], expected, "Expected hidden[0] size {}, got {}")
                self._check_hidden(states[1], expected, "Expected hidden[1] size {}, got {}")
        return input, states, batched

    def _run(self, x, states):
        """The layer/direction/time loops: returns (output [T, N, dirs*H], final states)."""
        directions = 2 if self.bidirectional else 1
        T = x.size(0)
        finals = [[] for _ in states]
        for layer in range(self.num_layers):
            outputs = []
            for d in range(directions):
                w_ih, w_hh, b_ih, b_hh = self._layer_weights(layer, d)
                idx = layer * directions + d
                carry = [s[idx] for s in states]
                x_proj = F.linear(x, w_ih, b_ih)  # all time steps at once
                steps = [None] * T
                for t in (range(T - 1, -1, -1) if d == 1 else range(T)):
                    xt = x_proj[t]
                    if self.mode == "LSTM":
                        carry = list(_lstm_step(xt, carry[0], carry[1], w_hh, b_hh))
                    elif self.mode == "GRU":
                        carry = [_gru_step(xt, carry[0], w_hh, b_hh)]
                    else:
                        carry = [_rnn_step(xt, carry[0], w_hh, b_hh, self.mode == "RNN_RELU")]
                    steps[t] = carry[0]
                for f, c in zip(finals, carry):
                    f.append(c)
                outputs.append(_C.stack(steps))
            x = outputs[0] if directions == 1 else _C.cat(outputs, dim=2)
            if self.dropout > 0 and self.training and layer < self.num_layers - 1:
                x = F.dropout(x, self.dropout, True)
        return x, [_C.stack(f) for f in finals]

    def forward(self, input, hx=None):
        """(output, h_n) (RNN and GRU; LSTM's returns (output, (h_n, c_n)))."""
        output, finals = self._forward_states(input, None if hx is None else [hx])
        return output, finals[0]

    def _forward_states(self, input, states):
        """(output, final states) for the initial ``states`` (a list, or None for zeros)."""
        if isinstance(input, PackedSequence):
            return self._forward_packed(input, states)
        x, states, batched = self._prepare(input, states)
        output, finals = self._run(x, states)
        return self._finish(output, finals, batched)

    def _step(self, x_proj, carry, w_hh, b_hh):
        """One time step of the recurrence: the new states (h, or h and c for LSTM) as a list."""
        if self.mode == "LSTM":
            return list(_lstm_step(x_proj, carry[0], carry[1], w_hh, b_hh))
        if self.mode == "GRU":
            return [_gru_step(x_proj, carry[0], w_hh, b_hh)]
        return [_rnn_step(x_proj, carry[0], w_hh, b_hh, self.mode == "RNN_RELU")]

    def _forward_packed(self, packed, states):
        """(PackedSequence output, final states) for a PackedSequence input: the initial states
        are taken in the batch's original order (permuted by sorted_indices) and the final ones,
        each sequence's state after its own last step, returned in it (unsorted_indices)."""
        data, batch_sizes, sorted_indices, unsorted_indices = packed
        sizes = [int(b) for b in batch_sizes.tolist()]
        expected = self._expected_hidden(sizes[0])
        if states is None:
            states = [_C.zeros(expected, dtype=data.dtype, device=data.device)
                      for _ in range(2 if self.mode == "LSTM" else 1)]
        elif sorted_indices is not None:
            states = [s.index_select(1, sorted_indices) for s in states]
        if data.dim() != 2:
            raise RuntimeError(f"input must have 2 dimensions, got {data.dim()}")
        if data.size(-1) != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                               f"got {data.size(-1)}")
        if len(states) == 1:
            self._check_hidden(states[0], expected)
        else:
            self._check_hidden(states[0], expected, "Expected hidden[0] size {}, got {}")
            self._check_hidden(states[1], expected, "Expected hidden[1] size {}, got {}")
        output, finals = self._run_packed(data, sizes, states)
        if unsorted_indices is not None:
            finals = [f.index_select(1, unsorted_indices) for f in finals]
        return PackedSequence(output, batch_sizes, sorted_indices, unsorted_indices), finals

    def _run_packed(self, x, sizes, states):
        """The layer/direction loops over packed ``x`` [N, C] whose time step t is the
        ``sizes[t]`` rows after the previous steps' rows: (output [N, dirs*H], final states)."""
        directions = 2 if self.bidirectional else 1
        finals = [[] for _ in states]
        for layer in range(self.num_layers):
            outputs = []
            for d in range(directions):
                w_ih, w_hh, b_ih, b_hh = self._layer_weights(layer, d)
                idx = layer * directions + d
                run = self._packed_backward if d == 1 else self._packed_forward
                out, carry = run(F.linear(x, w_ih, b_ih), sizes, [s[idx] for s in states], w_hh, b_hh)
                for f, c in zip(finals, carry):
                    f.append(c)
                outputs.append(out)
            x = outputs[0] if directions == 1 else _C.cat(outputs, dim=1)
            if self.dropout > 0 and self.training and layer < self.num_layers - 1:
                x = F.dropout(x, self.dropout, True)
        return x, [_C.stack(f) for f in finals]

    def _packed_forward(self, x_proj, sizes, carry, w_hh, b_hh):
        """Steps 0, 1, ... of one direction: each step runs on its first sizes[t] rows; the rows
        of the sequences that just ended are set aside as their final states."""
        steps, done = [], []
        offset, last = 0, sizes[0]
        for size in sizes:
            if size < last:
                done.append([c[size:last] for c in carry])
                carry = [c[:size] for c in carry]
                last = size
            carry = self._step(x_proj[offset:offset + size], carry, w_hh, b_hh)
            steps.append(carry[0])
            offset += size
        done.append(carry)
        finals = [_C.cat([part[i] for part in reversed(done)]) for i in range(len(carry))]
        return _C.cat(steps), finals

    def _packed_backward(self, x_proj, sizes, initial, w_hh, b_hh):
        """The last step down to step 0 of the reverse direction: each sequence starts from its
        initial state at its own last step, joining the batch when the step reaches it."""
        steps = [None] * len(sizes)
        offset, last = x_proj.size(0), sizes[-1]
        carry = [c[:last] for c in initial]
        for t in range(len(sizes) - 1, -1, -1):
            size = sizes[t]
            if size > last:
                carry = [_C.cat([c, i[last:size]]) for c, i in zip(carry, initial)]
                last = size
            offset -= size
            carry = self._step(x_proj[offset:offset + size], carry, w_hh, b_hh)
            steps[t] = carry[0]
        return _C.cat(steps), carry

    def _finish(self, output, finals, batched):
        if not batched:
            return output.squeeze(1), [f.squeeze(1) for f in finals]
        if self.batch_first:
            output = output.transpose(0, 1)
        return output, finals


class RNN(RNNBase):
    """Elman RNN: h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh) (or relu)."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if len(args) > 3:
            nonlinearity = args[3]
            args = args[:3] + args[4:]
        if nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__(mode, *args, **kwargs)
        self.nonlinearity = nonlinearity


class LSTM(RNNBase):
    """Long short-term memory; forward(input, (h_0, c_0)) -> (output, (h_n, c_n)). Gates in
    the weights' rows: input, forget, cell, output."""

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def forward(self, input, hx=None):
        output, finals = self._forward_states(input, None if hx is None else list(hx))
        return output, (finals[0], finals[1])


class GRU(RNNBase):
    """Gated recurrent unit; gates in the weights' rows: reset, update, new."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)


class RNNCellBase(Module):
    """What the cells share: weight_ih [G*H, input], weight_hh [G*H, H], bias_ih, bias_hh."""

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(_C.empty((num_chunks * hidden_size, input_size), **kw))
        self.weight_hh = Parameter(_C.empty((num_chunks * hidden_size, hidden_size), **kw))
        if bias:
            self.bias_ih = Parameter(_C.empty(num_chunks * hidden_size, **kw))
            self.bias_hh = Parameter(_C.empty(num_chunks * hidden_size, **kw))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _prepare(self, input, states):
        if input.dim() not in (1, 2):
            raise ValueError(f"{type(self).__name__}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        for s in states or ():
            if s.dim() not in (1, 2):
                raise ValueError(f"{type(self).__name__}: Expected hidden to be 1D or 2D, got {s.dim()}D instead")
        batched = input.dim() == 2
        if not batched:
            input = input.unsqueeze(0)
        if states is None:
            zeros = _C.zeros((input.size(0), self.hidden_size), dtype=input.dtype, device=input.device)
            states = [zeros] * (2 if isinstance(self, LSTMCell) else 1)
        elif not batched:
            states = [s.unsqueeze(0) for s in states]
        return input, states, batched


class RNNCell(RNNCellBase):
    """One Elman RNN step: h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh) (or relu)."""

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        x, (h,), batched = self._prepare(input, None if hx is None else [hx])
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        h = _rnn_step(F.linear(x, self.weight_ih, self.bias_ih), h, self.weight_hh, self.bias_hh,
                      self.nonlinearity == "relu")
        return h if batched else h.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step: forward(input, (h, c)) -> (h', c')."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        x, (h, c), batched = self._prepare(input, None if hx is None else list(hx))
        h, c = _lstm_step(F.linear(x, self.weight_ih, self.bias_ih), h, c, self.weight_hh, self.bias_hh)
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """One GRU step."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        x, (h,), batched = self._prepare(input, None if hx is None else [hx])
        h = _gru_step(F.linear(x, self.weight_ih, self.bias_ih), h, self.weight_hh, self.bias_hh)
        return h if batched else h.squeeze(0)
