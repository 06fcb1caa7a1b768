"""The numba backend agrees with the NumPy reference backend bit for bit: every operator, dtype,
layout (contiguous, broadcast, strided, negative strides, 0-d, empty, 8-D) and special value,
through the Pythonic API (fused chain) and the aclnn API (recorded steps). Also: its float16 /
bfloat16 bit conversions against NumPy / ml_dtypes, the host launch, backend selection and
fallback, on-disk compile caching, and that importing opsnn compiles nothing."""

from __future__ import annotations

import gc
import itertools
import logging
import math
import subprocess
import sys

import numpy as np
import pytest

import cases
import opsnn
from cases import BF16, C64, C128, F16, F32, F64
from conftest import run_hardtanh, run_leaky, run_python
from opsnn import kernels
from opsnn._core import dtypes
from opsnn._core.executor import Step
from opsnn._core.tiling import ceil_div
from opsnn._core.dtypes import DataType

numba = pytest.importorskip("numba")
from opsnn.kernels import _numba_support as S  # noqa: E402
from opsnn.kernels import (  # noqa: E402
    host_launch,
    numba_backend,
    numba_codegen,
    parallelism,
    walker_source,
)

NAN_U = {F16: 0x7C00, BF16: 0x7F80}
# The walker-geometry tests (panels, permutations, reversed and stepped runs) take one dtype per
# element size: a walker's loops and gathers depend on the itemsize, and float16 adds its F16C
# body. bfloat16 differs from float16 only in the conversions, which the every-pattern tests
# check; it still runs every layout of LAYOUT_NAMES and the panels walker (gather and scatter,
# permuted inputs). Each dtype left out of these tests saves ~20 kernel compiles (~4 s each).
WALKER_DTYPES = [F32, F16, F64]


@pytest.fixture
def backend():
    """Run a callable under a named backend; restores the default afterwards."""
    saved = kernels.DEFAULT

    def run(name, fn, *args, **kwargs):
        kernels.set_default(name)
        try:
            return fn(*args, **kwargs)
        finally:
            kernels.set_default(saved)

    yield run
    kernels.set_default(saved)


def both(backend, fn, *args, **kwargs):
    """fn under numpy and under numba: the two results, compared bit for bit (NaN payloads too)."""
    ref = backend("numpy", fn, *args, **kwargs)
    got = backend("numba", fn, *args, **kwargs)
    cases.assert_bits_equal(got, ref, nan_payload=True, what=getattr(fn, "__name__", "call"))
    return got


# ---- the bit conversions ------------------------------------------------------------------------
# Not cache=True: numba's cache is keyed by this file alone, so a cached copy would keep testing an
# old _numba_support after that module changes.
@numba.njit
def _map16(fn_id, a, out):
    for i in range(a.size):
        if fn_id == 0:
            out[i] = S.h2f(a[i])
        elif fn_id == 1:
            out[i] = S.h2f_hw(a[i])
        else:
            out[i] = S.bf2f(a[i])


@numba.njit
def _narrow(a, o1, o2, o3, o4, o5):
    for i in range(a.size):
        o1[i] = S.f2h(a[i])
        o2[i] = S.f2h_hw(a[i])
        o3[i] = S.f2bf(a[i])
        o4[i] = S.f2bf_canonical(a[i])
        o5[i] = S.f2bf_computed(a[i])


@numba.njit
def _from64(a, o1, o2, o3):
    for i in range(a.size):
        o1[i] = S.h2d(np.uint16(i & 0xFFFF)) if i < 65536 else 0.0
        o2[i] = S.d2h(a[i])
        o3[i] = S.d2bf(a[i])


ALL16 = np.arange(65536, dtype=np.uint32).astype(np.uint16)


def _snan16(h, quiet):
    exp = 0x7C00 if quiet == 0x200 else 0x7F80
    return ((h & 0x7FFF) > exp) & ((h & quiet) == 0)


def test_widening_every_16_bit_pattern():
    for fn_id, ref in ((0, ALL16.view(F16).astype(F32)), (1, ALL16.view(F16).astype(F32)),
                       (2, ALL16.view(BF16).astype(F32))):
        got = np.empty(65536, F32)
        _map16(fn_id, ALL16, got)
        same = got.view(np.uint32) == ref.view(np.uint32)
        if fn_id == 1:  # the F16C instruction: exact but for signalling NaNs (quieted)
            assert same[~_snan16(ALL16, 0x200)].all()
        else:
            assert same.all()


@numba.njit
def _bf16_round_trip(a, out):
    for i in range(a.size):
        out[i] = S.f2bf(S.bf2f(a[i]))


def test_bf16_round_trip_is_exact_on_every_pattern():
    """Widening a bfloat16 and narrowing it back changes no bit, for every one of the 65,536
    patterns, signalling NaNs included (0x7F81 stays 0x7F81): what lets a kernel store a
    selected bfloat16 input as its own bits (DECISION 1: the pass branch copies grad's bits)."""
    out = np.empty(65536, np.uint16)
    _bf16_round_trip(ALL16, out)
    np.testing.assert_array_equal(out, ALL16)
    back = np.empty(65536, BF16)
    with np.errstate(invalid="ignore"):  # NumPy warns on casting NaNs
        dtypes.cast_into(back, ALL16.view(BF16).astype(F32))  # the NumPy backend's narrowing: the same
    np.testing.assert_array_equal(back.view(np.uint16), ALL16)


def _f32_sample() -> np.ndarray:
    """Every float32 with a 16-bit pattern in its top half, plus neighbours of every rounding
    boundary, random values, subnormals and NaN payloads."""
    rng = np.random.default_rng(7)
    top = ALL16.astype(np.uint32) << 16
    ties = np.concatenate([top + d for d in (0x7FFF, 0x8000, 0x8001, 0xFFFF, 1)])
    half_top = ((ALL16.astype(np.uint32) & 0x7FFF) << 13) + 0x38000000  # float16 grid in float32
    half_ties = np.concatenate([half_top + d for d in (0xFFF, 0x1000, 0x1001, 0x1FFF, 0x2000)])
    rand = rng.integers(0, 2**32, 1 << 20, dtype=np.uint64).astype(np.uint32)
    sub = rng.integers(0, 0x00800000, 1 << 14, dtype=np.uint32)
    u = np.concatenate([top, ties, half_ties, half_ties | 0x80000000, rand, sub, sub | 0x80000000,
                        np.array([0x7F800001, 0x7FBFFFFF, 0x7FC00000, 0xFF812345, 0x7F7FFFFF,
                                  0x477FF000, 0x477FEFFF, 0x33000000, 0x33000001], np.uint32)])
    return u.view(F32)


def test_narrowing_float32_to_16_bits():
    f = _f32_sample()
    outs = [np.empty(f.size, np.uint16) for _ in range(5)]
    _narrow(f, *outs)
    with np.errstate(all="ignore"):
        half = f.astype(F16).view(np.uint16)
        bf = np.empty(f.size, BF16)
        dtypes.cast_into(bf, f)
        bf_canonical = f.astype(BF16).view(np.uint16)
    u = f.view(np.uint32)
    snan = ((u & 0x7FFFFFFF) > 0x7F800000) & ((u & 0x00400000) == 0)
    np.testing.assert_array_equal(outs[0], half)
    np.testing.assert_array_equal(outs[1][~snan], half[~snan])
    np.testing.assert_array_equal(outs[2], bf.view(np.uint16))
    np.testing.assert_array_equal(outs[3], bf_canonical)
    # f2bf_computed, for arithmetic results, whose NaNs are quiet: equal to f2bf on those
    np.testing.assert_array_equal(outs[4][~snan], outs[2][~snan])
    assert (outs[4][snan] & 0x0040).all() and not (outs[2][snan & ((u & 0xFFFF) == 0)] & 0x0040).any()


def test_float64_conversions():
    rng = np.random.default_rng(3)
    u = rng.integers(0, 2**64, 1 << 18, dtype=np.uint64)
    e = rng.integers(0x3E0, 0x412, u.size, dtype=np.uint64)
    near = (u & np.uint64(0x800FFFFFFFFFFFFF)) | (e << np.uint64(52))
    ties = near & ~np.uint64((1 << 40) - 1)
    d = np.concatenate([u, near, ties, ALL16.view(F16).astype(F64).view(np.uint64),
                        np.array([0x7FF0000000000001, 0xFFF8000000000001, 0x7FF4000000000000],
                                 np.uint64)]).view(F64)
    h2d, d2h, d2bf = np.empty(d.size, F64), np.empty(d.size, np.uint16), np.empty(d.size, np.uint16)
    _from64(d, h2d, d2h, d2bf)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(h2d[:65536].view(np.uint64), ALL16.view(F16).astype(F64).view(np.uint64))
        np.testing.assert_array_equal(d2h, d.astype(F16).view(np.uint16))
        ref = np.empty(d.size, BF16)
        dtypes.cast_into(ref, d)
        np.testing.assert_array_equal(d2bf, ref.view(np.uint16))


@numba.njit
def _zero_unless(keep, a, out):
    for i in range(a.size):
        out[i] = S.zero_unless(keep[i], a[i])


@pytest.mark.parametrize("dt", [F32, F64, np.dtype(np.uint16), np.dtype(np.int8), np.dtype(np.int64)],
                         ids=str)
def test_zero_unless_keeps_bits_or_gives_zero_bits(dt):
    """The select HardtanhBackward lowers to: the value's bits (NaN payloads, -0.0) or all zero."""
    rng = np.random.default_rng(11)
    bits = rng.integers(0, 256, 4096 * dt.itemsize, dtype=np.uint8)
    a = bits.view(dt)
    keep = rng.integers(0, 2, a.size).astype(bool)
    got = np.empty_like(a)
    _zero_unless(keep, a, got)
    want = np.where(keep, a.view(f"u{dt.itemsize}"), 0)
    np.testing.assert_array_equal(got.view(f"u{dt.itemsize}"), want)


@numba.njit
def _select_bits(keep, a, s, out):
    for i in range(a.size):
        out[i] = S.select_bits(keep[i], a[i], a[i] * s)  # the shape LLVM 14 folded


@pytest.mark.parametrize("dt", [F32, F64], ids=str)
def test_select_bits_keeps_the_chosen_operands_bits(dt):
    """(a packaging breaker) numba 0.60's LLVM 14 folded `x if c else x * s` into
    `x * (1.0 if c else s)`, quieting a signalling NaN x the selection passes (LeakyReluBackward's
    0x7FA00001 came out 0x7FE00001). select_bits, the selection written under such an LLVM, keeps
    the chosen operand's bits (signalling NaNs, payloads, -0.0) on every numba."""
    rng = np.random.default_rng(12)
    a = rng.integers(0, 256, 4096 * dt.itemsize, dtype=np.uint8).view(dt).copy()
    u = f"u{dt.itemsize}"
    a.view(u)[:4] = [0x7FA00001, 0xFFA00001, 0x7F800001, 0x80000000] if dt == F32 else \
        [0x7FF4000000000001, 0xFFF4000000000001, 0x7FF0000000000001, 1 << 63]
    keep = rng.integers(0, 2, a.size).astype(bool)
    keep[:4] = True
    got = np.empty_like(a)
    _select_bits(keep, a, dt.type(0.5), got)
    with np.errstate(all="ignore"):
        want = np.where(keep, a.view(u), (a * dt.type(0.5)).view(u))
    np.testing.assert_array_equal(got.view(u), want)


def test_float_selections_are_written_as_bits_where_llvm_folds_them(monkeypatch):
    """Under an LLVM that folds a float select into arithmetic (before 20: numba 0.60 / 0.61) the
    element code selects with select_bits; numba 0.62 and later keep the plain select (their
    kernels are unchanged)."""
    from opsnn.kernels import numpy_backend
    from opsnn.ops.activation import leaky_relu_backward_kernel

    dag = numba_codegen.trace(leaky_relu_backward_kernel, numpy_backend.OPS, [F32, F32], {"negative_slope": F32})
    monkeypatch.setattr(numba_codegen, "selects_fold", lambda: True)
    assert numba_codegen.element_source(dag, (F32,)).lines[-1] == "e_2 = select_bits(e_0, x0, e_1)"
    monkeypatch.setattr(numba_codegen, "selects_fold", lambda: False)
    assert numba_codegen.element_source(dag, (F32,)).lines[-1] == "e_2 = (x0 if e_0 else e_1)"
    from llvmlite import binding

    monkeypatch.undo()
    assert numba_codegen.selects_fold() == (binding.llvm_version_info < (20,))


@numba.njit
def _transpose_block(src, src_start, src_stride, dst, dst_start, dst_stride, ahead):
    S.transpose_block(src, src_start, src_stride, dst, dst_start, dst_stride, ahead)


@numba.njit
def _transpose_block_half(src, src_start, src_stride, dst, dst_start, dst_stride, ahead):
    S.transpose_block_half(src, src_start, src_stride, dst, dst_start, dst_stride, ahead)


@pytest.mark.parametrize("half", [False, True], ids=["full", "half"])
@pytest.mark.parametrize("ahead", [0, -16 * 50, 10**6], ids=["no-prefetch", "prefetch", "prefetch-past-end"])
@pytest.mark.parametrize("dt", [np.dtype(np.uint16), F32, F64, np.dtype(np.int64)], ids=str)
def test_transpose_block_moves_bits(dt, ahead, half):
    """Bits moved exactly, L x L or L/2 x L/2 of them and nothing else; a prefetch (even of
    addresses past the array) changes nothing."""
    lanes = S.transpose_lanes(dt.itemsize) // (2 if half else 1)
    src = np.random.default_rng(5).integers(0, 256, 40 * 50 * dt.itemsize, dtype=np.uint8).view(dt)
    dst = np.zeros(40 * 50, dt)
    start = 7 + 50 * (lanes - 1)
    move = _transpose_block_half if half else _transpose_block
    move(src, start, -50, dst, 3, 40, ahead)  # a negative source stride: reversed columns
    i, k = np.arange(lanes)[:, None], np.arange(lanes)[None, :]
    want = np.zeros_like(dst)
    want[3 + i * 40 + k] = src[start - 50 * k + i]
    np.testing.assert_array_equal(dst.view(f"u{dt.itemsize}"), want.view(f"u{dt.itemsize}"))


@numba.njit
def _transpose_block_rows(src, src_start, src_stride, dst, starts, first, add, ahead):
    S.transpose_block_rows(src, src_start, src_stride, dst, starts, first, add, ahead)


@pytest.mark.parametrize("dt", [np.dtype(np.uint16), F32, F64], ids=str)
def test_transpose_block_rows_stores_each_row_where_the_table_says(dt):
    """The block of ``transpose_block``, its row i stored from ``starts[first + i] + add``: rows
    in any order and spacing (the table's entries before ``first`` unused)."""
    lanes = S.transpose_lanes(dt.itemsize)
    rng = np.random.default_rng(6)
    src = rng.integers(0, 256, 40 * 50 * dt.itemsize, dtype=np.uint8).view(dt)
    dst = np.zeros(lanes * 60 + 10, dt)
    starts = np.array([-1, -1] + [60 * int(p) for p in rng.permutation(lanes)], np.int64)
    _transpose_block_rows(src, 11, 50, dst, starts, 2, 3, 0)
    i, k = np.arange(lanes)[:, None], np.arange(lanes)[None, :]
    want = np.zeros_like(dst)
    want[starts[2 + i] + 3 + k] = src[11 + 50 * k + i]
    np.testing.assert_array_equal(dst.view(f"u{dt.itemsize}"), want.view(f"u{dt.itemsize}"))


def test_slices_merge_only_where_blocks_slice_by_slice_would_waste():
    """``merges_slices``: rows of 10 in 16- or 8-wide blocks merge (1.6x moved slice by slice),
    rows that are a multiple of the block, or of 100 (1.12x), keep their blocks; so do slices
    that do not continue the source rows, a single slice, far launches and tiles narrower than a
    block."""
    m = S.merges_slices
    assert m(10, 100, 10, 100, 0, 16) and m(10, 100, 10, 100, 0, 8) and m(5, 4, 5, 17, 0, 16)
    assert m(20, 10, 20, 100, 0, 16) and m(38, 10, 38, 100, 0, 16)      # 32 / 20 and 48 / 38 moved
    for nr in (16, 32, 48, 100):
        assert not m(nr, 10, nr, 100, 0, 16), nr
    assert not m(26, 10, 26, 100, 0, 16)                                 # 32 / 26 = 1.23x
    assert not m(10, 100, 12, 100, 0, 16) and not m(10, 1, 10, 100, 0, 16)
    assert not m(10, 100, 10, 100, 1, 16) and not m(10, 100, 10, 15, 0, 16) and not m(10, 1, 10, 100, 0, 8)

# (sr, si, nr, run, nseg, tile_cols, s3): transposed tiles of full and half blocks and too small
# for either, 2-4 interleaved rows (channels) and columns, a general and a reversed gather, slices
# side by side (s3 apart in the source), slices that continue the source rows (s3 == nr: blocks
# across the slices' borders, _merged_slices, where nr is no multiple of the block)
GATHER_TILES = [(1, 50, 16, 16, 1, 16, 0), (1, 50, 13, 21, 1, 24, 0), (1, 50, 5, 6, 1, 8, 0),
                (1, 50, 3, 2, 1, 2, 0), (1, 50, 1, 9, 1, 9, 0),
                (1, 2, 2, 30, 1, 32, 0), (1, 3, 3, 30, 1, 32, 0), (1, 4, 4, 30, 1, 32, 0),
                (1, 60, 20, 2, 1, 2, 0), (1, 60, 20, 3, 1, 3, 0), (1, 60, 9, 4, 1, 4, 0),
                (7, 3, 6, 11, 1, 12, 0), (1, -50, 17, 12, 1, 12, 0), (-3, 40, 10, 5, 1, 5, 0),
                (1, 50, 20, 10, 3, 10, 700), (1, 3, 3, 10, 2, 10, 40), (1, 60, 12, 3, 3, 3, 500),
                (5, 2, 4, 7, 2, 7, 100),
                (1, 300, 10, 20, 7, 20, 10), (1, 200, 5, 17, 4, 17, 5), (1, 130, 12, 9, 3, 9, 12),
                (1, -300, 10, 20, 7, 20, 10)]


