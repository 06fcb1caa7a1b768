"""``opsnn compare``: a board's results (here opsnn's own, some changed) against the goldens
``opsnn verify --dump`` wrote."""

from __future__ import annotations

import json
import math
import os
import shutil
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from test_verify import (
    DEEP_JSON,
    csv_row,
    json_case,
    run_verify,
    small_files,
    write_csv,
    write_json,
)

from opsnn import cli

LEAKY = "atk_aclnnLeakyReluBackward.json"


def dump_json_case(tmp_path: Path, *cases: dict) -> Path:
    dump = tmp_path / "d"
    assert run_verify(write_json(tmp_path, *cases), "--dump", dump) == 0
    return dump


def board_file(folder: Path, change=None, name: str = "npu.bin") -> np.ndarray:
    """The folder's output.bin copied to ``name`` as a board's result, ``change(array)`` applied;
    returns the golden."""
    manifest = json.loads((folder / "case.json").read_text())
    dtype, shape = np.dtype(manifest["output"]["numpy_dtype"]), manifest["output"]["shape"]
    board = np.fromfile(folder / "output.bin", dtype).reshape(shape)
    if change:
        change(board)
    board.tofile(folder / name)
    return np.fromfile(folder / "golden.bin", dtype).reshape(shape)


@pytest.fixture
def run_compare(capsys):
    """cli.main(["compare", ...]) with --json -: the exit status, the JSON (None when none was
    written) and what went to stderr (the tables, or the usage error)."""
    def run(*argv):
        capsys.readouterr()  # (what verify printed)
        code = cli.main(["compare", *map(str, argv), "--json", "-"])
        captured = capsys.readouterr()
        return code, json.loads(captured.out) if captured.out else None, captured.err
    return run


def test_a_dump_compared_with_its_own_output_passes_bit_exactly(tmp_path, run_compare):
    """Every case of the small files (float16, bfloat16, float32, float64; NaN, -0.0 and inf
    injected) is bit-exact against its own output.bin, from the root and from one case folder."""
    dump = tmp_path / "golden"
    assert run_verify(*small_files(tmp_path), "--dump", dump) == 0
    code, report, err = run_compare(dump)
    assert code == 0, err
    assert report["settings"] == {"dir": str(dump), "output": "output.bin", "golden": "reference",
                                  "soc": "Ascend910B", "seed": 0}
    assert {k: report["summary"][k] for k in ("PASS", "FAIL", "SKIP", "DOC", "total", "bit_exact")} == {
        "PASS": 6, "FAIL": 0, "SKIP": 0, "DOC": 0, "total": 6, "bit_exact": 6}
    index = json.loads((dump / "index.json").read_text())["cases"]
    assert [c["folder"] for c in report["cases"]] == [str(dump / c) for c in index]
    assert [(c["name"], c["dtype"], c["mismatches"], c["max_abs"]) for c in report["cases"]][:2] == [
        ("leaky_f16", "float16", 0, 0.0), ("hardtanh_bf16", "bfloat16", 0, 0.0)]
    assert "6 cases: 6 passed (6 bit-exact), 0 documented differences, 0 skipped, 0 failed" in err
    assert "LeakyReluBackward (3 cases)" in err  # (a table per dumped case file; its title wraps here)
    code, report, _ = run_compare(dump / index[1])  # one case folder
    assert code == 0 and [(c["name"], c["status"], c["bit_exact"]) for c in report["cases"]] == [
        ("hardtanh_bf16", "PASS", True)]


def test_a_changed_board_file_fails_naming_the_first_element_outside_the_tolerance(tmp_path, run_compare):
    dump = dump_json_case(tmp_path, json_case(0, "fp32", (4, 6), [-1, 1], [-1, 1], 1),
                          json_case(1, "fp32", (3,), [-1, 1], [-1, 1], 1))
    first, second = (dump / LEAKY / "0000_aclnnLeakyReluBackward_0", dump / LEAKY / "0001_aclnnLeakyReluBackward_1")

    def change(board):
        board[0, 1] *= np.float32(1 + 2**-20)  # inside single_bm's 2**-13: not bit-exact, no mismatch
        board[3, 0] = 5.0
        board[1, 2] = -3.0  # the first outside the tolerance in C order
    golden = board_file(first, change)
    board_file(second)
    code, report, err = run_compare(dump, "--output", "npu.bin")
    assert code == 1
    failed, passed = report["cases"]
    assert (passed["status"], passed["bit_exact"]) == ("PASS", True)
    assert failed["status"] == "FAIL" and failed["mismatches"] == 2 and failed["bit_exact"] is False
    assert failed["first_index"] == [1, 2]
    assert (failed["first_output"], failed["first_golden"]) == (-3.0, float(golden[1, 2]))
    assert failed["max_abs"] == max(abs(5.0 - float(golden[3, 0])), abs(-3.0 - float(golden[1, 2])))
    assert failed["reason"] == (f"2 of 24 elements outside rtol 0.00012207 / atol 0.00012207; the first at [1, 2]: "
                                f"-3.0 in {first / 'npu.bin'}, golden {float(golden[1, 2])!r}")
    assert f"FAIL {LEAKY} #0 aclnnLeakyReluBackward_0: {failed['reason']}\n" in err
    # (a new user) the full text had filled the note column too: piped, the table grew to 200
    # columns; it shows its start now, and the text is printed once, below the table
    table = [line for line in err.splitlines() if line[:1] in "┏┃┡│└"]
    assert max(map(len, table)) < 140, "\n".join(table)  # (it had been LOG_WIDTH, 200)
    row = next(line for line in table if "aclnnLeakyReluBackward_0" in line)
    assert row.split("│")[-2].strip() == "2 of 24 elements outside ... (below)"
    assert err.count(failed["reason"]) == 1
    assert "2 cases: 1 passed (1 bit-exact), 0 documented differences, 0 skipped, 1 failed" in err
    assert report["settings"]["output"] == "npu.bin"


def test_bfloat16_and_0d_results(tmp_path, run_compare):
    """A bfloat16 result is read as its 2-byte patterns and its values reported as numbers; a 0-d
    result's first mismatch is at index []."""
    dump = dump_json_case(tmp_path, json_case(0, "bf16", (2, 3), [-1, 1], [-1, 1], 1),
                          json_case(1, "fp32", (), [-1, 1], [-1, 1], 1))
    bf16, scalar = dump / LEAKY / "0000_aclnnLeakyReluBackward_0", dump / LEAKY / "0001_aclnnLeakyReluBackward_1"
    assert (bf16 / "output.bin").stat().st_size == 12 and (scalar / "output.bin").stat().st_size == 4
    board_file(bf16)
    board_file(scalar)
    code, report, _ = run_compare(dump, "--output", "npu.bin")
    assert code == 0 and [c["bit_exact"] for c in report["cases"]] == [True, True]
    assert [(c["dtype"], c["shape"], c["numel"]) for c in report["cases"]] == [("bfloat16", "2x3", 6),
                                                                            ("float32", "()", 1)]

    def bump(board):
        board[0, 1] = ml_dtypes.bfloat16(100.0)
    golden = board_file(bf16, bump)
    golden0 = board_file(scalar, lambda board: board.fill(7.5))
    code, report, _ = run_compare(dump, "--output", "npu.bin")
    assert code == 1
    assert [(c["status"], c["mismatches"], c["first_index"], c["first_output"], c["first_golden"])
            for c in report["cases"]] == [("FAIL", 1, [0, 1], 100.0, float(golden[0, 1])),
                                          ("FAIL", 1, [], 7.5, float(golden0))]


