"""The device simulation: coverage, UB budget, bounds and bit-exact results, for every tiling path,
on the UT shapes and on random shapes, dtypes and SoC profiles (spec §7.3, §7.4, §8)."""

from __future__ import annotations

import dataclasses

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from opsnn import opdef, simulate
from opsnn._core import tiling as t
from opsnn._core.dtypes import DataType as D
from opsnn._core.dtypes import to_numpy
from opsnn._core.platform import get_profile
from opsnn.opdef import TensorDesc as T

A950, A910B = get_profile("Ascend950"), get_profile("Ascend910B")
FLOATS = [D.FLOAT16, D.BF16, D.FLOAT]


# ---- independent float64-derived references (spec §3.3, §4.3, §5.2) ----------------------------


def ref_hardtanh_grad(result, grad, lo, hi, inclusive):
    x, lo, hi = result.astype(np.float64), float(np.float32(lo)), float(np.float32(hi))
    keep = ((x >= lo) & (x <= hi)) if inclusive else ((x > lo) & (x < hi))
    return np.where(keep | np.isnan(x), grad, np.zeros_like(grad))


def ref_leaky_relu_grad(grad, features, slope):
    g, x = np.broadcast_arrays(grad.astype(np.float64), features.astype(np.float64))
    s = float(np.float32(slope))
    with np.errstate(over="ignore", invalid="ignore"):
        return np.where(x > 0, g, g * s).astype(np.float32).astype(grad.dtype)


def ref_leaky_relu(x, slope):
    xd, s = x.astype(np.float64), float(np.float32(slope))
    with np.errstate(over="ignore", invalid="ignore"):
        return np.where(xd > 0, xd, xd * s).astype(np.float32).astype(x.dtype)


def same_bits(a, b):
    view = np.dtype(f"u{a.dtype.itemsize}")
    return a.shape == b.shape and np.array_equal(np.ascontiguousarray(a).view(view), np.ascontiguousarray(b).view(view))


def data(rng, shape, dtype, specials=()):
    values = rng.uniform(-3, 3, size=shape).astype(np.float32)
    flat = values.reshape(-1)
    if flat.size:
        picks = rng.random(flat.size) < 0.15
        pool = np.array([np.nan, 0.0, -0.0, np.inf, -np.inf, *specials], dtype=np.float32)
        flat[picks] = rng.choice(pool, size=int(picks.sum()))
    return values.astype(to_numpy(dtype))


def run(name, soc, shapes, dtype, attrs, rng):
    """Tile, simulate with the op's formula, return (report, output in the inferred shape, inputs)."""
    op, _ = opdef.find(name, soc)
    out_shape = op.infer_shape(shapes)
    ins, outs = [T(s, dtype) for s in shapes], [T(out_shape, dtype)]
    result = opdef.tile(op, soc, ins, outs, attrs)
    arrays = [data(rng, s, dtype, [attrs.get("min_val", 1.0), attrs.get("max_val", -1.0)]) for s in shapes]
    report = simulate.simulate(result.launch(), arrays, simulate.formula_for(op, attrs).tile, to_numpy(dtype))
    return report, report.output.reshape(out_shape), arrays


def assert_clean(report):
    assert report.covered_once and report.within_ub and report.in_bounds, report.findings
    assert report.findings == ()


def profile_950(cores, ub):
    return dataclasses.replace(A950, vector_core_num=cores, ub_size=ub)


# ---- the UT shapes --------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS)
def test_hardtanh_grad_arch35_ut_shape(dtype):
    rng = np.random.default_rng(1)
    report, out, (result, grad) = run("HardtanhGrad", A950, [(1, 64, 2, 64)] * 2, dtype,
                                      {"min_val": -2.0, "max_val": 1.0}, rng)
    assert_clean(report)
    assert (report.blocks, report.tiles, report.buffer_num, report.max_tile_elems) == (2, 2, 2, 4096)
    assert (report.buffer_elems, report.ub_alloc_bytes, report.ub_size) == (6144, 245760, 245760)
    assert same_bits(out, ref_hardtanh_grad(result, grad, -2.0, 1.0, inclusive=False))