@pytest.mark.parametrize("far", [0, 1], ids=["near", "far"])
@pytest.mark.parametrize("dt", [np.dtype(np.uint8), np.dtype(np.uint16), F32, F64, C128], ids=str)
def test_gather_tile_copies_every_element_of_the_tile_and_nothing_else(dt, far):
    """``_numba_support.gather_tile`` (the panels walker's gather) for every kind of tile:
    ``s[r * rs + sg * tile_cols + c] == a[g + sg * s3 + r * sr + c * si]``, bits exact, and the
    rest of the scratch untouched; 1- and 16-byte elements, which have no register transpose (2-byte
    ones travel as uint16, as the kernels pass them)."""
    rng = np.random.default_rng(8)
    a = rng.integers(0, 256, 6000 * dt.itemsize, dtype=np.uint8).view(dt)
    bits = f"u{dt.itemsize}" if dt.itemsize <= 8 else "V16"
    for sr, si, nr, run, nseg, tile_cols, s3 in GATHER_TILES:
        r, c, sg = np.arange(nr)[:, None, None], np.arange(run)[None, :, None], np.arange(nseg)[None, None, :]
        offsets = sg * s3 + r * sr + c * si
        g = 3000 - offsets.min() // 2 - offsets.max() // 2
        rs = nseg * tile_cols + 5
        s = np.zeros(nr * rs + 7, dt)
        S.gather_tile(a, g, sr, si, s3, nseg, s, rs, tile_cols, nr, run, far)
        want = np.zeros_like(s)
        want[(r * rs + sg * tile_cols + c).ravel()] = a[(g + offsets).ravel()]
        np.testing.assert_array_equal(s.view(bits), want.view(bits), err_msg=str((sr, si, nr, run, nseg)))