def test_a_board_file_of_another_size_or_missing_fails_that_case_only(tmp_path, run_compare):
    """(and a folder in the board file's place: a new user's folder of the very size wanted
    stopped the run with exit 2, IsADirectoryError, every other case's result lost)"""
    dump = dump_json_case(tmp_path, *(json_case(i, "fp32", (4, 6), [-1, 1], [-1, 1], 1) for i in range(4)))
    short, missing, whole, folder = sorted((dump / LEAKY).iterdir())
    board_file(short)
    (short / "npu.bin").write_bytes((short / "npu.bin").read_bytes()[:-3])
    board_file(whole)
    (folder / "npu.bin").mkdir()
    code, report, err = run_compare(dump, "--output", "npu.bin")
    assert code == 1
    assert [c["status"] for c in report["cases"]] == ["FAIL", "FAIL", "PASS", "FAIL"]
    assert report["cases"][3]["reason"] == (f"{folder / 'npu.bin'} is a folder, not a file (expected 96 bytes: "
                                            f"{folder / 'case.json'}: output.shape [4, 6] of float32)")
    # one case file's folder of the dump is a DIR too: its case folders
    code, by_file, _ = run_compare(dump / LEAKY, "--output", "npu.bin")
    assert code == 1 and by_file["cases"] == report["cases"]
    assert report["cases"][0]["reason"] == (f"{short / 'npu.bin'} holds 93 bytes, expected 96: {short / 'case.json'}: "
                                            "output.shape [4, 6] of float32, 4 bytes each")
    assert report["cases"][1]["reason"] == (f"{missing / 'npu.bin'}: No such file or directory (expected 96 bytes: "
                                            f"{missing / 'case.json'}: output.shape [4, 6] of float32)")
    assert report["cases"][1]["mismatches"] is None and report["summary"]["FAIL"] == 3
    assert "4 cases: 1 passed (1 bit-exact), 0 documented differences, 0 skipped, 3 failed" in err


def test_a_case_files_folder_is_compared_in_index_order_past_9999(tmp_path, run_compare):
    """(A breaker) a case file's folder (no index.json) was read in name order, which is the
    index order only while the 4-digit prefix holds: case 10000's folder, 10000_x, sorted before
    9999_x. The folders are taken by their index prefix, as numbers."""
    dump = dump_json_case(tmp_path, *(json_case(i, "fp32", (2,), [-1, 1], [-1, 1], 1) for i in range(3)))
    (dump / "index.json").unlink()  # (the folders are renamed below: the index would not list them)
    _, second, third = sorted((dump / LEAKY).iterdir())
    second.rename(second.with_name("9999_" + second.name.split("_", 1)[1]))
    third.rename(third.with_name("10000_" + third.name.split("_", 1)[1]))
    code, report, _ = run_compare(dump / LEAKY)
    assert code == 0
    assert [c["name"] for c in report["cases"]] == [f"aclnnLeakyReluBackward_{i}" for i in range(3)]


def test_a_case_dumped_without_a_golden_is_a_skip_with_its_verdict(tmp_path, run_compare):
    """(The aclnn call refused the case at dump time: selfIsResult with a negative slope, 161002.)"""
    dump = tmp_path / "d"
    assert run_verify(write_json(tmp_path, json_case(0, "fp32", (2,), [-1, 1], [-1, 1], -1, "fp32", True),
                                 json_case(1, "fp32", (2,), [-1, 1], [-1, 1], 1)), "--dump", dump) == 1
    refused = dump / LEAKY / "0000_aclnnLeakyReluBackward_0"
    assert not (refused / "golden.bin").exists()
    code, report, err = run_compare(dump)
    assert code == 0
    skipped, passed = report["cases"]
    assert (skipped["status"], passed["status"]) == ("SKIP", "PASS")
    assert skipped["reason"].startswith(f"no golden in {refused / 'case.json'}: the case failed before one was made "
                                        "when it was dumped (its verdict: FAIL ")
    assert "161002" in skipped["reason"] and skipped["bit_exact"] is None
    assert "2 cases: 1 passed (1 bit-exact), 0 documented differences, 1 skipped, 0 failed" in err


def test_a_dump_of_skips_only_compares_nothing_and_exits_5(tmp_path, run_compare, capsys):
    """(A CI user) a dump whose every case was dumped without a golden (each aclnn call failed)
    compared nothing and exited 0; it exits 5, as verify's run of skips does."""
    dump = tmp_path / "d"
    assert run_verify(write_json(tmp_path, json_case(0, "fp32", (2,), [-1, 1], [-1, 1], -1, "fp32", True)),
                      "--dump", dump) == 1
    code, report, err = run_compare(dump)
    assert code == 5 and [c["status"] for c in report["cases"]] == ["SKIP"]
    assert err.endswith("opsnn compare: no case compared: its 1 case skipped (the table gives each reason); "
                        "exit status 5, not 0: a run that checked nothing is no pass\n"), err
    with pytest.raises(SystemExit):
        cli.main(["compare", "--help"])
    assert ("5 nothing compared: every case skipped (dumped without a golden), or the dump lists no case (its "
            "verify run dumped none)") in " ".join(
        capsys.readouterr().out.split())


def test_a_torch_golden_difference_a_decision_explains_is_doc(tmp_path, run_compare):
    """As verify labels it: DECISIONS 8 (NaN self) and DECISIONS 2 (double slope), not FAIL."""
    pytest.importorskip("torch")
    csv_path = write_csv(tmp_path, csv_row("nan_self", "hardtanh_grad", "float32", (64,),
                                           "{'min_val': -1.0, 'max_val': 1.0}", "((nan, nan), (-1, 1))"))
    json_path = write_json(tmp_path, json_case(0, "fp64", (32,), [-7, 7], [-7, 7], 0.1, "fp64"))
    dump = tmp_path / "d"
    assert run_verify(csv_path, json_path, "--golden", "torch", "--dump", dump) == 0
    code, report, err = run_compare(dump)
    assert code == 0
    assert [(c["status"], c["reason"].split(":")[0]) for c in report["cases"]] == [
        ("DOC", "DECISIONS 8"), ("DOC", "DECISIONS 2")]
    assert report["settings"]["golden"] == "torch" and "2 documented differences" in err


