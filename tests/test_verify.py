"""``opsnn verify``: parsing of CANN's case files, input generation, and small end-to-end runs
through the acl runtime (synthetic files in tmp_path; the real files only when ../shared exists)."""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import signal
import subprocess
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from opsnn import cli, golden_files, results
from opsnn.verify import command
from opsnn.verify.casefiles import load_cases
from opsnn.verify.cases import Case, ScalarSpec, Tolerance, Values, case_filter
from opsnn.verify.comparison import compare, verdict
from opsnn.verify.fields import _broadcast
from opsnn.verify.inputs import SPECIAL_FRACTION, case_rng, generate, pick_scalar
from opsnn.verify.runtime import Session

CASES = Path(__file__).resolve().parents[1] / ".." / "shared" / "cases" / "ops-nn"
needs_cases = pytest.mark.skipif(not CASES.is_dir(), reason="../shared/cases is not present")
BF16 = np.dtype(ml_dtypes.bfloat16)
DEEP_JSON = "[" * 100_000 + "]" * 100_000  # (nested past the recursion limit of Python's JSON reader)

CSV_HEADER = ("testcase_name,op_name,input_dtypes,input_ori_shapes,output_ori_shapes,input_ori_formats,"
              "output_ori_formats,attributes,input_shapes,output_dtypes,output_shapes,input_formats,"
              "output_formats,input_data_ranges,precision_tolerances,absolute_precision,soc_series")


def csv_row(name, op, dtype, shape, attrs, ranges, n_inputs=2) -> str:
    dtypes = repr((dtype,) * n_inputs)
    shapes = repr((shape,) * n_inputs)
    formats = repr(("ND",) * n_inputs)
    return (f'{name},{op},"{dtypes}","{shapes}","({shape!r},)","{formats}","(\'ND\',)","{attrs}",'
            f'"{shapes}","(\'{dtype}\',)","({shape!r},)","{formats}","(\'ND\',)","{ranges}",,1e-08,')


def write_csv(tmp_path: Path, *rows: str) -> Path:
    path = tmp_path / "ttk_kernel_test_st.csv"
    path.write_text("\n".join((CSV_HEADER,) + rows) + "\n")
    return path


def json_case(index, dtype, shape, grad, self_, slope, slope_dtype="fp32", self_is_result=False) -> dict:
    def tensor(name, values):
        return {"name": name, "type": "tensor", "required": True, "dtype": dtype, "shape": list(shape),
                "range_values": values, "backward": False, "align_32B": None}
    return {"id": index, "name": "torch.ops.aten.leaky_relu_backward", "aclnn_name": "aclnnLeakyReluBackward",
            "api_type": "aclnn_leaky_relu_backward", "standard": {"acc": "single_bm", "perf": "not_key"},
            "inputs": [tensor("gradOutput", grad), tensor("x", self_),
                       {"name": "a", "type": "scalar", "required": True, "dtype": slope_dtype, "shape": None,
                        "range_values": slope, "backward": False, "align_32B": None},
                       {"name": "selfIsResult", "type": "attr", "required": True, "dtype": "bool", "shape": None,
                        "range_values": self_is_result, "backward": False, "align_32B": None}]}


def write_json(tmp_path: Path, *cases: dict) -> Path:
    path = tmp_path / "atk_aclnnLeakyReluBackward.json"
    path.write_text(json.dumps(list(cases)))
    return path


def run_verify(*argv) -> int:
    parser = argparse.ArgumentParser()
    command.add_arguments(parser)
    return command.run(parser.parse_args([str(a) for a in argv]))


def test_a_json_case_is_named_by_its_id_as_written_or_else_its_index(tmp_path):
    """``aclnn_name`` + "_" + the id as the file writes it; a null or missing id is the case's index
    (a null one had named the case aclnnLeakyReluBackward_None, a boolean one True)."""
    ids = [7, None, "a b", [1, 2], 2.5, True, "MISSING"]
    cases = [json_case(i, "fp32", (2,), [-1, 1], [-1, 1], 1) for i in ids]
    for case, case_id in zip(cases, ids):
        if case_id == "MISSING":
            del case["id"]
        else:
            case["id"] = case_id
    names = [c.name for c in load_cases(write_json(tmp_path, *cases))]
    assert names == [f"aclnnLeakyReluBackward_{n}" for n in ("7", "1", "a b", "[1, 2]", "2.5", "true", "6")]

# ---- parsing the real files ---------------------------------------------------------------------

@needs_cases
def test_parse_leaky_relu_grad_csv():
    cases = load_cases(CASES / "ttk_kernel_leaky_relu_grad_st.csv")
    assert len(cases) == 5 and {c.op for c in cases} == {"LeakyReluBackward"}
    first = cases[0]
    assert [t.role for t in first.tensors] == ["gradOutput", "self"]  # gradients, features
    assert first.scalars[0].role == "negativeSlope" and first.scalars[0].values.low == 458.9240251987642
    assert first.scalars[0].dtype == np.float32 and dict(first.flags) == {"selfIsResult": False}
    assert first.tensors[0].values.high == 3.4028235e38
    special = cases[1].tensors[0].values
    assert (special.low, special.high) == (-1, 1) and len(special.specials) == 3
    assert math.isnan(special.specials[0]) and math.copysign(1, special.specials[1]) == -1
    assert special.specials[2] == math.inf
    assert cases[3].tensors[0].format == "NCHW" and cases[0].tolerance.atol == 1e-8


@needs_cases
def test_parse_hardtanh_grad_csv_maps_result_to_self():
    """HardtanhGrad takes (result, grad): result is aclnn self, grad is gradOutput (spec §7.1)."""
    cases = load_cases(CASES / "ttk_kernel_hardtanh_grad_st.csv")
    assert len(cases) == 5 and {c.op for c in cases} == {"HardtanhBackward"}
    assert [t.role for t in cases[0].tensors] == ["self", "gradOutput"]
    bounds = {s.role: s.values.low for s in cases[1].scalars}
    assert bounds == {"min": 0.0, "max": -975.7519701184842}  # min > max on purpose
    assert cases[4].tensors[0].dtype == BF16 and cases[4].numel == 16 * 192 * 64 * 64
    assert (cases[4].tensors[0].values.low, cases[4].tensors[0].values.high) == (-10, 10)
    assert all(command.bf16_refusal(c, "Ascend910") for c in cases if c.tensors[0].dtype == BF16)


@needs_cases
def test_parse_leaky_relu_backward_json():
    cases = load_cases(CASES / "atk_aclnnLeakyReluBackward.json")
    assert len(cases) == 250
    first = cases[0]
    grad, self_ = first.tensors
    assert (grad.role, self_.role) == ("gradOutput", "self")
    assert grad.values.fill and math.isnan(grad.values.low) and self_.values == Values.constant(8)
    assert first.scalars[0].dtype == np.int32 and first.scalars[0].values.low == 1
    assert dict(first.flags) == {"selfIsResult": True} and first.tolerance.source == "single_bm"
    odd = next(c for c in cases if c.index == 29)  # selfIsResult given as ["inf"]
    assert dict(odd.flags)["selfIsResult"] is True
    assert odd.scalars[0].values == Values(0, 1)
    assert max(c.numel for c in cases) == 848_601_600


@needs_cases
@pytest.mark.parametrize("name, op, count", [
    ("atk_aclnnLeakyRelu.json", "LeakyRelu", 201), ("atk_aclnnHardtanh.json", "Hardtanh", 201),
    ("ttk_kernel_leaky_relu_st.csv", "LeakyRelu", 5), ("ttk_kernel_clip_by_value_v2_st.csv", "Hardtanh", 100),
])
def test_parse_forward_files(name, op, count):
    cases = load_cases(CASES / name)
    assert len(cases) == count and {c.op for c in cases} == {op}
    if name.startswith("ttk_kernel_clip"):
        assert any(c.unsupported for c in cases) and not all(c.unsupported for c in cases)
    if name == "atk_aclnnHardtanh.json":
        assert all(c.tolerance.rtol == 0 for c in cases)  # md5: bit-exact


# ---- input generation ---------------------------------------------------------------------------

def test_generate_honours_range_and_specials():
    values = Values(-1, 1, (math.nan, -0.0, math.inf))
    data = generate(values, np.float16, (40, 50), np.random.default_rng(0)).astype(np.float64)
    finite = data[np.isfinite(data)]
    assert finite.min() >= -1 and finite.max() <= 1 and data.shape == (40, 50)
    per_special = round(data.size * SPECIAL_FRACTION / 3)
    assert np.isnan(data).sum() >= per_special and np.isposinf(data).sum() >= per_special
    assert ((data == 0) & np.signbit(data)).sum() >= per_special


def test_generate_every_special_appears_in_small_tensors():
    data = generate(Values(-1, 1, (math.nan, -0.0, math.inf)), BF16, (3,), np.random.default_rng(1))
    as64 = data.astype(np.float64)
    assert np.isnan(as64).any() and np.isinf(as64).any() and (np.signbit(as64) & (as64 == 0)).any()


def test_generate_fill_integer_and_scalar():
    rng = np.random.default_rng(2)
    assert np.isneginf(generate(Values.constant(-math.inf), np.float32, (4,), rng)).all()
    ints = generate(Values(0, 5), np.uint8, (1000,), rng)
    assert ints.dtype == np.uint8 and set(np.unique(ints)) == set(range(6))
    slope = pick_scalar(ScalarSpec("negativeSlope", BF16, Values(0, 1)), rng)
    assert slope.dtype == BF16 and 0 <= float(slope) <= 1


def test_generate_ranges_wider_than_a_float_or_the_integer_dtype():
    """A breaker's: (-1e308, 1e308), whose width overflows float64, and an int32 tensor with a
    range beyond int32 were 'internal error' case failures. Now uniform over the range, and the
    integers over what the dtype holds of it (the operator then says what it takes)."""
    rng = np.random.default_rng(3)
    wide = generate(Values(-1e308, 1e308), np.float64, (1000,), rng)
    assert np.isfinite(wide).all() and (wide < -1e307).any() and (wide > 1e307).any()
    assert np.abs(wide).max() <= 1e308
    ints = generate(Values(-1e10, 1e10), np.int32, (1000,), rng)
    assert ints.dtype == np.int32 and ints.min() < -2**30 and ints.max() > 2**30
    small = generate(Values(-3, 3), np.int8, (1000,), rng)  # inside the dtype: the range as given
    assert set(np.unique(small)) == set(range(-3, 4))


def test_integer_inputs_get_their_special_values(tmp_path, capsys):
    """A breaker: an int32 ClipByValueV2 row's (-5, 5, 100, -100) never held 100 or -100, and a
    nan special of an int input was dropped silently; now those an int holds are injected, the
    others a usage error naming the row and value."""
    rng = np.random.default_rng(0)
    data = generate(Values(-5, 5, (100, -100, 2**62 + 1)), np.int64, (40,), rng)
    assert {100, -100, 2**62 + 1} <= set(data.tolist()) and ((data >= -5) & (data <= 5)).sum() == 37
    row = ('int_specials,clip_by_value_v2,"(\'int32\', \'int32\', \'int32\')","((4, 8), (1,), (1,))",,,,{{}},'
           '"((4, 8), (1,), (1,))","(\'int32\',)",ELEWISE,,,"((-5, 5, {}), (-3, -3), (3, 3))",,,')
    ok = write_csv(tmp_path, row.format("100, -100"))
    assert run_verify(ok, "--dump", tmp_path / "d") == 0
    dumped = np.fromfile(next((tmp_path / "d").glob("*/0000_*")) / "self.bin", np.int32)
    assert {100, -100} <= set(dumped.tolist())
    for special in ("nan", "2147483648", "2.5"):
        assert cli.main(["verify", str(write_csv(tmp_path, row.format(special)))]) == 2
        assert (f"line 2 (case 0): self is int32 (integers -2147483648 to 2147483647), which cannot hold its special value "
                f"{float(special) if special != '2147483648' else special}") in capsys.readouterr().err


def test_case_data_depend_on_seed_and_case_only(tmp_path):
    path = write_csv(tmp_path, *(csv_row(f"c{i}", "leaky_relu_grad", "float32", (8,), "{}", "((-1, 1),)")
                                 for i in range(2)))
    a, b = load_cases(path)
    draw = lambda case, seed: generate(case.tensors[0].values, np.float32, (8,), case_rng(seed, case))  # noqa: E731
    assert np.array_equal(draw(a, 0), draw(a, 0))
    assert not np.array_equal(draw(a, 0), draw(b, 0)) and not np.array_equal(draw(a, 0), draw(a, 1))


def _named_case(index: int, name: str) -> Case:
    """A case of that index and name, for --cases' selection, which reads nothing else."""
    return Case("f", index, name, "LeakyReluBackward", (), (), (), np.dtype("f4"), (1,), "ND", Tolerance(0, 0, "exact"))


def test_case_filter():
    keep = case_filter("0-2,7,fuzz_4")
    assert [keep(_named_case(i, "x")) for i in (0, 2, 3, 7)] == [True, True, False, True]
    assert keep(_named_case(99, "leaky_relu_grad_fuzz_44")) and not keep(_named_case(99, "other"))


def test_a_case_name_given_whole_selects_that_case_alone():
    """--cases LeakyRelu_1 ran 111 cases (_1, _10-_19, _100-_199): a word that is a case's whole
    name (any case) selects that case; a word that is no case's name still matches as a substring."""
    cases = [_named_case(i, f"LeakyRelu_{i}") for i in range(120)]
    keep = case_filter("leakyrelu_1,relu_11").against(cases)
    assert [c.index for c in cases if keep(c)] == [1, 11, 110, 111, 112, 113, 114, 115, 116, 117, 118, 119]
    keep = case_filter("LeakyRelu_1").against(cases)
    assert [c.index for c in cases if keep(c)] == [1]


def test_an_index_or_range_selects_by_index_where_a_case_is_named_as_the_number():
    """(A reviewer's) a file numbering its cases from 1 in their names ("1" to "5", indexes 0 to
    4): --cases 1 ran the case named "1", index 0, as the whole-name rule took every item for a
    name; an index and a range select by index, as --help says, the whole-name rule being for
    words alone."""
    cases = [_named_case(i, str(i + 1)) for i in range(5)]
    for spec, indexes in (("1", [1]), ("3-4", [3, 4]), ("0, 2", [0, 2])):
        keep = case_filter(spec).against(cases)
        assert [c.index for c in cases if keep(c)] == indexes, spec


def test_verify_runs_the_case_named_whole_alone(tmp_path):
    """(a new user) verify FILE --cases NAME ran every case whose name holds NAME."""
    row = lambda name: csv_row(name, "hardtanh_grad", "float32", (4,), "{'min_val': -0.5, 'max_val': 0.8}",
                               "((-1, 1),)")
    path, out = write_csv(tmp_path, row("ht_1"), row("ht_10"), row("ht_11")), tmp_path / "r.json"
    assert run_verify(path, "--cases", "ht_1", "--json", out) == 0
    assert [case["name"] for case in json.loads(out.read_text())["cases"]] == ["ht_1"]
    assert run_verify(path, "--cases", "ht_1,t_11", "--json", out) == 0
    assert [case["name"] for case in json.loads(out.read_text())["cases"]] == ["ht_1", "ht_11"]


@pytest.mark.parametrize("spec, words", [
    ("3-1", ["reversed range '3-1'", "1-3"]),
    ("3-", ["bad item '3-'"]),
    ("-1", ["bad item '-1'"]),
    ("1-2-3", ["bad item '1-2-3'"]),
    (",", ["expected indexes", "got ','"]),
])
def test_case_filter_refuses_malformed_selections(spec, words):
    with pytest.raises(argparse.ArgumentTypeError) as exc:
        case_filter(spec)
    for word in words:
        assert word in str(exc.value)


def test_case_selection_names_the_items_that_match_nothing():
    cases = [_named_case(i, f"fuzz_{i}") for i in range(5)]
    case_filter("0-4,FUZZ_3").check_matches(cases)  # every item matches: no error
    with pytest.raises(ValueError) as exc:
        case_filter("1,99,nope").check_matches(cases)
    assert str(exc.value) == ("--cases '1,99,nope': '99', 'nope' match no case; expected indexes 0-4 or a "
                              "substring of a case name such as 'fuzz_0'")


def test_a_range_written_with_a_typographic_dash_is_told_so():
    """(A breaker) --cases 0\u20132, a range pasted from a page that set its dash as an en dash, is
    read as a name substring and matched no case, the refusal's "expected indexes 0-4" looking
    the same by eye: it names the dash and the range to write, as the other options' dash hints do."""
    cases = [_named_case(i, f"fuzz_{i}") for i in range(5)]
    with pytest.raises(ValueError) as exc:
        case_filter("1,0\u20132, 3 \u2212 4").check_matches(cases)
    assert str(exc.value) == ("--cases '1,0\u20132, 3 \u2212 4': '0\u20132', '3 \u2212 4' match no case; expected "
                              "indexes 0-4 or a substring of a case name such as 'fuzz_0' ('0\u20132' has '\u2013' "
                              "(U+2013) for its dash, not '-': write 0-2 for the range)")
    named = [_named_case(0, "fuzz_0\u20132")]  # a word that is in a name still selects it
    case_filter("0\u20132").check_matches(named)


def test_compare_nan_signed_zero_and_tolerance():
    golden = np.array([np.nan, 0.0, 1.0, np.inf], np.float32)
    exact = compare(golden.copy(), golden, Tolerance(0, 0, "exact"))
    assert exact.bit_exact and exact.mismatches == 0
    actual = np.array([np.nan, -0.0, 1.0 + 2**-20, np.inf], np.float32)
    near = compare(actual, golden, Tolerance(1e-5, 0, "t"))
    assert not near.bit_exact and near.mismatches == 0 and near.max_rel == pytest.approx(2**-20, rel=0.1)
    assert compare(actual, golden, Tolerance(0, 0, "exact")).mismatches == 2  # -0.0 too: bit-exact
    # a number against NaN or inf fails whatever the tolerance; 0 against 1 is inside atol 1
    assert compare(np.array([1.0, 0, 0, 0], np.float32), golden, Tolerance(1, 1, "t")).mismatches == 2


@pytest.mark.parametrize("source", ["md5", "exact"])
def test_a_bit_exact_standard_fails_every_element_whose_bits_differ(source):
    # (a breaker: -0.0 against 0.0, and an int64 off by one at 2**53, passed "md5" through float64)
    exact = Tolerance(0.0, 0.0, source)
    golden = np.array([0.0, 1.0, np.nan, np.nan], np.float32)
    actual = np.array([-0.0, 1.0, -np.nan, np.nan], np.float32)
    actual[3:] = np.array([0x7FC00001], np.uint32).view(np.float32)  # another NaN payload: equal
    comparison = compare(actual, golden, exact)
    assert comparison.outside.tolist() == [True, False, False, False]
    assert verdict(comparison, exact, lambda: None) == (
        "FAIL", f"1 of 4 elements differ from the golden's bits ({source}: bit-exact, a NaN equal to any NaN)")
    big = np.array([2**53, -(2**63), 2**63 - 1], np.int64)
    off = compare(big + np.array([1, 0, 0], np.int64), big, exact)
    assert (off.mismatches, off.max_abs) == (1, 1.0)
    # a threshold standard passes -0.0 (|a - g| is 0), and a documented decision is still DOC
    assert compare(actual, golden, Tolerance(0.0, 0.0, "precision_tolerances")).mismatches == 0
    assert verdict(comparison, exact, lambda: "DECISIONS 8: ...") == ("DOC", "DECISIONS 8: ...")