def _unpack(mask, lanes, per_lane) -> bool:
    """The mask of an x86 unpack (``punpckl/h{wd,dq,qdq}``): in each 128-bit lane, groups of u
    elements taken in turn from the two registers' low (or high) half of that lane."""
    for u in (1, 2, 4, 8):
        for half in (0, per_lane // 2):
            if u <= per_lane // 2 and all(
                    m == (k // per_lane * per_lane + half + k % per_lane // (2 * u) * u + k % u
                          + (k % per_lane // u % 2) * lanes) for k, m in enumerate(mask)):
                return True
    return False


def _whole_lanes(mask, per_lane) -> bool:
    """Every output lane is one source lane, in order (a lane permute)."""
    return all(m - m % per_lane == mask[k - k % per_lane] and m % per_lane == k % per_lane
               for k, m in enumerate(mask))


@pytest.mark.parametrize("vector_bytes", [16, 32, 64])
@pytest.mark.parametrize("itemsize", [2, 4, 8])
def test_transpose_stages_transpose_on_every_register_width(itemsize, vector_bytes, monkeypatch):
    """The shuffle plan of every block side a host of each register width would use (full and
    half blocks), run on (row, column) labels as LLVM's shufflevector defines it: register k ends
    up holding column k of the block in row order. Every shuffle is an unpack or moves whole 128-bit
    lanes (single-uop kinds; no element permute). The compiled test above covers this
    host's."""
    monkeypatch.setattr(S, "VECTOR_BYTES", vector_bytes)
    full = S.transpose_lanes(itemsize)
    assert full * itemsize == min(vector_bytes, 16 * itemsize)  # one register per row, <= 16 of them
    for lanes in (full, full // 2):
        per_lane = min(lanes, 16 // itemsize)  # elements in a 128-bit lane (or the register)
        rows = [[(r, c) for c in range(lanes)] for r in range(lanes)]
        stages = S.transpose_stages(lanes, itemsize)
        assert sum(len(stage) for stage in stages) * 2 == lanes * (lanes.bit_length() - 1)  # L log2 L
        for stage in stages:
            new = list(rows)
            for i, j, a, b, low, high in stage:
                for mask in (low, high):
                    assert _unpack(mask, lanes, per_lane) or _whole_lanes(mask, per_lane), mask
                both = rows[a] + rows[b]
                new[i], new[j] = [both[m] for m in low], [both[m] for m in high]
            rows = new
        assert rows == [[(r, c) for r in range(lanes)] for c in range(lanes)]


@numba.njit
def _stream_copy(dst, dst_start, src, n):
    S.stream_copy(dst, dst_start, src, n)
    S.store_fence()


@pytest.mark.parametrize("dt", [np.dtype(np.uint8), np.dtype(np.uint16), F32, F64, C128], ids=str)
def test_stream_copy_moves_bits(dt):
    """Non-temporal copy: every start within a cache line, lengths below and across a line, an
    address that is not a multiple of the itemsize (copied normally); nothing outside is touched."""
    src = np.random.default_rng(6).integers(0, 256, 300 * dt.itemsize, dtype=np.uint8).view(dt)
    raw = np.full(400 * dt.itemsize + 1, 0xA5, np.uint8)
    for shift in (0, 1) if dt.itemsize > 1 else (0,):
        for start in range(0, 80 // dt.itemsize + 2):
            for n in (0, 1, 7, 64 // dt.itemsize + 3, 300):
                dst = raw[shift:shift + 400 * dt.itemsize].view(dt)
                raw[:] = 0xA5
                want = dst.copy()
                want[start:start + n] = src[:n]
                _stream_copy(dst, start, src, n)
                np.testing.assert_array_equal(dst.view(np.uint8), want.view(np.uint8))


@pytest.mark.parametrize("src", [F16, BF16, F32, F64], ids=str)
@pytest.mark.parametrize("dst", [F16, BF16, F32, F64, C64, C128], ids=str)
def test_copy_kernel_casts_like_cast_into(src, dst):
    """The compiled Contiguous/Cast/ViewCopy step: every 16-bit pattern (or a float sample),
    through a strided source and a strided destination."""
    if src.itemsize == 2:
        a = ALL16.view(src)
    else:
        with np.errstate(all="ignore"):
            a = _f32_sample().astype(src) if src == F64 else _f32_sample()
        a = a[: 1 << 16]
    a = np.ascontiguousarray(a.reshape(256, -1).T)[:, ::-1]  # negative and transposed strides
    want = np.zeros(a.shape, dst)
    with np.errstate(all="ignore"):
        dtypes.cast_into(want, a)
    got = np.zeros((a.shape[1], a.shape[0]), dst).T
    numba_backend.copy(got, a)
    cases.assert_bits_equal(got, want, nan_payload=True, what=f"{src}->{dst}")


# ---- the operators: numba == numpy, bit for bit ---------------------------------------------------
LEAKY_DTYPES = [(F32, F32), (F16, F16), (BF16, BF16), (F64, F64), (F16, F32), (BF16, F16), (F64, F16)]
SLOPES = (0.01, -0.5, 0.0, -0.0, 2.0, np.inf, -np.inf)


@pytest.mark.parametrize("dts", LEAKY_DTYPES, ids=lambda d: "-".join(map(str, d)))
def test_leaky_special_values(backend, dts):
    g, x = cases.grid(*dts)
    g = np.concatenate([g, np.full((1, g.shape[1]), cases.signaling_nan(dts[0]), dts[0])])
    x = np.concatenate([x, x[:1]])
    for slope in SLOPES:
        both(backend, opsnn.leaky_relu_backward, g, x, slope)
    both(backend, opsnn.leaky_relu_backward, g, x, 0.2, True)


def _quiet_in(values, compute, out_dtype) -> np.ndarray:
    """``values`` widened to ``compute``, quieted by an IEEE add (a NaN keeps its sign and
    payload), narrowed to ``out_dtype`` as the kernels narrow: a NaN result's bits."""
    with np.errstate(invalid="ignore"):
        quiet = np.asarray(values).astype(compute) + compute.type(0)
    out = np.empty(quiet.shape, out_dtype)
    dtypes.cast_into(out, quiet)
    return cases.bits(out)


@pytest.mark.parametrize("dt", [F32, F16, BF16, F64], ids=str)
def test_nan_slope_with_nan_gradient_gives_one_of_the_two_nans(backend, dt):
    """A NaN slope times a NaN gradient (or, in the forward leaky_relu, a NaN self: a packaging
    breaker found NumPy keeping self's payload there, numba the slope's) has two NaN operands,
    and IEEE 754 (6.2.3) leaves open
    which one's payload the product carries; x86 returns the first operand's, and compilers
    reorder a multiply freely (NumPy's SIMD body and its scalar tail differ, numba's LLVM swaps
    operands to fold a load; torch's float32 kernel returns the slope's at some positions of an
    array and the gradient's at others). The contract:
    such an element is that gradient's quiet NaN or the slope's, on either backend, at every
    length and layout; every other element agrees bit for bit, payloads included."""
    compute = np.dtype(F64 if dt == F64 else F32)
    slope = cases.from_bits(0x7FC0_1234, F32)  # the slope is taken as float32 (DECISION 2)
    nans = [0x7E01, 0xFE01, 0x7D01, 0xFD01] if dt == F16 else None
    if dt != F16:
        top = {BF16: 0x7FC1, F32: 0x7FC1_2345, F64: 0x7FF8_0000_0001_2345}[dt]
        sig = {BF16: 0x7F81, F32: 0x7F81_2345, F64: 0x7FF0_0000_0001_2345}[dt]
        sign = 1 << (8 * dt.itemsize - 1)
        nans = [top, top | sign, sig, sig | sign]
    pattern = np.array([cases.from_bits(u, dt) for u in nans] + [-1.5, 0.0, np.inf, 2.0], dt)
    for n in (1, 3, 8, 15, 16, 17, 31, 33, 64, 100):
        for transposed in (False, True):
            shape = (n, 7) if transposed else (n,)
            g = np.resize(pattern, int(np.prod(shape))).reshape(shape)
            x = np.full(shape[::-1], -1.0, dt).T if transposed else np.full(shape, -1.0, dt)
            both_nan = np.isnan(g.astype(compute)).reshape(-1)
            allowed = (_quiet_in(g, compute, dt), _quiet_in(np.full(g.shape, slope), compute, dt))
            for op, args in ((opsnn.leaky_relu_backward, (g, x, slope)), (opsnn.leaky_relu, (g, slope))):
                results = [backend(name, op, *args) for name in ("numpy", "numba")]
                for got in results:
                    got_bits = cases.bits(got)
                    ok = (got_bits == allowed[0]) | (got_bits == allowed[1])
                    assert ok[both_nan].all(), (op.__name__, dt, n, transposed,
                                                [hex(v) for v in got_bits[both_nan & ~ok][:4]])
                cases.assert_bits_equal(results[1].reshape(-1)[~both_nan], results[0].reshape(-1)[~both_nan],
                                         nan_payload=True, what=f"{op.__name__} {dt} n={n} transposed={transposed}")


def test_bf16_products_round_on_every_gradient_pattern(backend):
    """A bfloat16 gradient times the float32 slope is narrowed without a NaN patch
    (``_numba_support.f2bf_rounding``): every one of the 65,536 gradient patterns, through
    LeakyReluBackward (self negative, so every element takes the product; and a self of every
    sign) and LeakyRelu, against slopes whose products round, tie, overflow, underflow to
    subnormals and zero, infinite slopes (0 x inf is the default NaN) and NaN slopes with payload
    bits in their low half (signalling too), bit for bit with NumPy but where a NaN gradient
    meets a NaN slope (either payload, see the test above)."""
    g = ALL16.view(BF16).reshape(256, 256)
    negative = np.full(g.shape, -1.0, BF16)
    mixed = cases.filled(g.shape, BF16, 11, cases.self_specials(BF16))
    nan_slopes = [cases.from_bits(u, F32) for u in (0x7FC0_0001, 0xFFC0_ABCD, 0x7F80_0001, 0x7FBF_FFFF)]
    for slope in [0.01, -0.3, 1.00390625, 3e38, 1e-38, 1e-45, np.inf, -np.inf, 0.0, -0.0, *nan_slopes]:
        grad_nan = np.isnan(g.astype(F32))
        for self_ in (negative, mixed):
            results = [backend(name, opsnn.leaky_relu_backward, g, self_, slope) for name in ("numpy", "numba")]
            keep = ~grad_nan if np.isnan(slope) else np.ones(g.shape, bool)
            cases.assert_bits_equal(results[1][keep], results[0][keep], nan_payload=True,
                                    what=f"leaky_relu_backward slope {slope!r}")
        if not np.isnan(slope):
            both(backend, opsnn.leaky_relu, g, slope)
            both(backend, opsnn.leaky_relu_backward, g.T, negative, slope)


@pytest.mark.parametrize("self_dt, grad_dt", [(F16, F16), (BF16, BF16), (F16, F32), (BF16, F64)], ids=str)
def test_sign_tests_on_half_bits_cover_every_pattern(backend, self_dt, grad_dt):
    """A float16/bfloat16 self that is only widened has its ``self > 0`` made on its bits
    (``numba_codegen._sign_test``): every one of the 65,536 patterns (zeros, subnormals, infs,
    quiet and signalling NaNs of both signs) selects as the float compare does, in the
    LeakyReluBackward kernel (self only compared) and LeakyRelu (self also the value); a
    transposed self too (panels walker, bits through the scratch tile)."""
    x = ALL16.view(self_dt).reshape(256, 256)
    g = cases.filled(x.shape, grad_dt, 3)
    for slope in (0.25, -0.0):
        both(backend, opsnn.leaky_relu_backward, g, x, slope)
        both(backend, opsnn.leaky_relu_backward, g, x.T, slope)
    both(backend, opsnn.leaky_relu, x, 0.125)


@pytest.mark.parametrize("dt", [BF16, F16], ids=str)
def test_hardtanh_selects_bits_of_every_pattern(backend, dt):
    """Hardtanh's clamp stores one of self, min and max: for bfloat16 it selects their bits
    (``numba_codegen._selects_bf16_input``) instead of rounding a float32. Every one of the 65,536
    self patterns, contiguous and transposed, with bounds that are and are not bfloat16 values,
    signed zeros, infinite and NaN bounds, into a bfloat16 out and (rounding kept) a float16 one."""
    x = ALL16.view(dt).reshape(256, 256)
    for lo, hi in ((-1.0, 1.0), (-0.3, 0.7), (-0.0, 0.0), (0.0, -0.0), (-np.inf, np.inf), (np.nan, 2.0),
                   (-2.0, np.nan), (1e-40, 3e38)):
        both(backend, opsnn.hardtanh, x, lo, hi)
        both(backend, opsnn.hardtanh, x.T, lo, hi)
    both(backend, opsnn.hardtanh, x, -0.5, 0.5, out=np.zeros_like(x))


def _bound_scalars(dt) -> np.ndarray:
    """float32 values to compare halves with: every 97th half value, the float32 neighbours of
    each and the midpoints to the next half (ties, below and above), signed zeros, infinities,
    NaNs, float32 subnormals, values past the half's range, the largest float32s."""
    halves = ALL16[::97].view(dt).astype(F32)
    halves = halves[~np.isnan(halves)]
    nxt = np.nextafter(halves.astype(dt), np.array(np.inf, dt)).astype(F32)
    mids = ((halves.astype(F64) + nxt.astype(F64)) / 2).astype(F32)
    near = [np.nextafter(v, np.float32(d)) for v in (halves, mids) for d in (np.inf, -np.inf)]
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1e-45, -1e-45, 1e-40, 65504.0,
                         65519.99, 65520.0, -65520.0, 1e5, -1e5, 3.4e38, -3.4e38, 1e-8, -1e-8], F32)
    return np.concatenate([halves, mids, *near, specials]).astype(F32)


@pytest.mark.parametrize("dt", [F16, BF16], ids=str)
def test_half_bit_compares_match_float32_compares(dt):
    """``bits_le/ge/lt/gt(h, half_bound(s, ...))`` (``numba_codegen._bits_compare``) answers as
    the float32 compare of the widened half with ``s``: all 65,536 patterns (signed zeros,
    subnormals, infinities, both NaN kinds) against ~4,000 float32 values (_bound_scalars)."""
    top = 0x7C00 if dt == F16 else 0x7F80
    # the intrinsic and predicate code the code generator emits for each ufunc
    ops = {ufunc: (getattr(S, fn), code, getattr(np, ufunc))
           for ufunc, (fn, code, _) in numba_codegen._BITS_COMPARES.items()}

    def compiled(fn, code, bf16):
        half_bound = S.half_bound

        @numba.njit
        def compare(h, scalars, out):
            for i in range(scalars.size):
                bound = half_bound(scalars[i], code, bf16)
                for j in range(h.size):
                    out[i, j] = fn(h[j], bound, np.uint16(top))
        return compare

    kernels_ = {name: compiled(fn, code, dt == BF16) for name, (fn, code, _) in ops.items()}
    widened = ALL16.view(dt).astype(F32)
    scalars = _bound_scalars(dt)
    for name, (_, _, expected) in ops.items():
        got = np.empty((scalars.size, ALL16.size), np.bool_)
        kernels_[name](ALL16, scalars, got)
        want = expected(widened[None, :], scalars[:, None])
        bad = np.argwhere(got != want)
        assert bad.size == 0, [(name, hex(ALL16[j]), float(scalars[i])) for i, j in bad[:5]]


@pytest.mark.parametrize("dt", [F16, BF16], ids=str)
def test_hardtanh_backward_bounds_on_every_pattern(backend, dt):
    """HardtanhBackward's bound tests on a float16/bfloat16 self run on its bits
    (``_bits_compare``): every self pattern, contiguous and transposed, against bounds that are and
    are not half values, signed zeros, infinite, NaN and crossed bounds, float32-only values."""
    x = ALL16.view(dt).reshape(256, 256)
    g = cases.filled(x.shape, dt, 7, cases.grad_specials(dt))
    for lo, hi in ((-1.0, 1.0), (-0.3, 0.7), (-0.0, 0.0), (0.0, -0.0), (-np.inf, np.inf), (np.nan, 2.0),
                   (-2.0, np.nan), (1e-40, 3e38), (2.0, -2.0), (-65520.0, 65519.0), (1.00390625, 1.0078125)):
        both(backend, opsnn.hardtanh_backward, g, x, lo, hi)
        both(backend, opsnn.hardtanh_backward, g, x.T, lo, hi)


@pytest.mark.parametrize("dt", [F16, BF16, F32], ids=str)
def test_in_place_equals_out_of_place_on_every_pattern(backend, dt):
    """In place (out is an input's own memory) the flat walker computes each tile into a scratch
    row and copies it into out (LLVM's vectorized loop would fall back to scalar code there): the
    same bits as out of place and as the NumPy backend, for every 16-bit pattern (signalling NaNs
    included, whose tiles are recomputed from the untouched inputs), over several tiles."""
    if dt == F32:
        x = np.concatenate([cases.self_specials(dt), cases.filled((70000,), dt, 3)]).astype(dt)
    else:
        x = np.tile(ALL16, 2).view(dt)
    g = cases.filled(x.shape, dt, 5, cases.grad_specials(dt))
    calls = [(opsnn.leaky_relu, opsnn.leaky_relu_, (0.3,)), (opsnn.hardtanh, opsnn.hardtanh_, (-0.5, 2.0))]
    for forward, in_place, scalars in calls:
        want = backend("numba", forward, x, *scalars)
        for name in ("numpy", "numba"):
            y = x.copy()
            assert backend(name, in_place, y, *scalars) is y
            cases.assert_bits_equal(y, want, nan_payload=True, what=f"{in_place.__name__} ({name})")
    want = backend("numba", opsnn.leaky_relu_backward, g, x, 0.3)
    for name in ("numpy", "numba"):
        y = g.copy()
        assert backend(name, lambda: opsnn.leaky_relu_backward(y, x, 0.3, out=y)) is y
        cases.assert_bits_equal(y, want, nan_payload=True, what=f"leaky_relu_backward out=grad ({name})")
    assert_one = both(backend, opsnn.hardtanh, x, -0.5, 2.0)  # and the two backends agree out of place
    assert assert_one.shape == x.shape


@pytest.mark.parametrize("dt", [F32, F16, BF16], ids=str)
def test_hardtanh_special_values(backend, dt):
    for lo, hi in ((-1.0, 1.0), (-0.5, 0.7), (0.0, 6.0), (1.0, -1.0), (-np.inf, np.inf)):
        g, x = cases.grid(dt, dt, (lo, hi))
        snan = np.full((1, g.shape[1]), cases.signaling_nan(dt), dt)
        g = np.concatenate([g, snan, g[:2]])
        x = np.concatenate([x, x[:1], snan, -snan])  # a signalling NaN self passes grad too
        both(backend, opsnn.hardtanh_backward, g, x, lo, hi)


@pytest.mark.parametrize("dt", [F32, F16, BF16, F64], ids=str)
def test_every_input_one_broadcast_element(backend, dt):
    """Every input a single element seen through 0 strides (an expanded scalar, torch's
    ``t.expand(n)``): the screened inputs are all loop-invariant, so the kernel's NaN screen has
    no loop to run. Special values incl. a signalling NaN, with and without out=, each op."""
    values = list(cases.self_specials(dt)[:10]) + [cases.signaling_nan(dt)]
    for v in values:
        b = np.broadcast_to(np.array(v, dt), (3, 5))
        both(backend, opsnn.leaky_relu_backward, b, b, 0.3)
        both(backend, opsnn.leaky_relu_backward, b, b, -0.5, out=np.zeros((3, 5), dt).T.copy().T)
        both(backend, opsnn.leaky_relu, b, 0.2)
        both(backend, opsnn.hardtanh, b, -1.0, 1.0)
        if dt != F64:
            both(backend, opsnn.hardtanh_backward, b, b, -1.0, 1.0)


def _ties(dtype) -> np.ndarray:
    """float32 values exactly halfway between two neighbours of ``dtype`` (and just around)."""
    grid = cases.filled((64,), dtype, 5).astype(F32)
    u = grid.view(np.uint32)
    half = {F16: 0x1000, BF16: 0x8000}[dtype]
    vals = np.concatenate([u + half, u + half - 1, u + half + 1, u + 3 * half])
    return vals.view(F32)


@pytest.mark.parametrize("out", [F16, BF16], ids=str)
def test_rounding_ties_when_narrowing(backend, out):
    """Ties to even when the float32 result is cast to a 16-bit out (Cast step fused)."""
    g = _ties(out)
    x = np.ones_like(g)
    both(backend, lambda: opsnn.leaky_relu_backward(g, x, 0.5, out=np.zeros(g.shape, out)))
    both(backend, lambda: opsnn.leaky_relu_backward(g, -x, 0.3, out=np.zeros(g.shape, out)))


OUT_DTYPES = [(F32, F32, F16), (F32, F32, BF16), (F16, F16, F32), (BF16, BF16, F32), (F16, BF16, F16),
              (F64, F64, F32), (F64, F64, F16), (F64, F64, BF16), (F16, F32, BF16), (F32, F32, C64),
              (F64, F64, C128), (BF16, BF16, C64), (F16, F16, C128), (BF16, BF16, F64)]


@pytest.mark.parametrize("dts", OUT_DTYPES, ids=lambda d: "-".join(map(str, d)))
def test_leaky_out_dtypes(backend, dts):
    g, x = cases.grid(dts[0], dts[1])
    both(backend, lambda: opsnn.leaky_relu_backward(g, x, -0.3, out=np.zeros(g.shape, dts[2])))


LAYOUT_NAMES = ("contig", "transposed", "sliced", "offset", "reversed")


@pytest.mark.parametrize("dt", [F32, F16, BF16, F64], ids=str)
@pytest.mark.parametrize("layout", LAYOUT_NAMES)
def test_leaky_layouts(backend, dt, layout):
    g = cases.filled((5, 7), dt, 1, cases.grad_specials(dt))
    x = cases.filled((5, 7), dt, 2, cases.self_specials(dt))
    gv = cases.make_layout(g, layout)[0]
    xv = cases.make_layout(x, "transposed" if layout == "contig" else layout)[0]
    both(backend, opsnn.leaky_relu_backward, gv, xv, 0.1)
    out = cases.out_layout((5, 7), dt, layout)[0]
    both(backend, lambda: opsnn.leaky_relu_backward(gv, xv, 0.1, out=out.copy()))


@pytest.mark.parametrize("dt", [F32, F16, BF16], ids=str)
@pytest.mark.parametrize("layout", LAYOUT_NAMES)
def test_hardtanh_layouts(backend, dt, layout):
    g = cases.filled((6, 5), dt, 3, cases.grad_specials(dt))
    x = cases.filled((6, 5), dt, 4, cases.self_specials(dt, (-1.0, 1.0)))
    gv, xv = cases.make_layout(g, layout)[0], cases.make_layout(x, layout)[0]
    both(backend, opsnn.hardtanh_backward, gv, xv, -1.0, 1.0)
    out = cases.out_layout((6, 5), dt, layout)[0]
    both(backend, lambda: opsnn.hardtanh_backward(gv, xv, -1.0, 1.0, out=out.copy()))


@pytest.mark.parametrize("shape_case", cases.LEAKY_SHAPES, ids=lambda c: c.name)
@pytest.mark.parametrize("dt", [F32, BF16], ids=str)
def test_leaky_shape_groups(backend, shape_case, dt):
    g = cases.filled(shape_case.grad, dt, 5, cases.grad_specials(dt))
    x = cases.filled(shape_case.self, dt, 6, cases.self_specials(dt))
    res = both(backend, opsnn.leaky_relu_backward, g, x, 0.25)
    assert res.shape == shape_case.out


def test_broadcast_column_times_row(backend):
    """LeakyReluBackward grad (N, 1) with self (1, M): the rows walker reads both in place."""
    for dt in (F32, F16, BF16, F64):
        g = cases.filled((9, 1), dt, 7, cases.grad_specials(dt))
        x = cases.filled((1, 23), dt, 8, cases.self_specials(dt))
        both(backend, opsnn.leaky_relu_backward, g, x, 0.3)
        both(backend, opsnn.leaky_relu_backward, x.T, g.T, -0.3)


def test_broadcast_arrays_inputs_run_compiled_and_quiet():
    """np.broadcast_arrays' results warn (FutureWarning) when their writeable flag is read, as
    numba's typeof reads it: every call warned twice, and under warnings-as-errors each walker
    they met was marked failed and ran on the NumPy backend for the rest of the process (a
    breaker). They run compiled now, silently, with the bits of plain arrays."""
    import warnings

    failures = len(numba_backend.COMPILE_FAILURES)
    for dt in (F32, F16, BF16, F64):
        g = cases.filled((9, 1), dt, 7, cases.grad_specials(dt))
        x = cases.filled((1, 23), dt, 8, cases.self_specials(dt))
        gb, xb = np.broadcast_arrays(g, x)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            for _ in range(2):  # the full path, then a plan-cache hit
                got = [opsnn.leaky_relu_backward(gb, xb, 0.3), opsnn.leaky_relu_backward(gb[1:], xb[1:].T.T, 0.3),
                       opsnn.leaky_relu(xb, 0.3), opsnn.hardtanh(xb, -0.5, 0.5)]
                if dt != F64:
                    got.append(opsnn.hardtanh_backward(gb, xb, -0.5, 0.5))
        g2, x2 = np.array(gb), np.array(xb)
        want = [opsnn.leaky_relu_backward(g2, x2, 0.3), opsnn.leaky_relu_backward(g2[1:], x2[1:], 0.3),
                opsnn.leaky_relu(x2, 0.3), opsnn.hardtanh(x2, -0.5, 0.5)] + \
               ([opsnn.hardtanh_backward(g2, x2, -0.5, 0.5)] if dt != F64 else [])
        for a, b in zip(got, want):
            assert a.tobytes() == b.tobytes()
    assert len(numba_backend.COMPILE_FAILURES) == failures, numba_backend.COMPILE_FAILURES[failures:]


# views of a base that are not contiguous, as (base shape from the view's, view of the base)
_STRIDED_VIEWS = {
    "gapped": (lambda s: (s[0], s[1] + 3), lambda b, s: b[:, :s[1]]),
    "reversed": (lambda s: s, lambda b, s: b[:, ::-1]),
    # a step of 3: a constant of the 2-byte loop (mode t), a run-time stride of the others; of 5:
    # a run-time stride of every width (float16's then stores in place only without its screen)
    **{f"step{k}": (lambda s, k=k: (s[0], s[1] * k), lambda b, s, k=k: b[:, ::k]) for k in (3, 5)},
    "transposed": (lambda s: s[::-1], lambda b, s: b.T),
}


@pytest.mark.parametrize("layout", list(_STRIDED_VIEWS))
@pytest.mark.parametrize("dt, pool", [(F16, False), (F16, True), (BF16, False), (F32, False), (F64, False)],
                         ids=["float16", "float16-pool", "bfloat16", "float32", "float64"])
def test_in_place_on_strided_views_equals_numpy(backend, monkeypatch, dt, layout, pool):
    """In place on a view that is not contiguous (rows and panels walkers), each run is computed
    into a scratch row and copied into out (``walker_source._apart_if_aliased``: in place,
    LLVM's vectorized loop runs its scalar code, float16 8-23x slower), but where the scalar
    loop is as fast (``_stores_apart``); a float16 NaN screen recomputes a run from the untouched
    inputs. The NumPy backend's bits, NaN payloads included, for every 16-bit pattern
    (signalling NaNs too), out = grad and the forward op in place; the base outside the view
    untouched. float16, whose screen is the delicate part, also on the pool (its prange walkers).
    A view of each walker mode: c (gapped), r, t and g (steps), panels (transposed)."""
    from opsnn import _fastpath, engine

    if pool:
        monkeypatch.setattr(parallelism, "PARALLEL_MIN_BYTES", 0)
        engine.clear_plan_cache()
        _fastpath.clear()
    shape = (256, 256)
    if dt in (F16, BF16):
        x = ALL16.view(dt).reshape(shape)
    else:
        x = cases.filled(shape, dt, 3, cases.self_specials(dt))
    g = cases.filled(shape, dt, 5, cases.grad_specials(dt))
    base_shape, view_of = _STRIDED_VIEWS[layout]
    sentinel = np.array(7.0).astype(dt)
    # LeakyRelu's value passes through float16 conversions, so its loops are screened for NaN;
    # Hardtanh's differ only in their comparisons (a breaker's fuzz ran them in place, session 31:
    # left out here for the suite's compile time)
    calls = [("leaky_relu_backward out=grad", g, lambda y: opsnn.leaky_relu_backward(y, x, 0.3, out=y)),
             ("leaky_relu_", x, lambda y: opsnn.leaky_relu_(y, 0.3))]
    for what, values, call in calls:
        want = values.copy()
        backend("numpy", call, want)  # in place on a contiguous copy
        base = np.full(base_shape(shape), sentinel)
        y = view_of(base, shape)
        y[...] = values
        assert backend("numba", call, y) is y
        cases.assert_bits_equal(y, want, nan_payload=True, what=f"{what} on a {layout} view")
        outside = cases.outside_mask(y, base)
        assert (cases.bits(base)[outside.reshape(-1)] == cases.bits(sentinel)).all(), "wrote outside the view"


def test_eight_dims_strided(backend):
    base = cases.filled((2, 3, 2, 3, 2, 3, 2, 5), F32, 9, cases.self_specials(F32))
    x = base.transpose(7, 1, 2, 3, 4, 5, 6, 0)[::-1, :, :, ::2]
    g = cases.filled(x.shape, F32, 10, cases.grad_specials(F32))
    both(backend, opsnn.leaky_relu_backward, g, x, 0.2)
    both(backend, opsnn.hardtanh_backward, g, np.ascontiguousarray(x), -0.5, 0.5)


def test_size_one_dims_stride_of_no_whole_element_runs_compiled(backend, monkeypatch, caplog):
    """A size-1 dim is never stepped along, so its byte stride does not matter. A packed record
    array's row (``recs[1:2]["m"]``: float32 strides (121, 20, 4)) has one of no whole element,
    and sent every operator to the NumPy backend with a warning (a breaker); it runs compiled
    now, nothing logged, with the NumPy backend's bits (the plan cache's hit too)."""
    monkeypatch.setattr(numba_backend, "_WARNED", set())  # a fallback is logged once a process
    for dt in (F32, F16):
        recs = np.zeros(3, dtype=[("tag", "u1"), ("m", dt, (6, 5)), ("h", dt, (6, 5))])
        recs["m"] = cases.filled((3, 6, 5), dt, 13, cases.grad_specials(dt))
        recs["h"] = cases.filled((3, 6, 5), dt, 14, cases.self_specials(dt))
        g, x = recs[1:2]["m"], recs[1:2]["h"]
        assert g.strides == (1 + 60 * dt.itemsize, 5 * dt.itemsize, dt.itemsize)
        with caplog.at_level(logging.WARNING, logger="opsnn"):
            for _ in range(2):  # the full path, then a plan-cache hit
                both(backend, opsnn.leaky_relu_backward, g, x, 0.2)
                both(backend, opsnn.hardtanh_backward, g, x, -0.5, 0.5)
                both(backend, opsnn.leaky_relu, x.transpose(0, 2, 1), 0.2)
                both(backend, opsnn.hardtanh, x[:, ::-2], -0.5, 0.5)
        assert [r.message for r in caplog.records] == []


def test_a_layout_fallback_is_logged_once_per_operator_and_reason(monkeypatch, caplog):
    """``_fell_back`` logs each operator that goes to the NumPy backend, once per reason: it had
    been keyed by the reason alone, so only the first operator was named (ClipByValueV2) and
    LeakyReluGrad, falling back for the same reason, went unsaid (a breaker's)."""
    monkeypatch.setattr(numba_backend, "_WARNED", set())
    odd, other = "a byte stride that is not a whole number of elements", "another layout"
    with caplog.at_level(logging.WARNING, logger="opsnn"):
        for where, reason in [("ClipByValueV2", odd), ("LeakyReluGrad", odd), ("ClipByValueV2", odd),
                              ("LeakyReluGrad", other), ("LeakyReluGrad", odd)]:
            numba_backend._fell_back(where, numba_backend.Fallback(reason))
        numba_backend._fell_back("Relu", numba_backend.CompileFailure("logged when it failed"))
    suffix = "; running it on the NumPy backend"
    assert [r.getMessage() for r in caplog.records] == [
        f"numba backend: ClipByValueV2: {odd}{suffix}", f"numba backend: LeakyReluGrad: {odd}{suffix}",
        f"numba backend: LeakyReluGrad: {other}{suffix}"]


def test_in_place_out_is_grad(backend):
    for dt in (F32, F16, BF16):
        g0 = cases.filled((4, 6), dt, 11, cases.grad_specials(dt))
        x = cases.filled((4, 6), dt, 12, cases.self_specials(dt))
        ref = backend("numpy", opsnn.leaky_relu_backward, g0, x, 0.5)
        g = g0.copy()
        got = backend("numba", opsnn.leaky_relu_backward, g, x, 0.5, out=g)
        assert got is g
        cases.assert_bits_equal(g, ref, nan_payload=True)


def test_forward_ops(backend):
    for dt in (F32, F16, BF16, F64):
        x = cases.filled((7, 5), dt, 13, cases.self_specials(dt))
        both(backend, opsnn.leaky_relu, x, 0.1)
        both(backend, opsnn.leaky_relu, x.T, -0.5)
    for dt in (F32, F16, BF16, F64):
        x = cases.filled((7, 5), dt, 14, cases.self_specials(dt, (-1.0, 1.0)))
        both(backend, opsnn.hardtanh, x, -1.0, 1.0)
    for dt in (np.int8, np.int16, np.int32, np.int64, np.uint8):
        x = np.random.default_rng(15).integers(0, 100, (6, 4)).astype(dt)
        both(backend, opsnn.hardtanh, x, 3, 60)
        both(backend, opsnn.hardtanh, x.T[::-1], 0, 5)


@pytest.mark.parametrize("layer", ["acl"])
def test_two_phase_steps_agree(backend, acl_env, layer):
    """The aclnn API runs the recorded steps (temporaries in the workspace): compiled Contiguous,
    Cast, kernel and ViewCopy steps give the NumPy backend's bits."""
    for gdt, xdt, odt in ((F16, F32, F64), (BF16, BF16, BF16), (F32, F16, BF16)):
        g, x = cases.grid(gdt, xdt)
        ref = backend("numpy", run_leaky, layer, acl_env, g, x, 0.3, out_dtype=odt,
                      layouts=("sliced", "transposed"), out_layout="sliced")
        got = backend("numba", run_leaky, layer, acl_env, g, x, 0.3, out_dtype=odt,
                      layouts=("sliced", "transposed"), out_layout="sliced")
        cases.assert_bits_equal(got, ref, nan_payload=True)
    g, x = cases.grid(F16, F16, (-1.0, 1.0))
    ref = backend("numpy", run_hardtanh, layer, acl_env, g, x, -1.0, 1.0, layouts=("transposed", "offset"))
    got = backend("numba", run_hardtanh, layer, acl_env, g, x, -1.0, 1.0, layouts=("transposed", "offset"))
    cases.assert_bits_equal(got, ref, nan_payload=True)


# ---- multi-block launches (the parallel walkers) ------------------------------------------------
def _big(dt, shape, seed):
    a = cases.filled(shape, dt, seed, np.concatenate([cases.self_specials(dt), cases.grad_specials(dt)]))
    return a


@pytest.mark.parametrize("dt", [F32, F16], ids=str)
def test_parallel_walkers(backend, dt, monkeypatch):
    """Launches moving more than PARALLEL_MIN_BYTES split into one block per thread (2 threads), in each
    walker; NaNs in some tiles send those tiles down the exact float16 path."""
    numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
    # not this host's measure; 1 MiB keeps the NumPy reference's float16 pass short (at 16 MiB,
    # 25e6 float16 elements took 18 s)
    monkeypatch.setattr(parallelism, "PARALLEL_MIN_BYTES", 1 << 20)
    n = parallelism.PARALLEL_MIN_BYTES // dt.itemsize * 3 + 37
    g, x = _big(dt, (n,), 16), _big(dt, (n,), 17)
    both(backend, opsnn.leaky_relu_backward, g, x, 0.1)                 # flat
    rows, cols = 211, n // 211
    gb, xb = _big(dt, (rows, 1), 18), _big(dt, (1, cols), 19)
    both(backend, opsnn.leaky_relu_backward, gb, xb, 0.1)               # rows
    xt = _big(dt, (cols, rows), 20).T
    gt = _big(dt, (rows, cols), 21)
    both(backend, opsnn.leaky_relu_backward, gt, xt, 0.1)               # panels


def test_parallel_min_bytes_measured_once_within_range(monkeypatch):
    """Unless set, the threshold is the first of 1, 1.41, 2, ... MiB where the pool copies
    PARALLEL_GAIN times faster than the calling thread (the top of PARALLEL_MIN_RANGE if none;
    the second scan stops below the first's answer), measured once (on the first launch inside
    the range: below it a launch is serial, from its top parallel, whatever the measure); a set
    value is never measured over."""
    lo, hi = parallelism.PARALLEL_MIN_RANGE
    calls = []

    def host(per_core, wake_us):  # one core moves per_core bytes/us; two move twice that
        def copy_times_us(moved):
            calls.append(moved)
            return moved / per_core, moved / (2 * per_core) + wake_us
        return copy_times_us

    sizes = parallelism.threshold_candidates()                           # steps of sqrt(2)
    assert sizes[:3] == [lo, 1482910, 2 * lo] and len(sizes) == 12 and sizes[-1] == 47453132
    # 28 KB/us, 50 us: 2.83 MiB 106 vs 103 us (1.03x), 4 MiB 150 vs 125 (1.2x); 8 KB/us, 60 us:
    # 1 MiB 131 vs 126 us (1.04x), 1.41 MiB 185 vs 153 (1.21x); a pool that never pays; one
    # that pays at once
    for per_core, wake_us, want in ((28e3, 50.0, 4 * lo), (8e3, 60.0, sizes[1]), (28e3, 1e6, hi),
                                    (28e3, 0.0, lo)):
        monkeypatch.setattr(parallelism, "PARALLEL_MIN_BYTES", None)
        monkeypatch.setattr(parallelism, "copy_times_us", host(per_core, wake_us))
        assert not parallelism.use_parallel(lo - 1) and parallelism.threads_for(lo - 1) == 1
        assert parallelism.use_parallel(hi)
        assert calls == [] and parallelism.PARALLEL_MIN_BYTES is None    # nothing measured yet
        if numba.config.NUMBA_NUM_THREADS < 2:
            want = 16 << 20                                                 # no pool to wake
        assert parallelism.use_parallel(want) and not parallelism.use_parallel(want - 1)
        assert parallelism.parallel_min_bytes() == want
        tried = [size for size in sizes if size <= want] + [size for size in sizes if size < want]
        assert calls == (tried if numba.config.NUMBA_NUM_THREADS >= 2 else [])  # two scans
        calls.clear()
    monkeypatch.setattr(parallelism, "PARALLEL_MIN_BYTES", None)          # a pool that fails to start
    monkeypatch.setattr(parallelism, "copy_times_us", lambda moved: 1 // 0)
    assert parallelism.parallel_min_bytes() == 16 << 20
    monkeypatch.setattr(parallelism, "PARALLEL_MIN_BYTES", 3 << 20)
    assert parallelism.parallel_min_bytes() == 3 << 20 and calls == []
    assert parallelism.use_parallel(3 << 20) and not parallelism.use_parallel((3 << 20) - 1)


def test_threshold_keeps_the_lower_of_two_scans(monkeypatch):
    """A disturbance that makes the pool look slow during one scan (another tenant on the VM)
    does not raise the threshold: the second scan's lower answer is kept; a disturbance in the
    second scan cannot raise the first's."""
    sizes = parallelism.threshold_candidates()
    for noisy_scan in (1, 2):
        timed = []

        def copy_times_us(moved):  # the pool pays from 4 MiB (1.2x), but looks 3x slower in one scan
            timed.append(moved)
            scan = 1 + sum(b <= a for a, b in itertools.pairwise(timed))  # a scan starts from the bottom
            parallel = moved / 56e3 + 50.0
            return moved / 28e3, parallel * (3.0 if scan == noisy_scan else 1.0)

        monkeypatch.setattr(parallelism, "copy_times_us", copy_times_us)
        assert parallelism.second_thread_pays_from() == 4 << 20, noisy_scan
        assert timed.count(sizes[0]) == 2 and (4 << 20) in timed


def test_threshold_copies_copy_every_element():
    """The two copies the threshold scan times move every element, in blocks that do not divide
    the size (their unsigned loop bounds included)."""
    src = np.arange(1001, dtype=np.float64)
    for copy in (parallelism._copy_serial, parallelism._copy_parallel):
        for blocks in (1, 2, 3):
            dst = np.full_like(src, -1.0)
            assert copy(dst, src, blocks) == 0
            np.testing.assert_array_equal(dst, src)


def test_copy_times_measure():
    """The real measurement: two durations of a copy of ``moved`` bytes, the caller's thread
    count left as it was, and a threshold that is one of the sizes tried."""
    before = numba.get_num_threads()
    serial, parallel = parallelism.copy_times_us(1 << 20, samples=3)
    assert 0.0 < serial < 1e6 and 0.0 < parallel < 1e6
    assert numba.get_num_threads() == before
    lo, hi = parallelism.PARALLEL_MIN_RANGE
    assert parallelism.second_thread_pays_from() in parallelism.threshold_candidates() + [hi]
    assert numba.get_num_threads() == before


def test_work_counts_transposed_inputs_more(monkeypatch):
    """The serial/parallel rule weighs an input read across its memory order (the panels walker's
    gather) GATHER_WEIGHT times its bytes, and no other: not a dense, broadcast or stepped input,
    nor one transposed exactly as out is (the walk follows out's memory order)."""
    w = parallelism.GATHER_WEIGHT
    moved = parallelism.moved_bytes

    def work(out, ins):  # as Program.planned counts it: from the one-thread launch
        operands = [numba_backend._aligned_strides(a, out.shape) for a in (out, *ins)]
        launch = host_launch.plan_launch(out.shape, operands, [a.itemsize for a in (out, *ins)], 1)
        return parallelism.work_bytes(out, ins, launch)

    g = np.zeros((300, 200), F32)
    out = np.empty((300, 200), F32)
    t = np.zeros((200, 300), F32).T
    assert moved(out, [g, t]) == 3 * g.nbytes
    assert work(out, [g, t]) == (2 + w) * g.nbytes                     # t gathered
    assert work(out, [g, g]) == 3 * g.nbytes                           # dense
    assert work(out, [np.zeros((300, 1), F32), np.zeros((1, 200), F32)]) == g.nbytes + 4 * 500
    stepped = np.zeros((300, 400), F32)[:, ::2]
    assert work(out, [g, stepped]) == moved(out, [g, stepped])         # rows walker, no gather
    out_t = np.empty((200, 300), F32).T
    assert work(out_t, [t, t]) == 3 * g.nbytes                         # read in out's own order
    assert work(out_t, [g, t]) == (2 + w) * g.nbytes                   # g is across out_t's order
    cube = np.zeros((20, 30, 40), F32)
    assert work(cube, [cube, np.zeros((40, 30, 20), F32).transpose(2, 1, 0)]) == (2 + w) * cube.nbytes
    assert work(np.empty(5, F32), [np.zeros(5, F32), np.zeros(10, F32)[::2]]) == 20 + 20 + 36
    # the rule where waking the pool costs 40-80 us (16 MiB): a 12 MB float32 transposed launch
    # (1000 x 1000) is worth two threads, its contiguous counterpart is not
    monkeypatch.setattr(parallelism, "PARALLEL_MIN_BYTES", 16 << 20)
    big, big_t = np.empty((1000, 1000), F32), np.empty((1000, 1000), F32).T
    assert parallelism.use_parallel(work(big, [big, big_t])) and not parallelism.use_parallel(work(big, [big, big]))


@pytest.fixture
def streaming(monkeypatch):
    """Stream every output the walkers may stream (STREAM_MIN_BYTES 0), serial or ``parallel``
    (2 threads); plan-cache entries made before are dropped so the new kernels run."""
    from opsnn import _fastpath

    def setup(parallel: bool):
        monkeypatch.setattr(numba_backend, "STREAM_MIN_BYTES", 0)
        monkeypatch.setattr(parallelism, "PARALLEL_MIN_BYTES", 0 if parallel else 1 << 62)
        numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS) if parallel else 1)
        _fastpath.clear()

    yield setup
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    _fastpath.clear()


# every dtype serial; on two threads (a parallel kernel costs ~3 serial compiles) one streamed
# dtype and one that is not: the prange walkers run the serial walkers' element code
STREAMED_RUNS = [(dt, False) for dt in (F32, F64, F16, BF16)] + [(F64, True), (F16, True)]


@pytest.mark.parametrize("dt, parallel", STREAMED_RUNS,
                         ids=[f"{dt}-{'parallel' if parallel else 'serial'}" for dt, parallel in STREAMED_RUNS])
def test_streamed_outputs(backend, streaming, dt, parallel):
    """Outputs written with non-temporal stores (rows walker: grad (N, 1) x self (1, M); flat:
    every operand dense) are the NumPy backend's bit for bit: odd sizes, several tiles, an out
    that starts mid cache line, special values; in place (flat: not streamed, out's lines were
    just read). 2-byte outputs run the normal walker (not streamed)."""
    streaming(parallel)
    rows, cols = 29, 1031  # not multiples of a cache line; several 16 KiB tiles
    g = cases.filled((rows, 1), dt, 40, cases.grad_specials(dt))
    x = cases.filled((1, cols), dt, 41, cases.self_specials(dt, (-1.0, 1.0)))
    gb, xb = np.broadcast_to(g, (rows, cols)), np.broadcast_to(x, (rows, cols))
    gf = cases.filled((rows * cols,), dt, 42, cases.grad_specials(dt))
    xf = cases.filled((rows * cols,), dt, 43, cases.self_specials(dt, (-1.0, 1.0)))
    for shift in (0, 1, 3):
        def out(shape=(rows, cols), shift=shift):  # a fresh out, `shift` elements past a line
            buf = np.zeros(rows * cols + 64, dt)
            start = -buf.ctypes.data % 64 // dt.itemsize + shift
            return buf[start:start + rows * cols].reshape(shape)
        assert out().ctypes.data % 64 == shift * dt.itemsize % 64
        both(backend, lambda: opsnn.leaky_relu_backward(g, x, 0.3, out=out()))
        both(backend, lambda: opsnn.leaky_relu_backward(gf, xf, 0.3, out=out(-1)))
        if dt != F64:
            both(backend, lambda: opsnn.hardtanh_backward(gb, xb, -1.0, 1.0, out=out()))
            both(backend, lambda: opsnn.hardtanh_backward(gf, xf, -1.0, 1.0, out=out(-1)))
    both(backend, lambda: (lambda own: opsnn.leaky_relu_backward(own, xf, 0.3, out=own))(gf.copy()))
    assert walker_source.streams_output("rows", "cbc", dt) == (dt.itemsize >= 4)
    assert walker_source.streams_output("rows", "ccc", F32)  # decided per launch by the sizes
    assert walker_source.streams_output("flat", "cc", dt) == (dt.itemsize >= 4)
    assert not walker_source.streams_output("panels", "ccg", F32)


@pytest.fixture
def fresh_launches():
    """Forget every cached launch (the plan caches' and each program's) before and after, so a
    test that patches the host launch's constants gets launches planned with them."""
    from opsnn import _fastpath, engine

    def clear():
        _fastpath.clear()
        engine.clear_plan_cache()
        for prog in numba_backend._PROGRAM_CACHE.values():
            if prog is not None:
                prog._launches.clear()
    clear()
    yield clear
    clear()


@pytest.mark.parametrize("stream", [False, True], ids=["stored", "streamed"])
def test_rows_walker_carries_its_position_across_tiles(backend, monkeypatch, fresh_launches, stream):
    """The rows walker decodes a block's first element once and carries the position from tile to
    tile: tiles of a few cache lines, cut anywhere in a row, at a row's end or the row dim's, in
    1-4 dims with a broadcast input and a reversed one, one and two blocks, streamed or not: the
    NumPy backend's bits."""
    monkeypatch.setattr(numba_backend, "STREAM_MIN_BYTES", 0 if stream else 1 << 62)
    monkeypatch.setattr(parallelism, "PARALLEL_MIN_BYTES", 0)
    numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
    rng = np.random.default_rng(7)
    try:
        for tile_bytes in (64, 192, 320):
            monkeypatch.setattr(numba_backend, "plan_launch",
                                lambda *a, tb=tile_bytes: host_launch.plan_launch(*a, tile_bytes=tb))
            fresh_launches()
            for ndim in (1, 2, 3, 4):
                shape = tuple(int(d) for d in rng.integers(2, 9, ndim))
                dt = (F32, F64, F16)[ndim % 3]
                # rows of at least SHORT_ROW_BYTES: shorter ones take the panels walker here
                shape = shape[:-1] + (int(rng.integers(host_launch.SHORT_ROW_BYTES // dt.itemsize, 40)),)
                x = cases.filled(shape, dt, ndim, cases.self_specials(dt))
                g = cases.filled(shape[:-1] + (1,), dt, ndim + 10, cases.grad_specials(dt))
                both(backend, lambda: opsnn.leaky_relu_backward(g, x, 0.3, out=np.zeros(shape, dt)))
                both(backend, lambda: opsnn.leaky_relu_backward(g, x[..., ::-1], 0.3, out=np.zeros(shape, dt)))
                launch = numba_backend.plan_launch(shape, [numba_backend._aligned_strides(a, shape)
                                                           for a in (x, g, x)], (dt.itemsize,) * 3, 2)
                assert launch.walker == ("flat" if ndim == 1 else "rows") and launch.plan.tile * dt.itemsize <= tile_bytes
    finally:
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)


@pytest.mark.parametrize("dt", [F32, F16, BF16, F64], ids=["f32", "f16", "bf16", "f64"])
def test_rows_of_three_elements(backend, monkeypatch, fresh_launches, dt):
    """Rows of 3 elements (an NHWC image's RGB channels, ``[..., :3]`` of 4) written to an out
    with the same gaps: the rows walker's path for a run of 3 (its count a constant), whole rows
    and rows cut by a tile's end (tiles of 40 and 64 bytes: runs of 1, 2 and 3 elements), both
    operators with out given and in place: the NumPy backend's bits (NaN payloads, signed zeros,
    bounds). Outputs of more than 512 bytes take the panels walker (``test_short_rows_gathered``),
    but for 8-byte elements: float32 runs a smaller shape."""
    shape = (5, 7, 3) if dt == F32 else (2, 5, 7, 3)
    x = cases.filled(shape[:-1] + (4,), dt, 1, cases.self_specials(dt))[..., :3]
    g = cases.filled(shape[:-1] + (4,), dt, 2, cases.grad_specials(dt))[..., :3]

    def gapped():
        return np.zeros(shape[:-1] + (4,), dt)[..., :3]

    def in_place():
        own = gapped()
        own[...] = g
        return opsnn.leaky_relu_backward(own, x, -2.0, out=own)
    for tile_bytes in (None, 64, 40):
        if tile_bytes is not None:
            monkeypatch.setattr(numba_backend, "plan_launch",
                                lambda *a, tb=tile_bytes: host_launch.plan_launch(*a, tile_bytes=tb))
        fresh_launches()
        launch = numba_backend.plan_launch(shape, [numba_backend._aligned_strides(a, shape) for a in
                                                   (gapped(), g, x)], (dt.itemsize,) * 3, 1)
        assert launch.walker == "rows" and launch.dims == (math.prod(shape[:-1]), 3)
        both(backend, lambda: opsnn.leaky_relu_backward(g, x, 0.3, out=gapped()))
        both(backend, in_place)
        if dt != F64:
            both(backend, lambda: opsnn.hardtanh_backward(g, x, -0.5, 0.5, out=gapped()))


def test_rows_of_three_unrolled_only_in_their_own_variant(backend):
    """The rows walker's unrolled loop for rows of 3 is generated only for launches whose rows
    are 3 long: another rows kernel compiles one element loop, not two (compile time)."""
    import inspect
    seen = set()
    for last in (3, 5):  # (3, 7, last) float32 of (.., last + 1): at most 512 bytes, the rows walker
        g, x = (np.arange(3 * 7 * (last + 1), dtype=F32).reshape(3, 7, last + 1)[..., :last] - k for k in (40, 41))
        out = np.zeros((3, 7, last + 1), F32)[..., :last]
        opsnn.leaky_relu_backward(g, x, 0.5, out=out)
        np.testing.assert_array_equal(out, np.where(x > 0, g, g * np.float32(0.5)))
    for program in list(numba_backend._LIVE_PROGRAMS):
        for key, fn in program._fns.items():
            if key[0] == "rows" and not isinstance(fn, str):
                seen.add((key[5], "length == 3" in inspect.getsource(fn.py_func)))
    assert seen == {(True, True), (False, False)}


@pytest.mark.parametrize("dt", [F32, F16, BF16, F64], ids=["f32", "f16", "bf16", "f64"])
def test_short_rows_gathered(backend, monkeypatch, fresh_launches, dt):
    """Rows shorter than ``host_launch.SHORT_ROW_BYTES`` that an operand does not hold back to
    back take the panels walker with that input gathered, or that out scattered, a row at a
    time: a slice of a few channels, a grad (N, 1) or a self (k,) broadcast against (N, k), rows
    overlapping (stride 1) or running backwards, 3-D dims that do not merge, an out with gaps;
    every row length from 2 to the last under the limit (exact vector moves up to 8 elements,
    two overlapping ones above), 8-byte rows of 3 excepted (the rows walker unrolls them). The
    NumPy backend's bits (special values, NaN payloads), out given and in place on the dense
    grad and on a grad with gaps, on the calling thread; on the pool a slice into a dense and
    into a gapped out, and in place (each other kernel variant compiled for the pool too would
    cost the suite seconds and walk the same tiles)."""
    limit = host_launch.SHORT_ROW_BYTES // dt.itemsize
    lengths = [k for k in range(2, limit) if not (k == 3 and dt.itemsize == 8)]
    assert lengths and host_launch._short_rows((5, limit), [host_launch.OperandLayout((limit, 1), 0, "c"),
                                                            host_launch.OperandLayout((2 * limit, 1), 0, "c")],
                                               dt.itemsize) is None
    threads = min(2, numba.config.NUMBA_NUM_THREADS)
    try:
        for pool in (False, True):
            monkeypatch.setattr(parallelism, "PARALLEL_MIN_BYTES", 0 if pool else 1 << 62)
            numba.set_num_threads(threads if pool else 1)
            fresh_launches()
            for k in lengths:
                rows = 400
                x = cases.filled((rows, 2 * k + 1), dt, 80 + k, cases.self_specials(dt, (-1.0, 1.0)))
                g = cases.filled((rows, k), dt, 90 + k, cases.grad_specials(dt))
                window = np.lib.stride_tricks.as_strided(x, (rows * 2, k), (x.itemsize, x.itemsize))
                layouts = [(g, x[:, :k]), (g, x[::-1, k + 1:]), (g[:, :1], x[:, 1:k + 1]),
                           (np.ascontiguousarray(x[:, :k]), g[0]), (g[:, :1].repeat(2, 0), window),
                           (g.reshape(4, 100, k)[:, :50], x[:, :k].reshape(4, 100, k)[:, ::2])]
                if pool:
                    layouts = layouts[:1]
                for gv, xv in layouts:
                    shape = np.broadcast_shapes(gv.shape, xv.shape)
                    out = np.zeros(shape, dt)
                    launch = numba_backend.plan_launch(shape, [numba_backend._aligned_strides(a, shape)
                                                               for a in (out, gv, xv)], (dt.itemsize,) * 3, 1)
                    assert launch.walker == "panels" and "g" in launch.modes[1:], (k, launch.describe())
                    both(backend, lambda gv=gv, xv=xv, shape=shape:
                         opsnn.leaky_relu_backward(gv, xv, 0.3, out=np.zeros(shape, dt)))
                gap_out = np.zeros((rows, k + 3), dt)[:, 1:k + 1]
                assert numba_backend.plan_launch(g.shape, [numba_backend._aligned_strides(a, g.shape) for a in
                                                           (gap_out, g, g)], (dt.itemsize,) * 3, 1).modes == "gcc"
                def gapped_out(rows=rows, k=k):
                    return np.zeros((rows, k + 3), dt)[:, 1:k + 1]
                both(backend, lambda g=g, xv=x[:, :k], out=gapped_out: opsnn.leaky_relu_backward(g, xv, 0.3, out=out()))

                def in_place(g=g, xv=x[:, :k]):
                    own = g.copy()
                    return opsnn.leaky_relu_backward(own, xv, -2.0, out=own)

                def in_place_gaps(g=g, xv=x[:, :k], out=gapped_out):
                    own = out()
                    own[...] = g
                    return opsnn.leaky_relu_backward(own, xv, -2.0, out=own)
                both(backend, in_place)
                if pool:
                    continue
                both(backend, in_place_gaps)
                if dt != F64:
                    both(backend, lambda g=g, xv=x[:, 1:k + 1]:
                         opsnn.hardtanh_backward(g, xv, -1.0, 1.0, out=np.zeros(g.shape, dt)))
    finally:
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)


def test_short_rows_read_no_element_past_a_row(tmp_path):
    """The vector moves of a short row (7 float32, 5 float16) read, and scattered into an out
    with gaps write, exactly its elements: with the last row of self, and of out, ending at a
    page whose successor is not mapped readable or writable, the call completes (a wider load
    or store faults). In a subprocess, so a fault fails only this test."""
    script = tmp_path / "guard.py"
    script.write_text("""
import ctypes, mmap
import numpy as np
import opsnn
libc = ctypes.CDLL(None, use_errno=True)
page = mmap.PAGESIZE

def guarded_rows(dt, k, rows):  # rows of k, k + 1 apart, the last ending where no page is mapped
    item = np.dtype(dt).itemsize
    region = mmap.mmap(-1, 2 * page)
    addr = ctypes.addressof(ctypes.c_char.from_buffer(region))
    assert libc.mprotect(ctypes.c_void_p(addr + page), page, 0) == 0
    count = (rows - 1) * (k + 1) + k
    base = np.frombuffer(region, dt, count, page - count * item)
    base[:] = np.linspace(-3, 3, count)
    return np.lib.stride_tricks.as_strided(base, (rows, k), ((k + 1) * item, item))

for dt, k in ((np.float32, 7), (np.float16, 5)):
    x = guarded_rows(dt, k, 100)
    out = guarded_rows(dt, k, 100)
    g = np.ones((100, k), dt)
    assert opsnn.leaky_relu_backward(g, x, 0.5, out=out) is out
    assert np.array_equal(out, np.where(x > 0, g, g * dt(0.5)))
    del x, out
print("ok")
""")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


# ---- the host launch ------------------------------------------------------------------------------
def test_host_launch_walkers_and_plan():
    flat = host_launch.plan_launch((10**6,), [(1,), (1,), (1,)], (4, 4, 4), 2)
    assert flat.walker == "flat" and flat.plan.n_blocks == 2
    assert sum(hi - lo for b in range(flat.plan.n_blocks) for lo, hi in flat.plan.tiles(b)) == 10**6
    rows = host_launch.plan_launch((1000, 1000), [(1000, 1), (1, 0), (0, 1)], (4, 4, 4), 2)
    assert rows.walker == "rows" and rows.modes == "cbc"
    # its tiles hold whole rows where a run of rows starting on a cache line fits one: no row is
    # cut into two runs (two vector loops' scalar remainders)
    assert rows.plan.tile == 4000 and host_launch.plan_launch((1000, 1000), [(1000, 1), (1, 0), (0, 1)],
                                                              (4, 4, 4), 2, tile_bytes=3999 * 4).plan.tile == 2000
    assert host_launch.plan_launch((99, 1031), [(1031, 1), (1, 0), (0, 1)], (4, 4, 4), 1).plan.tile == 4096
    panels = host_launch.plan_launch((1000, 1000), [(1000, 1), (1000, 1), (1, 1000)], (4, 4, 4), 2)
    # tiles of 128 B of the gathered rows by 2 KiB of the dense ones; 1000 rows as 31 x 32 + 8
    assert panels.walker == "panels" and (panels.tile_rows, panels.tile_cols) == (32, 512)
    assert panels.plan.numel == 32 and "panels walk" in panels.describe() and panels.to_dict()["walker"] == "panels"
    # panels of equal height (100 float32 rows: 4 x 25, not 3 x 32 + 4); a row shorter than a tile whole
    even = host_launch.plan_launch((100, 1000), [(1000, 1), (1000, 1), (1, 100)], (4, 4, 4), 2)
    assert (even.tile_rows, even.tile_cols, even.plan.numel) == (25, 512, 4)
    # ... but a float32 row dim of at most 512 B whose panels would cut its source rows' cache
    # lines (25 rows: 100 B) is one panel where each thread still gets one (WHOLE_ROW_BYTES):
    # here on one thread, not on two (a single panel would leave the second idle)
    whole = host_launch.plan_launch((100, 1000), [(1000, 1), (1000, 1), (1, 100)], (4, 4, 4), 1)
    assert (whole.tile_rows, whole.tile_cols, whole.plan.numel) == (100, 512, 1)
    cube = [(10000, 100, 1), (10000, 100, 1), (1, 100, 10000)]  # a (100, 100, 100) reversal
    assert host_launch.plan_launch((100, 100, 100), cube, (4, 4, 4), 2).tile_rows == 100
    assert host_launch.plan_launch((100, 100, 100), cube, (8, 8, 8), 2).tile_rows == 50
    lines = host_launch.plan_launch((128, 1000), [(1000, 1), (1000, 1), (1, 128)], (4, 4, 4), 1)
    assert lines.tile_rows == 32  # 128-B panels: whole lines, nothing fetched twice
    short = host_launch.plan_launch((100, 1000), [(1000, 1), (1000, 1), (1, 100)], (2, 2, 2), 1)
    assert (short.tile_rows, short.tile_cols) == (100, 1000)
    # rows by the narrowest operand (256 B of 2-byte rows: 128 of them), columns by the widest:
    # whole cache lines of each
    tall = host_launch.plan_launch((1000, 1000), [(1000, 1), (1000, 1), (1, 1000)], (2, 2, 2), 1)
    assert (tall.tile_rows, tall.tile_cols) == (125, 1000)
    mixed = host_launch.plan_launch((300, 1000), [(1000, 1), (1000, 1), (1, 300)], (4, 2, 2), 1)
    assert (mixed.tile_rows, mixed.tile_cols) == (100, 512)
    # rows of a few elements (an NHWC float32 image from NCHW): as tall as a 2 KiB dense run of
    # whole rows (4 KiB from FAR_BYTES: C = 4 moves 38.5 MB), not 32 rows
    for c, tile in ((3, (170, 3)), (4, (256, 4))):
        nhwc = host_launch.plan_launch((16, 224, 224, c), [(224 * 224 * c, 224 * c, c, 1)] * 2
                                       + [(c * 224 * 224, 224, 1, 224 * 224)], (4, 4, 4), 1)
        assert nhwc.dims == (16, 224 * 224, c) and (nhwc.tile_rows, nhwc.tile_cols) == tile, nhwc.describe()
    # 8-byte operands in cache: 512 B of each gathered row (1000 rows as 16 panels of 63); from
    # FAR_BYTES 128 B as for 4-byte ones
    wide = host_launch.plan_launch((1000, 1000), [(1000, 1), (1000, 1), (1, 1000)], (8, 8, 8), 2)
    assert (wide.tile_rows, wide.tile_cols, wide.plan.numel) == (63, 256, 16)
    far = host_launch.plan_launch((4000, 4000), [(4000, 1), (4000, 1), (1, 4000)], (8, 8, 8), 2)
    assert far.tile_rows == 16
    # dense runs of 4 KiB from FAR_BYTES moved
    big = [(4000, 1), (4000, 1), (1, 4000)]
    assert host_launch.plan_launch((4000, 4000), big, (4, 4, 4), 2).tile_cols == 1024  # 192 MB
    assert host_launch.plan_launch((4000, 4000), big, (8, 8, 8), 2).tile_cols == 512
    assert host_launch.plan_launch((4000, 4000), big, (2, 2, 2), 2).tile_cols == 2048  # 96 MB
    assert host_launch.plan_launch((2000, 2000), [(2000, 1), (2000, 1), (1, 2000)], (2, 2, 2),
                                   2).tile_cols == 1024  # 24 MB: 2 KiB
    # beyond FAR_BYTES a short row dim is one panel (tiles of at most WHOLE_PANEL_BYTES), so no
    # gathered source line is cut between two panels; in cache it keeps the usual height but
    # for float32 rows of at most WHOLE_ROW_BYTES
    def reversed_self(shape):  # out dense, self a view of shape[::-1] with its axes reversed
        out = (shape[1] * shape[2], shape[2], 1)
        return [out, out, (1, shape[0], shape[0] * shape[1])]
    for shape, items, tile_rows in [((100, 1000, 1000), (4, 4, 4), 100),  # 1.2 GB
                                    ((100, 1000, 1000), (8, 8, 8), 100),
                                    ((100, 10, 1000), (8, 8, 8), 50),  # 24 MB
                                    ((100, 10, 1000), (4, 4, 4), 100),  # 12 MB: 400 B rows
                                    ((300, 1000, 1000), (4, 4, 4), 30)]:  # 300 x 1000 x 4 B > 512 KiB
        launch = host_launch.plan_launch(shape, reversed_self(shape), items, 2)
        assert launch.dims[-2] == shape[0] and launch.tile_rows == tile_rows, (shape, launch.describe())
    # ... and its tiles take enough slices side by side that a 2-byte gathered source row (100
    # elements, 200 B, its slices back to back) is read in runs of PANEL_BYTES_16BIT or more
    for shape, items, seg in [((100, 1000, 1000), (2, 2, 2), 2), ((100, 1000, 1000), (4, 4, 4), 1),
                              ((50, 1000, 1000), (2, 2, 2), 3), ((100, 100, 100), (2, 2, 2), 13),  # in cache
                              ((100, 1000, 3000), (2, 2, 2), 1)]:  # tiles narrower than a row: one
        launch = host_launch.plan_launch(shape, reversed_self(shape), items, 2)
        assert launch.tile_rows == shape[0] and launch.seg == seg, (shape, launch.describe())
    sliced = reversed_self((100, 1000, 1000))
    sliced[2] = (1, 200, 200 * 1000)  # self's slices 200 apart, not back to back: one
    assert host_launch.plan_launch((100, 1000, 1000), sliced, (2, 2, 2), 2).seg == 1
    mid = [(2500, 1), (2500, 1), (1, 1000)]
    assert host_launch.plan_launch((1000, 2500), mid, (4, 4, 4), 2).tile_cols == 512  # 30 MB
    rev = host_launch.plan_launch((2, 3), [(3, 1), (-3, -1), (3, 1)], (4, 4, 4), 1)
    assert rev.operands[1].offset == 5 and rev.modes == "crc"
    with pytest.raises(dataclasses_frozen_error()):
        flat.walker = "rows"  # frozen


def dataclasses_frozen_error():
    import dataclasses

    return dataclasses.FrozenInstanceError


def test_collapse_merges_dense_dims():
    dims, strides = host_launch.collapse((2, 3, 4), [(12, 4, 1), (12, 4, 1)])
    assert dims == (24,) and strides == ((1,), (1,))
    dims, strides = host_launch.collapse((2, 1, 4), [(4, 4, 1), (0, 0, 1)])
    assert dims == (2, 4) and strides[1] == (0, 1)


# ---- tracing, fallback and backend selection -------------------------------------------------------
def test_trace_records_numpy_dtypes():
    from opsnn.kernels import numpy_backend
    from opsnn.ops.activation import hardtanh_backward_kernel, leaky_relu_backward_kernel

    dag = numba_codegen.trace(leaky_relu_backward_kernel, numpy_backend.OPS, [F32, F32], {"negative_slope": F32})
    assert dag.op == "where" and dag.dtype == F32
    dag = numba_codegen.trace(hardtanh_backward_kernel, numpy_backend.OPS, [F32, BF16],
                              {"min_val": F32, "max_val": F32})
    assert dag.dtype == BF16  # grad is native: where(..., bf16, 0) stays bf16 (bits copied)


def test_numpy_backend_where_gets_no_python_number_beside_an_array(backend, monkeypatch):
    """NumPy 2.0.x segfaults within ~1000 calls of np.where(mask, bfloat16 array, 0), which
    HardtanhBackward's native bf16 grad beside ops.zero was: the NumPy backend hands np.where a zero
    of the array's dtype instead, with the same bits."""
    seen = []
    where = np.where

    def spy(cond, a, b):
        seen.append(tuple(x.dtype.name if isinstance(x, np.ndarray) else type(x).__name__ for x in (a, b)))
        return where(cond, a, b)

    monkeypatch.setattr(np, "where", spy)
    x = np.array([-2.0, -0.0, 0.5, np.nan, 3.0], BF16)
    grad = np.array([1.5, -2.0, 3.0, 4.0, 5.0], BF16)
    got = backend("numpy", opsnn.hardtanh_backward, grad, x)
    assert got.dtype == BF16 and got.view(np.uint16).tolist() == [0, 0xC000, 0x4040, 0x4080, 0]
    # the bounds' NaN screens (NumPy scalars and inf), then the grad beside a bfloat16 zero, no 'int'
    assert seen == [("float32", "float"), ("float32", "float"), ("bfloat16", "bfloat16")]


def test_value_inputs_leave_out_compared_only_operands():
    """HardtanhBackward only compares self, so its float16 loads need no NaN screen."""
    from opsnn.kernels import numpy_backend
    from opsnn.ops.activation import hardtanh_backward_kernel, leaky_relu_backward_kernel

    dag = numba_codegen.trace(hardtanh_backward_kernel, numpy_backend.OPS, [F32, F16],
                              {"min_val": F32, "max_val": F32})
    assert numba_codegen.value_inputs(dag) == {1}
    dag = numba_codegen.trace(leaky_relu_backward_kernel, numpy_backend.OPS, [F32, F32], {"negative_slope": F32})
    assert numba_codegen.value_inputs(dag) == {0}
    assert numba_codegen.value_inputs(numba_codegen.Node("input", (), F16, 0)) == {0}


def test_uncompilable_expression_falls_back_once(backend, caplog):
    def kernel(ops, a, *, k):
        if a > 0:  # Python control flow on an operand: not a DAG
            return a
        return a * k

    step = Step("Kernel", (), None, DataType.FLOAT, name="Odd", kernel=kernel, native=(False,),
                scalars=(("k", 2.0),), compute=DataType.FLOAT)
    src = np.array([3.0], F32)
    dst = np.zeros(1, F32)
    with caplog.at_level(logging.WARNING, logger="opsnn"):
        numba_backend.launch(step, [src], dst)
        numba_backend.launch(step, [src], dst)
    assert dst[0] == 3.0
    assert sum("cannot compile" in r.message for r in caplog.records) == 1


def test_explicit_backend_that_cannot_load_raises(monkeypatch):
    monkeypatch.setitem(kernels._BACKENDS, "ghost", "opsnn.kernels.no_such_backend")
    with pytest.raises(ImportError, match="ghost"):
        kernels.get("ghost")
    with pytest.raises(ValueError, match="unknown kernel backend"):
        kernels.get("nope")


def test_backend_named_by_the_environment_that_cannot_load_is_561003(monkeypatch):
    """$OPSNN_BACKEND naming no usable backend: a configuration error with its own status (no
    kernel found), not 561000 (an opsnn bug); the message names the operator (a breaker: it did
    not), the variable and the value."""
    monkeypatch.setenv(kernels.ENV_VAR, "foo")
    monkeypatch.setattr(kernels, "DEFAULT", None)
    x = np.ones(3, F32)
    with pytest.raises(opsnn.AclnnError) as info:
        opsnn.leaky_relu_backward(x, x, 0.5)
    assert info.value.status == 561003
    assert info.value.message.startswith("LeakyReluBackward: $OPSNN_BACKEND='foo' selects no usable")
    assert "unknown kernel backend" in info.value.message
    assert np.array_equal(x, np.ones(3, F32))

def test_backend_names_ignore_case_and_surrounding_whitespace(monkeypatch):
    """(a packaging breaker) $OPSNN_BACKEND=NumPy or ' numpy' was 561003 on every call while
    $OPSNN_SOC=ascend910b is taken: a backend name ignores case and surrounding whitespace too,
    only whitespace is unset, and a real typo stays 561003 naming the value as given."""
    monkeypatch.setattr(kernels, "DEFAULT", None)
    x = np.array([-1.0, 2.0], F32)
    for text in ("NumPy", " numpy", "NUMPY\t"):
        monkeypatch.setenv(kernels.ENV_VAR, text)
        assert kernels.default_name() == "numpy" and kernels.get().NAME == "numpy"
        assert opsnn.leaky_relu_backward(x, x, 0.5).tolist() == [-0.5, 2.0]
    monkeypatch.setenv(kernels.ENV_VAR, "  ")
    assert kernels.default_name() == kernels.automatic_name()
    monkeypatch.setenv(kernels.ENV_VAR, " NumPi")
    with pytest.raises(opsnn.AclnnError) as info:
        opsnn.leaky_relu_backward(x, x, 0.5)
    assert info.value.status == 561003
    assert info.value.message == ("LeakyReluBackward: $OPSNN_BACKEND=' NumPi' selects no usable kernel backend: "
                                  "unknown kernel backend 'numpi'; known: numpy, numba")
    kernels.set_default(" Numba ")
    assert kernels.DEFAULT == "numba" and kernels.default_name() == "numba"


def test_automatic_backend_falls_back_to_numpy_with_one_warning():
    code = (
        "import sys, warnings\n"
        "sys.modules['numba'] = None\n"  # numba cannot be imported
        "import numpy as np, opsnn\n"
        "from opsnn import kernels\n"
        "with warnings.catch_warnings(record=True) as w:\n"
        "    warnings.simplefilter('always')\n"
        "    for _ in range(3):\n"
        "        r = opsnn.leaky_relu_backward(np.ones(3, np.float32), -np.ones(3, np.float32), 0.5)\n"
        "assert kernels.default_name() == 'numpy' and (r == 0.5).all()\n"
        "assert sum(issubclass(x.category, kernels.BackendFallbackWarning) for x in w) == 1, w\n"
        "print('ok')\n")
    assert "ok" in run_python(code)


def test_backend_fallback_is_said_once_at_the_callers_line(tmp_path):
    """(a packaging breaker) Without numba the notice was printed twice, as an "opsnn" log record
    and as the BackendFallbackWarning, which pointed at opsnn/engine.py. Now it is the warning
    alone, at the user's line whose call made the automatic choice."""
    script = tmp_path / "user.py"
    script.write_text("import numpy as np, opsnn\n"
                      "x = np.ones(3, np.float32)\n"
                      "r = opsnn.leaky_relu_backward(x, -x, 0.5)\n"
                      "r = opsnn.leaky_relu_backward(x, -x, 0.5)\n")
    code = f"import runpy, sys\nsys.modules['numba'] = None\nrunpy.run_path({str(script)!r})"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stderr == (
        f"{script}:3: BackendFallbackWarning: opsnn: the numba kernel backend is not available (kernel backend "
        "'numba' cannot be loaded: import of numba halted; None in sys.modules); using the NumPy backend\n"
        "  r = opsnn.leaky_relu_backward(x, -x, 0.5)\n")


def test_fallback_warning_points_past_torch_at_the_users_line(tmp_path):
    """(a breaker) Through an nn.Module holding opsnn's activation (or torch's dispatcher), the
    first frame outside opsnn is torch's: the warning pointed at torch/nn/modules/module.py. It
    points at the user's line that called the module."""
    pytest.importorskip("torch")
    script = tmp_path / "user.py"
    script.write_text("import torch, opsnn.torch as ot\n"
                      "m = ot.swap_activations(torch.nn.Sequential(torch.nn.LeakyReLU(0.1)))\n"
                      "y = m(torch.randn(4))\n")
    code = f"import runpy, sys\nsys.modules['numba'] = None\nrunpy.run_path({str(script)!r})"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stderr.startswith(f"{script}:3: BackendFallbackWarning: "), done.stderr


@pytest.mark.parametrize("pool", [False, True], ids=["serial", "pool"])
def test_import_compiles_nothing_and_second_process_loads_from_cache(tmp_path, pool):
    """Importing opsnn does not import numba; a call in a fresh process that finds the on-disk
    cache this process filled loads machine code (cache hits, no misses), for the one-thread
    walker and for the ``prange`` one (which reads the thread count: see ``pool_threads``)."""
    code = (
        "import sys, numpy as np, opsnn\n"
        "assert 'numba' not in sys.modules, 'opsnn imported numba'\n"
        "g = np.arange(6, dtype=np.float32) - 3\n"
        "opsnn.leaky_relu_backward(g, g, 0.5)\n"
        "opsnn.leaky_relu_backward(g, g, 0.5)  # the second call builds the cached entry\n"
        "from opsnn import _fastpath\n"
        "entry = next(iter(_fastpath.ENTRIES.values()))\n"
        "fn = entry.__globals__['DISPATCHER']  # the walker the hit calls\n"
        "assert fn.targetoptions.get('parallel', False) == %r\n"
        "print(sum(fn.stats.cache_hits.values()), sum(fn.stats.cache_misses.values()))\n" % pool)
    env = dict(__import__("os").environ, OPSNN_CACHE_DIR=str(tmp_path))
    if pool:  # every launch on the thread pool
        env["OPSNN_PARALLEL_MIN_BYTES"] = "1"
    run_python(code, 300, env)
    hits, misses = map(int, run_python(code, 300, env).split())
    assert hits >= 1 and misses == 0
    assert list(tmp_path.rglob("k_*.py"))


def test_panels_gather_and_scatter(backend):
    """A transposed input and an out with no unit stride: both go through the tile scratch."""
    for dt in (F32, F16, BF16):
        x = cases.filled((90, 40), dt, 22, cases.self_specials(dt)).T       # (40, 90) transposed
        g = cases.filled((40, 90), dt, 23, cases.grad_specials(dt))
        for out_base in (np.zeros((80, 270), dt), np.zeros((270, 80), dt)):
            out = out_base[::2, ::3] if out_base.shape[0] == 80 else out_base[::3, ::2].T
            both(backend, lambda: opsnn.leaky_relu_backward(g, x, 0.3, out=out.copy()))
    prog = numba_backend.program(engine_plan_for(g, x), {"grad_output": g.dtype, "self": x.dtype,
                                                          "out": g.dtype})[0]
    assert prog.launch_for(np.zeros((80, 270), g.dtype)[::2, ::3], [g, x], 1).walker == "panels"
    # up to SMALL_BYTES of output everything sits in L1: the rows walker reads in place
    assert prog.launch_for(np.zeros((4, 9), g.dtype)[::2, ::3], [g[:2, :3], x[:2, :3]], 1).walker == "rows"


@pytest.mark.parametrize("dt", WALKER_DTYPES, ids=str)
def test_panels_register_transposes(backend, dt):
    """Transposed inputs large enough for the L x L register transposes of the panels walker, with
    ragged edges (the last block of a row or column overlaps its neighbour), tiles of L/2 to L - 1
    rows or columns (L/2 x L/2 blocks), narrower ones (element gather), exact multiples of L,
    reversed columns (negative stride) and a row step of 2 (element gather)."""
    for rows, cols in ((300, 70), (37, 129), (15, 200), (200, 15), (32, 48), (9, 100), (100, 8), (5, 90)):
        x_mem = cases.filled((cols, 2 * rows), dt, 30, cases.self_specials(dt, (-1.0, 1.0)))
        g = cases.filled((rows, cols), dt, 31, cases.grad_specials(dt))
        for x in (x_mem[:, :rows].T, x_mem[::-1, :rows].T, x_mem[:, ::2].T):
            both(backend, opsnn.leaky_relu_backward, g, x, 0.3)
            if dt != F64:
                both(backend, opsnn.hardtanh_backward, g, x, -1.0, 1.0)


@pytest.mark.parametrize("dt", WALKER_DTYPES, ids=str)
def test_panels_borders_on_source_lines(backend, dt):
    """Source rows a whole number of cache lines apart, starting at every element of a line:
    the panels' borders move up to the lines (a first panel shorter, the last taller, up to a
    line's elements more than a tile's rows), and every element is still computed once."""
    line = 64 // dt.itemsize
    rows, cols = 256, 40  # a whole number of panels for every itemsize
    x_mem = cases.filled((cols, 512), dt, 44, cases.self_specials(dt, (-1.0, 1.0)))  # 512 elements a row
    g = cases.filled((rows, cols), dt, 45, cases.grad_specials(dt))
    prog = numba_backend.program(engine_plan_for(g, x_mem[:, :rows].T),
                                 {"grad_output": dt, "self": dt, "out": dt})[0]
    launch = prog.launch_for(np.empty((rows, cols), dt), [g, x_mem[:, :rows].T], 1)
    assert launch.walker == "panels" and launch.tile_rows * dt.itemsize % 64 == 0 and launch.tile_rows < rows
    starts = {(x_mem.ctypes.data + start * dt.itemsize) % 64 for start in range(line)}
    assert len(starts) == line  # every position in a line, so every shift
    for start in range(line):
        x = x_mem[:, start:start + rows].T
        # into a NaN-filled out each time (a pooled result could hold the last call's values)
        both(backend, lambda x=x: opsnn.leaky_relu_backward(g, x, 0.3, out=np.full((rows, cols), np.nan, dt)))


def test_far_slices_gathered_column_blocks_first(backend):
    """Beyond FAR_BYTES, a reversed self whose 100-element source rows lie back to back is
    gathered two slices a tile, each column block across both slices before the next one
    (_numba_support.gather_tile): an odd slice count (a last group of one), columns that are not a
    whole number of blocks, specials in both inputs; bit for bit. Two-byte elements, for which
    this shape is planned two slices a tile (float16, as in WALKER_DTYPES)."""
    dt = F16
    shape = (100, 61, 1000)  # 6.1e6 elements, 36.6 MB moved
    x = cases.filled(shape[::-1], dt, 46, cases.self_specials(dt, (-1.0, 1.0))).transpose(2, 1, 0)
    g = cases.filled(shape, dt, 47, cases.grad_specials(dt))
    prog = numba_backend.program(engine_plan_for(g, x), {"grad_output": dt, "self": dt, "out": dt})[0]
    launch = prog.launch_for(np.empty(shape, dt), [g, x], 2)
    assert (launch.walker, launch.tile_rows, launch.seg) == ("panels", 100, 2), launch.describe()
    assert 3 * g.nbytes >= host_launch.FAR_BYTES
    both(backend, opsnn.leaky_relu_backward, g, x, 0.3)


@pytest.mark.parametrize("dt", WALKER_DTYPES, ids=str)
def test_nd_permutations(backend, dt):
    """Every permutation of a 3-D input and the 4-D ones that move the unit-stride dim (reversal,
    NCHW <-> NHWC, a sliced reversal), inputs permuted differently and a permuted out: bit for bit.
    The panels walker tiles the dim the input reads with unit stride, wherever it is."""
    import itertools

    shape3 = (24, 20, 36)
    x3 = cases.filled(shape3, dt, 40, cases.self_specials(dt, (-1.0, 1.0)))
    for perm in itertools.permutations(range(3)):
        x = x3.transpose(perm)
        g = cases.filled(x.shape, dt, 41, cases.grad_specials(dt))
        both(backend, opsnn.leaky_relu_backward, g, x, 0.3)
        both(backend, opsnn.leaky_relu_backward, g.copy(order="F"), x, 0.3)          # g reversed too
        out = np.zeros(x.shape[::-1], dt).T                                          # out reversed
        both(backend, lambda: opsnn.leaky_relu_backward(g, x, 0.3, out=out.copy()))
        if dt != F64:
            both(backend, opsnn.hardtanh_backward, g, x, -1.0, 1.0)
    x4 = cases.filled((6, 10, 12, 18), dt, 42, cases.self_specials(dt, (-1.0, 1.0)))
    for perm in ((3, 2, 1, 0), (0, 2, 3, 1), (0, 3, 1, 2), (2, 3, 0, 1)):
        for x in (x4.transpose(perm), x4[:, :, ::-1, 1:].transpose(perm)):
            g = cases.filled(x.shape, dt, 43, cases.grad_specials(dt))
            both(backend, opsnn.leaky_relu_backward, g, x, 0.3)


def test_bfloat16_permuted_inputs(backend):
    """bfloat16 through the panels walker on the benchmark's permuted layout (a 3-D self with its
    axes reversed), both ops: bit for bit (test_nd_permutations runs every permutation for one
    dtype per element size, WALKER_DTYPES)."""
    x = cases.filled((24, 20, 36), BF16, 40, cases.self_specials(BF16, (-1.0, 1.0))).transpose(2, 1, 0)
    g = cases.filled(x.shape, BF16, 41, cases.grad_specials(BF16))
    both(backend, opsnn.leaky_relu_backward, g, x, 0.3)
    both(backend, opsnn.hardtanh_backward, g, x, -1.0, 1.0)
    prog = numba_backend.program(engine_plan_for(g, x), {"grad_output": BF16, "self": BF16, "out": BF16})[0]
    assert prog.launch_for(np.zeros(x.shape, BF16), [g, x], 1).walker == "panels"


@pytest.mark.parametrize("parallel", [False, True], ids=["one thread", "two threads"])
def test_whole_row_panels(backend, monkeypatch, fresh_launches, parallel):
    """float32 row dims of at most WHOLE_ROW_BYTES whose panels would cut cache lines are one
    panel (a (40, 300, 20) reversal, a transposed (100, 300), slices side by side or not): the
    NumPy backend's bits in every element, special values included, on one thread and two."""
    if parallel:
        numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
        monkeypatch.setattr(parallelism, "PARALLEL_MIN_BYTES", 0)
    x3 = cases.filled((20, 300, 40), F32, 80, cases.self_specials(F32, (-1.0, 1.0))).transpose(2, 1, 0)
    x2 = cases.filled((300, 100), F32, 81, cases.self_specials(F32, (-1.0, 1.0))).T
    # one panel of rows, not panels of 20 / 25; but the (100, 300) on two threads, which one
    # panel would leave a thread idle
    for x, tile_rows in ((x3, 40), (x2, 25 if parallel else 100)):
        g = cases.filled(x.shape, F32, 82, cases.grad_specials(F32))
        strides = [numba_backend._aligned_strides(a, x.shape) for a in (g, g, x)]
        launch = numba_backend.plan_launch(x.shape, strides, (4, 4, 4), 2 if parallel else 1)
        assert launch.tile_rows == tile_rows, launch.describe()
        both(backend, lambda: opsnn.leaky_relu_backward(g, x, 0.3, out=np.full(x.shape, 7, F32)))
        both(backend, lambda: opsnn.hardtanh_backward(g, x, -1.0, 1.0, out=np.full(x.shape, 7, F32)))


# (dtype, two threads forced, every layout and both ops): each combination compiles kernels of
# its own (a parallel one ~5 s), so the full set runs for one dtype, the others the plain layouts
@pytest.mark.parametrize("dt, parallel, full", [(F16, False, True), (F32, True, False), (BF16, False, False),
                                                 (F64, False, False)], ids=str)
def test_panels_slices_side_by_side(backend, monkeypatch, fresh_launches, dt, parallel, full):
    """Rows shorter than a tile, which out continues in the dim above (a 3-D reversal's), are
    computed as runs across several slices of that dim (``seg``): one group of slices, groups
    whose last one is short, one slice (the walker without them), with outer dims above, a grad
    reversed across both dims (rows running backwards), in place, on two threads: the NumPy
    backend's bits in every element of out. A grad that does not continue its rows there
    (broadcast across that dim, or with a gap) keeps one slice per tile."""
    if parallel:
        numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
        monkeypatch.setattr(parallelism, "PARALLEL_MIN_BYTES", 0)
    x3 = cases.filled((36, 20, 24), dt, 70, cases.self_specials(dt, (-1.0, 1.0))).transpose(2, 1, 0)
    g3 = cases.filled(x3.shape, dt, 71, cases.grad_specials(dt))
    x4 = cases.filled((18, 12, 10, 6), dt, 72, cases.self_specials(dt, (-1.0, 1.0))).transpose(3, 2, 1, 0)
    g4 = cases.filled(x4.shape, dt, 73, cases.grad_specials(dt))
    layouts = [(g3, x3), (g4, x4)]
    if full:
        layouts.append((g3[:, ::-1, ::-1].copy()[:, ::-1, ::-1], x3))
    shape = x3.shape
    strides = [numba_backend._aligned_strides(a, shape) for a in (g3, g3, x3)]
    tile_rows = numba_backend.plan_launch(shape, strides, (dt.itemsize,) * 3, 2).tile_rows  # of the 24
    one_slice = tile_rows * 36 * dt.itemsize
    try:
        for tile_bytes, seg in ((1, 1), (3 * one_slice, 3), (1 << 30, 20)):
            monkeypatch.setattr(host_launch, "SEGMENT_TILE_BYTES", tile_bytes)
            fresh_launches()
            for g, x in layouts:
                prefilled = np.full(x.shape, 7, dt)
                both(backend, lambda: opsnn.leaky_relu_backward(g, x, 0.3, out=prefilled.copy()))
                if full and dt != F64:
                    both(backend, lambda: opsnn.hardtanh_backward(g, x, -1.0, 1.0, out=prefilled.copy()))

            def in_place():
                mem = g3.copy()
                return opsnn.leaky_relu_backward(mem, x3, 0.3, out=mem)
            both(backend, in_place)
            launch = numba_backend.plan_launch(shape, strides, (dt.itemsize,) * 3, 2)
            assert launch.walker == "panels" and launch.dims == (20, 24, 36) and launch.seg == seg
            assert launch.plan.n_blocks == min(2, ceil_div(20, seg) * ceil_div(24, tile_rows))
            assert (f"x {seg} slices of dim 0" in launch.describe()) == (seg > 1)
        gapped = np.zeros((24, 20, 37), dt)[..., :36]
        for g in (np.broadcast_to(g3[:, :1], g3.shape), gapped):
            both(backend, lambda: opsnn.leaky_relu_backward(g, x3, 0.3))
            strides = [numba_backend._aligned_strides(a, shape) for a in (g3, g, x3)]
            assert numba_backend.plan_launch(shape, strides, (dt.itemsize,) * 3, 1).seg == 1
    finally:
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)


@pytest.mark.parametrize("dt", WALKER_DTYPES, ids=str)
def test_reversed_runs(backend, dt):
    """Inner dims read or written backwards (stride -1, mode ``r``): 1-D and 2-D, rows long enough
    for the vector loops plus ragged tails, a reversed out, both reversed, a transposed grad
    beside them (panels walker), and in place on a reversed view: bit for bit."""
    x2 = cases.filled((37, 300), dt, 50, cases.self_specials(dt, (-1.0, 1.0)))
    g2 = cases.filled((37, 300), dt, 51, cases.grad_specials(dt))
    gt = cases.filled((300, 37), dt, 52, cases.grad_specials(dt)).T
    for x, g in ((x2[0, ::-1], g2[0]), (x2[:, ::-1], g2), (x2[::-1, ::-1], g2[:, ::-1]), (x2[:, ::-1], gt)):
        both(backend, opsnn.leaky_relu_backward, g, x, 0.3)
        out = np.zeros(x.shape[:-1] + (x.shape[-1] + 5,), dt)[..., -1:4:-1]
        both(backend, lambda: opsnn.leaky_relu_backward(g, x, 0.3, out=out.copy()))
        if dt != F64:
            both(backend, opsnn.hardtanh_backward, g, x, -1.0, 1.0)

    def in_place():
        base = g2.copy()
        return opsnn.leaky_relu_backward(base[:, ::-1], x2, 0.3, out=base[:, ::-1])
    both(backend, in_place)
    rev = host_launch.plan_launch((37, 300), [(300, 1), (300, -1), (300, 1)], (4, 4, 4), 1)
    assert rev.modes == "crc" and rev.walker == "rows"


@pytest.mark.parametrize("dt", WALKER_DTYPES, ids=str)
@pytest.mark.parametrize("channels", [2, 3, 4, 5])
def test_panels_few_channels(backend, dt, channels):
    """Image layouts with 2-5 channels, both ways (NHWC <-> NCHW): tiles that many rows or columns
    wide, gathered by loops of a constant step (2-4: de-interleaved or interleaved with vector
    shuffles) or element by element along their longer side, and computed as one run where every
    operand holds the tile's rows back to back (a grad reversed as a whole too, rows running
    backwards); and the same with a gap between rows, which keeps a run per row."""
    nhwc = cases.filled((2, 20, 30, channels), dt, 60, cases.self_specials(dt, (-1.0, 1.0)))
    nchw = cases.filled((2, channels, 20, 30), dt, 61, cases.self_specials(dt, (-1.0, 1.0)))
    for x in (nhwc.transpose(0, 3, 1, 2), nchw.transpose(0, 2, 3, 1)):
        g = cases.filled(x.shape, dt, 62, cases.grad_specials(dt))
        g_rev = g.reshape(-1)[::-1].copy()[::-1].reshape(x.shape)    # same values, strides all negative
        g_gap = np.zeros(x.shape[:-1] + (x.shape[-1] + 1,), dt)[..., :-1]
        g_gap[...] = g
        for gv in (g, g_rev, g_gap):
            both(backend, opsnn.leaky_relu_backward, gv, x, 0.3)
            if dt != F64:
                both(backend, opsnn.hardtanh_backward, gv, x, -1.0, 1.0)
    prog = numba_backend.program(engine_plan_for(g, x), {"grad_output": g.dtype, "self": x.dtype,
                                                          "out": g.dtype})[0]
    assert prog.launch_for(np.zeros(x.shape, dt), [g, x], 1).walker == "panels"


@pytest.mark.parametrize("dt", WALKER_DTYPES, ids=str)
def test_every_second_element(backend, dt):
    """Inputs and outs read or written with a step of 2 (mode ``e`` for 2-byte elements, ``g`` for
    wider ones), alone, beside contiguous and reversed operands, and in place: bit for bit."""
    x2 = cases.filled((23, 2 * 150), dt, 70, cases.self_specials(dt, (-1.0, 1.0)))
    g2 = cases.filled((23, 2 * 150), dt, 71, cases.grad_specials(dt))
    xt = cases.filled((150, 23), dt, 72, cases.self_specials(dt, (-1.0, 1.0))).T  # beside a transposed
    g_dense = np.zeros((23, 2 * 150), dt)                                           # input: panels, and
    g_dense[:, ::2] = g2[:, ::2]                                                    # rows back to back
    for g, x in ((g2[:, ::2], x2[:, ::2]), (g2[:, :150], x2[:, 1::2]), (g2[:, ::-2], x2[:, ::2]), (g2[0, ::2], x2[0, ::2]),
                 (g2[:, ::2], xt), (g_dense[:, ::2], xt)):
        both(backend, opsnn.leaky_relu_backward, g, x, 0.3)
        out = np.zeros(g.shape[:-1] + (2 * g.shape[-1],), dt)[..., ::2]
        both(backend, lambda: opsnn.leaky_relu_backward(g, x, 0.3, out=out.copy()))
        if dt != F64:
            both(backend, opsnn.hardtanh_backward, g, x, -1.0, 1.0)

    def in_place():
        base = g2.copy()
        return opsnn.leaky_relu_backward(base[:, ::2], x2[:, 1::2], 0.3, out=base[:, ::2])
    both(backend, in_place)
    step = host_launch.plan_launch((23, 150), [(150, 1), (300, 2), (300, 2)], (dt.itemsize,) * 3, 1)
    assert step.modes == ("cee" if dt.itemsize == 2 else "cgg") and step.walker == "rows"
    beside = host_launch.plan_launch((23, 150), [(150, 1), (300, 2), (1, 23)], (dt.itemsize,) * 3, 1)
    assert beside.walker == "panels" and beside.modes[:2] == ("ce" if dt.itemsize == 2 else "cg")


@pytest.mark.parametrize("dt", WALKER_DTYPES, ids=str)
def test_steps_of_three_and_four(backend, dt):
    """Inputs and outs read or written every third or fourth element (modes ``t`` and ``q`` for
    2-byte elements, constant steps LLVM reads as whole vectors: float16 ``x[::3]`` at 1e5 107 ->
    30 us; ``g`` for wider ones), 1-D and in columns, beside a reversed input, with ragged
    lengths, an out of that step, and in place: bit for bit."""
    for step, mode in ((3, "t"), (4, "q")):
        x_mem = cases.filled((23, step * 151), dt, 73, cases.self_specials(dt, (-1.0, 1.0)))
        g_mem = cases.filled((23, step * 151), dt, 74, cases.grad_specials(dt))
        for g, x in ((g_mem[:, ::step], x_mem[:, ::step]), (g_mem[:, :151], x_mem[:, 1::step]),
                     (g_mem[:, ::-step], x_mem[:, ::step]), (g_mem[0, ::step], x_mem.reshape(-1)[:151 * step:step]),
                     (g_mem[:, :151], x_mem[:, :151])):
            both(backend, opsnn.leaky_relu_backward, g, x, 0.3)
            def into_step(g=g, x=x, step=step):  # the whole base: nothing written between the steps
                base = np.zeros(g.shape[:-1] + (step * g.shape[-1],), dt)
                opsnn.leaky_relu_backward(g, x, 0.3, out=base[..., ::step])
                return base
            both(backend, into_step)
            if dt != F64:
                both(backend, opsnn.hardtanh_backward, g, x, -1.0, 1.0)

        def in_place(step=step, g_mem=g_mem, x_mem=x_mem):
            base = g_mem.copy()
            return opsnn.leaky_relu_backward(base[:, ::step], x_mem[:, 1::step], 0.3, out=base[:, ::step])
        both(backend, in_place)
        launch = host_launch.plan_launch((23, 151), [(151, 1), (3 * 151, 3), (151 * step, step)],
                                         (dt.itemsize,) * 3, 1)
        assert launch.walker == "rows" and launch.modes == ("ct" + mode if dt.itemsize == 2 else "cgg")


def test_base_spans_each_view_from_its_lowest_address(backend):
    """``numba_backend.base``: the 1-D view the kernels index from, for dense, transposed,
    reversed, gapped and broadcast views (a broadcast one reduced to the memory of one slice
    first): it starts at the view's lowest-addressed element and spans exactly to its highest."""
    m = np.arange(24.0).reshape(4, 6)
    views = [m, m.T, m[:, ::-1], m[::2, 1:5], m[:, :1], np.broadcast_to(m[:, :1], (4, 6)),
             np.broadcast_to(np.float64(7.0), (3, 2)), np.broadcast_to(m[:, ::-2], (5, 4, 3)),
             np.broadcast_to(m.T[None], (2, 6, 4))[:, ::-1], np.broadcast_to(m[1], (4, 6))]
    cube = np.arange(120.0).reshape(4, 5, 6)
    views += [cube[:, 1:4, ::2], cube[::-1, :, 1::3], m.astype(F16)[:, 1::2], m.astype(BF16)[::-1, ::-3]]
    for v in views:
        offsets = [sum(i * s for i, s in zip(idx, v.strides)) for idx in np.ndindex(v.shape)]
        flat = numba_backend.base(v)
        assert flat.ndim == 1 and flat.flags.c_contiguous
        assert flat.dtype == (np.uint16 if v.dtype in (F16, BF16) else v.dtype)
        assert flat.ctypes.data == v.ctypes.data + min(offsets)
        assert flat.size * flat.itemsize == max(offsets) - min(offsets) + v.itemsize
        at = [(v.ctypes.data + o - flat.ctypes.data) // v.itemsize for o in offsets]
        np.testing.assert_array_equal(flat[at], np.ascontiguousarray(v).reshape(-1).view(flat.dtype))
    # the view keeps the memory it spans alive when every other reference is gone
    flat = numba_backend.base(np.arange(35.0 * 32).reshape(32, 35)[:, :32])
    gc.collect()
    np.testing.assert_array_equal(flat, np.arange(31.0 * 35 + 32))
    for v in views[5:10]:
        g = np.linspace(-2.0, 2.0, v.size).reshape(v.shape)
        both(backend, opsnn.leaky_relu_backward, v, g, 0.3)
        both(backend, lambda: opsnn.leaky_relu_backward(g, v, 0.3, out=np.zeros(v.shape)))


def test_fused_pythonic_call_allocates_no_workspace(backend):
    """The Pythonic API hands the engine its workspace as a function: the fused pass reads a
    transposed input in place and never calls it (the 4 MB Contiguous slot of a 1000 x 1000
    float32 input is not allocated); the NumPy backend runs the steps and gets it."""
    import tracemalloc

    from opsnn import _fastpath

    g = np.ones((1000, 1000), F32)
    x = -np.arange(1e6, dtype=F32).reshape(1000, 1000).T
    out = np.empty((1000, 1000), F32)
    opsnn.leaky_relu_backward(g, x, 0.5, out=out)  # compiled and warm
    for name in ("numba", "numpy"):
        _fastpath.clear()  # the full path, with its plan and workspace
        out[...] = 0
        tracemalloc.start()
        backend(name, opsnn.leaky_relu_backward, g, x, 0.5, out=out)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert (peak < 1 << 20) == (name == "numba"), (name, peak)
        assert (out[:, 0] == np.where(x[:, 0] > 0, 1.0, 0.5)).all() and out[0, 1] == 0.5


def test_panels_row_dim_is_the_gathered_unit_stride_dim():
    """A reversed 3-D input (strides (1, 64, 4096) over the output's dims): the walk moves its
    unit-stride dim to the rows of the 2-D tiles, keeping the others in the output's order, so
    the register transposes read unit-stride rows; the collapsed dims of a 2-D transpose stay."""
    out = (4096, 64, 1)
    rev = host_launch.plan_launch((64, 64, 64), [out, out, (1, 64, 4096)], (4, 4, 4), 1)
    assert rev.walker == "panels" and rev.dims == (64, 64, 64)
    assert [op.strides for op in rev.operands] == [(64, 4096, 1), (64, 4096, 1), (64, 1, 4096)]
    # rows of 64 that out continues in the dim above: 32 slices (256 KiB of 32-row tiles) side by
    # side per tile; 2 groups of slices x 2 tiles of rows
    assert rev.tile_rows == 32 and rev.tile_cols == 64 and rev.seg == 32 and rev.plan.numel == 2 * 2
    # the smaller of the strides below the inner one; a dim broadcast (stride 0) is never the rows
    mid = host_launch.plan_launch((30, 40, 50), [(2000, 50, 1), (1, 7, 500)], (4, 4), 1)
    assert mid.walker == "panels" and mid.dims == (40, 30, 50)
    assert [op.strides for op in mid.operands] == [(50, 2000, 1), (7, 1, 500)]
    bcast = host_launch.plan_launch((30, 40), [(40, 1), (0, 2)], (4, 4), 1)
    assert bcast.walker == "rows"
    t2 = host_launch.plan_launch((300, 400), [(400, 1), (400, 1), (1, 300)], (4, 4, 4), 1)
    assert t2.walker == "panels" and t2.operands[2].strides == (1, 300)


def test_walk_follows_the_inputs_order_where_they_share_one_out_does_not(backend):
    """Two transposed inputs into a C-contiguous out (or C inputs into a Fortran-ordered out): the
    walk follows the inputs' memory order and scatters out through register transposes
    (``scatter_tile``), one transposed operand instead of two (float32 1000 x 1000, one thread:
    1.3-2.1 ms -> 0.36-0.40). One transposed input keeps out's order, and so do ties and tiles
    under SCATTER_MIN_SIDE (a few channels). Results bit for bit as the NumPy backend, ragged
    edges and half blocks included."""
    both_t = host_launch.plan_launch((1000, 1000), [(1000, 1), (1, 1000), (1, 1000)], (4, 4, 4), 1)
    assert both_t.walker == "panels" and both_t.modes == "gcc"
    assert both_t.operands[0].strides == (1, 1000)  # out: unit stride along the tile's rows
    one_t = host_launch.plan_launch((1000, 1000), [(1000, 1), (1000, 1), (1, 1000)], (4, 4, 4), 1)
    assert one_t.modes == "ccg"
    fortran_out = host_launch.plan_launch((300, 400), [(1, 300), (400, 1), (400, 1)], (2, 2, 2), 1)
    assert fortran_out.modes == "gcc"
    # grad transposed, self a row broadcast along the rows (no candidate): grad's order, where
    # out is scattered and self read as a broadcast, rather than two gathers
    assert host_launch.walk_order((300, 400), [(400, 1), (1, 300), (0, 300)], (4, 4, 4)) == 1
    assert host_launch.walk_order((30, 40), [(40, 1), (1, 30), (1, 30)], (4, 2, 2)) == 0  # a tie: out's
    # out's tiles narrower than SCATTER_MIN_SIDE on a side: out's order (the inputs' channel gathers)
    assert host_launch.walk_order((33333, 3), [(3, 1), (1, 33333), (1, 33333)], (4, 4, 4)) == 0
    assert host_launch.walk_order((3, 33333), [(33333, 1), (1, 3), (1, 3)], (4, 4, 4)) == 0
    assert host_launch.walk_order((8, 12500), [(12500, 1), (1, 8), (1, 8)], (4, 4, 4)) == 1
    # NHWC from NCHW with 2 channels: out would be written every second element: out's order
    assert host_launch.walk_order((2, 20, 30, 2), [(1200, 60, 2, 1), (1200, 60, 2, 1),
                                                   (1200, 30, 1, 600)], (2, 2, 2)) == 0
    for dt in WALKER_DTYPES:
        for rows, cols in ((300, 70), (37, 129), (9, 100), (100, 8), (5, 90)):
            g = cases.filled((cols, rows), dt, 40, cases.grad_specials(dt)).T
            x = cases.filled((cols, rows), dt, 41, cases.self_specials(dt, (-1.0, 1.0))).T
            c_out = np.zeros((rows, cols), dt)
            f_out = np.zeros((cols, rows), dt).T
            both(backend, lambda g=g, x=x, o=c_out: opsnn.leaky_relu_backward(g, x, 0.3, out=o.copy()))
            both(backend, lambda g=g, x=x, o=f_out: opsnn.leaky_relu_backward(
                np.ascontiguousarray(g), np.ascontiguousarray(x), 0.3, out=o.copy(order="K")))
            if dt != F64:
                both(backend, lambda g=g, x=x, o=c_out: opsnn.hardtanh_backward(g, x, -1.0, 1.0, out=o.copy()))


def test_short_rows_take_the_panels_walker_where_an_input_has_gaps():
    """Rows under SHORT_ROW_BYTES (of the widest operand): an input with gaps between its rows,
    or one broadcast along or across them, is gathered, the others read in place; whole-row
    tiles of about 2 KiB; an out with gaps is scattered. The rows walker keeps rows of
    SHORT_ROW_BYTES or more, 8-byte rows of 3, an out of another inner stride, and small
    launches (SMALL_BYTES)."""
    dense = (2, 1)
    sliced = host_launch.plan_launch((1000, 2), [dense, dense, (4, 1)], (4, 4, 4), 1)
    gap_out = host_launch.plan_launch((1000, 2), [(4, 1), dense, dense], (4, 4, 4), 1)
    assert gap_out.walker == "panels" and gap_out.modes == "gcc"
    assert sliced.walker == "panels" and sliced.modes == "ccg" and (sliced.tile_rows, sliced.tile_cols) == (250, 2)
    column = host_launch.plan_launch((1000, 2), [dense, (1, 0), (2, 1)], (2, 2, 2), 1)
    assert column.walker == "panels" and column.modes == "cgc"
    one_row = host_launch.plan_launch((1000, 2), [dense, (0, 1), (4, 1)], (4, 4, 4), 1)
    assert one_row.walker == "panels" and one_row.modes == "cgg"   # a (2,) row repeated into the tile
    assert host_launch.plan_launch((1000, 8), [(8, 1), (8, 1), (16, 1)], (4, 4, 4), 1).walker == "rows"
    assert host_launch.plan_launch((1000, 7), [(7, 1), (7, 1), (16, 1)], (4, 4, 4), 1).walker == "panels"
    assert host_launch.plan_launch((1000, 7), [(7, 1), (7, 1), (16, 1)], (4, 2, 4), 1).walker == "panels"
    assert host_launch.plan_launch((1000, 3), [(3, 1), (3, 1), (4, 1)], (8, 8, 8), 1).walker == "rows"
    assert host_launch.plan_launch((1000, 2), [(2, 1), (2, 1), (4, 1)], (8, 8, 8), 1).walker == "panels"
    assert host_launch.plan_launch((1000, 2), [(4, -1), (2, 1), (4, 1)], (4, 4, 4), 1).walker == "rows"
    assert host_launch.plan_launch((1000, 2), [dense, (1, 0), (0, 1)], (4, 4, 4), 1).modes == "cgg"
    assert host_launch.plan_launch((60, 2), [dense, dense, (4, 1)], (4, 4, 4), 1).walker == "rows"  # SMALL_BYTES


def engine_plan_for(g, x):
    from opsnn import engine
    from opsnn._core.tensor import ArrayTensor, aclScalar

    args = {"grad_output": ArrayTensor(g), "self": ArrayTensor(x), "negative_slope": aclScalar(0.3, DataType.DOUBLE),
            "self_is_result": False, "out": ArrayTensor(np.zeros(g.shape, g.dtype))}
    return engine.plan(opsnn.registry.get("LeakyReluBackward"), args).plan


def test_widening_cast_quiets_a_signalling_nan(backend):
    """grad float32/bfloat16 with self float64 runs in float64 (Cast, kernel, Cast back). NumPy's
    float32 -> float64 cast quiets a signalling NaN; the fused kernel must too, although LLVM may
    fold a widening and the narrowing after it into a plain copy (``f2d``)."""
    x = np.array([1.0, -1.0, 2.0, 0.5])                                   # float64: promotes
    grads = (np.array([0x7FA00005, 0xFFA00005, 0x7F800001, 0x7FC00007], np.uint32).view(F32),
             np.array([0x7F85, 0xFF81, 0x7F81, 0x7FC1], np.uint16).view(BF16))
    for g in grads:
        for odt in (F32, BF16, F16, F64):
            got = both(backend, lambda: opsnn.leaky_relu_backward(g, x, 0.3, out=np.zeros(4, odt)))
            if odt == F32:  # every NaN comes out quiet (bit 22), payload kept where it fits
                assert (got.view(np.uint32) & 0x7FC00000 == 0x7FC00000).all(), got.view(np.uint32)


def test_ml_dtypes_is_imported_by_the_first_bfloat16_not_by_opsnn():
    """``import opsnn`` and a float32 call of the compiled backend leave ml_dtypes unimported (its
    0.7.0 takes ~0.7 s to import, dtypes._ML_DTYPES); the aclDataType BF16 imports it on demand,
    and a bfloat16 array, scalar or out made after opsnn's tables were built is recognised."""
    code = (
        "import sys\n"
        "import numpy as np\n"
        "import opsnn\n"
        "from opsnn import kernels\n"
        "from opsnn._core import dtypes\n"
        "from opsnn._core.dtypes import DataType\n"
        "assert kernels.default_name() == 'numba', kernels.default_name()\n"
        "x = np.array([-2.0, -0.0, 3.0], np.float32)\n"
        "assert opsnn.leaky_relu_backward(x, x, 0.5, False).tolist() == [-1.0, -0.0, 3.0]\n"
        "assert 'numba' in sys.modules and 'ml_dtypes' not in sys.modules\n"
        "import ml_dtypes\n"
        "b = x.astype(ml_dtypes.bfloat16)\n"
        "r = opsnn.leaky_relu_backward(b, b, ml_dtypes.bfloat16(0.5), False)\n"
        "assert r.dtype == ml_dtypes.bfloat16 and r.astype(np.float32).tolist() == [-1.0, -0.0, 3.0]\n"
        "out = np.zeros(3, ml_dtypes.bfloat16)\n"
        "opsnn.hardtanh_backward(b, b, -2.5, 2.5, out=out)\n"
        "assert out.view(np.uint16).tolist() == [0xC000, 0x8000, 0x0000], out.view(np.uint16)\n"
        "assert dtypes.to_numpy(DataType.BF16) == np.dtype(ml_dtypes.bfloat16)\n"
        "print('ok')\n")
    assert "ok" in run_python(code, 300)
    code = ("import sys\n"
            "from opsnn._core import dtypes\n"
            "from opsnn._core.dtypes import DataType\n"
            "assert 'ml_dtypes' not in sys.modules\n"
            "assert dtypes.to_numpy(DataType.BF16).name == 'bfloat16' and 'ml_dtypes' in sys.modules\n"
            "print('ok')\n")
    assert "ok" in run_python(code)


def test_numba_cpu_name_generic_compiles_float16_without_f16c():
    """NUMBA_CPU_NAME=generic (numba's setting for machine code portable across hosts, a cache
    built into an image: it sets NUMBA_CPU_FEATURES empty) has numba compile for a target without
    F16C. opsnn chose its F16C conversions from the host's features, so LLVM lowered them to
    calls of __extendhfsf2 that the JIT cannot link: "LLVM ERROR: Symbol not found", the process
    aborted (SIGABRT) at the first float16 kernel. The features are numba's target's now: the
    bit formulas there, NumPy's bits (a signalling NaN kept as one)."""
    import os

    code = """
import numpy as np
import opsnn
from opsnn.kernels import _numba_support as S
x = np.array([-2.0, 3.0, -0.0, 65504.0, -np.inf, 6e-08], np.float16)
x = np.concatenate([x, np.array([0x7D01, 0xFC00 | 0x0201], np.uint16).view(np.float16)])  # signalling NaNs
got = opsnn.leaky_relu(x, 0.5)
expected = np.where(x > 0, x, (x.astype(np.float32) * np.float32(0.5)).astype(np.float16))
print(S.HAS_F16C, S.VECTOR_BYTES, got.view(np.uint16).tolist() == expected.view(np.uint16).tolist())
"""
    env = {**os.environ, "NUMBA_CPU_NAME": "generic", "OPSNN_BACKEND": "numba"}
    env.pop("NUMBA_CPU_FEATURES", None)
    assert run_python(code, 300, env).split() == ["False", "16", "True"]


@pytest.mark.parametrize("tail", [",-f16c", ",-avx"])
def test_numba_cpu_features_turning_f16c_off_after_the_hosts_string_takes_the_bit_formulas(tail):
    """NUMBA_CPU_FEATURES is read by LLVM in order, a later flag overriding an earlier one, and
    turning a feature off turns off those that need it (F16C needs AVX): the host's own string with
    ',-f16c' (or ',-avx') appended, the way one feature is switched off, is a target without F16C.
    opsnn read the string as a set, saw '+f16c' and used the F16C conversions: "LLVM ERROR: Symbol
    not found: __extendhfsf2", the process aborted at its first float16 kernel. Whether the target
    converts half in instructions is now asked of LLVM itself."""
    import os

    from llvmlite import binding

    code = """
import numpy as np
import opsnn
from opsnn.kernels import _numba_support as S
x = np.array([-2.0, 3.0, -0.0, 65504.0, -np.inf, 6e-08], np.float16)
x = np.concatenate([x, np.array([0x7D01, 0xFC00 | 0x0201], np.uint16).view(np.float16)])  # signalling NaNs
got = opsnn.leaky_relu(x, 0.5)
expected = np.where(x > 0, x, (x.astype(np.float32) * np.float32(0.5)).astype(np.float16))
print(S.HAS_F16C, got.view(np.uint16).tolist() == expected.view(np.uint16).tolist())
"""
    host = binding.get_host_cpu_features().flatten()
    env = {**os.environ, "NUMBA_CPU_FEATURES": host + tail, "OPSNN_BACKEND": "numba"}
    env.pop("NUMBA_CPU_NAME", None)
    assert run_python(code, 300, env).split() == ["False", "True"]


def test_a_cache_that_cannot_be_written_is_said_once_per_process(monkeypatch, tmp_path, caplog):
    """A full disk under the kernel cache (or a cache directory made read-only after start) printed
    a warning per kernel, two where numba's save failed (a "disk cache failed ... compiles again"
    line, then a compile failure), and every kernel ran on the NumPy backend as a
    COMPILE_FAILURE. Now one warning per process, naming the directory, the reason and
    OPSNN_CACHE_DIR: a kernel numba cannot save is compiled in memory and runs compiled; a walker
    whose module cannot be written runs on NumPy (same bits), and neither is a compile failure.
    ENOSPC is simulated on numba's index/data writes, then on the modules' writes too."""
    import errno
    import pathlib

    from numba.core import caching

    from opsnn import _fastpath, engine
    from opsnn.kernels import kernel_cache

    fresh = tmp_path / f"{kernel_cache.CACHE_PREFIX}test"
    fresh.mkdir()
    monkeypatch.setattr(kernel_cache, "cache_dir", lambda: fresh)
    monkeypatch.setattr(kernels, "DEFAULT", "numba")
    monkeypatch.setattr(numba_backend, "_WARNED", set())
    for module in (S, parallelism):  # a helper's save that fails drops its disk cache: given back after
        for fn in vars(module).values():
            if isinstance(fn, numba.core.dispatcher.Dispatcher):
                monkeypatch.setattr(fn, "_cache", fn._cache)

    def fresh_walkers():  # new modules and dispatchers: each call below generates and compiles
        for name in ("_MODULES", "_PROGRAMS", "_PROGRAM_CACHE", "_STEPS", "_COPIES", "_FAILED"):
            monkeypatch.setattr(numba_backend, name, {})
        monkeypatch.setattr(engine, "_PLAN_CACHE", {})
        monkeypatch.setattr(engine, "_BOUND_CALLS", {})
        _fastpath.clear()

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    g, x = np.array([1.0, 2.0, 4.0, 8.0], F32), np.array([-2.0, 0.5, 3.0, -0.0], F32)
    calls = [(lambda: opsnn.leaky_relu_backward(g, x, 0.5), [0.5, 2.0, 4.0, 4.0]),
             (lambda: opsnn.hardtanh_backward(g, x, -1.0, 1.0), [0.0, 2.0, 0.0, 8.0]),
             (lambda: opsnn.leaky_relu_backward(g.astype(F16), x.astype(F16), 0.25), [0.25, 2.0, 4.0, 2.0])]
    with caplog.at_level(logging.WARNING, logger="opsnn"):
        fresh_walkers()
        monkeypatch.setattr(caching.IndexDataCacheFile, "_open_for_write", full)
        for call, want in calls:
            assert call().tolist() == want
        assert numba_backend._FAILED == {}, "each kernel ran compiled, not saved"
        assert not list(fresh.glob("__pycache__/*.nbi")) and len(list(fresh.glob("k_*.py"))) >= 3

        fresh_walkers()
        written = pathlib.Path.write_text
        monkeypatch.setattr(pathlib.Path, "write_text", lambda self, *a, **k: full() if self.parent == fresh
                            else written(self, *a, **k))
        for path in fresh.glob("k_*.py"):
            path.unlink()
        for call, want in calls:
            assert call().tolist() == want
        assert numba_backend._FAILED and not list(fresh.glob("*.tmp"))
    lines = [r.getMessage() for r in caplog.records if "numba backend" in r.getMessage()]
    # (the first save that failed names its directory: a walker's, or a support helper's compiled
    # for a new signature, under the cache root)
    assert len(lines) == 1 and lines[0].startswith("numba backend: cannot write to the compiled-kernel cache in /")
    assert lines[0].endswith(" (No space left on device); from now on this process compiles kernels without saving "
                             "them (later processes compile them again), and runs walkers it could not write there "
                             "on the NumPy backend; free space there or set OPSNN_CACHE_DIR to a writable directory")
