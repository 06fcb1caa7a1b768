"""The layout of a result the CPU kernels allocate: the strides torch's own op would give it.

torch's TensorIterator orders an output it allocates by its operands' strides (``_torch_layout``,
for leaky_relu and both backward ops), and torch's hardtanh allocates ``empty_like(self)`` first
(``_like_layout``); opsnn allocates C-contiguous results, so where torch's differ the kernels
allocate the result here and hand it to opsnn as ``out`` (docs/torch.md, decision 7). Apart
from the kernels because it is torch's allocation rules alone, a function of dtypes, shapes and
strides (which the memo, ``_memo``, keeps per call), read by the fake kernels (``_fake``) too.
"""

from __future__ import annotations

import torch
from torch._prims_common import is_non_overlapping_and_dense_or_false

from .._core.shape import broadcast_shape, contiguous_strides


def _dense(t: torch.Tensor) -> bool:
    """Non-overlapping and dense: the elements fill one block in some dim order (size-1 dims
    aside). A symbolic (torch.compile) shape goes to torch's own predicate, which answers False
    where the shape leaves it open rather than guard (and recompile) on it; it costs ~7 us."""
    sizes, strides = tuple(t.shape), t.stride()
    if any(isinstance(v, torch.SymInt) for v in sizes + strides):
        return is_non_overlapping_and_dense_or_false(t)
    if 0 in sizes:  # c10 counts an empty tensor dense (and contiguous)
        return True
    span = 1
    for stride, size in sorted((st, sz) for sz, st in zip(sizes, strides) if sz != 1):
        if stride != span:
            return False
        span *= size
    return True


