"""The command line: demo prints the samples' lines; run/describe/list; exit codes."""

import argparse
import importlib.util
import json
import math
import os
import re
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest
from conftest import run_python, sigint_default

from opsnn import cli, cli_args, cli_words, kernels
from opsnn._core import settings
from opsnn._core.extras import install_hint


def _run(capsys, *argv):
    code = cli.main(list(argv))
    return code, capsys.readouterr().out


def _run_process(*argv):
    """A fresh process, as a user runs it (the samples own acl.init/finalize)."""
    result = subprocess.run([sys.executable, "-m", "opsnn", *argv], capture_output=True, text=True,
                            timeout=300)
    return result.returncode, result.stdout + result.stderr


def test_demo_prints_both_samples_results_and_a_bit_exact_table():
    code, out = _run_process("demo", "--shape", "64", "--repeat", "2")
    assert code == 0
    leaky = [f"result[{i}] is: {v:f}" for i, v in enumerate([2, 3, 4, 5])]
    hardtanh = [f"result[{i}] is: {v:f}" for i, v in enumerate([0, 0, 0, 3, 0, 5, 0, 0])]
    lines = out.splitlines()
    start = lines.index(leaky[0])
    assert lines[start:start + 4] == leaky
    start = lines.index(hardtanh[0], start + 4)
    assert lines[start:start + 8] == hardtanh
    assert "NO" not in out  # every dtype row is bit-exact
    for dtype in ("DT_FLOAT", "DT_FLOAT16", "DT_BF16", "DT_DOUBLE", "DT_INT8", "DT_UINT8"):
        assert dtype in out
    rows = {line.split()[1] for line in lines if line.startswith("│")}
    assert rows == {"LeakyReluBackward", "HardtanhBackward", "LeakyRelu", "Hardtanh"}, rows
    # every operator's dtypes in one order (Hardtanh's had started with DT_FLOAT16, its source's order)
    hardtanh = [line.split()[3] for line in lines if line.startswith("│ Hardtanh ")]
    assert hardtanh == ["DT_FLOAT", "DT_FLOAT16", "DT_DOUBLE", "DT_BF16", "DT_INT8", "DT_UINT8", "DT_INT16",
                        "DT_INT32", "DT_INT64"], hardtanh
    leaky = [line.split()[3] for line in lines if line.startswith("│ LeakyRelu ")]
    assert leaky == ["DT_FLOAT", "DT_FLOAT16", "DT_DOUBLE", "DT_BF16"], leaky


@pytest.mark.parametrize("command", [["opsnn", "list"], ["opsnn", "describe", "LeakyReluBackward"],
                                     ["opsnn.samples"]])
def test_a_command_started_with_stdout_closed_runs_as_into_dev_null(command):
    """Started with descriptor 1 closed (``opsnn list >&-``, a service's shut stdout), Python
    sets sys.stdout to None; print() then writes nothing, but the flush after the command was an
    AttributeError traceback on stderr, exit 1, though the command had run. It runs as if its
    output went to /dev/null now: exit 0 (the samples' status), nothing on stderr."""
    env = {**os.environ, "OPSNN_BACKEND": "numpy"}  # (the samples: nothing to compile)
    done = subprocess.run(["sh", "-c", 'exec "$@" >&-', "sh", sys.executable, "-m", *command],
                          capture_output=True, text=True, env=env, timeout=300, check=False)
    assert (done.returncode, done.stderr) == (0, "")


def test_dev_null_takes_descriptor_1_with_stdin_closed_too():
    """(A regression breaker) with stdin closed as well (``<&- >&-``), /dev/null took descriptor
    0, the lowest free one, and 1 stayed free: the next file opsnn opened became descriptor 1,
    where anything writing to the process's stdout at the C level would land in it. /dev/null
    is descriptor 1 now, whichever one the open got."""
    code = ("import os, sys; from opsnn.cli_stdout import stdout_or_devnull; stdout_or_devnull(); "
            "f = open(os.devnull); os.write(2, f'{sys.stdout.fileno()} {f.fileno() != 1} "
            "{os.path.samestat(os.fstat(1), os.stat(os.devnull))}'.encode())")
    done = subprocess.run(["sh", "-c", 'exec "$@" <&- >&-', "sh", sys.executable, "-c", code],
                          capture_output=True, text=True, timeout=120, check=False)
    assert (done.returncode, done.stderr) == (0, "1 True True")


def test_columns_zero_reads_as_an_unknown_width():
    """COLUMNS=0 (what a script exporting `tput cols` of no terminal sets) made rich's consoles 0
    wide: `opsnn run` and `opsnn demo` printed nothing at all, exit 0, the samples' results and
    the verdicts gone. 0 reads as unset, as Python's shutil.get_terminal_size reads it: the
    terminal's width, else 80."""
    def run(*argv, **env):
        environ = {key: value for key, value in os.environ.items() if key != "COLUMNS"}
        done = subprocess.run([sys.executable, "-m", "opsnn", *argv], capture_output=True, text=True,
                              env={**environ, "OPSNN_BACKEND": "numpy", **env}, timeout=300, check=False)
        assert done.returncode == 0 and done.stderr == "", done.stderr
        return done.stdout

    command = ("run", "leaky_relu_backward", "--shape", "2", "3")
    assert run(*command, COLUMNS="0") == run(*command)
    assert "aclnnLeakyReluBackward: ret 0 (ACLNN_SUCCESS)" in run(*command)
    out = run("demo", "--shape", "8", "--repeat", "1", COLUMNS="0")
    assert "result[0] is: 2.000000" in out and "│ LeakyReluBackward │ DT_FLOAT   │ yes" in out, out


@pytest.mark.parametrize("columns", ["20", "40"])
def test_demo_table_in_a_narrow_terminal_keeps_every_name_and_verdict(columns):
    """A terminal narrower than the dtype table (a split pane, COLUMNS=40; or COLUMNS=20 with the
    output piped) had rich cut every cell to fit: "Hard…", "DT_I…", and at 20 columns the
    bit-exact column was "…", the demo's verdict gone. There the table is one line a row, columns
    aligned, which the terminal wraps and nothing cuts; the samples' lines likewise."""
    env = {**os.environ, "COLUMNS": columns, "OPSNN_BACKEND": "numpy"}  # (NumPy: nothing to compile)
    done = subprocess.run([sys.executable, "-m", "opsnn", "demo", "--shape", "8", "--repeat", "1"],
                          capture_output=True, text=True, env=env, timeout=300, check=False)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    out = done.stdout
    assert "…" not in out and "│" not in out, out
    # the samples' lines whole too, as the C samples print them (they were folded at the width:
    # "result[0] is: " and "2.000000" on two lines in a file)
    assert "\naclnnLeakyReluBackward sample (test_aclnn_leaky_relu_backward)\nresult[0] is: 2.000000\n" in out, out
    assert "\naclnnHardtanhBackward sample (test_aclnn_hardtanh_grad)\nresult[0] is: 0.000000\n" in out, out
    table = out[out.index("Pythonic API on random [8] inputs vs the float64 reference\n"):].splitlines()[1:]
    assert table[0].split() == ["operator", "dtype", "bit-exact", "median", "time", "throughput"]
    lines = [line for line in table[1:] if line.split()[:1] in (["LeakyReluBackward"], ["HardtanhBackward"],
                                                                  ["LeakyRelu"], ["Hardtanh"])]
    rows = [line.split() for line in lines]  # (a row that waited for a core ends in " *", as in the box)
    assert all(row[2:3] == ["yes"] and row[4] == "µs" and row[6] == "GB/s" and row[7:] in ([], ["*"])
               for row in rows), rows
    assert [row[:2] for row in rows] == (
        [["LeakyReluBackward", d] for d in ("DT_FLOAT", "DT_FLOAT16", "DT_DOUBLE", "DT_BF16")]
        + [["HardtanhBackward", d] for d in ("DT_FLOAT", "DT_FLOAT16", "DT_BF16")]
        + [["LeakyRelu", d] for d in ("DT_FLOAT", "DT_FLOAT16", "DT_DOUBLE", "DT_BF16")]
        + [["Hardtanh", d] for d in ("DT_FLOAT", "DT_FLOAT16", "DT_DOUBLE", "DT_BF16", "DT_INT8", "DT_UINT8",
                                     "DT_INT16", "DT_INT32", "DT_INT64")])
    assert table[1:len(lines) + 1] == lines  # the rows right under the header, then any caption
    assert {len(line) for line in lines} == {len(table[0])}, table  # aligned: as long as the header


def test_demo_on_ascend310b_prints_the_samples_status_and_goes_on():
    """LeakyReluBackward has no kernel on Ascend310B: its sample prints the 561003 line, as the C
    sample does, and the demo goes on with the HardtanhBackward sample and the operators there;
    it exits 1, a sample having failed (session 42, a new user: it exited 0, where python -m
    opsnn.samples exits with the sample's ret)."""
    code, out = _run_process("--soc", "Ascend310B", "demo", "--shape", "8", "--repeat", "1")
    assert code == 1, out
    assert "aclnnLeakyReluBackwardGetWorkspaceSize failed. ERROR: 561003" in out
    assert "result[3] is: 3.000000" in out and "Traceback" not in out
    rows = {line.split()[1] for line in out.splitlines() if line.startswith("│")}
    assert rows == {"HardtanhBackward"}, rows
    caption = " ".join(out[out.rindex("└"):].split()[1:])  # the table says where the others went
    assert caption.endswith("not on Ascend310B's product line (phase 1 returns 561003): LeakyReluBackward, "
                            "LeakyRelu, Hardtanh"), caption


def test_demo_exits_1_where_a_row_is_not_bit_exact(capsys, monkeypatch):
    """(The CLI breaker) a row of the dtype table that differs from the float64 reference showed
    "NO" and the demo exited 0, its check's failure told to no script; `opsnn run` exits 1 on a
    mismatch. One operator's reference is made to differ here; the samples are skipped (they
    own the runtime, which the process-wide tests here share)."""
    from opsnn import demo

    monkeypatch.setattr(demo, "run_sample", lambda *args, **kwargs: 0)
    calls = dict(demo._CALLS)
    function, golden, n_inputs, scalars = calls["Hardtanh"]
    calls["Hardtanh"] = (function, lambda *args: golden(*args) + 1, n_inputs, scalars)
    monkeypatch.setattr(demo, "_CALLS", calls)
    code, out = _run(capsys, "demo", "--shape", "4", "--repeat", "1")
    rows = [line for line in out.splitlines() if " DT_FLOAT " in line]
    assert code == 1 and len(rows) == 4, out  # the table still shown whole
    assert [("Hardtanh " in row, " NO " in row) for row in rows] == [(False, False)] * 3 + [(True, True)], out
    monkeypatch.setattr(demo, "_CALLS", dict(demo._CALLS, Hardtanh=(function, golden, n_inputs, scalars)))
    assert _run(capsys, "demo", "--shape", "4", "--repeat", "1")[0] == 0


def test_demo_blames_a_slow_row_on_a_second_thread_only_where_its_launch_could_use_one(monkeypatch):
    """(A new user's) `opsnn demo --shape 4 --repeat 1` starred a row timed at 37 us among ~7 us
    ones and said "another process kept a core busy and a two-thread launch waited for its
    second thread", where a launch of a few bytes runs on the calling thread alone. A slow row is
    starred where its launch could go to the thread pool: the numba backend, a pool of two
    threads or more, and enough bytes moved (its ``threads_for``)."""
    from opsnn import demo
    from opsnn.kernels import parallelism

    monkeypatch.setattr(parallelism, "threads_for", lambda work: 2 if work >= 1 << 20 else 1)
    monkeypatch.setattr(demo.kernels, "default_name", lambda: "numba")
    # rows: (operator, dtype, bit-exact, median time, throughput, bytes moved)
    tiny = [("LeakyRelu", "DT_FLOAT", True, 2e-6, 0.01, 16)] * 4 + [("LeakyRelu", "DT_BF16", True, 4e-5, 0.0002, 8)]
    assert demo._slow_rows(tiny) == set()
    large = [("LeakyRelu", "DT_FLOAT", True, 1e-4, 20.0, 2 << 20)] * 4 + [("LeakyRelu", "DT_BF16", True, 8e-3, 0.13, 1 << 20)]
    assert demo._slow_rows(large) == {4}
    monkeypatch.setattr(demo.kernels, "default_name", lambda: "numpy")  # one thread, whatever the size
    assert demo._slow_rows(large) == set()


@pytest.mark.parametrize("argv, given", [(["--seed", "3", "--train", "--quick"], "--seed 3: an option"),
                                         (["--shape", "4", "--repeat=2", "--train"], "--shape 4, --repeat 2: options"),
                                         (["--seed", "1", "--shape", "4", "--repeat", "3", "--train"],
                                          "--shape 4, --repeat 3, --seed 1: options")])