@pytest.mark.parametrize("dtype", FLOATS)
def test_hardtanh_grad_experimental_ut_shape(dtype):
    rng = np.random.default_rng(2)
    report, out, (result, grad) = run("HardtanhGrad", A910B, [(1, 64, 2, 64)] * 2, dtype,
                                      {"min_val": -2.0, "max_val": 1.0}, rng)
    assert_clean(report)  # 8192 elements: already a multiple of 512 bytes
    assert (report.blocks, report.tiles, report.buffer_num, report.max_tile_elems) == (8, 8, 1, 1024)
    assert same_bits(out, ref_hardtanh_grad(result, grad, -2.0, 1.0, inclusive=True))


def test_experimental_kernel_ut_fp32_128():
    rng = np.random.default_rng(42)
    report, out, (result, grad) = run("HardtanhGrad", A910B, [(128,)] * 2, D.FLOAT,
                                      {"min_val": -1.0, "max_val": 1.0}, rng)
    assert_clean(report)
    assert (report.blocks, report.tiles) == (1, 1)
    assert same_bits(out, ref_hardtanh_grad(result, grad, -1.0, 1.0, inclusive=True))


@pytest.mark.parametrize(("n", "dtype", "padded"), [(1000, D.FLOAT16, 1024), (100, D.FLOAT, 128),
                                                    (122881, D.FLOAT16, 123136), (1_000_003, D.BF16, 1_000_192)])
def test_experimental_padded_length_is_reported_not_fatal(n, dtype, padded):
    rng = np.random.default_rng(3)
    report, out, (result, grad) = run("HardtanhGrad", A910B, [(n,)] * 2, dtype, {}, rng)
    size = to_numpy(dtype).itemsize
    findings = {f.kind: (f.elements, f.bytes) for f in report.findings}
    extra = padded - n
    assert findings == {"over-read": (2 * extra, 2 * extra * size), "over-write": (extra, extra * size)}
    assert extra * size < 512
    assert report.covered_once and report.within_ub and not report.in_bounds
    assert same_bits(out, ref_hardtanh_grad(result, grad, -1.0, 1.0, inclusive=True))


def test_experimental_large_path_is_double_buffered_with_big_cores_first():
    op, _ = opdef.find("HardtanhGrad", A910B)
    launch = opdef.tile(op, A910B, [T((122881,), D.FLOAT16)] * 2, [T((122881,), D.FLOAT16)]).launch()
    assert launch.buffer_num == 2 and len(launch.blocks) == 11
    assert [b[0][0][0] for b in launch.blocks[7:10]] == [7 * 11264, 8 * 11264, 8 * 11264 + 11008]
    # two ping-pong input buffers of result+grad, two output buffers, three masks, one float temp
    assert launch.ub_alloc_bytes == 2 * 2 * 5632 * 2 + 2 * 5632 * 2 + 3 * 768 + 5632 * 4


@pytest.mark.parametrize("dtype", FLOATS)
def test_leaky_relu_grad_kernel_ut_and_tiling_ut_shapes(dtype):
    rng = np.random.default_rng(4)
    for shape in [(256,), (1, 64, 2, 64)]:
        report, out, (g, x) = run("LeakyReluGrad", A950, [shape] * 2, dtype, {"negative_slope": 0.01}, rng)
        assert_clean(report)
        assert same_bits(out, ref_leaky_relu_grad(g, x, 0.01))


@pytest.mark.parametrize("dtype", FLOATS)
def test_leaky_relu_ut_shape(dtype):
    rng = np.random.default_rng(5)
    report, out, (x,) = run("LeakyRelu", A950, [(1, 64, 2, 64)], dtype, {"negative_slope": 0.2}, rng)
    assert_clean(report)
    assert same_bits(out, ref_leaky_relu(x, 0.2))


# ---- boundary semantics the two HardtanhGrad kernels differ on ---------------------------------


