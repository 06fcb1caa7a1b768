"""The benchmark runs (``--quick``), so it cannot rot: every method is timed, the JSON and the
plot are written, and the peak-memory measurement reports within its limit."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("numba")
pytest.importorskip("torch")
pytest.importorskip("matplotlib")

from opsnn import bench  # noqa: E402


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
    assert {r["threads"] for r in data["results"]} == {1, 2}
    for r in data["results"]:
        assert 0 < r["q1"] <= r["median"] <= r["q3"] and r["samples"] >= 3
    assert data["machine"]["nproc"] >= 1
    mem = data["memory"]
    for layout in ("contiguous", "strided", "broadcast"):
        assert mem[layout]["tracemalloc_peak_bytes"] < mem["limit_extra_bytes"]
    out = capsys.readouterr().out
    assert "vs torch_out" in out and "bench.json" in out


def test_cli_hook_arguments():
    import argparse

    parser = argparse.ArgumentParser()
    bench.add_arguments(parser)
    args = parser.parse_args(["--quick", "--sizes", "4", "1e3", "--threads", "1", "--dtypes", "f32"])
    assert args.sizes == [4, 1000] and args.threads == [1] and args.quick
    assert bench.factor(10**5) == (100, 1000) and bench.factor(4) == (2, 2) and bench.factor(10**8) == (10**4, 10**4)