@pytest.mark.parametrize("damage, words", [
    (lambda d, f: (d / "index.json").unlink(),
     "{d} holds neither index.json (a folder opsnn verify --dump DIR wrote), case.json (one of its case folders) "
     "nor case folders (one case file's folder)"),
    (lambda d, f: (d / "index.json").write_text("[1]"), "{d}/index.json: expected an object whose 'cases' lists"),
    (lambda d, f: (f / "case.json").write_text("{"), "{f}/case.json: cannot read it as a case's manifest"),
    # (a breaker: these were RecursionError tracebacks, exit 1)
    (lambda d, f: (f / "case.json").write_text(DEEP_JSON),
     ("{f}/case.json: cannot read it as a case's manifest (its arrays and objects nest more than 100 levels deep "
      "(opsnn's JSON files nest a few; Python's JSON reader gives up near 1000))")),
    (lambda d, f: (d / "index.json").write_text(DEEP_JSON),
     ("{d}/index.json: cannot read it as a dump's index (its arrays and objects nest more than 100 levels deep "
      "(opsnn's JSON files nest a few; Python's JSON reader gives up near 1000))")),
    (lambda d, f: (f / "golden.bin").write_bytes(b"1234"),
     "{f}/golden.bin holds 4 bytes, expected 8: {f}/case.json: golden.shape [2] of float32"),
    (lambda d, f: _edit(f, tolerance={"rtol": "x"}),
     '{f}/case.json: tolerance is {{"rtol": "x"}}; expected {{"rtol": R, "atol": A, "source": S}} of non-negative'),
    # (a breaker: the source alone decides bit-exact or within the bound, so an edited or missing
    # one silently compared an md5 case within a bound, -0.0 passing for 0.0)
    (lambda d, f: _edit(f, tolerance={"rtol": 0.0, "atol": 0.0, "source": "MD5"}),
     ('{f}/case.json: tolerance is {{"rtol": 0.0, "atol": 0.0, "source": "MD5"}}; expected {{"rtol": R, "atol": A, '
      '"source": S}} of non-negative finite numbers and S one of "md5", "exact", "precision_tolerances", '
      '"absolute_precision", "single_bm", "default" (as verify --dump writes it: "md5" and "exact" compare bits, '
      'the others within the bound)')),
    (lambda d, f: _edit(f, tolerance={"rtol": 0.0, "atol": 0.0}),
     '{f}/case.json: tolerance is {{"rtol": 0.0, "atol": 0.0}}; expected'),
    (lambda d, f: _edit(f, output=None), "{f}/case.json: output has no file, dtype, shape"),
    # (a breaker: a PASS whose golden was deleted or nulled was a SKIP, exit 0; only a FAIL verdict
    # of a call that failed, which made no result, goes without one)
    (lambda d, f: _edit(f, golden=None), "{f}/case.json: golden is null, with no file, yet its verdict is \"PASS\""),
    (lambda d, f: _edit(f, drop="golden"),
     ("{f}/case.json: golden is missing, with no file, yet its verdict is \"PASS\"; verify --dump writes the golden "
      "of every case whose aclnn call made a result")),
    (lambda d, f: _edit(f, golden={"source": "reference"}),
     '{f}/case.json: golden is {{"source": "reference"}}, with no file, yet its verdict is "PASS"'),
    (lambda d, f: _edit(f, golden=None, verdict={"status": "FAIL", "bit_exact": False, "mismatches": 1}),
     "yet its verdict is a FAIL that compared a result (mismatches: 1)"),
    (lambda d, f: _edit(f, golden=None, drop="verdict"), "golden is null, with no file, yet verdict is missing;"),
    (lambda d, f: _edit(f, golden=None, verdict="ok"), 'yet verdict is "ok"; verify --dump'),
    (lambda d, f: _edit(f, output={"file": "output.bin", "dtype": "ACL_FLOAT16", "shape": [4]}),
     "{f}/case.json: output is float16 [4], golden float32 [2]; expected the dtype and shape of both"),
    # (a breaker: an input file truncated or gone passed, exit 0: compare read inputs only to
    # explain a torch golden; their files are checked as the golden's are, without reading them)
    (lambda d, f: (f / "self.bin").write_bytes(b"12345"),
     "{f}/self.bin holds 5 bytes, expected 8: {f}/case.json: inputs.self.shape [2] of float32"),
    (lambda d, f: (f / "gradOutput.bin").unlink(),
     "{f}/gradOutput.bin: No such file or directory ({f}/case.json: inputs.gradOutput.file names it)"),
])
def test_a_damaged_dump_is_a_usage_error_naming_the_file(tmp_path, run_compare, damage, words):
    dump = dump_json_case(tmp_path, json_case(0, "fp32", (2,), [-1, 1], [-1, 1], 1))
    folder = dump / LEAKY / "0000_aclnnLeakyReluBackward_0"
    damage(dump, folder)
    code, report, err = run_compare(dump)
    assert code == 2 and report is None
    assert words.format(d=dump, f=folder) in err, err


NOTHING_DUMPED = ("opsnn compare: no case compared: {index} lists no case folder: the verify run that wrote it "
                  "dumped none (each case was skipped, or failed before its files were written: verify's table "
                  "gave each reason); exit status 5, not 0: a run that checked nothing is no pass\n")


def test_a_dump_whose_cases_could_not_be_written_says_so(tmp_path, run_compare, monkeypatch):
    """(A breaker) a dump whose every case failed to write (its folder a file, a full disk) was
    said to hold no case because "each was skipped"; the message now says what verify did. Nothing
    was compared: exit 5, as for a dump of skipped cases."""
    from opsnn import golden_files

    def disk_full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(golden_files, "write", disk_full)
    dump = tmp_path / "d"
    assert run_verify(write_json(tmp_path, json_case(0, "fp32", (2,), [-1, 1], [-1, 1], 1)), "--dump", dump) == 1
    code, report, err = run_compare(dump)
    assert code == 5 and report["cases"] == [] and report["summary"]["total"] == 0
    assert err.endswith(NOTHING_DUMPED.format(index=dump / "index.json")), err


