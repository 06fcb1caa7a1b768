"""Scalar helpers the generated numba kernels call: bit casts and the float16/bfloat16 conversions.

float16 and bfloat16 travel as their own bits (uint16) and are computed in float32. The conversions
reproduce NumPy / ml_dtypes bit for bit (checked exhaustively by tests/test_numba_backend.py):

* ``h2f``  float16 -> float32: exact; NaN payloads are shifted, never quieted (NumPy's
  ``npy_halfbits_to_floatbits``). Branch-free, so loops vectorize.
* ``h2f_hw`` / ``f2h_hw``: the F16C instructions (vcvtph2ps / vcvtps2ph), several times faster and
  equal to ``h2f`` / ``f2h`` for every input except a signalling NaN, which they quiet. A kernel
  tile runs with them and is recomputed with the exact formulas when an input a NaN could pass
  to the result from holds one (arithmetic never makes a signalling NaN, so only a loaded value
  can be one).
* ``f2h``  float32 -> float16: round to nearest even; overflow to +-inf; subnormals exact; a NaN
  keeps the top 10 payload bits and stays a NaN (``npy_floatbits_to_halfbits``).
* ``f2d``  float32 -> float64: exact; a NaN gets its quiet bit, as NumPy's (hardware) cast does.
* ``h2d``  float16 -> float64: exact, NaN payload kept (``npy_halfbits_to_doublebits``).
* ``d2h``  float64 -> float16: one rounding to nearest even (``npy_doublebits_to_halfbits``).
* ``bf2f`` bfloat16 -> float32: the 16 bits shifted up (exact).
* ``f2bf`` float32 -> bfloat16: round to nearest even; a NaN keeps its top 16 bits, exactly where
  its low 16 bits are zero (a bfloat16 value widened: ``f2bf(bf2f(b)) == b`` for every ``b``,
  signalling NaNs included), else with the quiet bit set (``dtypes.cast_into``, DECISION 1).
  ``f2bf_computed``: the same for values arithmetic made (their NaNs are quiet), one check less;
  ``f2bf_rounding``: for arithmetic on bfloat16 values and scalars, whose NaNs need no patch.
  ``f2bf_canonical``: NaN -> 0x7FC0 with the sign kept (ml_dtypes' own casts, used from float16);
  ``f2h_canonical`` likewise for bfloat16 -> float16 (NaN -> 0x7E00 with the sign kept).
* ``d2bf`` float64 -> bfloat16: one rounding (``dtypes.cast_into``: round to float32 *to odd*, then
  ``f2bf``).

More helpers are LLVM IR because numba's own lowering is slower or has no such operation:
``zero_unless`` (a select against +0.0 that keeps the load unconditional), ``select_bits`` (a
float select that LLVM before 20 cannot fold into arithmetic), ``bits_le`` /
``bits_ge`` / ``bits_lt`` / ``bits_gt`` (a float16/bfloat16 compared with a float32 on its own
bits, against the bound ``half_bound`` computes), ``transpose_block`` (an
L x L register transpose for the panels walker's gather of a transposed input, ``gather_tile``,
which every panels kernel calls; ``transpose_block_rows`` stores its rows where a table says),
``index_buffer``
(a walker's multi-index on the stack instead of the heap), and
``stream_copy`` / ``store_fence`` (non-temporal stores of a large output, which skip the
read-for-ownership a normal store costs). ``span_view`` is the host's: the 1-D view of a strided
operand's memory that the kernels take.

This module imports numba; only the numba backend imports it, on first use.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import get_num_threads, njit, types
from numba.core import cgutils
from numba.extending import intrinsic, overload

from . import kernel_cache

kernel_cache.claim_package_sources()  # before the cache=True functions below

_I32 = ir.IntType(32)
_I64 = ir.IntType(64)


def _resized(builder, v, width: int):
    """Integer IR value ``v`` as ``width`` bits: truncated, zero-extended or as it is."""
    if v.type.width > width:
        return builder.trunc(v, ir.IntType(width))
    if v.type.width < width:
        return builder.zext(v, ir.IntType(width))
    return v


def _bitcast_to_float(width: int, float_type: types.Float, llvm_float):
    def generic(typingctx, value):
        if not isinstance(value, types.Integer):
            return None
        sig = float_type(value)

        def codegen(context, builder, signature, args):
            return builder.bitcast(_resized(builder, args[0], width), llvm_float)

        return sig, codegen

    return generic


def _bitcast_to_int(float_type: types.Float, int_type: types.Integer, llvm_int):
    def generic(typingctx, value):
        if value != float_type:
            return None
        sig = int_type(float_type)

        def codegen(context, builder, signature, args):
            return builder.bitcast(args[0], llvm_int)

        return sig, codegen

    return generic


bits_f32 = intrinsic(_bitcast_to_float(32, types.float32, ir.FloatType()))
bits_f64 = intrinsic(_bitcast_to_float(64, types.float64, ir.DoubleType()))
f32_bits = intrinsic(_bitcast_to_int(types.float32, types.uint32, _I32))
f64_bits = intrinsic(_bitcast_to_int(types.float64, types.uint64, _I64))


def _hw_half_to_float(typingctx, value):
    if not isinstance(value, types.Integer):
        return None
    sig = types.float32(value)

    def codegen(context, builder, signature, args):
        return builder.fpext(builder.bitcast(_resized(builder, args[0], 16), ir.HalfType()), ir.FloatType())

    return sig, codegen


def _hw_float_to_half(typingctx, value):
    if value != types.float32:
        return None
    sig = types.uint16(types.float32)

    def codegen(context, builder, signature, args):
        return builder.bitcast(builder.fptrunc(args[0], ir.HalfType()), ir.IntType(16))

    return sig, codegen


hw_h2f = intrinsic(_hw_half_to_float)
hw_f2h = intrinsic(_hw_float_to_half)


@intrinsic
def zero_unless(typingctx, cond, value):
    """``value if cond else <all bits zero>`` (+0.0 for a float) for a float or integer ``value``.

    A plain select against zero makes LLVM load ``value`` with AVX-512 zero-masking, which runs
    ~1.6x slower than streaming (HardtanhBackward). Here the select is an unsigned min of the bits
    with an all-ones / all-zero mask, which LLVM keeps: the load stays unconditional (vpminud)."""
    if not isinstance(cond, types.Boolean) or not isinstance(value, (types.Float, types.Integer)):
        return None

    def codegen(context, builder, signature, args):
        c, v = args
        int_type = v.type if isinstance(v.type, ir.IntType) else ir.IntType(value.bitwidth)
        bits = builder.bitcast(v, int_type)
        if c.type.width != 1:
            c = builder.icmp_unsigned("!=", c, ir.Constant(c.type, 0))
        umin = builder.module.declare_intrinsic("llvm.umin", [int_type],
                                                ir.FunctionType(int_type, [int_type, int_type]))
        return builder.bitcast(builder.call(umin, [bits, builder.sext(c, int_type)]), v.type)

    return value(cond, value), codegen


@intrinsic
def select_bits(typingctx, cond, a, b):
    """``a if cond else b`` for floats of one type, selected as their bits (one unsigned min of
    each with a mask, or'ed) so that LLVM before 20 (numba 0.60 / 0.61 ship 14 / 15) cannot fold
    it into arithmetic: there ``x if c else x * s`` became ``x * (1.0 if c else s)``, which
    quiets a signalling NaN x that the selection returns as it is (LeakyReluBackward's
    gradient 0x7FA00001 came out 0x7FE00001, NumPy keeps it). numba_codegen uses it only under
    such an LLVM: the plain select is cheaper (a masked move) and LLVM 20 keeps it."""
    if not (isinstance(cond, types.Boolean) and isinstance(a, types.Float) and a == b):
        return None

    def codegen(context, builder, signature, args):
        c, x, y = args
        int_type = ir.IntType(a.bitwidth)
        if c.type.width != 1:
            c = builder.icmp_unsigned("!=", c, ir.Constant(c.type, 0))
        mask = builder.sext(c, int_type)
        umin = builder.module.declare_intrinsic("llvm.umin", [int_type],
                                                ir.FunctionType(int_type, [int_type, int_type]))
        picked = builder.or_(builder.call(umin, [builder.bitcast(x, int_type), mask]),
                             builder.call(umin, [builder.bitcast(y, int_type), builder.not_(mask)]))
        return builder.bitcast(picked, x.type)

    return a(cond, a, b), codegen


@intrinsic
def pool_threads(typingctx):
    """numba's thread count for the calling thread (``numba.get_num_threads()``), read in compiled
    code through the threading layer's C function by its symbol. numba's own overload reaches it
    through a ctypes pointer, which keeps the calling function out of numba's on-disk cache. The
    symbol exists once the threading layer is loaded: numba_backend asks the thread count before
    any launch (and typing here loads it)."""
    get_num_threads()

    def codegen(context, builder, signature, args):
        # declared as numba's parallel lowering declares it in the same module (intp); the C
        # function returns an int, so only the low 32 bits are its value
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(_I64, []), "get_num_threads")
        return builder.sext(builder.trunc(builder.call(fn, []), _I32), _I64)

    return types.int64(), codegen


def _feature_string() -> str:
    """The CPU features numba compiles for, as LLVM spells them ('+avx2,-avx512f,+f16c,...'): its
    NUMBA_CPU_FEATURES where set (NUMBA_CPU_NAME=generic sets it empty: machine code portable
    across hosts), as numba's own codegen reads it, else the host CPU's; empty if unknown. Not the
    host's alone: under NUMBA_CPU_NAME=generic the F16C conversions became calls of __extendhfsf2,
    which numba's JIT cannot link ("LLVM ERROR: Symbol not found", the process aborted at its first
    float16 kernel)."""
    from numba.core import config

    if config.CPU_FEATURES is not None:
        return config.CPU_FEATURES
    try:
        from llvmlite import binding

        return binding.get_host_cpu_features().flatten()
    except Exception:  # noqa: BLE001 - unknown host: the portable code
        return ""


def _target_features(features: str) -> set:
    """The features the string ``features`` turns on, read as LLVM reads it: in order, a later
    '-f16c' turning off an earlier '+f16c' (the host's string with a feature switched off after
    it is how one is disabled)."""
    flags = {}
    for flag in features.split(","):
        if flag[:1] in "+-" and flag[1:]:
            flags[flag[1:]] = flag[0]
    return {"+" + name for name, sign in flags.items() if sign == "+"}


def _target_converts_half(features: str) -> bool:
    """Whether LLVM, compiling for numba's target CPU with ``features``, converts half <-> float in
    instructions (no call of a ``_HALF_LIBCALLS`` function, which numba's JIT cannot link: the
    process aborts). Asked of LLVM itself because a feature turned off turns off those that need
    it ('-avx' takes F16C too), which no reading of the string's names follows."""
    try:
        from llvmlite import binding
        from numba.core import config

        binding.initialize_native_target()
        binding.initialize_native_asmprinter()
        module = binding.parse_assembly(
            "define float @h2f(half %h) {\n  %f = fpext half %h to float\n  ret float %f\n}\n"
            "define half @f2h(float %f) {\n  %h = fptrunc float %f to half\n  ret half %h\n}\n")
        machine = binding.Target.from_default_triple().create_target_machine(
            cpu=config.CPU_NAME or binding.get_host_cpu_name(), features=features)
        assembly = machine.emit_assembly(module)
    except Exception:  # noqa: BLE001 - LLVM cannot say: the bit formulas, right on every target
        return False
    return not any(name in assembly for name in _HALF_LIBCALLS)


