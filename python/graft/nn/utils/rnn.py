"""graft.nn.utils.rnn: variable-length batches for the recurrent layers, as torch.nn.utils.rnn.

A PackedSequence holds the time steps of a batch of sequences sorted by decreasing length,
time-major: ``data`` has the ``batch_sizes[0]`` first elements of step 0, then the
``batch_sizes[1]`` first elements of step 1, and so on. Packing and padding are index_select
gathers over graft tensors, so gradients flow through them as through any other graft op."""
from collections import namedtuple
from collections.abc import Iterable

from ... import _C

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pad_packed_sequence", "pad_sequence",
           "unpad_sequence", "pack_sequence", "unpack_sequence"]

_PackedSequenceBase = namedtuple("_PackedSequenceBase", ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])

_BATCH_SIZES_ON_CPU = (
    "batch_sizes should always be on CPU. Instances of PackedSequence should never be created manually. They should "
    "be instantiated by functions like pack_sequence and pack_padded_sequences in nn.utils.rnn. "
    "https://pytorch.org/docs/stable/nn.html#torch.nn.utils.rnn.pack_sequence")
_NOT_SORTED = (
    "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You can pass "
    "`enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to sidestep this requirement if you do not "
    "need ONNX exportability.")
_NOT_POSITIVE = ("Length of all samples has to be greater than 0, but found an element in 'lengths' that is <= 0")


def _bind(optional, fn):
    return None if optional is None else fn(optional)


class PackedSequence(_PackedSequenceBase):
    """A packed batch of variable-length sequences: the named tuple (data, batch_sizes,
    sorted_indices, unsorted_indices) that the recurrent layers take and return.

    ``data`` holds the time steps of all sequences, time-major, the sequences sorted by
    decreasing length; ``batch_sizes`` (an int64 CPU tensor) how many sequences have each time
    step; ``sorted_indices`` the original batch position of each sorted sequence (None when the
    batch was already sorted) and ``unsorted_indices`` its inverse permutation. Built by
    pack_padded_sequence and pack_sequence rather than by hand; ``PackedSequence(data,
    batch_sizes, sorted_indices)`` computes unsorted_indices, and ``PackedSequence((data,
    batch_sizes))`` is accepted too."""

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is not None:
            if batch_sizes.device.type != "cpu":
                raise ValueError(_BATCH_SIZES_ON_CPU)
        else:
            assert isinstance(data, (list, tuple)) and len(data) == 2
            data, batch_sizes = data
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        """Converts ``data`` as Tensor.to(*args, **kwargs) does and moves the index tensors to
        its device (batch_sizes stays on the CPU); returns ``self`` when ``data`` is unchanged.
        Options such as non_blocking apply to the index tensors only when given by keyword."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        kwargs = {k: v for k, v in kwargs.items() if k not in ("device", "dtype")}
        sorted_indices = _bind(self.sorted_indices, lambda t: t.to(data.device, **kwargs))
        unsorted_indices = _bind(self.unsorted_indices, lambda t: t.to(data.device, **kwargs))
        return type(self)(data, self.batch_sizes, sorted_indices, unsorted_indices)

    def cuda(self, *args, **kwargs):
        """This packed sequence on a CUDA device (the current one unless the arguments name one)."""
        probe = _C.empty(0, dtype=self.data.dtype, device=self.data.device).to(*args, **kwargs)
        if probe.is_cuda:
            return self.to(*args, **kwargs)
        return self.to(*args, device="cuda", **kwargs)

    def cpu(self, *args, **kwargs):
        """This packed sequence on the CPU."""
        probe = _C.empty(0, dtype=self.data.dtype, device=self.data.device).to(*args, **kwargs)
        if probe.device.type == "cpu":
            return self.to(*args, **kwargs)
        return self.to(*args, device="cpu", **kwargs)

    def double(self):
        """``data`` as float64."""
        return self.to(dtype=_C.float64)

    def float(self):
        """``data`` as float32."""
        return self.to(dtype=_C.float32)

    def half(self):
        """``data`` as float16."""
        return self.to(dtype=_C.float16)

    def long(self):
        """``data`` as int64."""
        return self.to(dtype=_C.int64)

    def int(self):
        """``data`` as int32."""
        return self.to(dtype=_C.int32)

    def short(self):
        """``data`` as int16."""
        return self.to(dtype=_C.int16)

    def char(self):
        """``data`` as int8."""
        return self.to(dtype=_C.int8)

    def byte(self):
        """``data`` as uint8."""
        return self.to(dtype=_C.uint8)

    @property
    def is_cuda(self):
        """Whether ``data`` is on a CUDA device."""
        return self.data.is_cuda

    def is_pinned(self):
        """Whether ``data`` is in pinned host memory (never, where graft has no pinned memory)."""
        is_pinned = getattr(self.data, "is_pinned", None)
        return bool(is_pinned()) if is_pinned is not None else False


def invert_permutation(permutation):
    """The inverse of the 1-D index ``permutation`` (``out[permutation[i]] == i``), or None for None."""
    if permutation is None:
        return None
    return _C.argsort(permutation)


def _lengths_tensor(lengths):
    if isinstance(lengths, _C.Tensor):
        return lengths.to(dtype=_C.int64)
    return _C.as_tensor(lengths, dtype=_C.int64)


def _check_lengths(input, lengths):
    """The checks of packing, in PyTorch's order; returns the batch size."""
    if lengths.dim() != 1 or lengths.device.type != "cpu":
        raise RuntimeError(f"'lengths' argument should be a 1D CPU int64 tensor, but got {lengths.dim()}D "
                           f"{lengths.device} Long tensor")
    batch_size = input.size(1)
    if input.numel() == 0:
        raise RuntimeError("Cannot pack empty tensors.")
    if lengths.size(0) != batch_size:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got {lengths.size(0)} "
                           f"(batch_size={batch_size})")
    values = lengths.tolist()
    if values[-1] <= 0:
        raise RuntimeError(_NOT_POSITIVE)
    if any(later > earlier for earlier, later in zip(values, values[1:])):
        raise RuntimeError(_NOT_SORTED)
    return batch_size