def test_a_dump_of_skipped_cases_is_nothing_compared_as_verify_said(tmp_path, run_compare, monkeypatch):
    """(A breaker) verify --dump whose every case skipped exits 5 (nothing verified) and writes an
    index of no case; compare of it had been a usage error (2). It is the same verdict, 5, with
    the summary and --json of no case judged against what the index records (the index read
    once: its settings had been read again from the file); a DIR that is no dump stays a usage
    error."""
    dump = tmp_path / "d"
    path = write_json(tmp_path, json_case(0, "fp32", (2, 3), [-1, 1], [-1, 1], 1))
    assert run_verify(path, "--max-elements", 5, "--seed", 3, "--dump", dump) == 5
    assert json.loads((dump / "index.json").read_text())["cases"] == []
    code, report, err = run_compare(dump, "--output", "npu.bin")
    assert code == 5
    assert report["settings"] == {"dir": str(dump), "output": "npu.bin", "golden": "reference",
                                  "soc": "Ascend910B", "seed": 3}
    assert report["cases"] == [] and {k: report["summary"][k] for k in ("PASS", "FAIL", "SKIP", "DOC", "total")} == {
        "PASS": 0, "FAIL": 0, "SKIP": 0, "DOC": 0, "total": 0}
    assert "0 cases: 0 passed (0 bit-exact), 0 documented differences, 0 skipped, 0 failed" in err
    assert "(golden reference, SoC Ascend910B, seed 3)" in err
    assert err.endswith(NOTHING_DUMPED.format(index=dump / "index.json")), err
    # an index without the settings verify writes: each "not recorded"
    (dump / "index.json").write_text('{"cases": []}')
    reads = []
    read_text = Path.read_text
    monkeypatch.setattr(Path, "read_text", lambda path, *a, **k: reads.append(path) or read_text(path, *a, **k))
    code, report, err = run_compare(dump)
    assert code == 5 and "(golden not recorded, SoC not recorded, seed not recorded)" in err
    assert reads.count(dump / "index.json") == 1
    (dump / "index.json").unlink()
    code, report, err = run_compare(dump)
    assert code == 2 and report is None and f"{dump} holds neither index.json" in err


def test_a_redump_replaces_each_case_folder_whole_board_files_too(tmp_path, run_compare, capsys):
    """(A breaker) verify --dump removed only the files case.json named, so a board's npu.bin from
    the earlier run's inputs stayed beside the new golden and compare --output npu.bin judged a
    stale result against a golden it was never computed for. A re-dump empties each case folder
    it writes and removes the earlier index's case folders it does not (folders holding a
    case.json); files elsewhere under DIR, and a folder without case.json, are left."""
    path = write_json(tmp_path, *(json_case(i, "fp32", (2, 3), [-1, 1], [-1, 1], 1) for i in range(2)))
    dump = tmp_path / "d"
    assert run_verify(path, "--dump", dump) == 0
    first, second = (dump / LEAKY / f"000{i}_aclnnLeakyReluBackward_{i}" for i in range(2))
    for folder in (first, second):
        board_file(folder)
        (folder / "board").mkdir()
        (folder / "board" / "log.txt").write_text("run 1")
    (dump / LEAKY / "notes.txt").write_text("mine")
    (dump / "notes.txt").write_text("mine")
    other = dump / LEAKY / "0007_mine"  # (no case.json: not a case folder)
    other.mkdir()
    (other / "npu.bin").write_bytes(b"12")
    assert run_compare(dump, "--output", "npu.bin")[0] == 0
    capsys.readouterr()
    assert run_verify(path, "--seed", 1, "--cases", 0, "--dump", dump) == 0  # new inputs for case 0
    # what no dump wrote goes, but never unsaid: one line, paths below DIR (a user's board results),
    # computed from that run's inputs (not "the inputs this run replaced": case 1 is not rerun)
    names = [f"{LEAKY}/{folder.name}/{entry}" for folder in (first, second) for entry in ("board", "npu.bin")]
    assert capsys.readouterr().err.splitlines() == [(
        f"opsnn verify: --dump removed 4 entries no --dump wrote from the earlier run's case folders in {str(dump)!r}, "
        f"computed from that run's inputs: {', '.join(names[:3])} and 1 more")]
    assert sorted(p.name for p in first.iterdir()) == ["case.json", "golden.bin", "gradOutput.bin", "output.bin",
                                                        "self.bin"]
    assert not second.exists()
    assert (dump / LEAKY / "notes.txt").read_text() == "mine" and (dump / "notes.txt").read_text() == "mine"
    assert (other / "npu.bin").read_bytes() == b"12"
    code, report, _ = run_compare(dump, "--output", "npu.bin")
    assert code == 1 and [c["status"] for c in report["cases"]] == ["FAIL"]
    assert report["cases"][0]["reason"].startswith(f"{first / 'npu.bin'}: No such file or directory")


def test_what_a_redump_removed_is_said_when_its_report_cannot_be_written(tmp_path, monkeypatch, capsys):
    """(A regression breaker) a re-dump that removed a board's file, then failed to write its
    report (--json on a disk that filled during the run; a full or closed stdout alike) had
    ended with the write's refusal alone: the line naming what it removed was printed only
    after a report that ended. It is said whatever ends the report, before that line, as a
    refused probe's is."""
    from opsnn import results
    from opsnn.cli_files import OutputError

    path = write_json(tmp_path, json_case(0, "fp32", (2,), [-1, 1], [-1, 1], 1))
    dump = tmp_path / "d"
    assert run_verify(path, "--dump", dump) == 0
    folder = dump / LEAKY / "0000_aclnnLeakyReluBackward_0"
    board_file(folder)
    report_path = tmp_path / "r.json"

    def full(*args, **kwargs):
        raise OutputError("--json", report_path, OSError(28, "No space left on device"))

    monkeypatch.setattr(results, "write_json", full)
    capsys.readouterr()
    assert cli.main(["verify", str(path), "--dump", str(dump), "--json", str(report_path)]) == 1
    assert capsys.readouterr().err == (
        f"opsnn verify: --dump removed 1 entry no --dump wrote from the earlier run's case folders in {str(dump)!r}, "
        f"computed from that run's inputs: {LEAKY}/{folder.name}/npu.bin\n"
        f"opsnn verify: --json: cannot write {str(report_path)!r}: No space left on device\n")
    assert not (folder / "npu.bin").exists()


