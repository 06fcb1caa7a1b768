"""Tiling: the worked examples and tiling UT outcomes of spec §7.3, §7.4 and §9.2, the generic
templates' invariants, the host plan, and the ``opsnn tiling`` CLI function."""

from __future__ import annotations

import argparse
import dataclasses
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from opsnn import opdef, tiling_cli
from opsnn._core import tiling as t
from opsnn._core.dtypes import DataType
from opsnn._core.dtypes import DataType as D
from opsnn._core.platform import get_profile
from opsnn._core.status import Status
from opsnn.opdef import TensorDesc as T
from opsnn.opdef import hardtanh_grad
from opsnn.opdef.leaky_relu_grad import TPL_DTYPE

A950 = get_profile("Ascend950")    # the arch35 UTs' platform: 64 cores, UB 245760
A910B = get_profile("Ascend910B")  # the experimental UT's platform: 48 cores, UB 196608
UT_SHAPE = (1, 64, 2, 64)


def hardtanh(shape, dtype=D.FLOAT16, y_shape=None, y_dtype=None, soc=A950, min_val=-2.0, max_val=1.0):
    op, _ = opdef.find("HardtanhGrad", soc)
    y = T(y_shape or shape, dtype if y_dtype is None else y_dtype)
    return opdef.tile(op, soc, [T(shape, dtype), T(shape, dtype)], [y],
                      {"min_val": min_val, "max_val": max_val})


def leaky_grad(shapes, dtypes, out_shape=None, slope=0.01, soc=A950, strides=(None, None)):
    op, _ = opdef.find("LeakyReluGrad", soc)
    ins = [T(s, d, st_) for s, d, st_ in zip(shapes, dtypes, strides)]
    out = T(out_shape or op.infer_shape([tuple(s) for s in shapes]), dtypes[2])
    return opdef.tile(op, soc, ins, [out], {"negative_slope": slope})


def leaky(shape, dtype, y_dtype=None, y_shape=None, slope=0.01, soc=A950):
    op, _ = opdef.find("LeakyRelu", soc)
    return opdef.tile(op, soc, [T(shape, dtype)], [T(y_shape or shape, dtype if y_dtype is None else y_dtype)],
                      {"negative_slope": slope})


# ---- HardtanhGrad arch35 (spec §7.3; test_hardtanh_grad_tiling.cpp) ----------------------------


def test_hardtanh_grad_ut_example_1x64x2x64():
    r = hardtanh(UT_SHAPE)
    assert r.tiling_data.to_dict() == {
        "baseTiling": {"dim0": 8192, "coreNum": 2, "ubFormer": 6144, "blockFormer": 4096, "blockNum": 2,
                       "ubLoopOfFormerBlock": 1, "ubLoopOfTailBlock": 1, "ubTailOfFormerBlock": 4096,
                       "ubTailOfTailBlock": 4096, "elemNum": 6144, "scheMode": 1},
        "minVal": -2.0, "maxVal": 1.0}
    assert (r.tiling_key, r.block_dim, r.workspace_size) == (3, 2, 16_777_216)


@pytest.mark.parametrize(("dim0", "expected"), [
    (24, dict(dim0=24, core_num=1, ub_former=6144, block_former=512, block_num=1, ub_loop_of_former_block=1,
              ub_loop_of_tail_block=1, ub_tail_of_former_block=512, ub_tail_of_tail_block=24, elem_num=6144,
              sche_mode=1)),
    (20800, dict(dim0=20800, core_num=6, ub_former=6144, block_former=3584, block_num=6, ub_loop_of_former_block=1,
                 ub_loop_of_tail_block=1, ub_tail_of_former_block=3584, ub_tail_of_tail_block=2880, elem_num=6144,
                 sche_mode=1)),
])
def test_hardtanh_grad_ut_examples_dim0(dim0, expected):
    r = hardtanh((dim0,))
    assert dataclasses.asdict(r.tiling_data.base_tiling) == expected
    assert r.tiling_key == 3 and r.block_dim == expected["block_num"]


@pytest.mark.parametrize("dtype", [D.FLOAT16, D.BF16, D.FLOAT], ids=str)
def test_hardtanh_grad_key_is_3_for_every_dtype(dtype):
    """RunTiling sets dType = HardtanhGrad_TPL before its dtype branch (hardtanh_grad_tiling_arch35.cpp),
    so every dtype's key is the fp16 UT's 3 (a breaker: bf16 / fp32 were 5 / 7, an older ops-nn's)."""
    assert hardtanh(UT_SHAPE, dtype).tiling_key == 3


def test_hardtanh_grad_bounds_are_stored_as_float32():
    r = hardtanh((8,), min_val=0.1, max_val=1e40)
    assert r.tiling_data.min_val == 0.10000000149011612 and r.tiling_data.max_val == float("inf")


@pytest.mark.parametrize(("kwargs", "reason"), [
    (dict(y_shape=(1, 64, 2, 32)),
     "the shapes of result and y must be the same, got [1, 64, 2, 64] and [1, 64, 2, 32]"),
    (dict(dtype=D.FLOAT, y_dtype=D.FLOAT16),
     "the dtypes of result, y must be the same, got result DT_FLOAT, y DT_FLOAT16"),
    (dict(dtype=D.INT8), "result dtype DT_INT8 is not supported; it must be one of DT_BF16, DT_FLOAT16, DT_FLOAT"),
])
def test_hardtanh_grad_ut_failures(kwargs, reason):
    with pytest.raises(t.TilingError) as err:
        hardtanh(UT_SHAPE, **kwargs)
    assert err.value.reason == reason
    assert err.value.status == Status.ERR_INNER_NULLPTR
    assert err.value.message == f"HardtanhGrad tiling failed: {reason}"


def test_hardtanh_grad_scalar_result_counts_as_one_element():
    r = hardtanh((), y_shape=(1,))
    assert r.tiling_data.base_tiling.dim0 == 1 and r.block_dim == 1


# ---- experimental HardtanhGrad 910B (spec §7.4) ------------------------------------------------