def _pack(input, lengths, batch_first):
    """(data, batch_sizes) of the [T, B, *] (or [B, T, *]) ``input`` for sorted ``lengths``."""
    batch_size = _check_lengths(input.transpose(0, 1) if batch_first else input, lengths)
    steps = input.size(1) if batch_first else input.size(0)
    t = _C.arange(steps).unsqueeze(1)
    b = _C.arange(batch_size).unsqueeze(0)
    position = b * steps + t if batch_first else t * batch_size + b  # the row of input.reshape(-1, *)
    index = position[t < lengths.unsqueeze(0)]  # time-major: step 0 of every sequence, then step 1, ...
    batch_sizes = (_C.arange(int(lengths[0])).unsqueeze(1) < lengths.unsqueeze(0)).sum(1)
    rows = input.reshape((-1,) + tuple(input.shape[2:]))
    return rows.index_select(0, index.to(input.device)), batch_sizes


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Packs the padded batch ``input`` ([T, B, *], or [B, T, *] with batch_first) of sequences
    of the given ``lengths`` (a list or a 1-D int64 CPU tensor) into a PackedSequence.

    With enforce_sorted the lengths must be in decreasing order; otherwise the batch is sorted
    by length first and the permutation kept in the result's sorted_indices."""
    lengths = _lengths_tensor(lengths)
    sorted_indices = None
    if not enforce_sorted:
        lengths, sorted_indices = _C.sort(lengths, descending=True, stable=True)
        sorted_indices = sorted_indices.to(input.device)
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    data, batch_sizes = _pack(input, lengths, batch_first)
    return PackedSequence(data, batch_sizes, sorted_indices, None)