def test_strict_and_inclusive_bounds_differ_only_at_the_bounds():
    result = np.array([-1.0, 1.0, -1.5, 0.5, np.nan, np.inf, -np.inf, -0.0], dtype=np.float32)
    grad = np.array([1, 2, 3, 4, 5, 6, 7, -8], dtype=np.float32)
    strict = simulate.hardtanh_grad_tile(-1.0, 1.0, inclusive=False)(result, grad)
    inclusive = simulate.hardtanh_grad_tile(-1.0, 1.0, inclusive=True)(result, grad)
    assert same_bits(strict, np.array([0, 0, 0, 4, 5, 0, 0, -8], dtype=np.float32))
    assert same_bits(inclusive, np.array([1, 2, 0, 4, 5, 0, 0, -8], dtype=np.float32))
    inf_bounds = simulate.hardtanh_grad_tile(-np.inf, np.inf, inclusive=True)(result, grad)
    assert same_bits(inf_bounds, grad)  # inclusive: +-inf pass when the bound is that infinity
    assert not np.signbit(strict[0])   # the zero is +0.0 whatever grad's sign


def test_check_op_explains_the_experimental_difference():
    op, _ = opdef.find("HardtanhGrad", A910B)
    ins, outs = [T((3000,), D.FLOAT)] * 2, [T((3000,), D.FLOAT)]
    check = simulate.check_op(opdef.tile(op, A910B, ins, outs), op, ins, outs, {}, seed=7)
    assert check.ok and check.reference_mismatches == 0
    assert check.torch_differences > 0 and "strict bounds" in check.torch_note
    assert check.semantics.startswith("inclusive bounds")
    main, _ = opdef.find("HardtanhGrad", A950)
    check = simulate.check_op(opdef.tile(main, A950, ins, outs), main, ins, outs, {}, seed=7)
    assert check.ok and check.torch_differences is None and check.semantics.startswith("strict bounds")


@pytest.mark.parametrize("soc, variant", [(A910B, "experimental"), (A950, "main")])
def test_a_nan_bound_is_compared_with_pytorch_not_with_strict_bounds(soc, variant):
    """DECISIONS 8: a NaN bound passes grad only at NaN results in both kernels; PyTorch zeroes only
    where result <= min or result >= max, so it passes grad on the NaN bound's side."""
    op, _ = opdef.find("HardtanhGrad", soc)
    assert op.variant == variant
    formula = simulate.formula_for(op, {"min_val": float("nan")})
    result = np.array([-2.0, -1.0, 0.5, 1.0, 2.0, np.nan], dtype=np.float32)
    grad = np.array([1, 2, 3, 4, 5, 6], dtype=np.float32)
    assert same_bits(formula.reference(result, grad), np.array([0, 0, 0, 0, 0, 6], dtype=np.float32))
    assert same_bits(formula.torch_reference(result, grad), np.array([1, 2, 3, 0, 0, 6], dtype=np.float32))
    assert "NaN bound" in formula.torch_note and "DECISIONS 8" in formula.torch_note
    ins, outs = [T((3000,), D.FLOAT)] * 2, [T((3000,), D.FLOAT)]
    check = simulate.check_op(opdef.tile(op, soc, ins, outs, {"min_val": float("nan")}), op, ins, outs,
                              {"min_val": float("nan")}, seed=7)
    assert check.ok and check.torch_differences > 1000  # about half the uniform(-2, 2) data is below 1


def test_the_pytorch_form_equals_strict_bounds_for_ordinary_bounds():
    op, _ = opdef.find("HardtanhGrad", A910B)
    formula = simulate.formula_for(op, {"min_val": -1.0, "max_val": 1.0})
    result = np.array([-2.0, -1.0, -0.5, 1.0, 2.0, np.nan, np.inf], dtype=np.float32)
    grad = np.arange(1, 8, dtype=np.float32)
    strict = ref_hardtanh_grad(result, grad, -1.0, 1.0, inclusive=False)
    assert same_bits(formula.torch_reference(result, grad), strict)
    assert "NaN bound" not in formula.torch_note