def test_a_case_folder_that_cannot_be_emptied_fails_its_case_or_the_run(tmp_path, monkeypatch, capsys):
    """A re-dump's case folder holding what the system will not remove (a board's folder of
    another user's files): an earlier index's folder is an I/O failure before the run (exit 1)
    naming it; a folder this run writes that the index does not list (its index lost) fails that
    case, the others still run and are reported (the OSError had ended the run as a usage
    error, exit 2, with no table). (A reviewer) what the re-dump had removed before the refusal
    (a board's file in another case folder) had gone unsaid, where every other re-dump names
    what it removed: the line is printed before the run's refusal and after the table."""

    path = write_json(tmp_path, *(json_case(i, "fp32", (2,), [-1, 1], [-1, 1], 1) for i in range(2)))
    dump = tmp_path / "d"
    assert run_verify(path, "--dump", dump) == 0
    first, second = (dump / LEAKY / f"000{i}_aclnnLeakyReluBackward_{i}" for i in range(2))
    board_file(first)
    (second / "zz_board").mkdir()  # (sorted after the case's own files: they go first)

    def refused(folder, *args, **kwargs):
        raise PermissionError(13, "Permission denied", str(folder / "x.bin"))

    monkeypatch.setattr(shutil, "rmtree", refused)
    capsys.readouterr()
    assert cli.main(["verify", str(path), "--dump", str(dump)]) == 1
    assert capsys.readouterr().err == (
        f"opsnn verify: --dump removed 1 entry no --dump wrote from the earlier run's case folders in {str(dump)!r}, "
        f"computed from that run's inputs: {LEAKY}/{first.name}/npu.bin\n"
        f"opsnn verify: --dump: cannot write into the folder {str(dump)!r}: cannot empty the earlier run's case "
        f"folder {str(second)!r}: Permission denied\n")
    assert not (first / "npu.bin").exists()
    # a folder this run writes, its index lost: the case fails, and the line still names the file
    (second / "npu.bin").write_bytes(b"12")
    (dump / "index.json").unlink()
    assert cli.main(["verify", str(path), "--dump", str(dump), "--json", str(tmp_path / "r.json")]) == 1
    report = json.loads((tmp_path / "r.json").read_text())
    assert [(c["status"], c["reason"]) for c in report["cases"]] == [
        ("PASS", ""), ("FAIL", (f"--dump: cannot empty the case's folder of an earlier run's files: "
                                f"{second / 'zz_board' / 'x.bin'}: Permission denied"))]
    assert capsys.readouterr().err.endswith(
        f"opsnn verify: --dump removed 1 entry no --dump wrote from the earlier run's case folders in {str(dump)!r}, "
        f"computed from that run's inputs: {LEAKY}/{second.name}/npu.bin\n")
    assert json.loads((dump / "index.json").read_text())["cases"] == [f"{LEAKY}/0000_aclnnLeakyReluBackward_0"]


def test_what_a_redump_removed_from_a_board_folder_before_it_stopped_is_said(tmp_path, monkeypatch, capsys):
    """(A reviewer) a board's folder whose removal stopped part way (shutil.rmtree refused by a
    file of it after removing others) had its removed files go unsaid: the line named only what
    went whole. Those it removed are named, a subfolder removed whole as one entry, before the
    refusal (an earlier index's folder) and after the table (a case's own, its index lost)."""

    path = write_json(tmp_path, json_case(0, "fp32", (2,), [-1, 1], [-1, 1], 1))
    dump = tmp_path / "d"
    folder = dump / LEAKY / "0000_aclnnLeakyReluBackward_0"
    board = folder / "board"
    rmtree = shutil.rmtree

    def stopped(tree, *args, **kwargs):  # removes a.txt and sub/ whole, then is refused b.txt
        (Path(tree) / "a.txt").unlink()
        rmtree(Path(tree) / "sub")
        raise PermissionError(13, "Permission denied", str(Path(tree) / "b.txt"))

    said = (f"opsnn verify: --dump removed 2 entries no --dump wrote from the earlier run's case folders in "
            f"{str(dump)!r}, computed from that run's inputs: {LEAKY}/{folder.name}/board/a.txt, "
            f"{LEAKY}/{folder.name}/board/sub\n")
    for index in (True, False):  # listed by the earlier index; the index lost
        rmtree(dump, ignore_errors=True)
        assert run_verify(path, "--dump", dump) == 0
        if not index:
            (dump / "index.json").unlink()
        for name in ("a.txt", "b.txt", "sub/c.txt"):
            (board / name).parent.mkdir(parents=True, exist_ok=True)
            (board / name).write_text("board")
        capsys.readouterr()
        with monkeypatch.context() as patch:
            patch.setattr(shutil, "rmtree", stopped)
            assert cli.main(["verify", str(path), "--dump", str(dump), "--json", str(tmp_path / "r.json")]) == 1
        err = capsys.readouterr().err
        if index:
            assert err == said + (f"opsnn verify: --dump: cannot write into the folder {str(dump)!r}: cannot empty "
                                  f"the earlier run's case folder {str(folder)!r}: Permission denied\n")
        else:
            assert err.endswith(said)
            assert [c["reason"] for c in json.loads((tmp_path / "r.json").read_text())["cases"]] == [
                f"--dump: cannot empty the case's folder of an earlier run's files: {board / 'b.txt'}: Permission denied"]
        assert sorted(p.relative_to(board).as_posix() for p in board.rglob("*")) == ["b.txt"]


def test_a_board_file_rmtree_refuses_is_named_by_its_path(tmp_path, monkeypatch):
    """(A regression breaker) shutil.rmtree removes a folder's files by the folder's descriptor,
    so the OSError of one it is refused names the file alone ('b.txt'): a re-dumped case's FAIL
    said 'cannot empty the case's folder of an earlier run's files: b.txt: Permission denied',
    not where b.txt is (the tests above refuse through a stand-in rmtree, with the whole path).
    The refusal names the file's path below the board's folder, whichever file is refused."""
    import os

    path = write_json(tmp_path, json_case(0, "fp32", (2,), [-1, 1], [-1, 1], 1))
    dump = tmp_path / "d"
    board = dump / LEAKY / "0000_aclnnLeakyReluBackward_0" / "board"
    assert run_verify(path, "--dump", dump) == 0
    (dump / "index.json").unlink()
    (board / "sub").mkdir(parents=True)
    (board / "sub" / "b.txt").write_text("board")
    unlink = os.unlink

    def refused(name, *args, **kwargs):  # (the tests may run as root, whom a chmod does not stop)
        if os.fspath(name).endswith("b.txt"):
            raise PermissionError(13, "Permission denied", name)
        return unlink(name, *args, **kwargs)

    monkeypatch.setattr(os, "unlink", refused)
    results = tmp_path / "r.json"
    assert cli.main(["verify", str(path), "--dump", str(dump), "--json", str(results)]) == 1
    assert [c["reason"] for c in json.loads(results.read_text())["cases"]] == [
        f"--dump: cannot empty the case's folder of an earlier run's files: {board / 'sub' / 'b.txt'}: Permission denied"]


def _edit(folder: Path, drop: str | None = None, **fields) -> None:
    """case.json with ``fields`` set, and the field ``drop`` removed."""
    path = folder / "case.json"
    manifest = json.loads(path.read_text())
    manifest.update(fields)
    manifest.pop(drop, None)
    path.write_text(json.dumps(manifest))