def _gather_padded(rows, index, padding_value):
    """``rows`` [N, *] gathered at ``index`` (any shape), positions holding N getting ``padding_value``."""
    rest = tuple(rows.shape[1:])
    padding = rows.new_full((1,) + rest, padding_value)
    flat = index.reshape(-1).to(rows.device)
    return _C.cat([rows, padding]).index_select(0, flat).reshape(tuple(index.shape) + rest)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """Unpacks the PackedSequence ``sequence`` into (padded, lengths): ``padded`` is
    [T, B, *] ([B, T, *] with batch_first), T the longest length or ``total_length``, padded
    with ``padding_value``; ``lengths`` (int64) the length of each sequence. Both are in the
    batch's original order, as it was given to pack_padded_sequence or pack_sequence."""
    batch_sizes = sequence.batch_sizes
    max_seq_length = batch_sizes.size(0)
    if total_length is not None:
        if total_length < max_seq_length:
            raise ValueError("Expected total_length to be at least the length of the longest sequence in input, but "
                             f"got total_length={total_length} and max sequence length being {max_seq_length}")
        max_seq_length = total_length
    data = sequence.data
    batch_size = int(batch_sizes[0])
    lengths = (batch_sizes.unsqueeze(0) > _C.arange(batch_size).unsqueeze(1)).sum(1)
    offsets = _C.cumsum(batch_sizes, 0) - batch_sizes
    extra = max_seq_length - offsets.size(0)
    if extra > 0:
        offsets = _C.cat([offsets, _C.zeros(extra, dtype=_C.int64)])
    t = _C.arange(max_seq_length).unsqueeze(1)
    index = offsets.unsqueeze(1) + _C.arange(batch_size).unsqueeze(0)
    index = _C.where(t < lengths.unsqueeze(0), index, data.size(0))  # [T, B]; N: padding
    padded = _gather_padded(data, index.t() if batch_first else index, padding_value)
    unsorted_indices = sequence.unsorted_indices
    if unsorted_indices is not None:
        batch_dim = 0 if batch_first else 1
        return padded.index_select(batch_dim, unsorted_indices), lengths[unsorted_indices.cpu()]
    return padded, lengths


def _broadcast_to_rows(sequence, trailing):
    """``sequence`` broadcast to [len, *trailing], as copying it into the padded output would."""
    target = (sequence.size(0),) + trailing
    if tuple(sequence.shape) == target:
        return sequence
    shape = tuple(sequence.shape)
    if len(shape) <= len(target):
        for i in range(1, len(shape) + 1):
            if shape[-i] != target[-i] and shape[-i] != 1:
                raise RuntimeError(f"The size of tensor a ({target[-i]}) must match the size of tensor b "
                                   f"({shape[-i]}) at non-singleton dimension {len(target) - i}")
    return sequence.expand(target)


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stacks the [L_i, *] tensors ``sequences`` into one [T, B, *] tensor ([B, T, *] with
    batch_first), T the longest L_i, filling the rest with ``padding_value`` after each
    sequence (padding_side='right') or before it ('left'). The result has the dtype, device
    and trailing dimensions of the first sequence."""
    if not isinstance(sequences, Iterable):
        raise RuntimeError(f"pad_sequence: Expected iterable for input sequences, but got arg of type: "
                           f"{type(sequences)}")
    sequences = tuple(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    first = sequences[0]
    trailing = tuple(first.shape[1:])
    lengths = [s.size(0) for s in sequences]
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    rows = [_broadcast_to_rows(s.to(device=first.device, dtype=first.dtype), trailing) for s in sequences]
    max_len = max(lengths)
    lengths_t = _C.as_tensor(lengths, dtype=_C.int64).unsqueeze(0)
    offsets = _C.cumsum(lengths_t, 1) - lengths_t
    t = _C.arange(max_len).unsqueeze(1)
    start = max_len - lengths_t if padding_side == "left" else _C.zeros_like(lengths_t)
    valid = (t >= start) & (t < start + lengths_t)
    index = _C.where(valid, offsets + t - start, sum(lengths))  # [T, B]; sum(lengths): padding
    return _gather_padded(_C.cat(rows), index.t() if batch_first else index, padding_value)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """Splits the padded batch ``padded_sequences`` ([T, B, *], or [B, T, *] with batch_first)
    into the list of its sequences, the i-th cut to ``lengths[i]`` steps. The input is not
    modified."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [sequence[:max(int(length), 0)] for sequence, length in zip(padded_sequences, lengths)]


def pack_sequence(sequences, enforce_sorted=True):
    """Packs the list of [L_i, *] tensors ``sequences`` into a PackedSequence (pad_sequence then
    pack_padded_sequence); with enforce_sorted they must be in decreasing order of length."""
    lengths = _C.as_tensor([v.size(0) for v in sequences], dtype=_C.int64)
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """The list of the sequences of the PackedSequence ``packed_sequences``, in their original order."""
    padded_sequences, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded_sequences, lengths, batch_first=True)