# ---- the checks themselves, on broken launches --------------------------------------------------


def launch_1d(blocks, n=8, buffer_elems=4, buffer_num=2, alloc=64, ub=64):
    return t.Launch((n,), ((1,),), (n,), n, blocks, buffer_elems, buffer_num, alloc, ub)


def copy_tile(x):
    return x.copy()


def test_broken_launches_are_reported():
    x = np.arange(8, dtype=np.float32)
    gap_and_overlap = ((((0, 4),), ((2, 6),)),)  # one block, two overlapping tiles, 6..8 missed
    report = simulate.simulate(launch_1d(gap_and_overlap), [x], copy_tile, np.float32)
    assert {f.kind: f.elements for f in report.findings} == {"unwritten": 2, "double-write": 2}
    too_big = ((((0, 8),),),)
    report = simulate.simulate(launch_1d(too_big, alloc=128), [x], copy_tile, np.float32)
    assert {f.kind: f.elements for f in report.findings} == {"ub-overflow": 0, "tile-too-big": 8, "unwritten": 8}
    assert not report.within_ub and not report.covered_once


def test_a_tile_writing_one_element_twice_is_a_double_write():
    """A box whose inner range runs past its dim wraps into the next row of the flat output: box
    [0, 2) x [0, 4) over out_dims (2, 3) writes offsets 0 1 2 3 | 3 4 5 6, element 3 twice within
    the one tile. The write counts were taken with ``writes[idx] += 1``, which counts a repeated
    index once, so the tile's second write went unreported and the launch passed covered_once."""
    x = np.arange(6, dtype=np.float32)
    launch = t.Launch((2, 3), ((3, 1),), (6,), 6, (((((0, 2), (0, 4)),),)), 8, 1, 64, 64)
    report = simulate.simulate(launch, [x], copy_tile, np.float32)
    assert {f.kind: (f.elements, f.bytes) for f in report.findings} == {
        "over-read": (1, 4), "over-write": (1, 4), "double-write": (1, 4)}
    assert not report.covered_once


def test_a_tile_starting_before_its_dim_is_out_of_bounds_and_may_write_twice():
    """A box's negative start named offsets before the tensor, which NumPy's indexing took from
    its end: box [-2, 4) over 6 elements read and wrote elements 4 and 5 as its first two and
    reported a double-write there and no bounds finding; box [0, 2) x [-1, 3) over (2, 3) (offsets
    -1 0 1 2 | 2 3 4 5) wrote element 2 twice and element 5 for offset -1, and reported nothing.
    An offset below 0 is now outside the tensor (over-read / over-write), and a negative start
    of an inner range, which runs back into the row before, is counted write by write."""
    x = np.arange(6, dtype=np.float32)
    before = t.Launch((6,), ((1,),), (6,), 6, ((((-2, 4),), ((4, 6),)),), 8, 1, 64, 64)
    report = simulate.simulate(before, [x], copy_tile, np.float32)
    assert {f.kind: (f.elements, f.bytes) for f in report.findings} == {"over-read": (2, 8), "over-write": (2, 8)}
    assert report.covered_once and not report.in_bounds and np.array_equal(report.output, x)
    back = t.Launch((2, 3), ((3, 1),), (6,), 6, (((((0, 2), (-1, 3)),),)), 8, 1, 64, 64)
    report = simulate.simulate(back, [x], copy_tile, np.float32)
    assert {f.kind: (f.elements, f.bytes) for f in report.findings} == {
        "over-read": (1, 4), "over-write": (1, 4), "double-write": (1, 4)}
    assert [f.detail for f in report.findings] == [
        ("input elements read outside their tensor (before its start or past its end); first at block 0 tile 0 "
         "[(0, 2), (-1, 3)], input 0"),
        "output elements written outside the tensor (before its start or past its end); first at block 0 tile 0",
        "output elements written more than once; first at element 2"]