def test_demo_refuses_the_tables_options_before_train(capsys, argv, given):
    """(The CLI breaker) `opsnn demo --seed 3 --train --quick` trained with seed 0: the dtype
    table's options before --train were dropped silently. They are a usage error naming them,
    before anything runs; the training's own go after --train. (A breaker: several were called
    "option".)"""
    assert cli.main(["demo", *argv]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (f"opsnn demo: error: {given} of the dtype table, which --train does not run; the "
                            "training takes its own after --train (--train --seed 3; --train --help lists them)\n")


@pytest.mark.parametrize("count", ["10001", "10**20", "100000000000000000000", "1e19", "1e99999999999999999999", "0"])
def test_demo_bounds_its_repeat_count(capsys, monkeypatch, count):
    """(the leftovers breaker) `opsnn demo --repeat 100000000000000000000` was taken, a table that
    never ends: the timed calls per row are at most 10000, whose median the timer already holds
    steady; more is a usage error naming the option and the range, before the samples run."""
    from opsnn import demo

    monkeypatch.setattr(demo, "run_sample", lambda *args, **kwargs: pytest.fail("a sample ran"))
    with pytest.raises(SystemExit) as exc:
        cli.main(["demo", "--repeat", count])
    assert exc.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == \
        f"opsnn demo: error: argument --repeat: expected an integer from 1 to 10000, got {count!r}"
    parser = cli_args.Parser()
    demo.add_arguments(parser)
    assert parser.parse_args(["--repeat", "10000"]).repeat == parser.parse_args(["--repeat", "1e4"]).repeat == 10000


def test_demo_on_ascend910_has_no_bf16_rows():
    code, out = _run_process("--soc", "Ascend910", "demo", "--shape", "8", "--repeat", "1")
    assert code == 0 and "DT_BF16" not in out and "Ascend910 " in out


def test_run_reports_status_steps_and_a_bit_exact_result(capsys):
    code, out = _run(capsys, "run", "LeakyReluBackward", "--shape", "3", "4", "--grad-shape", "3", "1",
                     "--dtype", "float16", "--out-dtype", "float32")
    assert code == 0
    assert "ret 0 (ACLNN_SUCCESS)" in out and "bit-exact" in out
    assert "Cast(ws[0] -> DT_FLOAT) -> out" in out
    # the float32 attr as the shortest decimal that reads back as it, not its double's digits
    assert "negative_slope=0.01) -> ws[0] [DT_FLOAT16, computed in DT_FLOAT]" in out, out


def test_run_prints_its_inputs_and_takes_soc_after_the_command(capsys):
    """(A new user) the random inputs are printed beside the result, so it can be checked by
    hand; --soc after the command works as before it; a bare `opsnn` prints the commands."""
    code, out = _run(capsys, "run", "LeakyReluBackward", "--shape", "2", "--scalar", "0.5", "--seed", "3")
    assert code == 0
    rng = np.random.default_rng(3)
    grad, self_ = (rng.uniform(-2, 2, (2,)) * 2).astype(np.float32), rng.uniform(-2, 2, (2,)).astype(np.float32)
    printed = out[out.index("gradOutput:"):]
    assert printed.index(str(grad)) < printed.index("self:") < printed.index(str(self_)) < printed.index("result:")
    assert str(np.where(self_ > 0, grad, grad * np.float32(0.5))) in printed.split("result:")[1]
    code, out = _run(capsys, "run", "LeakyReluBackward", "--dtype", "bf16", "--soc", "Ascend910")
    assert code == 1 and "which Ascend910 does not support" in out
    assert "Ascend910B, Ascend910_93, Ascend950 take it (the emulated SoC: opsnn.set_soc, $OPSNN_SOC, opsnn --soc)" in " ".join(out.split())
    code, out = _run(capsys, "run", "HardtanhBackward", "--dtype", "float64")  # no SoC's list has it
    assert code == 1 and "no SoC does (HardtanhBackward has no DT_DOUBLE kernel)" in " ".join(out.split()), out
    assert cli.main([]) == 2 and "COMMAND" in capsys.readouterr().out


def test_python_m_opsnn_samples_runs_both_samples():
    done = subprocess.run([sys.executable, "-m", "opsnn.samples"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("result[") == 4 + 8 and "result[5] is: 5.000000" in done.stdout
    # (session 42, a new user) a failed sample ended the run: the other one runs; the exit status
    # is the failed sample's ret (561003 & 0xff, as a C main returning it)
    done = subprocess.run([sys.executable, "-m", "opsnn.samples"], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "OPSNN_SOC": "Ascend310B"}, check=False)
    assert done.returncode == 561003 & 0xFF, done.stderr
    assert "aclnnLeakyReluBackwardGetWorkspaceSize failed. ERROR: 561003" in done.stdout
    assert done.stdout.count("result[") == 8 and "result[5] is: 5.000000" in done.stdout
    # (a new user) --soc as `opsnn --soc` (any case); any other argument a usage error (both had been ignored)
    soc = subprocess.run([sys.executable, "-m", "opsnn.samples", "--soc", "ascend310b"], capture_output=True,
                         text=True, timeout=120, check=False)
    assert (soc.returncode, soc.stdout) == (done.returncode, done.stdout)
    for argv in (["--bogus"], ["--soc", "Ascend999"]):
        bad = subprocess.run([sys.executable, "-m", "opsnn.samples.leaky_relu_backward", *argv], capture_output=True,
                             text=True, timeout=120, check=False)
        assert bad.returncode == 2 and bad.stdout == "" and "usage: python -m opsnn.samples.leaky_relu_backward" in bad.stderr
    # run as the example file (a link to the sample), its usage names that file (a breaker: it
    # gave the module form, which the example's reader had not typed)
    example = Path(__file__).parent.parent / "examples" / "test_aclnn_leaky_relu_backward.py"
    bad = subprocess.run([sys.executable, str(example), "--bogus"], capture_output=True, text=True, timeout=120,
                         check=False)
    assert bad.returncode == 2 and bad.stderr.startswith("usage: test_aclnn_leaky_relu_backward.py [-h]"), bad.stderr


@pytest.mark.parametrize("argv, steps", [
    # one dtype per input, in the API's order; out defaults to their promoted dtype
    (["--dtype", "f16,f32"], ["Cast(gradOutput -> DT_FLOAT) -> ws[0]", "LeakyReluGrad(ws[0], self",
                              "-> out [DT_FLOAT, computed in DT_FLOAT]"]),
    (["--dtype", "float32,bfloat16", "--out-dtype", "f16"], ["Cast(self -> DT_FLOAT) -> ws[0]",
                                                             "Cast(ws[1] -> DT_FLOAT16) -> out"]),
])
def test_run_takes_a_dtype_per_input(capsys, argv, steps):
    code, out = _run(capsys, "run", "LeakyReluBackward", "--shape", "30", "40", "--scalar", "0.3", *argv)
    assert code == 0 and "bit-exact" in out, out
    for step in steps:
        assert step in out


def test_attr_text_reads_back_exactly():
    """``value_text``: the attr's own precision; the text parses back to the very value."""
    from opsnn._core import dtypes

    for value, dt in [(0.01, np.float32), (-0.3, np.float32), (1e-45, np.float32), (0.1, np.float64),
                      (-0.0, np.float32), (65504.0, np.float16), (3.4028234663852886e38, np.float32)]:
        exact = float(dt(value))
        text = dtypes.value_text(exact, dtypes.from_numpy(dt))
        assert dt(float(text)) == dt(exact) and str(np.copysign(1, float(text))) == str(np.copysign(1, exact))
        assert len(text) <= len(repr(value)) + 4, text
    assert dtypes.value_text(0.009999999776482582, dtypes.DataType.FLOAT) == "0.01"
    assert dtypes.value_text(0.009999999776482582, dtypes.DataType.DOUBLE) == "0.009999999776482582"
    assert dtypes.value_text(3, dtypes.DataType.INT32) == "3"
    assert dtypes.value_text(-math.nan, dtypes.DataType.FLOAT) == "-nan"  # Python and NumPy write "nan"
    assert dtypes.value_text(math.nan, dtypes.DataType.BF16) == "nan"


def test_run_strided_hardtanh_records_a_contiguous_step(capsys):
    code, out = _run(capsys, "run", "aclnnHardtanhBackward", "--shape", "3", "4", "--transpose",
                     "--dtype", "bfloat16")
    assert code == 0 and "Contiguous(self) -> ws[0]" in out and "bit-exact" in out


def test_run_with_an_unsupported_dtype_exits_1_with_the_status(capsys):
    code, out = _run(capsys, "--soc", "Ascend910", "run", "LeakyReluBackward", "--dtype", "bfloat16")
    assert code == 1
    assert "161002" in out and "DT_BF16" in out and "Ascend910" in out


def test_describe_and_list(capsys):
    code, out = _run(capsys, "describe", "HardtanhBackward")
    assert code == 0
    assert "null check order: self, gradOutput, out, min, max" in out
    assert "Ascend910     DT_FLOAT, DT_FLOAT16\n" in out
    assert "     *Ascend910B    DT_FLOAT, DT_FLOAT16, DT_BF16" in out  # the default SoC, marked
    code, out = _run(capsys, "describe", "HardtanhBackward", "--soc", "Ascend310P")
    assert "(* marks the emulated SoC, Ascend310P;" in out
    assert "     *Ascend310P    DT_FLOAT, DT_FLOAT16\n" in out
    assert "      Ascend910B    DT_FLOAT, DT_FLOAT16, DT_BF16" in out
    code, out = _run(capsys, "list")  # each operator by its aclnn, Pythonic and kernel names
    assert code == 0
    assert [line.split()[:4] for line in out.splitlines()] == [
        ["aclnnLeakyReluBackward", "leaky_relu_backward", "kernel", "LeakyReluGrad"],
        ["aclnnHardtanhBackward", "hardtanh_backward", "kernel", "HardtanhGrad"],
        ["aclnnLeakyRelu", "leaky_relu", "kernel", "LeakyRelu"],
        ["aclnnInplaceLeakyRelu", "leaky_relu_", "kernel", "LeakyRelu"],
        ["aclnnHardtanh", "hardtanh", "kernel", "ClipByValueV2"],
        ["aclnnInplaceHardtanh", "hardtanh_", "kernel", "ClipByValueV2"]], out


def test_unknown_operator_and_usage_errors():
    with pytest.raises(SystemExit) as exc:
        cli.main(["--soc", "Ascend999", "list"])
    assert exc.value.code == 2


def test_version_names_opsnn_and_its_libraries(capsys):
    """A breaker: no --version, where a 561000 asks for a bug report."""
    import numpy

    import opsnn

    with pytest.raises(SystemExit) as exc:
        cli.main(["--version"])
    out = capsys.readouterr().out
    assert exc.value.code == 0
    assert out.startswith(f"opsnn {opsnn.__version__} (Python {sys.version.split()[0]}; numpy {numpy.__version__}, numba ")


def test_python_dash_m_entry_point():
    code, out = _run_process("list")
    assert code == 0 and "aclnnLeakyReluBackward" in out


def test_tiling_shows_the_worked_example_and_the_aclnn_executor_steps(capsys):
    code, out = _run(capsys, "--soc", "Ascend950", "tiling", "HardtanhBackward", "--shape", "1,64,2,64",
                     "--dtype", "float16")
    assert code == 0
    for line in ("baseTiling.coreNum = 2", "baseTiling.ubFormer = 6144", "baseTiling.blockFormer = 4096",
                 "tiling key   3", "workspace    16777216 B"):
        assert line in out
    assert "step       workspace 0 B" in out
    assert "HardtanhGrad(self, gradOutput; min_val=-1.0, max_val=1.0) -> out" in out
    # the host plan opsnn's kernel walks: 8192 float16 elements, one 16 KiB tile, one thread
    assert ("host       1 of" in out and "(49152 bytes moved): flat walk over dims [8192], 1 block of 8192 "
            "elements, tiles of 8192 elements" in out), out
    # (a breaker) one block holding a whole 4-element tensor was "1 block(s) of 32 elements (last 4)"
    code, out = _run(capsys, "tiling", "leaky_relu_backward", "--shape", "4")
    assert code == 0 and "flat walk over dims [4], 1 block of 4 elements (block size 32), tiles of" in out, out


def test_tiling_host_plan_of_a_broadcast_call(capsys, monkeypatch):
    """grad (3000, 1) with self (1, 3000) in bfloat16: 18 MB of output and 12 KB of inputs moved,
    above the parallel threshold, walked row-wise over both threads without a copy."""
    from opsnn.kernels import numba_backend, parallelism

    monkeypatch.setattr(parallelism, "PARALLEL_MIN_BYTES", 16 << 20)  # as on any host

    code, out = _run(capsys, "tiling", "LeakyReluBackward", "--shape", "3000,1", "--shape2", "1,3000",
                     "--dtype", "bfloat16")
    assert code == 0
    threads = parallelism.threads_for(3000 * 3000 * 2 + 2 * 3000 * 2)
    assert threads == min(2, numba_backend.get_num_threads())
    assert f"host       {threads} of {numba_backend.get_num_threads()} threads (18012000 bytes moved): " \
           f"rows walk over dims [3000, 3000], {threads} block{'s' * (threads != 1)} of " in out, out


def test_tiling_host_plan_says_the_threshold_its_thread_count_follows(capsys, monkeypatch):
    """Between 1 and 64 MiB of work the host plan's thread count follows a threshold timed once per
    process, so one call printed 1 thread in one run and 2 in the next with no word why (the tiling
    breaker's): the plan says the threshold, the launch's work and where the threshold came from;
    so it does at any size for a threshold OPSNN_PARALLEL_MIN_BYTES sets, which decides there too."""
    import numba

    from opsnn.kernels import parallelism

    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("a pool of one thread: no threshold decides anything")
    threads = numba.get_num_threads()  # (an earlier test in this process may have left it at 1)
    numba.set_num_threads(2)
    try:
        monkeypatch.setattr(parallelism, "PARALLEL_MIN_BYTES", None)
        monkeypatch.setattr(parallelism, "PARALLEL_MIN_SET", False)
        monkeypatch.setattr(parallelism, "_measured_parallel_min_bytes", lambda: 8 << 20)
        argv = ("tiling", "aclnnLeakyReluBackward", "--shape", "1024,1024")
        code, out = _run(capsys, *argv)
        assert code == 0 and "host       1 of 2 threads (6291456 bytes moved): flat walk" in out, out
        assert ("host       the pool from 8388608 bytes of work, this launch 6291456 (measured in this process, so "
                "runs may differ; OPSNN_PARALLEL_MIN_BYTES fixes it)\n") in out, out
        monkeypatch.setattr(parallelism, "PARALLEL_MIN_BYTES", 4 << 20)
        monkeypatch.setattr(parallelism, "PARALLEL_MIN_SET", True)
        code, out = _run(capsys, *argv)
        assert code == 0 and "host       2 of 2 threads (6291456 bytes moved): flat walk" in out, out
        assert ("host       the pool from 4194304 bytes of work, this launch 6291456 (set by "
                "OPSNN_PARALLEL_MIN_BYTES)\n") in out, out
        # a set threshold decides at any size (a breaker: it was said only for 1-64 MiB of work):
        # 1000 float16 elements, 6000 bytes, one thread; 4096 x 4096, 100663296 bytes, the pool
        for shape, threads_used, work in (("1000", 1, 6000), ("4096,4096", 2, 100663296)):
            code, out = _run(capsys, "tiling", "aclnnLeakyReluBackward", "--shape", shape)
            assert code == 0 and f"host       {threads_used} of 2 threads ({work} bytes moved)" in out, out
            assert (f"host       the pool from 4194304 bytes of work, this launch {work} (set by "
                    "OPSNN_PARALLEL_MIN_BYTES)\n") in out, out
        monkeypatch.setattr(parallelism, "PARALLEL_MIN_BYTES", 0)  # the pool from the first byte, said
        code, out = _run(capsys, "tiling", "aclnnLeakyReluBackward", "--shape", "1000")
        assert code == 0 and "host       2 of 2 threads (6000 bytes moved)" in out, out
        assert "host       the pool from 0 bytes of work, this launch 6000 (set by OPSNN_PARALLEL_MIN_BYTES)" in out
        # inf (or a value past int64) turns the pool off: never, not "from 9223372036854775807 bytes"
        monkeypatch.setattr(parallelism, "PARALLEL_MIN_BYTES", settings.parse_bytes("inf"))
        code, out = _run(capsys, "tiling", "aclnnLeakyReluBackward", "--shape", "4096,4096")
        assert code == 0 and "host       1 of 2 threads (100663296 bytes moved)" in out, out
        assert "host       the pool never, this launch 100663296 (set by OPSNN_PARALLEL_MIN_BYTES)\n" in out, out
        # a measured threshold falls in [1, 64] MiB: below 1 MiB one thread, from 64 MiB the pool,
        # whatever was measured, so nothing to say there
        monkeypatch.setattr(parallelism, "PARALLEL_MIN_BYTES", 8 << 20)
        monkeypatch.setattr(parallelism, "PARALLEL_MIN_SET", False)
        for shape in ("1000", "4096,4096"):
            code, out = _run(capsys, "tiling", "aclnnLeakyReluBackward", "--shape", shape)
            assert code == 0 and "the pool from" not in out, out
        numba.set_num_threads(1)  # a pool of one thread: no threshold decides it either
        code, out = _run(capsys, *argv)
        assert code == 0 and "host       1 of 1 threads" in out and "the pool from" not in out, out
    finally:
        numba.set_num_threads(threads)


def test_tiling_host_plan_of_a_transposed_self(capsys, monkeypatch):
    """--transpose: self's axes reversed in memory. Phase 1 records a Contiguous step; the fused
    kernel reads self in place through 2-D tiles, here rows of 100 side by side in slices."""
    from opsnn.kernels import parallelism

    monkeypatch.setattr(parallelism, "PARALLEL_MIN_BYTES", 16 << 20)  # one thread, on any host
    code, out = _run(capsys, "tiling", "LeakyReluBackward", "--shape", "100,100,100", "--transpose")
    assert code == 0
    assert "step       Contiguous(self) -> ws[0]" in out and "LeakyReluGrad(gradOutput, ws[0]" in out
    assert ("(6000000 bytes moved): panels walk over dims [100, 100, 100], 1 block of 8 panels, "
            "tiles 100 x 100 x 13 slices of dim 0") in out, out
    code, out = _run(capsys, "tiling", "LeakyReluBackward", "--shape", "100,100,100")
    assert code == 0 and "Contiguous" not in out and "flat walk over dims [1000000]" in out
    # a kernel op has no strides to reverse; the error names the aclnn spelling, which LeakyRelu
    # (a kernel op and an aclnn API) needs
    assert cli.main(["tiling", "LeakyRelu", "--shape", "100,100", "--transpose"]) == 2
    assert "(aclnnLeakyRelu, aclnnInplaceLeakyRelu for LeakyRelu)" in capsys.readouterr().err
    code, out = _run(capsys, "tiling", "aclnnLeakyRelu", "--shape", "100,100", "--transpose")
    assert code == 0 and "step       Contiguous(self) -> ws[0]" in out
    # a self of fewer than 2 dims is its own transpose: said, not silently ignored (a breaker)
    for command in ("tiling", "run"):
        code, out = _run(capsys, command, "aclnnLeakyReluBackward", "--shape", "5", "--transpose")
        assert code == 0 and "--transpose leaves a 1-d self as it is" in out and "Contiguous" not in out, out
    # (a new user) so is one of a single dim past 1 (1,4): its axes reversed, its elements keep their order
    for command in ("tiling", "run"):
        code, out = _run(capsys, command, "aclnnLeakyReluBackward", "--shape", "1,4", "--transpose")
        assert code == 0 and "Contiguous" not in out, out
        assert ("--transpose leaves a self of shape [1, 4] as it is (its transpose holds its elements in the same "
                "order): give --shape two dims past 1 for a strided self") in " ".join(out.split()), out


def test_tiling_of_an_inplace_call_writes_into_selfref(capsys):
    """(A breaker) an in-place call's out is selfRef itself (registry.inplace_variant), but the
    tiling's executor steps were those of a separate contiguous out: a transposed selfRef showed
    its kernel writing '-> out' with no copy back into the strided selfRef. (A later breaker) the
    steps then named selfRef by the engine's roles, 'Contiguous(self)' and '-> out', which the
    call has no parameter for: they name it selfRef, as `opsnn run` does."""
    code, out = _run(capsys, "tiling", "aclnnInplaceLeakyRelu", "--shape", "3,5", "--transpose")
    assert code == 0
    steps = [line.split(None, 1)[1] for line in out.splitlines() if line.startswith("  step ")]
    assert steps[1:4] == ["Contiguous(selfRef) -> ws[0]",
                          "LeakyRelu(ws[0]; negative_slope=0.0) -> ws[1] [DT_FLOAT16, computed in DT_FLOAT]",
                          "ViewCopy(ws[1]) -> selfRef"], out
    code, out = _run(capsys, "tiling", "aclnnInplaceLeakyRelu", "--shape", "3,5")
    assert code == 0 and "Contiguous" not in out and "ViewCopy" not in out, out
    assert "step       LeakyRelu(selfRef; negative_slope=0.0) -> selfRef" in out, out
    code, out = _run(capsys, "run", "hardtanh_", "--shape", "3,5", "--transpose")
    assert code == 0 and "    Contiguous(selfRef) -> ws[0]\n" in out and "    ViewCopy(ws[1]) -> selfRef\n" in out, out
    # the out-of-place calls keep their names (the caller's self and out)
    code, out = _run(capsys, "tiling", "aclnnLeakyRelu", "--shape", "3,5", "--transpose")
    assert code == 0 and "step       Contiguous(self) -> ws[0]" in out and ") -> out [DT_FLOAT16" in out, out


def test_tiling_executor_steps_show_a_phase_1_failure(capsys):
    # DECISION 10: opsnn refuses the mismatched out in phase 1, where CANN's tiling would fail
    code, out = _run(capsys, "--soc", "Ascend950", "tiling", "HardtanhBackward", "--shape", "4",
                     "--dtype", "float16,float16,float32")
    assert code == 1
    assert "phase 1 fails: 161002 HardtanhBackward: out must have the dtype of self" in out
    assert "HardtanhGrad tiling failed: the dtypes of result, y must be the same" in out


@pytest.mark.parametrize("typed, steps", [
    ("float16,float32,float32", ["Cast(gradOutput -> DT_FLOAT) -> ws[0]", "LeakyReluGrad(ws[0], self"]),
    ("float32,float32,float16", ["-> ws[0] [DT_FLOAT, computed in DT_FLOAT]", "Cast(ws[0] -> DT_FLOAT16) -> out"]),
])
def test_tiling_uses_the_dtypes_the_executor_hands_the_kernel(capsys, typed, steps):
    """Mixed dtypes for an aclnn name: the kernel is tiled in the promoted dtype the executor's
    casts give it (it had matched the typed dtypes against the def and failed)."""
    code, out = _run(capsys, "--soc", "Ascend950", "tiling", "LeakyReluBackward", "--shape", "4,4", "--dtype", typed)
    assert code == 0 and "FAILED" not in out, out
    for step in steps:
        assert step in out
    names = [{"float16": "FLOAT16", "float32": "FLOAT"}[t] for t in typed.split(",")]
    assert (f"def match    FLOAT, FLOAT, FLOAT (the executor's casts; typed {', '.join(names)}): "
            "binary row 3 of 3") in out
    code, out = _run(capsys, "--soc", "Ascend950", "tiling", "LeakyReluBackward", "--shape", "4,4", "--dtype", typed,
                     "--json")
    match = json.loads(out)["defMatch"]
    assert code == 0 and match["dtypes"] == ["FLOAT"] * 3 and match["rowIndex"] == 2
    assert match["typed"] == names


def test_tiling_json_for_a_soc_without_the_ops_config(capsys):
    code, out = _run(capsys, "tiling", "HardtanhGrad", "--soc", "Ascend910", "--shape", "8", "--json")
    report = json.loads(out)
    # the soc entry every report has, whole (a reader of report["soc"]["ubSize"] met a KeyError)
    assert code == 1 and report["op"] == "HardtanhGrad"
    assert report["soc"] == {"name": "Ascend910", "vectorCoreNum": 32, "ubSize": 262144, "note": None}
    assert report["failures"] == ["HardtanhGrad has no op_host config for Ascend910 (configs: ascend950, ascend910b); "
                                  "on other SoCs CANN runs a built-in kernel that ops-nn does not hold (spec §13)"]


@pytest.mark.parametrize("argv, entry, says", [
    (["aclnnLeakyReluBackward", "--shape", "0", "--soc", "Ascend910"], "emptyFastPath",
     ("aclnnLeakyReluBackward takes the empty-tensor fast path: success, workspace 0, no LeakyReluGrad kernel "
      "launched, nothing tiled")),
    (["aclnnLeakyReluBackward", "--shape", "3", "--dtype", "float64", "--soc", "Ascend910"], "aicpu",
     ("aclnnLeakyReluBackward hands DOUBLE to the AICPU LeakyReluGrad op (its l0 function picks AI Core only for a "
      "def row's dtypes): no AI Core kernel, nothing tiled")),
    (["aclnnHardtanhBackward", "--shape", "0", "--soc", "Ascend310P"], "emptyFastPath",
     ("aclnnHardtanhBackward takes the empty-tensor fast path: success, workspace 0, no HardtanhGrad kernel "
      "launched, nothing tiled")),
    # refused for its product line when non-empty, the empty call still returns at the fast path
    (["aclnnLeakyReluBackward", "--shape", "2,0", "--soc", "Ascend310B"], "emptyFastPath",
     ("aclnnLeakyReluBackward takes the empty-tensor fast path: success, workspace 0, no LeakyReluGrad kernel "
      "launched, nothing tiled")),
])
def test_tiling_of_an_aclnn_call_that_launches_nothing_needs_no_op_host_config(capsys, argv, entry, says):
    """(A breaker) the empty fast path and the AICPU dtypes exited 1 on a SoC without the op's
    op_host config, saying a built-in kernel runs, where Ascend950 exits 0: no kernel is launched."""
    code, out = _run(capsys, "tiling", *argv, "--json")
    report = json.loads(out)
    assert code == 0 and report[entry] == says and "failures" not in report and "tilingData" not in report
    assert report["soc"]["name"] == argv[-1]
    assert report["soc"]["note"] == (f"{report['op']} has no op_host config for it; this call launches no kernel, "
                                     "so needs none")
    code, out = _run(capsys, "tiling", *argv)
    assert code == 0 and out.splitlines()[-1] == f"tiling       none: {says}"


def test_tiling_of_an_aclnn_call_that_launches_a_kernel_needs_the_op_host_config(capsys):
    """(A CANN developer) on a SoC without the op's op_host config the command printed its failure
    alone, though phase 1 runs there as on any SoC (CANN launches its built-in kernel): the
    report gives the executor steps and the host plan, as for a call that fails in phase 1 or
    launches nothing there, then the failure (exit 1, no tiling: no def is built there)."""
    failure = ("LeakyReluGrad has no op_host config for Ascend910 (configs: ascend950); on other SoCs CANN runs a "
               "built-in kernel that ops-nn does not hold (spec §13)")
    note = ("LeakyReluGrad has no op_host config for it; this call passes phase 1 and launches CANN's built-in kernel, "
            "which has no tiling here")
    argv = ("tiling", "aclnnLeakyReluBackward", "--shape", "3", "--soc", "Ascend910")
    code, out = _run(capsys, *argv, "--json")
    report = json.loads(out)
    assert code == 1 and report["failures"] == [failure] and "tilingData" not in report
    assert report["executorSteps"][:2] == ["workspace 0 B", ("LeakyReluGrad(gradOutput, self; negative_slope=0.0) -> "
                                                             "out [DT_FLOAT16, computed in DT_FLOAT]")]
    assert report["hostPlan"] and report["inferredShape"] == [3] and report["soc"]["note"] == note
    code, out = _run(capsys, *argv)
    lines = out.splitlines()
    assert code == 1 and f"  step       {report['executorSteps'][1]}" in lines and lines[-1] == f"FAILED       {failure}"
    assert f"soc          Ascend910: 32 vector cores, UB 262144 B; {note}" in lines and "tiling key" not in out


def test_tiling_on_a_soc_without_the_config_where_phase_1_is_not_run_does_not_say_it_passes(capsys):
    """(A regression breaker) a dynamic shape, or tensors past this host's address space, are
    not run through phase 1 (its step says so), yet the soc note of a SoC without the op's
    op_host config said 'this call passes phase 1 and launches CANN's built-in kernel'."""
    note = ("LeakyReluGrad has no op_host config for it; this call's phase 1 is not run here (its executor step "
            "says why); where it passes, CANN launches its built-in kernel, which has no tiling here")
    for shape, step in (("-1", "phase 1 not run: aclnn tensors have static shapes"),
                        ("100000000000000000", "phase 1 not run here: its tensors cannot be described")):
        code, out = _run(capsys, "tiling", "LeakyReluBackward", "--shape", shape, "--shape", "4", "--dtype", "f32",
                         "--soc", "Ascend910", "--json")
        report = json.loads(out)
        assert code == 1 and report["executorSteps"][0].startswith(step) and report["soc"]["note"] == note
        assert report["failures"][-1].startswith("LeakyReluGrad has no op_host config for Ascend910")


@pytest.mark.parametrize("name, hint", [
    ("hardtanhh", ""),  # (was: did you mean Hardtanh?, whose tiling is refused)
    ("hardtanh__", ""),  # (was: unknown operator ... (did you mean hardtanh_?); known: ... Hardtanh (hardtanh) ...)
    ("leaky_relu_grad_", " (did you mean LeakyReluGrad?)"),
    ("leaky_relu_backwrd", " (did you mean leaky_relu_backward?)"),
])
def test_tiling_of_an_unknown_name_suggests_and_lists_only_tilings_it_has(capsys, name, hint):
    """(A regression breaker) a misspelt name was told 'did you mean Hardtanh?' or, with an
    underscore, registry's refusal naming every operator ('known: ... Hardtanh (hardtanh),
    InplaceHardtanh (hardtanh_)'), names `opsnn tiling` then refuses (ClipByValueV2's tiling is
    not modelled): every unknown name is refused as opdef.find refuses one, suggesting a name only
    where its tiling is held."""
    assert cli.main(["tiling", name, "--shape", "2"]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"opsnn tiling: error: no op definition for {name!r}{hint}: opsnn has the tilings of HardtanhBackward, "
        "HardtanhGrad, InplaceLeakyRelu, LeakyRelu, LeakyReluBackward, LeakyReluGrad")


def test_tiling_json_is_strict_with_nan_and_inf_attrs(capsys):
    """(A breaker) json.dumps wrote NaN and Infinity, which strict readers refuse (jq turned them
    into null and 1.797e308): they are the strings the results file and --dump write."""
    def refuse(word):
        raise ValueError(f"non-standard JSON constant {word}")

    code, out = _run(capsys, "tiling", "HardtanhGrad", "--shape", "3", "--soc", "Ascend950", "--min-val", "nan",
                     "--max-val", "inf", "--json")
    report = json.loads(out, parse_constant=refuse)
    assert code == 0 and report["attrs"] == {"min_val": "nan", "max_val": "inf"}
    assert (report["tilingData"]["minVal"], report["tilingData"]["maxVal"]) == ("nan", "inf")


def test_tiling_bounds_beyond_float32_simulate_without_warnings(capsys, recwarn):
    code, out = _run(capsys, "tiling", "HardtanhBackward", "--shape", "1000", "--dtype", "bfloat16",
                     "--min-val=1e39", "--max-val=2e39", "--simulate")
    assert code == 0 and "verdict    OK" in out and "min = inf" in out
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


def test_tiling_experimental_hardtanh_grad_with_shapes_that_disagree(capsys):
    """The 910B experimental tiling sizes its walk from result alone (op_host checks nothing):
    equal sizes in other shapes pair by position and simulate; a smaller grad (and so y) is
    reported, not simulated, and not a usage error. The note counts each tensor's overrun."""
    base = ("--soc", "Ascend910B", "tiling", "HardtanhGrad", "--shape", "4,4", "--dtype", "float32", "--simulate")
    code, out = _run(capsys, *base, "--shape2", "16")
    assert code == 0 and "verdict    OK" in out and "bit-exact vs the float64-derived reference" in out
    assert "L = 128 (N = 16): 112 elements read and written past the tensors" in out
    code, out = _run(capsys, *base, "--shape2", "1")
    assert code == 1
    assert "L = 128 (N = 16): elements read or written past result 112, grad 127, y 127; op_host does not" in out
    assert ("simulation   not run: HardtanhGrad: the launch walks [16, 16] input and 16 output elements but the "
            "tensors hold [16, 1] and 1") in out


@pytest.mark.parametrize("op", ["HardtanhGrad", "HardtanhBackward"])
@pytest.mark.parametrize("dtypes", ["float32,float32,float16", "float16,float16,float32", "bfloat16,bfloat16,float16",
                                    "float32,float16,float32", "float32,float32,int32"])
def test_tiling_simulate_where_no_kernel_runs(capsys, op, dtypes):
    """The 910B experimental tiling checks no dtypes: with no def row (or, for the aclnn name,
    phase 1 failing) nothing is simulated, and the command fails with the reasons, text and JSON
    alike (a new user's finding: the simulator raised TypeError on mixed dtypes)."""
    argv = ("--soc", "Ascend910B", "tiling", op, "--shape", "5", "--dtype", dtypes, "--simulate")
    code, out = _run(capsys, *argv)
    kernel = ", ".join(cli_words.data_type(d).name for d in dtypes.split(","))
    reason = "phase 1 fails, so no kernel is launched" if op == "HardtanhBackward" else (
        f"HardtanhGrad: no binary row of the def matches {kernel}: ops-nn builds no kernel for these dtypes, so "
        "there is no launch to simulate")  # (simulate.check_op's refusal)
    assert code == 1 and f"simulation   not run: {reason}" in out
    assert "FAILED       no binary row of the HardtanhGrad def matches" in out
    code, out = _run(capsys, *argv, "--json")
    report = json.loads(out)
    assert code == 1 and report["simulation"] == {"error": reason} and report["failures"]


def test_demo_train_quick_runs_both_trainings_bit_identical(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("sklearn")
    png = tmp_path / "loss.png"
    code, out = _run_process("demo", "--train", "--quick", "--plot", str(png))
    assert code == 0, out
    assert "bit-identical" in out and png.stat().st_size > 0


@pytest.mark.parametrize("op", ["LeakyRelu", "Hardtanh", "InplaceLeakyRelu", "InplaceHardtanh"])
def test_run_forward_ops_on_a_strided_self(capsys, op):
    code, out = _run(capsys, "run", op, "--shape", "3", "2", "--transpose")
    assert code == 0, out
    self_name = "selfRef" if op.startswith("Inplace") else "self"  # the call's own name for it
    assert f"Contiguous({self_name}) -> ws[0]" in out and "bit-exact" in out


def test_run_hardtanh_on_integers_truncates_bounds(capsys):
    code, out = _run(capsys, "run", "Hardtanh", "--dtype", "int32", "--scalar", "-1.5", "1.5")
    assert code == 0 and "bit-exact" in out


def test_run_draws_integer_inputs_beyond_the_default_bounds(capsys):
    """(A new user) `opsnn run hardtanh --dtype int32` drew floats in [-2, 2) truncated to -1, 0
    and 1, which the default bounds (-1, 1) never clip. Every integer dtype an operator's input
    takes now holds values beyond the bounds (a signed one negatives too), as the same seed
    always draws them; Hardtanh clips them, bit-exact with the reference."""
    from opsnn import registry
    from opsnn._core import dtypes, platform

    taken = {d for spec in registry.all_specs() for p in spec.inputs
             for profile in platform.PROFILES.values() for d in p.dtypes.for_profile(profile)}
    integral = sorted(dtypes.to_numpy(d).name for d in taken if d in dtypes.INTEGRAL)
    assert integral == ["int16", "int32", "int64", "int8", "uint8"]
    for name in integral:
        for seed in range(20):
            drawn = cli_args.random_input(np.random.default_rng(seed), (2, 3), name)
            assert drawn.dtype == name and drawn.shape == (2, 3)
            assert drawn.max() > 1 and (drawn.min() < -1 if name[0] == "i" else drawn.min() == 0), (name, seed, drawn)
            assert np.isin(drawn, (-1, 0, 1)).any(), (name, seed, drawn)  # and values the bounds keep
            assert np.array_equal(drawn, cli_args.random_input(np.random.default_rng(seed), (2, 3), name))
    floats = cli_args.random_input(np.random.default_rng(0), (2, 3), np.float32)  # as before: uniform [-2, 2)
    assert np.array_equal(floats, np.random.default_rng(0).uniform(-2, 2, (2, 3)).astype(np.float32))
    for name in integral:  # (session 42, a new user: uint8 took the bound -1 too, which it cannot hold:
        code, out = _run(capsys, "run", "hardtanh", "--dtype", name)  # 161002; its default min is 0 now)
        assert code == 0 and "bit-exact" in out, out
        assert f"min_val={0 if name == 'uint8' else -1}, max_val=1" in out, out
        self_text, result_text = out.split("\nself:\n")[1].split("\nresult:\n")
        drawn = np.array([int(v) for v in re.findall(r"-?\d+", self_text)])
        clipped = np.array([int(v) for v in re.findall(r"-?\d+", result_text)])
        assert np.array_equal(clipped, drawn.clip(0 if name == "uint8" else -1, 1)) and not np.array_equal(clipped, drawn)


def test_describe_says_what_out_must_be(capsys):
    _, out = _run(capsys, "describe", "Hardtanh")
    assert "must equal self's dtype" in out
    _, out = _run(capsys, "describe", "LeakyReluBackward")
    assert "any dtype the result can be cast to (CanCast)" in out
    # an in-place operator has no out: its one tensor is selfRef (a new user's breaker: describe
    # listed an out, "== self: no", that `opsnn run` then said the operator has not)
    for op, scalars in (("leaky_relu_", "negativeSlope"), ("hardtanh_", "clipValueMin, clipValueMax")):
        _, out = _run(capsys, "describe", op)
        assert "; the result is written into selfRef\n" in out and f"null check order: selfRef, {scalars}\n" in out
        assert "\n    selfRef        (self, tensor)\n" in out
        assert "\n    out " not in out and "CanCast" not in out and "must equal self's dtype" not in out


def test_run_releases_everything_it_allocated(capsys):
    from opsnn._core import memory

    before = (memory.DEVICE.allocation_count, memory.DEVICE.allocated_bytes)
    code, _ = _run(capsys, "run", "LeakyReluBackward", "--shape", "3", "4", "--transpose", "--out-dtype", "float64")
    assert code == 0
    assert (memory.DEVICE.allocation_count, memory.DEVICE.allocated_bytes) == before


@pytest.mark.parametrize("argv, code, words", [
    (["run", "HardtanhBackward", "--scalar", "1"], 2, ["takes 2 scalar(s)", "gave 1"]),
    (["run", "LeakyReluBackward", "--shape", "2", "3", "--grad-shape", "4", "3"], 1,
     ["161002", "cannot broadcast"]),
    (["run", "LeakyReluBackward", "--shape", "3", "--dtype", "int8"], 1, ["161002", "DT_INT8"]),
    (["run", "LeakyReluBackward", "--dtype", "nonsense"], 2, ["unknown dtype 'nonsense'"]),
    (["run", "LeakyReluBackward", "--dtype", "f16,f16,f16"], 2,
     ["--dtype takes 1 or 2 dtypes for aclnnLeakyReluBackward (gradOutput,self); got 3"]),
    (["run", "LeakyRelu", "--dtype", "f16,f32"], 2, ["--dtype takes 1 dtype for aclnnLeakyRelu (self); got 2"]),
    (["run", "HardtanhBackward", "--dtype", "bf16,f16"], 1, ["161002", "gradOutput must have the dtype of self"]),
    (["run", "LeakyReluBackward", "--shape", "2,x"], 2, ["bad shape '2,x'"]),
    (["run", "LeakyReluBackward", "--shape", "2,,3"], 2, ["bad shape"]),
    (["run", "LeakyReluBackward", "--shape=-2,3"], 2, ["dims must be >= 0"]),
    # (a breaker: without the "=" these two were "unrecognized arguments", and a bare --scalar ran
    # with the default slope)
    (["run", "LeakyReluBackward", "--shape", "-2,3"], 2, ["argument --shape: dims must be >= 0", "'-2,3'"]),
    (["run", "LeakyReluBackward", "--shape", "-2x3"], 2, ["argument --shape: dims must be >= 0", "'-2x3'"]),
    (["run", "LeakyReluBackward", "--scalar"], 2, ["argument --scalar: expected at least one argument"]),
    (["run", "HardtanhBackward", "--scalar", "1,,2"], 2, ["argument --scalar '1,,2': bad scalar ''"]),
    (["run", "LeakyReluBackward", "--scalar", "0.5x"], 2, ["argument --scalar '0.5x': bad scalar '0.5x'"]),
    (["run", "LeakyReluBackward", "--scalar", "2**64"], 2, ["bad scalar '2**64'", "(ints, floats, true, false)"]),
    (["run", "LeakyReluBackward", "--scalar", "18446744073709551616"], 2,
     ["scalar '18446744073709551616' is an int beyond int64 and uint64"]),
    (["run", "HardtanhBackward", "--scalar", "-1,"], 2, ["takes 2 scalar(s)", "gave 1"]),
    # a finite spelling beyond float64 was silently an infinity
    (["run", "HardtanhBackward", "--scalar", "-1", "1e400"], 2, ["scalar '1e400' is beyond float64's range"]),
    (["run", "LeakyReluBackward", "--scalar", "-2E+309"], 2, ["scalar '-2E+309' is beyond float64's range"]),
    # NumPy's byte codes next to bit-width short names (a second breaker: f8 ran float64, i4 int32)
    (["run", "Hardtanh", "--dtype", "f8"], 2, ["argument --dtype: dtype 'f8' is NumPy's code in bytes"]),
    (["tiling", "HardtanhBackward", "--shape", "2", "--dtype", "i4"], 2, ["dtype 'i4' is NumPy's code in bytes"]),
    (["run", "LeakyReluBackward", "--shape", "99999999999999999999"], 2, ["argument --shape", "< 2**63"]),
    (["tiling", "LeakyReluBackward", "--shape", "x"], 2, ["bad shape 'x'"]),
    # tiling takes negative dims (phase 1 reports them), not dims beyond int64 (a breaker's: it
    # printed dim0 = 99999999999999999999 and exit 0)
    (["tiling", "LeakyRelu", "--shape", "99999999999999999999"], 2, ["argument --shape", "int64 (< 2**63)"]),
    (["tiling", "LeakyRelu", "--shape", "4,-9223372036854775809"], 2, ["argument --shape", "int64"]),
    (["tiling", "LeakyReluBackward", "--shape", "2,x"], 2, ["bad shape '2,x'"]),
    (["tiling", "LeakyReluBackward", "--shape", "2,,3"], 2, ["bad shape"]),
    (["verify", "/nonexistent/cases.csv"], 2, ["/nonexistent/cases.csv: no such file; expected a ttk kernel ST csv"]),
    (["verify", "--max-elements", "-1", "x.csv"], 2, ["argument --max-elements: expected an integer >= 1, got '-1'"]),
    # arguments that do not fit the op are usage errors before "no config for this SoC" (exit 1)
    (["tiling", "HardtanhGrad", "--soc", "Ascend910", "--shape", "4", "--dtype", "f16,f16"], 2,
     ["--dtype takes 1 or 3 dtypes", "got 2"]),
    (["tiling", "HardtanhGrad", "--soc", "Ascend910", "--shape", "4", "--negative-slope", "1"], 2,
     ["HardtanhGrad has no --negative-slope"]),
    (["tiling", "LeakyReluBackward", "--shape", "2,3", "--shape2", "4,5", "--dtype", "float32"], 1,
     ["phase 1 fails: 161002", "cannot broadcast"]),
    # a dtype no aclTensor can hold is a usage error, not a null-pointer status
    (["run", "HardtanhBackward", "--dtype", "object"], 2, ["argument --dtype", "'object'", "no aclDataType"]),
    (["run", "LeakyReluBackward", "--out-dtype", "str"], 2, ["argument --out-dtype", "'str'", "no aclDataType"]),
    (["run", "HardtanhBackward", "--seed", "-1"], 2, ["argument --seed", "integer >= 0", "'-1'"]),
    (["run", "HardtanhBackward", "--shape", "[[2,3))"], 2, ["argument --shape", "bad shape '[[2,3))'"]),
    # one shape per option: a repeat is refused, not the last one kept (tiling takes one per input)
    (["run", "LeakyReluBackward", "--shape", "2,3", "--shape", "4,3"], 2,
     ["argument --shape: given twice (--shape 2,3 and --shape 4,3); give one shape; gradOutput's is --grad-shape"]),
    (["run", "LeakyReluBackward", "--grad-shape", "3", "--grad-shape", "[]"], 2,
     ["argument --grad-shape: given twice (--grad-shape 3 and --grad-shape [])"]),
    (["demo", "--shape", "2", "--shape"], 2, ["argument --shape: given twice (--shape 2 and --shape); give one shape\n"]),
    # (the CLI breaker) so are run's other options: argparse kept the last silently, --dtype f16 --dtype f32
    # (one per input?) ran both inputs as float32, and --scalar -1 --scalar 1 gave one bound
    (["run", "LeakyReluBackward", "--dtype", "f16", "--dtype", "f32"], 2,
     ["argument --dtype: given twice (--dtype f16 and --dtype f32); give one, or one per input in one: --dtype f16,f32\n"]),
    (["run", "Hardtanh", "--scalar", "-1", "--scalar=1"], 2,
     [("argument --scalar: given twice (--scalar -1 and --scalar 1); give every scalar in one, in the API's order "
       "(--scalar -1 1)\n")]),
    (["run", "LeakyRelu", "--out-dtype", "f16", "--out-dtype", "f64"], 2,
     ["argument --out-dtype: given twice (--out-dtype f16 and --out-dtype f64); give it once\n"]),
    (["run", "LeakyRelu", "--seed", "1", "--seed", "1"], 2, ["argument --seed: given twice (--seed 1 and --seed 1)"]),
    # (the regression breaker) tiling's too, where --shape is given once per input: --dtype f16 --dtype f32
    # planned every tensor as float32, a second --negative-slope kept the last
    (["tiling", "LeakyReluBackward", "--shape", "4", "--dtype", "f16", "--dtype", "f32"], 2,
     [("argument --dtype: given twice (--dtype f16 and --dtype f32); give one, or one per tensor in one, inputs "
       "then output: --dtype f16,f16,f32\n")]),
    (["tiling", "LeakyRelu", "--shape", "4", "--negative-slope", "0.1", "--negative-slope=0.2"], 2,
     ["argument --negative-slope: given twice (--negative-slope 0.1 and --negative-slope 0.2); give it once\n"]),
    (["tiling", "HardtanhGrad", "--shape", "4", "--min-val", "-1", "--max-val", "1", "--min-val", "-2"], 2,
     ["argument --min-val: given twice (--min-val -1 and --min-val -2); give it once\n"]),
    (["tiling", "LeakyRelu", "--shape", "4", "--simulate", "--seed", "1", "--seed", "2"], 2,
     ["argument --seed: given twice (--seed 1 and --seed 2); give it once\n"]),
    # (a regression breaker: verify --cases 0 --cases 5-6 ran only 5-6)
    (["verify", "x.csv", "--cases", "0", "--cases", "5-6"], 2,
     [("argument --cases: given twice (--cases 0 and --cases 5-6); give every selection in one, by commas: "
       "--cases 0,5-6\n")]),
    (["verify", "x.csv", "--golden", "torch", "--golden", "reference"], 2,
     ["argument --golden: given twice (--golden torch and --golden reference); give it once\n"]),
    (["verify", "x.csv", "--max-elements", "4", "--seed", "1", "--max-elements", "5"], 2,
     ["argument --max-elements: given twice (--max-elements 4 and --max-elements 5); give it once\n"]),
    (["verify", "x.csv", "--dump", "a", "--json", "j", "--json", "k"], 2,
     ["argument --json: given twice (--json j and --json k); give it once\n"]),
    (["compare", "d", "--output", "a.bin", "--output", "b.bin"], 2,
     ["argument --output: given twice (--output a.bin and --output b.bin); give it once\n"]),
    # options the operator has no parameter for are refused, not dropped
    (["run", "HardtanhBackward", "--self-is-result"], 2,
     ["--self-is-result does not apply to aclnnHardtanhBackward", "selfIsResult"]),
    (["run", "LeakyRelu", "--grad-shape", "2", "3"], 2, ["--grad-shape does not apply to aclnnLeakyRelu"]),
    (["run", "InplaceHardtanh", "--out-dtype", "float32"], 2,
     ["--out-dtype does not apply to aclnnInplaceHardtanh", "no out tensor"]),
    # demo's options fail before the samples run
    (["demo", "--repeat", "0"], 2, ["argument --repeat", "integer from 1 to 10000", "'0'"]),
    (["demo", "--shape=-5"], 2, ["argument --shape", "dims must be >= 0", "'-5'"]),
    # refused before the samples run, naming the shape (a breaker: NumPy's "array is too big" after them)
    (["demo", "--shape=4611686018427387904"], 2,
     [("opsnn demo: error: a float64 input of shape [4611686018427387904] needs 36893488147419103232 bytes, "
       "more than the 68719476736-byte emulated device memory")]),
    (["demo", "--seed", "-3"], 2, ["argument --seed", "integer >= 0", "'-3'"]),
    (["demo", "--shape", "1,1,1,1,1,1,1,1,1"], 2,
     ["opsnn demo: error: --shape [1, 1, 1, 1, 1, 1, 1, 1, 1] has 9 dims; aclnn tensors have at most 8"]),
    (["tiling", "LeakyReluBackward", "--shape", "(2,3]"], 2, ["bad shape '(2,3]'"]),
    (["run", "LeakyReluBackward", "--shape", "99999999999,99999999999"], 2,
     [("opsnn run: error: gradOutput of shape [99999999999, 99999999999] needs 39999999999200000000004 bytes, "
       "more than the 68719476736-byte emulated device memory")]),
    (["tiling", "LeakyRelu", "--shape", "4", "--simulate", "--seed", "-1"], 2, ["argument --seed", "'-1'"]),
    # (a breaker) --seed without --simulate had been taken and ignored
    (["tiling", "LeakyRelu", "--shape", "4", "--seed", "3"], 2,
     ["opsnn tiling: error: --seed seeds --simulate's random data; without --simulate nothing is random\n"]),
    (["tiling", "HardtanhBackward", "--shape", "[[2,3]]"], 2, ["bad shape '[[2,3]]'"]),
    # no def row, phase 1 fails: exit 1 on every SoC, whether or not the tiling itself goes through
    (["tiling", "HardtanhBackward", "--shape", "2,3", "--dtype", "float64"], 1,
     ["phase 1 fails: 161002", "FAILED       aclnnHardtanhBackward fails in phase 1 with 161002",
      "FAILED       no binary row of the HardtanhGrad def matches DOUBLE, DOUBLE, DOUBLE"]),
    # (a breaker) a dtype NumPy has no type for was a KeyError traceback (exit 1): phase 1 refuses it as int8
    *((["tiling", "aclnnLeakyReluBackward", "--shape", "3,5", "--dtype", name], 1,
       [(f"phase 1 fails: 161002 LeakyReluBackward: tensor gradOutput has dtype DT_{name.upper()}, which Ascend950 "
         "does not support"), "FAILED       aclnnLeakyReluBackward fails in phase 1 with 161002"])
      for name in ("hifloat8", "int4", "complex32", "float4_e2m1", "hifloat4")),
    *((["tiling", "aclnnLeakyReluBackward", "--shape", "3,5", "--dtype", f"f32,f32,{name}"], 1,
       [f"phase 1 fails: 561103 LeakyReluBackward: no Cast kernel from DT_FLOAT to DT_{name.upper()}"])
      for name in ("hifloat8", "hifloat4")),
    (["--soc", "Ascend950", "tiling", "HardtanhBackward", "--shape", "2,3", "--dtype", "float64"], 1,
     ["FAILED       no binary row of the HardtanhGrad def matches DOUBLE", "result dtype DT_DOUBLE is not supported"]),
    # a dynamic shape: infershape, then FAILED (docs/tiling.md), even for an aclnn name
    (["tiling", "HardtanhBackward", "--shape=-1,4"], 1,
     ["phase 1 not run", "y = [-1, 4]", "needs static shapes"]),
    # other negative dims are no dynamic dims: usage errors (a breaker: -7 was "dynamic")
    (["tiling", "aclnnLeakyReluBackward", "--shape=-7"], 2,
     ["opsnn tiling: error: shape [-7]: a dim is >= 0 or -1 (unknown), or the whole shape is [-2] (unknown rank)"]),
    (["--soc", "Ascend950", "tiling", "LeakyReluGrad", "--shape=-2,3", "--shape2", "1,3"], 2, ["shape [-2, 3]: a dim"]),
    # a kernel op's 9-D shape: GE's gert::Shape holds 8 dims (a breaker: it tiled); an aclnn name's phase 1 refuses it
    (["--soc", "Ascend950", "tiling", "HardtanhGrad", "--shape", "1,2,3,4,5,6,7,8,9"], 2,
     ["opsnn tiling: error: shape [1, 2, 3, 4, 5, 6, 7, 8, 9] has 9 dims; a kernel's shapes (GE's gert::Shape) hold at most 8\n"]),
    (["--soc", "Ascend950", "tiling", "aclnnHardtanhBackward", "--shape", "1,2,3,4,5,6,7,8,9"], 1,
     ["aclnnHardtanhBackward fails in phase 1 with 161002"]),
    # --shape2 beside a second --shape: both name the second input (a breaker: the --shape was dropped)
    (["--soc", "Ascend950", "tiling", "LeakyReluGrad", "--shape", "3", "--shape", "4", "--shape2", "5"], 2,
     [("opsnn tiling: error: --shape2 gives the second input's shape, which the second --shape gives too: give one of "
       "them (got --shape [4] and --shape2 [5])\n")]),
    (["tiling", "LeakyReluBackward", "--shape", "3", "--shape", "3", "--shape2", "3"], 2,
     ["opsnn tiling: error: --shape2 gives the second input's shape, which the second --shape gives too"]),
    # an unknown operator name is a usage error in every command, with the names it knows
    (["describe", "Nope"], 2, ["opsnn describe: error: unknown operator 'Nope'; known: LeakyReluBackward "
                               "(leaky_relu_backward), HardtanhBackward (hardtanh_backward), LeakyRelu (leaky_relu), "
                               "InplaceLeakyRelu (leaky_relu_), Hardtanh (hardtanh), InplaceHardtanh (hardtanh_)\n"]),
    (["run", "Nope"], 2, ["opsnn run: error: unknown operator 'Nope'; known: LeakyReluBackward (leaky_relu_backward), "]),
    # a misspelt one: the closest name of either spelling (a new user's: only the CANN names were given)
    (["run", "leaky_relu_backwrd"], 2, ["unknown operator 'leaky_relu_backwrd' (did you mean leaky_relu_backward?); "
                                        "known: "]),
    (["describe", "hardtanhbackwrd"], 2, ["unknown operator 'hardtanhbackwrd' (did you mean HardtanhBackward?); "]),
    (["tiling", "hardtanh_backwrd", "--shape", "2"], 2, ["(did you mean hardtanh_backward?)"]),
    (["tiling", "leakyrelugrd", "--shape", "2"], 2, ["no op definition for 'leakyrelugrd' (did you mean "
                                                     "LeakyReluGrad?): opsnn has the tilings of "]),
    (["tiling", "Hardtanh", "--shape", "2,3"], 2,  # no op_host def of ClipByValueV2 here
     ["opsnn tiling: error: no op definition for 'Hardtanh' (ClipByValueV2, the kernel of aclnnHardtanh, aclnnInplaceHardtanh, "
      "is ops-math's: opsnn runs it but does not model its tiling): opsnn has the tilings of HardtanhBackward, "
      "HardtanhGrad, InplaceLeakyRelu, LeakyRelu, LeakyReluBackward, LeakyReluGrad"]),
    # (a breaker) tiling's own usage errors lacked argparse's "error:"; tiling read 1e400 as inf
    # where run refuses it; bench refused 1e19 as "expected an integer >= 1" without the limit
    (["tiling", "LeakyReluBackward", "--shape", "2", "--shape", "2", "--shape", "2"], 2,
     ["opsnn tiling: error: LeakyReluBackward takes 2 input shape(s), got 3\n"]),
    (["tiling", "LeakyReluBackward"], 2, ["opsnn tiling: error: give at least one --shape\n"]),
    (["tiling", "HardtanhBackward", "--shape", "2", "--min-val", "1e400"], 2,
     [("opsnn tiling: error: argument --min-val: '1e400' is beyond float64's range; write inf or -inf for an "
       "infinity\n")]),
    (["tiling", "LeakyRelu", "--shape", "2", "--negative-slope", "x"], 2,
     ["opsnn tiling: error: argument --negative-slope: invalid float value: 'x'\n"]),
    # (a breaker) argparse drops the -- of --option=-- and calls no type function: a TypeError
    (["tiling", "LeakyRelu", "--shape", "2", "--negative-slope=--"], 2,
     ["opsnn tiling: error: argument --negative-slope: expected a value, got '--'\n"]),
    (["run", "LeakyReluBackward", "--shape", "2", "--seed=--"], 2,
     ["opsnn run: error: argument --seed: expected a value, got '--'\n"]),
    # (the CLI breaker) so do the options of one or more words: --shape=-- ran a 0-d call, --scalar=--
    # named an empty word (bench --ops=-- measured every operator)
    (["run", "LeakyRelu", "--shape=--"], 2, ["opsnn run: error: argument --shape: expected a value, got '--'\n"]),
    (["run", "Hardtanh", "--scalar=--"], 2, ["opsnn run: error: argument --scalar: expected a value, got '--'\n"]),
    (["tiling", "LeakyRelu", "--shape=--"], 2, ["opsnn tiling: error: argument --shape: expected a value, got '--'\n"]),
    (["run", "HardtanhBackward", "--scalar", "1e400", "1"], 2,
     [("opsnn run: error: argument --scalar '1e400 1': scalar '1e400' is beyond float64's range; write inf or -inf "
       "for an infinity (a float travels as ACL_DOUBLE)\n")]),
    (["bench", "--sizes", "1e19"], 2,
     [("opsnn bench: error: argument --sizes: expected an integer >= 1, got '1e19' (written with an exponent, "
       "at most 1e18: write the digits for more)\n")]),
])
def test_cli_errors_are_messages_not_tracebacks(capsys, argv, code, words):
    """Bad arguments, impossible shapes, unsupported dtypes and missing files: a status line or
    a one-line error and exit 1 (the call failed) or 2 (usage / input file), no traceback."""
    try:
        got = cli.main(argv)
    except SystemExit as exc:  # argparse's own usage errors
        got = exc.code
    captured = capsys.readouterr()
    text = captured.out + captured.err
    assert got == code, text
    assert "Traceback" not in text
    for word in words:
        assert word in text, text


@pytest.mark.parametrize("argv, shown", [
    (["run", "HardtanhBackward", "--shape", "3", "--scalar", "-inf", "inf"], "min_val=-inf, max_val=inf"),
    (["run", "HardtanhBackward", "--shape", "3", "--scalar", "-1e3", "1"], "min_val=-1000.0, max_val=1.0"),
    (["run", "LeakyReluBackward", "--shape", "3", "--scalar", "-5."], "negative_slope=-5.0"),
    (["run", "LeakyReluBackward", "--shape", "3", "--scalar", "-.5E-1"], "negative_slope=-0.05"),
    (["run", "LeakyReluBackward", "--shape", "3", "--scalar", "-NaN"], "negative_slope=-nan"),
    # scalars by commas, with or without spaces (a breaker: "-5," was read as an unknown option)
    (["run", "HardtanhBackward", "--shape", "3", "--scalar", "-5,", "5"], "min_val=-5.0, max_val=5.0"),
    (["run", "HardtanhBackward", "--shape", "3", "--scalar", "-1e3,-.5"], "min_val=-1000.0, max_val=-0.5"),
    (["run", "HardtanhBackward", "--shape", "3", "--scalar", "-inf, inf"], "min_val=-inf, max_val=inf"),
    (["tiling", "HardtanhBackward", "--shape", "4", "--dtype", "float16", "--min-val", "-Infinity"], "-inf"),
])
def test_cli_takes_every_negative_float_literal(capsys, argv, shown):
    """A negative scalar in any float spelling, alone or in a list with commas, is a value, not
    an unknown option (argparse alone takes only -5, -.5 and -2.5)."""
    code, out = _run(capsys, *argv)
    assert code == 0 and shown in out, out


@pytest.mark.parametrize("argv, shown", [
    (["Hardtanh", "--dtype", "int64", "--scalar", "-9223372036854775808", "9223372036854775807"],
     "min_val=-9223372036854775808, max_val=9223372036854775807"),
    (["Hardtanh", "--dtype", "int64", "--scalar", "0", "9007199254740993"], "max_val=9007199254740993"),
    (["LeakyReluBackward", "--scalar", "4611686293305294849"], "negative_slope=4.6116866e+18"),
    (["LeakyReluBackward", "--scalar", "true"], "negative_slope=1.0"),
    (["HardtanhBackward", "--scalar", "False,TRUE"], "min_val=0.0, max_val=1.0"),
    (["LeakyReluBackward", "--scalar", "-0"], "negative_slope=-0.0"),  # (a reviewer: the int lost the sign)
])
def test_cli_run_types_scalars_as_the_pythonic_api(capsys, argv, shown):
    """An int is an exact ACL_INT64 scalar, true / false ACL_BOOL, as in the Pythonic API (a
    breaker: every scalar was a float, so int64's limits were refused after a detour through
    float64, 2**53 + 1 became 2**53, and a slope of 2**62 + 2**38 + 1 was rounded twice); the
    golden takes the same values, so the result is bit-exact."""
    code, out = _run(capsys, "run", *argv, "--shape", "5")
    assert code == 0 and shown in out and "bit-exact" in out, out


def test_cli_verify_malformed_case_files(tmp_path, capsys):
    (tmp_path / "a.csv").write_text("a,b\n1,2\n")
    (tmp_path / "b.json").write_text('{"x": 1}')
    (tmp_path / "c.json").write_text("{x")
    for name, kind in (("a.csv", "ttk kernel ST csv"), ("b.json", "atk aclnn ST json"),
                       ("c.json", "atk aclnn ST json")):
        assert cli.main(["verify", str(tmp_path / name)]) == 2
        err = capsys.readouterr().err
        assert f"not a readable {kind} case file" in err and name in err, err


@pytest.mark.parametrize("name, acl", [("f16", "DT_FLOAT16"), ("f32", "DT_FLOAT"), ("f64", "DT_DOUBLE"), ("bf16", "DT_BF16")])
def test_cli_run_takes_the_bench_dtype_names(capsys, name, acl):
    """f16 means float16 here (NumPy alone would read it as a 16-byte float128)."""
    code, out = _run(capsys, "run", "LeakyReluBackward", "--dtype", name)
    assert code == 0 and acl in out and "bit-exact" in out


def test_cli_run_imports_ml_dtypes_for_its_types_only():
    """A breaker: `opsnn run --dtype f32` imported ml_dtypes (~0.7 s, 0.7.0) to parse any name."""
    code = ("import sys\n"
            "from opsnn import cli\n"
            "assert cli.main(['run', 'LeakyRelu', '--dtype', 'f32']) == 0\n"
            "assert 'ml_dtypes' not in sys.modules\n"
            "assert cli.main(['run', 'LeakyRelu', '--dtype', 'float8_e5m2']) == 1\n"
            "assert 'ml_dtypes' in sys.modules\n")
    out = run_python(code, 300)
    assert "tensor self has dtype DT_FLOAT8_E5M2, which Ascend910B does not support" in out, out


@pytest.mark.parametrize("name, acl", [("i8", "DT_INT8"), ("u8", "DT_UINT8"), ("s16", "DT_INT16"), ("i32", "DT_INT32"),
                                       ("i64", "DT_INT64")])
def test_cli_integer_short_names_are_bit_widths(capsys, name, acl):
    """As f16 is float16: i8 is int8 (NumPy alone reads "i8" as the 8-byte int64; a breaker's
    `--dtype i8` ran int64)."""
    code, out = _run(capsys, "run", "Hardtanh", "--shape", "3", "--dtype", name, "--scalar", "0", "1")
    assert code == 0 and f"-> out [{acl}," in out and "bit-exact" in out, out


def test_cli_run_accepts_comma_dims_and_0d(capsys):
    code, out = _run(capsys, "run", "LeakyReluBackward", "--shape", "2,3", "--dtype", "bf16")
    assert code == 0 and "bit-exact" in out and "DT_BF16" in out
    code, out = _run(capsys, "run", "HardtanhBackward", "--shape")
    assert code == 0 and "bit-exact" in out
    code, out = _run(capsys, "run", "HardtanhBackward", "--shape", "[]")  # 0-d: a bare number printed
    assert code == 0 and "bit-exact" in out and "[" not in out.strip().splitlines()[-1]
    code, out = _run(capsys, "run", "HardtanhBackward", "--shape", "2x3")
    rows = out.strip().splitlines()[-2:]  # the printed result: 2 rows of 3 numbers
    assert code == 0 and rows[0].startswith("[[") and rows[1].endswith("]]")
    assert [len(re.findall(r"-?\d+\.?\d*(?:e[-+]?\d+)?", row)) for row in rows] == [3, 3], rows


def test_run_transpose_keeps_a_0d_or_1d_self(capsys):
    """Nothing to transpose: the shape stays (a 0-d self became [1] and failed against its grad)."""
    code, out = _run(capsys, "run", "HardtanhBackward", "--shape", "[]", "--transpose")
    assert code == 0 and "ret 0 (ACLNN_SUCCESS)" in out and "bit-exact" in out
    assert "[" not in out.strip().splitlines()[-1]  # a bare 0-d number
    code, out = _run(capsys, "run", "LeakyRelu", "--shape", "4", "--transpose")
    assert code == 0 and "Contiguous(self)" not in out and "bit-exact" in out
    assert len(re.findall(r"-?\d+\.\d*", out.strip().splitlines()[-1])) == 4


@pytest.mark.parametrize("text, dims", [("2", (2,)), ("[2, 3]", (2, 3)), ("(2,3)", (2, 3)), ("2x3", (2, 3)),
                                        ("[]", ()), ("()", ()), ("", ()), (" [ 4 ] ", (4,))])
def test_parse_shape_takes_one_bracket_pair(text, dims):
    from opsnn.cli_words import parse_shape

    assert parse_shape(text) == dims


@pytest.mark.parametrize("text", ["[[2,3))", "[[2,3]]", "((2))", "[2,3)", "(2,3]", "[2,3", "2,3]", "[", "]["])
def test_parse_shape_refuses_stray_brackets(text):
    import argparse

    from opsnn.cli_words import parse_shape

    with pytest.raises(argparse.ArgumentTypeError, match="bad shape"):
        parse_shape(text)


@pytest.mark.parametrize("text", ["\u0663,\u0662", "\uff12x\uff13", "2,\u0663"])
def test_parse_shape_takes_ascii_digits_only(text):
    """(A tiling breaker) Arabic-Indic and full-width digits, which re's \\d and int() read,
    made "\u0663,\uff12" the shape [3, 2]: a dim is written in ASCII digits, as CANN writes it."""
    import argparse

    from opsnn.cli_words import parse_shape

    with pytest.raises(argparse.ArgumentTypeError, match="bad shape"):
        parse_shape(text)


@pytest.mark.parametrize("argv, option, word", [
    (["run", "leaky_relu", "--scalar", "\u0663"], "--scalar '\u0663'", "'\u0663' (U+0663)"),
    (["run", "hardtanh", "--scalar", "-1,\uff11.\uff15"], "--scalar '-1,\uff11.\uff15'", "'\uff11' (U+FF11)"),
    (["run", "leaky_relu", "--scalar", "\u22121"], "--scalar '\u22121'", "'\u2212' (U+2212)"),
    (["run", "leaky_relu", "--seed", "\u0661"], "--seed", "'\u0661' (U+0661)"),
    (["demo", "--repeat", "\uff13"], "--repeat", "'\uff13' (U+FF13)"),
    (["tiling", "leaky_relu", "--shape", "2", "--negative-slope", "\uff10.5"], "--negative-slope", "'\uff10' (U+FF10)"),
    (["run", "leaky_relu", "--shape", "\uff12,3"], "--shape", "'\uff12' (U+FF12)"),
    # (the regression breaker: verify's counts and indices took them, --max-elements \u0661\u0660\u0660 as 100)
    (["verify", "x.csv", "--max-elements", "\u0661\u0660\u0660"], "--max-elements", "'\u0661' (U+0661)"),
    (["verify", "x.csv", "--cases", "0\u00a0-\u00a01,\u0660-\u0661"], "--cases", "'\u0660' (U+0660)")])
def test_every_number_the_command_line_reads_is_ascii(capsys, argv, option, word):
    """(A breaker) --scalar, --seed, the counts and the float options took other scripts' digits,
    as int() and float() read them (`run leaky_relu --scalar \u0663` ran a slope of 3, a full-width
    "\uff11.\uff15" 1.5), where a shape's dims were refused: one rule, saying which character, whose
    full-width form looks like the ASCII one."""
    with pytest.raises(SystemExit) as exc:  # argparse's usage error
        cli.main(argv)
    captured = capsys.readouterr()
    err = captured.err
    assert exc.value.code == 2 and not captured.out and f"argument {option}" in err, err
    assert f"{word} is not ASCII, in which numbers are read" in err, err


@pytest.mark.parametrize("argv, said", [
    (["run", "leaky_relu", "--seed", "_5"], "argument --seed: expected an integer >= 0, got '_5'"),
    (["run", "leaky_relu", "--seed", "5_"], "argument --seed: expected an integer >= 0, got '5_'"),
    (["demo", "--repeat", "1__0"], "argument --repeat: expected an integer from 1 to 10000, got '1__0'"),
    # (--ops bogus: a line refused whatever --sizes takes, so that no bench runs)
    (["bench", "--sizes", "1e_3", "--ops", "bogus"], "argument --sizes: expected an integer >= 1, got '1e_3'"),
    (["verify", "x.csv", "--max-elements", "_5"], "argument --max-elements: expected a number of elements, got '_5'"),
])
def test_an_underscore_not_between_two_digits_is_refused(capsys, argv, said):
    """(A breaker) `--seed _5` ran seed 5: a whole number int() refuses was read by Decimal, which
    takes an underscore anywhere (leading, trailing, doubled, beside an exponent's e). Python's
    separator between two digits is still read (1_000, 1_0e3)."""
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    assert exc.value.code == 2
    assert capsys.readouterr().err.endswith(f"error: {said}: an underscore goes only between two digits (1_000)\n")
    assert [cli_words.int_at_least(0)(text) for text in ("1_000", "1_0e3", "1e1_0")] == [1000, 10000, 10**10]


@pytest.mark.parametrize("argv, shape", [([], (256, 1024)), (["--shape", "2x3"], (2, 3)),
                                         (["--shape", "2,3", "4"], (2, 3, 4)), (["--shape", "[]"], ()),
                                         (["--shape"], ()), (["--shape", "[2,", "3]"], (2, 3))])
def test_demo_shape_takes_the_run_grammar(argv, shape):
    import argparse

    from opsnn import demo

    parser = argparse.ArgumentParser()
    demo.add_arguments(parser)
    assert parser.parse_args(argv).shape == shape


def test_tiling_json_lists_why_it_failed(capsys):
    code, out = _run(capsys, "tiling", "HardtanhBackward", "--shape", "2,3", "--dtype", "float64", "--json")
    report = json.loads(out)
    assert code == 1 and report["phase1Status"] == 161002 and report["defMatch"]["rowIndex"] is None
    assert [f.split(" ")[0] for f in report["failures"]] == ["aclnnHardtanhBackward", "no"]
    assert "tilingData" in report  # what op_host would compute is still shown
    code, out = _run(capsys, "tiling", "HardtanhBackward", "--shape", "2,3", "--dtype", "float32", "--json")
    assert code == 0 and "failures" not in json.loads(out)


def test_tiling_of_an_empty_aclnn_call_shows_the_fast_path(capsys):
    """aclnn returns at its empty-tensor fast path before any kernel is built, so there is no
    tiling to fail (not even a def row to match); the kernel op itself is still refused by op_host."""
    fast_path = ("tiling       none: aclnnLeakyReluBackward takes the empty-tensor fast path: success, "
                 "workspace 0, no LeakyReluGrad kernel launched, nothing tiled")
    for dtype in ("float16", "float64"):  # float64: no binary row, which no kernel needs here
        code, out = _run(capsys, "tiling", "LeakyReluBackward", "--shape", "0,3", "--dtype", dtype, "--simulate")
        lines = out.splitlines()
        assert code == 0 and "FAILED" not in out, out
        assert lines[-2:] == ["infershape   backprops = [0, 3]", fast_path], out
        assert "  step       (no steps: empty tensor fast path)" in lines
    code, out = _run(capsys, "tiling", "LeakyReluBackward", "--shape", "0,3", "--json")
    report = json.loads(out)
    assert code == 0 and report["emptyFastPath"] == fast_path.removeprefix("tiling       none: ")
    assert "tilingData" not in report and "failures" not in report
    code, out = _run(capsys, "tiling", "LeakyReluGrad", "--shape", "0,3")
    assert code == 1
    assert out.splitlines()[-1] == "FAILED       LeakyReluGrad tiling failed: output dim 0 must be positive, got 0"


@pytest.mark.parametrize("api, kernel", [("LeakyRelu", "LeakyRelu"), ("LeakyReluBackward", "LeakyReluGrad")])
def test_tiling_of_a_float64_aclnn_call_names_the_aicpu_kernel(capsys, api, kernel):
    """Found by a breaker: DOUBLE, which aclnn accepts and its l0 function hands to the AICPU op,
    was "FAILED ... ops-nn builds no kernel for these dtypes" (exit 1). No AI Core kernel is
    tiled: exit 0, saying so; the kernel op itself still has no DOUBLE row."""
    code, out = _run(capsys, "tiling", f"aclnn{api}", "--shape", "4,5", "--dtype", "float64", "--json")
    report = json.loads(out)
    assert code == 0 and "failures" not in report and "tilingData" not in report, out
    assert report["aicpu"] == (f"aclnn{api} hands DOUBLE to the AICPU {kernel} op (its l0 function picks AI Core "
                               "only for a def row's dtypes): no AI Core kernel, nothing tiled")
    code, out = _run(capsys, "tiling", kernel, "--shape", "4,5", "--dtype", "float64")
    assert code == 1 and "no binary row of the" in out


def test_tiling_of_tensors_past_the_address_space_still_tiles(capsys):
    """The tiling needs shapes only; phase 1 runs on described storages (reserved address
    ranges): 2**60 float16 elements (2 EiB each) are more than any 64-bit host's address space
    holds (57 bits with 5-level paging), which the step line says, and the tiling is printed with
    exit 0 (it was 'out of host memory', exit 1)."""
    code, out = _run(capsys, "--soc", "Ascend910B", "tiling", "aclnnHardtanhBackward", "--shape", str(2**60),
                     "--dtype", "fp16")
    assert code == 0, out
    assert "  step       phase 1 not run here: its tensors cannot be described in this host's address space (" \
        f"{2**61} bytes of address space cannot be reserved on this host" in out
    assert "tiling key   1" in out and "block dim    48" in out



def test_tiling_without_a_posix_mmap_runs_phase_1_on_zeroed_arrays(capsys, monkeypatch):
    """Windows' mmap reserves no address range without committing it (it takes neither flags nor
    prot; the module failed there at its first line): reserved.described makes a zeroed array
    instead, so a small call's phase 1 reports as on Linux, and one past the host's memory is
    refused as past its address space."""
    from opsnn._core import reserved

    args = ("tiling", "aclnnLeakyReluBackward", "--shape", "4,4", "--transpose")
    expected = _run(capsys, *args)
    monkeypatch.setattr(reserved, "_POSIX", False)
    assert _run(capsys, *args) == expected and expected[0] == 0
    array = reserved.described((2, 3), np.float16)
    assert array.shape == (2, 3) and array.dtype == np.float16 and not array.any()
    with pytest.raises(MemoryError, match=f"^{2**61} bytes of address space cannot be reserved on this host"):
        reserved.described((2**60,), np.float16)


HUGE = 2**20  # a side of the 2**40-element tensors below: 2 TiB of float16 each, which this host cannot allocate
# Their phase 1 reserves up to 24 TiB of address space (reserved.described: 2**40 complex64 elements
# thrice); under a process limit on it (ulimit -v) phase 1 is not run, which the step line says.
_AS_LIMIT = resource.getrlimit(resource.RLIMIT_AS)[0]
needs_address_space = pytest.mark.skipif(_AS_LIMIT != resource.RLIM_INFINITY and _AS_LIMIT < 2**45,
                                         reason=f"the address space is limited to {_AS_LIMIT} bytes (ulimit -v)")


@needs_address_space
def test_tiling_of_a_huge_aclnn_call_runs_phase_1_and_tiles_by_the_formula(capsys):
    """An open item: phase 1 was skipped (exit 0, 'phase 1 not run here') for tensors the host
    cannot allocate. It runs on described storages now, whatever the size: its steps and host
    plan are printed, and the tiling is opdef.tile's for the kernel's shapes and dtypes."""
    from opsnn import opdef
    from opsnn._core import platform
    from opsnn._core.dtypes import DataType
    from opsnn.opdef import TensorDesc

    code, out = _run(capsys, "tiling", "aclnnLeakyReluBackward", "--shape", f"{HUGE},{HUGE}", "--json")
    report = json.loads(out)
    assert code == 0 and "failures" not in report and "phase1Status" not in report, out
    assert report["executorSteps"] == ["workspace 0 B", ("LeakyReluGrad(gradOutput, self; negative_slope=0.0) -> out "
                                                         "[DT_FLOAT16, computed in DT_FLOAT]")]
    assert report["kernelDtypes"] == ["FLOAT16"] * 3
    # (its thread and block counts are this host's)
    assert f" threads ({3 * 2 * HUGE**2} bytes moved): flat walk over dims [{HUGE**2}], " in report["hostPlan"][0]
    op, _ = opdef.find("LeakyReluGrad")
    desc = TensorDesc((HUGE, HUGE), DataType.FLOAT16)
    formula = opdef.tile(op, platform.get_profile(report["soc"]["name"]), [desc] * 2, [desc], {"negative_slope": 0.0})
    assert report["tilingData"] == formula.tiling_data.to_dict() and report["tilingKey"] == formula.tiling_key
    assert report["blockDim"] == formula.block_dim == 64
    # a transposed self: phase 1's Contiguous step and its 2 TiB workspace slot
    code, out = _run(capsys, "tiling", "aclnnInplaceLeakyRelu", "--shape", f"{HUGE},{HUGE}", "--transpose")
    assert code == 0, out
    assert f"  step       workspace {4 * HUGE**2} B" in out and "  step       Contiguous(selfRef) -> ws[0]" in out


_SQUARE, _SMALL = f"{HUGE},{HUGE}", "4,4"
_NINE_D = ",1" * 7  # seven 1s: nine dims


@needs_address_space
@pytest.mark.parametrize("op, extra, huge_shapes, small_shapes, said", [
    ("aclnnLeakyReluBackward", ["--dtype", "float16,float32,int32"], [_SQUARE], [_SMALL], None),
    ("aclnnLeakyReluBackward", ["--dtype", "float32,float32,float8_e5m2"], [_SQUARE], [_SMALL], None),
    ("aclnnLeakyReluBackward", ["--dtype", "hifloat8"], [_SQUARE], [_SMALL], None),
    ("aclnnHardtanhBackward", ["--dtype", "complex64"], [_SQUARE], [_SMALL], None),
    ("aclnnHardtanhBackward", ["--dtype", "float16,float16,complex32"], [_SQUARE], [_SMALL], None),
    ("aclnnLeakyRelu", ["--dtype", "int8"], [_SQUARE], [_SMALL], None),
    ("aclnnLeakyReluBackward", [], [_SQUARE, f"{HUGE},{HUGE - 1}"], [_SMALL, "4,3"],
     (f"LeakyReluBackward: the shape of gradOutput [{HUGE}, {HUGE}] and the shape of self [{HUGE}, {HUGE - 1}] "
      "cannot broadcast (each aligned dim must be equal or 1)")),
    ("aclnnLeakyReluBackward", [], [_SQUARE + _NINE_D], [_SMALL + _NINE_D],
     f"LeakyReluBackward: gradOutput has 9 dimensions [{HUGE}, {HUGE}, 1, 1, 1, 1, 1, 1, 1]; at most 8 are supported"),
])
def test_tiling_of_a_huge_aclnn_call_phase_1_refuses_says_what_a_small_one_says(capsys, op, extra, huge_shapes,
                                                                                small_shapes, said):
    """The open item's other half: a call phase 1 refuses exited 0 when its tensors were too large
    to allocate. Now exit 1 with the status and message of the same call on 4 x 4 tensors (where
    the message shows the shapes, ``said``: the huge shapes', with the small call's status)."""
    def phase_1(shapes):
        code, out = _run(capsys, "tiling", op, *[a for shape in shapes for a in ("--shape", shape)], *extra, "--json")
        report = json.loads(out)
        assert code == 1 and report["failures"][0] == (f"{op} fails in phase 1 with {report['phase1Status']} (its "
                                                       "executor step says why): no kernel is launched"), out
        return report["phase1Status"], report["executorSteps"]

    status, steps = phase_1(huge_shapes)
    small_status, small_steps = phase_1(small_shapes)
    assert status == small_status
    assert steps == ([f"phase 1 fails: {status} {said}"] if said else small_steps)


@pytest.mark.parametrize("rank", [9, 65])
def test_tiling_of_an_aclnn_call_of_more_dims_than_numpy_holds_says_phase_1_refuses_it(capsys, rank):
    """A 65-d shape (NumPy holds 64 dims) said "phase 1 not run here" where phase 1 refuses any
    rank past 8 (161002) before it reads an address: the refusal a 9-d shape gets, in --json and
    in the failures."""
    dims = [1] * (rank - 1) + [3]
    code, out = _run(capsys, "tiling", "aclnnLeakyRelu", "--shape", ",".join(map(str, dims)), "--json")
    report = json.loads(out)
    assert code == 1 and report["phase1Status"] == 161002, out
    assert report["executorSteps"] == [(f"phase 1 fails: 161002 LeakyRelu: self has {rank} dimensions {dims}; at "
                                        "most 8 are supported")]
    # (a --json reader has no "step above": the failure points at the executorSteps entry, a breaker)
    assert report["failures"][0] == ("aclnnLeakyRelu fails in phase 1 with 161002 (its executor step says why): no "
                                     "kernel is launched")


def test_tiling_runs_phase_1_for_the_soc_it_tiles_for_when_it_picks_the_ops_own(capsys):
    """With no --soc and an op not built for the current SoC, the tiling is the op's own SoC's
    (the soc line says so), but phase 1 ran for the current one: on Ascend310P aclnnLeakyRelu
    'failed in phase 1 with 561003' (exit 1) beside Ascend950's tiling, and on Ascend910B a dtype
    refusal named Ascend910B's list. Phase 1 now runs for the SoC tiled."""
    from opsnn._core import platform

    with platform.use_soc("Ascend310P"):
        code, out = _run(capsys, "tiling", "aclnnLeakyRelu", "--shape", "4", "--json")
    report = json.loads(out)
    assert code == 0 and "failures" not in report, out
    assert report["soc"] == {"name": "Ascend950", "vectorCoreNum": 64, "ubSize": 245760,
                             "note": "LeakyRelu is not built for the current Ascend310P; using Ascend950"}
    assert report["executorSteps"] == ["workspace 0 B", ("LeakyRelu(self; negative_slope=0.0) -> out [DT_FLOAT16, "
                                                         "computed in DT_FLOAT]")]
    with platform.use_soc("Ascend910B"):
        code, out = _run(capsys, "tiling", "aclnnLeakyReluBackward", "--shape", "4", "--dtype", "int32", "--json")
    steps = json.loads(out)["executorSteps"]
    assert code == 1 and steps == [(
        "phase 1 fails: 161002 LeakyReluBackward: tensor gradOutput has dtype DT_INT32, which Ascend950 does not "
        "support; it must be one of [DT_FLOAT, DT_FLOAT16, DT_DOUBLE, DT_BF16]; no SoC does (LeakyReluBackward has "
        "no DT_INT32 kernel)")], out


@needs_address_space
def test_phase_1_refuses_an_out_overlapping_its_input_on_described_storages_as_on_arrays():
    """Phase 1's out-overlap check runs unchanged on described storages (reserved address
    ranges, what opsnn tiling's phase 1 uses): an out one element past self on self's 2 TiB
    storage is refused with the message the same views of a small array get, and an out of a
    storage of its own, or self itself, passes."""
    from opsnn import engine, registry
    from opsnn._core import reserved
    from opsnn._core.status import AclnnError
    from opsnn._core.tensor import ArrayTensor, aclScalar

    spec = registry.get("LeakyRelu")

    def refusal(storage, n):
        call = {"self": ArrayTensor(storage[:n]), "out": ArrayTensor(storage[1:n + 1]),
                "negative_slope": aclScalar(0.0, 0)}
        with pytest.raises(AclnnError) as info:
            engine.plan(spec, call)
        return info.value

    n = 2**40
    huge = refusal(reserved.described((n + 1,), np.float32), n)
    small = refusal(np.zeros(17, np.float32), 16)
    assert huge.status == small.status == 161002
    assert huge.message == small.message.replace("[16]", f"[{n}]")
    assert huge.message == (f"LeakyRelu: out and self overlap in memory without being the same view (out DT_FLOAT "
                            f"[{n}] strides [1] ND, self DT_FLOAT [{n}] strides [1] ND with its first element 4 bytes "
                            "before out's first); pass self itself as out for an in-place update, or an out that "
                            "shares no memory with it")
    own = ArrayTensor(reserved.described((n,), np.float32))
    for out in (ArrayTensor(reserved.described((n,), np.float32)), own):
        assert engine.plan(spec, {"self": own, "out": out, "negative_slope": aclScalar(0.0, 0)}).plan.out_shape == (n,)


def test_tiling_simulate_of_tensors_too_large_for_the_host_prints_the_tiling(capsys, monkeypatch):
    """A breaker's: --simulate of a shape NumPy cannot hold ended as a usage error (exit 2, NumPy's
    message alone). The tiling is printed and the simulation says why it did not run. That is a
    limit of this host, no failed check: exit 0, as the tiling of tensors phase 1 cannot allocate
    here (a breaker: it was exit 1 with no FAILED line and no failures in --json); --json says
    why under simulation.notRun. A simulation that would need more memory than the host has
    available is refused before any array is made (another breaker: with Linux's overcommit the
    arrays of `--shape 3000000000` were made, and the out-of-memory killer ended the process as
    they filled: exit 137, no output); where that cannot be read, NumPy's refusal says it."""
    from opsnn._core import memory

    for available, said in ((lambda: 16 << 20, f"the simulation of {2**20} output elements (inputs, output, "
                                                "write counts, a float64 reference) needs ~"),
                            (lambda: None, f"cannot hold input 0 [{2**56}] on this host (")):
        monkeypatch.setattr(memory, "host_available", available)
        shape = str(2**20) if available() else str(2**56)
        for op in ("LeakyRelu", "aclnnLeakyReluBackward"):
            code, out = _run(capsys, "tiling", op, "--shape", shape, "--dtype", "float32", "--simulate")
            assert code == 0, out
            assert "tiling key" in out and "block dim" in out and "FAILED" not in out
            line = next(line for line in out.splitlines() if line.startswith("simulation"))
            # (a new user) the line read "not run: simulate: the simulation of": the word once
            assert line.startswith(f"simulation   not run: {said}"), line
            assert line.endswith((" bytes available now: a limit of this host, not a failed check",
                                  "): a limit of this host, not a failed check")), line
            code, out = _run(capsys, "tiling", op, "--shape", shape, "--dtype", "float32", "--simulate", "--json")
            report = json.loads(out)
            assert code == 0 and "failures" not in report and list(report["simulation"]) == ["notRun"]
            assert report["simulation"]["notRun"].startswith(said)
    monkeypatch.setattr(memory, "host_available", lambda: 256 << 20)  # room for it: it runs
    code, out = _run(capsys, "tiling", "LeakyRelu", "--shape", str(2**20), "--dtype", "float32", "--simulate")
    assert code == 0 and "verdict    OK" in out


def test_run_and_demo_of_inputs_too_large_for_the_host_are_usage_errors(capsys, monkeypatch):
    """(A new-user breaker) `opsnn demo --shape 3000000000`, within the emulated device memory,
    was ended by the out-of-memory killer as its arrays filled (Linux overcommits): exit 137,
    nothing said; `opsnn run` alike. Both now estimate the host memory they will touch against
    what is available and refuse before anything runs; where that cannot be read, they run."""
    from opsnn._core import memory

    def _run(capsys, *argv):  # stdout and stderr
        code = cli.main(list(argv))
        captured = capsys.readouterr()
        return code, captured.out + captured.err

    monkeypatch.setattr(memory, "host_available", lambda: 1 << 20)
    code, out = _run(capsys, "demo", "--shape", "100000", "--repeat", "1")
    assert code == 2 and "result[0]" not in out, out
    assert ("opsnn demo: error: the dtype table of shape [100000] needs ~7200000 bytes of host memory, more than "
            "the 1048576 bytes available now") in out
    code, out = _run(capsys, "run", "LeakyReluBackward", "--shape", "100000", "--dtype", "f32")
    assert code == 2 and "GetWorkspaceSize" not in out, out
    assert ("opsnn run: error: aclnnLeakyReluBackward of gradOutput [100000], self [100000] needs ~6800000 bytes of host memory, more "
            "than the 1048576 bytes available now") in out
    code, out = _run(capsys, "run", "LeakyReluBackward", "--shape", "2", "--grad-shape", "100000,2")
    assert code == 2 and "aclnnLeakyReluBackward of gradOutput [100000, 2], self [2] needs ~" in out, out
    code, out = _run(capsys, "run", "Hardtanh", "--shape", "1000", "--dtype", "int8")  # fits: it runs
    assert code == 0 and "aclnnHardtanh: ret 0" in out, out
    monkeypatch.setattr(memory, "host_available", lambda: None)
    code, out = _run(capsys, "run", "LeakyReluBackward", "--shape", "100000", "--dtype", "f32")
    assert code == 0 and "aclnnLeakyReluBackward: ret 0" in out, out


def test_run_of_a_broadcast_larger_than_its_inputs_counts_the_result(capsys, monkeypatch):
    """`opsnn run`'s host-memory estimate took the result as large as the largest input, so a
    broadcast of two small inputs to a large result (1 x 2000 with 2000 x 1: 4e6 elements) was
    let run however little memory was available; the result's elements are now the broadcast
    shape's: 3 x the inputs' 16000 bytes, plus 4e6 x (3 x 4 + 32) bytes."""
    from opsnn._core import memory

    monkeypatch.setattr(memory, "host_available", lambda: 1 << 20)
    code = cli.main(["run", "LeakyReluBackward", "--shape", "1", "2000", "--grad-shape", "2000", "1"])
    out = capsys.readouterr()
    assert code == 2 and "GetWorkspaceSize" not in out.out, out
    assert out.err == ("opsnn run: error: aclnnLeakyReluBackward of gradOutput [2000, 1], self [1, 2000] needs "
                       "~176048000 bytes of host memory, more than the 1048576 bytes available now\n")


def test_tiling_reads_an_aclnn_name_in_any_case(capsys):
    """(a new user) `opsnn tiling leakyrelubackward` matched the def case-insensitively, then
    looked the aclnn API up by the word as typed: a KeyError traceback, exit 1."""
    outs = []
    for name in ("LeakyReluBackward", "leakyrelubackward", "ACLNNLEAKYRELUBACKWARD", "leaky_relu_backward"):
        code, out = _run(capsys, "tiling", name, "--shape", "4", "--json")
        assert code == 0, out
        outs.append(json.loads(out))
    assert outs[0] == outs[1] == outs[2] == outs[3] and outs[0]["executorSteps"]
    # the Pythonic name of an in-place API is its aclnn API's (as opsnn run reads it)
    code, out = _run(capsys, "tiling", "leaky_relu_", "--shape", "4", "--json")
    assert code == 0 and json.loads(out)["aclnn"]["api"] == "InplaceLeakyRelu", out
    assert cli.main(["tiling", "leaky_relu_grad_", "--shape", "4"]) == 2
    assert "no op definition for 'leaky_relu_grad_'" in capsys.readouterr().err


@pytest.mark.parametrize("kernel", ["HardtanhGrad", "LeakyReluGrad"])
def test_tiling_reads_a_kernel_ops_name_in_snake_case_as_the_kernel_op(capsys, kernel):
    """`opsnn tiling hardtanh_grad` tiled aclnnHardtanhBackward, whose tensors come in another
    order (gradOutput, self for HardtanhGrad's result, grad) and whose phase 1 runs (float64: the
    API's 161002 where the kernel op has no DOUBLE row): a snake-case kernel name is the kernel op,
    as the kernel name in any case is; aclnn_hardtanh_grad is no API, as aclnnHardtanhGrad is not."""
    snake = "_".join(re.findall("[A-Z][a-z]+", kernel)).lower()
    for argv in (["--shape", "2,3", "--shape2", "2,3"], ["--shape", "4", "--dtype", "float64"]):
        reports = []
        for name in (kernel, snake):
            code, out = _run(capsys, "tiling", name, *argv, "--json")
            reports.append((code, json.loads(out)))
        assert reports[0] == reports[1] and "aclnn" not in reports[1][1], reports[1]
    # said in the words typed (it named 'aclnnhardtanhgrad', a word no user wrote), with the API
    api = "aclnnHardtanhBackward" if kernel == "HardtanhGrad" else "aclnnLeakyReluBackward"
    for prefix in ("aclnn_", "ACLNN_"):
        assert cli.main(["tiling", f"{prefix}{snake}", "--shape", "4"]) == 2
        assert capsys.readouterr().err.endswith(
            f"error: no aclnn API named '{prefix}{snake}': {snake} is a kernel op (name it without '{prefix}'); "
            f"the aclnn API of its kernel is {api}\n")
    # the same mistake in camel case (opdef.find's refusal) gets the same advice: it had listed every API opsnn tiles
    assert cli.main(["tiling", f"aclnn{kernel}", "--shape", "4"]) == 2
    assert capsys.readouterr().err.endswith(
        f"error: no aclnn API named 'aclnn{kernel}': {kernel} is a kernel op (name it without 'aclnn'); "
        f"the aclnn API of its kernel is {api}\n")


@pytest.mark.parametrize("name", ["clip_by_value_v2", "aclnn_clip_by_value_v2", "ACLNN_CLIP_BY_VALUE_V2",
                                  "ClipByValueV2", "aclnn_hardtanh", "hardtanh_", "Inplace_Hardtanh", "hardtanh"])
def test_tiling_of_a_kernel_op_it_does_not_model_says_so_by_any_spelling(capsys, name):
    """(a regression breaker) Hardtanh's kernel, ClipByValueV2, is ops-math's, whose tiling opsnn
    does not model: in snake case it was refused as "no op definition for 'clipbyvaluev2'", a
    word no user typed, and behind an aclnn prefix told to drop the prefix and that its kernel's
    API is aclnnHardtanh, two names refused in turn for that very reason. Every spelling gets
    the one reason, naming the kernel, and the words typed, as every other tiling refusal does
    (aclnn_hardtanh and hardtanh_ had been refused as 'aclnnHardtanh' and 'aclnnInplaceHardtanh')."""
    assert cli.main(["tiling", name, "--shape", "4"]) == 2
    assert capsys.readouterr().err.endswith(
        f"error: no op definition for {name!r} (ClipByValueV2, the kernel of aclnnHardtanh, aclnnInplaceHardtanh, "
        "is ops-math's: opsnn runs it but does not model its tiling): opsnn has the tilings of HardtanhBackward, "
        "HardtanhGrad, InplaceLeakyRelu, LeakyRelu, LeakyReluBackward, LeakyReluGrad\n")


def test_an_unknown_option_gets_the_commands_usage_and_its_own_spelling(capsys):
    """(a new user) `run ... --min-val -2` and `tiling ... --scalar 0.1` printed opsnn's top-level
    usage and "unrecognized arguments" alone: the command's usage is shown, and an option another
    command spells otherwise is named with this command's spelling."""
    for argv, says in ((["run", "hardtanh_backward", "--shape", "2,3", "--min-val", "-2"],
                        "opsnn run: error: unrecognized arguments: --min-val -2 (--min-val: opsnn run takes "
                        "--scalar MIN MAX)"),
                       (["tiling", "leaky_relu_backward", "--shape", "2,3", "--scalar", "0.1"],
                        "opsnn tiling: error: unrecognized arguments: --scalar 0.1 (--scalar: opsnn tiling takes "
                        "--negative-slope / --min-val / --max-val)"),
                       (["list", "--bogus"], "opsnn list: error: unrecognized arguments: --bogus"),
                       # written with =value, or shortened as argparse reads options (a breaker)
                       (["run", "leaky_relu_backward", "--negative=0.1"], "opsnn run: error: unrecognized arguments: "
                        "--negative=0.1 (--negative-slope: opsnn run takes --scalar SLOPE)")):
        with pytest.raises(SystemExit) as exited:
            cli.main(argv)
        err = capsys.readouterr().err
        assert exited.value.code == 2 and err.startswith(f"usage: opsnn {argv[0]} ") and err.rstrip().endswith(says), err
    with pytest.raises(SystemExit):  # an option given to opsnn itself, before the command: opsnn's usage
        cli.main(["--bogus", "list"])
    err = capsys.readouterr().err
    assert err.startswith("usage: opsnn [-h]") and err.rstrip().endswith("opsnn: error: unrecognized arguments: --bogus")


def test_a_misspelt_option_before_the_operator_says_what_op_was_read_as(capsys):
    """(A breaker) `run --shapes 2 3 leaky_relu_backward` said "unrecognized arguments: --shapes 3
    leaky_relu_backward" alone: argparse had read OP as "2". The hint names the option it is
    likely to be and what OP was read as."""
    for argv, says in ((["run", "--shapes", "2", "3", "leaky_relu_backward"],
                        "opsnn run: error: unrecognized arguments: --shapes 3 leaky_relu_backward (--shapes is no "
                        "option of opsnn run, did you mean --shape?; OP was read as '2', the first word no option "
                        "took: give the operator first, opsnn run OP [options])"),
                       (["run", "leaky_relu_backward", "--shapes", "2"],
                        "opsnn run: error: unrecognized arguments: --shapes 2 (--shapes is no option of opsnn run, "
                        "did you mean --shape?)")):
        with pytest.raises(SystemExit) as exited:
            cli.main(argv)
        err = capsys.readouterr().err
        assert exited.value.code == 2 and err.rstrip().endswith(says), err


def test_bench_out_dir_that_is_no_folder_is_named(tmp_path, capsys):
    """(A breaker) `bench --out-dir afile` said "[Errno 17] File exists: 'afile'": the option is
    named, and what it is; before anything is measured. A file of that name is a usage error
    (exit 2); a folder the system will not make is an I/O failure (exit 1), as verify's --json
    and --dump say it (session 42: it was exit 2 here, 1 there)."""
    pytest.importorskip("torch")
    (tmp_path / "afile").write_text("x")
    path = tmp_path / "afile"
    assert cli.main(["bench", "--quick", "--out-dir", str(path)]) == 2
    # (the last line: in this process bench may first warn that torch is already imported)
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"opsnn bench: error: --out-dir {str(path)!r} is a file, not a folder (bench.json, bench.md and bench.png "
        "go into it)")
    # (a breaker) an empty path was the current folder, written into without a word
    assert cli.main(["bench", "--quick", "--out-dir", ""]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "opsnn bench: error: --out-dir is an empty path; name a folder ('.' for the current one) (bench.json, "
        "bench.md and bench.png go into it)")
    # (a breaker) a link to nothing was "cannot write into the folder ...: File exists", exit 1
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    assert cli.main(["bench", "--quick", "--out-dir", str(tmp_path / "dangling")]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"opsnn bench: error: --out-dir {str(tmp_path / 'dangling')!r} is a symbolic link to "
        f"{os.path.realpath(tmp_path / 'nowhere')!r}, which does not exist; make that folder or name another (bench.json, "
        "bench.md and bench.png go into it)")
    path = tmp_path / "afile" / "sub"
    assert cli.main(["bench", "--quick", "--out-dir", str(path)]) == 1
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"opsnn bench: --out-dir: cannot write into the folder {str(path)!r}: Not a directory")
    assert (tmp_path / "afile").read_text() == "x"


def test_tiling_shape_takes_the_words_run_takes(capsys):
    """(a new user) `tiling --shape 2 3` was "unrecognized arguments: 3" under opsnn's own usage:
    each --shape reads its words as opsnn run's does, one shape per --shape (per input)."""
    shapes = []
    for argv in (["--shape", "2", "3", "--shape", "1", "3"], ["--shape", "2,3", "--shape", "[1,", "3]"],
                 ["--shape", "2x3", "--shape2", "1", "3"]):
        code, out = _run(capsys, "tiling", "LeakyReluGrad", *argv, "--json")
        assert code == 0, (argv, out)
        shapes.append(json.loads(out)["tilingData"]["inputBrcDims"])
    assert shapes == [[[2, 3], [1, 3]]] * 3, shapes
    with pytest.raises(SystemExit) as exited:
        cli.main(["tiling", "LeakyReluGrad", "--shape", "2", "a"])
    assert exited.value.code == 2 and "argument --shape: bad shape '2 a'" in capsys.readouterr().err
    # the operator after a --shape of several words is read as a dim: the refusal says where it goes
    for command in ("tiling", "run"):
        with pytest.raises(SystemExit):
            cli.main([command, "--shape", "2", "3", "hardtanh_backward"])
        assert capsys.readouterr().err.rstrip().endswith(
            f"'hardtanh_backward' is no dim: give the operator before the options (opsnn {command} "
            "hardtanh_backward --shape 2 3)")


def test_tiling_help_says_a_bare_shape_is_0d(capsys):
    """(A breaker) a bare --shape or --shape2 is a 0-d tensor, as `opsnn run --help` says of its
    --shape; tiling's --help said only [] for it."""
    with pytest.raises(SystemExit) as exited:
        cli.main(["tiling", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert exited.value.code == 0
    assert "1x64x2x64 (nothing or [] for 0-d;" in help_text
    assert "in place of a second --shape (not beside one; nothing or [] for 0-d)" in help_text
    code, out = _run(capsys, "tiling", "LeakyReluGrad", "--shape", "--shape2", "[]", "--soc", "Ascend950")
    assert code == 0 and "infershape   backprops = []" in out


@pytest.mark.parametrize("command", ["run", "verify", "tiling"])
def test_every_soc_option_names_the_known_socs_in_its_help(capsys, command):
    """(a new user) verify's and tiling's --soc showed `--soc SOC` in usage and help where the
    other commands' name the SoCs: each names them, in the usage and beside its help."""
    with pytest.raises(SystemExit) as exited:
        cli.main([command, "--help"])
    out = capsys.readouterr().out
    socs = "{Ascend910,Ascend910B,Ascend910_93,Ascend950,Ascend310P,Ascend310B}"
    assert exited.value.code == 0
    assert f"[--soc {socs}]" in " ".join(out.split()) and f"\n  --soc {socs}\n" in out, out


def test_run_and_describe_read_an_operator_in_any_case_or_its_pythonic_name(capsys):
    """(a new user) `opsnn run leakyrelubackward` and `describe leaky_relu_backward` were unknown
    operators where `opsnn tiling` read any case; `hardtanh_` names the in-place variant."""
    for name, api in (("leakyrelubackward", "aclnnLeakyReluBackward"), ("leaky_relu_backward", "aclnnLeakyReluBackward"),
                      ("hardtanh_", "aclnnInplaceHardtanh"), ("ACLNNLEAKYRELU", "aclnnLeakyRelu"),
                      ("hardtanhgrad", "aclnnHardtanhBackward")):
        code, out = _run(capsys, "describe", name)
        assert code == 0 and out.startswith(f"{api}GetWorkspaceSize / {api} "), (name, out[:120])
    code, out = _run(capsys, "run", "leaky_relu_backward", "--shape", "4")
    assert code == 0 and "aclnnLeakyReluBackward: ret 0" in out
    assert cli.main(["describe", "leaky_relu_grad_"]) == 2
    assert "unknown operator 'leaky_relu_grad_'" in capsys.readouterr().err


def test_a_name_in_any_case_resolves_as_its_exact_spelling_in_every_command(capsys, monkeypatch):
    """(A breaker) `describe clipbyvaluev2` was an unknown operator while `describe ClipByValueV2`
    was Hardtanh: the kernel is Hardtanh's and InplaceHardtanh's, and a lowercased name had to
    match one spec. A name in any case resolves as its exact spelling does (registry.get); one
    whose spellings name different operators is "ambiguous", naming them; and `bench --ops`
    takes the names run takes (it took the exact names only)."""
    import dataclasses

    from opsnn import bench, registry

    for name in ("ClipByValueV2", "clipbyvaluev2", "CLIPBYVALUEV2", "aclnnclipbyvaluev2"):
        code, out = _run(capsys, "describe", name)
        assert code == 0 and out.startswith("aclnnHardtanhGetWorkspaceSize / aclnnHardtanh "), (name, out[:120])
    code, out = _run(capsys, "run", "CLIPBYVALUEV2", "--shape", "3")
    assert code == 0 and "aclnnHardtanh: ret 0" in out
    twin = dataclasses.replace(registry.get("LeakyRelu"), name="Leakyrelu", kernel_name="Other")
    monkeypatch.setitem(registry._REGISTRY, "Leakyrelu", twin)
    assert registry.resolve("LeakyRelu").name == "LeakyRelu" and registry.resolve("Leakyrelu") is twin
    assert cli.main(["describe", "leakyrelu"]) == 2
    assert capsys.readouterr().err == (
        "opsnn describe: error: ambiguous operator name 'leakyrelu': in other cases it names LeakyRelu: "
        "aclnnLeakyRelu; Leakyrelu: aclnnLeakyrelu; give one of these spellings exactly\n")
    monkeypatch.delitem(registry._REGISTRY, "Leakyrelu")
    parser = argparse.ArgumentParser(prog="opsnn bench")
    bench.add_arguments(parser)
    ops = parser.parse_args(["--ops", "hardtanh_backward", "aclnnHardtanhBackward", "leakyrelugrad", "clipbyvaluev2"]).ops
    assert ops == ["HardtanhBackward", "LeakyReluBackward", "Hardtanh"]  # (one operator by two names: measured once)
    measured = ("LeakyReluBackward (leaky_relu_backward), HardtanhBackward (hardtanh_backward), LeakyRelu (leaky_relu), "
                "Hardtanh (hardtanh)")
    for word, says in (("hardtanh_", "argument --ops: 'hardtanh_' names InplaceHardtanh, which bench does not "
                                     "measure; expected one of LeakyReluBackward, HardtanhBackward, LeakyRelu, "
                                     "Hardtanh (by any name opsnn run takes)\n"),
                       # (a breaker) an unknown name was offered, and told of, the in-place ones bench refuses
                       *((word, f"argument --ops: unknown operator {word!r}{hint}; expected one of: {measured}\n")
                         for word, hint in (("Nope", ""), ("hardtanh_x", " (did you mean Hardtanh?)"),
                                            ("InplaceHardtanhh", " (did you mean Hardtanh?)")))):
        with pytest.raises(SystemExit):
            parser.parse_args(["--ops", word])
        assert capsys.readouterr().err.endswith(says)


def test_tiling_simulate_with_a_nan_bound_compares_with_pytorch(capsys):
    """DECISIONS 8: with a NaN bound the kernels differ from PyTorch, the 910B and the 950 one alike."""
    for soc in ("Ascend910B", "Ascend950"):
        code, out = _run(capsys, "--soc", soc, "tiling", "HardtanhBackward", "--shape", "1000",
                         "--min-val", "nan", "--simulate")
        line = next(line for line in out.splitlines() if "vs PyTorch" in line)
        differ = int(line.split()[2])
        assert code == 0 and differ > 300 and "differ from PyTorch's result" in line and "NaN bound" in line, out
        assert "strict-bound semantics" not in out


@pytest.mark.parametrize("short, numpy_name, acl_name", [
    ("f16", "float16", "FLOAT16"), ("bf16", "bfloat16", "BF16"), ("f32", "float32", "FLOAT"),
    ("f64", "float64", "DOUBLE"), ("fp16", "float16", "FLOAT16"), ("half", "float16", "FLOAT16"),
    ("float", "float32", "FLOAT"), ("FLOAT", "float32", "FLOAT"), ("ACL_FLOAT16", "float16", "FLOAT16"),
    ("DT_BF16", "bfloat16", "BF16"), ("double", "float64", "DOUBLE"), ("acl_double", "float64", "DOUBLE"),
])
def test_short_dtype_names_read_alike_in_every_subcommand(capsys, short, numpy_name, acl_name):
    """The names opsnn bench prints (f16, bf16 ...) and CANN's (FLOAT, ACL_FLOAT16, DT_BF16, any
    case) mean one dtype to ``run`` and ``tiling``; the tiling command had refused f16 as an
    unknown dtype, and (a breaker) ``run`` refused ACL_FLOAT16 and read "float" as NumPy's
    float64 where ``tiling`` read CANN's float32."""
    assert cli_words.numpy_dtype(short) == cli_words.numpy_dtype(numpy_name) != np.dtype(np.float128)
    code, out = _run(capsys, "--soc", "Ascend950", "tiling", "HardtanhGrad", "--shape", "4", "--dtype", short,
                     "--json")
    report = json.loads(out)
    assert report["defMatch"]["dtypes"] == [acl_name] * 3
    # HardtanhGrad has no DOUBLE row: the tiling is shown, the command fails
    assert (code, report["defMatch"]["rowIndex"] is None) == ((1, True) if acl_name == "DOUBLE" else (0, False))


def test_dtype_words_keep_their_prefix_forms_and_numpy_codes():
    """(A reviewer) the shared grammar had dropped ACL_ / DT_ before a NumPy or short name
    (acl_float32, dt_f16, ACL_BFLOAT16: tiling had taken them) and lower-cased NumPy's one-letter
    codes (B, uint8, read as b, int8)."""
    from opsnn.cli_words import data_type

    for word, name in (("acl_float32", "FLOAT"), ("dt_f16", "FLOAT16"), ("ACL_BFLOAT16", "BF16"), ("B", "UINT8"),
                       ("b", "INT8"), ("H", "UINT16"), ("F", "COMPLEX64"), ("Float32", "FLOAT"), ("ACL_FLOAT", "FLOAT"),
                       # (a new user) C's words as C and torch mean them, as "float" is float32 (int ran int64);
                       # complex widths in bits (c64 was said to be NumPy's code in bytes, which it is not)
                       ("int", "INT32"), ("uint", "UINT32"), ("long", "INT64"), ("c64", "COMPLEX64"), ("c128", "COMPLEX128")):
        assert data_type(word).name == name, word
    assert cli_words.numpy_dtype("B") == np.dtype(np.uint8) and cli_words.numpy_dtype("acl_float32") == np.dtype(np.float32)
    for word, numpy_form in (("U8", "'<U8' (str256)"), (">f4", "'>f4' (float32)")):  # (a breaker: what NumPy made of it)
        with pytest.raises(argparse.ArgumentTypeError, match=re.escape(f"is NumPy's {numpy_form}, which no aclDataType")):
            data_type(word)


@pytest.mark.parametrize("argv", [["-m", "opsnn", "run", "LeakyReluBackward"],
                                  ["-m", "opsnn", "tiling", "LeakyRelu", "--shape", "4,5", "--dtype", "float16", "--simulate"],
                                  ["-m", "opsnn.samples"], [str(Path(__file__).resolve().parents[1] / "examples" / "test_aclnn_hardtanh_grad.py")]])
def test_cli_output_into_a_closed_pipe_ends_quietly_with_141(argv):
    """Found by a breaker: `opsnn ... | head -1` printed "[Errno 32] Broken pipe" as a usage error
    (exit 2), or exited 1, the status of a failed operator call (rich's own handling); the
    samples, run as README says, printed a BrokenPipeError traceback (a new user's)."""
    proc = subprocess.Popen([sys.executable, *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # the reader is gone before the first line
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=300) == 141 and err == "", err


@pytest.mark.parametrize("argv", [["--version"], ["--help"], ["run", "-h"], []])
def test_help_and_version_into_a_closed_pipe_end_with_141_too(argv):
    """(A breaker) `opsnn --version | head -0` was a BrokenPipeError traceback, exit 1, and
    `opsnn --help | head -0` exited 0, argparse dropping the write's error: the rule of every
    command's output (141, nothing on stderr) holds for them, and for a bare `opsnn`'s help."""
    proc = subprocess.Popen([sys.executable, "-m", "opsnn", *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert (proc.wait(timeout=300), err) == (141, "")


_CASE_FILE = str(Path(__file__).resolve().parents[1] / ".." / "shared" / "cases" / "ops-nn"
                 / "atk_aclnnLeakyReluBackward.json")


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs Linux's /dev/full")
@pytest.mark.parametrize("argv, prog", [
    (["-m", "opsnn", "--help"], "opsnn"), (["-m", "opsnn", "--version"], "opsnn"), (["-m", "opsnn"], "opsnn"),
    (["-m", "opsnn", "run", "-h"], "opsnn run"), (["-m", "opsnn.samples", "-h"], "python -m opsnn.samples"),
    (["-m", "opsnn", "list"], "opsnn list"), (["-m", "opsnn", "describe", "hardtanh"], "opsnn describe"),
    (["-m", "opsnn", "cache"], "opsnn cache"), (["-m", "opsnn", "run", "leaky_relu", "--shape", "4"], "opsnn run"),
    (["-m", "opsnn", "tiling", "LeakyReluBackward", "--shape", "4", "--json"], "opsnn tiling"),
    (["-m", "opsnn", "verify", _CASE_FILE, "--cases", "0", "--json", "-"], "opsnn verify"),
    (["-m", "opsnn.samples"], "python -m opsnn.samples")])
def test_output_into_a_full_stdout_is_a_one_line_io_failure(argv, prog):
    """(Breakers) a command's output into a full disk (`opsnn list > /dev/full`) was a usage
    error, "opsnn list: error: [Errno 28] ...", exit 2, and help and --version there too; the
    samples' output a traceback, exit 1. It is an output that could not be written, exit 1 as
    an output file's is, in one line naming stdout, where it leads and the system's reason (a
    closed pipe stays 141, nothing said: test_cli_output_into_a_closed_pipe_ends_quietly_with_141)."""
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, *argv], stdout=full, stderr=subprocess.PIPE, text=True, timeout=300,
                              check=False)
    line = f"{prog}: cannot write the output to stdout (/dev/full): No space left on device\n"
    assert done.returncode == 1, done.stderr  # (a bare `opsnn` too: its help, a usage error's, said nothing)
    # (verify --json - writes its tables to stderr, before the results)
    assert done.stderr == line if "verify" not in argv else done.stderr.endswith("\n" + line), done.stderr


def test_the_samples_read_their_option_as_opsnn_does():
    """(The CLI breaker) `python -m opsnn.samples`'s own argparse parser took --soc=-- as no SoC
    (the samples ran on the default one) and wrote -h into a closed pipe with exit 0: opsnn's
    parser refuses the first, and the help ends with 141, as opsnn's own."""
    done = subprocess.run([sys.executable, "-m", "opsnn.samples", "--soc=--"], capture_output=True, text=True,
                          timeout=300, check=False)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.endswith("python -m opsnn.samples: error: argument --soc: expected a value, got '--'\n")
    proc = subprocess.Popen([sys.executable, "-m", "opsnn.samples", "-h"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert (proc.wait(timeout=300), err) == (141, "")


def test_cache_removal_failure_names_the_file_by_its_whole_path(capsys, monkeypatch, tmp_path):
    """(The CLI breaker) a file --prune could not remove was named by its name alone, as rmtree
    ("could not remove .../numba-kernels-44444444: [Errno 1] Operation not permitted: 'a'"):
    its whole path is named; the directory is left, the others removed, exit 1 (a removal the
    system refused is an I/O failure, as an output it will not take: it was 2, a usage error's)."""
    from opsnn.kernels import kernel_cache as kc

    monkeypatch.setenv("OPSNN_CACHE_DIR", str(tmp_path))
    stuck, other = tmp_path / (kc.CACHE_PREFIX + "44444444"), tmp_path / (kc.CACHE_PREFIX + "55555555")
    for folder, name in ((stuck, "a"), (other, "b")):
        folder.mkdir()
        (folder / name).write_bytes(b"x")
    unlink = os.unlink

    def refuse(path, *args, **kwargs):  # (the superuser, who runs these tests, may remove anything)
        if Path(path).name == "a":
            raise PermissionError(1, "Operation not permitted", path)
        return unlink(path, *args, **kwargs)

    monkeypatch.setattr(os, "unlink", refuse)
    assert cli.main(["cache", "--prune"]) == 1
    captured = capsys.readouterr()
    assert captured.err == f"opsnn cache: could not remove {stuck}: [Errno 1] Operation not permitted: '{stuck / 'a'}'\n"
    assert captured.out == f"removed 1 kernel cache directory (0.0 MiB) under {tmp_path}\n"
    assert (stuck / "a").exists() and not other.exists()


def test_a_cache_folder_swapped_for_a_link_is_refused_in_words(capsys, monkeypatch, tmp_path):
    """(A regression breaker) a stale cache folder replaced by a symbolic link after --prune listed
    it (another process) was refused by rmtree in its own words, which carry no errno, and
    remove_tree's hook made them '[Errno None] None: PATH'. The refusal is said as rmtree says
    it, naming the path; the link's target is left."""
    from opsnn.kernels import kernel_cache as kc

    monkeypatch.setenv("OPSNN_CACHE_DIR", str(tmp_path))
    target, link = tmp_path / "elsewhere", tmp_path / (kc.CACHE_PREFIX + "44444444")
    target.mkdir()
    (target / "a").write_bytes(b"x")
    link.symlink_to(target)
    monkeypatch.setattr(kc, "stale_cache_dirs", lambda: [link])  # (listed as a folder, then swapped)
    assert cli.main(["cache", "--prune"]) == 1
    assert capsys.readouterr().err == (f"opsnn cache: could not remove {link}: Cannot call rmtree on a symbolic link: "
                                       f"'{link}'\n")
    assert (target / "a").exists()


def test_the_help_names_every_exit_status_a_command_gives(capsys):
    """(found checking the session's exit statuses) `opsnn -h` gave 1 for an output that could not
    be written and 5 for a run whose every case skipped, but cache's removal the system refused
    exits 1 too (test_cache_removal_failure_names_the_file_by_its_whole_path) and compare of a dump
    that lists no case 5 (test_compare): the epilog says both."""
    with pytest.raises(SystemExit) as exc:
        cli.main(["-h"])
    assert exc.value.code == 0
    out = " ".join(capsys.readouterr().out.split())
    assert ("exit status: 0 success; 1 an operator call, a verified or compared case or a tiling check failed, or "
            "an output (a file, stdout) could not be written, or a cache the system keeps could not be removed; 2 "
            "usage error or unreadable input file; 5 verify or compare checked no case (each skipped, or the dump "
            "lists none); 130 interrupted") in out, out


def test_cache_listing_says_where_the_first_call_makes_it(capsys, monkeypatch, tmp_path):
    """A root not made yet is no cache yet, though the temporary directory holds one from an
    earlier unwritable root (it listed that one: a breaker's leftover failed the test below);
    a root that takes no file (/proc: os.access passes root there) is named with the temporary
    directory the first call then uses (it said "makes it under /proc/x")."""
    from opsnn.kernels import kernel_cache as kc

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    kc._versioned(tmp_path / "tmp", temporary=True).mkdir(mode=0o700)  # an earlier run's
    monkeypatch.setenv("OPSNN_CACHE_DIR", str(tmp_path / "root" / "deeper"))
    assert kc.root_takes_cache() and kc.existing_cache_dir() is None
    code, out = _run(capsys, "cache")
    assert code == 0 and "none yet" in out and f"the first call makes it under {tmp_path / 'root' / 'deeper'}" in out
    assert not (tmp_path / "root").exists()
    if os.path.isdir("/proc/self"):
        monkeypatch.setenv("OPSNN_CACHE_DIR", "/proc/opsnn-cache")
        assert not kc.root_takes_cache()
        assert kc.existing_cache_dir() == kc._versioned(tmp_path / "tmp", temporary=True)


def test_cache_shows_prunes_and_clears_only_kernel_caches(capsys, monkeypatch, tmp_path):
    """`opsnn cache` names this version's kernel cache and the stale ones beside it; --prune
    removes those of other versions, --clear this one's too; nothing under the root that is not
    named as a kernel cache is touched (the root may be a directory of the user's)."""
    from opsnn.kernels import kernel_cache as kc

    monkeypatch.setenv("OPSNN_CACHE_DIR", str(tmp_path / "root"))
    code, out = _run(capsys, "cache")  # a listing makes nothing (it made this version's directory)
    assert code == 0 and "kernel cache  none yet" in out and not (tmp_path / "root").exists()
    tmp_path = tmp_path / "root"
    current = kc.cache_dir()
    (current / "k_0.py").write_text("x" * 1000)
    stale = tmp_path / (kc.CACHE_PREFIX + "0123abcd")
    stale.mkdir()
    (stale / "k_1.py").write_text("y" * (3 << 20))
    kept = [tmp_path / (kc.CACHE_PREFIX + "keep"), tmp_path / "notes.txt", tmp_path / "elsewhere",
            tmp_path / (kc.CACHE_PREFIX + "feedbeef")]
    kept[0].mkdir()
    kept[1].write_text("mine")
    kept[2].mkdir()
    (kept[2] / "data").write_text("mine too")
    kept[3].symlink_to(kept[2])  # named as a cache, but a link: not ours to follow
    code, out = _run(capsys, "cache")
    assert code == 0 and f"{current}: 1 kernel module, 0.0 MiB" in out
    assert f"other versions  1 directory, 3.0 MiB under {tmp_path}" in out
    code, out = _run(capsys, "cache", "--prune")
    assert code == 0 and out == f"removed 1 kernel cache directory (3.0 MiB) under {tmp_path}\n"
    assert not stale.exists() and current.exists() and all(p.exists() for p in kept)
    code, out = _run(capsys, "cache")
    assert "other versions" not in out
    code, out = _run(capsys, "cache", "--clear")
    assert code == 0 and "removed 1 kernel cache directory" in out
    assert not current.exists() and all(p.exists() for p in kept) and (kept[2] / "data").exists()


def test_cache_in_a_root_that_is_not_writable_is_private(capsys, monkeypatch, tmp_path):
    """A cache root that cannot be written (here a file) sends the kernels to the temporary
    directory: one named for the user and version when it is this user's private directory,
    else a fresh private one (in a shared /tmp anyone could make that name first and plant
    modules there; a breaker's). `opsnn cache` says where it is and why."""
    import os

    from opsnn.kernels import kernel_cache as kc

    root = tmp_path / "a-file"
    root.write_text("not a directory")
    monkeypatch.setenv("OPSNN_CACHE_DIR", str(root))
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    monkeypatch.setattr(kc, "_TEMPORARY_CACHE", [])
    code, out = _run(capsys, "cache")
    assert code == 0 and "none yet" in out and sorted(p.name for p in tmp_path.iterdir()) == ["a-file"]
    named = tmp_path / f"opsnn-numba-kernels-{os.getuid()}-{kc.SUPPORT_VERSION[:8]}"
    assert kc.cache_dir() == named and (named.stat().st_mode & 0o777) == 0o700
    code, out = _run(capsys, "cache")
    assert code == 0 and f"{named} (a temporary directory: {root} is not a directory)" in out
    (named / "k_0.py").write_text("x" * (1 << 20))
    # --clear removes the temporary one, told apart from the root (a breaker: "removed 1 kernel cache
    # directory (1.0 MiB) under <the file>", and the file was "not writable")
    code, out = _run(capsys, "cache", "--clear")
    assert code == 0 and out == (f"removed 0 kernel cache directories (0.0 MiB) under {root}; and this version's "
                                 f"{named} (1.0 MiB)\n")
    assert not named.exists()
    monkeypatch.setattr(kc, "_TEMPORARY_CACHE", [])  # (the next process)
    assert kc.cache_dir() == named
    named.chmod(0o777)  # as if another user had made it for us
    monkeypatch.setattr(kc, "_TEMPORARY_CACHE", [])
    fresh = kc.cache_dir()
    assert fresh != named and fresh.parent == tmp_path and (fresh.stat().st_mode & 0o777) == 0o700
    # the next process finds that one and reuses it (each made its own, and compiled everything
    # again: a new user's breaker), but not one that others may enter
    (tmp_path / f"{named.name}-0000").mkdir(mode=0o755)
    monkeypatch.setattr(kc, "_TEMPORARY_CACHE", [])
    assert kc.existing_cache_dir() == fresh and kc.cache_dir() == fresh
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["a-file", named.name, f"{named.name}-0000", fresh.name])


def test_cache_clear_beside_another_clear(capsys, monkeypatch, tmp_path):
    """What another process removes while `opsnn cache --clear` runs (its own --clear: a breaker ran
    two at once) counts as removed: exit 0, the directory counted (it was exit 2, "could not
    remove ...: No such file or directory", or a bare FileNotFoundError)."""
    from opsnn.kernels import kernel_cache as kc

    monkeypatch.setenv("OPSNN_CACHE_DIR", str(tmp_path))
    cache = tmp_path / (kc.CACHE_PREFIX + kc.SUPPORT_VERSION[:8])
    (cache / "__pycache__").mkdir(parents=True)
    for name in ("k_1.py", "__pycache__/k_1.nbi", "__pycache__/k_1.1.nbc"):
        (cache / name).write_bytes(b"x" * 1000)
    unlink = os.unlink

    def raced(name, *args, **kwargs):  # the other process got there first
        unlink(name, *args, **kwargs)
        raise FileNotFoundError(2, "No such file or directory", name)

    monkeypatch.setattr(os, "unlink", raced)
    code, out = _run(capsys, "cache", "--clear")
    assert code == 0 and "removed 1 kernel cache directory" in out and not cache.exists()


def test_cache_command_without_numba(tmp_path):
    """Without numba (the NumPy backend), `opsnn cache` says nothing is compiled and lists the
    caches of other versions, and --clear removes them (both were a traceback: import numba)."""
    stale = tmp_path / "numba-kernels-0123abcd"
    stale.mkdir()
    code = ("import sys; sys.modules['numba'] = None; from opsnn.cli import main; "
            "sys.exit(main(sys.argv[1:]))")
    env = {**os.environ, "OPSNN_CACHE_DIR": str(tmp_path)}
    listed = subprocess.run([sys.executable, "-c", code, "cache"], capture_output=True, text=True, env=env,
                            timeout=120, check=False)
    assert listed.returncode == 0, listed.stderr
    assert "none: numba is not installed, so this opsnn compiles nothing" in listed.stdout
    assert "other versions  1 directory" in listed.stdout
    cleared = subprocess.run([sys.executable, "-c", code, "cache", "--clear"], capture_output=True, text=True,
                             env=env, timeout=120, check=False)
    assert cleared.returncode == 0, cleared.stderr
    assert "removed 1 kernel cache directory" in cleared.stdout and not stale.exists()


def test_cache_command_under_a_numba_pool_of_no_thread_names_numba_num_threads(tmp_path):
    """(A breaker) ``NUMBA_NUM_THREADS=0 opsnn cache`` said numba's own words alone ("Number of
    threads specified must be > 0."), as bench and run had before the numba backend named the
    variable: the cache's name holds numba's version, which its import refuses to give then. It
    is refused in the backend's words, exit 2, and --prune removes nothing (with numba's version
    unknown, this version's cache would look like another version's)."""
    stale = tmp_path / "numba-kernels-0123abcd"
    stale.mkdir()
    env = {**os.environ, "OPSNN_CACHE_DIR": str(tmp_path), "NUMBA_NUM_THREADS": "0"}
    cpus = len(os.sched_getaffinity(0))
    for argv in (["cache"], ["cache", "--prune"]):
        done = subprocess.run([sys.executable, "-m", "opsnn", *argv], capture_output=True, text=True, env=env,
                              timeout=120, check=False)
        assert (done.returncode, done.stdout) == (2, ""), done.stderr
        assert done.stderr == ("opsnn cache: error: $NUMBA_NUM_THREADS='0' leaves numba's thread pool no thread: "
                               f"expected a whole number >= 1, or unset for numba's default, one a CPU ({cpus} here)\n")
    assert stale.exists()


def test_no_writable_directory_for_the_kernel_cache_is_said_plainly(tmp_path):
    """Where neither the cache root (here a file) nor any temporary directory takes a file (a
    read-only container: HOME, /tmp, /var/tmp and the working directory all read-only), the numba
    backend cannot load and the automatic choice runs on NumPy, the numbers unchanged; its
    warning said only numba's "cannot cache function 'gather_tile': no locator available for
    file .../_numba_support.py", and `opsnn cache` ended in "error: [Errno 2] No usable temporary
    directory found". Both now name the root, why it is unusable and OPSNN_CACHE_DIR."""
    root = tmp_path / "a-file"
    root.write_text("not a directory")
    # the state tempfile finds on a read-only system (as root, no directory here refuses a file)
    unusable = ("import tempfile\n"
                "def _none(): raise FileNotFoundError(2, 'No usable temporary directory found in [\\'/tmp\\']')\n"
                "tempfile._get_default_tempdir = _none\n"
                "tempfile.tempdir = None\n")
    call = unusable + """
import warnings
import numpy as np
import opsnn
from opsnn import kernels
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    got = opsnn.leaky_relu(np.array([-2.0, 3.0], np.float32), 0.5)
print(kernels.default_name(), got.tolist())
for w in caught:
    print(type(w.message).__name__, w.message)
"""
    env = {**os.environ, "OPSNN_CACHE_DIR": str(root)}
    env.pop("OPSNN_BACKEND", None)
    done = subprocess.run([sys.executable, "-c", call], capture_output=True, text=True, env=env, timeout=300,
                          check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    why = (f"no directory takes the compiled-kernel cache: {root} is not a directory and no temporary "
           f"directory is usable (No usable temporary directory found in ['/tmp']); set OPSNN_CACHE_DIR "
           f"to a writable directory")
    assert done.stdout == ("numpy [-1.0, 3.0]\n"
                           f"BackendFallbackWarning opsnn: the numba kernel backend is not available (kernel "
                           f"backend 'numba' cannot be loaded: {why}); using the NumPy backend\n")
    listing = subprocess.run([sys.executable, "-c", unusable + "import sys; from opsnn.cli import main; "
                              "sys.exit(main(['cache']))"], capture_output=True, text=True, env=env, timeout=120,
                             check=False)
    assert listing.returncode == 0 and listing.stderr == "", listing.stderr
    assert listing.stdout.startswith(f"kernel cache  none: {why}; kernels run on the NumPy backend\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file"]


def test_cache_root_without_any_home_directory(capsys, monkeypatch):
    """HOME unset and no password-database entry for the uid (a container run as a --user its
    image does not know): Path.home() raised RuntimeError, so the numba backend failed to load
    (every kernel on NumPy, ~17x slower) and `opsnn cache` ended in a traceback. The home is then
    read as Python reads an empty HOME, "/": a root only the superuser may write, so kernels go
    to the private temporary directory."""
    import pwd

    from opsnn.kernels import kernel_cache as kc

    def unknown(uid):
        raise KeyError(f"getpwuid(): uid not found: {uid}")

    for name in ("HOME", "XDG_CACHE_HOME", "OPSNN_CACHE_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(pwd, "getpwuid", unknown)
    assert kc.cache_root() == Path("/.cache/opsnn")
    code, out = _run(capsys, "cache")
    assert code == 0 and out.startswith("kernel cache  "), out


def test_cache_root_expands_a_home_directory(monkeypatch, tmp_path):
    """OPSNN_CACHE_DIR='~/...' (quoted, so the shell left the ~) is under the home directory, not
    a directory named ``~`` in the working directory (a new user's)."""
    from opsnn.kernels import kernel_cache as kc

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("OPSNN_CACHE_DIR", "~/kernels")
    assert kc.cache_root() == tmp_path / "kernels"
    monkeypatch.delenv("OPSNN_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", "~/xdg")
    assert kc.cache_root() == tmp_path / "xdg" / "opsnn"
    # a relative XDG_CACHE_HOME is invalid to the XDG spec, which says to ignore it (it made
    # ./relxdg/opsnn in whatever directory a first call ran: an environment breaker's)
    monkeypatch.setenv("XDG_CACHE_HOME", "relxdg")
    assert kc.cache_root() == tmp_path / ".cache" / "opsnn"


def test_a_bad_backend_variable_is_a_usage_error_of_the_commands_that_run_kernels(capsys, monkeypatch):
    """OPSNN_BACKEND=bogus opsnn demo ran every sample, each failing with 561003 (run, verify and
    tiling likewise; bench ended in a traceback), where OPSNN_SOC=bogus is refused up front: the
    commands that run kernels now refuse it so too (exit 2, the variable named, nothing run); the
    others do not read it. The library's 561003 stays (test_numba_backend). (verify's file is not
    read before: any usage error ends the command.)"""
    monkeypatch.setattr(kernels, "DEFAULT", None)
    monkeypatch.setenv("OPSNN_BACKEND", " bogus")
    said = ("error: $OPSNN_BACKEND=' bogus' selects no usable kernel backend: unknown kernel backend 'bogus'; "
            "known: numpy, numba\n")
    for argv in (["demo"], ["run", "leaky_relu_backward", "--shape", "4"], ["verify", "cases.csv"],
                 ["tiling", "leaky_relu_backward", "--shape", "4"]):
        code = cli.main(argv)
        assert (code, capsys.readouterr()) == (2, ("", f"opsnn {argv[0]}: {said}")), argv
    code, out = _run(capsys, "describe", "leaky_relu_backward")
    assert code == 0 and "LeakyReluBackward" in out
    # a kernel op's tiling runs no kernel and prints no host plan (it was refused too: a breaker's)
    code, out = _run(capsys, "tiling", "LeakyReluGrad", "--shape", "4")
    assert code == 0 and "tiling key   65543" in out and "\n  host " not in out, out
    if importlib.util.find_spec("torch") is None:  # bench needs it first (its own usage error)
        return
    env = {**os.environ, "OPSNN_BACKEND": "bogus"}
    done = subprocess.run([sys.executable, "-m", "opsnn", "bench", "--quick", "--ops", "leaky_relu_backward"],
                          capture_output=True, text=True, timeout=300, env=env, check=False)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.endswith("opsnn bench: " + said.replace("' bogus'", "'bogus'")), done.stderr


def test_cache_dir_ignores_surrounding_whitespace_as_the_soc_and_backend_do(monkeypatch, tmp_path):
    """OPSNN_CACHE_DIR=' /path ' (a shell-quoting slip) made a directory named ' ' in the working
    directory, while OPSNN_SOC and OPSNN_BACKEND ignore such spaces: the three read one rule
    (platform.env_value). Spaces inside a path stay; only whitespace is unset (the default)."""
    from opsnn.kernels import kernel_cache as kc

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("OPSNN_CACHE_DIR", f" \t{tmp_path}/my kernels \n")
    assert kc.cache_root() == tmp_path / "my kernels"
    assert kc.cache_dir().parent == tmp_path / "my kernels"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["my kernels"]
    monkeypatch.setenv("OPSNN_CACHE_DIR", " \t ")
    assert kc.cache_root() == tmp_path / "home" / ".cache" / "opsnn"


def test_cache_clear_leaves_a_linked_cache_and_names_what_it_could_not_remove(capsys, monkeypatch, tmp_path):
    """This version's cache as a symbolic link (moved to another disk): --clear leaves the link
    and its target and says so; the stale caches go."""
    from opsnn.kernels import kernel_cache as kc

    monkeypatch.setenv("OPSNN_CACHE_DIR", str(tmp_path))
    target = tmp_path / "elsewhere"
    target.mkdir()
    (target / "k_0.py").write_text("x")
    (tmp_path / (kc.CACHE_PREFIX + kc.SUPPORT_VERSION[:8])).symlink_to(target)
    (tmp_path / (kc.CACHE_PREFIX + "0123abcd")).mkdir()
    code, out = _run(capsys, "cache", "--clear")
    assert code == 0 and out.startswith("removed 1 kernel cache directory")
    assert "a symbolic link" in out and (target / "k_0.py").exists()
    assert not (tmp_path / (kc.CACHE_PREFIX + "0123abcd")).exists()


@pytest.mark.parametrize("env", [{"PYTHONIOENCODING": "ascii"},
                                 {"LC_ALL": "C", "PYTHONCOERCECLOCALE": "0", "PYTHONUTF8": "0"}])
def test_an_ascii_terminal_gets_the_output_with_question_marks(env):
    """Found by a breaker: under an ASCII stdout, `opsnn tiling HardtanhBackward` printed nothing
    and exited 2 (the § of its spec note, taken for a usage error) and `opsnn demo` died at its
    table's µs; characters the encoding lacks print as ?."""
    for argv, expected in ((["--soc", "ascend950", "tiling", "HardtanhBackward", "--shape", "1,64,2,64"],
                            "note         DAG numbers: spec ?7.3"),
                           (["demo", "--shape", "8", "--repeat", "1"], " ?s |")):
        result = subprocess.run([sys.executable, "-m", "opsnn", *argv], capture_output=True, timeout=300,
                                env={**os.environ, **env})
        assert result.returncode == 0 and result.stderr == b"", result.stderr
        assert expected.encode() in result.stdout
        result.stdout.decode("ascii")  # nothing but ASCII reached the terminal


def test_ctrl_c_is_one_line_and_exit_130(capsys, monkeypatch, tmp_path):
    """(A breaker) Ctrl-C printed a long traceback (BrokenPipeError was handled, KeyboardInterrupt
    not): any command now says it was interrupted, in one line, and exits 128 + SIGINT; a real
    SIGINT in a fresh process too (verify then reports the cases done)."""
    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "_run_list", interrupted)
    try:
        code = cli.main(["list"])
    except KeyboardInterrupt:  # (escaping, it would stop the whole test session)
        pytest.fail("KeyboardInterrupt escaped cli.main")
    assert code == 130
    assert capsys.readouterr() == ("", "opsnn list: interrupted\n")
    from test_verify import json_case, write_json

    case = write_json(tmp_path, *(json_case(i, "fp32", (2,), [-1, 1], [-1, 1], 1) for i in range(3)))
    code = ("import os, signal, sys; from opsnn import cli; from opsnn.verify import command\n"
            "run = command.verify_case\n"
            "def case(c, *a):\n"
            "    if c.index == 1: os.kill(os.getpid(), signal.SIGINT)\n"
            "    return run(c, *a)\n"
            "command.verify_case = case\n"
            f"sys.exit(cli.main(['verify', {str(case)!r}]))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                          preexec_fn=sigint_default)
    assert done.returncode == 130, done.stderr
    assert done.stderr == ("opsnn verify: interrupted after 1 of 3 cases; the summary above holds those 1 (a case "
                           "under way is not counted)\n"), done.stderr
    assert "1 case: 1 passed" in done.stdout


def test_soc_names_in_any_case_everywhere(capsys):
    """`--soc ascend910` is Ascend910 before a command and after it, as tiling and verify read it
    (a breaker: there it was an invalid choice)."""
    for argv in (["--soc", "ascend910", "run", "LeakyReluBackward", "--dtype", "bf16"],
                 ["run", "LeakyReluBackward", "--dtype", "bf16", "--soc", "ASCEND910"]):
        code, out = _run(capsys, *argv)
        assert code == 1 and "161002" in out and "Ascend910" in out, out
    with pytest.raises(SystemExit) as exc:
        cli.main(["--soc", "ascend999", "run", "LeakyReluBackward"])
    assert exc.value.code == 2 and "invalid choice: 'ascend999'" in capsys.readouterr().err


def test_a_missing_extra_is_a_one_line_usage_error(capsys, monkeypatch, tmp_path):
    """Found by a new user: without the train extra `opsnn demo --train` ended in an ImportError
    traceback (its hint named `pip install opsnn[torch]`, which is not on PyPI and lacks
    scikit-learn), and `verify --golden torch` without torch too. Each says what to install."""
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name in ("torch", "sklearn")
                        else real(name, *a))
    assert cli.main(["demo", "--train", "--quick"]) == 2
    err = capsys.readouterr().err
    assert "opsnn demo --train: needs the train extra" in err and "missing torch, sklearn" in err
    assert f"missing torch, sklearn: {install_hint('train')}\n" in err and "Traceback" not in err
    case = tmp_path / "atk_aclnnLeakyReluBackward.json"
    case.write_text("[]")
    assert cli.main(["verify", str(case), "--golden", "torch"]) == 2
    assert f"--golden torch needs PyTorch: {install_hint('torch')}\n" in capsys.readouterr().err


def test_the_train_example_names_the_install_that_fits(monkeypatch, tmp_path):
    """(a packaging breaker) examples/train_digits.py without the train extra said `pip install -e
    '.[train]'` wherever opsnn was installed from; it gives _core.extras' hint, as demo --train."""
    import importlib.util
    import runpy

    from opsnn._core import extras

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name in ("torch", "sklearn")
                        else real(name, *a))
    monkeypatch.setattr(extras, "_PACKAGE", tmp_path / "lib" / "site-packages" / "opsnn")
    monkeypatch.setattr(extras, "_pypi_torch_is_cuda", lambda: False)  # (Linux's CPU index: its own test)
    with pytest.raises(SystemExit) as exc:
        runpy.run_path(str(Path(cli.__file__).resolve().parents[2] / "examples" / "train_digits.py"))
    assert exc.value.code == ("this example needs the train extra (missing torch, sklearn): "
                              "pip install 'opsnn[train]'")


def test_warnings_under_the_console_script_are_plain_lines(tmp_path):
    """(a packaging breaker) A warning under the `opsnn` console script printed the launcher's
    location ('/.../bin/opsnn:8: BackendFallbackWarning: ...' and its 'sys.exit(main())' line):
    main() called as the command prints it as one 'opsnn: warning: ...' line instead."""
    launcher = tmp_path / "opsnn"  # what pip writes for [project.scripts]
    launcher.write_text("import re\nimport sys\nfrom opsnn.cli import main\nif __name__ == '__main__':\n"
                        "    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])\n"
                        "    sys.exit(main())\n")
    env = dict(os.environ, NUMBA_NUM_THREADS="0", OPSNN_BACKEND="")
    done = subprocess.run([sys.executable, str(launcher), "run", "LeakyReluBackward", "--shape", "4"], env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith("opsnn: warning: the numba kernel backend is not available (kernel backend 'numba' "
                           "cannot be loaded: $NUMBA_NUM_THREADS='0' leaves numba's thread pool no thread: "), line
    assert line.endswith("); using the NumPy backend"), line


def test_the_command_lines_warnings_stay_pythons_to_print_or_record(tmp_path):
    """(a regression breaker) The command's warning lines replaced warnings.showwarning: a stderr
    that is full (/dev/full) made the warning's OSError the operator call's 561000 (exit 1), a
    closed stderr printed it into stdout, and a caller recording warnings around main() recorded
    none. Only the text is the command's (formatwarning): Python still drops a warning it cannot
    write and records where asked."""
    env = dict(os.environ, NUMBA_NUM_THREADS="0", OPSNN_BACKEND="")
    command = [sys.executable, "-m", "opsnn", "run", "LeakyReluBackward", "--shape", "4"]
    with open("/dev/full", "w") as full:
        done = subprocess.run(command, env=env, stdout=subprocess.PIPE, stderr=full, text=True, timeout=300,
                              check=False)
    assert done.returncode == 0 and "ret 0" in done.stdout, done.stdout
    closed = subprocess.run(command, env=env, capture_output=False, stdout=subprocess.PIPE, text=True,
                            timeout=300, check=False, preexec_fn=lambda: os.close(2))
    assert closed.returncode == 0 and "warning" not in closed.stdout, closed.stdout
    script = ("import sys, warnings\n"
              "from opsnn import cli\n"
              "sys.argv = ['opsnn', 'run', 'LeakyReluBackward', '--shape', '4']\n"
              "with warnings.catch_warnings(record=True) as seen:\n"
              "    warnings.simplefilter('always')\n"
              "    code = cli.main()\n"
              "print(code, [w.category.__name__ for w in seen], warnings.formatwarning.__module__)\n")
    recorded = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300,
                              check=False)
    assert recorded.returncode == 0, recorded.stderr
    assert recorded.stdout.splitlines()[-1] == "0 ['BackendFallbackWarning'] warnings", recorded.stdout
    assert "warning" not in recorded.stderr, recorded.stderr


def test_install_hints_fit_a_clone_and_an_installed_copy(tmp_path, monkeypatch):
    """(a packaging breaker) Every install hint said `pip install -e '.[extra]'` in the clone, which
    an opsnn installed from a wheel or sdist has none of: there `pip install 'opsnn[extra]'` keeps
    the installed opsnn and adds the extra; a clone's hint names the clone, quoted for the shell."""
    from opsnn._core import extras

    installed = tmp_path / "lib" / "site-packages" / "opsnn"
    clone = tmp_path / "my clone"
    (clone / "src" / "opsnn").mkdir(parents=True)
    (clone / "pyproject.toml").write_text("")
    assert extras.source_tree(installed) is None
    assert extras.source_tree(clone / "src" / "opsnn") == clone
    monkeypatch.setattr(extras, "_pypi_torch_is_cuda", lambda: False)  # (the CPU index: the test below)
    monkeypatch.setattr(extras, "_PACKAGE", installed)
    assert extras.install_hint("torch") == "pip install 'opsnn[torch]'"
    monkeypatch.setattr(extras, "_PACKAGE", clone / "src" / "opsnn")
    assert extras.install_hint("bench") == f"pip install -e '{clone}[bench]'"


def test_install_hints_on_linux_name_pytorchs_cpu_index(monkeypatch):
    """(A new user's) without torch, `opsnn demo --train`, `opsnn bench`, `verify --golden torch`
    and `import opsnn.torch` said to run `pip install -e '<clone>[torch]'` ("torch==2.13.0 CPU",
    some added), which on Linux installs PyPI's CUDA build, several GB of CUDA libraries, as the
    README's Quick start warns: there the hint names PyTorch's CPU index too, as the README does."""
    from opsnn._core import extras

    monkeypatch.setattr(extras, "_PACKAGE", Path("/site-packages/opsnn"))
    assert extras._pypi_torch_is_cuda() == sys.platform.startswith("linux")
    monkeypatch.setattr(extras, "_pypi_torch_is_cuda", lambda: True)
    assert extras.install_hint("train") == ("pip install 'opsnn[train]' --extra-index-url "
                                            "https://download.pytorch.org/whl/cpu")


def test_opsnn_torch_without_torch_says_what_to_install():
    """`import opsnn.torch` without PyTorch is an ImportError naming the torch extra's install."""
    out = run_python("import sys; sys.modules['torch'] = None\n"
                     "try:\n    import opsnn.torch\nexcept ImportError as exc:\n    print(exc)")
    assert out == f"opsnn.torch needs PyTorch; install the torch extra (torch==2.13.0 CPU): `{install_hint('torch')}`\n"


def test_demo_announces_its_table_before_a_first_run_compiles():
    """Found by a new user: a first `opsnn demo` sat silent for ~36 s (compiling) after the
    samples; it says what comes and why it may take a while first."""
    code, out = _run_process("demo", "--shape", "8", "--repeat", "1")  # (the samples finalize the runtime)
    flat = " ".join(out.split())
    assert code == 0 and "Every out-of-place operator and dtype through the Pythonic API (a first run compiles the kernels" in flat
    assert flat.index("a first run compiles") < flat.index("Pythonic API on random [8] inputs")


def test_demo_on_the_numpy_backend_announces_no_compiling():
    """(a packaging breaker) Without numba, on the NumPy fallback, `opsnn demo` still said a first
    run compiles the kernels (up to a minute); it compiles nothing there, and says so no more."""
    code = ("import sys\nsys.modules['numba'] = None\nfrom opsnn import cli\n"
            "sys.exit(cli.main(['demo', '--shape', '8', '--repeat', '1']))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert "\nEvery out-of-place operator and dtype through the Pythonic API ...\n" in done.stdout
    assert "compiles" not in done.stdout and "bit-exact" in done.stdout
    assert done.stderr.count("BackendFallbackWarning: opsnn: the numba kernel backend is not available") == 1


@pytest.mark.parametrize("argv, step", [
    (["aclnnHardtanhBackward", "--soc", "Ascend910_93", "--dtype", "int32", "--shape", "3"],
     "phase 1 fails: 161002 HardtanhBackward: tensor gradOutput has dtype DT_INT32"),
    (["aclnnLeakyReluBackward", "--soc", "Ascend910", "--shape", "3", "--shape2", "4"],
     "phase 1 fails: 161002 LeakyReluBackward: the shape of gradOutput [3] and the shape of self [4] cannot broadcast"),
])
def test_tiling_of_an_aclnn_call_that_fails_in_phase_1_on_a_soc_without_the_config(capsys, argv, step):
    """(A breaker) such a call said only 'no op_host config ...; on other SoCs CANN runs a built-in
    kernel', as if it ran there, though it fails in phase 1 (161002) before any kernel is looked
    for: the report now gives the phase 1 failure (exit 1, no tiling: no def is built there)."""
    code, out = _run(capsys, "tiling", *argv, "--json")
    report = json.loads(out)
    assert code == 1 and "tilingData" not in report
    assert report["executorSteps"][0].startswith(step) and report["phase1Status"] == 161002
    assert report["failures"][0] == (f"{argv[0]} fails in phase 1 with 161002 (its executor step says why): no "
                                     "kernel is launched")
    assert report["soc"]["note"] == (f"{report['op']} has no op_host config for it; this call fails in phase 1, "
                                     "before any kernel is looked for")
    code, out = _run(capsys, "tiling", *argv)
    assert code == 1 and f"FAILED       {report['failures'][0]}" in out.splitlines()
    assert "no op_host config for it; this call fails in phase 1" in out and "tiling key" not in out


@pytest.mark.parametrize("argv, said", [
    (["run", "LeakyRelu", "--soc", "Ascend910", "--soc", "ascend310b"],
     "opsnn run: error: argument --soc: given twice (--soc Ascend910 and --soc ascend310b); give one SoC\n"),
    # (list's, which no SoC concerns, is refused with its reason: test_a_soc_free_command_refuses_any_soc_...)
    (["--soc", "ascend910", "--soc=Ascend950", "describe", "LeakyRelu"],
     "opsnn: error: argument --soc: given twice (--soc ascend910 and --soc Ascend950); give one SoC\n"),
    # before the command and after it: the one after had won silently
    (["--soc", "Ascend910", "run", "LeakyRelu", "--soc", "Ascend310B"],
     ("opsnn: error: argument --soc: given twice (--soc Ascend910 and --soc Ascend310B); give one SoC, before "
      "the command or after it\n")),
    (["demo", "--soc", "Ascend910", "--soc", "Ascend910"],
     "opsnn demo: error: argument --soc: given twice (--soc Ascend910 and --soc Ascend910); give one SoC\n"),
    (["tiling", "LeakyRelu", "--shape", "2", "--soc", "Ascend950", "--soc", "Ascend910B"],
     "opsnn tiling: error: argument --soc: given twice (--soc Ascend950 and --soc Ascend910B); give one SoC\n"),
    (["--soc", "Ascend950", "tiling", "LeakyRelu", "--shape", "2", "--soc", "Ascend910B"],
     ("opsnn: error: argument --soc: given twice (--soc Ascend950 and --soc Ascend910B); give one SoC, before "
      "the command or after it\n")),
    (["verify", "x.csv", "--soc", "Ascend910", "--soc", "Ascend910B"],
     "opsnn verify: error: argument --soc: given twice (--soc Ascend910 and --soc Ascend910B); give one SoC\n"),
])
def test_soc_given_twice_is_a_usage_error(capsys, argv, said):
    """(a breaker) --soc given twice kept the last, where every other option given twice is a
    usage error; before and after the command alike. Names in any case still read (the choices
    compare as the profiles are looked up)."""
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.endswith(said), err


def test_samples_soc_given_twice_is_a_usage_error():
    def python(*argv):
        return subprocess.run([sys.executable, *argv], capture_output=True, text=True, timeout=300, check=False)

    done = python("-m", "opsnn.samples", "--soc", "ascend910", "--soc", "Ascend310B")
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.endswith("python -m opsnn.samples: error: argument --soc: given twice (--soc ascend910 and "
                                "--soc Ascend310B); give one SoC\n"), done.stderr
    assert done.stdout == ""
    once = python("-m", "opsnn.samples", "--soc", " ascend310B ")  # any case, surrounding spaces (DECISION 12)
    assert once.returncode == 561003 % 256 and "Ascend310B" in once.stdout, once.stdout + once.stderr


@pytest.mark.parametrize("argv, said", [
    (["run", "leaky_relu_backward", "--shape", ",".join(["1"] * 70)],
     ("opsnn run: error: argument --shape: 70 dims, more than the 64 a NumPy array holds (the inputs are "
      "allocated); an aclnn tensor takes at most 8\n")),
    (["run", "leaky_relu_backward", "--grad-shape", *["1"] * 65],
     ("opsnn run: error: argument --grad-shape: 65 dims, more than the 64 a NumPy array holds (the inputs are "
      "allocated); an aclnn tensor takes at most 8\n")),
    (["demo", "--shape", "x".join(["2"] * 100)],
     ("opsnn demo: error: argument --shape: 100 dims, more than the 64 a NumPy array holds (the inputs are "
      "allocated); an aclnn tensor takes at most 8\n")),
])
def test_a_shape_numpy_cannot_hold_is_a_usage_error(capsys, argv, said):
    """(a breaker) a --shape of more dims than NumPy holds got NumPy's own text, naming no option:
    run and demo allocate their inputs, so past NumPy's 64 dims is a usage error naming the
    option, the limit and the count."""
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    assert exc.value.code == 2
    assert capsys.readouterr().err.endswith(said)


def test_a_shape_numpy_holds_reaches_phase_1s_rank_check(capsys):
    """64 dims, which NumPy holds, reach phase 1, whose check of at most 8 dims answers 161002; a
    described tensor of `opsnn tiling` reaches it at any rank."""
    code, out = _run(capsys, "run", "leaky_relu_backward", "--shape", ",".join(["1"] * 64))
    assert code == 1 and "ret 161002" in out, out
    code, out = _run(capsys, "tiling", "leaky_relu_backward", "--shape", ",".join(["1"] * 70))
    assert code == 1 and "fails in phase 1 with 161002" in out, out


@pytest.mark.parametrize("word", ["b1", "B1", "|b1", "<i8", "=i2", "<f4", "|u1",
                                  # '>' too where the code is of one byte, which has no byte order to refuse it
                                  # by (>i1 had run int8, >b1 bool; >f4 is refused for its byte order), its
                                  # count written with leading zeros too (>i01 had run int8 where i01 was refused)
                                  ">i1", ">u1", ">b1", ">B1", ">i01", ">b001", ">u01",
                                  # NumPy reads the count as C's strtol does, after blanks and a '+' (i+8 and
                                  # 'i 8' had run int64, f+8 float64, >b+1 bool)
                                  "i+8", "f 8", "c+8", "I+4", "i\t4", "i +01", ">b+1", ">u +1"])
def test_numpy_byte_codes_are_refused_whatever_their_letter_or_byte_order(word):
    """(a breaker) NumPy's letter-and-byte-count codes are refused, beside opsnn's bit-width short
    names (i8 is int8), but b1 was bool and, with a byte-order mark, <i8 was int64 and =i2 int16:
    one set of short names, in bits, whatever the letter; bool is bool or ?."""
    from opsnn.cli_words import data_type

    with pytest.raises(argparse.ArgumentTypeError) as exc:
        data_type(word)
    assert str(exc.value) == (f"dtype {word!r} is NumPy's code in bytes; opsnn's short names count bits (f16, bf16, "
                              "f32, f64, i8, u8, i16, i32, i64, c64, c128): write one of them or the full name (bool, "
                              "float64, int32, ...)")
    assert data_type("bool").name == data_type("?").name == data_type("ACL_BOOL").name == "BOOL"


@pytest.mark.parametrize("argv, word", [
    (["run", "LeakyRelu", "--out-dtype", "),"], "),"), (["run", "LeakyRelu", "--dtype", "0999"], "0999"),
    (["run", "LeakyRelu", "--out-dtype", "(-1,)f4"], "(-1,)f4"),
    (["tiling", "LeakyRelu", "--shape", "2", "--dtype", "f16,0999"], "0999"),  # (an item of the list)
    (["run", "LeakyRelu", "--out-dtype", "f16,"], "f16,"),
    # a count before a type, an array dtype to NumPy ('32f': 32 float32 values in one), had been "NumPy's '|V128'
    # (void1024)", a type no user meant, where '0999' was an unknown dtype
    (["run", "LeakyRelu", "--dtype", "32f"], "32f"), (["tiling", "LeakyRelu", "--shape", "2", "--dtype", "1f"], "1f"),
    (["bench", "--dtypes", "2f4"], "2f4"), (["run", "LeakyRelu", "--out-dtype", "DT_16F"], "DT_16F"),
    # so after a byte-order mark, which NumPy reads before the count ('>2f' had been '|V8' (void64) too)
    (["run", "LeakyRelu", "--dtype", ">2f"], ">2f"), (["run", "LeakyRelu", "--out-dtype", "=32f"], "=32f"),
    (["tiling", "LeakyRelu", "--shape", "2", "--dtype", "|2i4"], "|2i4"), (["bench", "--dtypes", "DT_<2f"], "DT_<2f"),
])
def test_a_word_numpy_cannot_parse_as_a_dtype_is_an_unknown_dtype(capsys, argv, word):
    """(found fuzzing the session's dtype words) NumPy reads a word with a comma, a bracket or a
    leading digit as a structured dtype's spec and refuses some with SyntaxError or ValueError,
    not the TypeError dtypes.parse_name took for "not a dtype": `--dtype 0999` ended with a
    traceback (exit 1), as would a case.json's dtype for compare. Every such word is an unknown
    dtype, a usage error naming the option. One with a comma says a name holds none ('f16,' had
    been "NumPy's '|V16' (void128), which no aclDataType describes": a structured dtype)."""
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    assert exc.value.code == 2
    option = next(a for a in argv if a.startswith("--") and a != "--shape")
    expected = "expected a CANN name (FLOAT, FLOAT16, BF16, DOUBLE, INT32 ...), f16 / bf16 / f32 or a NumPy name"
    before = re.match(r"(DT_)?[<>=|]?", word)[0]  # (what the message says the name comes after)
    why = ": a dtype name holds no comma" if "," in word else (
        f": a dtype name{f' after {before}' * bool(before)} begins with a letter, not a digit; {expected}"
        if word[len(before)].isdigit() else f"; {expected}")
    assert capsys.readouterr().err.endswith(f"error: argument {option}: unknown dtype {word!r}{why}\n")


@pytest.mark.parametrize("argv, word", [
    (["run", "LeakyRelu", "--dtype", "()f4"], "()f4"), (["run", "LeakyRelu", "--out-dtype", "()float"], "()float"),
    (["tiling", "LeakyRelu", "--shape", "2", "--dtype", "DT_() f16"], "DT_() f16"),
    (["run", "LeakyRelu", "--dtype", "<()f4"], "<()f4"),
])
def test_a_dtype_after_numpys_empty_shape_is_an_unknown_dtype(capsys, argv, word):
    """(found checking NumPy's spellings) NumPy reads '()' before a type as the shape of a
    subarray dtype, none: `--dtype '()f4'` ran float32, though f4 alone is refused (a count of
    bytes), and '()float' float64 where opsnn's float is float32. Such a word is an unknown dtype,
    saying why, as one beginning with a digit is."""
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    option = next(a for a in argv if a.startswith("--") and a != "--shape")
    before = re.match(r"(DT_)?[<>=|]?", word)[0]
    assert exc.value.code == 2 and capsys.readouterr().err.endswith(
        f"error: argument {option}: unknown dtype {word!r}: a dtype name{f' after {before}' * bool(before)} begins "
        "with a letter, not '(' (NumPy reads a subarray's shape there); expected a CANN name (FLOAT, FLOAT16, BF16, "
        "DOUBLE, INT32 ...), f16 / bf16 / f32 or a NumPy name\n")


@pytest.mark.parametrize("word", ["(f4)", "(float)", "(", "( )f4", "(2)f4", "ACL_(FLOAT)"])
def test_a_dtype_in_brackets_is_not_said_to_be_read_as_a_shape(word):
    """(A regression breaker) every dtype word beginning with '(' was told "NumPy reads a
    subarray's shape there", though NumPy reads none in '(f4)', '(float)' or '(2)f4' (it refuses
    them): that is said only of the '()' NumPy reads as one."""
    from opsnn._core.dtypes import parse_name

    before = word[:4] if word.startswith("ACL_") else ""
    with pytest.raises(ValueError) as exc:
        parse_name(word)
    assert str(exc.value) == (f"unknown dtype {word!r}: a dtype name{f' after {before}' * bool(before)} begins with a "
                              "letter, not '('; expected a CANN name (FLOAT, FLOAT16, BF16, DOUBLE, INT32 ...), f16 / "
                              "bf16 / f32 or a NumPy name")


@pytest.mark.parametrize("argv, said", [
    (["run", "LeakyRelu", "--scalar", "1e-400"],
     ("opsnn run: error: argument --scalar '1e-400': scalar '1e-400' rounds to 0 in float64 (its smallest nonzero is "
      "5e-324); write 0 for zero (a float travels as ACL_DOUBLE)\n")),
    (["run", "Hardtanh", "--scalar", "-2.4e-324,1"],
     ("opsnn run: error: argument --scalar '-2.4e-324,1': scalar '-2.4e-324' rounds to 0 in float64 (its smallest "
      "nonzero is 5e-324); write 0 for zero (a float travels as ACL_DOUBLE)\n")),
    (["run", "LeakyRelu", "--scalar", "1e400"],
     ("opsnn run: error: argument --scalar '1e400': scalar '1e400' is beyond float64's range; write inf or -inf for "
      "an infinity (a float travels as ACL_DOUBLE)\n")),
    (["tiling", "LeakyRelu", "--shape", "2", "--negative-slope", "0.0000000001e-999"],
     ("opsnn tiling: error: argument --negative-slope: '0.0000000001e-999' rounds to 0 in float64 (its smallest "
      "nonzero is 5e-324); write 0 for zero\n")),
    # an exponent past what Decimal holds (it had been a traceback: decimal.InvalidOperation)
    (["run", "LeakyRelu", "--scalar", "1e-99999999999999999999"],
     ("opsnn run: error: argument --scalar '1e-99999999999999999999': scalar '1e-99999999999999999999' rounds to 0 "
      "in float64 (its smallest nonzero is 5e-324); write 0 for zero (a float travels as ACL_DOUBLE)\n")),
    (["tiling", "LeakyRelu", "--shape", "2", "--negative-slope", "-0.5e-99999999999999999999"],
     ("opsnn tiling: error: argument --negative-slope: '-0.5e-99999999999999999999' rounds to 0 in float64 (its "
      "smallest nonzero is 5e-324); write 0 for zero\n")),
])
def test_a_scalar_float64_cannot_hold_is_a_usage_error(capsys, argv, said):
    """(a breaker) --scalar 1e-400 ran a slope of 0.0 without a word, as 1e400 had run inf: a
    nonzero literal that rounds to 0, like one beyond the range, is a usage error naming the
    option (run's --scalar, tiling's attrs)."""
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    assert exc.value.code == 2
    assert capsys.readouterr().err.endswith(said)


def test_zero_infinities_nan_and_the_smallest_subnormal_are_scalars():
    from opsnn.cli_words import float_word

    for word, value in (("0e-400", 0.0), ("-0.0e-999", -0.0), ("5e-324", 5e-324), ("2.5e-324", 5e-324), ("inf", math.inf),
                        ("-Infinity", -math.inf), ("1_0e-1", 1.0),
                        # a zero whose exponent Decimal cannot hold is zero (it had been a traceback)
                        ("0e-99999999999999999999", 0.0), ("-0_0.0_0e-1_0000000000000000000", -0.0)):
        assert float_word(word) == value and math.copysign(1, float_word(word)) == math.copysign(1, value), word
    assert math.isnan(float_word("nan")) and math.isnan(float_word("-NaN"))


def test_float_word_reads_every_digit_float_reads():
    """(a regression breaker) float() reads any Unicode decimal digit ('\u0661' is 1), and d8dcb32's
    test of a nonzero literal asked for an ASCII 1-9, so float_word('\u0661e-400') was 0.0 without a
    word (Decimal, before it, read those digits). The CLI refuses such words before (non_ascii); the
    function keeps its rule on its own: a nonzero digit in any script, a zero in any script is 0."""
    from opsnn.cli_words import BeyondFloat64, float_word

    for word in ("\u0661e-400", "\uff11e-400", "0.\u0967e-99999999999999999999"):
        with pytest.raises(BeyondFloat64) as exc:
            float_word(word)
        assert str(exc.value) == f"{word!r} rounds to 0 in float64 (its smallest nonzero is 5e-324); write 0 for zero"
    assert float_word("\u0660e-400") == 0.0 and float_word("\uff10.0e-99999999999999999999") == 0.0


@pytest.mark.parametrize("argv", [["list", "--soc", "Ascend310B"], ["--soc", "ascend310b", "list"]])
def test_list_refuses_soc(capsys, argv):
    """(a breaker) `opsnn list --soc X` was taken and ignored: list names every operator, the same
    on every SoC (so an unknown $OPSNN_SOC does not stop it), so --soc is a usage error, as
    compare's is, saying where a SoC's support is shown."""
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    assert exc.value.code == 2
    assert capsys.readouterr().err.endswith(
        "opsnn: error: --soc does not apply to list: it names every operator, the same on every SoC (`opsnn describe "
        "OP` shows each SoC's dtypes and the SoCs without the operator)\n")
    assert cli.main(["list"]) == 0 and "aclnnLeakyReluBackward" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        cli.main(["list", "-h"])
    assert "--soc" not in capsys.readouterr().out  # (hidden, as compare's)


@pytest.mark.parametrize("argv, said", [
    # U+FB02 (the fl ligature) upper-cases to FL: --dtype ﬂoat ran float32
    (["run", "LeakyRelu", "--dtype", "\ufb02oat"],
     "opsnn run: error: argument --dtype: unknown dtype '\ufb02oat': '\ufb02' (U+FB02) is not ASCII, as no dtype name is\n"),
    # U+0131 (dotless i) upper-cases to I: ınt8 ran int8
    (["tiling", "LeakyRelu", "--shape", "2", "--dtype", "\u0131nt8"],
     "opsnn tiling: error: argument --dtype: unknown dtype '\u0131nt8': '\u0131' (U+0131) is not ASCII, as no dtype name is\n"),
    # U+212A (the Kelvin sign) lower-cases to k: LeaKyRelu ran aclnnLeakyRelu
    (["run", "Lea\u212ayRelu"],
     ("opsnn run: error: unknown operator 'Lea\u212ayRelu': '\u212a' (U+212A) is not ASCII, as no operator name is "
      "(did you mean LeakyRelu?)\n")),
    (["describe", "hardtanh_backw\u0430rd"],  # a Cyrillic a
     ("opsnn describe: error: unknown operator 'hardtanh_backw\u0430rd': '\u0430' (U+0430) is not ASCII, as no "
      "operator name is (did you mean hardtanh_backward?)\n")),
    (["tiling", "Lea\u212ayReluGrad", "--shape", "2"],
     ("opsnn tiling: error: unknown operator 'Lea\u212ayReluGrad': '\u212a' (U+212A) is not ASCII, as no operator "
      "name is (did you mean LeakyReluGrad?)\n")),
])
def test_look_alike_letters_name_no_dtype_or_operator(capsys, argv, said):
    """(a breaker) dtype and operator names are compared in another case, and Unicode maps some
    non-ASCII letters onto ASCII ones there (ﬂ -> FL, ı -> I, the Kelvin sign -> k): a look-alike
    ran a dtype or operator never typed. A name with a character past ASCII is refused, naming
    it, as a number's is (cli_words.non_ascii)."""
    try:
        code = cli.main(argv)
    except SystemExit as exc:
        code = exc.code
    assert code == 2
    err = capsys.readouterr().err
    assert said.removesuffix("\n") in err, err  # (an operator's message goes on to list them all)


@pytest.mark.parametrize("text, dims", [("(2,)", (2,)), ("[2, 3,]", (2, 3)), ("2,", (2,)), ("(1, 64 , )", (1, 64)),
                                        ("-1,", (-1,))])
def test_parse_shape_takes_pythons_trailing_comma(text, dims):
    """(found breaking the CLI) `--shape "(2,)"`, Python's own spelling of a 1-d shape (a tuple's
    repr, x.shape printed), was a bad shape: one trailing comma after a dim is taken, as
    --scalar takes one."""
    from opsnn.cli_words import parse_shape

    assert parse_shape(text) == dims


@pytest.mark.parametrize("text", ["(,)", ",", "2,,", "[2,,]", "2x", "2 ,,"])
def test_parse_shape_refuses_a_comma_without_a_dim_before_it(text):
    from opsnn.cli_words import parse_shape

    with pytest.raises(argparse.ArgumentTypeError, match="bad shape"):
        parse_shape(text)


@pytest.mark.parametrize("argv, text", [
    (["run", "LeakyReluBackward", "--dtype", "f16,", "f32"], "'f16,'"),
    (["run", "LeakyReluBackward", "--dtype", ",f32"], "',f32'"),
    (["tiling", "LeakyReluBackward", "--shape", "2", "--dtype", "f16,", "f16,", "f32"], "'f16,'"),
    (["tiling", "LeakyReluBackward", "--shape", "2", "--dtype", "f16,,f32"], "'f16,,f32'"),
])
def test_a_dtype_list_with_an_empty_item_says_how_to_write_it(capsys, argv, text):
    """(found breaking the CLI) `--dtype f16, f32`, a list written with a space, said "unknown
    dtype ''", naming no item: the shell had split it, and the option takes one word."""
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    assert exc.value.code == 2
    assert capsys.readouterr().err.endswith(
        f"error: argument --dtype: {text} has an empty item; give the dtypes in one word, by commas without "
        "spaces: --dtype f16,f32\n")


@pytest.mark.parametrize("argv", [["cache", "--soc", "Ascend310B"], ["--soc", "ascend310b", "cache", "--prune"]])
def test_cache_refuses_soc(capsys, argv):
    """(found breaking the CLI, as list's) `opsnn cache --soc X` was taken and ignored: the
    kernel cache is the same on every SoC (kernels are compiled per operator and dtype), so --soc
    is a usage error, before anything is listed or removed."""
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    assert exc.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.endswith(
        "opsnn: error: --soc does not apply to cache: the kernel cache is the same on every SoC (kernels are "
        "compiled per operator and dtype)\n")


@pytest.mark.parametrize("argv, why", [
    (["list", "--soc", "bogus"], "list: it names every operator"),
    (["cache", "--soc", "ascend9"], "cache: the kernel cache is the same on every SoC"),
    (["compare", "dump", "--soc", "Ascend910X"], "compare: each case is judged as dumped"),
    (["list", "--soc", ""], "list: it names every operator"),
    # (a leftovers breaker) before the command too: the global --soc said "invalid choice"
    (["--soc", "bogus", "list"], "list: it names every operator"),
    (["--soc=ascend9", "cache", "--prune"], "cache: the kernel cache is the same on every SoC"),
    (["--soc", "", "compare", "dump"], "compare: each case is judged as dumped"),
    # a second --soc too: "given twice ...; give one SoC" told the user to give the one refused then
    (["list", "--soc", "Ascend910", "--soc", "Ascend910B"], "list: it names every operator"),
    (["--soc", "Ascend910", "cache", "--soc", "Ascend910"], "cache: the kernel cache is the same on every SoC"),
    # both before the command (the global option had kept its "give one SoC")
    (["--soc", "Ascend910", "--soc", "Ascend910B", "list"], "list: it names every operator"),
    (["--soc=x", "--so", "y", "compare", "dump"], "compare: each case is judged as dumped"),
])
def test_a_soc_free_command_refuses_any_soc_with_its_reason(capsys, argv, why):
    """(found breaking the session's list/cache refusal) `opsnn list --soc bogus` said "invalid
    choice: 'bogus' (choose from 'Ascend910', ...)", and the SoC chosen then was refused as not
    applying to list: a command no SoC concerns refuses any --soc, after it or before it, with
    that reason, an empty one too (it had passed as no --soc), and a second one (it had been
    "given twice", as for a command that takes one)."""
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.splitlines()[-1].startswith(f"opsnn: error: --soc does not apply to {why}"), err


@pytest.mark.parametrize("argv", [["--soc", "bogus", "run", "LeakyRelu"], ["--soc", "bogus", "tiling", "LeakyRelu"],
                                  # a command's name as the SoC is still a SoC's word, checked as one
                                  ["--soc", "list", "run", "LeakyRelu"], ["--soc", "cache"]])
def test_the_global_soc_is_still_checked_for_a_command_a_soc_concerns(capsys, argv):
    """Only the commands no SoC concerns take any word for the global --soc (to refuse it with
    their reason): for the others it is still one of the SoCs, the choices listed."""
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    assert exc.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"opsnn: error: argument --soc: invalid choice: {argv[1]!r} (choose from 'Ascend910', 'Ascend910B', "
        "'Ascend910_93', 'Ascend950', 'Ascend310P', 'Ascend310B')")


@pytest.mark.parametrize("argv, says", [
    (["run", "LeakyRelu", "--shape=2", "3"],
     ("opsnn run: error: unrecognized arguments: 3 (--shape=2 takes the one word after '=': write --shape 2 3 or "
      "--shape=2,3)")),
    (["run", "Hardtanh", "--scal=-1", "1"],
     ("opsnn run: error: unrecognized arguments: 1 (--scal=-1 takes the one word after '=': write --scalar -1 1 or "
      "--scalar=-1,1)")),
    (["tiling", "LeakyReluBackward", "--shape=2", "3", "--shape", "4"],
     ("opsnn tiling: error: unrecognized arguments: 3 (--shape=2 takes the one word after '=': write --shape 2 3 or "
      "--shape=2,3)")),
    # "=" with nothing after it (a 0-d shape): the words that follow are the value, and ",3" is no shape
    (["run", "LeakyRelu", "--shape=", "3"],
     "opsnn run: error: unrecognized arguments: 3 (--shape= takes the one word after '=': write --shape 3 or --shape=3)"),
    (["tiling", "LeakyReluBackward", "--shape=", "2", "3"],
     ("opsnn tiling: error: unrecognized arguments: 2 3 (--shape= takes the one word after '=': write --shape 2 3 or "
      "--shape=2,3)")),
    # an option whose words are no comma list (bench's): the words alone, never a "=" form it refuses
    (["bench", "--ops=leaky_relu", "hardtanh"],
     ("opsnn bench: error: unrecognized arguments: hardtanh (--ops=leaky_relu takes the one word after '=': write --ops "
      "leaky_relu hardtanh)")),
    (["bench", "--sizes=4", "5"],
     "opsnn bench: error: unrecognized arguments: 5 (--sizes=4 takes the one word after '=': write --sizes 4 5)"),
    # (the leftovers breaker) an unquoted bracket list, which the shell splits: its first word is
    # no shape alone, refused by the option itself, with the words that complete it
    (["run", "LeakyRelu", "--shape=[2,", "3]"],
     ("opsnn run: error: argument --shape: bad shape '[2,'; write e.g. 1,64,2,64 or [] for 0-d; --shape=[2, takes "
      "the one word after '=': write --shape [2, 3] or --shape=[2,3]")),
    (["run", "--gr=(2,", "3,", "4)", "LeakyReluBackward", "--seed", "1"],
     ("opsnn run: error: argument --grad-shape: bad shape '(2,'; write e.g. 1,64,2,64 or [] for 0-d; --gr=(2, takes "
      "the one word after '=': write --grad-shape (2, 3, 4) or --grad-shape=(2,3,4)")),
    (["tiling", "LeakyReluBackward", "--shape=[2,", "3]", "--shape", "4"],
     ("opsnn tiling: error: argument --shape: bad shape '[2,'; write e.g. 1,64,2,64 or [] for 0-d; --shape=[2, "
      "takes the one word after '=': write --shape [2, 3] or --shape=[2,3]")),
    # the words after a value ending in a comma join with one comma
    (["run", "Hardtanh", "--scalar=-1,", "1"],
     ("opsnn run: error: unrecognized arguments: 1 (--scalar=-1, takes the one word after '=': write --scalar -1, 1 "
      "or --scalar=-1,1)")),
    # no comma beside an 'x' or inside a bracket, where a shape takes none ('--shape=2,x,3', '[2x,3]', '[,2,3,]'
    # had been offered: bad shapes)
    (["run", "LeakyRelu", "--shape=2", "x", "3"],
     ("opsnn run: error: unrecognized arguments: x 3 (--shape=2 takes the one word after '=': write --shape 2 x 3 or "
      "--shape=2x3)")),
    (["run", "LeakyRelu", "--shape=256", "x1024"],
     ("opsnn run: error: unrecognized arguments: x1024 (--shape=256 takes the one word after '=': write --shape 256 "
      "x1024 or --shape=256x1024)")),
    (["run", "LeakyRelu", "--shape=[2x", "3]"],
     ("opsnn run: error: argument --shape: bad shape '[2x'; write e.g. 1,64,2,64 or [] for 0-d; --shape=[2x takes "
      "the one word after '=': write --shape [2x 3] or --shape=[2x3]")),
    (["tiling", "LeakyRelu", "--shape=[", "2", "3", "]"],
     ("opsnn tiling: error: argument --shape: bad shape '['; write e.g. 1,64,2,64 or [] for 0-d; --shape=[ takes "
      "the one word after '=': write --shape [ 2 3 ] or --shape=[2,3]")),
])
def test_words_after_an_option_of_several_given_with_equals_are_explained(capsys, argv, says):
    """(found breaking the CLI) `run X --shape=2 3` said "unrecognized arguments: 3" alone: an
    option written with "=" takes that one word, also where it takes several words otherwise,
    and where that word alone is no shape (`--shape=[2, 3]`), the option's refusal says so."""
    with pytest.raises(SystemExit) as exited:
        cli.main(argv)
    err = capsys.readouterr().err
    assert exited.value.code == 2 and err.rstrip().endswith(says), err


@pytest.mark.parametrize("command", ["run", "describe"])
def test_ops_help_names_every_spelling_it_takes(capsys, command):
    """(found breaking the CLI) run's OP help said "aclnn prefix optional" alone and describe's gave
    two CamelCase examples, where both take every name registry.resolve takes."""
    with pytest.raises(SystemExit):
        cli.main([command, "-h"])
    out = " ".join(capsys.readouterr().out.split())
    assert ("op an operator of `opsnn list` by its aclnn name (aclnn prefix optional), Pythonic name or kernel op "
            "name, in any case (LeakyReluBackward, aclnnHardtanhBackward, leaky_relu_backward, hardtanh_grad)") in out


_DIGITS = "9" * 5000  # past Python's 4300-digit limit of int(str)


@pytest.mark.parametrize("argv, said", [
    (["run", "LeakyRelu", "--shape", f"2,{_DIGITS}"], f"argument --shape: bad shape '2,{_DIGITS}'; dims are int64 (< 2**63)"),
    (["tiling", "LeakyRelu", "--shape", _DIGITS], f"argument --shape: bad shape '{_DIGITS}'; dims are int64 (< 2**63)"),
    (["run", "LeakyRelu", "--scalar", f"-{_DIGITS}"],
     f"scalar '-{_DIGITS}' is an int beyond int64 and uint64 (what an aclScalar holds)"),
])
def test_a_number_of_thousands_of_digits_is_a_usage_error(capsys, argv, said):
    """(found breaking the CLI) int() refuses a string of more than 4300 digits with a ValueError
    of its own: a --shape of such a dim was a traceback (exit 1), a --scalar of such an int said
    it was beyond float64, a float it never was."""
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    assert exc.value.code == 2
    assert said in capsys.readouterr().err


def test_a_seed_of_thousands_of_digits_is_read_whole():
    """(found breaking the CLI) --seed of 5000 digits was refused as "written with an exponent, at
    most 1e18": digits are read whatever their count (the seed generator takes any int); the
    1e18 limit is for an exponent, which would build as many digits."""
    assert cli_words.int_at_least(0)(_DIGITS) == int("9" * 4000) * 10**1000 + int("9" * 1000)
    with pytest.raises(argparse.ArgumentTypeError, match=re.escape("'1e19' (written with an exponent, at most 1e18")):
        cli_words.int_at_least(0)("1e19")


def test_an_exponent_past_what_decimal_holds_gets_the_1e18_hint():
    """(a leftovers breaker) --seed 1e99999999999999999999, an exponent Decimal cannot hold, was
    refused without the hint 1e19 gets: any whole number past 1e18 written with an exponent gets
    it; a fraction or a negative number so written does not, and a zero so written is 0."""
    hint = "(written with an exponent, at most 1e18: write the digits for more)"
    for text in ("1e99999999999999999999", "2.5E+99999999999999999999", "1_0e1_0000000000000000000"):
        with pytest.raises(argparse.ArgumentTypeError) as exc:
            cli_words.int_at_least(0)(text)
        assert str(exc.value) == f"expected an integer >= 0, got {text!r} {hint}"
    for text in ("0e99999999999999999999", "-0.0e-1_0000000000000000000"):
        assert cli_words.int_at_least(0)(text) == 0
    for text in ("1e-99999999999999999999", "-1e99999999999999999999", "1e99999999999999999999x",
                 ".e99999999999999999999"):
        with pytest.raises(argparse.ArgumentTypeError) as exc:
            cli_words.int_at_least(0)(text)
        assert str(exc.value) == f"expected an integer >= 0, got {text!r}"


def test_a_negative_number_past_1e18_by_its_exponent_is_refused_without_its_digits():
    """(A reviewer) --seed -1e999999999 built a billion-digit int before refusing it as below 0
    (the run hung): only a positive number past 1e18 by its exponent skipped int(). One of
    either sign is now refused as it is read, a negative one as below the range (every low is
    0 or more), without the hint to write its digits."""
    for text in ("-1e999999999", "-2.5E+999999999", "-1e19"):
        with pytest.raises(argparse.ArgumentTypeError) as exc:
            cli_words.int_at_least(0)(text)
        assert str(exc.value) == f"expected an integer >= 0, got {text!r}"


def test_leading_zeros_past_ints_limit_are_still_the_number(capsys):
    """int() counts leading zeros in its 4300-digit limit: a dim or an int scalar written with
    thousands of them is still its number (an int scalar still an int)."""
    zeros = "0" * 5000
    assert cli_words.parse_shape(f"{zeros}2,-{zeros}3") == (2, -3)
    code, out = _run(capsys, "run", "Hardtanh", "--dtype", "int64", "--shape", "3", "--scalar", f"-{zeros}2", f"{zeros}2")
    assert code == 0 and "min_val=-2, max_val=2" in out, out[-300:]


@pytest.mark.parametrize("argv, said", [
    (["run", "LeakyRelu", "\u2013shape", "2"],
     ("opsnn run: error: unrecognized arguments: \u2013shape 2 ('\u2013shape' begins with '\u2013' (U+2013), not '-': "
      "an editor or a web page changed the dashes; write --shape)")),
    (["run", "LeakyRelu", "\u2014shape", "2"],
     ("opsnn run: error: unrecognized arguments: \u2014shape 2 ('\u2014shape' begins with '\u2014' (U+2014), not '-': "
      "an editor or a web page changed the dashes; write --shape)")),
    (["\u2013\u2013soc", "Ascend910", "list"],
     ("opsnn: error: argument COMMAND: invalid choice: '\u2013\u2013soc' (choose from 'demo', 'run', 'verify', "
      "'compare', 'tiling', 'bench', 'describe', 'list', 'cache') ('\u2013\u2013soc' begins with '\u2013' (U+2013), not "
      "'-': an editor or a web page changed the dashes; write --soc)")),
    # a negative number's minus sign, not an option's dashes: -inf, not --inf
    (["run", "LeakyRelu", "--scalar", "\u2212inf"],
     ("opsnn run: error: argument --scalar '\u2212inf': bad scalar '\u2212inf': '\u2212' (U+2212) is not ASCII, in "
      "which numbers are read ('\u2212inf' begins with '\u2212' (U+2212), not '-': an editor or a web page changed "
      "the dashes; write -inf)")),
    (["tiling", "LeakyRelu", "--shape", "2", "--negative-slope", "\u2013NaN"],
     ("opsnn tiling: error: argument --negative-slope: invalid float value '\u2013NaN': '\u2013' (U+2013) is not "
      "ASCII, in which numbers are read ('\u2013NaN' begins with '\u2013' (U+2013), not '-': an editor or a web page "
      "changed the dashes; write -NaN)")),
    # a number's digits after the dash, and a value after '=' (the option's own word begins with '-')
    (["run", "Hardtanh", "--scalar", "\u22121", "1"],
     ("opsnn run: error: argument --scalar '\u22121 1': bad scalar '\u22121': '\u2212' (U+2212) is not ASCII, in which "
      "numbers are read ('\u22121' begins with '\u2212' (U+2212), not '-': an editor or a web page changed the dashes; "
      "write -1)")),
    (["run", "Hardtanh", "--scalar=\u2212inf", "1"],
     ("opsnn run: error: argument --scalar '\u2212inf': bad scalar '\u2212inf': '\u2212' (U+2212) is not ASCII, in "
      "which numbers are read ('\u2212inf' begins with '\u2212' (U+2212), not '-': an editor or a web page changed "
      "the dashes; write -inf)")),
    (["tiling", "LeakyRelu", "--shape", "2", "--negative-slope=\u2013.5"],
     ("opsnn tiling: error: argument --negative-slope: invalid float value '\u2013.5': '\u2013' (U+2013) is not "
      "ASCII, in which numbers are read ('\u2013.5' begins with '\u2013' (U+2013), not '-': an editor or a web page "
      "changed the dashes; write -.5)")),
    (["tiling", "LeakyReluGrad", "--shape", "\u20141,3"],  # (GE's dynamic dim)
     ("opsnn tiling: error: argument --shape: bad shape '\u20141,3'; '\u2014' (U+2014) is not ASCII, in which numbers are "
      "read; write e.g. 1,64,2,64 or [] for 0-d ('\u20141,3' begins with '\u2014' (U+2014), not '-': an editor or a "
      "web page changed the dashes; write -1,3)")),
    # every dash of the word is written as '-', a later item's too (a regression breaker: '--1,\u22122')
    (["run", "Hardtanh", "--scalar", "\u22121,\u22122"],
     ("opsnn run: error: argument --scalar '\u22121,\u22122': bad scalar '\u22121': '\u2212' (U+2212) is not ASCII, in "
      "which numbers are read ('\u22121,\u22122' begins with '\u2212' (U+2212), not '-': an editor or a web page "
      "changed the dashes; write -1,-2)")),
    (["tiling", "LeakyRelu", "--shape", "2", "--negative-slope=\u22121e\u22123"],
     ("opsnn tiling: error: argument --negative-slope: invalid float value '\u22121e\u22123': '\u2212' (U+2212) is "
      "not ASCII, in which numbers are read ('\u22121e\u22123' begins with '\u2212' (U+2212), not '-': an editor or "
      "a web page changed the dashes; write -1e-3)")),
    # dashes of both kinds in one word, in either order (a reviewer's: '\u2212-shape' was told nothing)
    (["run", "LeakyRelu", "\u2212-shape", "2"],
     ("opsnn run: error: unrecognized arguments: \u2212-shape 2 ('\u2212-shape' begins with '\u2212' (U+2212), not "
      "'-': an editor or a web page changed the dashes; write --shape)")),
    (["run", "LeakyRelu", "-\u2013shape", "2"],
     ("opsnn run: error: unrecognized arguments: -\u2013shape 2 ('-\u2013shape' has '\u2013' (U+2013) for its second "
      "dash, not '-': an editor or a web page changed the dashes; write --shape)")),
])
def test_an_option_written_with_a_typographic_dash_is_named(capsys, argv, said):
    """(found breaking the CLI) an option pasted from a page or a document whose dashes became
    en or em dashes (–shape) was an unrecognized argument, or an invalid command, with nothing
    said about the dash, which looks like '-'."""
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    assert exc.value.code == 2
    assert capsys.readouterr().err.rstrip().endswith(said)


@pytest.mark.parametrize("argv, said", [
    (["run", "LeakyRelu", "--seed=\u22121"], "-1 is refused too: expected an integer >= 0, got '-1')"),
    (["run", "LeakyRelu", "--seed", "\u22121"], "-1 is refused too: expected an integer >= 0, got '-1')"),
    (["demo", "--train", "--epochs=\u22125"], "-5 is refused too: expected an integer from 1 to 1000, got '-5')"),
    (["run", "LeakyRelu", "--shape", "\u22121"], "-1 is refused too: dims must be >= 0 and < 2**63, got '-1')"),
    (["run", "LeakyRelu", "--shape", "2", "\u22121"], "-1 is refused too: dims must be >= 0 and < 2**63, got '2 -1')"),
    # where '-' is taken, it is still what to write (tiling takes GE's dynamic dims, -1)
    (["tiling", "LeakyRelu", "--shape", "\u22121"], "write -1)"),
    # an unquoted [2, \u22121] is split into '[2,' and '\u22121]': the bracket is the shape's, not
    # an option's name (a regression breaker: both were told to write --1])
    (["run", "LeakyRelu", "--shape", "[2,", "\u22121]"],
     "-1] is refused too: dims must be >= 0 and < 2**63, got '[2, -1]')"),
    (["tiling", "LeakyRelu", "--shape", "(2,", "\u22121)"], "write -1))"),
    # tiling takes -1 and a whole [-2], no other negative dim (a regression breaker: told to write -3)
    (["tiling", "LeakyRelu", "--shape", "2", "\u22123"], "-3 is refused too: shape [2, -3]: a dim is >= 0 or -1 "
                                                          "(unknown), or the whole shape is [-2] (unknown rank))"),
    (["tiling", "LeakyRelu", "--shape2", "\u22122"], "write -2)"),
    # the option's words after the dashed one are its shape too (a regression breaker: -2 and -0
    # were read alone, and told to write them)
    (["tiling", "LeakyRelu", "--shape", "\u22122", "3", "--dtype", "float16"],
     "-2 is refused too: shape [-2, 3]: a dim is >= 0 or -1 (unknown), or the whole shape is [-2] (unknown rank))"),
    (["run", "LeakyRelu", "--shape", "\u22120", *["1"] * 64, "--seed", "1"],
     "-0 is refused too: 65 dims, more than the 64 a NumPy array holds (the inputs are allocated); an aclnn tensor "
     "takes at most 8)"),
    # a --soc that the command looks up as it runs (verify's, tiling's, one before a command of no
    # SoC): -1 is no SoC either (a reviewer's: each was told to write -1)
    *(([*before, "--soc", "\u22121", *after], ("-1 is refused too: unknown SoC '-1'; known: Ascend910, Ascend910B, "
                                            "Ascend910_93, Ascend950, Ascend310P, Ascend310B)"))
      for before, after in ((["verify"], []), (["tiling", "LeakyRelu"], ["--bogus"]), ([], ["list"]))),
    # a word past the values of the option before it: no value of that option (a reviewer's: told to write -1)
    (["bench", "--quick", "\u22121"], "-1 is refused too: --quick takes no value)"),
    (["run", "LeakyRelu", "--transpose", "\u22121"], "-1 is refused too: --transpose takes no value)"),
    (["run", "LeakyRelu", "--seed", "3", "\u22121"], "-1 is refused too: --seed takes one value, given 3)"),
    (["run", "LeakyRelu", "--seed=3", "\u22121"], "-1 is refused too: --seed takes one value, given in '--seed=3')"),
    # an option of several words given one after '=' takes no other (a breaker: --scalar=1 \u22122
    # was told to write -2, then refused as an unrecognized -2; --shape=2 \u22123 named a shape [-3])
    (["run", "LeakyRelu", "--scalar=1", "\u22122"],
     "-2 is refused too: --scalar takes one word after '=', given in '--scalar=1')"),
    (["tiling", "LeakyRelu", "--shape=2", "4", "\u22123"],
     "-3 is refused too: --shape takes one word after '=', given in '--shape=2')"),
])
def test_a_typographic_minus_is_not_told_to_write_a_value_its_option_refuses(capsys, argv, said):
    """(A breaker) `run --seed=\u22121`, `demo --train --epochs=\u22125` and `run --shape \u22121` were
    told to write -1 / -5, then refused as negative: the option's own reader says why instead."""
    if argv[0] == "demo":
        pytest.importorskip("torch")
        pytest.importorskip("sklearn")
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    assert exc.value.code == 2
    assert capsys.readouterr().err.endswith(f" not '-': an editor or a web page changed the dashes; {said}\n")


@pytest.mark.parametrize("option", ["--layouts", "--methods"])
def test_a_typographic_minus_is_not_told_to_write_a_value_outside_the_options_choices(capsys, option):
    """(A regression breaker) `bench --layouts \u22121` was told to write -1, then refused as no
    layout: argparse checks an option's choices apart from its type, which alone had been read."""
    with pytest.raises(SystemExit) as exc:
        cli.main(["bench", option, "\u22121", "--ops", "bogus"])
    assert exc.value.code == 2
    hint = capsys.readouterr().err.partition("an editor or a web page changed the dashes; ")[2]
    assert hint.startswith("-1 is refused too: invalid choice: '-1' (choose from "), hint


def test_the_samples_help_is_plain_text():
    """(found checking the help texts) `python -m opsnn.samples -h` showed its docstring's reST
    markup (``opsnn demo``): help texts write a command in single backquotes, as opsnn's do."""
    done = subprocess.run([sys.executable, "-m", "opsnn.samples", "-h"], capture_output=True, text=True, timeout=300,
                          check=False)
    assert done.returncode == 0 and "``" not in done.stdout, done.stdout
    assert "`python -m opsnn.samples`: both ops-nn samples, one after the other, as `opsnn demo`" in " ".join(
        done.stdout.split())


@pytest.mark.parametrize("argv, shown", [
    (["Hardtanh", "--dtype", "int64", "--scalar", "-1_000", "1_000"], "min_val=-1000, max_val=1000"),
    (["Hardtanh", "--scalar", "-1_000.5", "2_0e1_0"], "min_val=-1000.5, max_val=2e+11"),
    (["LeakyRelu", "--scalar", "-1_0e-1"], "negative_slope=-1.0"),
])
def test_a_negative_number_with_underscores_is_a_value(capsys, argv, shown):
    """(found breaking the CLI) --scalar 1_000 was read as Python reads it, but -1_000 was taken
    for an option ("--scalar: expected at least one argument"): the negative-number pattern
    knew no digit separators."""
    code, out = _run(capsys, "run", *argv, "--shape", "2")
    assert code == 0 and shown in out, out[-400:]


@pytest.mark.parametrize("value, dtype, text", [
    (2e11, "FLOAT", "2e+11"), (-123456789.0, "FLOAT", "-1.2345679e+08"), (1e15, "FLOAT", "1e+15"),
    (65504.0, "FLOAT16", "6.55e+04"), (2049.0, "FLOAT16", "2048.0"), (100.0, "FLOAT", "100.0"),
    (16777216.0, "FLOAT", "16777216.0"), (0.01, "FLOAT", "0.01"), (1e-30, "FLOAT", "1e-30"), (-0.0, "FLOAT16", "-0.0"),
    (float("-inf"), "FLOAT", "-inf"), (0.009999999776482582, "DOUBLE", "0.009999999776482582"),
])
def test_step_attributes_print_the_shortest_digits_and_no_integer_never_held(value, dtype, text):
    """An executor step's float32/float16 attribute: NumPy's shortest digits in Python's notation,
    the same under every NumPy (str() of float32 2e11 was '2e+11' under NumPy 2.4 and
    '200000000000.0' under 2.0), but in scientific notation where the digits padded with zeros
    would print an integer the value is not (a regression breaker: -123456789 as float32 printed
    '-123456790.0', its value being -123456792)."""
    from opsnn._core import dtypes

    assert dtypes.value_text(value, dtypes.DataType[dtype]) == text


def test_tiling_prints_a_float_attr_as_its_step_does(capsys):
    """(A regression breaker) opsnn tiling's op line printed the attr as the double typed,
    'negative_slope=200000000000.0', two lines above the step's 'negative_slope=2e+11': the attr
    is a C float (199999995904), printed as value_text prints it, on both lines."""
    code, out = _run(capsys, "tiling", "aclnnLeakyRelu", "--negative-slope", "2e11", "--shape", "2", "--dtype", "f32")
    assert code == 0 and "; attrs negative_slope=2e+11; config" in out and "negative_slope=2e+11) -> out" in out, out


def test_tilings_shape_help_says_what_it_reads(capsys):
    """(found checking the help texts) tiling's --shape help said to write "--shape=-1,8 when it
    starts with -", but the option reads -1,8, -1 8 and -1x8 as they are (NEGATIVE_NUMBER): the
    help names GE's dynamic dims as written."""
    with pytest.raises(SystemExit):
        cli.main(["tiling", "-h"])
    out = " ".join(capsys.readouterr().out.split())
    assert "when it starts with" not in out
    assert "GE's dynamic dims as they are: -1 8, -1,8 or -2" in out, out
    for words in (["-1", "8"], ["-1,8"], ["-1x8"]):
        code, text = _run(capsys, "tiling", "HardtanhBackward", "--shape", *words)
        assert code == 1 and "y = [-1, 8]" in text, text