# The runtime functions LLVM calls for half <-> float where the target has no instruction: the
# compiler-rt names (LLVM 15 on, numba 0.61 on) and the older GNU ones (LLVM 14, numba 0.60: a
# probe that knew only the first let NUMBA_CPU_FEATURES=...,-avx abort the process there).
_HALF_LIBCALLS = ("__extendhfsf2", "__truncsfhf2", "__gnu_h2f_ieee", "__gnu_f2h_ieee")


def _target_overridden() -> bool:
    """Whether numba compiles for another target than this host's (NUMBA_CPU_NAME or
    NUMBA_CPU_FEATURES set): only then can its features say F16C where LLVM lowers the half
    conversions to calls (``_target_converts_half``); the host's own features never do."""
    from numba.core import config

    return config.CPU_NAME is not None or config.CPU_FEATURES is not None


_FEATURE_STRING = _feature_string()
_TARGET_FEATURES = _target_features(_FEATURE_STRING)
# bytes in one of the target CPU's vector registers: 64 with AVX-512, 32 with AVX2, else 16 (SSE, NEON)
VECTOR_BYTES = 64 if "+avx512f" in _TARGET_FEATURES else 32 if "+avx2" in _TARGET_FEATURES else 16


def transpose_lanes(itemsize: int) -> int:
    """Side of the square block ``transpose_block`` moves for elements of ``itemsize`` bytes: one
    host vector register per row (``VECTOR_BYTES``), at most 16 elements. With 512-bit registers
    16 for 2- and 4-byte elements, 8 for 8-byte ones; with 256-bit ones (AVX2) 16, 8 and 4: a
    16 x 16 float32 block needs 32 registers there, 16 more than the host has, and spills (on a
    Zen 3 VM, with ``transpose_stages``: LeakyReluBackward of a transposed 1000 x 1000 float32
    self 680-1010 -> 270-430 us, float64 1e5 95-125 -> 80-86 us, float16 1e6 390-535 -> 340-355 us,
    alternating old and new code)."""
    return max(2, min(16, VECTOR_BYTES // itemsize))


def _butterfly(lanes: int, h: int) -> tuple[list, list]:
    """Masks over (row i, row i + h) swapping their off-diagonal h x h blocks: one butterfly stage
    of a lanes x lanes transpose (stages h = lanes/2, ..., 1 transpose it completely)."""
    low = [c if c & h == 0 else lanes + c - h for c in range(lanes)]
    high = [c + h if c & h == 0 else lanes + c for c in range(lanes)]
    return low, high


def _interleave(lanes: int, e: int) -> tuple[list, list]:
    """Masks interleaving two rows element by element inside each group of ``e`` (the low halves
    of the groups, then the high halves): what x86's unpack instructions do in each 128-bit lane."""
    low, high = [], []
    for g in range(0, lanes, e):
        for j in range(e // 2):
            low += [g + j, lanes + g + j]
            high += [g + j + e // 2, lanes + g + j + e // 2]
    return low, high


def transpose_stages(lanes: int, itemsize: int) -> list[list[tuple]]:
    """The shuffles of a lanes x lanes register transpose, stage by stage: each stage a list of
    (out row i, out row j, in row a, in row b, mask of i, mask of j) over the rows' concatenation.

    Butterflies (``_butterfly``) swap whole 128-bit lanes' e x e blocks into place (e elements to
    a lane; none where a row is one lane), then log2(e) rounds of interleaving (``_interleave``,
    rows i and i + e/2 of each group of e rows into rows 2i and 2i + 1) transpose every block in
    its lane: one single-uop instruction per output (lane permutes, unpacks) on every x86 vector
    width. A butterfly inside a lane needs a two-register permute of arbitrary elements instead,
    which for 2-byte elements is a 3-uop ``vpermt2w`` on Intel cores (and does not exist below
    AVX-512): measured (the Xeon VM of BENCHMARKS.md, blocks in L1), 16 x 16 2-byte blocks 0.23
    -> 0.07-0.08 ns per element with this schedule, 8-byte 8 x 8 ones 0.26 -> 0.18, 4-byte ones
    within 10 %. Row k of the result ends up in register k."""
    e = max(1, min(lanes, 16 // itemsize))
    stages, h = [], lanes // 2
    while h >= e:
        low, high = _butterfly(lanes, h)
        stages.append([(i, i + h, i, i + h, low, high) for i in range(lanes) if i & h == 0])
        h //= 2
    low, high = _interleave(lanes, e)
    for _ in range(e.bit_length() - 1):
        stages.append([(g + 2 * i, g + 2 * i + 1, g + i, g + i + e // 2, low, high)
                       for g in range(0, lanes, e) for i in range(e // 2)])
    return stages


def _transpose_typed(arg_types: tuple, shrink: int, table: bool = False):
    """Signature and codegen of a ``lanes x lanes`` block transpose, ``lanes`` =
    ``transpose_lanes(itemsize) // shrink`` (None when the arrays do not qualify). ``table``:
    the destination rows start where an int64 table says (``transpose_block_rows``), not a
    stride apart."""
    src, dst = arg_types[0], arg_types[3]
    if not (isinstance(src, types.Array) and isinstance(dst, types.Array) and src.dtype == dst.dtype
            and src.ndim == dst.ndim == 1 and src.dtype.bitwidth in (16, 32, 64)):
        return None
    if table and not (isinstance(arg_types[4], types.Array) and arg_types[4].dtype == types.int64
                      and arg_types[4].ndim == 1):
        return None
    lanes = transpose_lanes(src.dtype.bitwidth // 8) // shrink

    def codegen(context, builder, signature, args):
        element = context.get_data_type(src.dtype)
        if isinstance(element, ir.LiteralStructType):  # complex64: a vector holds scalars only
            element = ir.IntType(src.dtype.bitwidth)
        vec_ptr = ir.VectorType(element, lanes).as_pointer()
        align = src.dtype.bitwidth // 8

        def row_pointers(first: int):
            """Pointers to the L rows of the array argument ``first`` (start and stride follow)."""
            ty, start_ty, stride_ty = signature.args[first:first + 3]
            arr, start, stride = args[first:first + 3]
            data = context.make_array(ty)(context, builder, arr).data
            start = context.cast(builder, start, start_ty, types.int64)
            stride = context.cast(builder, stride, stride_ty, types.int64)
            offsets = [builder.add(start, builder.mul(stride, ir.Constant(_I64, i))) for i in range(lanes)]
            return [builder.bitcast(builder.gep(data, [offset]), vec_ptr) for offset in offsets]

        def table_pointers():
            """Pointers to the L destination rows: ``dst[table[start + i] + add]``."""
            data = context.make_array(signature.args[3])(context, builder, args[3]).data
            ty, start_ty, add_ty = signature.args[4:7]
            starts = context.make_array(ty)(context, builder, args[4]).data
            start = context.cast(builder, args[5], start_ty, types.int64)
            add = context.cast(builder, args[6], add_ty, types.int64)
            pointers = []
            for i in range(lanes):
                row = builder.load(builder.gep(starts, [builder.add(start, ir.Constant(_I64, i))]))
                pointers.append(builder.bitcast(builder.gep(data, [builder.add(row, add)]), vec_ptr))
            return pointers

        rows = [builder.load(p, align=align) for p in row_pointers(0)]
        ahead_at = 7 if table else 6
        ahead = context.cast(builder, args[ahead_at], signature.args[ahead_at], types.int64)
        with builder.if_then(builder.icmp_signed("!=", ahead, ir.Constant(_I64, 0))):
            byte = ir.IntType(8).as_pointer()
            prefetch = builder.module.declare_intrinsic("llvm.prefetch", [byte],
                                                        ir.FunctionType(ir.VoidType(), [byte, _I32, _I32, _I32]))
            offset = builder.mul(ahead, ir.Constant(_I64, align))
            for p in row_pointers(0):  # read access, keep in all levels, data cache
                target = builder.gep(builder.bitcast(p, byte), [offset])
                builder.call(prefetch, [target, ir.Constant(_I32, 0), ir.Constant(_I32, 3), ir.Constant(_I32, 1)])
        for stage in transpose_stages(lanes, align):
            new = list(rows)
            for i, j, a, b, low, high in stage:
                new[i] = builder.shuffle_vector(rows[a], rows[b], ir.Constant(ir.VectorType(_I32, lanes), low))
                new[j] = builder.shuffle_vector(rows[a], rows[b], ir.Constant(ir.VectorType(_I32, lanes), high))
            rows = new
        for row, p in zip(rows, table_pointers() if table else row_pointers(3)):
            builder.store(row, p, align=align)
        return context.get_dummy_value()

    return types.none(*arg_types), codegen


@intrinsic
def transpose_block(typingctx, src, src_start, src_stride, dst, dst_start, dst_stride, ahead):
    """``dst[dst_start + i * dst_stride + k] = src[src_start + k * src_stride + i]`` for i, k <
    L = ``transpose_lanes(itemsize)``: L row loads, L * log2(L) two-vector shuffles, L row stores.
    With ``ahead`` != 0, each of the L source rows is also prefetched ``ahead`` elements further
    on (where the gather reads next), so the lines come from memory in parallel rather than one
    miss at a time (when it pays: ``host_launch.FAR_BYTES``).

    A scalar gather of a transposed operand costs ~1.5 cycles per element here; numba has no
    shuffles, so the block is written as LLVM IR. Bits are moved, never converted."""
    return _transpose_typed((src, src_start, src_stride, dst, dst_start, dst_stride, ahead), 1)


@intrinsic
def transpose_block_half(typingctx, src, src_start, src_stride, dst, dst_start, dst_stride, ahead):
    """``transpose_block`` for an L/2 x L/2 block: for tiles with 8-15 rows or columns (4 to 7 of
    8-byte elements), which the full block does not fit."""
    return _transpose_typed((src, src_start, src_stride, dst, dst_start, dst_stride, ahead), 2)


@intrinsic
def transpose_block_rows(typingctx, src, src_start, src_stride, dst, starts, first, add, ahead):
    """``transpose_block`` whose destination row i starts at ``starts[first + i] + add``: rows
    that are not a constant stride apart (``_merged_slices``)."""
    return _transpose_typed((src, src_start, src_stride, dst, starts, first, add, ahead), 1, table=True)


def _transposed_blocks(a, g, si, s3, nseg, s, s0, rs, tile_cols, nr, run, far):
    """The register-transpose copy ``s[s0 + sg * tile_cols + r * rs + c] = a[g + sg * s3 + r + c *
    si]`` of a tile of ``nr`` x ``run`` (``nseg`` slices) (True), or False where the tile or the
    element width has none (then nothing is written). ``gather_tile`` reads a transposed input
    into scratch with it (``s0`` 0); ``scatter_tile`` writes scratch into a transposed out, its
    roles swapped (scratch as ``a``, out as ``s`` from ``s0``, rows and columns exchanged)."""


@njit(inline="always")
def merges_slices(nr, nseg, s3, run, far, side):
    """Whether ``_transposed_blocks`` takes ``_merged_slices`` for a tile of ``nr`` rows, ``run``
    columns and ``nseg`` slices ``s3`` apart, with blocks of ``side``: slices that continue the
    source rows, in cache, where blocks slice by slice would move 1.25x the tile or more (their
    last block overlapping) or be half blocks or none. Measured (one thread, LeakyReluBackward of
    a (10, 100, 100) reversal, separate processes alternating, three rounds): float16 36-37 ->
    26-27 us (half blocks moved 1.6x), float32 50-55 -> 42 (8 x 8 blocks, 1.6x); with 100 rows
    (1.12x of float16 moved, 1.04x of float32) the slice-by-slice blocks stayed 1.05x faster."""
    return (nseg > 1 and s3 == nr and side <= min(nr * nseg, run) and not far
            and (nr < side or 4 * ((nr + side - 1) // side * side) >= 5 * nr))


@njit(nogil=True)
def _merged_slices(a, g, si, s, s0, rs, tile_cols, nr, nseg, run, side):
    """``_transposed_blocks`` of slices that continue the source rows (``s3 == nr``: the 10 of a
    (10, 100, 100) reversal): each source row is one run of ``nr * nseg`` elements, cut into
    side x side blocks across the slices' borders, each block row stored where its (slice, row)
    lies in scratch (``transpose_block_rows``, from a table built once per tile); a few blocks of
    rows at a time across the columns, so that the scratch rows written stay in L1."""
    total = nr * nseg
    starts = np.empty(total, np.int64)
    for sg in range(nseg):
        for r in range(nr):
            starts[sg * nr + r] = s0 + r * rs + sg * tile_cols
    chunk = 8 * side
    for k1 in range(0, total, chunk):
        for cb in range((run + side - 1) // side):
            cc = min(cb * side, run - side)
            for kb in range(k1, min(k1 + chunk, total), side):
                k0 = min(kb, total - side)
                transpose_block_rows(a, g + k0 + cc * si, si, s, starts, k0, cc, 0)


@overload(_transposed_blocks, jit_options={"nogil": True})
def _transposed_blocks_impl(a, g, si, s3, nseg, s, s0, rs, tile_cols, nr, run, far):
    if a.dtype.bitwidth not in (16, 32, 64):
        return lambda a, g, si, s3, nseg, s, s0, rs, tile_cols, nr, run, far: False
    full = transpose_lanes(a.dtype.bitwidth // 8)
    half = full // 2

    def impl(a, g, si, s3, nseg, s, s0, rs, tile_cols, nr, run, far):
        if merges_slices(nr, nseg, s3, run, far, full):
            _merged_slices(a, g, si, s, s0, rs, tile_cols, nr, nseg, run, full)
            return True
        if nr >= full and run >= full:
            side = full
        elif nr >= half and run >= half:
            side = half
        else:
            return False
        blocks = (run + side - 1) // side
        for t in range(nseg * blocks):
            if far:  # column block cb of every slice, then the next
                cb = t // nseg
                sg = t - cb * nseg
            else:
                sg = t // blocks
                cb = t - sg * blocks
            cc = min(cb * side, run - side)
            src = g + sg * s3 + cc * si
            dst = s0 + sg * tile_cols + cc
            for r in range(0, nr, side):
                rr = min(r, nr - side)
                if side == full:
                    transpose_block(a, src + rr, si, s, dst + rr * rs, rs, far * side * si)
                else:
                    transpose_block_half(a, src + rr, si, s, dst + rr * rs, rs, far * side * si)
        return True
    return impl


@njit(inline="always")
def _channels(a, g, s, rs, co, run, n):
    """n = 2-4 rows interleaved element by element (an image's channels: a step of n along the
    row), unrolled by hand: as a loop over the rows inside the loop over the columns, LLVM kept
    it a loop (float32 NHWC read as NCHW, C = 3: 1.3x slower)."""
    t = co + rs
    if n == 2:
        for c in range(run):
            s[np.uint64(co + c)] = a[np.uint64(g + 2 * c)]
            s[np.uint64(t + c)] = a[np.uint64(g + 2 * c + 1)]
    elif n == 3:
        for c in range(run):
            s[np.uint64(co + c)] = a[np.uint64(g + 3 * c)]
            s[np.uint64(t + c)] = a[np.uint64(g + 3 * c + 1)]
            s[np.uint64(t + rs + c)] = a[np.uint64(g + 3 * c + 2)]
    else:
        for c in range(run):
            s[np.uint64(co + c)] = a[np.uint64(g + 4 * c)]
            s[np.uint64(t + c)] = a[np.uint64(g + 4 * c + 1)]
            s[np.uint64(t + rs + c)] = a[np.uint64(g + 4 * c + 2)]
            s[np.uint64(t + 2 * rs + c)] = a[np.uint64(g + 4 * c + 3)]


@njit(inline="always")
def _columns(a, g, si, s, rs, co, nr, n):
    """n = 2-4 columns, each a unit-stride source row (NCHW read as NHWC), unrolled by hand as
    ``_channels``."""
    if n == 2:
        for r in range(nr):
            s[np.uint64(r * rs + co)] = a[np.uint64(g + r)]
            s[np.uint64(r * rs + co + 1)] = a[np.uint64(g + r + si)]
    elif n == 3:
        for r in range(nr):
            s[np.uint64(r * rs + co)] = a[np.uint64(g + r)]
            s[np.uint64(r * rs + co + 1)] = a[np.uint64(g + r + si)]
            s[np.uint64(r * rs + co + 2)] = a[np.uint64(g + r + 2 * si)]
    else:
        for r in range(nr):
            s[np.uint64(r * rs + co)] = a[np.uint64(g + r)]
            s[np.uint64(r * rs + co + 1)] = a[np.uint64(g + r + si)]
            s[np.uint64(r * rs + co + 2)] = a[np.uint64(g + r + 2 * si)]
            s[np.uint64(r * rs + co + 3)] = a[np.uint64(g + r + 3 * si)]


def _vector_move(count: int):
    """An intrinsic ``move(dst, dst_start, src, src_start)`` copying ``count`` elements (a
    constant) as one LLVM vector load and store of their bytes (any dtype, complex included): a
    row of a few elements in one or two instructions each way, where an element loop moved them
    one at a time (numba cannot tell the two arrays apart, so LLVM keeps the loop's loads and
    stores in order)."""
    @intrinsic
    def move(typingctx, dst, dst_start, src, src_start):
        if not (isinstance(dst, types.Array) and isinstance(src, types.Array) and dst.dtype == src.dtype
                and dst.ndim == src.ndim == 1):
            return None

        def codegen(context, builder, signature, args):
            vec = ir.VectorType(ir.IntType(8), count * context.get_abi_sizeof(context.get_data_type(src.dtype)))

            def at(k: int):
                data = context.make_array(signature.args[k])(context, builder, args[k]).data
                start = context.cast(builder, args[k + 1], signature.args[k + 1], types.int64)
                return builder.bitcast(builder.gep(data, [start]), vec.as_pointer())

            builder.store(builder.load(at(2), align=1), at(0), align=1)
            return context.get_dummy_value()

        return types.none(dst, dst_start, src, src_start), codegen
    return move


def _rows_of(count: int):
    """``s[r * rs + co + c] = a[g + r * sr + c]`` for r < nr, c < ``count`` (a constant)."""
    move = _vector_move(count)

    @njit(inline="always")
    def copy(a, g, sr, s, rs, co, nr):
        for r in range(nr):
            move(s, r * rs + co, a, g + r * sr)
    return copy


_ROWS_1, _ROWS_2, _ROWS_3, _ROWS_4, _ROWS_5, _ROWS_6, _ROWS_7, _ROWS_8 = (_rows_of(k) for k in range(1, 9))
_MOVE_8 = _vector_move(8)


@njit(inline="always")
def _unit_stride_rows(a, g, sr, s, rs, co, nr, run):
    """``s[r * rs + co + c] = a[g + r * sr + c]`` for r < nr, c < run: each row by vector moves,
    of its exact length up to 8 elements, else of 8 (the last shifted back to end at the row's
    end, rewriting a few elements with the same values)."""
    if run > 8:
        for r in range(nr):
            src = g + r * sr
            dst = r * rs + co
            for c in range(0, run - 8, 8):
                _MOVE_8(s, dst + c, a, src + c)
            _MOVE_8(s, dst + run - 8, a, src + run - 8)
    elif run == 8:
        _ROWS_8(a, g, sr, s, rs, co, nr)
    elif run == 7:
        _ROWS_7(a, g, sr, s, rs, co, nr)
    elif run == 6:
        _ROWS_6(a, g, sr, s, rs, co, nr)
    elif run == 5:
        _ROWS_5(a, g, sr, s, rs, co, nr)
    elif run == 4:
        _ROWS_4(a, g, sr, s, rs, co, nr)
    elif run == 3:
        _ROWS_3(a, g, sr, s, rs, co, nr)
    elif run == 2:
        _ROWS_2(a, g, sr, s, rs, co, nr)
    else:
        _ROWS_1(a, g, sr, s, rs, co, nr)


@njit(cache=True, nogil=True)
def gather_tile(a, g, sr, si, s3, nseg, s, rs, tile_cols, nr, run, far):
    """The panels walker's gather: ``s[r * rs + sg * tile_cols + c] = a[g + sg * s3 + r * sr + c
    * si]`` for the tile's ``nr`` rows, ``run`` columns and ``nseg`` slices (``sg``) side by side
    (one, ``s3`` unused, unless the launch is segmented). One compiled function for every kernel,
    rather than a generated copy in each: a float32 HardtanhBackward panels kernel with two
    gathered inputs compiles in 1.8 s instead of 4.3. The call costs ~11 ns a tile: nothing
    measurable on tiles of a few KiB (transposed and axes-reversed inputs of 1e5-1e6 elements,
    every float dtype), which is why host_launch makes tiles of a few short rows taller.

    A transposed operand (``sr == 1``) of a tile at least L x L goes through L x L register
    transposes (``transpose_block``), the last block of each row and column shifted back to end
    at the tile's edge (it overlaps its neighbour, which it rewrites with the same values): no
    element is left to a scalar loop. Tiles of L/2 to L - 1 rows or columns take L/2 x L/2
    blocks (``transpose_block_half``; a short dim, the 10 of a (10, 100, 100) reversal: 1.6-2.2x
    faster than the element copy), unless their slices continue the source rows: then blocks run
    across the slices' borders (``_merged_slices``, 1.2-1.35x faster again, where the rows are
    no multiple of L). With slices side by side the blocks walk the slices inside
    each column block where the launch is ``far`` (host_launch._segments: there the slices
    continue the source rows, so a column block reads each of its source rows in one run of
    ``nseg * nr`` elements; 2 slices of a float16 (100, 1000, 1000) reversal measured 42 -> 35-36
    ms, 6 slices of a float32 (10, 1000, 1000) one 4.3-4.8 -> 3.6-3.8 ms), and outside them
    otherwise (in cache, where slice after slice measured 1.05x faster for a float32 (100, 100,
    100) reversal). ``far`` also prefetches the next blocks' source rows (transpose_block's
    ``ahead``).

    2-4 rows interleaved element by element (an image's channels, NHWC read as NCHW), or 2-4
    columns read from as many unit-stride rows (NCHW read as NHWC), are copied by loops of a
    constant step, which LLVM turns into vector loads and shuffles (float32 3 or 4 channels
    2.2-4.5x faster than the element copy, 2-byte ones 3-8x). Rows of unit stride shorter than
    the tile is tall (``host_launch._short_rows``: a slice of a few channels) are moved a row at
    a time as vectors (``_unit_stride_rows``). Any other tile is copied element by
    element, along the rows in the source's memory order, or along the columns for a few
    interleaved rows of another step (a loop of nr iterations per element cost 2.6x)."""
    if sr == 1 and _transposed_blocks(a, g, si, s3, nseg, s, 0, rs, tile_cols, nr, run, far):
        return
    for sg in range(nseg):
        co = sg * tile_cols
        gs = g + sg * s3
        if sr == 1 and 2 <= nr <= 4 and si == nr:
            _channels(a, gs, s, rs, co, run, nr)
        elif sr == 1 and 2 <= run <= 4 and tile_cols == run:
            _columns(a, gs, si, s, rs, co, nr, run)
        elif si == 1 and run < nr:
            _unit_stride_rows(a, gs, sr, s, rs, co, nr, run)
        elif nr < run and abs(si) <= nr:
            for r in range(nr):
                for c in range(run):
                    s[np.uint64(r * rs + co + c)] = a[np.uint64(gs + r * sr + c * si)]
        else:
            for c in range(run):
                for r in range(nr):
                    s[np.uint64(r * rs + co + c)] = a[np.uint64(gs + r * sr + c * si)]


@njit(cache=True, nogil=True)
def scatter_tile(out, go, sr, si, so, rs, nr, run):
    """The panels walker's scatter of a computed tile into an ``out`` it does not write in place:
    ``out[go + r * sr + c * si] = so[r * rs + c]`` for the tile's ``nr`` rows and ``run`` columns.
    Short unit-stride rows with gaps between them (``host_launch._short_rows``) go a row at a
    time as vector moves (``_unit_stride_rows``, as ``gather_tile`` reads such rows); a
    transposed out (``sr == 1``: the walk follows the inputs' memory order,
    ``host_launch.walk_order``) through register transposes as ``gather_tile`` reads a
    transposed input; any other tile element by element down its columns."""
    if si == 1 and run < nr:
        _unit_stride_rows(so, 0, rs, out, sr, go, nr, run)
        return
    # transposed: so[r * rs + c] is a[g + r + c * si] of _transposed_blocks with r and c exchanged
    if sr == 1 and _transposed_blocks(so, 0, rs, 0, 1, out, go, si, 0, run, nr, 0):
        return
    for c in range(run):
        for r in range(nr):
            out[np.uint64(go + r * sr + c * si)] = so[np.uint64(r * rs + c)]


INDEX_SLOTS = 16  # entries of an ``index_buffer``: more than the dims of any collapsed launch


@intrinsic
def index_buffer(typingctx):
    """A 1-D int64 array of ``INDEX_SLOTS`` uninitialised entries on the calling function's stack
    (no allocation, no reference count): a walker's multi-index, one per thread (a ``prange``
    body is its own function). Never returned or stored: it lives as long as that frame."""
    array_type = types.Array(types.int64, 1, "C")

    def codegen(context, builder, signature, args):
        from numba.np.arrayobj import make_array, populate_array

        data = cgutils.alloca_once(builder, _I64, size=INDEX_SLOTS)
        array = make_array(array_type)(context, builder)
        populate_array(array, data=data, shape=[ir.Constant(_I64, INDEX_SLOTS)], strides=[ir.Constant(_I64, 8)],
                       itemsize=ir.Constant(_I64, 8), meminfo=None)
        return array._getvalue()

    return array_type(), codegen


STREAM_LINE = 64  # bytes one non-temporal store writes: a cache line, a 512-bit vector


@intrinsic
def _stream_line(typingctx, dst, dst_start, src, src_start):
    """``dst[dst_start:][:L] = src[src_start:][:L]`` (L = 64 bytes) with one non-temporal store;
    ``dst``'s address there must be 64-byte aligned, ``src``'s need not be."""
    if not (isinstance(dst, types.Array) and isinstance(src, types.Array) and dst.dtype == src.dtype
            and dst.ndim == src.ndim == 1):
        return None

    def codegen(context, builder, signature, args):
        vec = ir.VectorType(_I64, STREAM_LINE // 8)

        def line(k: int):
            data = context.make_array(signature.args[k])(context, builder, args[k]).data
            start = context.cast(builder, args[k + 1], signature.args[k + 1], types.int64)
            return builder.bitcast(builder.gep(data, [start]), vec.as_pointer())

        value = builder.load(line(2), align=1)
        store = builder.store(value, line(0), align=STREAM_LINE)
        store.set_metadata("nontemporal", builder.module.add_metadata([ir.Constant(_I32, 1)]))
        return context.get_dummy_value()

    return types.none(dst, dst_start, src, src_start), codegen


def _host_is_x86() -> bool:
    from llvmlite import binding

    return binding.get_process_triple().split("-")[0] in ("x86_64", "i386", "i686")


@intrinsic
def store_fence(typingctx):
    """Orders the non-temporal stores before it (weakly ordered) before any later store, so a
    thread that sees the kernel finish sees the output: ``sfence`` on x86 (the fence Intel and AMD
    document for them), a sequentially consistent fence elsewhere."""
    def codegen(context, builder, signature, args):
        if _host_is_x86():
            sfence = builder.module.declare_intrinsic("llvm.x86.sse.sfence",
                                                      fnty=ir.FunctionType(ir.VoidType(), []))
            builder.call(sfence, [])
        else:  # pragma: no cover - non-x86 hosts
            builder.fence("seq_cst")
        return context.get_dummy_value()

    return types.none(), codegen


@njit(cache=True, nogil=True)
def stream_copy(dst, dst_start, src, n):
    """``dst[dst_start:dst_start + n] = src[:n]``, whole 64-byte lines of ``dst`` written with
    non-temporal stores (no read-for-ownership; the lines leave the cache), the partial lines at
    either end with normal stores. A ``dst`` not aligned to its own itemsize is copied normally.
    Call ``store_fence`` before the output is handed to another thread."""
    item = dst.itemsize
    addr = dst.ctypes.data + dst_start * item
    lanes = STREAM_LINE // item
    head = n if addr % item else min(n, (-addr) % STREAM_LINE // item)
    body = head + (n - head) // lanes * lanes
    for j in range(head):
        dst[dst_start + j] = src[j]
    for j in range(head, body, lanes):
        _stream_line(dst, dst_start + j, src, j)
    for j in range(body, n):
        dst[dst_start + j] = src[j]


@njit(cache=True, nogil=True)
def span_view(a):
    """A 1-D view of the memory ``a`` spans (every stride >= 0, at least one element), from its
    first element: what ``np.lib.stride_tricks.as_strided`` builds, at a compiled call's cost
    (0.5 us against 2.1-2.8 us for a gapped (32, 32) view). The view keeps ``a`` alive."""
    extent = a.itemsize
    for d in range(a.ndim):
        extent += (a.shape[d] - 1) * a.strides[d]
    return np.lib.stride_tricks.as_strided(a, (extent // a.itemsize,), (a.itemsize,))


# F16C (vcvtph2ps / vcvtps2ph) converts exactly like NumPy except that it quiets signalling NaNs:
# h2f_hw / f2h_hw use it, h2f / f2h are the bit formulas, and a walker that runs a tile with the
# former recomputes it with the latter where an input a NaN could pass from holds one
# (walker_source._loop), so the result is still NumPy's.
HAS_F16C = "+f16c" in _TARGET_FEATURES and (not _target_overridden() or _target_converts_half(_FEATURE_STRING))


@njit(cache=True, nogil=True)
def h2f(h):
    h32 = np.uint32(h) & np.uint32(0xFFFF)
    sign = (h32 & np.uint32(0x8000)) << np.uint32(16)
    em = h32 & np.uint32(0x7FFF)
    o = (em << np.uint32(13)) + np.uint32(0x38000000)
    o_inf = o + np.uint32(0x38000000)  # exponent 31 -> 255, payload shifted
    sub = bits_f32(o + np.uint32(0x00800000)) - np.float32(6.103515625e-05)  # em * 2**-24, exact
    r = o_inf if em >= np.uint32(0x7C00) else (f32_bits(sub) if em < np.uint32(0x0400) else o)
    return bits_f32(np.uint32(r) | sign)


@njit(cache=True, nogil=True)
def f2h(f):
    u = f32_bits(f)
    sign = (u >> np.uint32(16)) & np.uint32(0x8000)
    a = u & np.uint32(0x7FFFFFFF)
    payload = (a & np.uint32(0x007FFFFF)) >> np.uint32(13)
    nan = np.uint32(0x7C00) | (payload if payload != np.uint32(0) else np.uint32(1))
    odd = (a >> np.uint32(13)) & np.uint32(1)
    normal = (a - np.uint32(0x38000000) + np.uint32(0xFFF) + odd) >> np.uint32(13)
    sub = f32_bits(bits_f32(a) + np.float32(0.5)) - np.uint32(0x3F000000)
    r = nan if a > np.uint32(0x7F800000) else (
        np.uint32(0x7C00) if a >= np.uint32(0x47800000) else (
            normal if a >= np.uint32(0x38800000) else sub))
    return np.uint16(np.uint32(r) | sign)


if HAS_F16C:
    @njit(cache=True, nogil=True)
    def h2f_hw(h):
        """F16C conversion: NumPy's result except for a signalling NaN (which it quiets)."""
        return hw_h2f(np.uint32(h) & np.uint32(0xFFFF))

    @njit(cache=True, nogil=True)
    def f2h_hw(f):
        """F16C conversion: NumPy's result except for a signalling NaN (which it quiets)."""
        return hw_f2h(f)
else:  # pragma: no cover - hosts without F16C
    h2f_hw = h2f
    f2h_hw = f2h


@njit(cache=True, nogil=True)
def f2h_canonical(f):
    """float32 value -> float16 as ml_dtypes casts (Eigen): RNE; NaN -> 0x7E00 with the sign kept."""
    u = f32_bits(f)
    nan = ((u >> np.uint32(16)) & np.uint32(0x8000)) | np.uint32(0x7E00)
    return np.uint16(nan) if (u & np.uint32(0x7FFFFFFF)) > np.uint32(0x7F800000) else f2h(f)


@njit(cache=True, nogil=True)
def f2d(f):
    """float32 -> float64 as NumPy's cast (the hardware's cvtss2sd): exact, a NaN quieted. Spelled
    out because LLVM may fold a widening and a later narrowing back to float32 away, which would
    carry a signalling NaN through where NumPy's two casts quiet it."""
    d = np.float64(f)
    if d != d:
        return bits_f64(f64_bits(d) | np.uint64(0x0008000000000000))
    return d


@njit(cache=True, nogil=True)
def h2d(h):
    h32 = np.uint32(h) & np.uint32(0xFFFF)
    if (h32 & np.uint32(0x7FFF)) > np.uint32(0x7C00):  # NaN: payload shifted, not quieted
        sign = np.uint64(h32 & np.uint32(0x8000)) << np.uint64(48)
        sig = np.uint64(h32 & np.uint32(0x03FF)) << np.uint64(42)
        return bits_f64(sign | np.uint64(0x7FF0000000000000) | sig)
    return np.float64(h2f(h))


@njit(cache=True, nogil=True)
def d2h(d):
    u = f64_bits(d)
    h_sgn = np.uint32((u >> np.uint64(48)) & np.uint64(0x8000))
    d_exp = u & np.uint64(0x7FF0000000000000)
    if d_exp >= np.uint64(0x40F0000000000000):
        if d_exp == np.uint64(0x7FF0000000000000):
            d_sig = u & np.uint64(0x000FFFFFFFFFFFFF)
            if d_sig != np.uint64(0):
                ret = np.uint32(0x7C00) + np.uint32(d_sig >> np.uint64(42))
                if ret == np.uint32(0x7C00):
                    ret += np.uint32(1)
                return np.uint16(h_sgn + ret)
        return np.uint16(h_sgn + np.uint32(0x7C00))
    if d_exp <= np.uint64(0x3F00000000000000):
        if d_exp < np.uint64(0x3E60000000000000):
            return np.uint16(h_sgn)
        e = d_exp >> np.uint64(52)
        d_sig = np.uint64(0x0010000000000000) + (u & np.uint64(0x000FFFFFFFFFFFFF))
        d_sig = d_sig << (e - np.uint64(998))
        if (d_sig & np.uint64(0x003FFFFFFFFFFFFF)) != np.uint64(0x0010000000000000):
            d_sig += np.uint64(0x0010000000000000)
        return np.uint16(h_sgn + np.uint32(d_sig >> np.uint64(53)))
    h_exp = np.uint32((d_exp - np.uint64(0x3F00000000000000)) >> np.uint64(42))
    d_sig = u & np.uint64(0x000FFFFFFFFFFFFF)
    if (d_sig & np.uint64(0x000007FFFFFFFFFF)) != np.uint64(0x0000020000000000):
        d_sig += np.uint64(0x0000020000000000)
    h_sig = np.uint32(d_sig >> np.uint64(42)) + h_exp
    return np.uint16(h_sgn + h_sig)


@njit(cache=True, nogil=True)
def bf2f(b):
    return bits_f32((np.uint32(b) & np.uint32(0xFFFF)) << np.uint32(16))


def _float_to_bf16(nan_rule: str):
    """float32 -> bfloat16 bits, rounded to nearest even, as LLVM IR on 32-bit integers.

    Written as IR because numba widens uint32 arithmetic to 64 bits, which vectorizes to 8 lanes
    per zmm register instead of 16 (~0.19 ns per element). NaNs, by ``nan_rule``:

    * ``exact`` (``f2bf``, ``dtypes.cast_into``): where the low 16 bits are zero, the top 16
      bits as they are -- a bfloat16 value widened and narrowed back is unchanged, a signalling
      NaN included (DECISION 1: the pass branch copies grad's bits); the rounding formula gives
      exactly that, so only a NaN with payload in the low half is patched: its top 16 bits with
      the quiet bit set (without it they could read as infinity).
    * ``computed`` (``f2bf_computed``): the top 16 bits with the quiet bit set, one check less.
      Equal to ``exact`` for every value arithmetic produces (its NaNs are quiet), so the kernels
      use it for those: LeakyReluBackward bfloat16 1e6 64 us instead of 76.
    * ``canonical`` (``f2bf_canonical``): 0x7FC0 with the sign, as ml_dtypes' own casts."""
    def generic(typingctx, value):
        if value != types.float32:
            return None

        def codegen(context, builder, signature, args):
            f = args[0]
            u = builder.bitcast(f, _I32)
            top = builder.lshr(u, ir.Constant(_I32, 16))
            lsb = builder.and_(top, ir.Constant(_I32, 1))
            # wraps only for a NaN (patched below), so 32 bits suffice
            rounded = builder.lshr(builder.add(builder.add(u, ir.Constant(_I32, 0x7FFF)), lsb),
                                   ir.Constant(_I32, 16))
            patch = builder.fcmp_unordered("uno", f, f)
            if nan_rule == "canonical":
                nan = builder.or_(builder.and_(top, ir.Constant(_I32, 0x8000)), ir.Constant(_I32, 0x7FC0))
            else:
                nan = builder.or_(top, ir.Constant(_I32, 0x0040))
                if nan_rule == "exact":
                    low = builder.and_(u, ir.Constant(_I32, 0xFFFF))
                    patch = builder.and_(patch, builder.icmp_unsigned("!=", low, ir.Constant(_I32, 0)))
            return builder.trunc(builder.select(patch, nan, rounded), ir.IntType(16))

        return types.uint16(types.float32), codegen

    return generic


@intrinsic
def f2bf_rounding(typingctx, value, keep):
    """float32 -> bfloat16 bits, rounded to nearest even, for a result of arithmetic whose NaNs
    all have their low 16 bits zero -- the operands are bfloat16 values widened, or values
    that ``keep`` (0xFFFFFFFF) says are not NaN; where one may be (``keep`` 0, a NaN scalar,
    which makes every result a NaN), no rounding increment is added and the quiet NaN keeps its
    top 16 bits, as ``f2bf_computed`` gives. No NaN patch: LeakyReluBackward's bfloat16
    ``grad * slope`` (see numba_codegen.element_source)."""
    if value != types.float32 or not isinstance(keep, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        u = builder.bitcast(args[0], _I32)
        mask = _resized(builder, args[1], 32)
        lsb = builder.and_(builder.lshr(u, ir.Constant(_I32, 16)), ir.Constant(_I32, 1))
        increment = builder.and_(builder.add(lsb, ir.Constant(_I32, 0x7FFF)), mask)
        rounded = builder.lshr(builder.add(u, increment), ir.Constant(_I32, 16))
        return builder.trunc(rounded, ir.IntType(16))

    return types.uint16(types.float32, keep), codegen


f2bf = intrinsic(_float_to_bf16("exact"))
f2bf_computed = intrinsic(_float_to_bf16("computed"))
f2bf_canonical = intrinsic(_float_to_bf16("canonical"))  # from float16 (ml_dtypes' cast)


@njit(cache=True, nogil=True)
def d2f_odd(d):
    """float64 -> float32 rounded to odd (finite inexact results get their last bit set)."""
    n = np.float32(d)
    if np.isfinite(n) and np.float64(n) != d:
        u = f32_bits(n)
        if abs(np.float64(n)) > abs(d):
            u = u - np.uint32(1)  # one step toward zero: truncation
        return bits_f32(u | np.uint32(1))
    return n


@njit(cache=True, nogil=True)
def d2bf(d):
    return f2bf(d2f_odd(d))


@njit(cache=True, nogil=True)
def isnan16(h, exp_mask):
    """NaN test on float16 (exp_mask 0x7C00) or bfloat16 (0x7F80) bits."""
    return (np.uint32(h) & np.uint32(0x7FFF)) > np.uint32(exp_mask)


def _half_compare(predicate: str):
    """``h <predicate> s`` for float16/bfloat16 bits ``h``, given ``bound = half_bound(s, ...)``,
    as LLVM IR on 16-bit integers: the bits become a signed key that orders every non-NaN value
    as its float does (negative patterns mirrored below zero, -0 just below +0), compared with the
    bound; a NaN ``h`` (magnitude above ``nan_above``, 0x7C00 / 0x7F80) compares false. Widening
    to float32 and comparing there gives the same answer, but the float32 masks then have to be
    narrowed back to 16-bit lanes: HardtanhBackward float16 (two such compares per element) ran
    ~36 instructions per 32 elements on AVX2 that way."""
    def generic(typingctx, h, bound, nan_above):
        if not all(isinstance(t, types.Integer) for t in (h, bound, nan_above)):
            return None

        def codegen(context, builder, signature, args):
            i16 = ir.IntType(16)
            h16, k16, top = (_resized(builder, v, 16) for v in args)
            mirrored = builder.and_(builder.ashr(h16, ir.Constant(i16, 15)), ir.Constant(i16, 0x7FFF))
            key = builder.xor(h16, mirrored)
            ordered = builder.icmp_signed(predicate, key, k16)
            nan = builder.icmp_unsigned(">", builder.and_(h16, ir.Constant(i16, 0x7FFF)), top)
            return builder.and_(ordered, builder.not_(nan))

        return types.boolean(h, bound, nan_above), codegen

    return generic


bits_le = intrinsic(_half_compare("<="))
bits_ge = intrinsic(_half_compare(">="))
bits_lt = intrinsic(_half_compare("<"))
bits_gt = intrinsic(_half_compare(">"))


@njit(cache=True, nogil=True)
def half_key(h):
    """The signed key ``_half_compare`` orders float16/bfloat16 bits ``h`` by (an int)."""
    s = np.int64(h & 0xFFFF) - (np.int64(65536) if h & 0x8000 else np.int64(0))
    return s ^ ((s >> np.int64(15)) & np.int64(0x7FFF))


@njit(cache=True, nogil=True)
def half_bound(s, predicate, bf16):
    """The key bound for ``bits_le/ge/lt/gt`` (``predicate`` 0-3 in that order, as
    ``numba_codegen._BITS_COMPARES`` passes it) of float32
    ``s`` against float16 (``bf16`` False) or bfloat16 bits: for <= and > the key of the largest
    value <= s, for >= and < of the smallest value >= s (+0 and -0 are equal: the larger key, +0's,
    or the smaller, -0's); s rounded to nearest even, then stepped one value toward s's side if
    it rounded past it. A NaN ``s`` gives a bound no non-NaN key passes (every compare with NaN is
    false). Scalar code without branches on ``h``: a kernel computes it from its scalars once,
    outside the element loop (LLVM hoists it)."""
    h = np.int64(f2bf(s)) if bf16 else np.int64(f2h(s))
    v = bf2f(h) if bf16 else h2f(h)
    at_least = predicate == 1 or predicate == 2
    key = half_key(h)
    key = key + 1 if at_least and v < s else (key - 1 if not at_least and v > s else key)
    key = np.int64(-1) if at_least and key == 0 else (np.int64(0) if not at_least and key == -1 else key)
    never = np.int64(32767) if predicate == 1 or predicate == 3 else np.int64(-32768)
    return never if np.isnan(s) else key


@njit(cache=True, nogil=True)
def ranges_clash(out_lo, out_hi, lo, hi, same_start):
    """1 when [lo, hi) intersects [out_lo, out_hi) other than as the same view (``same_start``)."""
    if hi <= out_lo or out_hi <= lo:
        return 0
    return 0 if same_start else 1


SUPPORT_NAMES = ("h2f", "f2h", "f2h_canonical", "h2f_hw", "f2h_hw", "f2d", "h2d", "d2h", "bf2f",
                 "f2bf", "f2bf_canonical", "f2bf_computed", "f2bf_rounding", "d2bf", "isnan16", "ranges_clash",
                 "bits_f32", "bits_f64", "f32_bits", "f64_bits", "zero_unless", "select_bits", "transpose_block",
                 "transpose_block_half", "gather_tile", "scatter_tile", "index_buffer", "stream_copy", "store_fence",
                 "pool_threads", "bits_le", "bits_ge", "bits_lt", "bits_gt", "half_bound")