def test_usage_errors_before_anything_is_read(tmp_path, capsys):
    assert cli.main(["compare", str(tmp_path / "none")]) == 2
    assert f"{tmp_path / 'none'}: no such folder; expected a folder opsnn verify --dump wrote" in \
        capsys.readouterr().err
    (tmp_path / "file").write_text("x")
    assert cli.main(["compare", str(tmp_path / "file")]) == 2
    assert f"{tmp_path / 'file'}: not a folder" in capsys.readouterr().err
    for argv in (["--output", "../x.bin"], ["--output", ""], [], ["--soc", "Ascend910"]):
        with pytest.raises(SystemExit) as exc:
            cli.main(["compare", *([str(tmp_path)] if argv else [""]), *argv])
        assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "expected a file name in each case folder" in err and "--soc does not apply to compare" in err
    with pytest.raises(SystemExit):  # nor before it: each case is judged on the SoC it was dumped on
        cli.main(["--soc", "Ascend910", "compare", str(tmp_path)])
    assert "--soc does not apply to compare" in capsys.readouterr().err


def test_an_unknown_soc_variable_stops_neither_compare_nor_cache(tmp_path, capsys, monkeypatch):
    """compare judges each case on the SoC its case.json names, cache lists files and list names
    the operators, so an unknown $OPSNN_SOC, a usage error of the commands it concerns, no longer
    stops them (exit 2 before: the regression breakers'); run and describe, which show the
    emulated SoC's lists, still refuse it."""
    dump = dump_json_case(tmp_path, json_case(0, "fp32", (2,), [-1, 1], [-1, 1], 1))
    monkeypatch.setenv("OPSNN_SOC", "Ascend999")
    monkeypatch.setenv("OPSNN_CACHE_DIR", str(tmp_path / "cache"))
    assert cli.main(["compare", str(dump)]) == 0
    assert "1 case: 1 passed (1 bit-exact)" in capsys.readouterr().out
    assert cli.main(["cache"]) == 0
    assert "none yet" in capsys.readouterr().out
    assert cli.main(["list"]) == 0
    assert capsys.readouterr().out.startswith("aclnnLeakyReluBackward   leaky_relu_backward  kernel LeakyReluGrad ")
    for argv in (["run", "leaky_relu_backward", "--shape", "4"], ["describe", "leaky_relu"]):
        assert cli.main(argv) == 2
        assert "$OPSNN_SOC: unknown SoC 'Ascend999'" in capsys.readouterr().err


def test_json_never_replaces_a_foreign_file_and_replaces_an_earlier_results_file(tmp_path, capsys):
    dump = dump_json_case(tmp_path, json_case(0, "fp32", (2,), [-1, 1], [-1, 1], 1))
    notes = tmp_path / "notes.txt"
    notes.write_text("mine\n")
    case_json = dump / LEAKY / "0000_aclnnLeakyReluBackward_0" / "case.json"
    kept = case_json.read_text()
    for target, says in ((notes, "exists and is not a results file of opsnn verify or compare"),
                         (case_json, "is one of the case files this run reads")):
        assert cli.main(["compare", str(dump), "--json", str(target)]) == 2
        assert says in capsys.readouterr().err
    assert notes.read_text() == "mine\n" and case_json.read_text() == kept
    out = tmp_path / "results.json"
    assert run_verify(write_json(tmp_path, json_case(0, "fp32", (2,), [-1, 1], [-1, 1], 1)), "--json", out) == 0
    assert cli.main(["compare", str(dump), "--json", str(out)]) == 0  # verify's results file: replaced
    written = json.loads(out.read_text())
    assert written["settings"]["dir"] == str(dump) and written["cases"][0]["status"] == "PASS"
    assert "1 case: 1 passed (1 bit-exact)" in capsys.readouterr().out


def test_hand_edited_dumps_and_odd_board_files(tmp_path, run_compare, capsys):
    """(a breaker) --json onto an empty .bin of the dump replaced it; a FIFO as the board file
    was called a folder; an int tolerance too large for a float was a traceback; an index
    listing folders outside DIR, or one twice, was read and counted; the summary gave the first
    folder's golden / SoC / seed for all."""
    dump = dump_json_case(tmp_path, json_case(0, "fp32", (0,), [-1, 1], [-1, 1], 1),
                          json_case(1, "fp32", (4,), [-1, 1], [-1, 1], 1))
    empty, four = sorted((dump / LEAKY).iterdir())
    assert (empty / "golden.bin").stat().st_size == 0
    assert cli.main(["compare", str(dump), "--json", str(empty / "golden.bin")]) == 2
    assert "is one of the case files this run reads" in capsys.readouterr().err
    assert (empty / "golden.bin").stat().st_size == 0
    os.mkfifo(four / "fifo.bin")
    code, report, _ = run_compare(four, "--output", "fifo.bin")
    assert code == 1 and report["cases"][0]["reason"].startswith(
        f"{four / 'fifo.bin'} is not a regular file (a FIFO, socket or device) (expected 16 bytes")
    _edit(four, seed=7, tolerance={"rtol": 1e-4, "atol": 10**400})
    code, _, err = run_compare(four)
    assert code == 2 and "tolerance is" in err and "expected {\"rtol\": R, \"atol\": A, \"source\": S} of" in err
    _edit(four, tolerance={"rtol": 1e-4, "atol": 1e-4, "source": "single_bm"})
    code, report, err = run_compare(dump)  # seeds 0 and 7: "mixed"
    assert code == 0 and report["settings"]["seed"] == "mixed" and "seed mixed)" in err
    index = dump / "index.json"
    listed = json.loads(index.read_text())
    index.write_text(json.dumps({**listed, "cases": listed["cases"] + listed["cases"][:1]}))
    code, report, _ = run_compare(dump)
    assert code == 0 and len(report["cases"]) == 2  # a folder listed twice is one case
    index.write_text(json.dumps({**listed, "cases": [*listed["cases"], str(tmp_path)]}))
    code, _, err = run_compare(dump)
    assert code == 2 and f"{index} lists case folders outside {dump}: {tmp_path}" in err


def test_a_complex_golden_is_a_damaged_dump_not_a_pass(tmp_path, run_compare):
    """(A breaker) case.json edited to a complex golden and output (float32 [4] read as complex64
    [2]) was compared through float64, which drops the imaginary part: a board result whose
    imaginary parts differ passed (a ComplexWarning aside). opsnn compares real results only
    (verify makes no complex case), so such a case.json is refused, naming the field."""
    dump = dump_json_case(tmp_path, json_case(0, "fp32", (4,), [-1, 1], [-1, 1], 1))
    (folder,) = (dump / LEAKY).iterdir()
    entry = {"dtype": "ACL_COMPLEX64", "numpy_dtype": "complex64", "shape": [2]}
    manifest = json.loads((folder / "case.json").read_text())
    _edit(folder, golden={**manifest["golden"], **entry}, output={**manifest["output"], **entry})
    board = np.fromfile(folder / "golden.bin", np.complex64)
    (board + 1j).tofile(folder / "npu.bin")
    code, report, err = run_compare(dump, "--output", "npu.bin")
    assert (code, report) == (2, None), err
    assert (f"{folder / 'case.json'}: golden.dtype is 'ACL_COMPLEX64'; opsnn compare judges real results "
            "(floating point, integer or bool), as opsnn verify dumps them") in err, err