@pytest.mark.parametrize(("n", "dtype", "key", "cores", "fields"), [
    (8192, D.FLOAT16, 0, 8, dict(tileDataNum=1024, smallTailDataNum=1024, maskTileDataNum=256)),
    (100, D.FLOAT, 0, 1, dict(tileDataNum=128, smallTailDataNum=128, maskTileDataNum=256)),
    (30000, D.FLOAT16, 0, 8, dict(tileDataNum=3840, smallTailDataNum=3328, maskTileDataNum=512)),
    (122880, D.FLOAT, 0, 20, dict(tileDataNum=6144, smallTailDataNum=6144, maskTileDataNum=768)),
    (122881, D.FLOAT16, 1, 11, dict(tileDataNum=5632, smallCoreDataNum=11008, bigCoreDataNum=11264,
                                    tailBlockNum=8, finalSmallTileNum=2, finalBigTileNum=2,
                                    smallTailDataNum=5376, bigTailDataNum=5632, maskTileDataNum=768)),
    (1_000_000, D.FLOAT, 1, 48, dict(tileDataNum=6144, smallCoreDataNum=20736, bigCoreDataNum=20864,
                                     tailBlockNum=37, finalSmallTileNum=4, finalBigTileNum=4,
                                     smallTailDataNum=2304, bigTailDataNum=2432, maskTileDataNum=768)),
])
def test_experimental_worked_examples(n, dtype, key, cores, fields):
    r = hardtanh((n,), dtype, soc=A910B, min_val=-1.0, max_val=1.0)
    data = r.tiling_data.to_dict()
    assert {k: data[k] for k in fields} == fields
    assert (r.tiling_key, r.block_dim, r.workspace_size) == (key, cores, 0)
    if key == 0:  # the small path leaves the big/small core fields zero
        assert [data[k] for k in ("smallCoreDataNum", "bigCoreDataNum", "finalBigTileNum", "finalSmallTileNum",
                                  "bigTailDataNum", "tailBlockNum")] == [0] * 6


def test_experimental_ut_and_kernel_ut_tilings():
    ut = hardtanh(UT_SHAPE, soc=A910B)  # the tiling UT only checks success
    assert ut.tiling_data.to_dict()["max"] == 1.0 and ut.tiling_data.to_dict()["min"] == -2.0
    kernel = hardtanh((128,), D.FLOAT, soc=A910B, min_val=-1.0, max_val=1.0)  # the kernel UT's hand-written data
    assert kernel.tiling_data == hardtanh_grad.HardtanhGrad910BTilingData(0, 0, 0, 0, 128, 128, 0, 0, 256, 1.0, -1.0)
    assert list(kernel.tiling_data.to_dict())[-2:] == ["max", "min"]  # struct order: max before min


def test_experimental_zero_elements_fails_with_reason():
    with pytest.raises(t.TilingError, match="result has no elements"):
        hardtanh((0, 3), soc=A910B)


def test_experimental_uses_grad_dtype_for_the_element_size():
    op, _ = opdef.find("HardtanhGrad", A910B)
    r = opdef.tile(op, A910B, [T((100,), D.FLOAT16), T((100,), D.FLOAT)], [T((100,), D.FLOAT)], {})
    assert r.tiling_data.tile_data_num == 128  # 512 bytes of fp32 grad


# ---- LeakyRelu (spec §7.3; test_leaky_relu_tiling.cpp) -----------------------------------------


@pytest.mark.parametrize(("dtype", "slope", "key", "cores", "ub_former"), [
    (D.FLOAT16, 0.01, 3, 4, 10240), (D.BF16, 0.01, 5, 4, 10240), (D.FLOAT, 0.01, 7, 8, 15360),
    (D.FLOAT16, 0.2, 3, 4, 10240)])
def test_leaky_relu_ut_successes(dtype, slope, key, cores, ub_former):
    r = leaky(UT_SHAPE, dtype, slope=slope)
    assert r.tiling_key == key > 0
    assert r.tiling_data.to_dict() == {"dim0": 8192, "coreNum": cores, "ubFormer": ub_former,
                                       "scalarData": t.pack_scalars(slope, size=8).hex()}
    assert (r.block_dim, r.workspace_size) == (cores, 16_777_216)


@pytest.mark.parametrize(("kwargs", "reason"), [
    (dict(dtype=D.INT8), "x dtype DT_INT8 is not supported; it must be one of DT_BF16, DT_FLOAT16, DT_FLOAT"),
    (dict(dtype=D.FLOAT16, y_dtype=D.FLOAT), "the dtypes of x, y must be the same, got x DT_FLOAT16, y DT_FLOAT"),
    (dict(dtype=D.FLOAT, y_shape=(8192,)), "the shapes of x and y must be the same, got [1, 64, 2, 64] and [8192]"),
])
def test_leaky_relu_failures(kwargs, reason):
    with pytest.raises(t.TilingError) as err:
        leaky(UT_SHAPE, **kwargs)
    assert err.value.reason == reason


# ---- LeakyReluGrad (spec §7.3, §9.2; test_leaky_relu_grad_tiling.cpp, test_leaky_relu_grad_apt.cpp) --


@pytest.mark.parametrize(("dtype", "slope", "dtype_tpl"), [
    (D.FLOAT16, 0.01, 1), (D.BF16, 0.01, 2), (D.FLOAT, 0.01, 3), (D.FLOAT16, 0.2, 1)])
def test_leaky_relu_grad_ut_successes(dtype, slope, dtype_tpl):
    r = leaky_grad([UT_SHAPE, UT_SHAPE], [dtype] * 3, slope=slope)
    assert r.template == "arch35 broadcast one-dim (schMode 201)"
    assert r.tiling_key == 7 + (dtype_tpl << 16) > 0  # 201 is index 7 of BRC_TEMP_SCH_MODE_KEY_DECL
    assert r.tiling_data.scalar_data == t.pack_scalars(slope, size=16)
    assert r.workspace_size == 16_777_216


def test_leaky_relu_grad_kernel_ut_one_dim_tiling():
    r = leaky_grad([(256,), (256,)], [D.FLOAT] * 3)
    assert r.tiling_data.to_dict() == {"scalarFlag": 0, "ubSplitAxis": 0, "ubFormer": 256, "ubTail": 256,
                                       "blockNum": 1, "blockFormer": 1, "blockTail": 1,
                                       "scalarData": t.pack_scalars(0.01, size=16).hex()}
    assert r.block_dim == 1


def test_leaky_relu_grad_one_dim_ut_shape_fp32_spreads_over_half_the_cores():
    d = leaky_grad([UT_SHAPE, UT_SHAPE], [D.FLOAT] * 3).tiling_data
    assert (d.ub_former, d.ub_tail, d.block_num, d.block_former, d.block_tail) == (256, 256, 32, 1, 1)


def test_leaky_relu_grad_one_dim_large_keeps_full_tiles():
    d = leaky_grad([(1_000_000,), (1_000_000,)], [D.FLOAT] * 3).tiling_data
    # 245760 / 8 buffers = 30720 B -> 7680 fp32 per tile; 131 tiles, 3 per core on 44 cores
    assert (d.ub_former, d.ub_tail, d.block_former, d.block_tail, d.block_num) == (7680, 1600, 3, 2, 44)