def test_single_and_double_buffering_give_the_same_result():
    x = np.arange(10, dtype=np.float32)
    blocks = ((((0, 3),), ((3, 6),), ((6, 9),), ((9, 10),)),)
    for buffer_num in (1, 2):
        report = simulate.simulate(launch_1d(blocks, n=10, buffer_elems=3, buffer_num=buffer_num), [x],
                                   lambda v: v * 2, np.float32)
        assert report.findings == () and np.array_equal(report.output, x * 2)


def test_tile_fn_is_pluggable_and_checked():
    op, _ = opdef.find("LeakyRelu", A950)
    ins = [T((100,), D.FLOAT16)]
    result = opdef.tile(op, A950, ins, ins, {"negative_slope": 0.5})
    x = np.linspace(-1, 1, 100).astype(np.float16)
    report = simulate.simulate(result.launch(), [x], lambda v: np.abs(v), np.float16)
    assert np.array_equal(report.output, np.abs(x))
    with pytest.raises(TypeError, match=r"must return a \(100,\) float16 array"):
        simulate.simulate(result.launch(), [x], lambda v: v.astype(np.float32), np.float16)


@pytest.mark.parametrize(("grad", "features", "out"), [
    ((1,), (1,), (8,)),          # (a breaker) the one-dim schedule: both inputs scalar-flagged
    ((1, 4), (1, 4), (3, 4)),    # the general schedule: dim 0 read with stride 0 by both
    ((), (2, 1), (2, 5)),
])
def test_check_op_broadcasts_the_reference_to_an_output_larger_than_the_inputs(grad, features, out):
    # op_host's DimensionCollapse takes an output beyond broadcast(inputs) (an input dim of 1 spans
    # the output's dim), so the kernel fills it; check_op compares it with the broadcast reference
    op, _ = opdef.find("LeakyReluGrad", A950)
    ins, outs = [T(grad, D.FLOAT), T(features, D.FLOAT)], [T(out, D.FLOAT)]
    g = np.linspace(-1.5, 1.5, int(np.prod(grad))).astype(np.float32).reshape(grad)
    x = np.linspace(1.0, -1.0, int(np.prod(features))).astype(np.float32).reshape(features)
    check = simulate.check_op(opdef.tile(op, A950, ins, outs, {"negative_slope": 0.1}), op, ins, outs,
                              {"negative_slope": 0.1}, arrays=[g, x])
    assert check.ok and check.reference_mismatches == 0 and check.sim.findings == ()
    assert same_bits(check.sim.output.reshape(out), np.broadcast_to(ref_leaky_relu_grad(g, x, 0.1), out))


# ---- property tests: random shapes, dtypes and profiles ------------------------------------------

shapes_1_to_4 = st.lists(st.integers(1, 12), min_size=0, max_size=4).map(tuple)
profiles_950 = st.builds(profile_950, st.integers(1, 64), st.integers(12 * 1024, 256 * 1024))
bounds = st.tuples(st.sampled_from([-2.0, -1.0, -0.5, 0.0, 0.3]), st.sampled_from([-0.5, 0.0, 1.0, 1.5, 2.0]))
slopes = st.sampled_from([0.0, 0.01, -0.3, 2.5, 1e-3, -7.0])


@settings(max_examples=60, deadline=None)
@given(shape=shapes_1_to_4, scale=st.integers(1, 400), dtype=st.sampled_from(FLOATS), soc=profiles_950,
       lohi=bounds, seed=st.integers(0, 2**16))
def test_property_hardtanh_grad_arch35(shape, scale, dtype, soc, lohi, seed):
    shape = (*shape, scale)
    report, out, (result, grad) = run("HardtanhGrad", soc, [shape] * 2, dtype,
                                      {"min_val": lohi[0], "max_val": lohi[1]}, np.random.default_rng(seed))
    assert_clean(report)
    assert same_bits(out, ref_hardtanh_grad(result, grad, *lohi, inclusive=False))