def test_a_board_value_that_is_an_f5_bound_only_by_chance_fails(tmp_path, run_compare):
    """(A breaker) decisions-forward F5 explained every differing element of a float16 Hardtanh
    whose value was opbase's -0.0 bound (an int8 -128 min): a board writing -0.0 where the
    input lies above it (torch and opsnn keep the input there) was a DOC, exit 0. Only an
    element where opsnn's reference is that bound too (it clamps there) is explained."""
    pytest.importorskip("torch")
    def scalar(name, value):
        return {"name": name, "type": "scalar", "required": True, "dtype": "int8", "shape": None, "range_values": value}
    hardtanh = tmp_path / "atk_aclnnHardtanh.json"
    hardtanh.write_text(json.dumps([{"id": 0, "name": "aclnnHardtanh", "aclnn_name": "Hardtanh", "inputs": [
        {"name": "self", "type": "tensor", "required": True, "dtype": "fp16", "shape": [64], "range_values": [-200, 5]},
        scalar("clipValueMin", -128), scalar("clipValueMax", 100)]}]))
    dump = tmp_path / "d"
    assert run_verify(hardtanh, "--golden", "torch", "--dump", dump) == 0
    (folder,) = (dump / "atk_aclnnHardtanh.json").iterdir()
    code, report, _ = run_compare(dump)
    assert code == 0 and report["cases"][0]["reason"].startswith("F5: opbase's fp16_t")  # opsnn's own: DOC
    inside = np.flatnonzero(np.fromfile(folder / "self.bin", np.float16) > 0)[0]  # (F5 clamps below -0.0)
    golden = board_file(folder, lambda board: board.__setitem__(inside, -0.0))
    assert golden[inside] > 0
    code, report, _ = run_compare(dump, "--output", "npu.bin")
    assert code == 1 and report["cases"][0]["status"] == "FAIL", report["cases"][0]
    # (one element more than opsnn's own DOC differs from torch's golden)
    assert report["cases"][0]["mismatches"] == json.loads((folder / "case.json").read_text())["verdict"]["mismatches"] + 1


def test_ctrl_c_reports_the_cases_compared_and_exits_130(tmp_path, monkeypatch, capsys, python_sigint):
    """(A CI user) Ctrl-C in compare printed one line and wrote no --json: the cases compared were
    lost, where verify reports its cases done. It does as verify does: the tables and summary of
    the cases compared, --json with the count not run, one line, 128 + SIGINT; a press while the
    report is written is held until it is out."""
    import signal

    from opsnn import compare as compare_command
    from opsnn import results

    dump = dump_json_case(tmp_path, *(json_case(i, "fp32", (2,), [-1, 1], [-1, 1], 1) for i in range(3)))
    check_case, done = compare_command.check_case, []

    def interrupted_at_the_third(*args):
        if len(done) == 2:
            raise KeyboardInterrupt
        done.append(check_case(*args))
        return done[-1]

    monkeypatch.setattr(compare_command, "check_case", interrupted_at_the_third)
    out = tmp_path / "results.json"
    capsys.readouterr()
    try:
        code = cli.main(["compare", str(dump), "--json", str(out)])
    except KeyboardInterrupt:  # (escaping, it would stop the whole test session)
        pytest.fail("KeyboardInterrupt escaped cli.main")
    assert code == 130
    captured = capsys.readouterr()
    assert captured.err == ("opsnn compare: interrupted after 2 of 3 cases; the summary above and --json hold those "
                            "2 (a case under way is not counted)\n")
    assert "2 cases: 2 passed (2 bit-exact)" in captured.out
    report = json.loads(out.read_text())
    assert [c["name"] for c in report["cases"]] == ["aclnnLeakyReluBackward_0", "aclnnLeakyReluBackward_1"]
    assert report["summary"]["total"] == 2 and report["summary"]["not_run"] == 1
    monkeypatch.setattr(compare_command, "check_case", check_case)
    write_json_file, presses = results.write_json, []

    def pressed_then(*args, **kwargs):
        if not presses:  # (once: a second press is raised at once)
            presses.append(signal.raise_signal(signal.SIGINT))
        return write_json_file(*args, **kwargs)

    monkeypatch.setattr(results, "write_json", pressed_then)
    try:
        code = cli.main(["compare", str(dump), "--json", str(out)])
    except KeyboardInterrupt:
        pytest.fail("KeyboardInterrupt escaped cli.main")
    assert code == 130 and presses
    assert capsys.readouterr().err == ("opsnn compare: interrupted after 3 of 3 cases; the summary above and --json "
                                       "hold those 3 (a case under way is not counted)\n")
    assert json.loads(out.read_text())["summary"]["total"] == 3
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_damaged_dump_is_refused_before_any_case_is_judged_and_writes_no_json(tmp_path, monkeypatch, capsys):
    """(A CI user) a damaged case.json among many was found only when its turn came: every case
    before it had been read and compared, its golden and board files whole, for nothing (a
    usage error reports no case). Every case folder is now read and checked, all but its files'
    data, before any is judged, as verify reads every case file before it runs one: the run is
    refused at once, and --json, as on any usage error of either command, is not written (a
    results file already at PATH is left as it was: the exit status says the run did not
    happen). A torch golden's case needs its scalars to explain a difference: a damaged
    scalars field is refused so too, not only when a difference comes."""
    from opsnn import compare as compare_command

    dump = dump_json_case(tmp_path, *(json_case(i, "fp32", (2,), [-1, 1], [-1, 1], 1) for i in range(3)))
    folders = [dump / LEAKY / f"000{i}_aclnnLeakyReluBackward_{i}" for i in range(3)]
    out = tmp_path / "results.json"
    assert cli.main(["compare", str(dump), "--json", str(out)]) == 0
    earlier = out.read_text()
    judged, original = [], compare_command.compare
    monkeypatch.setattr(compare_command, "compare", lambda *args: judged.append(args) or original(*args))
    _edit(folders[2], tolerance=None)
    capsys.readouterr()
    assert cli.main(["compare", str(dump), "--json", str(out)]) == 2
    captured = capsys.readouterr()
    assert (judged, captured.out) == ([], "")
    assert captured.err.startswith(f"opsnn compare: error: {folders[2] / 'case.json'}: tolerance is null;")
    assert out.read_text() == earlier
    _edit(folders[2], tolerance={"rtol": 0, "atol": 0, "source": "md5"}, golden={**json.loads(
        (folders[2] / "case.json").read_text())["golden"], "source": "torch"}, scalars={"negativeSlope": 1})
    assert cli.main(["compare", str(dump)]) == 2
    assert (f"{folders[2] / 'case.json'}: scalars is {{\"negativeSlope\": 1}}; expected aclnnLeakyReluBackward's "
            "['negativeSlope'], each as {\"dtype\": ..., \"value\": ...}") in capsys.readouterr().err
    assert judged == []