def test_leaky_relu_grad_one_dim_refuses_where_the_c_int64_tile_count_wraps():
    # (a breaker) DoOneDimFormerTiling counts ubOuter = (dimLength + ubFormer - 1) / ubFormer in int64;
    # with ubFormer 7680 (fp32) the sum wraps from dimLength 2**63 - 7679 on, so opsnn refuses there,
    # as the elementwise tiling refuses its own int64 wrap (base.require_int64)
    # (the template itself: opdef.tile refuses such a tensor before, its bytes being beyond int64)
    from opsnn.opdef.leaky_relu_grad import DAGS

    def one_dim(n, m):
        collapsed = t.collapse_dims("LeakyReluGrad", [(n,), (m,)], (n,))
        return t.broadcast_one_dim_tiling("LeakyReluGrad", collapsed, A950.vector_core_num, A950.ub_size,
                                          DAGS[D.FLOAT])

    most = 2**63 - 7680
    d = one_dim(most, most)
    assert (d.ub_former, d.block_former, d.block_num) == (7680, t.ceil_div(t.ceil_div(most, 7680), 64), 64)
    with pytest.raises(t.TilingError) as err:
        one_dim(most + 1, 1)
    assert err.value.reason == (f"output of {most + 1} elements (collapsed shape [{most + 1}]) in tiles of 7680: "
                                f"ubOuter's (dimLength + ubFormer - 1) = {2**63} overflows DoOneDimFormerTiling's int64")


def test_leaky_relu_grad_scalar_flag_marks_single_element_inputs():
    d = leaky_grad([(), (100,)], [D.FLOAT] * 3).tiling_data
    assert d.scalar_flag == 0b01
    d = leaky_grad([(1, 100), (1,)], [D.FLOAT] * 3).tiling_data
    assert d.scalar_flag == 0b10


@pytest.mark.parametrize(("dtypes", "reason"), [
    ([D.FLOAT, D.FLOAT16, D.FLOAT], "the dtypes of gradients, features, backprops must be the same, "
                                    "got gradients DT_FLOAT, features DT_FLOAT16, backprops DT_FLOAT"),
    ([D.INT8] * 3, "gradients dtype DT_INT8 is not supported; it must be one of DT_BF16, DT_FLOAT16, DT_FLOAT"),
])
def test_leaky_relu_grad_ut_failures(dtypes, reason):
    with pytest.raises(t.TilingError) as err:
        leaky_grad([UT_SHAPE, UT_SHAPE], dtypes)
    assert err.value.reason == reason


def test_leaky_relu_grad_rejects_shapes_that_do_not_broadcast_to_the_output():
    with pytest.raises(t.TilingError, match="input 0 dim 1 is 3: neither 1 nor the output's 4"):
        leaky_grad([(2, 3), (2, 4)], [D.FLOAT] * 3, out_shape=(2, 4))
    with pytest.raises(t.TilingError, match="output dim 0 must be positive"):
        leaky_grad([(0, 4), (0, 4)], [D.FLOAT] * 3)


# ---- the broadcast template's schedule choice --------------------------------------------------


def test_collapse_merges_dims_treated_alike():
    c = t.collapse_dims("op", [(2, 1, 16), (2, 8, 16)], (2, 8, 16))
    assert c == t.Collapsed(((2, 1, 16), (2, 8, 16)), ((16, 0, 1), (128, 16, 1)), (2, 8, 16), (128, 16, 1))
    c = t.collapse_dims("op", [(4, 5, 6), (1, 1, 6)], (4, 5, 6))
    assert (c.in_dims, c.in_strides, c.out_dims) == (((20, 6), (1, 6)), ((6, 1), (0, 1)), (20, 6))
    c = t.collapse_dims("op", [(3, 1, 1, 5), (1, 1, 1, 5)], (3, 1, 1, 5))  # all-ones dims are absorbed
    assert c.out_dims == (3, 5)
    c = t.collapse_dims("op", [(1,), (7, 1, 9)], (7, 1, 9))
    assert (c.in_dims, c.out_dims) == (((1,), (63,)), (63,))


@pytest.mark.parametrize(("shapes", "dtype", "mode"), [
    ([(2, 1, 16), (2, 8, 16)], D.FLOAT, 1),        # fp32 never takes the UB broadcast kernel here
    ([(2, 1, 16), (2, 8, 16)], D.FLOAT16, 103),    # fp16 with a last dim of whole 32-byte blocks
    ([(2, 1, 15), (2, 8, 15)], D.FLOAT16, 1),      # not whole blocks -> NDDMA
    ([(2, 1, 3, 1, 5, 1, 16), (2, 4, 3, 4, 5, 4, 16)], D.FLOAT16, 109),  # UB broadcast, running rank > 4
    ([(3, 1, 5, 1, 7, 1, 2), (3, 4, 5, 6, 7, 8, 2)], D.FLOAT, 2),     # NDDMA with > 5 dims: loop cache
    ([(1, 8, 4096), (2, 8, 4096)], D.FLOAT, 101),  # non-last broadcast of a >= 4 KiB last dim -> UB, split on it
])
def test_general_schedule_mode(shapes, dtype, mode):
    r = leaky_grad(shapes, [dtype] * 3)
    assert r.template == f"arch35 broadcast (schMode {mode})"
    assert r.tiling_key == t.BRC_TEMP_SCH_MODE_KEY_DECL.values.index(mode) + (TPL_DTYPE[dtype] << 16)


@pytest.mark.parametrize(("shapes", "dtype", "mode", "key", "elem_num"), [
    # IsBigNLastBrc: a 4096-byte last dim under a non-last broadcast (the oldest opbase, which
    # filled copyInBrcPos after the choice, gives NDDMA: 1, 196608, 7680)
    ([(4, 1, 1024), (4, 8, 1024)], D.FLOAT, 102, 196611, 6144),
    ([(4, 1, 2050), (4, 8, 2050)], D.FLOAT16, 102, 65539, 5120),   # 4100 bytes, not whole blocks
    # IsSpecialDimAboveFive, only in opbase 439614c (older: NDDMA with loop cache, 2, 196609, 7680)
    ([(32768, 2, 2, 2, 2, 2, 2), (1, 2, 1, 2, 1, 2, 1)], D.FLOAT, 109, 196614, 6144),
])
def test_ub_broadcast_choice_follows_opbase_439614c(shapes, dtype, mode, key, elem_num):
    r = leaky_grad(shapes, [dtype] * 3)
    assert (r.template, r.tiling_key, r.tiling_data.elem_num) == (f"arch35 broadcast (schMode {mode})", key, elem_num)


def test_general_schedule_note_names_where_the_nddma_cache_size_is_read():
    # the 8192 B IsBigNLastBrc halves is GetNddmaDcacheSize's constant, read from the source, not
    # a guess (the note had called it inferred from a source comment)
    notes = leaky_grad([(4, 1, 1024), (4, 8, 1024)], [D.FLOAT] * 3).notes
    cache = [n for n in notes if "NDDMA data cache" in n]
    expected = ("general schedule: the NDDMA data cache is 8192 B (GetNddmaDcacheSize, "
                "BASE:pkg_inc/op_common/op_host/util/platform_util.h)")
    assert cache == [expected]


