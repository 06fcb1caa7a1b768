"""The benchmark runs (``--quick``), so it cannot rot: every method is timed, the JSON and the
plot are written, and the peak-memory measurement reports within its limit."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("numba")
pytest.importorskip("torch")
pytest.importorskip("matplotlib")

from opsnn import bench, registry  # noqa: E402
from opsnn._core.extras import install_hint


def test_quick_run_writes_json_and_plot(tmp_path, capsys):
    assert bench.main(["--quick", "--out-dir", str(tmp_path)]) == 0
    data = json.loads((tmp_path / "bench.json").read_text())
    assert (tmp_path / "bench.png").stat().st_size > 10_000
    assert "call times" in (tmp_path / "bench.md").read_text()
    methods = {r["method"] for r in data["results"]}
    assert methods == set(bench.METHODS)
    ops = {r["op"] for r in data["results"]}
    assert {"LeakyReluBackward", "HardtanhBackward"} <= ops
    layouts = {(r["op"], r["layout"]) for r in data["results"]}
    assert ("LeakyReluBackward", "broadcast") in layouts and ("HardtanhBackward", "broadcast") not in layouts
    assert ("HardtanhBackward", "permuted") in layouts and ("LeakyReluBackward", "strided") in layouts
    assert {r["threads"] for r in data["results"]} == {1, 2}
    for r in data["results"]:
        assert 0 < r["q1"] <= r["median"] <= r["q3"] and r["samples"] >= 3
    assert data["machine"]["nproc"] >= 1
    mem = data["memory"]
    for layout in ("contiguous", "strided", "broadcast"):
        assert mem[layout]["tracemalloc_peak_bytes"] < mem["limit_extra_bytes"]
    out = capsys.readouterr().out
    assert "vs torch_out" in out and "bench.json" in out


def test_targets_table_counts_what_the_data_says():
    """The targets table is computed from the samples: a made-up run where one of two rows
    meets "4 elements: two-phase <= 2x torch" reports 1/2 with the miss named."""
    rows = []
    for dtype, repeat in (("f32", 3e-6), ("f16", 5e-6)):  # torch 2 us: 1.5x (met), 2.5x (missed)
        for method, median in (("torch_alloc", 2e-6), ("acl_repeat", repeat), ("py_alloc", 1e-6)):
            rows.append({"op": "LeakyReluBackward", "dtype": dtype, "size": 4, "layout": "contiguous",
                         "threads": 2, "method": method, "median": median})
    table = bench.targets({"results": rows, "memory": None})
    line = next(ln for ln in table.splitlines() if "two-phase" in ln)
    assert "| 1/2 | 0.40 - 0.66 | LeakyReluBackward f16 4e+00 contiguous 0.40 |" in line, line
    # (a new user) a miss by less than half a hundredth is shown rounded down, not as 1.00
    near = [{**r, "median": 2.008e-6} if r["method"] == "acl_repeat" else r for r in rows if r["dtype"] == "f32"]
    near = [{**r, "median": r["median"] / 2} if r["method"] == "torch_alloc" else r for r in near]
    line = next(ln for ln in bench.targets({"results": near, "memory": None}).splitlines() if "two-phase" in ln)
    assert line.endswith("| 0/1 | 0.49 - 0.49 | LeakyReluBackward f32 4e+00 contiguous 0.49 |"), line
    line = next(ln for ln in table.splitlines() if "(allocating)" in ln)
    assert "| 2/2 | 2.00 - 2.00 | - |" in line, line
    assert "bandwidth" not in table  # no rows measured for the large-size targets


def test_bench_measures_the_backward_and_the_forward_pair():
    """Every operator bench measures, by its registry name, the backward pair first: the forward
    pair is always registered, so none is left out (a guard for an unregistered one had remained)."""
    assert list(bench.available_ops()) == ["LeakyReluBackward", "HardtanhBackward", "LeakyRelu", "Hardtanh"]
    assert {registry.get(name).name for name in bench.available_ops()} == set(bench.available_ops())


def test_the_memory_row_checks_the_limit_it_names():
    """The targets table's peak-memory row: 64 MiB above inputs and output is within the limit it
    names (``bench.MEMORY_LIMIT_EXTRA_BYTES``), one byte more is not; the worst layout counts."""
    def row(worst: int) -> str:
        memory = {"elements": 10**8, "contiguous": {"tracemalloc_peak_bytes": 1, "rss_peak_extra_bytes": None},
                  "strided": {"tracemalloc_peak_bytes": 2, "rss_peak_extra_bytes": worst}}
        one = {"op": "LeakyReluBackward", "dtype": "f32", "size": 4, "layout": "contiguous", "threads": 1,
               "method": "py_alloc", "median": 1e-6}
        return bench.targets({"results": [one], "memory": memory}).splitlines()[-1]

    assert row(64 << 20) == ("| peak memory of a 1e+08-element f32 out= call <= inputs + output + 64 MiB | yes | "
                             "64.00 MiB above inputs + output (tracemalloc / RSS high-water, worst layout) | - |")
    assert "+ 64 MiB | no | 64.00 MiB above" in row((64 << 20) + 1)


def test_cli_hook_arguments():
    import argparse

    parser = argparse.ArgumentParser()
    bench.add_arguments(parser)
    args = parser.parse_args(["--quick", "--sizes", "4", "1e3", "--threads", "1", "--dtypes", "f32"])
    assert args.sizes == [4, 1000] and args.threads == [1] and args.quick
    args = parser.parse_args(["--sizes", "1e8", "100_000", "2.5e3", "--forward-max-size", "1e6"])
    assert args.sizes == [10**8, 10**5, 2500] and args.forward_max_size == 10**6
    ops = bench.available_ops()
    assert bench.cells(args, ops["LeakyRelu"]) == [(d, lay, n) for d in ops["LeakyRelu"].dtypes
                                                   for lay in ("contiguous", "strided", "permuted") for n in (10**5, 2500)]
    assert len(bench.cells(args, ops["LeakyReluBackward"])) == 4 * 4 * 3


def test_a_value_given_twice_is_measured_once():
    """(A new user) `bench --ops X X`, or X by two names, measured X twice: every list option
    keeps each value once, as read (1e5 is 100000), in the order first given."""
    import argparse

    parser = argparse.ArgumentParser()
    bench.add_arguments(parser)
    args = parser.parse_args(["--ops", "LeakyRelu", "leaky_relu", "HardtanhBackward", "LeakyRelu",
                              "--sizes", "1e5", "4", "100000", "--threads", "2", "1", "2",
                              "--layouts", "strided", "contiguous", "strided", "--methods", "numpy", "numpy",
                              "--max-large-dtypes", "f16", "float16"])
    assert args.ops == ["LeakyRelu", "HardtanhBackward"] and args.sizes == [10**5, 4] and args.threads == [2, 1]
    assert args.layouts == ["strided", "contiguous"] and args.methods == ["numpy"] and args.max_large_dtypes == ["f16"]
    assert bench.cells(args, bench.available_ops()["LeakyRelu"]) == [
        (d, lay, n) for d in ("f32", "f16", "bf16", "f64") for lay in ("strided", "contiguous") for n in (10**5, 4)]
    # (a breaker) an option given again adds its values (the last alone had been kept), and a bare
    # one is a usage error (it had meant the default: without --quick, the full grid)
    args = parser.parse_args(["--ops", "LeakyRelu", "--ops", "Hardtanh", "leaky_relu", "--sizes", "4", "--sizes", "1e3"])
    assert args.ops == ["LeakyRelu", "Hardtanh"] and args.sizes == [4, 1000]
    for bare in ("--ops", "--dtypes", "--sizes", "--threads", "--layouts", "--methods"):
        with pytest.raises(SystemExit):
            parser.parse_args([bare])


def test_dtypes_read_as_run_reads_them(capsys):
    """``--dtypes`` takes bench's short names and every name ``opsnn run --dtype`` reads; a dtype
    bench does not measure is a usage error naming it (it took only f32 f16 bf16 f64)."""
    import argparse

    parser = argparse.ArgumentParser()
    bench.add_arguments(parser)
    args = parser.parse_args(["--dtypes", "FLOAT", "ACL_BF16", "float16", "double", "f32",
                              "--max-large-dtypes", "DT_FLOAT16"])
    assert args.dtypes == ["f32", "bf16", "f16", "f64"] and args.max_large_dtypes == ["f16"]  # (f32 twice: once)
    for word, says in (("int32", "bench does not measure dtype 'int32' (int32)"), ("foo", "unknown dtype 'foo'"),
                       ("STRING", "dtype 'STRING' (ACL_STRING) holds no data here")):  # (it was a KeyError traceback)
        with pytest.raises(SystemExit):
            parser.parse_args(["--dtypes", word])
        assert says in capsys.readouterr().err


def test_summary_of_a_method_subset():
    """``--methods`` may leave out the two-phase and bandwidth methods: the tables then show "-"
    for what was not measured (a subset once crashed the 4-element table)."""
    rows = [{"op": "HardtanhBackward", "dtype": "f32", "size": 4, "layout": "strided", "threads": 2,
             "method": m, "median": v} for m, v in (("py_out", 1.8e-6), ("py_alloc", 1.6e-6),
                                                     ("torch_out", 1.82e-6), ("torch_alloc", 2e-6))]
    text = bench.summarize({"results": rows, "memory": None})
    line = next(ln for ln in text.splitlines() if ln.startswith("| HardtanhBackward | f32 | strided"))
    assert line == ("| HardtanhBackward | f32 | strided | 1.60 us | 1.80 us | 2.00 us | 1.82 us | 0.80 | - | - |"), line
    rows.append({**rows[0], "method": "acl_repeat", "median": 3.5e-6})
    line = next(ln for ln in bench.summarize({"results": rows, "memory": None}).splitlines()
                if ln.startswith("| HardtanhBackward"))
    assert line.endswith("| 0.80 | 3.50 us (1.8x) | - |"), line


def test_without_torch_a_clear_error(tmp_path, monkeypatch, capsys):
    """Installed without the bench extra, ``opsnn bench`` names what to install instead of
    failing with a traceback, and writes nothing."""
    import sys

    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` raises ImportError
    assert bench.main(["--quick", "--out-dir", str(tmp_path / "out")]) == 2
    assert f"install the bench extra (torch==2.13.0 CPU and matplotlib): `{install_hint('bench')}`" in \
        capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_without_the_compiled_backend_a_clear_error(tmp_path):
    """(a regression breaker) Where the numba backend cannot load (NUMBA_DISABLE_JIT=1 here, numba
    missing alike) ``opsnn bench`` says it times that backend's kernels, and why it is missing,
    instead of a traceback from its bandwidth kernel or a 16 s threshold measurement run uncompiled;
    exit 2, nothing written."""
    import os
    import subprocess
    import sys

    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    done = subprocess.run([sys.executable, "-m", "opsnn", "bench", "--quick", "--out-dir", str(tmp_path / "out")],
                          env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 2, done.stderr
    assert done.stderr == ("opsnn bench: needs the numba backend, whose kernels it times (kernel backend 'numba' "
                           "cannot be loaded: NUMBA_DISABLE_JIT is set: numba compiles nothing, and the compiled "
                           "backend cannot run uncompiled; unset NUMBA_DISABLE_JIT (or set it to 0) to use it)\n")
    assert not (tmp_path / "out").exists()


def test_a_numba_pool_of_no_thread_names_numba_num_threads(tmp_path):
    """(A reviewer's) ``NUMBA_NUM_THREADS=0 opsnn bench`` said only numba's own words ("ValueError:
    Number of threads specified must be > 0."), naming no variable: the refusal names it, its
    value and what it takes; exit 2, nothing written."""
    import os
    import subprocess
    import sys

    env = dict(os.environ, NUMBA_NUM_THREADS=" 0")
    done = subprocess.run([sys.executable, "-m", "opsnn", "bench", "--quick", "--out-dir", str(tmp_path / "out")],
                          env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 2, done.stderr
    cpus = len(os.sched_getaffinity(0))
    assert done.stderr == ("opsnn bench: needs the numba backend, whose kernels it times (kernel backend 'numba' "
                           "cannot be loaded: $NUMBA_NUM_THREADS=' 0' leaves numba's thread pool no thread: expected "
                           f"a whole number >= 1, or unset for numba's default, one a CPU ({cpus} here))\n")
    assert not (tmp_path / "out").exists()


def test_help_under_python_oo():
    """``python -OO benchmarks/bench.py --help`` (or PYTHONOPTIMIZE=2, which some images set) strips
    docstrings, and the parser's description, the module docstring's first line, was
    ``None.splitlines()``: an AttributeError traceback before any option was read. It prints the
    usage, exit 0."""
    import os
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-OO", "-m", "opsnn.bench", "--help"], capture_output=True, text=True,
                          env={**os.environ, "COLUMNS": "200"}, timeout=120, check=False)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.startswith("usage: opsnn bench [-h] [--quick]")


def test_measure_shuffles_each_round():
    """Each sample round takes the methods in its own order (the after-effects of one method
    must not land on the same neighbour every round), and every method is timed once a round,
    right after an untimed call of its own, even in a one-call sample (sample_seconds=0)."""
    from opsnn import bench

    calls = []
    fns = {name: (lambda name=name: calls.append(name)) for name in "abcdef"}
    timings = bench.measure(fns, sample_seconds=0.0, samples=5)
    assert set(timings) == set(fns) and all(t.samples == 5 and t.loops == 1 for t in timings.values())
    sampled = calls[-12 * 5:]  # the rounds close the list: per method an untimed and a timed call
    assert all(sampled[i] == sampled[i + 1] for i in range(0, len(sampled), 2))
    rounds = [sampled[12 * k:12 * (k + 1):2] for k in range(5)]
    assert all(sorted(r) == list("abcdef") for r in rounds)
    assert len({tuple(r) for r in rounds}) == 5 and len({r[0] for r in rounds}) > 1


def test_measure_sizes_loops_from_the_fastest_warm_call():
    """(A breaker) one slow warm call (a kernel's second call after its load took ~1 ms) ended the
    loop's sizing, and a 2 us call was timed one call a sample under --quick; the fastest of
    three warm calls sizes it now, unless a call takes ten samples' length."""
    import time

    slow = iter([0.0, 0.003])

    def fn():
        delay = next(slow, 0.0)
        if delay:
            time.sleep(delay)

    assert bench.measure({"f": fn}, sample_seconds=0.001, samples=3)["f"].loops > 10
    assert bench.measure({"g": lambda: time.sleep(0.002)}, sample_seconds=0.0001, samples=1)["g"].loops == 1


def test_cells_follow_the_emulated_soc_and_the_pool():
    """(A breaker) `opsnn --soc Ascend910 bench --quick` stopped with a traceback at bfloat16, and
    on Ascend310B the peak-memory step's refusal lost the whole run; with NUMBA_NUM_THREADS=1 the
    "2 threads" rows timed one opsnn thread against two of torch's. The cells are the dtypes the
    emulated SoC has, an operator it has none of is named, and the default threads are the pool's."""
    import argparse

    import numba

    from opsnn._core import platform

    parser = argparse.ArgumentParser()
    bench.add_arguments(parser)
    args = parser.parse_args(["--quick", "--ops", "HardtanhBackward", "--sizes", "4", "--layouts", "contiguous"])
    op = bench.available_ops()["HardtanhBackward"]
    with platform.use_soc("Ascend910"):
        assert "bf16" in bench.QUICK_DTYPES and "bf16" not in {d for d, _, _ in bench.cells(args, op)}
        assert bench.cells(args, op)
    with platform.use_soc("Ascend310B"):
        with pytest.raises(ValueError, match="nothing to measure for LeakyReluBackward: the emulated Ascend310B "
                                             "has no kernel of it"):
            bench.check_selection(parser.parse_args(["--quick", "--ops", "LeakyReluBackward"]))
        assert not bench.on_soc(bench.available_ops()["LeakyReluBackward"], "f32")
    with pytest.raises(ValueError, match="nothing to measure for LeakyReluBackward: --max-large-dtypes f16 leaves none "
                                         "of its dtypes at the 1e8 sizes asked for"):
        bench.check_selection(parser.parse_args(["--ops", "LeakyReluBackward", "--dtypes", "f32", "--sizes", "1e8",
                                                 "--max-large-dtypes", "f16"]))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(numba.config, "NUMBA_NUM_THREADS", 1)
        assert bench.default_threads() == (1,)


@pytest.mark.parametrize("argv, why", [
    (["--quick", "--ops", "HardtanhBackward", "--dtypes", "bf16"],
     ("the emulated Ascend910 has no kernel of it for --dtypes bf16 (its dtypes there: f32 f16; opsnn describe "
      "HardtanhBackward)")),
    (["--quick", "--dtypes", "bf16"],  # every operator: the first is named
     ("the emulated Ascend910 has no kernel of it for --dtypes bf16 (its dtypes there: f32 f16 f64; opsnn describe "
      "LeakyReluBackward)"))])
def test_dtypes_the_emulated_soc_lacks_are_named_as_the_reason(argv, why):
    """(The CLI breaker) `opsnn --soc Ascend910 bench --quick --dtypes bf16`, a dtype the operators
    have but Ascend910 has no kernel of, said "the layouts and sizes asked for leave no cell"."""
    import argparse

    from opsnn._core import platform

    parser = argparse.ArgumentParser()
    bench.add_arguments(parser)
    with platform.use_soc("Ascend910"), pytest.raises(ValueError) as exc:
        bench.check_selection(parser.parse_args(argv))
    assert str(exc.value) == f"nothing to measure for {'HardtanhBackward' if '--ops' in argv else 'LeakyReluBackward'}: {why}"


def test_a_grid_beyond_the_hosts_available_memory_is_a_usage_error(monkeypatch):
    """(A breaker) `opsnn bench --quick --sizes 3000000000` made its arrays (Linux overcommits)
    and the out-of-memory killer ended it as they filled: exit 137, nothing said. The largest
    cell's estimate (``cell_bytes``: the arrays its methods hold) is checked against the memory
    available now; where that cannot be read, the run goes on as before. A second breaker: one
    constant for every selection refused a run of one method that fits (--methods py_out 1e9
    float32 holds 3 arrays, 12 GB) and let through a full run that does not."""
    import argparse

    from opsnn._core import memory

    parser = argparse.ArgumentParser()
    bench.add_arguments(parser)
    leaky = bench.available_ops()["LeakyReluBackward"]
    # inputs 2 + out 1, acl 3, numpy 1.5, bandwidth 3, several methods 2: 12.5 arrays of 8 bytes
    assert bench.cell_bytes(leaky, "f64", "contiguous", 1000, bench.METHODS) == 100_000
    assert bench.cell_bytes(leaky, "f64", "strided", 1000, bench.METHODS) == 108_000
    assert bench.cell_bytes(leaky, "f32", "contiguous", 10**9, ["py_out"]) == 12 * 10**9
    assert bench.cell_bytes(leaky, "f32", "broadcast", 10**6, ["py_out"]) == 4 * (10**6 + 2000)
    assert bench.cell_bytes(bench.available_ops()["LeakyRelu"], "f16", "contiguous", 100, ["bandwidth"]) == 2 * 400
    args = parser.parse_args(["--ops", "LeakyReluBackward", "--dtypes", "f16", "f64", "--sizes", "4", "1000",
                              "--layouts", "contiguous"])
    monkeypatch.setattr(memory, "host_available", lambda: 100_000 - 1)
    with pytest.raises(ValueError) as refused:
        bench.check_selection(args)
    assert str(refused.value) == ("the largest cell (LeakyReluBackward f64 contiguous 1000 elements) needs ~100000 "
                                  "bytes of host memory, more than the 99999 bytes available now")
    for available in (lambda: 100_000, lambda: None):
        monkeypatch.setattr(memory, "host_available", available)
        bench.check_selection(args)
    monkeypatch.setattr(memory, "host_available", lambda: 24_000)  # one method: 3 arrays
    bench.check_selection(parser.parse_args(["--ops", "LeakyReluBackward", "--dtypes", "f64", "--sizes", "1000",
                                             "--layouts", "contiguous", "--methods", "py_out"]))
    monkeypatch.setattr(memory, "host_available", lambda: 2**30)
    with pytest.raises(SystemExit) as exited:  # refused before any array or output folder is made
        bench.main(["--sizes", "3000000000", "--quick", "--out", "unused"])
    assert exited.value.code == 2


def test_pool_wait_environment():
    """Passive waiting unless asked (a caller's own OMP_WAIT_POLICY kept); --spin-count N sets
    GOMP_SPINCOUNT and removes OMP_WAIT_POLICY, which libgomp would let override it."""
    import argparse

    assert bench.pool_wait_env(None, {}) == {"OMP_WAIT_POLICY": "PASSIVE"}
    assert bench.pool_wait_env(None, {"OMP_WAIT_POLICY": "ACTIVE"}) == {"OMP_WAIT_POLICY": "ACTIVE"}
    assert bench.pool_wait_env(20000, {"OMP_WAIT_POLICY": "PASSIVE"}) == {"OMP_WAIT_POLICY": None,
                                                                          "GOMP_SPINCOUNT": "20000"}
    parser = argparse.ArgumentParser()
    bench.add_arguments(parser)
    assert parser.parse_args(["--spin-count", "3e4"]).spin_count == 30000
    assert parser.parse_args([]).spin_count is None
    with pytest.raises(SystemExit):
        parser.parse_args(["--spin-count", "-1"])


def test_without_matplotlib_no_stale_plot_stays(tmp_path, capsys, monkeypatch):
    """Found by a new user: without matplotlib the plot was skipped silently and an earlier run's
    bench.png stayed beside the new bench.json. Now it is removed and the run says why."""
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "matplotlib" else real(name, *a))
    (tmp_path / "bench.png").write_bytes(b"an earlier run's")
    assert bench.main(["--quick", "--ops", "LeakyReluBackward", "--dtypes", "f32", "--sizes", "4", "--threads", "1",
                       "--layouts", "contiguous", "--out-dir", str(tmp_path)]) == 0
    assert not (tmp_path / "bench.png").exists() and (tmp_path / "bench.json").exists()
    assert f"no plot: matplotlib is not installed ({install_hint('bench')})" in capsys.readouterr().out
    # (a breaker) --no-plot left an earlier bench.png too, and --json-only printed the memory table
    monkeypatch.setattr(importlib.util, "find_spec", real)
    (tmp_path / "bench.png").write_bytes(b"an earlier run's")
    assert bench.main(["--quick", "--ops", "LeakyReluBackward", "--dtypes", "f32", "--sizes", "4", "--threads", "1",
                       "--layouts", "contiguous", "--no-plot", "--json-only", "--out-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert not (tmp_path / "bench.png").exists() and "no plot" not in out and "peak extra memory" not in out


@pytest.mark.parametrize("option", ["--sizes", "--ops", "--dtypes"])
def test_python_benchmarks_bench_refuses_dash_dash_by_equals_as_opsnn_bench(capsys, tmp_path, option):
    """(A regression breaker) bench.main, benchmarks/bench.py's entry, read its options with
    argparse's own parser: `--sizes=--` (or --ops, --dtypes) measured every one, argparse
    handing the option an empty list, where `opsnn bench` refuses it (cli_args.Parser)."""
    with pytest.raises(SystemExit) as done:
        bench.main(["--quick", f"{option}=--", "--out-dir", str(tmp_path)])
    assert done.value.code == 2
    assert capsys.readouterr().err.endswith(f"opsnn bench: error: argument {option}: expected a value, got '--'\n")
    assert not any(tmp_path.iterdir())


def test_python_benchmarks_bench_help_into_a_closed_pipe_ends_with_141():
    """(A regression breaker) benchmarks/bench.py --help into a closed pipe exited 0, argparse
    dropping the write's error, where `opsnn bench --help` ends with 141."""
    script = Path(__file__).resolve().parents[1] / "benchmarks" / "bench.py"
    proc = subprocess.Popen([sys.executable, str(script), "--help"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert (proc.wait(timeout=300), err) == (141, "")


@pytest.mark.parametrize("option, word, values", [
    ("--ops", "leaky_relu_backward,hardtanh_backward", "leaky_relu_backward hardtanh_backward"),
    ("--dtypes", "f32,f16", "f32 f16"), ("--threads", "1,2", "1 2"), ("--layouts", "contiguous,strided,",
                                                                         "contiguous strided"),
    ("--methods", "py_out,numpy", "py_out numpy"), ("--dtypes", "f32,", "f32"),
    # a blank after the comma (a quoted 'f32, f16') is no part of a value: "write f32  f16" had doubled it
    ("--dtypes", "f32, f16", "f32 f16"), ("--threads", " 1 ,2", "1 2"),
])
def test_a_list_option_given_by_commas_is_told_to_give_separate_words(capsys, option, word, values):
    """(A regression breaker) bench's list options take separate words, where `opsnn run --dtype`
    reads a comma list: `--dtypes f32,f16` had been told only "a dtype name holds no comma",
    `--ops a,b` "unknown operator" and `--layouts a,b` "invalid choice". Each says how to write it."""
    with pytest.raises(SystemExit) as exited:
        bench.main(["--quick", option, word])
    assert exited.value.code == 2
    assert capsys.readouterr().err.endswith(f"error: argument {option}: {word!r}: this option takes its values as "
                                            f"separate words, not by commas: write {values}\n")


@pytest.mark.parametrize("word", ["1e19", "1e99999999999999999999"])
@pytest.mark.parametrize("pool, expected", [
    (None, "expected an integer >= 1, got {word!r} (a thread count: at most numba's pool's, NUMBA_NUM_THREADS)"),
    (2, "expected an integer from 1 to 2, got {word!r} (numba's pool has 2 threads here, NUMBA_NUM_THREADS)")])
def test_a_thread_count_past_1e18_is_not_told_to_write_its_digits(capsys, monkeypatch, word, pool, expected):
    """(A breaker) `bench --threads 1e19` was told "at most 1e18: write the digits for more", the
    digits then refused past numba's pool: the hint names the bound a thread count has."""
    import argparse

    monkeypatch.setattr(bench, "pool_threads", lambda: pool)
    parser = argparse.ArgumentParser(prog="opsnn bench")
    bench.add_arguments(parser)
    with pytest.raises(SystemExit):
        parser.parse_args(["--threads", word])
    assert capsys.readouterr().err.endswith(f"error: argument --threads: {expected.format(word=word)}\n")


@pytest.mark.parametrize("word, said", [
    ("3", "expected an integer from 1 to 2, got '3'"),
    ("1,3", ("'1,3': this option takes its values as separate words, not by commas, and '3' is no value of it: "
             "expected an integer from 1 to 2, got '3'"))])
def test_a_thread_count_past_the_pool_is_refused_as_it_is_read(capsys, monkeypatch, word, said):
    """(A breaker) `bench --threads 1,3` was told "write 1 3", then `--threads 3` refused after the
    line was read, numba's pool having 2 threads: the pool's count caps each word as it is read."""
    import argparse

    monkeypatch.setattr(bench, "pool_threads", lambda: 2)
    parser = argparse.ArgumentParser(prog="opsnn bench")
    bench.add_arguments(parser)
    with pytest.raises(SystemExit):
        parser.parse_args(["--threads", word])
    assert capsys.readouterr().err.endswith(f"error: argument --threads: {said} (numba's pool has 2 threads here, "
                                            "NUMBA_NUM_THREADS)\n")


def test_a_pool_of_one_thread_is_counted_as_one(capsys, monkeypatch):
    """(A regression breaker) on one CPU (taskset -c 0, a one-CPU container) numba's pool "has 1
    threads here", as read and as check_selection refuses it: one thread is said as one, in the
    same words both ways (check_selection's, for a pool not known as the words are read, had been
    "--threads 2: numba's pool has 1 thread here (NUMBA_NUM_THREADS); ask for 1 to 1")."""
    import argparse

    import numba

    monkeypatch.setattr(bench, "pool_threads", lambda: 1)
    parser = argparse.ArgumentParser(prog="opsnn bench")
    bench.add_arguments(parser)
    with pytest.raises(SystemExit):
        parser.parse_args(["--threads", "2"])
    assert capsys.readouterr().err.endswith("error: argument --threads: expected an integer from 1 to 1, got '2' "
                                            "(numba's pool has 1 thread here, NUMBA_NUM_THREADS)\n")
    monkeypatch.setattr(bench, "pool_threads", lambda: None)  # (not known as it is read)
    args = parser.parse_args(["--threads", "2", "--ops", "LeakyRelu", "--sizes", "4"])
    monkeypatch.setattr(numba.config, "NUMBA_NUM_THREADS", 1)
    with pytest.raises(ValueError) as refused:
        bench.check_selection(args)
    assert str(refused.value) == ("argument --threads: expected an integer from 1 to 1, got '2' "
                                  "(numba's pool has 1 thread here, NUMBA_NUM_THREADS)")


def test_pool_threads_reads_numbas_setting_without_numba(monkeypatch, tmp_path):
    """The pool's count as numba.config reads it (NUMBA_NUM_THREADS, else the CPUs this process
    may run on), without importing numba; None where numba's own reading decides."""
    import os
    import sys

    monkeypatch.delitem(sys.modules, "numba", raising=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NUMBA_NUM_THREADS", raising=False)
    assert bench.pool_threads() == len(os.sched_getaffinity(0))
    for text, count in (("3", 3), (" 4 ", 4), ("x", None), ("0", None)):
        monkeypatch.setenv("NUMBA_NUM_THREADS", text)
        assert bench.pool_threads() == count, text
    (tmp_path / ".numba_config.yaml").write_text("NUM_THREADS: 1\n")
    assert bench.pool_threads() is None
    assert "numba" not in sys.modules


@pytest.mark.parametrize("option, word, said", [
    ("--layouts", "contiguous,bogus", "'bogus' is no value of it (choose from contiguous, broadcast, strided, permuted)"),
    ("--methods", "bogus,numpy", ("'bogus' is no value of it (choose from py_out, py_alloc, acl_fresh, acl_repeat, "
                                  "torch_out, torch_alloc, numpy, bandwidth)")),
    ("--threads", "1,x", "'x' is no value of it: expected an integer from 1 to 2, got 'x'"),
    ("--dtypes", "f32,f99", ("'f99' is no value of it: unknown dtype 'f99'; expected a CANN name (FLOAT, FLOAT16, "
                             "BF16, DOUBLE, INT32 ...), f16 / bf16 / f32 or a NumPy name")),
])
def test_a_list_by_commas_with_a_bad_value_names_it(capsys, monkeypatch, option, word, said):
    """(A breaker) `bench --layouts contiguous,bogus` was told "write contiguous bogus", a line
    then refused as an invalid choice: the words suggested are all taken, else the bad one is
    named with why."""
    monkeypatch.setattr(bench, "pool_threads", lambda: 2)
    with pytest.raises(SystemExit) as exited:
        bench.main(["--quick", option, word])
    assert exited.value.code == 2
    assert capsys.readouterr().err.endswith(f"error: argument {option}: {word!r}: this option takes its values as "
                                            f"separate words, not by commas, and {said}\n")