def test_a_shape_numpy_cannot_hold_is_a_damaged_dump_naming_the_field(tmp_path, run_compare):
    """(A breaker) case.json edited to an empty shape whose other dims overflow NumPy's size
    ([2**63 - 1, 0], 0 bytes as its file holds) or to more dims than NumPy's 64 was NumPy's own
    words, naming no file ("array is too big; ...", "maximum supported dimension ..."), found
    only as the case was judged. Such a shape is refused as every malformed entry is, before
    any case is judged (verify never dumps one: it skips such a case)."""
    dump = dump_json_case(tmp_path, json_case(0, "fp32", (2,), [-1, 1], [-1, 1], 1))
    (folder,) = (dump / LEAKY).iterdir()
    manifest = json.loads((folder / "case.json").read_text())
    for shape, why in (([2**63 - 1, 0], "array is too big"), ([2] + [1] * 70, "maximum supported dimension")):
        entries = {key: {**manifest[key], "shape": shape} for key in ("golden", "output")}
        _edit(folder, **entries)
        if not math.prod(shape):
            for key in ("golden", "output"):
                _edit(folder, **{key: {**entries[key], "bytes": 0}})
                entries[key]["bytes"] = 0
                (folder / f"{key}.bin").write_bytes(b"")
        code, report, err = run_compare(dump)
        assert (code, report) == (2, None), err
        assert err.startswith(f"opsnn compare: error: {folder / 'case.json'}: golden.shape {shape} is a shape NumPy "
                              f"cannot hold ({why}"), err


def test_output_naming_the_golden_or_an_input_file_is_a_usage_error(tmp_path, run_compare):
    """(A breaker) --output golden.bin judged each golden against itself, and --output self.bin an
    input against the golden: a green run that checked no board result (a slip in a CI job's
    command line). A board's result is a file of its own; NAME naming a case's golden or input
    file is a usage error before any case is judged."""
    dump = dump_json_case(tmp_path, json_case(0, "fp32", (2,), [-1, 1], [-1, 1], 1))
    (folder,) = (dump / LEAKY).iterdir()
    for name, what in (("golden.bin", "its golden"), ("self.bin", "its input self"),
                       ("gradOutput.bin", "its input gradOutput")):
        code, report, err = run_compare(dump, "--output", name)
        assert (code, report) == (2, None), err
        assert err == (f"opsnn compare: error: --output {name} names {what} in {folder}, not a board's result: write "
                       "the board's result to a file of its own (such as npu_output.bin) and name it\n"), err


def test_a_case_files_folder_compares_what_the_dumps_index_lists_and_names_the_others(tmp_path, run_compare):
    """(A breaker) compare DIR/<file> compared every folder there holding a case.json, those an
    earlier run left too (its index lost, a rerun of fewer cases removes none it does not know
    of): stale goldens were judged as the dump's. Where DIR/index.json is there, the folders it
    lists are compared and the others skipped, one stderr line naming them (a case folder it
    does not list alike: nothing compared, exit 5); without it, every case folder there is."""
    path = write_json(tmp_path, *(json_case(i, "fp32", (2,), [-1, 1], [-1, 1], 1) for i in range(4)))
    dump = tmp_path / "d"
    assert run_verify(path, "--dump", dump) == 0
    (dump / "index.json").unlink()  # (as a full disk leaves it)
    assert run_verify(path, "--cases", 0, "--dump", dump) == 0
    folders = sorted((dump / LEAKY).iterdir())
    assert json.loads((dump / "index.json").read_text())["cases"] == [f"{LEAKY}/{folders[0].name}"]
    code, report, err = run_compare(dump / LEAKY)
    assert code == 0 and [c["folder"] for c in report["cases"]] == [str(folders[0])]
    assert err.splitlines()[0] == (
        f"opsnn compare: skipped 3 case folders in {str(dump / LEAKY)!r} that {str(dump / 'index.json')!r} does not "
        f"list (not written by the run that wrote it): {', '.join(f.name for f in folders[1:])}")
    code, report, err = run_compare(folders[2])
    assert code == 5 and report["cases"] == []
    assert err.splitlines()[0] == (
        f"opsnn compare: skipped 1 case folder in {str(dump / LEAKY)!r} that {str(dump / 'index.json')!r} does not "
        f"list (not written by the run that wrote it): {folders[2].name}")
    assert err.endswith(f"opsnn compare: no case compared: {dump / 'index.json'} lists none of the case folders "
                        f"given ({folders[2]}); exit status 5, not 0: a run that checked nothing is no pass\n"), err
    (dump / "index.json").unlink()
    code, report, err = run_compare(dump / LEAKY)
    assert code == 0 and [c["folder"] for c in report["cases"]] == list(map(str, folders))
    assert "opsnn compare: skipped" not in err


def test_a_case_files_folder_whose_listed_case_folders_lost_their_case_json_names_the_first(tmp_path, run_compare):
    """(A regression breaker) compare DIR/<file> where every case folder the dump's index lists
    there has lost its case.json (a rerun's probe stopped after emptying it: the index lists it
    so that compare names it) said DIR/<file> 'holds neither index.json, case.json nor case
    folders', where compare DIR named the folder's missing case.json: the same damaged dump told
    two ways. Both now name the case.json (exit 2); a folder of no dump beside an index that
    no dump wrote is still told what it holds."""
    dump = dump_json_case(tmp_path, json_case(0, "fp32", (2,), [-1, 1], [-1, 1], 1))
    folder = dump / LEAKY / "0000_aclnnLeakyReluBackward_0"
    for path in folder.iterdir():
        path.unlink()
    damaged = (f"opsnn compare: error: {folder / 'case.json'}: cannot read it as a case's manifest ([Errno 2] No such "
               f"file or directory: {str(folder / 'case.json')!r})\n")
    assert run_compare(dump) == (2, None, damaged)
    assert run_compare(dump / LEAKY) == (2, None, damaged)
    folder.rmdir()  # (gone whole, still listed)
    assert run_compare(dump / LEAKY) == (2, None, damaged)
    (dump / "index.json").write_text("not an index")
    assert run_compare(dump / LEAKY) == (2, None, (
        f"opsnn compare: error: {dump / LEAKY} holds neither index.json (a folder opsnn verify --dump DIR wrote), "
        "case.json (one of its case folders) nor case folders (one case file's folder)\n"))