def test_general_schedule_fields_split_the_outer_dims():
    d = leaky_grad([(1000, 1, 64), (1000, 50, 64)], [D.FLOAT] * 3).tiling_data
    # 245760 B / (8 buffers x 4 B) = 7680 elements = 120 rows of 64; split on dim 1 (50 rows fit) -> dim 0
    assert (d.ub_split_axis, d.ub_former, d.ub_outer, d.ub_tail, d.elem_num) == (0, 2, 500, 2, 7680)
    assert (d.dim_product_before_ub_inner, d.block_former, d.block_num, d.block_tail) == (500, 8, 63, 4)
    assert d.output_dims == (1000, 50, 64) and d.input_brc_strides == ((64, 0, 1), (3200, 64, 1))


@pytest.mark.parametrize(("shape", "strides", "mode"), [
    ((64, 32), (1, 64), 303),          # last two dims transposed, 64 rows for 32 of 64 cores
    ((4, 32), (1, 4), 304),            # transposed but too few rows: the fallback
    ((8, 64), (128, 1), 301),          # rows read densely with a gap: NLast transpose, NDDMA
    ((4, 8, 64), (1024, 128, 2), 304),  # last dim strided: the fallback
])
def test_strided_inputs_pick_301_to_305(shape, strides, mode):
    r = leaky_grad([shape, shape], [D.FLOAT] * 3, strides=(strides, None))
    assert r.tiling_data.sch_mode == mode and r.tiling_data.settled
    assert r.block_dim is None
    with pytest.raises(t.TilingError, match="not settled"):
        r.launch()


def test_contiguous_strides_are_not_strided():
    r = leaky_grad([(8, 64), (8, 64)], [D.FLOAT] * 3, strides=((64, 1), None))
    assert r.template == "arch35 broadcast one-dim (schMode 201)"


@pytest.mark.parametrize("strides", [(1,), (64, 8, 1)])
def test_strides_not_one_per_dim_fail_the_tiling(strides):
    # opbase IsTensorContiguous fails GRAPH_FAILED when a view's stride count is not its rank (had:
    # (1,) read as contiguous -> 201, (64, 8, 1) as strided -> 301)
    with pytest.raises(t.TilingError) as info:
        leaky_grad([(8, 64), (8, 64)], [D.FLOAT] * 3, strides=(strides, None))
    assert info.value.reason == (f"input 0 (gradients) has {len(strides)} strides {list(strides)} for its 2 dims "
                                 "[8, 64]: a view needs one stride per dim (or none, contiguous)")


def test_no_strides_is_contiguous():
    r = leaky_grad([(8, 64), (8, 64)], [D.FLOAT] * 3, strides=((), None))  # a stride count of 0: contiguous
    assert r.template == "arch35 broadcast one-dim (schMode 201)"


@pytest.mark.parametrize(("strides", "template"), [
    ((64, 1), "arch35 broadcast one-dim (schMode 201)"),
    ((1, 8), "arch35 broadcast, strided inputs (schMode 304)"),
    ((), "arch35 broadcast one-dim (schMode 201)"),
])
def test_strides_as_a_numpy_array_are_read_as_a_tuple(strides, template):
    # the stride-count check asked `not strides`, which a NumPy array of two strides cannot answer
    # (ValueError: the truth value ... is ambiguous); the tiling had read one as it reads a tuple
    r = leaky_grad([(8, 64), (8, 64)], [D.FLOAT] * 3, strides=(np.array(strides, dtype=np.int64), None))
    assert r.template == template


# ---- generic template invariants -----------------------------------------------------------------

DAG = t.DagParams(8, 32, 10, "test")


@settings(max_examples=80, deadline=None)
@given(dim0=st.integers(1, 10**9), cores=st.integers(1, 128), ub=st.integers(10240, 1 << 20),
       dag=st.sampled_from([DAG, t.DagParams(16, 32, 6, "t"), t.DagParams(32, 32, 4, "t")]))