def test_integers_are_compared_as_integers_under_a_tolerance():
    # (through float64, 2**53 + 3 against 2**53 + 1 had differed by 4, and 2**53 + 1 by 0 from 2**53)
    golden = np.array([2**53 + 1, -(2**63), 2**63 - 1, 0], np.int64)
    actual = np.array([2**53 + 3, 2**63 - 1, 2**63 - 1, 3], np.int64)
    comparison = compare(actual, golden, Tolerance(0.0, 2.5, "absolute_precision"))
    # the bound 2.5 allows a difference of 2: 2 passes, 3 and 2**64 - 1 fail
    assert comparison.outside.tolist() == [False, True, False, True]
    assert comparison.max_abs == 2.0**64 - 1
    off = compare(np.array([2**53 + 1], np.int64), np.array([2**53], np.int64), Tolerance(0.0, 0.5, "t"))
    assert (off.mismatches, off.max_abs) == (1, 1.0)
    unsigned = compare(np.array([255, 0], np.uint8), np.array([0, 0], np.uint8), Tolerance(1.0, 0.0, "t"))
    assert unsigned.outside.tolist() == [True, False]
    assert compare(np.array([5], np.int8), np.array([-5], np.int8), Tolerance(0, 1e300, "t")).mismatches == 0


# ---- end to end through the acl runtime ---------------------------------------------------------

aclnn = pytest.importorskip("opsnn.aclnn")


def small_files(tmp_path: Path) -> list[Path]:
    csv_path = write_csv(
        tmp_path,
        csv_row("leaky_f16", "leaky_relu_grad", "float16", (5, 13), "{'negative_slope': -83.3}",
                "((-1, 1, nan, -0.0, inf),)"),
        csv_row("hardtanh_bf16", "hardtanh_grad", "bfloat16", (64,), "{'min_val': -0.5, 'max_val': 0.8}",
                "((-1, 1, nan, -0.0, inf),)"),
        csv_row("hardtanh_f32_swapped", "hardtanh_grad", "float32", (6, 7), "{'min_val': 0.5, 'max_val': -0.5}",
                "((-1, 1),)"))
    json_path = write_json(
        tmp_path,
        json_case(0, "fp32", (3, 4), [-7, 7], [-7, 7], [0, 1], "bf16"),
        json_case(1, "fp64", (17,), "nan", [-7, 7], 1, "int32", True),
        json_case(2, "bf16", (2, 3), ["inf"], -8, 0, "fp16"))
    return [csv_path, json_path]


def test_small_files_pass_end_to_end(tmp_path, capsys):
    out = tmp_path / "results.json"
    assert run_verify(*small_files(tmp_path), "--json", out) == 0
    report = json.loads(out.read_text())
    assert report["summary"]["PASS"] == 6 and report["summary"]["FAIL"] == 0
    assert all(c["bit_exact"] for c in report["cases"])
    assert "6 passed" in capsys.readouterr().out


def test_dump_writes_each_case_as_bin_files_a_board_test_can_read(tmp_path, capsys):
    """--dump: each run case's inputs, golden and opsnn output as raw little-endian C-order
    files (bfloat16 as 2-byte patterns) with a case.json naming dtype, shape, scalars, flags,
    tolerance, seed and verdict; read back, the inputs give the golden again."""
    from opsnn import golden_files, reference

    dump = tmp_path / "golden"
    assert run_verify(*small_files(tmp_path), "--dump", dump) == 0
    folders = sorted(p.parent for p in dump.rglob("case.json"))
    assert [f.relative_to(dump).as_posix() for f in folders] == [
        "atk_aclnnLeakyReluBackward.json/0000_aclnnLeakyReluBackward_0",
        "atk_aclnnLeakyReluBackward.json/0001_aclnnLeakyReluBackward_1",
        "atk_aclnnLeakyReluBackward.json/0002_aclnnLeakyReluBackward_2",
        "ttk_kernel_test_st.csv/0000_leaky_f16", "ttk_kernel_test_st.csv/0001_hardtanh_bf16",
        "ttk_kernel_test_st.csv/0002_hardtanh_f32_swapped"]
    for folder in folders:
        case = golden_files.load(folder)
        m = case["manifest"]
        assert m["verdict"] == {"status": "PASS", "bit_exact": True, "mismatches": 0, "reason": "", "note": ""}
        assert case["output"].tobytes() == case["golden"].tobytes()
        for role, entry in m["inputs"].items():
            array = case["inputs"][role]
            assert (folder / entry["file"]).stat().st_size == array.nbytes == entry["bytes"]
        scalars = {role: e["value"] for role, e in m["scalars"].items()}
        g, x = case["inputs"]["gradOutput"], case["inputs"]["self"]
        if m["aclnn"] == "aclnnLeakyReluBackward":
            again = reference.leaky_relu_backward(g, x, scalars["negativeSlope"], case["golden"].dtype)
        else:
            again = reference.hardtanh_backward(g, x, scalars["min"], scalars["max"], case["golden"].dtype)
        assert again.tobytes() == case["golden"].tobytes()
    bf16 = golden_files.load(folders[4])
    assert bf16["manifest"]["inputs"]["self"]["dtype"] == "ACL_BF16" and bf16["inputs"]["self"].dtype == BF16
    assert (folders[4] / "self.bin").stat().st_size == 2 * 64
    nan_fill = golden_files.load(folders[1])["inputs"]["gradOutput"]  # a json "nan" fill, float64
    assert nan_fill.dtype == np.float64 and np.isnan(nan_fill).all()
    # before anything runs: a folder the system will not make is an I/O failure (exit 1, as for
    # --json), a file named as the folder a usage error
    (tmp_path / "file").write_text("x")
    assert cli.main(["verify", str(small_files(tmp_path)[0]), "--dump", str(tmp_path / "file" / "sub")]) == 1
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"opsnn verify: --dump: cannot write into the folder {str(tmp_path / 'file' / 'sub')!r}: Not a directory")
    assert cli.main(["verify", str(small_files(tmp_path)[0]), "--dump", str(tmp_path / "file")]) == 2
    assert f"--dump {str(tmp_path / 'file')!r} is a file, not a folder" in capsys.readouterr().err
    assert (tmp_path / "file").read_text() == "x"
    # (breakers) a link to nothing was "File exists", exit 1; through a chain of links the next
    # link was named as missing, and a loop of links as a folder to make
    (tmp_path / "dangling").symlink_to("chained")
    (tmp_path / "chained").symlink_to("nowhere")
    (tmp_path / "loop_a").symlink_to("loop_b")
    (tmp_path / "loop_b").symlink_to("loop_a")
    for name, says in (("dangling", (f"is a symbolic link to {os.path.realpath(tmp_path / 'nowhere')!r}, which does "
                                     "not exist; make that folder or name another")),
                       ("loop_a", "is a symbolic link in a loop of links; name a folder")):
        assert cli.main(["verify", str(small_files(tmp_path)[0]), "--dump", str(tmp_path / name)]) == 2
        assert capsys.readouterr().err.splitlines()[-1] == f"opsnn verify: error: --dump {str(tmp_path / name)!r} {says}"