@settings(max_examples=60, deadline=None)
@given(shape=shapes_1_to_4, dtype=st.sampled_from(FLOATS), soc=profiles_950, slope=slopes, seed=st.integers(0, 2**16))
def test_property_leaky_relu(shape, dtype, soc, slope, seed):
    report, out, (x,) = run("LeakyRelu", soc, [shape], dtype, {"negative_slope": slope}, np.random.default_rng(seed))
    assert_clean(report)
    assert same_bits(out, ref_leaky_relu(x, slope))


@st.composite
def broadcast_pair(draw):
    out = draw(st.lists(st.one_of(st.integers(1, 9), st.sampled_from([16, 32])), min_size=1, max_size=5))
    pair = []
    for _ in range(2):
        shape = [d if draw(st.booleans()) else 1 for d in out]
        pair.append(tuple(shape[draw(st.integers(0, len(shape))):]))  # leading dims may be dropped
    return pair


@settings(max_examples=80, deadline=None)
@given(shapes=broadcast_pair(), dtype=st.sampled_from(FLOATS), soc=profiles_950, slope=slopes,
       seed=st.integers(0, 2**16))
def test_property_leaky_relu_grad_broadcast(shapes, dtype, soc, slope, seed):
    report, out, (g, x) = run("LeakyReluGrad", soc, shapes, dtype, {"negative_slope": slope},
                              np.random.default_rng(seed))
    assert_clean(report)
    assert same_bits(out, ref_leaky_relu_grad(g, x, slope))


@settings(max_examples=40, deadline=None)
@given(n=st.one_of(st.integers(1, 5000), st.integers(122_000, 140_000)), dtype=st.sampled_from(FLOATS),
       cores=st.integers(1, 48), lohi=bounds, seed=st.integers(0, 2**16))