def test_elementwise_tiling_invariants(dim0, cores, ub, dag):
    d = t.elementwise_tiling("op", (dim0,), [(dim0,), ()], cores, ub, dag)
    assert d.core_num <= cores and d.block_num <= d.core_num
    assert d.block_former % 512 == 0 and (d.block_num - 1) * d.block_former < dim0 <= d.block_num * d.block_former
    assert d.ub_former % (256 * 8 // dag.min_dtype_bits) == 0
    assert dag.buffer_num * d.ub_former * dag.max_dtype_bytes <= ub
    tail = dim0 - (d.block_num - 1) * d.block_former
    assert (d.ub_loop_of_tail_block - 1) * d.ub_former + d.ub_tail_of_tail_block == tail
    assert (d.ub_loop_of_former_block - 1) * d.ub_former + d.ub_tail_of_former_block == d.block_former
    assert 0 < d.ub_tail_of_tail_block <= d.ub_former and 0 < d.ub_tail_of_former_block <= d.ub_former


def test_a_ub_too_small_for_one_repeat_is_refused_in_the_same_words_by_both_templates():
    """The elementwise and broadcast tilings refuse a UB that holds no repeat for their buffers
    with one message (``base.ub_elements``): 1 KiB for 10 buffers of float32 is 25 float32, below
    a repeat, 256 elements of the 8-bit smallest dtype."""
    with pytest.raises(t.TilingError) as ele:
        t.elementwise_tiling("op", (2,), [], 8, 1024, DAG)
    collapsed = t.collapse_dims("op", [(4, 5, 6), (1, 1, 6)], (4, 5, 6))
    with pytest.raises(t.TilingError) as brc:
        t.broadcast_tiling("op", collapsed, [DataType.FLOAT, DataType.FLOAT], 8, 1024,
                           t.BroadcastDagParams(8, 32, 10, 10, "test"))
    said = "[561103 ACLNN_ERR_INNER_NULLPTR] op tiling failed: UB of 1024 B cannot hold one repeat for 10 buffers"
    assert str(ele.value) == str(brc.value) == said


def test_elementwise_tiling_failures():
    with pytest.raises(t.TilingError, match=r"every dim > 0, got \[2, 0\]"):
        t.elementwise_tiling("op", (2, 0), [], 8, 1 << 16, DAG)
    with pytest.raises(t.TilingError, match="cannot hold one repeat"):
        t.elementwise_tiling("op", (2,), [], 8, 1024, DAG)
    with pytest.raises(t.TilingError, match="core num can not be 0"):
        t.elementwise_tiling("op", (2,), [], 0, 1 << 16, DAG)
    with pytest.raises(t.TilingError, match=r"input 1 shape \[3, 2\] is not the output shape \[2, 3\]"):
        t.elementwise_tiling("op", (2, 3), [(1,), (3, 2)], 8, 1 << 16, DAG)
    # (a breaker) the C code counts dim0 * minDtypeBits + 32767 in int64: from 2**63 it wraps to a
    # core count <= 0 (2**61 8-bit elements: 0, then a division by zero), so opsnn refuses there
    most = (2**63 - 32768) // DAG.min_dtype_bits  # (dim0 * bits + 32767, rounded up to whole cores)
    assert t.elementwise_tiling("op", (most,), [], 8, 1 << 16, DAG).core_num == 8
    with pytest.raises(t.TilingError, match=rf"{most + 1} elements of {DAG.min_dtype_bits} bits: the bit count"):
        t.elementwise_tiling("op", (most + 1,), [], 8, 1 << 16, DAG)


# ---- tiling keys (AscendC EncodeTilingKey) -------------------------------------------------------


def test_tiling_key_uint_is_the_index_as_ops_math_add_v2_ut_asserts():
    # MATH:math/add_v2/op_kernel/arch35/add_v2_struct_arch35.h declares (BRC_TEMP_SCH_MODE_KEY_DECL(schMode),
    # UINT userDef 8 bits 0/1); test_add_v2_tiling.cpp: add_v2_tiling_fp32 expects 8 (202, userDef 0),
    # add_v2_tiling_empty_1d expects 65550 (999, userDef 1)
    add_v2 = t.TilingKeyDecl("AddV2", (t.BRC_TEMP_SCH_MODE_KEY_DECL, t.tpl_uint("userDef", 8, (0, 1))), "UT")
    assert add_v2.key(202, 0) == 8
    assert add_v2.key(999, 1) == 65550 == 0x1000E


def test_tiling_key_dtype_is_the_value_as_the_hardtanh_grad_ut_asserts():
    assert hardtanh_grad.TILING_KEY.key(1, 1) == 3  # by index, the one-value dType list would give 1
    decl = t.TilingKeyDecl("op", (t.tpl_uint("schMode", 1, (0, 1)), t.tpl_dtype("dType", 10, 20),
                                  t.tpl_format("fmt", 2, 29), t.tpl_bool("flag", 0, 1)), "test")
    assert decl.key(0, 20, 29, 1) == 20 << 1 | 29 << 9 | 1 << 17


def test_tiling_key_uint_range_and_mix_expand_in_declaration_order():
    # UI_MIX: the ranges' values, then the listed ones (template_argument.cpp ParseTplUintValue)
    mix = t.tpl_uint("n", 8, (10, 12, 13, 9, 8), ranges=((0, 2), (3, 5)))
    assert mix.values == (0, 1, 2, 3, 4, 5, 10, 12, 13, 9, 8)
    assert t.TilingKeyDecl("op", (mix,), "test").key(9) == 9 and t.TilingKeyDecl("op", (mix,), "test").key(10) == 6
    assert t.tpl_uint("r", 4, ranges=((5, 7),)).code("op", 7) == 2


def test_tiling_key_refuses_undeclared_values_and_oversized_declarations():
    decl = t.TilingKeyDecl("op", (t.BRC_TEMP_SCH_MODE_KEY_DECL,), "test")
    with pytest.raises(t.TilingError, match=r"schMode 203 is not among the declared \[1, 2, 101"):
        decl.key(203)
    with pytest.raises(t.TilingError, match=r"1 template arguments declared \(schMode\), got 2 values"):
        decl.key(201, 1)
    with pytest.raises(ValueError, match=r"schMode: values must fit 1 bits, got \[0, 1, 2\]"):
        t.tpl_uint("schMode", 1, (0, 1, 2))
    with pytest.raises(ValueError, match=r"values must fit 8 bits, got \[256\]"):
        t.tpl_dtype("dType", 256)
    with pytest.raises(ValueError, match="kind must be one of"):
        t.TplArg("n", "INT", 8, (1,))
    with pytest.raises(ValueError, match="distinct"):
        t.tpl_dtype("dType", 1, 1)
    with pytest.raises(ValueError, match="take 72 bits, more than a 64-bit tiling key"):
        t.TilingKeyDecl("op", tuple(t.tpl_dtype(f"d{i}", 1) for i in range(9)), "test")


@pytest.mark.parametrize(("op", "dtype", "key"), [
    ("LeakyReluGrad", D.FLOAT16, 7 + (1 << 16)), ("LeakyReluGrad", D.BF16, 7 + (2 << 16)),
    ("LeakyReluGrad", D.FLOAT, 7 + (3 << 16)),
    ("LeakyRelu", D.FLOAT16, 3), ("LeakyRelu", D.BF16, 5), ("LeakyRelu", D.FLOAT, 7),
    ("HardtanhGrad", D.FLOAT16, 3), ("HardtanhGrad", D.BF16, 3), ("HardtanhGrad", D.FLOAT, 3),
])
def test_every_templated_op_keys_through_its_declaration(op, dtype, key):
    r = leaky_grad([(256,), (256,)], [dtype] * 3) if op == "LeakyReluGrad" else (
        leaky((256,), dtype) if op == "LeakyRelu" else hardtanh((256,), dtype))
    assert r.tiling_key == key


@pytest.mark.parametrize(("shape", "strides", "mode"), [((64, 32), (1, 64), 303), ((8, 64), (128, 1), 301)])
def test_strided_schedules_key_by_their_index_too(shape, strides, mode):
    r = leaky_grad([shape, shape], [D.FLOAT] * 3, strides=(strides, None))
    assert r.tiling_key == {301: 9, 303: 11}[mode] + (3 << 16)


def test_same_elewise_shape():
    assert t.same_elewise_shape((2, 3), (2, 3)) and t.same_elewise_shape((), (2, 3))
    assert t.same_elewise_shape((1, 1), (4,)) and not t.same_elewise_shape((2, 3), (3, 2))


# ---- host plan -----------------------------------------------------------------------------------


def test_host_plan_examples():
    p = t.plan_host(1_000_000, 4, 8)
    assert p == t.HostPlan(1_000_000, 4, 8, 125_008, 124_944, 4096)
    assert p.block(7) == (875_056, 1_000_000) and list(p.tiles(7))[-1] == (997_936, 1_000_000)
    assert t.plan_host(100, 4, 8) == t.HostPlan(100, 4, 1, 112, 100, 4096)  # one tile -> one thread
    assert t.plan_host(0, 2, 4).n_blocks == 0
    assert t.plan_host(10, 1, 4, tile_bytes=1).tile == 64  # at least one cache line
    assert t.plan_host(10, 4, 2).to_dict() == {"numel": 10, "itemsize": 4, "nBlocks": 1, "blockFormer": 16,
                                               "blockTail": 10, "tile": 4096}
    with pytest.raises(ValueError, match="n_threads=0"):
        t.plan_host(10, 4, 0)
    # no more blocks than tiles' worth of elements: 4097 float32 over 2 threads is 2 blocks
    # (smaller than a tile each; a breaker held the docstring's old "never smaller than a tile")
    assert t.plan_host(4097, 4, 2) == t.HostPlan(4097, 4, 2, 2064, 2033, 4096)
    assert t.plan_host(np.int64(4097), np.int64(4), 2) == t.plan_host(4097, 4, 2)
    for bad in ((10, 4, 2.5), (10.0, 4, 2), (10, "4", 2)):
        with pytest.raises(ValueError, match="plan_host takes ints"):
            t.plan_host(*bad)


@settings(max_examples=100, deadline=None)
@given(numel=st.integers(0, 3_000_000), itemsize=st.sampled_from([1, 2, 4, 8]), threads=st.integers(1, 96),
       tile_bytes=st.integers(1, 1 << 17))
def test_host_plan_covers_every_element_once(numel, itemsize, threads, tile_bytes):
    p = t.plan_host(numel, itemsize, threads, tile_bytes)
    assert p.n_blocks <= threads
    line = max(1, 64 // itemsize)
    expected_start = 0
    for b in range(p.n_blocks):
        start, stop = p.block(b)
        assert start == expected_start and stop > start and start % line == 0
        tile_start = start
        for s, e in p.tiles(b):
            assert s == tile_start and 0 < e - s <= p.tile and s % line == 0
            tile_start = e
        assert tile_start == stop
        expected_start = stop
    assert expected_start == numel


# ---- the CLI function ------------------------------------------------------------------------------


def cli(capsys, *argv):
    parser = argparse.ArgumentParser()
    tiling_cli.add_arguments(parser)
    code = tiling_cli.run(parser.parse_args(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_cli_text_shows_def_match_shape_tiling_key_and_simulation(capsys):
    code, out, _ = cli(capsys, "HardtanhGrad", "--shape", "1,64,2,64", "--soc", "Ascend950", "--min-val", "-2",
                       "--simulate")
    assert code == 0
    assert "def match    FLOAT16, FLOAT16, FLOAT16: binary row 2 of 3" in out
    assert "infershape   y = [1, 64, 2, 64]" in out
    assert "  baseTiling.ubFormer = 6144" in out and "tiling key   3" in out
    assert "block dim    2" in out and "workspace    16777216 B" in out
    assert "every one of 8192 elements written exactly once" in out and "verdict    OK" in out
    # one element (a 0-d tensor) is said as one ("every one of 1 elements", a breaker)
    code, out, _ = cli(capsys, "HardtanhGrad", "--shape", "[]", "--soc", "Ascend950", "--simulate")
    assert code == 0 and "  coverage   its one element written exactly once\n" in out, out


def test_cli_json_for_an_aclnn_name_maps_onto_the_kernel_op(capsys):
    code, out, _ = cli(capsys, "aclnnHardtanhBackward", "--shape", "1000", "--soc", "Ascend910B", "--json",
                       "--simulate")
    report = json.loads(out)
    assert code == 0 and report["op"] == "HardtanhGrad" and report["variant"] == "experimental"
    assert report["aclnn"]["kernelInputs"] == [1, 0]
    assert report["tilingKey"] == 0 and report["tilingData"]["tileDataNum"] == 1024
    sim = report["simulation"]
    assert sim["ok"] and sim["coveredOnce"] and not sim["inBounds"]
    assert [(f["kind"], f["elements"]) for f in sim["sim"]["findings"]] == [("over-read", 48), ("over-write", 24)]
    assert "inclusive" in sim["semantics"] and "strict" in sim["torchNote"]
    # the text says why OK stands beside accesses past the tensors (a breaker read it as a contradiction)
    code, out, _ = cli(capsys, "aclnnHardtanhBackward", "--shape", "1000", "--soc", "Ascend910B", "--simulate")
    assert code == 0 and "verdict    OK (the accesses past the tensors are the source kernel's own" in out


@pytest.mark.parametrize("argv, scalars", [
    (["HardtanhBackward", "--soc", "Ascend910B"], {"min_val": -1.0, "max_val": 1.0}),  # the op definition's defaults
    (["LeakyReluBackward", "--soc", "Ascend950"], {"negative_slope": 0.0}),
    (["HardtanhBackward", "--soc", "Ascend910B", "--min-val", "-0.5", "--max-val", "2"],
     {"min_val": -0.5, "max_val": 2.0}),
])
def test_the_aclnn_call_beside_a_tiling_takes_the_tilings_attrs_as_its_scalars(monkeypatch, capsys, argv, scalars):
    """``opsnn tiling`` of an aclnn API plans the call with the attrs the kernel is tiled with,
    the report's ``attrs``: one source for both (the CLI had its own table of the defaults)."""
    from opsnn import cli as opsnn_cli
    from opsnn import engine

    planned = {}
    real_plan = engine.plan

    def plan(spec, args, *rest, **kw):
        planned.update({name: args[name].value for name in scalars})
        return real_plan(spec, args, *rest, **kw)

    monkeypatch.setattr(engine, "plan", plan)
    code = opsnn_cli.main(["tiling", *argv, "--shape", "4", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0 and planned == report["attrs"] == scalars


def test_cli_aclnn_order_and_second_shape(capsys):
    details = lambda args, api, attrs: {"executorSteps": ["Contiguous(self)", "HardtanhGrad"]}  # noqa: E731
    parser = argparse.ArgumentParser()
    tiling_cli.add_arguments(parser)
    args = parser.parse_args(["HardtanhBackward", "--shape", "4,1", "--shape2", "4", "--soc", "Ascend950"])
    assert tiling_cli.run(args, aclnn_details=details) == 1  # result (= self) [4] vs grad [4, 1]
    out = capsys.readouterr().out
    assert "HardtanhGrad(result=self, grad=gradOutput)" in out and "step       Contiguous(self)" in out
    assert "infershape   y = [4]" in out and "the shapes of result and grad must be the same" in out


@pytest.mark.parametrize("argv, words", [
    (["--soc", "Ascend910B", "HardtanhGrad", "--shape=-1,8", "--shape2=1,8"], "input result is [-1, 8], dynamic"),
    (["--soc", "Ascend910B", "HardtanhGrad", "--shape=-2", "--shape2", "4,8"], "input result is [-2], dynamic"),
    (["--soc", "Ascend950", "LeakyReluGrad", "--shape=-1,8", "--shape2=4,8"], "input gradients is [-1, 8], dynamic"),
    (["--soc", "Ascend950", "HardtanhBackward", "--shape=-1,8", "--shape2=0,8"], "is [-1, 8], dynamic"),
    (["--soc", "Ascend950", "HardtanhGrad", "--shape", "4611686018427387904,4"], "more than an int64 counts"),
])
def test_cli_dynamic_inputs_and_int64_overflow_fail_cleanly(capsys, argv, words):
    """(A breaker) a dynamic input beside a static one reached the 910B tiling as N <= 0 (a
    ZeroDivisionError traceback), or, for an aclnn name, took the empty fast path (exit 0);
    an element count beyond int64 tiled into a wrapped field. Each is FAILED now, exit 1."""
    code, out, _ = cli(capsys, *argv)
    assert code == 1 and words in out and "Traceback" not in out, out
    assert "empty-tensor fast path" not in out


def test_tile_refuses_dynamic_shapes_counts_beyond_int64_and_sub_byte_dtypes():
    """opdef.tile raises TilingError (561103) for what the CLI reports above, on every def."""
    for soc in (A950, get_profile("Ascend910B")):
        op, _ = opdef.find("HardtanhGrad", soc)
        for shapes in ([(-1, 8), (4, 8)], [(4, 8), (-3, 8)]):
            with pytest.raises(t.TilingError, match="dynamic shape"):
                opdef.tile(op, soc, [T(s, D.FLOAT16) for s in shapes], [T((4, 8), D.FLOAT16)], {})
        with pytest.raises(t.TilingError, match="more than an int64"):
            opdef.tile(op, soc, [T((2**62, 2), D.FLOAT16)] * 2, [T((2**62, 2), D.FLOAT16)], {})
    op, _ = opdef.find("HardtanhGrad", get_profile("Ascend910B"))
    with pytest.raises(t.TilingError, match="no whole-byte element size"):
        opdef.tile(op, get_profile("Ascend910B"), [T((4,), D.INT4)] * 2, [T((4,), D.INT4)], {})


def test_cli_takes_every_aclnn_name_opsnn_list_shows(capsys):
    """(A breaker) aclnnInplaceLeakyRelu, listed by `opsnn list`, was 'no op definition'; it
    maps onto the LeakyRelu kernel as aclnnLeakyRelu does. aclnnHardtanh's kernel, ops-math's
    ClipByValueV2, is run but its tiling not modelled, which the refusal says."""
    code, out, _ = cli(capsys, "aclnnInplaceLeakyRelu", "--shape", "1000", "--simulate")
    assert code == 0 and "aclnnInplaceLeakyRelu(selfRef) -> LeakyRelu(x=selfRef)" in out and "verdict    OK" in out
    code, _, err = cli(capsys, "aclnnLeakyReluGrad", "--shape", "4")  # no such API: was taken as the kernel op
    assert code == 2 and "no aclnn API named 'aclnnLeakyReluGrad': LeakyReluGrad is a kernel op" in err
    for name in ("aclnnHardtanh", "aclnnInplaceHardtanh", "ClipByValueV2"):
        code, _, err = cli(capsys, name, "--shape", "4")
        assert code == 2 and "ClipByValueV2, the kernel of aclnnHardtanh, aclnnInplaceHardtanh, is ops-math's" in err


def test_cli_failures_and_usage_errors(capsys):
    code, out, _ = cli(capsys, "LeakyReluGrad", "--shape", "1,64,2,64", "--dtype", "float32,float16,float32")
    assert code == 1 and "no binary row matches" in out and "FAILED       LeakyReluGrad tiling failed" in out
    code, out, _ = cli(capsys, "LeakyReluGrad", "--shape=-1,-1")
    assert code == 1 and "backprops = [-1, -1]" in out and "needs static shapes" in out
    assert cli(capsys, "LeakyRelu", "--shape", "4", "--min-val", "1")[0] == 2
    assert cli(capsys, "Nope", "--shape", "4")[0] == 2
    assert cli(capsys, "LeakyReluGrad", "--shape", "2", "--shape", "2", "--shape", "2")[0] == 2
    code, _, err = cli(capsys, "LeakyRelu", "--shape", "4", "--soc", "Ascend310P")
    assert code == 1 and "no op_host config for Ascend310P" in err
    # the aclnn name on a product line whose aclnn call refuses the op says so (561003), not
    # that CANN runs a built-in kernel there; on a product line it serves, the built-in note stays
    code, _, err = cli(capsys, "aclnnLeakyRelu", "--shape", "4", "--soc", "Ascend310P")
    assert code == 1 and err.strip() == ("opsnn tiling: aclnnLeakyRelu is not supported on Ascend310P (Atlas "
                                         "inference series): its GetWorkspaceSize returns 561003 for a non-empty "
                                         "call that passes its checks; no LeakyRelu kernel to tile")
    code, _, err = cli(capsys, "aclnnLeakyRelu", "--shape", "4", "--soc", "Ascend910B")
    assert code == 1 and "CANN runs a built-in kernel" in err


def test_cli_picks_the_soc_the_op_is_built_for(capsys):
    code, out, _ = cli(capsys, "LeakyRelu", "--shape", "[]", "--dtype", "bf16")
    assert code == 0 and "Ascend950" in out and "tiling key   5" in out


def test_cli_empty_soc_is_a_usage_error_like_any_unknown_soc(capsys):
    """(A breaker) `--soc ''` (an unset shell variable: --soc "$SOC") was read as no --soc and
    tiled for the current profile, exit 0, while `--soc ' '` and any other unknown name are a
    usage error; the empty name is refused alike, naming it."""
    for soc in ("", " "):
        code, out, err = cli(capsys, "HardtanhGrad", "--shape", "8", "--soc", soc)
        assert (code, out) == (2, "")
        assert err.startswith(f"opsnn tiling: error: unknown SoC {soc!r}; known: Ascend910, Ascend910B"), err
    code, out, _ = cli(capsys, "HardtanhGrad", "--shape", "8", "--soc", " ascend950 ")
    assert code == 0 and "soc          Ascend950: 64 vector cores" in out


def test_cli_an_inplace_call_takes_no_out_dtype_of_its_own(capsys):
    """(A breaker) an in-place call writes into selfRef (its out is selfRef itself, as the tiling's
    phase 1 now plans it), so `aclnnInplaceLeakyRelu --dtype float16,float32` had no out of
    float32 to write: the float32 was dropped unsaid, the steps showing the kernel writing float16
    into out and the def match 'typed FLOAT16, FLOAT' with 'the executor's casts' of no Cast step.
    An out dtype other than selfRef's is a usage error naming both; selfRef's own is taken. (The
    whole command, as the user runs it: its phase-1 steps are the CLI's.)"""
    from opsnn import cli as command

    def tiling(*argv):
        code = command.main(["tiling", *argv])
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    code, out, err = tiling("aclnnInplaceLeakyRelu", "--shape", "4,4", "--dtype", "float16,float32")
    assert (code, out) == (2, "")
    assert err == ("opsnn tiling: error: aclnnInplaceLeakyRelu writes its result into selfRef, so its out "
                   "dtype is selfRef's DT_FLOAT16; got DT_FLOAT (give one dtype)\n")
    code, out, _ = tiling("aclnnInplaceLeakyRelu", "--shape", "4,4", "--dtype", "float16,float16")
    assert code == 0 and "def match    FLOAT16, FLOAT16: binary row 2 of 3" in out, out
    code, out, _ = tiling("aclnnLeakyRelu", "--shape", "4,4", "--dtype", "float16,float32")
    assert code == 0 and "step       Cast(ws[0] -> DT_FLOAT) -> out" in out, out  # (the out-of-place call casts)


@pytest.mark.parametrize("dtype, itemsize", [(D.FLOAT16, 2), (D.BF16, 2), (D.FLOAT, 4)])
def test_tile_refuses_tensors_whose_bytes_exceed_int64(dtype, itemsize):
    """(A breaker) 2**62 float16 elements (2**63 bytes) tiled on LeakyReluGrad's one-dim schedule and
    the experimental 910B tiling, exit 0, though no such tensor exists: GE's GetSizeInBytes fails
    (-1) where count * element size overflows int64, so no launch has it. opdef.tile refuses it
    for every def, exactly from (2**63 - 1) // itemsize + 1 elements on, naming the bytes."""
    most = (2**63 - 1) // itemsize
    for name, soc in (("LeakyReluGrad", A950), ("HardtanhGrad", A910B)):
        op, _ = opdef.find(name, soc)
        assert opdef.tile(op, soc, [T((most,), dtype)] * 2, [T((most,), dtype)], {}).block_dim >= 1
    for name, soc in (("LeakyReluGrad", A950), ("HardtanhGrad", A910B), ("HardtanhGrad", A950), ("LeakyRelu", A950)):
        op, _ = opdef.find(name, soc)
        for n in (most + 1, 2**62):
            ins = [T((n,), dtype)] * len(op.inputs)
            with pytest.raises(t.TilingError) as err:
                opdef.tile(op, soc, ins, [T((n,), dtype)], {})
            assert err.value.reason == (f"{op.inputs[0]} of shape [{n}] holds {n} elements of {itemsize} bytes, "
                                        f"{n * itemsize} bytes: more than GE's int64 tensor size counts "
                                        "(GetSizeInBytes fails), so no launch has such a tensor")


def test_cli_2_62_elements_say_no_tiling_and_why(capsys):
    """The CLI reports it as a failed tiling (exit 1, error in --json) and simulates nothing."""
    for argv in (("LeakyReluGrad", "--soc", "Ascend950"), ("HardtanhGrad", "--soc", "Ascend910B"),
                 ("aclnnLeakyReluBackward", "--soc", "Ascend950")):
        code, out, _ = cli(capsys, *argv, "--shape", str(2**62), "--json", "--simulate")
        report = json.loads(out)
        assert code == 1 and "tilingData" not in report and "simulation" not in report
        assert report["error"].endswith(f"holds {2**62} elements of 2 bytes, {2**63} bytes: more than GE's int64 "
                                        "tensor size counts (GetSizeInBytes fails), so no launch has such a tensor")


def test_experimental_note_counts_tensors_larger_than_the_walk_as_left_short():
    """(A breaker) with grad and y larger than result's padded length L, the note counted
    'past grad -872, y -872': the kernel walks L elements of each, so it leaves their last
    elements unread and unwritten, which the note now says with positive counts."""
    op, _ = opdef.find("HardtanhGrad", A910B)
    result = T((4, 4), D.FLOAT)
    notes = opdef.tile(op, A910B, [result, T((1000,), D.FLOAT)], [T((1000,), D.FLOAT)], {}).notes
    assert notes[1] == ("the kernel processes the padded length L = 128 (N = 16): elements read or written past "
                        "result 112; the last 872 elements of grad left unread, the last 872 elements of y left "
                        "unwritten; op_host does not check that the shapes agree (spec §7.4)")
    notes = opdef.tile(op, A910B, [result, T((128,), D.FLOAT)], [T((1,), D.FLOAT)], {}).notes
    assert notes[1] == ("the kernel processes the padded length L = 128 (N = 16): elements read or written past "
                        "result 112, y 127; op_host does not check that the shapes agree (spec §7.4)")


@pytest.mark.parametrize("op, kernel", [("HardtanhGrad", "HardtanhGrad"), ("hardtanhgrad", "HardtanhGrad"),
                                        ("aclnnLeakyReluBackward", "LeakyReluGrad")])
def test_cli_json_of_a_soc_without_the_config_names_the_op_and_soc_as_every_report(capsys, op, kernel):
    """(A breaker) that one report gave the SoC and op as typed (' ascend910 ', 'hardtanhgrad',
    'aclnnLeakyReluBackward') where every other report gives the profile's name and the kernel
    op: a reader matching report['soc']['name'] == 'Ascend910' missed it."""
    code, out, _ = cli(capsys, op, "--soc", " ascend910 ", "--shape", "8", "--json")
    report = json.loads(out)
    assert code == 1 and list(report) == ["op", "soc", "failures"]
    assert (report["op"], report["soc"]) == (kernel, {"name": "Ascend910", "vectorCoreNum": 32, "ubSize": 262144,
                                                      "note": None})
    assert report["failures"][0].startswith(f"{kernel} has no op_host config for Ascend910 (configs: ")


def test_tile_refuses_shapes_of_more_than_8_dims_as_the_cli_does():
    """(A breaker) `opsnn tiling HardtanhGrad --shape` of 9 dims is refused (GE's gert::Shape holds
    8), but opdef.tile, which docs/tiling.md shows, tiled (2,) * 9 on every def; it raises
    TilingError now, naming the tensor, and 8 dims still tile."""
    for name, soc in (("HardtanhGrad", A950), ("HardtanhGrad", A910B), ("LeakyReluGrad", A950), ("LeakyRelu", A950)):
        op, _ = opdef.find(name, soc)
        n = len(op.inputs)
        assert opdef.tile(op, soc, [T((2,) * 8, D.FLOAT)] * n, [T((2,) * 8, D.FLOAT)], {}).block_dim == 1
        with pytest.raises(t.TilingError) as err:
            opdef.tile(op, soc, [T((2,) * 8, D.FLOAT)] * n, [T((2,) * 9, D.FLOAT)], {})
        assert err.value.reason == (f"{op.outputs[0]} has 9 dims [2, 2, 2, 2, 2, 2, 2, 2, 2]; a kernel's shapes "
                                    "(GE's gert::Shape) hold at most 8")


def test_plan_host_refuses_bools_as_it_refuses_floats():
    """(A breaker) plan_host(True, 2, 2) planned one element and plan_host(10, 4, True) one
    thread: a bool is an int to operator.index, but no count anyone means; it is refused as a
    float is, naming the arguments. NumPy's bools too, which NumPy 2.0 (the minimum) still
    hands operator.index as ints."""
    for bad in ((True, 2, 2), (10, 4, True), (10, True, 2), (10, 4, 2, False), (np.True_, 2, 2)):
        with pytest.raises(ValueError, match="plan_host takes ints, got numel="):
            t.plan_host(*bad)


def test_experimental_tiling_refuses_a_dtype_of_no_size():
    """(A breaker) the experimental 910B tiling, which checks no dtypes, looked DT_UNDEFINED's
    size up in BITS and raised KeyError; it is refused as a sub-byte dtype is, by a TilingError."""
    op, _ = opdef.find("HardtanhGrad", A910B)
    t_ = T((4,), D.DT_UNDEFINED)
    with pytest.raises(t.TilingError) as err:
        opdef.tile(op, A910B, [t_, t_], [t_], {})
    assert err.value.reason == ("grad's dtype DT_UNDEFINED has no whole-byte element size; the 512-byte unit is "
                                "counted in whole elements")