def _iteration_order(shape, tensors) -> list[int]:
    """The dims of ``shape`` fastest first, as TensorIterator orders them for an output it
    allocates: an insertion sort by the operands' strides, the first operand that tells two dims
    apart deciding (a broadcast dim tells nothing; equal strides fall back to the smaller size
    first), C order where none does."""
    n = len(shape)
    strides = []
    for t in tensors:  # element strides over ``shape``, 0 on broadcast dims
        pad = n - t.dim()
        strides.append([0] * pad + [0 if size == 1 and shape[pad + i] != 1 else st
                                    for i, (size, st) in enumerate(zip(t.shape, t.stride()))])

    def should_swap(d0, d1) -> int:
        for st in strides:
            s0, s1 = st[d0], st[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return 1 if s0 > s1 else -1
            if shape[d0] > shape[d1]:
                return 1
        return 0

    perm = list(range(n - 1, -1, -1))
    for i in range(1, n):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            order = should_swap(perm[d0], perm[d1])
            if order > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif order < 0:
                break
    return perm


def _torch_layout(dtype: torch.dtype, *tensors: torch.Tensor) -> torch.Tensor | None:
    """An empty ``dtype`` result of the operands' broadcast shape with the strides torch's
    TensorIterator gives an output it allocates for these operands (``_torch_strides``), or None
    where that is C-contiguous (opsnn allocates it) or the shapes do not broadcast (opsnn's phase 1
    reports that). The kernel then walks inputs and result in memory order."""
    return _laid_out(_torch_strides(dtype, *tensors), tensors[0])


def _torch_strides(dtype: torch.dtype, *tensors: torch.Tensor) -> tuple | None:
    """How ``_torch_layout`` lays out the result, as ``_laid_out`` takes it (a function of the
    operands' dtypes, shapes and strides alone, which the CPU kernels' memo keeps): torch's
    TensorIterator order (in its operand order). Operands of one shape that are all contiguous,
    all channels_last, or all dense with one set of strides keep that layout; otherwise the dims
    are ordered as ``_iteration_order`` says (torch: TensorIteratorBase::reorder_dimensions and
    allocate_or_resize_outputs)."""
    # on CPU torch converts an operand of another dtype first (.to(dtype), laid out like
    # empty_like) and orders the dims by the converted operands
    tensors = [t if t.dtype == dtype else torch.empty_strided(t.shape, _like_strides(t), dtype=dtype, device="meta")
               for t in tensors]
    first = tensors[0]
    shape = tuple(first.shape)
    if all(t.shape == shape for t in tensors[1:]):
        if all(t.is_contiguous() for t in tensors):
            return None
        if all(t.is_contiguous(memory_format=torch.channels_last) for t in tensors):
            return _empty_channels_last, shape, None, dtype
        if all(t.stride() == first.stride() for t in tensors[1:]) and _dense(first):
            return _empty_strided, shape, tuple(first.stride()), dtype
    else:
        for t in tensors[1:]:
            shape = broadcast_shape(shape, tuple(t.shape))
            if shape is None:
                return None
    if len(shape) <= 1:
        return None
    perm = _iteration_order(shape, tensors)
    if perm == list(range(len(shape) - 1, -1, -1)):
        return None
    return _empty_strided, shape, tuple(_dense_strides(shape, perm, grow_by_size_one=True)), dtype


def _empty_channels_last(like: torch.Tensor, shape, strides, dtype: torch.dtype) -> torch.Tensor:
    return torch.empty(shape, dtype=dtype, device=like.device, memory_format=torch.channels_last)


def _empty_strided(like: torch.Tensor, shape, strides, dtype: torch.dtype) -> torch.Tensor:
    return torch.empty_strided(shape, strides, dtype=dtype, device=like.device)


def _new_empty_strided(like: torch.Tensor, shape, strides, dtype: torch.dtype) -> torch.Tensor:
    return like.new_empty_strided(shape, strides, dtype=dtype)


def _laid_out(layout: tuple | None, like: torch.Tensor) -> torch.Tensor | None:
    """The empty result a layout (``_torch_strides``, ``_like_strides_of``: how to make it, its
    shape, strides and dtype) describes, on the device of ``like`` (the first operand), or None
    for a C-contiguous one (opsnn allocates it)."""
    if layout is None:
        return None
    make, shape, strides, dtype = layout
    return make(like, shape, strides, dtype)


def _dense_strides(shape, perm, grow_by_size_one: bool) -> list[int]:
    """Dense strides with the dims laid out in ``perm`` order (fastest first). TensorIterator
    multiplies the running stride by every size (``grow_by_size_one``); infer_dense_strides
    (empty_like) only by sizes above 1."""
    strides, span = [0] * len(shape), 1
    for d in perm:
        strides[d] = span
        if grow_by_size_one or shape[d] > 1:
            span *= shape[d]
    return strides


def _like_strides(t: torch.Tensor) -> list:
    """The strides ``torch.empty_like(t)`` (preserve_format) gives, and ``t.to(dtype)`` on CPU:
    t's own where t is dense, else dense strides in t's dim order (ATen's infer_dense_strides:
    dims of size 0 or 1 take the running stride without growing it)."""
    shape = tuple(t.shape)
    if _dense(t):
        return list(t.stride())
    return _dense_strides(shape, _iteration_order(shape, [t]), grow_by_size_one=False)


def _like_layout(dtype: torch.dtype, self: torch.Tensor) -> torch.Tensor | None:
    """An empty ``dtype`` result laid out as ``torch.empty_like(self)``, which torch's hardtanh
    allocates before its out= kernel, or None where that is C-contiguous (opsnn allocates)."""
    return _laid_out(_like_strides_of(dtype, self), self)


def _like_strides_of(dtype: torch.dtype, self: torch.Tensor) -> tuple | None:
    """How ``_like_layout`` lays out the ``dtype`` result, as ``_laid_out`` takes it (a function
    of ``self``'s shape and strides alone)."""
    shape = tuple(self.shape)
    c_strides = list(contiguous_strides(shape))  # as c10's: a size-0 dim counts as 1
    # contiguous first: is_contiguous() decides a symbolic (torch.compile) shape without a guard
    if self.is_contiguous() and list(self.stride()) == c_strides:
        return None
    strides = _like_strides(self)
    return None if strides == c_strides else (_new_empty_strided, shape, tuple(strides), dtype)