def test_dump_index_that_cannot_be_written_fails_the_run_but_keeps_its_results(tmp_path, monkeypatch, capsys):
    """(A breaker) a full disk at the dump's index.json lost the whole run: no table, no --json,
    exit 2 with "[Errno 28] No space left on device" naming no file, and a 0-byte index.json
    left. Now the results print and --json is written, the message names --dump and the file,
    the exit is 1 (a failure, not a usage error), and no index (nor a part of one) is left."""
    import errno

    case = write_json(tmp_path, json_case(0, "fp32", (2,), [-1, 1], [-1, 1], 1))
    dump, out = tmp_path / "d", tmp_path / "results.json"
    write_text = Path.write_text

    def disk_full(self, data, *args, **kwargs):
        if "index.json" not in self.name:
            return write_text(self, data, *args, **kwargs)
        write_text(self, data[:len(data) // 2], *args, **kwargs)  # what fitted before the disk filled
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Path, "write_text", disk_full)
    assert cli.main(["verify", str(case), "--dump", str(dump), "--json", str(out)]) == 1
    captured = capsys.readouterr()
    assert "1 case: 1 passed" in captured.out and "aclnnLeakyReluBackward_0" in captured.out
    assert json.loads(out.read_text())["summary"]["PASS"] == 1
    index = dump / "index.json"
    assert captured.err == (f"opsnn verify: --dump: cannot write the dump's index {str(index)!r}: No space left on "
                            f"device; the case folders written stand without it (opsnn compare reads one case "
                            f"file's folder, {str(dump / '<file>')!r}, without an index)\n")
    assert sorted(p.name for p in dump.iterdir()) == ["atk_aclnnLeakyReluBackward.json"]  # no index, no part
    assert (dump / "atk_aclnnLeakyReluBackward.json" / "0000_aclnnLeakyReluBackward_0" / "case.json").is_file()


@pytest.mark.parametrize("at", ["gradOutput.bin", "case.json"])
def test_a_ctrl_c_as_a_case_is_dumped_leaves_no_part_of_its_folder(tmp_path, monkeypatch, capsys, at):
    """(A breaker) a Ctrl-C while a case's files were written left its folder with .bin files and
    no case.json: not in the index, removed by no later run (which goes by case.json), walked
    into by a board's loop over the folders. What the interrupted write made goes now (a user's
    own file beside it stays); the cases before it stand, listed in the index."""
    case = write_json(tmp_path, *(json_case(i, "fp32", (2,), [-1, 1], [-1, 1], 1) for i in range(3)))
    dump = tmp_path / "d"
    second = dump / "atk_aclnnLeakyReluBackward.json" / "0001_aclnnLeakyReluBackward_1"
    second.mkdir(parents=True)
    (second / "notes.txt").write_text("mine")
    write_text, tofile = Path.write_text, golden_files._tofile

    def interrupting_tofile(folder, stem, array, made):
        if folder == second and f"{stem}.bin" == at:
            made.append(folder / at)
            (folder / at).write_bytes(b"\0")  # a part of it written
            raise KeyboardInterrupt
        return tofile(folder, stem, array, made)

    def interrupting_write_text(self, data, *args, **kwargs):
        if self == second / at:
            write_text(self, data[:10], *args, **kwargs)
            raise KeyboardInterrupt
        return write_text(self, data, *args, **kwargs)

    monkeypatch.setattr(golden_files, "_tofile", interrupting_tofile)
    monkeypatch.setattr(Path, "write_text", interrupting_write_text)
    assert cli.main(["verify", str(case), "--dump", str(dump)]) == 130
    assert "interrupted after 1 of 3 cases" in capsys.readouterr().err
    assert sorted(p.name for p in second.iterdir()) == ["notes.txt"]
    assert json.loads((dump / "index.json").read_text())["cases"] == [
        "atk_aclnnLeakyReluBackward.json/0000_aclnnLeakyReluBackward_0"]
    assert sorted(p.name for p in second.parent.iterdir()) == ["0000_aclnnLeakyReluBackward_0", second.name]


def test_a_case_file_given_twice_interrupted_in_its_second_run_lists_no_emptied_folder(tmp_path, monkeypatch, capsys):
    """(A regression breaker) a case file given twice writes each case folder in its first run;
    the second run empties it again before the case. A Ctrl-C there (or a case failing before
    its files) left the folder emptied, yet the index listed it, as the first run had written
    it: opsnn compare then refused the dump (exit 2, no case.json). A folder a case empties is
    the run's no longer unless written again: it goes, and the index does not list it."""
    case = write_json(tmp_path, *(json_case(i, "fp32", (2,), [-1, 1], [-1, 1], 1) for i in range(2)))
    dump = tmp_path / "d"
    first, second = (f"{case.name}/000{i}_aclnnLeakyReluBackward_{i}" for i in range(2))
    calls, run_case = [], command._skip_or_run

    def interrupted_second_time(case_, *args):
        calls.append(case_.index)
        if calls.count(1) == 2:
            raise KeyboardInterrupt
        return run_case(case_, *args)

    monkeypatch.setattr(command, "_skip_or_run", interrupted_second_time)
    # (verify now runs a file given twice once: the dump's guard, kept for a folder a run empties
    # again, is reached here by letting the file run twice)
    monkeypatch.setattr(command, "_once", list)
    assert cli.main(["verify", str(case), str(case), "--dump", str(dump)]) == 130
    assert json.loads((dump / "index.json").read_text())["cases"] == [first]
    assert not (dump / second).exists()
    capsys.readouterr()
    assert cli.main(["compare", str(dump)]) == 0, capsys.readouterr().err


def test_a_case_file_given_twice_interrupted_as_its_second_run_empties_a_folder_lists_it_not(tmp_path, monkeypatch):
    """(A regression breaker) as above, the Ctrl-C coming while the second run of a case empties
    the folder its first run wrote: the index listed the folder, its case.json left (it goes
    last) and a file gone, and opsnn compare refused the dump. It is not listed."""
    case = write_json(tmp_path, *(json_case(i, "fp32", (2,), [-1, 1], [-1, 1], 1) for i in range(2)))
    dump = tmp_path / "d"
    first, second = (f"{case.name}/000{i}_aclnnLeakyReluBackward_{i}" for i in range(2))
    unlink = Path.unlink

    def interrupted(path: Path, *args, **kwargs):  # (the first run's write unlinks nothing)
        unlink(path, *args, **kwargs)
        if path == dump / second / "golden.bin":
            raise KeyboardInterrupt

    monkeypatch.setattr(Path, "unlink", interrupted)
    monkeypatch.setattr(command, "_once", list)  # (the file runs twice: see above)
    assert cli.main(["verify", str(case), str(case), "--dump", str(dump)]) == 130
    assert json.loads((dump / "index.json").read_text())["cases"] == [first]


def test_dump_into_the_folder_holding_a_case_file_is_a_usage_error(tmp_path, capsys):
    """(A breaker) `--dump d` for d/atk_x.json: the case file's dump folder, d/atk_x.json, is the
    case file, and every passing case was reported FAIL ("Not a directory"). Refused before
    anything runs or is written, as `--dump afile` is; another file in the way too."""
    case = write_json(tmp_path, json_case(0, "fp32", (2,), [-1, 1], [-1, 1], 1))
    before = sorted(p.name for p in tmp_path.iterdir())
    assert cli.main(["verify", str(case), "--dump", str(tmp_path)]) == 2
    assert capsys.readouterr().err == (
        f"opsnn verify: error: --dump: cannot write the cases of {str(case)!r} into {str(case)!r}: it is the "
        "case file itself (DIR is the folder holding it), not a folder; name another DIR (each case file's "
        "cases go to DIR/<file name>/)\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == before and case.read_text().startswith("[")
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / case.name).write_text("mine")
    assert cli.main(["verify", str(case), "--dump", str(tmp_path / "d")]) == 2
    assert f"into {str(tmp_path / 'd' / case.name)!r}: it is a file, not a folder" in capsys.readouterr().err
    assert (tmp_path / "d" / case.name).read_text() == "mine"


def test_dump_never_replaces_an_index_json_opsnn_did_not_write(tmp_path, monkeypatch, capsys):
    """(A breaker) ``--dump DIR`` replaced any DIR/index.json, a user's own too, where ``--json``
    refuses a file that is no results file. An index.json that is not a dump index of opsnn
    verify (another shape, unreadable JSON, a folder) is refused before anything runs or is
    written; a dump's own index is replaced (an empty file, as --json takes one, too)."""
    case = write_json(tmp_path, json_case(0, "fp32", (2,), [-1, 1], [-1, 1], 1))
    dump = tmp_path / "d"
    dump.mkdir()
    index = dump / "index.json"
    monkeypatch.setattr(command, "verify_case", lambda *a: pytest.fail("a case ran"))
    for text in ('{"my": "own index"}\n', '{"cases": ["sub"]}', DEEP_JSON, "not json"):
        index.write_text(text)
        assert cli.main(["verify", str(case), "--dump", str(dump)]) == 2
        assert capsys.readouterr().err == (
            f"opsnn verify: error: --dump: {str(index)!r} exists and is not the index of an opsnn verify --dump, "
            "the only index.json --dump replaces; remove it or name another DIR\n")
        assert index.read_text() == text and sorted(p.name for p in dump.iterdir()) == ["index.json"]
    index.unlink()
    index.mkdir()
    assert cli.main(["verify", str(case), "--dump", str(dump)]) == 2
    assert f"--dump: {str(index)!r} exists and is not the index of an opsnn verify --dump" in capsys.readouterr().err
    index.rmdir()
    monkeypatch.undo()
    for _ in range(2):  # the second run replaces the first's index
        assert run_verify(case, "--dump", dump) == 0
        assert json.loads(index.read_text())["cases"] == [f"{case.name}/0000_aclnnLeakyReluBackward_0"]
    index.write_text("")
    assert run_verify(case, "--dump", dump) == 0 and json.loads(index.read_text())["cases"]


def test_a_case_skipped_on_a_rerun_without_the_index_leaves_no_empty_folder(tmp_path, capsys):
    """(the leftovers breaker) with DIR/index.json gone, a rerun emptied the folder of a case it
    then skipped and left it there, empty, where a folder the index lists is removed: an emptied
    case folder goes, and its case file's folder where nothing else is in it, index or not."""
    case = write_json(tmp_path, json_case(0, "fp32", (2,), [-1, 1], [-1, 1], 1),
                      json_case(1, "fp32", (3,), [-1, 1], [-1, 1], 1))
    dump = tmp_path / "d"
    first, second = f"{case.name}/0000_aclnnLeakyReluBackward_0", f"{case.name}/0001_aclnnLeakyReluBackward_1"
    files = ["case.json", "golden.bin", "gradOutput.bin", "output.bin", "self.bin"]
    assert run_verify(case, "--dump", dump) == 0
    (dump / second / "board.bin").write_bytes(b"\0")  # a board's file: removed and said, the folder too
    (dump / "index.json").unlink()
    assert run_verify(case, "--dump", dump, "--max-elements", "2") == 0  # the 3-element case skipped
    assert "--dump removed 1 entry no --dump wrote" in capsys.readouterr().err
    assert sorted(p.relative_to(dump).as_posix() for p in dump.rglob("*")) == \
        sorted(["index.json", case.name, first, *(f"{first}/{f}" for f in files)])
    (dump / "index.json").unlink()
    assert run_verify(case, "--dump", dump, "--max-elements", "1") == 5  # every case skipped
    assert sorted(p.name for p in dump.rglob("*")) == ["index.json"]
    assert json.loads((dump / "index.json").read_text())["cases"] == []


def test_a_skipped_case_whose_case_file_folder_cannot_be_removed_names_that_folder(tmp_path, monkeypatch):
    """(A regression breaker) a rerun without the index whose skipped case's emptied folder went,
    but whose case file's folder, then empty, the system would not remove, failed the case as
    'cannot remove the case's folder, emptied of an earlier run's files: DIR/<file>', naming the
    case file's folder as the case's. It is named as what it is, as the probe names it."""
    case = write_json(tmp_path, json_case(0, "fp32", (3,), [-1, 1], [-1, 1], 1))
    dump = tmp_path / "d"
    assert run_verify(case, "--dump", dump) == 0
    (dump / "index.json").unlink()
    rmdir = Path.rmdir

    def read_only(path: Path) -> None:  # (the tests may run as root, whom a chmod does not stop)
        if path == dump / case.name:
            raise PermissionError(13, "Permission denied", str(path))
        rmdir(path)

    monkeypatch.setattr(Path, "rmdir", read_only)
    results = tmp_path / "r.json"
    assert run_verify(case, "--dump", dump, "--max-elements", "2", "--json", results) == 1
    assert [(c["status"], c["reason"]) for c in json.loads(results.read_text())["cases"]] == [
        ("FAIL", (f"--dump: cannot remove the case file's folder, left empty once the case's emptied folder went: "
                  f"{dump / case.name}: Permission denied (the case was skipped: 3 elements > --max-elements 2)"))]
    assert list((dump / case.name).iterdir()) == []


@pytest.mark.parametrize("index", [False, True], ids=["without the index", "with the index"])
def test_a_rerun_in_a_read_only_case_file_folder_rewrites_its_case_folders(tmp_path, monkeypatch, capsys, index):
    """(A reviewer) since the leftovers fix, a rerun without the index emptied each case folder,
    removed it and made it again to write, so a case file's folder that takes no new entry (read
    only, around case folders that are writable) failed every case there ('cannot empty ...:
    Permission denied', though emptied). (A breaker) with the earlier index there, the same
    stopped the whole rerun before any case ran ('cannot remove the earlier run's case folder
    ..., emptied: Permission denied'): the probe removed every folder the index listed, those
    the run writes again too. Either way a case that writes its folder again now keeps it,
    emptied in place; one skipped whose emptied folder cannot be removed fails naming it and
    why it was skipped; the other case's files and the index are as they should be."""
    case = write_json(tmp_path, json_case(0, "fp32", (2,), [-1, 1], [-1, 1], 1),
                      json_case(1, "fp32", (3,), [-1, 1], [-1, 1], 1))
    dump = tmp_path / "d"
    first, second = (dump / case.name / f"000{i}_aclnnLeakyReluBackward_{i}" for i in range(2))
    assert run_verify(case, "--dump", dump) == 0
    if not index:
        (dump / "index.json").unlink()
    rmdir, mkdir = Path.rmdir, Path.mkdir

    def read_only(path: Path) -> None:  # (the tests may run as root, whom a chmod does not stop)
        if path.parent.resolve() == (dump / case.name).resolve():
            raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(Path, "rmdir", lambda path: read_only(path) or rmdir(path))
    monkeypatch.setattr(Path, "mkdir", lambda path, *a, **k: path.is_dir() or read_only(path) or mkdir(path, *a, **k))
    results = tmp_path / "r.json"
    capsys.readouterr()
    assert run_verify(case, "--dump", dump, "--max-elements", "2", "--json", results) == 1, capsys.readouterr().err
    assert [(c["status"], c["reason"]) for c in json.loads(results.read_text())["cases"]] == [
        ("PASS", ""), ("FAIL", (f"--dump: cannot remove the case's folder, emptied of an earlier run's files: {second}: "
                                "Permission denied (the case was skipped: 3 elements > --max-elements 2)"))]
    assert sorted(p.name for p in first.iterdir()) == ["case.json", "golden.bin", "gradOutput.bin", "output.bin",
                                                        "self.bin"]
    assert list(second.iterdir()) == []
    assert json.loads((dump / "index.json").read_text())["cases"] == [f"{case.name}/{first.name}"]


def test_a_rerun_interrupted_leaves_no_case_folder_the_probe_emptied_for_it(tmp_path, monkeypatch, capsys):
    """The probe empties the earlier index's folders that the run writes again, and keeps them
    to be written in place: a Ctrl-C before their cases ran leaves none of them behind, empty,
    as the probe removing them had left none; the index lists what was written."""
    case = write_json(tmp_path, *(json_case(i, "fp32", (2,), [-1, 1], [-1, 1], 1) for i in range(3)))
    dump = tmp_path / "d"
    assert run_verify(case, "--dump", dump) == 0
    run_case = command._skip_or_run

    def pressed_at_the_second(case_, *args):
        if case_.index == 1:
            raise KeyboardInterrupt
        return run_case(case_, *args)

    monkeypatch.setattr(command, "_skip_or_run", pressed_at_the_second)
    assert cli.main(["verify", str(case), "--dump", str(dump)]) == 130
    assert "interrupted after 1 of 3 cases" in capsys.readouterr().err
    assert sorted(p.name for p in (dump / case.name).iterdir()) == ["0000_aclnnLeakyReluBackward_0"]
    assert json.loads((dump / "index.json").read_text())["cases"] == [f"{case.name}/0000_aclnnLeakyReluBackward_0"]


def test_a_rerun_refused_an_earlier_case_folders_removal_names_it(tmp_path, monkeypatch, capsys):
    """(A reviewer) a case folder the earlier index lists, emptied, that the system will not
    remove (its case file's folder read-only) refused the run naming DIR alone ('cannot write
    into the folder DIR: Permission denied'); the refusal names the folder, as one it cannot
    empty is named, and the run still writes nothing. (A folder the run writes again is not
    removed: --cases 1 leaves case 0's to remove.)"""
    case = write_json(tmp_path, *(json_case(i, "fp32", (2,), [-1, 1], [-1, 1], 1) for i in range(2)))
    dump = tmp_path / "d"
    folder = dump / case.name / "0000_aclnnLeakyReluBackward_0"
    assert run_verify(case, "--dump", dump) == 0
    rmdir = Path.rmdir

    def read_only(path: Path) -> None:  # (the tests may run as root, whom a chmod does not stop)
        if path.parent == (dump / case.name).resolve():
            raise PermissionError(13, "Permission denied", str(path))
        rmdir(path)

    monkeypatch.setattr(Path, "rmdir", read_only)
    monkeypatch.setattr(command, "verify_case", lambda *a: pytest.fail("a case ran"))
    capsys.readouterr()
    assert cli.main(["verify", str(case), "--cases", "1", "--dump", str(dump)]) == 1
    assert capsys.readouterr().err == (f"opsnn verify: --dump: cannot write into the folder {str(dump)!r}: cannot "
                                       f"remove the earlier run's case folder {str(folder)!r}, emptied: "
                                       "Permission denied\n")
    assert list(folder.iterdir()) == [] and (dump / "index.json").is_file()


def test_a_ctrl_c_as_the_rerun_empties_the_earlier_folders_says_what_it_removed(tmp_path, monkeypatch, capsys):
    """(A regression breaker) a Ctrl-C while the probe emptied the folders of the earlier run's
    index, after it had removed a board's file from one, printed 'interrupted' alone: the
    board's file went unsaid, where a refusal there (an OSError) and a whole run say it. (The
    folder of a case the run does not write: --cases 1; its own are emptied, not removed.)"""
    case = write_json(tmp_path, *(json_case(i, "fp32", (2,), [-1, 1], [-1, 1], 1) for i in range(2)))
    dump = tmp_path / "d"
    folder = dump / case.name / "0000_aclnnLeakyReluBackward_0"
    assert run_verify(case, "--dump", dump) == 0
    (folder / "board.bin").write_bytes(b"\0")

    def pressed(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(golden_files, "remove_empty", pressed)
    monkeypatch.setattr(command, "verify_case", lambda *a: pytest.fail("a case ran"))
    capsys.readouterr()
    assert cli.main(["verify", str(case), "--cases", "1", "--dump", str(dump)]) == 130
    err = capsys.readouterr().err
    assert err.startswith(f"opsnn verify: --dump removed 1 entry no --dump wrote from the earlier run's case folders "
                          f"in {str(dump)!r}, computed from that run's inputs: {case.name}/{folder.name}/board.bin\n"), err
    assert list(folder.iterdir()) == []


@pytest.mark.parametrize("refused", ["empty", "remove"])
def test_a_rerun_refused_midway_leaves_an_index_of_the_folders_not_yet_removed(tmp_path, monkeypatch, capsys,
                                                                             refused):
    """(A breaker) a re-dump whose probe was refused part way (a file of an earlier case folder
    it cannot remove, or the emptied folder itself) left the earlier index whole, listing the
    folders it had already removed: opsnn compare then refused the dump naming the first of
    those (its case.json missing), not the folder refused. The index now lists the folders not
    yet removed, the refused one first, so compare names that one and a later run cleans it;
    the run's own folder, emptied to be written in place, goes too (no case will write it)."""
    case = write_json(tmp_path, *(json_case(i, "fp32", (2,), [-1, 1], [-1, 1], 1) for i in range(3)))
    dump = tmp_path / "d"
    first, second, third = (dump / case.name / f"000{i}_aclnnLeakyReluBackward_{i}" for i in range(3))
    assert run_verify(case, "--dump", dump) == 0
    method, target = ("unlink", second / "output.bin") if refused == "empty" else ("rmdir", second)
    original = getattr(Path, method)

    def refuse(path: Path, *args, **kwargs):  # (the tests may run as root, whom a chmod does not stop)
        if path == target.resolve():
            raise PermissionError(13, "Permission denied", str(path))
        return original(path, *args, **kwargs)

    capsys.readouterr()
    with monkeypatch.context() as patch:
        patch.setattr(Path, method, refuse)
        assert cli.main(["verify", str(case), "--cases", "0", "--dump", str(dump)]) == 1
    what = ("cannot empty the earlier run's case folder" if refused == "empty" else
            "cannot remove the earlier run's case folder")
    assert capsys.readouterr().err.startswith(f"opsnn verify: --dump: cannot write into the folder {str(dump)!r}: "
                                              f"{what} {str(second)!r}")
    assert sorted(p.name for p in (dump / case.name).iterdir()) == [second.name, third.name]  # (0000 emptied: gone)
    assert json.loads((dump / "index.json").read_text()) == {
        "settings": {"golden": "reference", "seed": 0, "max_elements": command.DEFAULT_MAX_ELEMENTS,
                     "soc": "Ascend910B", "dump": str(dump)},
        "cases": [f"{case.name}/{second.name}", f"{case.name}/{third.name}"]}
    assert cli.main(["compare", str(dump)]) == 2
    assert capsys.readouterr().err == (
        f"opsnn compare: error: {second / 'gradOutput.bin'}: No such file or directory ({second / 'case.json'}: "
        "inputs.gradOutput.file names it)\n" if refused == "empty" else
        f"opsnn compare: error: {second / 'case.json'}: cannot read it as a case's manifest ([Errno 2] No such file or "
        f"directory: {str(second / 'case.json')!r})\n")
    # the refusal gone, the next run cleans the folders the index still lists
    assert cli.main(["verify", str(case), "--cases", "0", "--dump", str(dump)]) == 0
    assert sorted(p.name for p in (dump / case.name).iterdir()) == [first.name]
    assert json.loads((dump / "index.json").read_text())["cases"] == [f"{case.name}/{first.name}"]
    assert cli.main(["compare", str(dump)]) == 0


def test_a_rerun_refused_its_case_file_folder_lists_no_case_folder_it_removed(tmp_path, monkeypatch, capsys):
    """(A regression breaker) a re-dump whose probe removed an earlier case folder, emptied, and
    was then refused its case file's folder, left empty (as a folder of another user's in a
    sticky DIR is), rewrote the index to list that removed folder first (or kept the earlier
    index whole where it was the first listed): opsnn compare then refused the dump naming the
    missing folder's case.json. The index lists only the folders still there, so compare
    judges those; the refused case file's folder, empty, is left, as the refusal named it."""
    first_file = tmp_path / "a" / "atk_first.json"
    first_file.parent.mkdir()
    first_file.write_text(json.dumps([json_case(i, "fp32", (2,), [-1, 1], [-1, 1], 1) for i in range(2)]))
    case = write_json(tmp_path, json_case(0, "fp32", (2,), [-1, 1], [-1, 1], 1))
    dump = tmp_path / "d"
    assert run_verify(first_file, case, "--dump", dump) == 0
    rmdir = Path.rmdir

    def sticky(path: Path) -> None:  # (the tests may run as root, whom a chmod does not stop)
        if path == (dump / first_file.name).resolve():
            raise PermissionError(1, "Operation not permitted", str(path))
        rmdir(path)

    capsys.readouterr()
    with monkeypatch.context() as patch:
        patch.setattr(Path, "rmdir", sticky)
        assert cli.main(["verify", str(case), "--dump", str(dump)]) == 1
    assert capsys.readouterr().err == (
        f"opsnn verify: --dump: cannot write into the folder {str(dump)!r}: cannot remove the earlier run's case "
        f"file's folder {str(dump / first_file.name)!r}, emptied: Operation not permitted\n")
    assert list((dump / first_file.name).iterdir()) == []
    assert json.loads((dump / "index.json").read_text())["cases"] == [f"{case.name}/0000_aclnnLeakyReluBackward_0"]
    assert cli.main(["compare", str(dump)]) == 0


def test_a_ctrl_c_as_the_probe_removes_the_earlier_index_leaves_none_listing_removed_folders(tmp_path, monkeypatch,
                                                                                            capsys):
    """(A regression breaker) a Ctrl-C as the rerun's probe removed the earlier index, every folder
    it lists done with (removed, or emptied to be written again), left that index whole: it listed
    folders gone and folders emptied, and opsnn compare refused the dump naming the first one's
    case.json. The probe, stopped there, removes the index as it would have and the folders it
    kept for the run, as for a Ctrl-C before: no index is left listing what is not there."""
    case = write_json(tmp_path, *(json_case(i, "fp32", (2,), [-1, 1], [-1, 1], 1) for i in range(2)))
    dump = tmp_path / "d"
    assert run_verify(case, "--dump", dump) == 0
    unlink, presses = Path.unlink, [KeyboardInterrupt]

    def pressed(path: Path, *args, **kwargs) -> None:  # (once: a second press would stop the cleanup too)
        if path == dump / "index.json" and presses:
            raise presses.pop()
        unlink(path, *args, **kwargs)

    monkeypatch.setattr(command, "verify_case", lambda *a: pytest.fail("a case ran"))
    capsys.readouterr()
    with monkeypatch.context() as patch:
        patch.setattr(Path, "unlink", pressed)
        assert cli.main(["verify", str(case), "--cases", "1", "--dump", str(dump)]) == 130
    assert capsys.readouterr().err == "opsnn verify: interrupted\n"
    assert sorted(p.name for p in dump.iterdir()) == []


def test_a_case_file_whose_name_is_not_utf8_runs_prints_and_dumps(tmp_path):
    """(A breaker) a Latin-1 café.json on Linux (os.fsdecode holds its é as a surrogate) failed
    every case with "internal error: UnicodeEncodeError" (the seed hashed the name as UTF-8);
    under a UTF-8 stdout the table then could not print it. The seed hashes the name's own
    bytes, what is shown has ? for the byte, and --json (as JSON's \\u escape) and --dump keep
    the name as it is. A real CLI run: the streams are the process's own."""
    import os
    import subprocess
    import sys
    import zlib

    raw = os.path.join(os.fsencode(tmp_path), b"caf\xe9.json")
    try:
        with open(raw, "w") as f:
            json.dump([json_case(0, "fp32", (2,), [-1, 1], [-1, 1], 1)], f)
    except (OSError, UnicodeError):
        pytest.skip("this file system takes only UTF-8 names")
    name = os.fsdecode(raw)
    case = load_cases(name)[0]
    assert case_rng(3, case).random() == np.random.default_rng([3, zlib.crc32(b"caf\xe9.json"), 0]).random()
    out, dump = tmp_path / "results.json", tmp_path / "d"
    done = subprocess.run([sys.executable, "-m", "opsnn", "verify", name, "--json", str(out), "--dump", str(dump)],
                          capture_output=True, timeout=300, env={**os.environ, "PYTHONIOENCODING": "utf-8"})
    assert done.returncode == 0 and done.stderr == b"", done.stderr
    assert b"caf?.json: LeakyReluBackward (1 case)" in done.stdout and b"1 passed" in done.stdout, done.stdout
    assert json.loads(out.read_text())["cases"][0]["file"] == name
    folder = os.path.join(os.fsencode(dump), b"caf\xe9.json", b"0000_aclnnLeakyReluBackward_0")
    assert json.loads(open(os.path.join(folder, b"case.json"), "rb").read())["file"] == name
    assert json.loads((dump / "index.json").read_text())["cases"] == [
        Path(name).name + "/0000_aclnnLeakyReluBackward_0"]


def test_ctrl_c_reports_the_cases_done_and_exits_130(tmp_path, monkeypatch, capsys):
    """(A breaker) Ctrl-C in a long verify printed an 80-line traceback and lost every result.
    The cases done are reported (tables, summary, --json with the count not run) and the run
    ends with one line and 128 + SIGINT."""
    done = []
    verify_case = command.verify_case

    def interrupted_at_the_third(*args):
        if len(done) == 2:
            raise KeyboardInterrupt
        done.append(verify_case(*args))
        return done[-1]

    monkeypatch.setattr(command, "verify_case", interrupted_at_the_third)
    out = tmp_path / "results.json"
    try:
        code = cli.main(["verify", *map(str, small_files(tmp_path)), "--json", str(out)])
    except KeyboardInterrupt:  # (escaping, it would stop the whole test session)
        pytest.fail("KeyboardInterrupt escaped cli.main")
    assert code == 130
    captured = capsys.readouterr()
    assert captured.err == ("opsnn verify: interrupted after 2 of 6 cases; the summary above and --json hold those "
                            "2 (a case under way is not counted)\n")
    assert "2 cases: 2 passed (2 bit-exact)" in captured.out and "ttk_kernel_test_st.csv" in captured.out
    assert "atk_aclnnLeakyReluBackward.json" not in captured.out  # (no table for a file not begun)
    report = json.loads(out.read_text())
    assert [c["name"] for c in report["cases"]] == ["leaky_f16", "hardtanh_bf16"]
    assert report["summary"]["total"] == 2 and report["summary"]["not_run"] == 4


@pytest.mark.parametrize("where", ["write_index", "table"])
def test_ctrl_c_after_the_last_case_still_reports_every_case(tmp_path, monkeypatch, capsys, python_sigint, where):
    """A breaker: one pressed as the dump's index was written, or as the tables printed, lost the
    whole report (no table, summary or --json), and the index. It is held until the report is out."""
    module = golden_files if where == "write_index" else results
    original, presses = getattr(module, where), []

    def pressed_then(*args, **kwargs):
        if not presses:  # (once: a second press is raised at once)
            presses.append(signal.raise_signal(signal.SIGINT))
        return original(*args, **kwargs)

    monkeypatch.setattr(module, where, pressed_then)
    out, dump = tmp_path / "results.json", tmp_path / "d"
    try:
        code = cli.main(["verify", *map(str, small_files(tmp_path)), "--json", str(out), "--dump", str(dump)])
    except KeyboardInterrupt:
        pytest.fail("KeyboardInterrupt escaped cli.main")
    assert code == 130
    captured = capsys.readouterr()
    assert captured.err.endswith("opsnn verify: interrupted after 6 of 6 cases; the summary above and --json hold "
                                 "those 6 (a case under way is not counted)\n")
    assert "6 cases: 6 passed (6 bit-exact)" in captured.out and "atk_aclnnLeakyReluBackward.json" in captured.out
    assert json.loads(out.read_text())["summary"]["total"] == 6
    assert len(json.loads((dump / "index.json").read_text())["cases"]) == 6
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_dump_keeps_a_0d_tensor_0d(tmp_path):
    """(A tester) a 0-d case (csv shapes ((), ()), json "shape": []) was written with shape [1]
    for its inputs, golden and output, and read back as (1,) arrays."""
    from opsnn import golden_files

    csv_path = write_csv(tmp_path, csv_row("s0", "leaky_relu_grad", "float32", (), "{'negative_slope': 0.1}",
                                           "((-1, 1),)"))
    json_path = write_json(tmp_path, json_case(0, "fp32", (), [-1, 1], [-1, 1], 1))
    dump = tmp_path / "d"
    assert run_verify(csv_path, json_path, "--dump", dump) == 0
    for folder in (dump / csv_path.name / "0000_s0", dump / json_path.name / "0000_aclnnLeakyReluBackward_0"):
        case = golden_files.load(folder)
        m = case["manifest"]
        assert [m["inputs"]["gradOutput"]["shape"], m["inputs"]["self"]["shape"], m["golden"]["shape"],
                m["output"]["shape"]] == [[], [], [], []]
        assert [a.shape for a in (*case["inputs"].values(), case["golden"], case["output"])] == [()] * 4
        assert (folder / "output.bin").stat().st_size == 4


def test_dump_keeps_files_of_one_name_apart_and_replaces_stale_cases(tmp_path):
    """(A breaker) two case files of one name (other folders) got one dump folder, the second's
    cases over the first's; a case that now fails at the aclnn call left the earlier run's
    PASS files in place. Now: a folder per file, and the failed case's folder holds its inputs
    and the FAIL verdict, nothing stale."""
    from opsnn import golden_files

    (tmp_path / "a").mkdir(), (tmp_path / "b").mkdir()
    first = write_json(tmp_path / "a", json_case(0, "fp32", (2,), [-1, 1], [-1, 1], 1))
    second = write_json(tmp_path / "b", json_case(0, "fp32", (3, 5), [-1, 1], [-1, 1], 1))
    dump = tmp_path / "d"
    assert run_verify(first, second, "--dump", dump) == 0
    name = "atk_aclnnLeakyReluBackward.json"
    assert golden_files.load(dump / name / "0000_aclnnLeakyReluBackward_0")["output"].shape == (2,)
    assert golden_files.load(dump / f"{name}-2" / "0000_aclnnLeakyReluBackward_0")["output"].shape == (3, 5)
    write_json(tmp_path / "a", json_case(0, "fp32", (2,), [-1, 1], [-1, 1], -1, "fp32", True))  # now refused
    assert run_verify(first, "--dump", dump) == 1
    assert not (dump / f"{name}-2").exists()  # (a new user) the earlier run's other folders went too
    case = golden_files.load(dump / name / "0000_aclnnLeakyReluBackward_0")
    assert case["manifest"]["verdict"]["status"] == "FAIL" and "161002" in case["manifest"]["verdict"]["reason"]
    assert case["golden"] is None and case["output"] is None and case["inputs"]["self"].shape == (2,)
    assert sorted(p.name for p in (dump / name / "0000_aclnnLeakyReluBackward_0").iterdir()) == [
        "case.json", "gradOutput.bin", "self.bin"]
    # index.json lists this run's folders only; a case now skipped keeps nothing stale (a reviewer)
    assert json.loads((dump / "index.json").read_text())["cases"] == [f"{name}/0000_aclnnLeakyReluBackward_0"]
    # (a reviewer) an interrupted run leaves no index describing an earlier run; a case file
    # named index.json does not take the index's name; a file given twice is listed once
    from opsnn import golden_files as G

    G.probe(dump, [])
    assert not (dump / "index.json").exists()
    assert G.file_labels(["a/index.json", "b/index.json"]) == {
        str(Path("a/index.json").resolve()): "index.json-2", str(Path("b/index.json").resolve()): "index.json-3"}
    assert run_verify(first, first, "--dump", dump) == 1  # (its case is the refused one above)
    assert json.loads((dump / "index.json").read_text())["cases"] == [f"{name}/0000_aclnnLeakyReluBackward_0"]
    # (alone in this run, the second file's folder is the plain name: the index says which is which)
    assert run_verify(second, "--dump", dump, "--max-elements", "10") == 5  # its 15-element case: skipped
    assert not (dump / name).exists()
    assert json.loads((dump / "index.json").read_text())["cases"] == []
    # (a reviewer) only what opsnn wrote goes: a case folder of the earlier index whole (a board's
    # file in it was computed from its inputs: a breaker, test_compare), a user's file beside the
    # case folders stays, with its folder, and an index.json of another shape is not read (it is
    # refused: a breaker)
    assert run_verify(first, second, "--dump", dump, "--cases", "0") == 1
    board = dump / f"{name}-2" / "0000_aclnnLeakyReluBackward_0" / "npu_output.bin"
    board.write_bytes(b"12")
    mine = dump / f"{name}-2" / "notes.txt"
    mine.write_bytes(b"12")
    (tmp_path / "own").mkdir()
    (tmp_path / "own" / "weights.bin").write_bytes(b"34")
    (tmp_path / "own" / "sub").mkdir()
    (tmp_path / "own" / "sub" / "x.bin").write_bytes(b"5")
    (tmp_path / "own" / "index.json").write_text('{"cases": ["sub"]}')
    assert run_verify(first, "--dump", dump) == 1
    assert mine.read_bytes() == b"12" and sorted(p.name for p in mine.parent.iterdir()) == ["notes.txt"]
    with pytest.raises(ValueError, match="exists and is not the index of an opsnn verify --dump"):
        G.probe(tmp_path / "own", [])
    assert (tmp_path / "own" / "weights.bin").exists() and (tmp_path / "own" / "sub" / "x.bin").exists()
    assert (tmp_path / "own" / "index.json").read_text() == '{"cases": ["sub"]}'


def _edit_entry(folder: Path, **fields) -> None:
    """Set (None: remove) fields of case.json's self entry."""
    path = folder / "case.json"
    manifest = json.loads(path.read_text())
    for key, value in fields.items():
        if value is None:
            del manifest["inputs"]["self"][key]
        else:
            manifest["inputs"]["self"][key] = value
    path.write_text(json.dumps(manifest))


@pytest.mark.parametrize("damage, words", [
    (lambda f: (f / "self.bin").write_bytes((f / "self.bin").read_bytes()[:-3]),
     "self.bin holds 93 bytes, expected 96: {m}: inputs.self.shape [4, 6] of float32, 4 bytes each"),
    (lambda f: (f / "self.bin").write_bytes((f / "self.bin").read_bytes() + bytes(2)),
     "self.bin holds 98 bytes, expected 96: {m}: inputs.self.shape [4, 6] of float32, 4 bytes each"),
    (lambda f: _edit_entry(f, bytes=3), "self.bin holds 96 bytes, expected 3: {m}: inputs.self.bytes"),
    (lambda f: _edit_entry(f, shape=[4, 5]), "self.bin holds 96 bytes, expected 80: {m}: inputs.self.shape [4, 5]"),
    (lambda f: _edit_entry(f, shape=None),
     "{m}: inputs.self has no shape; expected an entry with file, dtype and shape"),
    (lambda f: _edit_entry(f, shape=[4.0, 6]),
     "{m}: inputs.self.shape is [4.0, 6]; expected a list of non-negative integer dims"),
    (lambda f: _edit_entry(f, dtype="ACL_COMPLEX32"),
     "{m}: inputs.self.dtype is 'ACL_COMPLEX32', which NumPy has no type to read the file as; expected one"),
    (lambda f: _edit_entry(f, dtype="DT_FLOATY"),
     "{m}: inputs.self.dtype is 'DT_FLOATY'; expected an aclDataType name (ACL_FLOAT16, DT_FLOAT16, FLOAT16)"),
    (lambda f: _edit_entry(f, dtype="DT_FLOAT16"),
     "{m}: inputs.self.numpy_dtype is 'float32', expected 'float16' (its dtype 'DT_FLOAT16')"),
    (lambda f: (f / "self.bin").unlink(), "self.bin: No such file or directory ({m}: inputs.self.file names it)"),
    (lambda f: (f / "case.json").write_text("{"), "{m}: cannot read it as a case's manifest"),
    (lambda f: (f / "case.json").write_text((f / "case.json").read_text().replace('"inputs": {', '"inputs": {}, "inputs": {', 1)),
     "{m}: cannot read it as a case's manifest (an object names the key 'inputs' twice"),
    # (a breaker: a plain RecursionError, not the GoldenFileError documented)
    (lambda f: (f / "case.json").write_text(DEEP_JSON),
     ("{m}: cannot read it as a case's manifest (its arrays and objects nest more than 100 levels deep (opsnn's "
      "JSON files nest a few; Python's JSON reader gives up near 1000))")),
    # (a breaker: "holds 96 bytes, expected '96'"; and files outside the case folder were read)
    (lambda f: _edit_entry(f, bytes="96"), "{m}: inputs.self.bytes is '96'; expected an integer count of bytes"),
    (lambda f: _edit_entry(f, file="/etc/passwd"),
     "{m}: inputs.self.file is '/etc/passwd'; expected the name of a file in the case folder (no folder, absolute"),
    (lambda f: _edit_entry(f, file="../0000_aclnnLeakyReluBackward_0/self.bin"),
     "{m}: inputs.self.file is '../0000_aclnnLeakyReluBackward_0/self.bin'; expected the name of a file in"),
])
def test_load_names_the_file_and_field_of_a_damaged_case_folder(tmp_path, damage, words):
    """(A tester) load reshaped a truncated file into "cannot reshape array of size 431" (no file
    named), dropped a trailing partial element, never compared "bytes", and met a CANN or NumPy
    dtype name, a dtype NumPy has no type for or a missing field with a bare KeyError. Each is
    now a GoldenFileError (a ValueError) naming the file and field, expected and found."""
    from opsnn import golden_files

    dump = tmp_path / "d"
    assert run_verify(write_json(tmp_path, json_case(0, "fp32", (4, 6), [-1, 1], [-1, 1], 1)), "--dump", dump) == 0
    folder = dump / "atk_aclnnLeakyReluBackward.json" / "0000_aclnnLeakyReluBackward_0"
    damage(folder)
    with pytest.raises(golden_files.GoldenFileError) as exc:
        golden_files.load(folder)
    assert isinstance(exc.value, ValueError)
    assert words.format(m=folder / "case.json") in str(exc.value), str(exc.value)


@pytest.mark.parametrize("name", ["ACL_FLOAT", "DT_FLOAT", "FLOAT", "float32", "float", "acl_float"])
def test_load_reads_a_dtype_by_its_cann_or_numpy_name(tmp_path, name):
    from opsnn import golden_files

    dump = tmp_path / "d"
    assert run_verify(write_json(tmp_path, json_case(0, "fp32", (4, 6), [-1, 1], [-1, 1], 1)), "--dump", dump) == 0
    folder = dump / "atk_aclnnLeakyReluBackward.json" / "0000_aclnnLeakyReluBackward_0"
    expected = np.fromfile(folder / "self.bin", np.float32).reshape(4, 6)
    _edit_entry(folder, dtype=name, numpy_dtype=None)
    loaded = golden_files.load(folder)["inputs"]["self"]
    assert loaded.dtype == np.float32 and np.array_equal(loaded, expected)
    # (a reviewer) an entry that is no object is no file: "golden": null loads as None
    manifest = json.loads((folder / "case.json").read_text())
    (folder / "case.json").write_text(json.dumps({**manifest, "golden": None, "output": "output.bin"}))
    case = golden_files.load(folder)
    assert case["golden"] is None and case["output"] is None


def test_dump_and_json_paths_are_checked_after_the_case_files(tmp_path, capsys):
    """(A breaker) `--dump ""` (an unset variable) was taken as no --dump and wrote nothing, and
    a run refused for a missing case file had already made the dump folder. An empty path is
    a usage error; the outputs are probed once the case files have been read."""
    from opsnn import cli

    case = write_json(tmp_path, json_case(0, "fp32", (2,), [-1, 1], [-1, 1], 1))
    for option in ("--dump", "--json"):
        with pytest.raises(SystemExit) as exc:
            cli.main(["verify", str(case), option, ""])
        assert exc.value.code == 2 and f"argument {option}: an empty path ('')" in capsys.readouterr().err
    assert cli.main(["verify", str(tmp_path / "missing.json"), "--dump", str(tmp_path / "new"),
                     "--json", str(tmp_path / "new.json")]) == 2
    assert "missing.json" in capsys.readouterr().err
    assert not (tmp_path / "new").exists() and not (tmp_path / "new.json").exists()


def _one_csv_row(tmp_path, **cells) -> Path:
    """A hardtanh_grad csv of one row, ``cells`` replaced (raw cell text)."""
    path = write_csv(tmp_path, csv_row("ht", "hardtanh_grad", "float32", (2, 3),
                                      "{'min_val': -1.0, 'max_val': 1.0}", "((-2, 2), (-2, 2))"))
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    rows[0].update(cells)
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


_KNOWN_KERNELS = "known: leaky_relu_grad, hardtanh_grad, leaky_relu, clip_by_value_v2"
_AS_WRITTEN = ("op_name is read as written, as CANN reads an op name: the kernel's snake_case name, the one "
               "CANN's ST csv files give")


@pytest.mark.parametrize("op_name, words", [
    ("HardtanhGrad", f"unknown kernel op 'HardtanhGrad' (did you mean 'hardtanh_grad'? {_AS_WRITTEN}); {_KNOWN_KERNELS}"),
    ("hardtanhgrad", f"unknown kernel op 'hardtanhgrad' (did you mean 'hardtanh_grad'? {_AS_WRITTEN}); {_KNOWN_KERNELS}"),
    ("HARDTANH_GRAD", f"unknown kernel op 'HARDTANH_GRAD' (did you mean 'hardtanh_grad'? {_AS_WRITTEN})"),
    ("Hardtanh_Grad", f"unknown kernel op 'Hardtanh_Grad' (did you mean 'hardtanh_grad'? {_AS_WRITTEN})"),
    ("hardtanh_gard", f"unknown kernel op 'hardtanh_gard' (did you mean 'hardtanh_grad'?); {_KNOWN_KERNELS}"),
    ("gelu_grad", f"unknown kernel op 'gelu_grad'; {_KNOWN_KERNELS}"),
])
def test_a_kernel_op_name_is_read_as_written_and_a_near_miss_named(tmp_path, op_name, words):
    """(A CANN developer) dtype and format names are read in any case, the kernel op name only as
    written: LeakyReluGrad, CANN's op type, was 'unknown kernel op' beside a list of the snake_case
    names, leaving the user to see why. op_name stays case-sensitive, as CANN's op names are
    (a file opsnn took in another spelling would not be one CANN's harness runs), and a name
    that misses a known one only in case and underscores, or by a typo, names it."""
    with pytest.raises(ValueError) as exc:
        load_cases(_one_csv_row(tmp_path, op_name=op_name))
    assert f"line 2 (case 0): {words}" in str(exc.value), str(exc.value)


def test_an_aclnn_name_is_read_as_written_and_a_near_miss_named(tmp_path):
    """As the csv's op_name: the json's aclnn_name is an aclnn API's name, case-sensitive."""
    for written, meant in (("aclnnleakyrelubackward", "aclnnLeakyReluBackward"), ("hardtanh", "Hardtanh"),
                           ("aclnnLeakyReluBackwrd", "aclnnLeakyReluBackward")):
        case = json_case(0, "fp32", (2,), [-1, 1], [-1, 1], 1)
        with pytest.raises(ValueError) as exc:
            load_cases(write_json(tmp_path, {**case, "aclnn_name": written}))
        why = "" if written == "aclnnLeakyReluBackwrd" else (" aclnn_name is read as written, as CANN reads an "
                                                              "op name: the aclnn API's name")
        assert (f"case 0: unknown operator {written!r} (did you mean {meant!r}?{why}); known: "
                "aclnnLeakyReluBackward, aclnnHardtanhBackward, aclnnLeakyRelu, aclnnHardtanh") in str(exc.value), \
            str(exc.value)


def test_op_names_are_read_without_surrounding_spaces_in_both_files(tmp_path):
    """(A breaker) a csv op_name was read stripped, a json aclnn_name as written: a hand-edited
    json's " aclnnLeakyReluBackward " was an unknown operator that named itself as the fix. Both
    are read without surrounding spaces (letter case still as written); the json case's name is
    made of the stripped name."""
    (csv_case,) = load_cases(_one_csv_row(tmp_path, op_name=" hardtanh_grad\t"))
    assert csv_case.op == "HardtanhBackward"
    case = json_case(4, "fp32", (2,), [-1, 1], [-1, 1], 1)
    (json_case_read,) = load_cases(write_json(tmp_path, {**case, "aclnn_name": " aclnnLeakyReluBackward\t"}))
    assert (json_case_read.op, json_case_read.name) == ("LeakyReluBackward", "aclnnLeakyReluBackward_4")
    with pytest.raises(ValueError, match=r"case 0: unknown operator ' aclnnleakyrelubackward ' \(did you mean "
                                         r"'aclnnLeakyReluBackward'\? aclnn_name is read as written"):
        load_cases(write_json(tmp_path, {**case, "aclnn_name": " aclnnleakyrelubackward "}))


def test_a_disabled_csv_row_is_read_for_its_name_alone(tmp_path, capsys):
    """(A breaker) a row with is_enabled False, which CANN's harness does not run, was still read
    whole, so a malformed cell in it (here its shapes, op name and attributes) made the whole file
    a usage error. Such a row is now read for its name and op alone and reported SKIP; the
    enabled rows around it run. A malformed is_enabled is still a usage error (it decides)."""
    path = _one_csv_row(tmp_path)
    good = path.read_text().splitlines()[1]
    bad = good.replace("ht,hardtanh_grad,", "off,gelu_grad ,").replace("(2, 3)", "(2, oops")
    path.write_text(path.read_text().splitlines()[0] + ",is_enabled\n" + good + ",\n" + bad + ",False\n")
    first, disabled = load_cases(path)
    assert first.unsupported is None
    assert (disabled.index, disabled.name, disabled.op, disabled.tensors, disabled.scalars) == (
        1, "off", "gelu_grad", (), ())
    assert (disabled.numel, disabled.dtype_label, disabled.shape_label) == (0, "", "")
    assert disabled.unsupported == "is_enabled is False: CANN's harness does not run this row"
    capsys.readouterr()
    assert cli.main(["verify", str(path), "--json", "-"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [(c["name"], c["op"], c["status"], c["numel"]) for c in report["cases"]] == [
        ("ht", "HardtanhBackward", "PASS", 6), ("off", "gelu_grad", "SKIP", 0)]
    # a disabled row of a known kernel names its operator
    path.write_text(path.read_text().replace("off,gelu_grad ,", "off, hardtanh_grad,"))
    assert load_cases(path)[1].op == "HardtanhBackward"
    path.write_text(path.read_text().replace(",False\n", ",nope\n"))
    with pytest.raises(ValueError, match="line 3 \\(case 1\\): is_enabled is 'nope'; expected True or False"):
        load_cases(path)


@pytest.mark.parametrize("cells, reason", [
    ({"is_enabled": "False"}, "is_enabled is False: CANN's harness does not run this row"),
    ({"is_enabled": " false ", "manual_input_binaries": "('a.bin', 'b.bin')"},
     "is_enabled is False: CANN's harness does not run this row"),
    ({"is_enabled": "True", "manual_input_binaries": "('a.bin', 'b.bin')"},
     ("its inputs are given as binary files (manual_input_binaries ('a.bin', 'b.bin')), which verify does not "
      "read: it would run on data it generated instead")),
    ({"manual_golden_binaries": "['g.bin']"},
     ("its golden is given as binary files (manual_golden_binaries ['g.bin']), which verify does not read: it "
      "would run on data it generated instead")),
])
def test_a_csv_row_disabled_or_given_binaries_is_skipped_saying_why(tmp_path, capsys, cells, reason):
    """(A CANN developer) CANN's ttk csv has columns verify did not read (ops-math's files carry
    them): a row with is_enabled False, one CANN's harness does not run (a known failure is
    disabled so), ran and was judged, and one giving its inputs or golden as binary files
    (manual_input_binaries, manual_golden_binaries) ran on generated data, judged against another
    golden. Both are SKIPs saying why; True, an empty cell, an empty tuple or no such column runs."""
    (case,) = load_cases(_one_csv_row(tmp_path, **cells))
    assert case.unsupported == reason
    assert run_verify(_one_csv_row(tmp_path, **cells)) == 5
    for enabled in ({"is_enabled": "True"}, {"is_enabled": "TRUE", "manual_input_binaries": "()"},
                    {"is_enabled": "", "manual_golden_binaries": ""}):
        (case,) = load_cases(_one_csv_row(tmp_path, **enabled))
        assert case.unsupported is None, enabled
    for value in ("yes", "0"):
        with pytest.raises(ValueError, match=f"line 2 \\(case 0\\): is_enabled is '{value}'; expected True or False"):
            load_cases(_one_csv_row(tmp_path, is_enabled=value))
    with pytest.raises(ValueError, match="line 2 \\(case 0\\): manual_input_binaries is \"'a.bin'\"; expected a tuple"):
        load_cases(_one_csv_row(tmp_path, manual_input_binaries="'a.bin'"))


@pytest.mark.parametrize("separator, name", [(";", "semicolons"), ("\t", "tabs")])
def test_a_csv_of_another_separator_is_named_so(tmp_path, separator, name):
    """(A CANN developer) a case file saved by a spreadsheet set to another list separator read
    as one column, and was refused with "line 2 (case 0): no 'op_name' field" beside a header
    that visibly names op_name. The refusal says the header is one column and what separates it."""
    rows = list(csv.reader(write_csv(tmp_path, csv_row("a", "leaky_relu_grad", "float32", (2,), "{}", "((-1, 1),)"))
                           .open(newline="")))
    path = tmp_path / "ttk_kernel_other_st.csv"
    with path.open("w", newline="") as f:
        csv.writer(f, delimiter=separator).writerows(rows)
    with pytest.raises(ValueError) as exc:
        load_cases(path)
    assert str(exc.value) == (f"{path}: not a readable ttk kernel ST csv case file (line 1 (the header): it is one "
                              f"column, {rows[0][0] + separator + rows[0][1]}...: its fields are separated by "
                              f"{name}; a ttk csv separates them by commas (a spreadsheet set to another list "
                              "separator writes so))"), str(exc.value)


def test_case_files_take_canns_dtype_names_with_their_prefixes(tmp_path):
    """(A breaker) DT_FLOAT16, ACL_BF16, DT_FLOAT (CANN's aclDataType / ge::DataType names, which a
    dump's case.json takes) were "unknown dtype name" in a case file, where FLOAT16, bf16 and
    float were read: the prefixed names read as the names without it (FLOAT is float32)."""
    for prefix in ("DT_", "acl_"):
        for name, dtype in (("FLOAT16", np.float16), ("BF16", BF16), ("FLOAT", np.float32), ("DOUBLE", np.float64)):
            spelled = prefix + name
            (case,) = load_cases(_one_csv_row(tmp_path, input_dtypes=repr((spelled, spelled)),
                                              output_dtypes=repr((spelled,))))
            assert [t.dtype for t in case.tensors] == [dtype, dtype] and case.out_dtype == dtype, spelled
            (case,) = load_cases(write_json(tmp_path, json_case(0, spelled, (2,), [-1, 1], [-1, 1], 1,
                                                                 prefix + "INT32")))
            assert [t.dtype for t in case.tensors] == [dtype, dtype] and case.scalars[0].dtype == np.int32
    with pytest.raises(ValueError, match="unknown dtype name 'DT_'"):
        load_cases(_one_csv_row(tmp_path, input_dtypes="('DT_', 'DT_')"))


@pytest.mark.parametrize("cells, words", [
    ({"attributes": "not a dict"}, "line 2 (case 0): attributes 'not a dict' is not a Python literal"),
    ({"attributes": "[1, 2]"}, "line 2 (case 0): attributes must be a dict"),
    ({"attributes": "{'min_val': -1.0, 'max_vall': 2.0}"},
     "line 2 (case 0): attributes ['max_vall'] are not attrs of HardtanhBackward"),
    ({"attributes": "{'min_val': -1.0}"}, "line 2 (case 0): attributes lack max_val, which HardtanhBackward's kernel requires"),
    ({"input_data_ranges": "((-1, 1, foo),)"}, "line 2 (case 0): input_data_ranges '((-1, 1, foo),)' is not a Python literal"),
    ({"input_data_ranges": "((5, -5),)"}, "line 2 (case 0): self's range [5, -5] runs downward"),
    ({"input_data_ranges": "((-1, 1), (-1, 1), (-1, 1))"}, "line 2 (case 0): input_data_ranges gives 3 ranges for 2 inputs"),
    ({"input_dtypes": "('float16',)"}, "line 2 (case 0): hardtanh_grad takes 2 inputs; input_dtypes names 1, input_shapes 2"),
    ({"input_shapes": "((-4,), (-4,))"}, "line 2 (case 0): self has shape [-4]; dims must be non-negative integers"),
    ({"input_dtypes": "('float99', 'float32')"}, "line 2 (case 0): input_dtypes: unknown dtype name 'float99'; case files name them float32, fp32, float,"),
    # (a second breaker: these ran and FAILed with "internal error", or passed)
    ({"output_shapes": "((-1, 3),)"}, "line 2 (case 0): out has shape [-1, 3]; dims must be non-negative integers"),
    ({"output_shapes": "((2.0, 3),)"}, "line 2 (case 0): out has shape [2.0, 3]"),
    ({"input_formats": "(1, 2)"}, "line 2 (case 0): input_formats: unknown format name 1; case files name them NCHW, NHWC, ND,"),
    # (a breaker: these ran as ND, saying nothing)
    ({"input_formats": "('FOO', 'NC1HWC0')"}, ("line 2 (case 0): input_formats: unknown format name 'FOO'; case files name "
                                              "them NCHW, NHWC, ND, NC1HWC0, FRACTAL_Z,")),
    ({"output_formats": "('BAR',)"}, "line 2 (case 0): output_formats: unknown format name 'BAR'"),
    ({"input_formats": "('UNDEFINED', 'ND')"}, "line 2 (case 0): input_formats: unknown format name 'UNDEFINED'"),
    # (a breaker: an input without its format ran as ND, a format past the inputs was ignored)
    ({"input_formats": "('NCHW',)"}, "line 2 (case 0): hardtanh_grad takes 2 inputs; input_formats names 1"),
    ({"input_formats": "('NCHW', 'NCHW', 'NHWC')", "input_ori_formats": ""},
     "line 2 (case 0): hardtanh_grad takes 2 inputs; input_formats names 3"),
    # (a breaker) input_formats left empty reads input_ori_formats: the refusal names that field,
    # not the empty one ("input_formats names 1", "input_formats: unknown format name 'FOO'")
    ({"input_formats": "", "input_ori_formats": "('NCHW',)"},
     "line 2 (case 0): hardtanh_grad takes 2 inputs; input_ori_formats names 1 (one per input, or the cell left empty"),
    ({"input_formats": "", "input_ori_formats": "('FOO', 'ND')"},
     "line 2 (case 0): input_ori_formats: unknown format name 'FOO'"),
    ({"input_data_ranges": "((-inf, inf),)"}, "line 2 (case 0): self's range [-inf, inf] is not finite"),
    ({"input_data_ranges": "((nan, 5), (-1, 1))"}, "line 2 (case 0): self's range [nan, 5] is not finite"),
    ({"input_data_ranges": "((5, nan), (-1, 1))"}, "line 2 (case 0): self's range [5, nan] is not finite"),
    ({"attributes": "{'min_val': '-1', 'max_val': 1.0}"}, "line 2 (case 0): attribute min_val is '-1'; a number expected"),
    ({"attributes": "{'min_val': True, 'max_val': 1.0}"}, "line 2 (case 0): attribute min_val is True; a number expected"),
    # (a tester: these were "TypeError: 'float' object is not iterable" and "'int' object is not
    # subscriptable", naming neither the field nor what it should hold)
    ({"precision_tolerances": "(0.001, 0.001)"}, ("line 2 (case 0): precision_tolerances '(0.001, 0.001)' holds no "
                                                  "(relative, absolute) pair of finite numbers >= 0 per output; "
                                                  "expected such as ((0.001, 0.001),)")),
    # (session 42) a negative tolerance failed even exact output, a NaN one every element, an
    # infinite one passed anything: each ran as if meant
    ({"precision_tolerances": "((-0.001, 0.001),)"}, "line 2 (case 0): precision_tolerances '((-0.001, 0.001),)' holds no"),
    ({"precision_tolerances": "((0.001, nan),)"}, "line 2 (case 0): precision_tolerances '((0.001, nan),)' holds no"),
    ({"precision_tolerances": "((0.001, 1e400),)"}, "line 2 (case 0): precision_tolerances '((0.001, 1e400),)' holds no"),
    ({"absolute_precision": "-1e-3"}, "line 2 (case 0): absolute_precision is '-1e-3'; expected a finite number >= 0"),
    ({"absolute_precision": "nan"}, "line 2 (case 0): absolute_precision is 'nan'; expected a finite number >= 0"),
    ({"absolute_precision": "inf"}, "line 2 (case 0): absolute_precision is 'inf'; expected a finite number >= 0"),
    ({"precision_tolerances": "((0.001, 0.001, 0.1),)"},
     "line 2 (case 0): precision_tolerances '((0.001, 0.001, 0.1),)' holds no"),
    ({"input_data_ranges": "(-1, 1)"}, ("line 2 (case 0): input_data_ranges '(-1, 1)' holds no (low, high[, special values]) "
                                        "range per input; expected one per input or one for all, such as ((-1, 1),)")),
    ({"input_data_ranges": "((-1, 'x'),)"}, "line 2 (case 0): input_data_ranges \"((-1, 'x'),)\" holds no (low, high"),
    ({"input_shapes": "((2.0,), (2,))", "output_shapes": "ELEWISE"},
     "line 2 (case 0): self has shape [2.0]; dims must be non-negative integers"),
    ({"input_shapes": "(2, 2)"}, "line 2 (case 0): self has shape 2; dims must be non-negative integers"),
    # (a breaker: these were "TypeError: 'NoneType' object is not iterable" and "could not convert
    # string to float: 'abc'", naming no field; the others TypeErrors and IndexErrors alike)
    ({"input_dtypes": ""}, "line 2 (case 0): input_dtypes is empty; expected a tuple of one entry per input, such as "
                           "('float16', 'float16')"),
    ({"absolute_precision": "abc"}, "line 2 (case 0): absolute_precision is 'abc'; expected a finite number >= 0 such as 1e-08"),
    ({"input_dtypes": "5"}, "line 2 (case 0): input_dtypes is '5'; expected a tuple of one entry per input"),
    ({"input_shapes": "", "input_ori_shapes": ""}, "line 2 (case 0): input_shapes is empty; expected a tuple of one entry per "
                                                   "input, such as ((2, 3), (2, 3))"),
    ({"input_formats": "'ND'"}, "line 2 (case 0): input_formats is \"'ND'\"; expected a tuple of one entry per input, such as "
                                "('ND', 'ND')"),
    ({"output_dtypes": "()"}, "line 2 (case 0): output_dtypes is '()'; expected a tuple of one entry per output, such as "
                              "('float16',)"),
    ({"output_shapes": "(3)"}, "line 2 (case 0): output_shapes is '(3)'; expected a tuple of one entry per output"),
    ({"output_formats": "[]"}, "line 2 (case 0): output_formats is '[]'; expected a tuple of one entry per output"),
    # (a breaker: numbers beyond a float were OverflowError tracebacks, exit 1; an integer past
    # Python's digit limit was "not a Python literal"; a 10 KB field was quoted whole)
    ({"attributes": "{'min_val': -1" + "0" * 400 + ", 'max_val': 1.0}"},
     "line 2 (case 0): attribute min_val is -1" + "0" * 55 + "...: beyond a float's range (+-1.8e308), which no "
     "dtype holds (kernel attrs are C floats)"),
    ({"input_data_ranges": "((-" + "9" * 400 + ", 1),)"},
     "line 2 (case 0): input_data_ranges holds -" + "9" * 56 + "...: beyond a float's range (+-1.8e308), which no "
     "dtype holds"),
    ({"input_data_ranges": "((-1, 1, " + "9" * 400 + "),)"},
     "line 2 (case 0): input_data_ranges holds " + "9" * 57 + "...: beyond a float's range"),
    ({"attributes": "{'min_val': -1" + "0" * 5000 + ", 'max_val': 1.0}"},
     "line 2 (case 0): attributes \"{'min_val': -1" + "0" * 42 + "... holds an integer of more than 4300 digits, "
     "more than Python reads (its int/str digit limit: sys.set_int_max_str_digits)"),
    ({"input_data_ranges": "(" * 10_000}, "line 2 (case 0): input_data_ranges '" + "(" * 56 + "... is not a Python literal"),
    ({"input_shapes": "((" + "9" * 400 + ",), (2,))", "output_shapes": "ELEWISE"},
     "line 2 (case 0): self has shape [" + "9" * 56 + "...; dims must be non-negative integers"),
    ({"op_name": "x" * 1000}, "line 2 (case 0): unknown kernel op '" + "x" * 56 + "...; known: leaky_relu_grad,"),
])
def test_malformed_case_data_is_a_usage_error_naming_row_and_field(tmp_path, capsys, cells, words):
    """Found by a breaker: a cell that is no literal was a traceback (SyntaxError), and a downward
    range, a missing input, a negative dim were FAILs with "internal error" after running; a third
    range for two inputs was ignored. Each is now exit 2 before any case runs, naming the row."""
    assert cli.main(["verify", str(_one_csv_row(tmp_path, **cells))]) == 2
    err = capsys.readouterr().err
    assert "not a readable ttk kernel ST csv case file" in err and words in err, err


@pytest.mark.parametrize("dtype, grad, words", [
    ("uint8", [0.2, 0.4], "case 0: gradOutput is uint8, and its range [0.2, 0.4] holds no integer"),
    ("fp32", True, "case 0: gradOutput's range_values is true; expected a [low, high] range or one value"),
    # a new user's findings: a range the dtype holds none of ran into "internal error: ValueError:
    # low > high"; a constant it cannot hold was wrapped (int8 200 -> -56) and run
    ("int8", [200, 300], "case 0: gradOutput is int8 [-128, 127], and its range [200, 300] holds none of its values"),
    ("uint8", [-9, -1], "case 0: gradOutput is uint8 [0, 255], and its range [-9, -1] holds none of its values"),
    ("int8", 200, "case 0: gradOutput is int8 [-128, 127], which cannot hold 200"),
    ("int8", [2.5], "case 0: gradOutput is int8, and its value 2.5 is no integer (the cast would truncate it)"),
    # (a breaker) ["nan", 5] filled the tensor with NaN, while [5, "nan"] was refused
    ("fp32", ["nan", 5], "case 0: gradOutput's range [nan, 5] is not finite"),
    ("fp32", [5, "nan"], "case 0: gradOutput's range [5, nan] is not finite"),
    ("fp32", ["nan", "inf"], "case 0: gradOutput's range [nan, inf] is not finite"),
])
def test_json_ranges_verify_cannot_fill_are_usage_errors(tmp_path, capsys, dtype, grad, words):
    case = json_case(0, "fp32", (2, 3), [-1, 1], [-1, 1], 0.5)
    case["inputs"][0].update(dtype=dtype, range_values=grad)
    assert cli.main(["verify", str(write_json(tmp_path, case))]) == 2
    assert words in capsys.readouterr().err


def test_a_range_fills_only_where_its_two_ends_are_equal(tmp_path):
    """One value, or a range whose ends are equal (NaN and NaN counted equal), is a fill; a range
    with one NaN end is not, in either order (``[nan, 5]`` had been a NaN fill)."""
    from opsnn import golden_files

    assert Values(math.nan, math.nan).is_constant and Values(3.0, 3.0).is_constant
    assert not Values(math.nan, 5.0).is_constant and not Values(5.0, math.nan).is_constant
    dump = tmp_path / "d"
    path = write_json(tmp_path, json_case(0, "fp32", (4,), ["nan", "nan"], [-1, 1], 0.5))
    assert run_verify(path, "--dump", dump) == 0
    [folder] = (dump / path.name).iterdir()
    assert np.isnan(golden_files.load(folder)["inputs"]["gradOutput"]).all()


_EXPECTED_RANGE = ('expected a [low, high] range or one value (a number, "nan", "inf" or "-inf", alone or in a '
                   'one-element list)')


@pytest.mark.parametrize("edit, words", [
    ({0: {"range_values": []}}, f"case 0: gradOutput's range_values is []; {_EXPECTED_RANGE}"),
    ({1: {"range_values": [1, 2, 3]}}, f"case 0: self's range_values is [1, 2, 3]; {_EXPECTED_RANGE}"),
    ({2: {"range_values": None}}, f"case 0: negativeSlope's range_values is null; {_EXPECTED_RANGE}"),
    ({1: {"range_values": [1, "x"]}}, f'case 0: self\'s range_values is [1, "x"]; {_EXPECTED_RANGE}'),
    ({0: {"shape": [2.0]}, 1: {"shape": [2.0]}},
     "case 0: gradOutput has shape [2.0]; dims must be non-negative integers"),
    ({1: {"shape": [True, 2]}}, "case 0: self has shape [True, 2]; dims must be non-negative integers"),
    ({1: {"shape": None}}, "case 0: self has shape None; dims must be non-negative integers"),
    ({3: {"range_values": "false"}}, 'case 0: flag selfIsResult\'s range_values is "false"; expected true or false'),
    ({3: {"range_values": None}}, "case 0: flag selfIsResult's range_values is null; expected true or false"),
    ({1: {"dtype": "fp17"}}, "case 0: self's dtype: unknown dtype name 'fp17'; case files name them float32, fp32,"),
    ({2: {"dtype": "f32"}}, "case 0: negativeSlope's dtype: unknown dtype name 'f32'; case files name them"),
], ids=["empty-range", "three-values", "null-scalar", "text", "float-dims", "bool-dim", "null-shape", "flag-text",
        "flag-null", "tensor-dtype", "scalar-dtype"])
def test_json_fields_verify_cannot_read_name_the_input_and_field(tmp_path, capsys, edit, words):
    """(A tester) these were exit 2 with "TypeError: float() argument must be ... not 'list'",
    "'float' object cannot be interpreted as an integer" (the dims check came after the broadcast)
    or "could not convert string to float: 'false'", naming neither input nor field; a null flag
    ran as false."""
    case = json_case(0, "fp32", (2,), [-1, 1], [-1, 1], 1)
    for index, fields in edit.items():
        case["inputs"][index].update(fields)
    assert cli.main(["verify", str(write_json(tmp_path, case))]) == 2
    err = capsys.readouterr().err
    assert words in " ".join(err.split()), err


def test_inputs_that_do_not_broadcast_fail_as_the_aclnn_call_refuses_them(tmp_path):
    """(A breaker) a json case whose inputs do not broadcast stopped the whole file (exit 2) with
    NumPy's "shape mismatch: objects cannot be broadcast", and one whose broadcast passes NumPy's
    size limit with "broadcast dimensions too large.", while a csv row of such shapes FAILed with
    aclnn's 161002 (a csv row whose out is "ELEWISE" stopped its file too). Each now runs and FAILs
    as the aclnn call refuses it, and one too large to run is a SKIP for size; the file's other
    cases run."""
    mismatch = json_case(1, "fp32", (3,), [-1, 1], [-1, 1], 0.5)
    mismatch["inputs"][1]["shape"] = [4]
    huge = json_case(2, "fp32", (2**40, 2**30), [-1, 1], [-1, 1], 0.5)
    huge["inputs"][1]["shape"] = [1]
    path, out = write_json(tmp_path, json_case(0, "fp32", (2,), [-1, 1], [-1, 1], 0.5), mismatch, huge), \
        tmp_path / "r.json"
    assert run_verify(path, "--json", out) == 1
    cases = json.loads(out.read_text())["cases"]
    assert [c["status"] for c in cases] == ["PASS", "FAIL", "SKIP"]
    assert cases[1]["reason"] == ("aclnnLeakyReluBackwardGetWorkspaceSize returned 161002: LeakyReluBackward: the "
                                  "shape of gradOutput [3] and the shape of self [4] cannot broadcast (each aligned "
                                  "dim must be equal or 1)")
    assert cases[2]["reason"] == f"{2**70:,} elements > --max-elements {command.DEFAULT_MAX_ELEMENTS:,}"
    assert run_verify(_one_csv_row(tmp_path, input_shapes="((3,), (4,))", output_shapes="ELEWISE"), "--json", out) == 1
    [row] = json.loads(out.read_text())["cases"]
    assert (row["status"], row["reason"]) == ("FAIL", "aclnnHardtanhBackwardGetWorkspaceSize returned 161002: "
                                              "HardtanhBackward: gradOutput shape must equal self shape [3], got [4]")
    # the out of inputs that do not broadcast is the largest input's shape: no larger than it
    assert _broadcast([(3,), (2, 4)]) == (2, 4) and _broadcast([(5, 1), (1, 3)]) == (5, 3)
    assert _broadcast([(2**40, 2**30), (1,)]) == (2**40, 2**30) and _broadcast([(4,), (3,)]) == (4,)


def test_format_names_are_read_as_dtype_names_and_recorded_in_case_json(tmp_path, monkeypatch):
    """Any case and spacing (' NCHW', 'nchw '); the aclTensors are made with the format, and
    case.json records each tensor's, which a board test needs to make the same tensors."""
    row = csv_row("ht", "hardtanh_grad", "float32", (2, 3), "{'min_val': -0.5, 'max_val': 0.5}", "((-1, 1),)")
    path = write_csv(tmp_path, row.replace("\"('ND', 'ND')\",\"('ND',)\",\"((", "\"(' NCHW', 'nchw ')\",\"('NHWC',)\",\"(("))
    (case,) = load_cases(path)
    assert [t.format for t in case.tensors] + [case.out_format] == ["NCHW", "NCHW", "NHWC"]
    made = []
    create = Session().acl.create_tensor
    monkeypatch.setattr(Session().acl, "create_tensor", lambda *a: made.append(a[4]) or create(*a))
    assert run_verify(path, "--dump", tmp_path / "d") == 0
    assert made == [0, 0, 1]  # ACL_FORMAT_NCHW twice, ACL_FORMAT_NHWC
    manifest = json.loads(next((tmp_path / "d").glob("*/0000_*/case.json")).read_text())
    assert manifest["formats"] == {"self": "NCHW", "gradOutput": "NCHW", "output": "NHWC"}


def test_csv_blank_rows_spaced_header_names_and_file_lines(tmp_path, capsys):
    """A breaker: a spreadsheet's trailing ,,,, row made the file unreadable ("row 2: unknown
    kernel op ''"), a header 'a, op_name' had "no 'op_name' field", and errors gave 0-based data
    rows where a file line is what an editor shows."""
    row = csv_row("ht", "hardtanh_grad", "float32", (2, 3), "{'min_val': -0.5, 'max_val': 0.5}", "((-1, 1),)")
    path = write_csv(tmp_path, row, "," * 16, " , ,", row.replace("ht,", "ht2,"), "," * 16)
    path.write_text(path.read_text().replace(",op_name,", ", op_name ,", 1))
    assert [(c.index, c.name) for c in load_cases(path)] == [(0, "ht"), (1, "ht2")]
    path.write_text(path.read_text().replace("ht2,hardtanh_grad", "ht2,gelu_grad"))
    assert cli.main(["verify", str(path)]) == 2
    assert "not a readable ttk kernel ST csv case file (line 5 (case 1): unknown kernel op 'gelu_grad'" in \
        capsys.readouterr().err


def test_a_csv_row_shorter_than_its_header_names_the_first_empty_field(tmp_path, capsys):
    """Its missing cells read as empty (they were None: "TypeError: 'NoneType' object is not
    iterable")."""
    assert cli.main(["verify", str(write_csv(tmp_path, "ht,hardtanh_grad"))]) == 2
    assert "line 2 (case 0): input_dtypes is empty; expected a tuple" in capsys.readouterr().err


def test_a_csv_header_naming_a_column_twice_is_a_usage_error(tmp_path, capsys):
    """(A breaker) a header naming op_name twice (a pasted column, ``op_name`` and `` op_name``)
    ran each row with its later cell, silently: here hardtanh_grad, refused for a LeakyReluGrad
    row's attributes, and a row that fit both would have run the wrong operator. A name given
    twice is a usage error naming it and its columns; empty names (trailing commas) are none."""
    row = csv_row("lr", "leaky_relu_grad", "float32", (2, 3), "{'negative_slope': 0.1}", "((-1, 1),)")
    path = write_csv(tmp_path, row)
    lines = path.read_text().splitlines()
    path.write_text(f"{lines[0]}, op_name,,\n{lines[1]},hardtanh_grad,,\n")
    assert cli.main(["verify", str(path)]) == 2
    assert capsys.readouterr().err == (f"opsnn verify: error: {path}: not a readable ttk kernel ST csv case file "
                                       "(line 1 (the header): it names op_name twice, columns 2 and 18; expected "
                                       "each column once)\n")
    path.write_text(f"{lines[0]},,\n{lines[1]},,\n")
    assert [c.name for c in load_cases(path)] == ["lr"]


def test_a_csv_field_longer_than_the_csv_reader_takes_is_a_usage_error(tmp_path, capsys):
    """(A breaker) a field of more than 131072 characters, the csv module's limit, was a
    _csv.Error traceback (exit 1): it is a malformed file naming the line its row begins on."""
    path = _one_csv_row(tmp_path)
    text = path.read_text()
    path.write_text(text + text.splitlines()[1].replace("ht,", "x" * 200_000 + ",", 1) + "\n")
    assert cli.main(["verify", str(path)]) == 2
    assert capsys.readouterr().err == (f"opsnn verify: error: {path}: not a readable ttk kernel ST csv case file "
                                       "(line 3 (case 1): field larger than field limit (131072))\n")
    path.write_text("x" * 200_000 + "\n" + text)
    assert cli.main(["verify", str(path)]) == 2
    assert capsys.readouterr().err == (f"opsnn verify: error: {path}: not a readable ttk kernel ST csv case file "
                                       "(line 1 (the header): field larger than field limit (131072))\n")


@pytest.mark.parametrize("edit, words", [
    (lambda cases: cases.append(5),
     "case 1: the case is 5; expected an object with the fields aclnn_name and inputs"),
    (lambda cases: cases[0].update(aclnn_name=7),
     'case 0: aclnn_name is 7; expected an operator name such as "aclnnLeakyReluBackward"'),
    (lambda cases: cases[0].update(inputs={"a": 1}),
     'case 0: inputs is {"a": 1}; expected a list of objects, one per tensor, scalar and attr'),
    (lambda cases: cases[0]["inputs"].__setitem__(2, 5),
     'case 0: inputs[2] is 5; expected an object whose name is a string such as "gradOutput"'),
    (lambda cases: cases[0]["inputs"][1].update(name=["x"]),
     'case 0: inputs[1] is {"name": ["x"], "type": "tensor", "required": true, "dtyp...; expected an object whose'),
    (lambda cases: cases[0].update(standard="md5"),
     'case 0: standard is "md5"; expected an object such as {"acc": "single_bm"}'),
    # (a breaker: these ran at the float threshold, 2**-13 for float32, "MD5" not bit-exact)
    (lambda cases: cases[0].update(standard={"acc": "MD5"}),
     'case 0: standard.acc is "MD5"; expected one of "md5", "single_bm", "default" (as written: names are case'),
    (lambda cases: cases[0].update(standard={"acc": "bogus_standard"}),
     'case 0: standard.acc is "bogus_standard"; expected one of "md5", "single_bm", "default"'),
    (lambda cases: cases[0].update(standard={"acc": None}), 'case 0: standard.acc is null; expected one of'),
    # (a breaker: a type other than tensor or scalar was read as an attr: "flag gradOutput's
    # range_values is [-1, 1]; expected true or false" for a TENSOR, and a "bool" one ran)
    (lambda cases: cases[0]["inputs"][0].update(type="TENSOR"),
     'case 0: inputs[0] (gradOutput) has type "TENSOR"; expected "tensor", "scalar" or "attr" (as written)'),
    (lambda cases: cases[0]["inputs"][3].update(type="bool"),
     'case 0: inputs[3] (selfIsResult) has type "bool"; expected "tensor", "scalar" or "attr"'),
    (lambda cases: cases[0]["inputs"][2].pop("type"), "case 0: no 'type' field"),
], ids=["case-no-object", "name-no-string", "inputs-no-list", "input-no-object", "input-name-list", "standard-text",
        "standard-miscased", "standard-unknown", "standard-null", "type-miscased", "type-unknown", "type-missing"])
def test_json_cases_verify_cannot_read_name_the_case_and_field(tmp_path, capsys, edit, words):
    """(A breaker) ``[<a case>, 5]`` was "case 1: TypeError: 'int' object is not subscriptable",
    and the others TypeErrors or AttributeErrors alike, naming no field."""
    cases = [json_case(0, "fp32", (2,), [-1, 1], [-1, 1], 1)]
    edit(cases)
    assert cli.main(["verify", str(write_json(tmp_path, *cases))]) == 2
    err = capsys.readouterr().err
    assert words in " ".join(err.split()) and "Error" not in err, err


def test_case_files_with_a_byte_order_mark_are_read(tmp_path):
    """(A breaker) a UTF-8 byte-order mark made a json file unreadable ("JSONDecodeError:
    Unexpected UTF-8 BOM") and a csv file's first field unknown ("no 'testcase_name' field")."""
    json_path = write_json(tmp_path, json_case(0, "fp32", (2,), [-1, 1], [-1, 1], 0.5))
    csv_path = _one_csv_row(tmp_path)
    for path in (json_path, csv_path):
        path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    assert [c.name for c in load_cases(json_path) + load_cases(csv_path)] == ["aclnnLeakyReluBackward_0", "ht"]
    out = tmp_path / "r.json"
    assert run_verify(json_path, csv_path, "--json", out) == 0
    assert [c["status"] for c in json.loads(out.read_text())["cases"]] == ["PASS", "PASS"]


def test_a_json_file_that_is_no_list_is_a_usage_error(tmp_path, capsys):
    path = tmp_path / "atk_x.json"
    path.write_text(json.dumps({"cases": [json_case(0, "fp32", (2,), [-1, 1], [-1, 1], 0.5)]}))
    assert cli.main(["verify", str(path)]) == 2
    assert "the file holds a dict; an aclnn ST json is a list of cases" in capsys.readouterr().err


@pytest.mark.parametrize(("text", "held"), [("null", "null"), ("0", "0"), ("false", "false"), ('"x"', '"x"'),
                                            ("2.5", "2.5")])
def test_a_json_file_holding_one_value_is_a_usage_error_naming_it(tmp_path, capsys, text, held):
    """(A new-user breaker) null, 0 and false, falsy, were taken as a list and met enumerate():
    "not a readable ... (TypeError: 'NoneType' object is not iterable)"."""
    path = tmp_path / "atk_x.json"
    path.write_text(text)
    assert cli.main(["verify", str(path)]) == 2
    assert f"not a readable atk aclnn ST json case file (the file holds {held}; an aclnn ST json is a list of " \
           "cases)" in " ".join(capsys.readouterr().err.split())


def test_an_empty_json_object_holds_no_case(tmp_path, capsys):
    path = tmp_path / "atk_x.json"
    path.write_text("{}")
    assert cli.main(["verify", str(path)]) == 2
    assert "holds no case" in capsys.readouterr().err


def test_a_case_file_that_cannot_be_opened_is_named_with_what_was_expected(tmp_path, capsys):
    """(A new user's) `opsnn verify nonexist.csv` said Python's "[Errno 2] No such file or
    directory: 'nonexist.csv'", and a folder named like a case file "[Errno 21] Is a directory":
    the message names the file, what is there and what was expected, as compare's for its DIR."""
    missing = tmp_path / "ttk_kernel_x_st.csv"
    folder = tmp_path / "atk_aclnnX.json"
    folder.mkdir()
    assert cli.main(["verify", str(missing)]) == 2
    assert capsys.readouterr().err == (f"opsnn verify: error: {missing}: no such file; expected a ttk kernel ST "
                                       "csv case file\n")
    assert cli.main(["verify", str(folder)]) == 2
    assert capsys.readouterr().err == (f"opsnn verify: error: {folder}: a folder, not a file; expected an atk "
                                       "aclnn ST json case file\n")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes on this system")
def test_a_named_pipe_given_as_a_case_file_is_refused_not_waited_on(tmp_path, capsys):
    """(A breaker) a FIFO named like a case file was opened and read: verify waited for a writer
    that never came, for ever (run apart, so that the old behaviour fails on the timeout). Anything
    but a regular file (after links) is refused before it is opened, as a folder is, exit 2; a
    link to a device too (one to /dev/zero had been read without end)."""
    fifo = tmp_path / "ttk_kernel_pipe_st.csv"
    os.mkfifo(fifo)
    done = subprocess.run([sys.executable, "-m", "opsnn", "verify", str(fifo)], capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 2
    assert done.stderr == (f"opsnn verify: error: {fifo}: a named pipe (FIFO), not a file; expected a ttk kernel "
                           "ST csv case file\n")
    device = tmp_path / "atk_aclnnDevice.json"
    device.symlink_to(os.devnull)
    assert cli.main(["verify", str(device)]) == 2
    assert capsys.readouterr().err == (f"opsnn verify: error: {device}: a device, not a file; expected an atk "
                                       "aclnn ST json case file\n")


def test_a_case_file_in_a_link_loop_is_named_not_a_traceback(tmp_path, capsys):
    """(A breaker) a case file that is a link to itself (or a loop of links) was refused by its
    reader in these words until verify looked for a file given twice, whose Path.resolve raises
    RuntimeError on a loop (Python 3.10 to 3.12): a traceback, exit 1. It is told as any file
    that cannot be read, once, given once or twice (with no note about its cases running once:
    it names no file)."""
    loop = tmp_path / "ttk_kernel_loop_st.csv"
    loop.symlink_to(loop.name)
    assert cli.main(["verify", str(loop), str(loop)]) == 2
    assert capsys.readouterr().err == (
        f"opsnn verify: error: {loop}: cannot be read (Too many levels of symbolic links); expected a ttk "
        "kernel ST csv case file\n")


def test_a_json_key_given_twice_in_one_object_is_a_usage_error(tmp_path, capsys):
    """(A breaker) Python's JSON reader keeps the last of two equal keys: a case whose aclnn_name
    was written twice ran the second operator, exit 0, and a hand-edited case.json read its last
    entry alike. Every JSON file opsnn reads (cli_files.read_json) refuses it, naming the key."""
    case = json.dumps(json_case(0, "fp32", (2,), [-1, 1], [-1, 1], 0.5))
    path = tmp_path / "atk_twice.json"
    path.write_text("[" + case.replace("{", '{"aclnn_name": "aclnnLeakyRelu", ', 1) + "]")
    assert cli.main(["verify", str(path)]) == 2
    assert capsys.readouterr().err == (
        f"opsnn verify: error: {path}: not a readable atk aclnn ST json case file (an object names the key "
        "'aclnn_name' twice; a JSON reader would keep one of them silently)\n")


def test_json_nested_deeper_than_the_reader_follows_is_a_usage_error(tmp_path, capsys):
    """(A breaker) a case file, or a --json results file to replace, nested deeper than Python's
    JSON reader follows was a RecursionError traceback (exit 1). The case file is a usage error
    naming it; the --json file is not a results file, so it is refused as any other."""
    path = tmp_path / "atk_deep.json"
    # (985 levels loaded, and quoting the case in the message then met the limit)
    for depth in (101, 985, 100_000):
        path.write_text("[" * depth + "]" * depth)
        assert cli.main(["verify", str(path)]) == 2
        assert capsys.readouterr().err == (
            f"opsnn verify: error: {path}: not a readable atk aclnn ST json case file (its arrays and objects nest "
            "more than 100 levels deep (opsnn's JSON files nest a few; Python's JSON reader gives up near 1000))\n")
    path.write_text("[" * 100 + "]" * 100)
    assert cli.main(["verify", str(path)]) == 2
    assert "case 0: the case is [[[[" in capsys.readouterr().err
    path.write_text(DEEP_JSON)
    case = write_json(tmp_path, json_case(0, "fp32", (2,), [-1, 1], [-1, 1], 1))
    assert cli.main(["verify", str(case), "--json", str(path)]) == 2
    assert f"--json {str(path)!r} exists and is not a results file of opsnn verify or compare" in \
        capsys.readouterr().err
    assert path.read_text() == DEEP_JSON


def test_a_case_without_an_input_of_its_operator_is_a_usage_error(tmp_path, capsys):
    case = json_case(0, "fp32", (2, 3), [-1, 1], [-1, 1], 0.5)
    del case["inputs"][0]  # no gradOutput
    assert cli.main(["verify", str(write_json(tmp_path, case))]) == 2
    err = capsys.readouterr().err
    assert "case 0: aclnnLeakyReluBackward takes the tensors ['gradOutput', 'self']; the case gives ['self']" in err


@pytest.mark.parametrize("slope", ["nan", ["-inf"], "inf"])
def test_integer_scalar_that_cannot_hold_its_value_is_a_usage_error(tmp_path, capsys, slope):
    """Found by a breaker: NaN or inf for an int32 slope was cast to INT32_MIN and run."""
    path = write_json(tmp_path, json_case(0, "fp32", (2, 3), [-1, 1], [-1, 1], slope, "int32"))
    assert cli.main(["verify", str(path)]) == 2
    err = capsys.readouterr().err
    assert "case 0: negativeSlope is int32, which cannot hold" in err, err


def test_json_integers_are_read_as_integers(tmp_path, capsys):
    """A breaker: an int64 bound of 2**53 + 1 ran as 2**53 (read through a float), and a constant
    of int64's max was refused as "cannot hold 9.223372036854776e+18"."""
    def case(self_values, low, high):
        item = lambda name, kind, values: {"name": name, "type": kind, "dtype": "int64",
                                           "shape": [4, 8] if kind == "tensor" else None, "range_values": values}
        return {"id": 3, "aclnn_name": "Hardtanh", "standard": {"acc": "md5"},
                "inputs": [item("self", "tensor", self_values), item("clipValueMin", "scalar", low),
                           item("clipValueMax", "scalar", high)]}
    path = tmp_path / "atk_aclnnHardtanh.json"
    path.write_text(json.dumps([case([2**53, 2**53 + 8], 2**53 + 1, 2**53 + 3),
                                case(2**63 - 1, -(2**63), 2**63 - 1)]))
    cases = load_cases(path)
    assert [s.values.low for s in cases[0].scalars] == [2**53 + 1, 2**53 + 3]
    rng = case_rng(0, cases[0])
    assert pick_scalar(cases[0].scalars[0], rng) == 2**53 + 1
    assert generate(cases[1].tensors[0].values, np.dtype(np.int64), (2,), rng).tolist() == [2**63 - 1] * 2
    data = generate(cases[0].tensors[0].values, np.dtype(np.int64), (4, 8), rng)
    assert data.min() >= 2**53 and data.max() <= 2**53 + 8 and np.any(data % 2 == 1)
    assert run_verify(path, "--dump", tmp_path / "d") == 0
    manifest = json.loads(next((tmp_path / "d").glob("*/0000_*/case.json")).read_text())
    assert manifest["scalars"]["min"]["value"] == 2**53 + 1
    assert json.loads(next((tmp_path / "d").glob("*/0001_*/case.json")).read_text())["verdict"]["status"] == "PASS"


@pytest.mark.parametrize("dtype, slope", [("int8", 1000), ("uint8", -3), ("int32", 2**31)])
def test_integer_scalar_constant_out_of_its_range_is_a_usage_error(tmp_path, capsys, dtype, slope):
    """A new user's finding: an int8 slope of 1000 was wrapped to -24 (and failed the in-place
    check), a uint8 one of -3 to 253 (and passed), as acl.create_scalar refuses them."""
    path = write_json(tmp_path, json_case(0, "fp32", (2, 3), [-1, 1], [-1, 1], slope, dtype))
    assert cli.main(["verify", str(path)]) == 2
    info = np.iinfo(dtype)
    assert f"case 0: negativeSlope is {dtype} [{info.min}, {info.max}], which cannot hold {slope}" in \
        capsys.readouterr().err


@pytest.mark.parametrize("slope", [0.7, -0.5, [0.7], [0.7, 0.7]])
def test_integer_scalar_constant_that_is_no_integer_is_a_usage_error(tmp_path, capsys, slope):
    """(A tester) an int32 slope of 0.7 was truncated to 0 and the case passed (-0.5 too), while
    the range [0.2, 0.7] was refused as holding no integer: a constant is refused the same way."""
    path = write_json(tmp_path, json_case(0, "fp32", (2, 3), [-1, 1], [-1, 1], slope, "int32"))
    assert cli.main(["verify", str(path)]) == 2
    value = slope[0] if isinstance(slope, list) else slope
    assert (f"case 0: negativeSlope is int32, and its value {value} is no integer (the cast would truncate it)"
            in capsys.readouterr().err)


def test_a_file_given_twice_runs_once_with_a_note(tmp_path, monkeypatch, capsys):
    """(A new user) ``verify F F`` ran F's cases twice, counted twice in the summary and the JSON
    (a glob and a name, ``cases/*.csv cases/x.csv``, give a file twice unseen): it runs once, and
    a stderr line says so, naming the path given again; ``./F`` is F too."""
    csv_path = small_files(tmp_path)[0]
    out = tmp_path / "results.json"
    monkeypatch.chdir(tmp_path)
    assert run_verify(csv_path, csv_path, f"./{csv_path.name}", "--json", out) == 0
    captured = capsys.readouterr()
    assert captured.out.count("(3 cases)") == 1 and captured.out.count("hardtanh_f32_swapped") == 1, captured.out
    assert "3 cases:" in captured.out and len(json.loads(out.read_text())["cases"]) == 3
    assert captured.err == (f"opsnn verify: note: {str(csv_path)!r} is given twice; its cases run once\n"
                            f"opsnn verify: note: './{csv_path.name}' is the file {str(csv_path)!r} again; "
                            "its cases run once\n")


def test_a_hard_link_to_a_file_given_runs_once_with_a_note(tmp_path, capsys):
    """(A breaker) a case file and a hard link to it resolve to two paths: given both, its cases
    ran twice, counted twice. The same file (device and inode) runs once, with the note."""
    csv_path = small_files(tmp_path)[0]
    link = tmp_path / "linked.csv"
    os.link(csv_path, link)
    out = tmp_path / "results.json"
    assert run_verify(csv_path, link, "--json", out) == 0
    captured = capsys.readouterr()
    assert captured.out.count("(3 cases)") == 1 and len(json.loads(out.read_text())["cases"]) == 3
    assert captured.err == (f"opsnn verify: note: {str(link)!r} is the file {str(csv_path)!r} again; "
                            "its cases run once\n")


def test_two_files_of_inode_zero_both_run(tmp_path, monkeypatch, capsys):
    """Some filesystems give every file inode 0: two files there are not taken for one."""
    csv_path = small_files(tmp_path)[0]
    other = tmp_path / "other.csv"
    other.write_bytes(csv_path.read_bytes())
    stat = os.stat

    def inode_zero(path, *args, **kwargs):
        got = stat(path, *args, **kwargs)
        return os.stat_result((got.st_mode, 0, 0, *got[3:]))

    monkeypatch.setattr(os, "stat", inode_zero)
    out = tmp_path / "results.json"
    assert run_verify(csv_path, other, "--json", out) == 0
    captured = capsys.readouterr()
    assert len(json.loads(out.read_text())["cases"]) == 6 and captured.err == ""

def test_a_missing_file_given_twice_is_told_missing_alone(tmp_path, monkeypatch, capsys):
    """(A breaker) ``verify F ./F`` with no F said first that './F' is the file 'F' again, its
    cases run once, then that F is missing: a note about cases of a file that is not there. A
    path that names no regular file gets no note; its reader says what is there."""
    monkeypatch.chdir(tmp_path)
    assert cli.main(["verify", "ttk_kernel_gone_st.csv", "./ttk_kernel_gone_st.csv"]) == 2
    assert capsys.readouterr().err == ("opsnn verify: error: ttk_kernel_gone_st.csv: no such file; expected a ttk "
                                       "kernel ST csv case file\n")


def test_kernel_rows_the_kernel_or_soc_would_not_take_run_with_a_note(tmp_path, capsys):
    """(A tester) kernel rows run through aclnn's casts, so a leaky_relu_grad row of float16 and
    float32 inputs, or of float32 inputs into a float16 output, passed although ops-nn's
    LeakyReluGradTiling refuses both (its def has a binary for one dtype throughout); and a row's
    soc_series was ignored. They still run (the aclnn call does take them) with a note saying so."""
    base = csv_row("same", "leaky_relu_grad", "float32", (4,), "{'negative_slope': 0.1}", "((-1, 1),)")
    mixed = base.replace("same,", "mixed,").replace("\"('float32', 'float32')\"", "\"('float16', 'float32')\"", 1)
    narrow = base.replace("same,", "narrow,").replace("\"('float32',)\"", "\"('float16',)\"", 1)
    soc = base.replace("same,", "soc,").removesuffix(",") + ",Ascend310P"
    path = write_csv(tmp_path, base, mixed, narrow, soc)
    out, dump = tmp_path / "r.json", tmp_path / "d"
    assert run_verify(path, "--json", out, "--dump", dump) == 0
    cases = json.loads(out.read_text())["cases"]
    assert [c["status"] for c in cases] == ["PASS"] * 4
    refused = ("the LeakyReluGrad kernel itself refuses {} (its def's binaries: BF16,BF16,BF16 | "
               "FLOAT16,FLOAT16,FLOAT16 | FLOAT,FLOAT,FLOAT); the row runs as aclnnLeakyReluBackward")
    assert [c["note"] for c in cases] == [
        "", refused.format("FLOAT16, FLOAT -> FLOAT"), refused.format("FLOAT, FLOAT -> FLOAT16"),
        "soc_series names Ascend310P; run on Ascend910B (--soc picks the SoC)"]
    text = " ".join(capsys.readouterr().out.split())
    assert "the LeakyReluGrad kernel itself refuses" in text and "soc_series names Ascend310P" in text
    manifest = json.loads((dump / path.name / "0001_mixed" / "case.json").read_text())
    assert manifest["verdict"]["note"] == refused.format("FLOAT16, FLOAT -> FLOAT")
    assert run_verify(path, "--json", out, "--soc", "Ascend310P", "--cases", "soc") == 0
    assert json.loads(out.read_text())["cases"][0]["note"] == ""


def test_empty_cases_numpy_cannot_hold_are_skipped_and_dims_past_int64_refused(tmp_path, capsys):
    """A breaker: [2**63 - 1, 0] (which the aclnn API takes) and [0, 2**62, 2**62] FAILed with
    "internal error: ValueError: array is too big", and [2**64, 0] with "Maximum allowed
    dimension exceeded"."""
    path = write_json(tmp_path, json_case(0, "fp32", (2**63 - 1, 0), [-1, 1], 8, 1),
                      json_case(1, "fp32", (0, 2**62, 2**62), [-1, 1], 8, 1))
    assert run_verify(path, "--json", tmp_path / "r.json") == 5  # (no case verified)
    reasons = [c["reason"] for c in json.loads((tmp_path / "r.json").read_text())["cases"]]
    assert [r.split(" (")[0] for r in reasons] == [
        "NumPy cannot hold gradOutput's empty shape [9223372036854775807, 0]",
        "NumPy cannot hold gradOutput's empty shape [0, 4611686018427387904, 4611686018427387904]"]
    assert cli.main(["verify", str(write_json(tmp_path, json_case(0, "fp32", (2**64, 0), [-1, 1], 8, 1)))]) == 2
    assert ("case 0: gradOutput has shape [18446744073709551616, 0]; dims must be non-negative integers up to "
            "2**63 - 1 (an aclTensor's dims are int64)") in capsys.readouterr().err


def test_case_over_max_elements_is_skipped(tmp_path, capsys):
    out = tmp_path / "results.json"
    assert run_verify(*small_files(tmp_path), "--max-elements", "50", "--json", out) == 0
    skipped = [c for c in json.loads(out.read_text())["cases"] if c["status"] == "SKIP"]
    assert {c["name"] for c in skipped} == {"leaky_f16", "hardtanh_bf16"}
    assert all("--max-elements 50" in c["reason"] for c in skipped)
    assert "skipped" in capsys.readouterr().out


def test_a_run_that_verifies_no_case_exits_5(tmp_path, capsys):
    """(A CI user) a run whose every case was skipped (each past --max-elements, or each of an
    operator the --soc has no kernel for) exited 0, so a CI job that verified nothing passed. It
    exits 5, pytest's status for a run of no test, with a line saying why (the table, summary
    and --json as before); one case verified beside the skipped keeps 0, a FAIL beside them 1."""
    files = small_files(tmp_path)
    out = tmp_path / "results.json"
    capsys.readouterr()
    assert run_verify(*files, "--max-elements", "5", "--json", out) == 5  # the smallest case: 6 elements
    report = json.loads(out.read_text())
    assert (report["summary"]["SKIP"], report["summary"]["total"]) == (6, 6)
    captured = capsys.readouterr()
    assert "6 cases: 0 passed (0 bit-exact), 0 documented differences, 6 skipped, 0 failed" in captured.out
    assert captured.err == ("opsnn verify: no case verified: all 6 cases skipped (the table gives each reason); "
                            "exit status 5, not 0: a run that checked nothing is no pass\n")
    assert run_verify(files[1], "--soc", "Ascend310B") == 5  # (LeakyReluBackward only: no kernel there)
    assert capsys.readouterr().err.startswith("opsnn verify: no case verified: all 3 cases skipped")
    assert run_verify(*files, "--max-elements", "6", "--json", out) == 0
    assert [c["status"] for c in json.loads(out.read_text())["cases"]].count("PASS") == 1
    assert capsys.readouterr().err == ""
    assert cli.main(["verify", str(files[1]), "--cases", "2", "--max-elements", "5"]) == 5
    refused = write_json(tmp_path, json_case(0, "fp32", (2,), [-1, 1], [-1, 1], -1, "fp32", True),
                         json_case(1, "fp32", (20,), [-1, 1], [-1, 1], 1))
    assert run_verify(refused, "--max-elements", "10") == 1  # a FAIL (161002) and a SKIP
    parser = argparse.ArgumentParser()
    command.add_arguments(parser)
    assert "; 5 every case skipped (nothing verified);" in " ".join(parser.format_help().split())


@pytest.mark.parametrize("text, words", [("1.9", "expected a whole number of elements, got '1.9'"),
                                         ("2.55e1", "expected a whole number of elements, got '2.55e1'"),
                                         ("0.5", "expected a whole number of elements, got '0.5'")])
def test_a_fractional_max_elements_is_a_usage_error(capsys, text, words):
    """(A breaker) --max-elements 1.9 ran as 1 and 0.5 was refused as "must be at least 1", the
    fraction cut off unsaid; 1.2e8 (the default's spelling) is a whole number and stays."""
    with pytest.raises(SystemExit) as exited:
        run_verify("x.json", "--max-elements", text)
    assert exited.value.code == 2 and words in capsys.readouterr().err
    assert command._positive_count("1.2e8") == 120_000_000


@pytest.mark.parametrize("text", ["1e309", "1e400", "+2.5E99999", "1e99999999999999999999", "1" * 400])
def test_a_max_elements_past_its_range_says_the_range(text):
    """(A breaker) a count past 1e308 was "expected a number of elements", as if it were none, and
    1e99999999999999999999, past what Decimal reads, the same, where every other count option
    says what it takes: each says its top."""
    with pytest.raises(argparse.ArgumentTypeError) as err:
        command._positive_count(text)
    assert str(err.value) == (f"expected a number of elements, got {text!r} (below 1e309: float64's range, far past "
                              "any case's size)")
    assert command._positive_count("9" * 309) == 10**309 - 1


@pytest.mark.parametrize("text, said", [
    ("-1e309", "expected an integer >= 1"), ("0e309", "expected an integer >= 1"),
    ("-1e99999999999999999999", "expected an integer >= 1"), ("0.0e99999999999999999999", "expected an integer >= 1"),
    ("1e-99999999999999999999", "expected a whole number of elements"),
])
def test_a_max_elements_past_the_range_that_is_not_positive_or_whole_is_told_so(text, said):
    """(A regression breaker) past 1e308, or past what Decimal reads, a number not positive or not
    whole was "expected a number of elements", as if none, where -1e308, 0 and 0.5 are told what
    they are: the range is checked after the sign and the fraction, the same refusal at any size."""
    with pytest.raises(argparse.ArgumentTypeError) as err:
        command._positive_count(text)
    assert str(err.value) == f"{said}, got {text!r}"


def test_max_elements_is_read_exactly_not_through_a_float():
    """(A breaker) --max-elements was read through float(): 100.0000000000000001, no whole number,
    rounded to 100.0 and ran as 100, and 9007199254740993 ran as 9007199254740992 (float64 has
    53 bits). The text is read exactly: a fraction however small is refused, an integer kept as
    written; 1.2e8, 1_000, ' 100 ' and 1e20 stay whole numbers, nan / inf / 1e400 no number."""
    with pytest.raises(argparse.ArgumentTypeError) as err:
        command._positive_count("100.0000000000000001")
    assert str(err.value) == "expected a whole number of elements, got '100.0000000000000001'"
    assert command._positive_count("9007199254740993") == 9007199254740993
    read = {text: command._positive_count(text) for text in ("1.2e8", "1_000", " 100 ", "1e20", "+5", "5.")}
    assert read == {"1.2e8": 120_000_000, "1_000": 1000, " 100 ": 100, "1e20": 10**20, "+5": 5, "5.": 5}
    assert all(type(v) is int for v in read.values())
    for text in ("nan", "inf", "0x10", ""):
        with pytest.raises(argparse.ArgumentTypeError) as err:
            command._positive_count(text)
        assert str(err.value) == f"expected a number of elements, got {text!r}"
    for text in ("0", "-1", "-0"):
        with pytest.raises(argparse.ArgumentTypeError) as err:
            command._positive_count(text)
        # (a new user) "must be at least 1", where every other count option says this
        assert str(err.value) == f"expected an integer >= 1, got {text!r}"


def test_case_names_holding_markup_run_and_print_as_written(tmp_path):
    """(A breaker) a case name is the file's text: ``case[/bad]`` reached Rich as markup, in the
    progress line and the table, and the run ended in a MarkupError traceback (exit 1, no
    --json); ``[red]x[/red]`` showed as x. Both run and print as written."""
    failing = csv_row("case[/bad]", "leaky_relu_grad", "float32", (2, 3), "{'negative_slope': 0.1}", "((-1, 1),)")
    failing = failing.replace('"((2, 3), (2, 3))"', '"((2, 4), (2, 3))"', 1)  # input_ori_shapes only
    failing = failing.replace('"((2, 3), (2, 3))"', '"((2, 4), (2, 3))"', 1)  # input_shapes: no broadcast
    path = write_csv(tmp_path, failing, csv_row("[red]x[/red]", "leaky_relu_grad", "float32", (2, 3),
                                                "{'negative_slope': 0.1}", "((-1, 1),)"))
    out = tmp_path / "results.json"
    # (a process of its own: Rich draws the progress line, which read the name, when its output is
    # no terminal too, and not under pytest's capture)
    done = subprocess.run([sys.executable, "-m", "opsnn", "verify", str(path), "--json", str(out)],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    report = json.loads(out.read_text())
    assert [(c["name"], c["status"]) for c in report["cases"]] == [("case[/bad]", "FAIL"), ("[red]x[/red]", "PASS")]
    printed = done.stdout
    assert "│ case[/bad] " in printed and "│ [red]x[/red] " in printed, printed
    assert "FAIL ttk_kernel_test_st.csv #0 case[/bad]: aclnnLeakyReluBackwardGetWorkspaceSize returned 161002" in printed


def test_case_beyond_the_hosts_available_memory_is_skipped(tmp_path, monkeypatch):
    """A case under --max-elements whose arrays the host cannot hold now (a smaller host than the
    default is sized for, or a larger --max-elements) was made anyway (Linux overcommits) and the
    out-of-memory killer ended the whole run as they filled; it is skipped, saying so, and where
    the available memory cannot be read every case runs as before."""
    from opsnn._core import memory

    out = tmp_path / "results.json"
    monkeypatch.setattr(memory, "host_available", lambda: 65 * command.CASE_BYTES_PER_ELEMENT - 1)
    assert run_verify(*small_files(tmp_path), "--json", out) == 0
    skipped = {c["name"]: c["reason"] for c in json.loads(out.read_text())["cases"] if c["status"] == "SKIP"}
    assert skipped == {"leaky_f16": "the case (65 elements) needs ~5200 bytes of host memory, more than the "
                                    "5199 bytes available now"}, skipped
    monkeypatch.setattr(memory, "host_available", lambda: None)
    assert run_verify(*small_files(tmp_path), "--json", out) == 0
    assert not [c for c in json.loads(out.read_text())["cases"] if c["status"] == "SKIP"]


@pytest.mark.parametrize("golden", ["reference", "torch"])
def test_injected_wrong_result_fails(tmp_path, monkeypatch, capsys, golden):
    if golden == "torch":
        pytest.importorskip("torch")
    real = command.run_aclnn

    def sign_flipped(*args):
        result = real(*args)
        bits = result.view(f"u{result.dtype.itemsize}")
        bits ^= bits.dtype.type(1 << (8 * result.dtype.itemsize - 1))
        return result

    monkeypatch.setattr(command, "run_aclnn", sign_flipped)
    out = tmp_path / "results.json"
    assert run_verify(*small_files(tmp_path), "--cases", "0", "--golden", golden, "--json", out) == 1
    statuses = [c["status"] for c in json.loads(out.read_text())["cases"]]
    assert statuses == ["FAIL", "FAIL"]
    assert "FAIL" in capsys.readouterr().out


def test_missing_operator_is_skipped(tmp_path, monkeypatch):
    monkeypatch.delattr(aclnn, "aclnnLeakyReluBackwardGetWorkspaceSize")
    out = tmp_path / "results.json"
    assert run_verify(*small_files(tmp_path), "--json", out) == 0
    reasons = {c["name"]: c["reason"] for c in json.loads(out.read_text())["cases"] if c["status"] == "SKIP"}
    assert len(reasons) == 4 and all("operator not implemented" in r for r in reasons.values())


def test_bf16_case_skipped_on_soc_without_bf16(tmp_path):
    """A case whose BF16 tensors or scalars the --soc's dtype lists refuse (its aclnn call would
    return 161002) is a BF16-capable SoC's: a SKIP naming those arguments and the --soc values that
    run it, also a float32 case whose only BF16 is its slope (a tester met "needs a BF16-capable
    SoC" on fp32/fp64 rows unexplained). A BF16 argument the aclnn call does not check there runs,
    as the call does: LeakyRelu's slope, LeakyReluBackward's out."""
    out = tmp_path / "results.json"
    forward = tmp_path / "atk_aclnnLeakyRelu.json"
    forward.write_text(json.dumps([{"id": 0, "aclnn_name": "LeakyRelu", "inputs": [
        {"name": "x", "type": "tensor", "dtype": "fp32", "shape": [5], "range_values": [-7, 7]},
        {"name": "a", "type": "scalar", "dtype": "bf16", "range_values": 0.25}]}]))
    bf16_out = tmp_path / "out" / "ttk_kernel_test_st.csv"
    bf16_out.parent.mkdir()
    write_csv(bf16_out.parent, csv_row("leaky_f32_to_bf16", "leaky_relu_grad", "float32", (6,),
                                       "{'negative_slope': 0.5}", "((-1, 1),)").replace("('float32',)", "('bfloat16',)"))
    assert run_verify(*small_files(tmp_path), forward, bf16_out, "--soc", "Ascend910", "--json", out) == 0
    cases = json.loads(out.read_text())["cases"]
    skipped = {c["name"]: c["reason"] for c in cases if c["status"] == "SKIP"}
    runs_it = "; --soc Ascend910B / Ascend910_93 / Ascend950 runs it"
    refuses = "needs a BF16-capable SoC: Ascend910's dtype lists lack BF16, so its aclnn call refuses the BF16 "
    assert skipped == {"hardtanh_bf16": refuses + "gradOutput, self, out (161002)" + runs_it,
                       "aclnnLeakyReluBackward_0": refuses + "negativeSlope (161002)" + runs_it,
                       "aclnnLeakyReluBackward_2": refuses + "gradOutput, self (161002)" + runs_it}
    ran = {c["name"]: c["status"] for c in cases if c["name"] in ("LeakyRelu_0", "leaky_f32_to_bf16")}
    assert ran == {"LeakyRelu_0": "PASS", "leaky_f32_to_bf16": "PASS"}
    assert [c["dtype"] for c in cases if c["name"] == "aclnnLeakyReluBackward_0"] == ["float32"]
    assert run_verify(*small_files(tmp_path), forward, bf16_out, "--soc", "Ascend910B", "--json", out) == 0
    assert {c["status"] for c in json.loads(out.read_text())["cases"]} == {"PASS"}


def test_case_of_an_operator_the_soc_has_no_kernel_for_is_skipped(tmp_path):
    """Ascend310B's product line has no LeakyReluGrad kernel: phase 1 returns 561003 there, and
    verify reports those cases as SKIP with that reason (exit 0), not as failures of opsnn;
    HardtanhBackward, which the line has, still runs, and an empty LeakyReluBackward case passes
    (CANN's empty fast path comes before the kernel lookup)."""
    files = small_files(tmp_path)
    write_json(tmp_path, json_case(0, "fp32", (3, 4), [-7, 7], [-7, 7], 0.5),
               json_case(1, "fp16", (2, 0), [-7, 7], [-7, 7], 0.5))
    out = tmp_path / "results.json"
    assert run_verify(*files, "--soc", "Ascend310B", "--json", out) == 0
    cases = {c["name"]: c for c in json.loads(out.read_text())["cases"]}
    leaky = ["leaky_f16", "aclnnLeakyReluBackward_0"]
    assert [cases[n]["status"] for n in leaky] == ["SKIP", "SKIP"]
    assert all(cases[n]["reason"] == "no LeakyReluGrad kernel on Ascend310B's product line: "
               "aclnnLeakyReluBackwardGetWorkspaceSize returns 561003 there" for n in leaky)
    assert cases["aclnnLeakyReluBackward_1"]["status"] == "PASS"
    assert cases["hardtanh_f32_swapped"]["status"] == "PASS"


@pytest.mark.parametrize("argv, env", [(["--soc", "Ascend910", "verify"], None),
                                       (["verify", "--soc", "Ascend910"], None),
                                       (["verify"], "Ascend910")], ids=["opsnn --soc", "verify --soc", "OPSNN_SOC"])
def test_cli_verify_runs_on_the_soc_asked_for(tmp_path, monkeypatch, capsys, argv, env):
    """The top-level --soc reaches verify (its own --soc no longer overwrites it with None)."""
    from opsnn import cli

    if env:
        monkeypatch.setenv("OPSNN_SOC", env)
    else:
        monkeypatch.delenv("OPSNN_SOC", raising=False)
    out = tmp_path / "results.json"
    assert cli.main([*argv, *map(str, small_files(tmp_path)), "--max-elements", "2000", "--json", str(out)]) == 0
    assert "(golden reference, SoC Ascend910, seed 0)" in capsys.readouterr().out
    report = json.loads(out.read_text())
    assert report["settings"]["soc"] == "Ascend910"
    skipped = {c["name"] for c in report["cases"] if c["status"] == "SKIP"}
    assert skipped == {"hardtanh_bf16", "aclnnLeakyReluBackward_0", "aclnnLeakyReluBackward_2"}


def test_cli_verify_empty_soc_is_a_usage_error_like_any_unknown_soc(tmp_path, monkeypatch, capsys):
    """(A breaker) `opsnn verify --soc ''` (an unset shell variable: --soc "$SOC") was read as no
    --soc and ran every case on the current profile, exit 0, while `--soc ' '` and any other
    unknown name are a usage error, as `opsnn tiling --soc ''` now is: the empty name is refused
    alike, naming it, before any case runs."""
    from opsnn import cli

    monkeypatch.setenv("OPSNN_SOC", "Ascend910")
    path = small_files(tmp_path)[0]
    for soc in ("", " "):
        assert cli.main(["verify", str(path), "--soc", soc]) == 2
        captured = capsys.readouterr()
        assert captured.out == ""
        assert captured.err.startswith(f"opsnn verify: error: unknown SoC {soc!r}; known: Ascend910, "), captured.err
    assert cli.main(["verify", str(path), "--soc", " ascend910_93 ", "--cases", "0"]) == 0
    assert "(golden reference, SoC Ascend910_93, seed 0)" in capsys.readouterr().out


def test_torch_golden_reports_documented_differences(tmp_path):
    """DECISIONS 8 (NaN self, SIMD-sized tensor) and DECISIONS 2 (double slope) are DOC, not FAIL."""
    pytest.importorskip("torch")
    csv_path = write_csv(tmp_path, csv_row("nan_self", "hardtanh_grad", "float32", (64,),
                                           "{'min_val': -1.0, 'max_val': 1.0}",
                                           "((nan, nan), (-1, 1))"))
    json_path = write_json(tmp_path, json_case(0, "fp64", (32,), [-7, 7], [-7, 7], 0.1, "fp64"))
    out = tmp_path / "results.json"
    assert run_verify(csv_path, json_path, "--golden", "torch", "--json", out) == 0
    reasons = [c["reason"] for c in json.loads(out.read_text())["cases"]]
    assert [r.split(":")[0] for r in reasons] == ["DECISIONS 8", "DECISIONS 2"]
    # decisions-forward F5: a float16 Hardtanh with an int8 -128 bound clamps at opbase's -0.0
    def scalar(name, dtype, value):
        return {"name": name, "type": "scalar", "required": True, "dtype": dtype, "shape": None, "range_values": value}
    hardtanh = tmp_path / "atk_aclnnHardtanh.json"
    hardtanh.write_text(json.dumps([{"id": 0, "name": "aclnnHardtanh", "aclnn_name": "Hardtanh", "inputs": [
        {"name": "self", "type": "tensor", "required": True, "dtype": "fp16", "shape": [64], "range_values": [-200, 5]},
        scalar("clipValueMin", "int8", -128), scalar("clipValueMax", "int8", 100)]}]))
    assert run_verify(hardtanh, "--golden", "torch", "--json", out) == 0
    reason = json.loads(out.read_text())["cases"][0]["reason"]
    assert reason.startswith("F5: opbase's fp16_t"), reason
    assert run_verify(hardtanh, "--json", out) == 0  # the golden models it: a plain pass
    assert json.loads(out.read_text())["cases"][0]["status"] == "PASS"
    # (a reviewer) only the elements that are such a bound are explained: a max that torch
    # rounds through float32 (1 + 2**-11 + 2**-40: 1.0 there, 1.001 here) is not F5's
    hardtanh.write_text(json.dumps([{"id": 0, "name": "aclnnHardtanh", "aclnn_name": "Hardtanh", "inputs": [
        {"name": "self", "type": "tensor", "required": True, "dtype": "fp16", "shape": [64], "range_values": [-200, 5]},
        scalar("clipValueMin", "int8", -128), scalar("clipValueMax", "fp64", 1 + 2**-11 + 2**-40)]}]))
    assert run_verify(hardtanh, "--golden", "torch", "--json", out) == 1
    assert json.loads(out.read_text())["cases"][0]["status"] == "FAIL"


@needs_cases
@pytest.mark.parametrize("spec, code, words", [
    ("99", 2, ["--cases '99'", "matches no case", "indexes 0-4"]),
    ("foo", 2, ["--cases 'foo'", "matches no case", "hardtanh_grad"]),
    ("3-1", 2, ["argument --cases", "reversed range '3-1'"]),
    ("0,7", 2, ["'7' matches no case"]),
])
def test_cli_cases_matching_nothing_is_a_usage_error(capsys, spec, code, words):
    """A typo in --cases must not give a green run of 0 cases."""
    from opsnn import cli

    files = [str(CASES / "ttk_kernel_hardtanh_grad_st.csv"), str(CASES / "ttk_kernel_leaky_relu_grad_st.csv")]
    try:
        got = cli.main(["verify", *files, "--cases", spec])
    except SystemExit as exc:  # argparse's own usage error
        got = exc.code
    captured = capsys.readouterr()
    assert got == code and "0 cases" not in captured.out, captured.out + captured.err
    for word in words:
        assert word in captured.err


def test_cli_unwritable_json_path_fails_before_running(tmp_path, monkeypatch, capsys):
    from opsnn import cli

    monkeypatch.setattr(command, "verify_case", lambda *a: pytest.fail("a case ran"))
    missing_dir = tmp_path / "no" / "such" / "dir" / "x.json"
    # (a new user) an I/O failure, not a usage error: exit 1, one line naming the option, the path
    # and the reason, as --dump's index on a full disk (it was exit 2, as a usage error)
    assert cli.main(["verify", *map(str, small_files(tmp_path)), "--json", str(missing_dir)]) == 1
    assert capsys.readouterr().err == (f"opsnn verify: --json: cannot write {str(missing_dir)!r}: "
                                       "No such file or directory\n")
    # a writable path is checked without leaving a file behind when the run stops early
    out = tmp_path / "results.json"
    assert cli.main(["verify", str(small_files(tmp_path)[0]), "--cases", "nope", "--json", str(out)]) == 2
    assert not out.exists()


def test_cli_json_that_cannot_be_written_at_the_end_is_one_line_and_exit_1(tmp_path, monkeypatch, capsys):
    """A disk that fills during the run: the tables and summary print, then one line naming
    --json, the path and the reason, exit 1 (it was exit 2 with "[Errno 28] No space left on
    device: ..."); opsnn compare's --json the same."""
    import errno

    from opsnn import cli

    case = write_json(tmp_path, json_case(0, "fp32", (2,), [-1, 1], [-1, 1], 1))
    out, dump = tmp_path / "results.json", tmp_path / "d"
    write_text = Path.write_text

    def disk_full(self, data, *args, **kwargs):
        if self.name != "results.json":
            return write_text(self, data, *args, **kwargs)
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Path, "write_text", disk_full)
    for argv in (["verify", str(case), "--dump", str(dump)], ["compare", str(dump)]):
        assert cli.main([*argv, "--json", str(out)]) == 1
        captured = capsys.readouterr()
        assert "1 case: 1 passed" in captured.out, captured.out
        assert captured.err == f"opsnn {argv[0]}: --json: cannot write {str(out)!r}: No space left on device\n"
        assert not out.exists()


def test_cli_json_path_never_replaces_a_case_file_or_a_foreign_file(tmp_path, monkeypatch, capsys):
    """--json written as tiling's switch (``--json FILE FILE2``) named a case file, which the
    results overwrote (a breaker): a case file of the run, or an existing file that is not a
    results file of opsnn verify, is a usage error before anything runs, the file unchanged; an
    earlier results file is replaced; ``--json -`` writes the JSON alone to stdout."""
    from opsnn import cli

    files = [str(f) for f in small_files(tmp_path)]
    kept = {f: Path(f).read_bytes() for f in files}
    notes = tmp_path / "notes.txt"
    notes.write_text("mine\n")
    monkeypatch.setattr(command, "verify_case", lambda *a: pytest.fail("a case ran"))
    for argv, says in (([*files, "--json", files[1]], "is one of the case files this run reads"),
                       (["--json", *files], "exists and is not a results file of opsnn verify"),
                       ([*files, "--json", str(notes)], "exists and is not a results file of opsnn verify")):
        assert cli.main(["verify", *argv]) == 2
        assert says in capsys.readouterr().err
    assert {f: Path(f).read_bytes() for f in files} == kept and notes.read_text() == "mine\n"
    monkeypatch.undo()
    out = tmp_path / "results.json"
    for _ in range(2):  # the second run replaces the first's results
        assert cli.main(["verify", files[0], "--json", str(out)]) == 0
    capsys.readouterr()
    assert cli.main(["verify", files[0], "--json", "-"]) == 0
    captured = capsys.readouterr()
    streamed, written = json.loads(captured.out), json.loads(out.read_text())
    assert streamed["settings"] == written["settings"] and len(streamed["cases"]) == 3
    assert [(c["name"], c["status"], c["max_abs"]) for c in streamed["cases"]] == \
        [(c["name"], c["status"], c["max_abs"]) for c in written["cases"]]
    assert "3 cases" in captured.err and not (Path.cwd() / "-").exists()
    assert cli.main(["verify", files[0], "--cases", "0"]) == 0
    assert "1 case: 1 passed (1 bit-exact), 0 documented differences" in capsys.readouterr().out


def _among_dumps_files(path: Path, dump: Path) -> str:
    """verify's refusal of a --json PATH among the files --dump DIR writes or empties."""
    return (f"opsnn verify: error: --json {str(path)!r} lies among the files --dump {str(dump)!r} writes (its "
            "index.json and each case file's folder, DIR/<file name>, whose case folders a run empties and "
            f"replaces); name a path elsewhere, such as {str(dump / 'results.json')!r}\n")


def test_cli_json_among_the_files_dump_writes_is_refused_before_the_run(tmp_path, monkeypatch, capsys):
    """(A breaker) ``--json`` into a case folder of the --dump folder passed the pre-run check,
    then the run emptied that folder and the results were lost at the end (exit 1); as the
    dump's index.json, they would replace the index. A --json PATH at DIR's index, in a case
    file's folder of this run or in one the earlier run's index lists (its case folders are
    emptied and removed) is a usage error before the run; beside the index, in DIR itself, or in
    a folder of the user's there (the leftovers breaker's DIR/notes/r.json had been refused as
    if a run emptied it), it is written."""
    case = write_json(tmp_path, json_case(0, "fp32", (2,), [-1, 1], [-1, 1], 1), json_case(1, "fp32", (3,), [-1, 1],
                                                                                        [-1, 1], 1))
    dump = tmp_path / "d"
    assert run_verify(case, "--dump", dump) == 0
    capsys.readouterr()
    kept = {p: p.read_bytes() for p in dump.rglob("*") if p.is_file()}
    folder = dump / case.name / "0001_aclnnLeakyReluBackward_1"
    monkeypatch.setattr(command, "verify_case", lambda *a: pytest.fail("a case ran"))
    for path in (folder / "results.json", dump / case.name / "results.json", dump / "index.json",
                 dump / case.name / "new" / "results.json"):
        assert cli.main(["verify", str(case), "--cases", "0", "--dump", str(dump), "--json", str(path)]) == 2
        assert capsys.readouterr().err == _among_dumps_files(path, dump)
    # a case file's folder the earlier index lists, not of this run: its case folders go
    other = tmp_path / "atk_other.json"
    other.write_text(case.read_text())
    path = dump / case.name / "results.json"
    assert cli.main(["verify", str(other), "--cases", "0", "--dump", str(dump), "--json", str(path)]) == 2
    assert capsys.readouterr().err == _among_dumps_files(path, dump)
    assert {p: p.read_bytes() for p in dump.rglob("*") if p.is_file()} == kept
    monkeypatch.undo()
    assert cli.main(["verify", str(case), "--cases", "0", "--dump", str(dump), "--json", str(dump / "results.json")]) == 0
    assert json.loads((dump / "results.json").read_text())["summary"]["total"] == 1
    assert json.loads((dump / "index.json").read_text())["cases"] == [f"{case.name}/0000_aclnnLeakyReluBackward_0"]
    (dump / "notes").mkdir()
    assert cli.main(["verify", str(case), "--cases", "1", "--dump", str(dump), "--json", str(dump / "notes" / "r.json")]) == 0
    assert json.loads((dump / "notes" / "r.json").read_text())["summary"]["total"] == 1
    assert json.loads((dump / "index.json").read_text())["cases"] == [f"{case.name}/0001_aclnnLeakyReluBackward_1"]


def test_cli_json_at_a_case_file_folder_of_the_dump_is_refused_before_the_run(tmp_path, monkeypatch, capsys):
    """(A regression breaker) ``--json DIR/<case file name>`` passed the pre-run check, then the
    run made that path the case file's folder and the results were lost at the end ("Is a
    directory", exit 1). A name in DIR that a case file's folder of this run takes is refused
    before the run, as the paths in it are; another case file's name is not."""
    case = write_json(tmp_path, json_case(0, "fp32", (2,), [-1, 1], [-1, 1], 1))
    dump = tmp_path / "d"
    monkeypatch.setattr(command, "verify_case", lambda *a: pytest.fail("a case ran"))
    for existing in (False, True):
        if existing:
            dump.mkdir()
        path = dump / case.name
        assert cli.main(["verify", str(case), "--cases", "0", "--dump", str(dump), "--json", str(path)]) == 2
        assert capsys.readouterr().err == _among_dumps_files(path, dump)
        assert not path.exists()
    monkeypatch.undo()
    other = dump / "atk_aclnnLeakyRelu.json"
    assert cli.main(["verify", str(case), "--cases", "0", "--dump", str(dump), "--json", str(other)]) == 0
    assert json.loads(other.read_text())["summary"]["total"] == 1


def test_cli_json_in_a_dump_folder_the_run_makes(tmp_path, capsys):
    """(A regression breaker) the --dump refusal suggests DIR/results.json, but with DIR not there
    yet the pre-run --json check failed ('No such file or directory', exit 1). A --json PATH in
    the --dump DIR the run makes is checked once DIR is made; where it then cannot be written,
    the folders made for it are removed, as a refused run leaves none behind."""
    case = write_json(tmp_path, json_case(0, "fp32", (2,), [-1, 1], [-1, 1], 1))
    dump = tmp_path / "a" / "d"
    out = dump / "results.json"
    assert cli.main(["verify", str(case), "--dump", str(dump), "--json", str(out)]) == 0
    assert json.loads(out.read_text())["summary"]["total"] == 1
    assert json.loads((dump / "index.json").read_text())["cases"] == [f"{case.name}/0000_aclnnLeakyReluBackward_0"]
    capsys.readouterr()
    long = dump.parent / "e" / ("x" * 300 + ".json")
    assert cli.main(["verify", str(case), "--dump", str(long.parent), "--json", str(long)]) == 2
    assert capsys.readouterr().err == f"opsnn verify: error: [Errno 36] File name too long: {str(long)!r}\n"
    assert not long.parent.exists() and dump.exists()


def test_cli_json_through_a_link_to_a_file_not_there_yet(tmp_path, capsys):
    """(A breaker, session 42) ``--json latest.json``, a link to ``run7.json`` not written yet:
    the writability probe removed the link and left an empty run7.json, even when the run was then
    refused; a run that went on wrote a plain file where the link was. The probe removes what it
    made, the link stays, and the results go through it."""
    from opsnn import cli

    case = str(small_files(tmp_path)[0])
    link = tmp_path / "latest.json"
    link.symlink_to("run7.json")
    (tmp_path / "afile").write_text("x")
    assert cli.main(["verify", case, "--json", str(link), "--dump", str(tmp_path / "afile")]) == 2  # refused later
    capsys.readouterr()
    assert link.is_symlink() and not (tmp_path / "run7.json").exists(), "nothing changed"
    assert cli.main(["verify", case, "--json", str(link)]) == 0
    capsys.readouterr()
    assert link.is_symlink() and json.loads((tmp_path / "run7.json").read_text())["cases"]
    (tmp_path / "into_nothing.json").symlink_to("missing/x.json")  # (a second breaker: the folder went unnamed)
    assert cli.main(["verify", case, "--json", str(tmp_path / "into_nothing.json")]) == 1
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"opsnn verify: --json: cannot write {str(tmp_path / 'into_nothing.json')!r}: No such file or directory "
        f"(a link to {os.path.realpath(tmp_path / 'missing' / 'x.json')!r})")


def test_cli_verify_help_prints_the_default_exactly(capsys):
    from opsnn import cli

    with pytest.raises(SystemExit):
        cli.main(["verify", "--help"])
    assert f"(default {command.DEFAULT_MAX_ELEMENTS}," in " ".join(capsys.readouterr().out.split())


@needs_cases
def test_readme_states_the_verify_skips_of_the_backward_files():
    """The README's verify paragraph: default and sizes of the skipped cases, from the files."""
    readme = " ".join((Path(__file__).resolve().parents[1] / "README.md").read_text().split())
    files = ["ttk_kernel_leaky_relu_grad_st.csv", "ttk_kernel_hardtanh_grad_st.csv", "atk_aclnnLeakyReluBackward.json"]
    sizes = sorted(c.numel for f in files for c in load_cases(CASES / f))
    big = [n for n in sizes if n > command.DEFAULT_MAX_ELEMENTS]
    assert command.DEFAULT_MAX_ELEMENTS == 1.2e8 and "(default 1.2e8 elements" in readme
    claim = f"{len(sizes) - len(big)} of {len(sizes)} cases pass, all bit-exact, {len(big)} skipped for size " \
            f"({big[0]:.3g} to {big[-1]:.3g} elements)".replace("e+0", "e")
    assert claim in readme, claim