def test_property_hardtanh_grad_experimental(n, dtype, cores, lohi, seed):
    soc = dataclasses.replace(A910B, vector_core_num=cores)
    report, out, (result, grad) = run("HardtanhGrad", soc, [(n,)] * 2, dtype,
                                      {"min_val": lohi[0], "max_val": lohi[1]}, np.random.default_rng(seed))
    assert report.covered_once and report.within_ub
    padded = t.round_up(n, 512 // to_numpy(dtype).itemsize)
    assert report.in_bounds == (padded == n)
    assert same_bits(out, ref_hardtanh_grad(result, grad, *lohi, inclusive=True))


@pytest.mark.parametrize(("shapes", "dtype", "mode"), [
    ([(2, 1, 16), (2, 8, 16)], D.FLOAT, 1),
    ([(2, 1, 16), (2, 8, 16)], D.FLOAT16, 103),
    ([(2, 1, 3, 1, 5, 1, 16), (2, 4, 3, 4, 5, 4, 16)], D.FLOAT16, 109),
    ([(3, 1, 5, 1, 7, 1, 2), (3, 4, 5, 6, 7, 8, 2)], D.FLOAT, 2),
    ([(1, 8, 4096), (2, 8, 4096)], D.FLOAT, 101),
    ([(2, 1, 64), (2, 100, 64)], D.BF16, 102),
])
def test_every_general_schedule_walk_covers_the_output(shapes, dtype, mode):
    slope = -0.25
    report, out, (g, x) = run("LeakyReluGrad", A950, shapes, dtype, {"negative_slope": slope},
                              np.random.default_rng(mode))
    op, _ = opdef.find("LeakyReluGrad", A950)
    result = opdef.tile(op, A950, [T(s, dtype) for s in shapes], [T(out.shape, dtype)], {"negative_slope": slope})
    assert result.template == f"arch35 broadcast (schMode {mode})"
    assert_clean(report)
    assert report.tiles > 1 or mode in (1, 103)
    assert same_bits(out, ref_leaky_relu_grad(g, x, slope))


def test_bf16_formula_rounds_once_to_nearest_even():
    # 1 + 2^-8 (halfway between two bf16 values) times 1.0 stays in float32, then rounds to even
    g = np.array([1.0, 1.0], dtype=ml_dtypes.bfloat16)
    x = np.array([-1.0, 1.0], dtype=ml_dtypes.bfloat16)
    out = simulate.leaky_relu_grad_tile(1.0 + 2.0**-8)(g, x)
    assert out.tolist() == [1.0, 1.0] and out.dtype == ml_dtypes.bfloat16


def test_check_op_says_which_tensors_a_mismatched_910b_launch_overruns_or_leaves_short():
    """(A breaker) the experimental tiling walks result's padded length whatever grad and y hold;
    with a larger grad and y, check_op said the kernel 'would read and write past the smaller
    ones', though none is smaller: it leaves the end of grad unread and of y unwritten."""
    op, _ = opdef.find("HardtanhGrad", A910B)
    result, big = T((4, 4), D.FLOAT), T((1000,), D.FLOAT)
    tiling = opdef.tile(op, A910B, [result, big], [big], {})
    with pytest.raises(simulate.AclnnError) as err:
        simulate.check_op(tiling, op, [result, big], [big], {})
    assert err.value.message == (
        "HardtanhGrad: the launch walks [16, 16] input and 16 output elements but the tensors hold [16, 1000] and "
        "1000: on a device the kernel would read past the end of result and leave the end of grad unread and leave "
        "the end of y unwritten (op_host does not check that the shapes agree); the simulator runs launches within "
        "their tensors only")
    small = T((1,), D.FLOAT)
    tiling = opdef.tile(op, A910B, [result, small], [small], {})
    with pytest.raises(simulate.AclnnError) as err:
        simulate.check_op(tiling, op, [result, small], [small], {})
    assert ": on a device the kernel would read past the end of result and grad and write past the end of y (op_host" in \
        err.value.message


def test_check_op_judges_overrun_or_short_by_how_far_the_launch_reaches():
    """(A breaker) check_op compared each tensor with the element count the launch assumes (result's
    N = 3) instead of how far its tiles reach (the padded L = 128): a grad and y of 4 elements
    were said to be left short, where the kernel reads and writes 124 elements past their end,
    as the tiling's own note says."""
    op, _ = opdef.find("HardtanhGrad", A910B)
    result, four = T((3,), D.FLOAT), T((4,), D.FLOAT)
    tiling = opdef.tile(op, A910B, [result, four], [four], {})
    assert "past result 125, grad 124, y 124;" in tiling.notes[1]
    with pytest.raises(simulate.AclnnError) as err:
        simulate.check_op(tiling, op, [result, four], [four], {})
    assert (": on a device the kernel would read past the end of result and grad and write past the end of y "
            "(op_host does not check") in err.value.message


@pytest.mark.parametrize("dtypes", [(D.INT8, D.INT32, D.INT32), (D.FLOAT16, D.FLOAT16, D.FLOAT),
                                    (D.FLOAT6_E2M3, D.FLOAT16, D.FLOAT16), (D.UINT1, D.INT64, D.INT64)])
def test_check_op_refuses_dtypes_no_binary_row_has(dtypes):
    """(A breaker) the experimental 910B tiling checks no dtypes, and check_op then raised
    TypeError ('tile_fn must return a (128,) float32 array, got int32') or KeyError (a dtype
    NumPy has no type for): opsnn tiling refuses to simulate these, the Python API did not.
    check_op now raises AclnnError 561003 first: ops-nn builds no kernel for them."""
    op, _ = opdef.find("HardtanhGrad", A910B)
    ins, outs = [T((3, 7), dtypes[0]), T((3, 7), dtypes[1])], [T((3, 7), dtypes[2])]
    tiling = opdef.tile(op, A910B, ins, outs, {})
    with pytest.raises(simulate.AclnnError) as err:
        simulate.check_op(tiling, op, ins, outs, {})
    names = ", ".join(d.name for d in dtypes)
    assert (err.value.status, err.value.message) == (561003, (
        f"HardtanhGrad: no binary row of the def matches {names}: ops-nn builds no kernel for these dtypes, so "
        "there is no launch to simulate"))
