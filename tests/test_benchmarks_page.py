"""BENCHMARKS.md's generated blocks match the recorded run (benchmarks/record.py)."""

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _record():
    spec = importlib.util.spec_from_file_location("record", ROOT / "benchmarks" / "record.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_page_matches_the_recorded_run():
    """What record.py would write is what the page says: results and page cannot drift apart."""
    record = _record()
    page = (ROOT / "BENCHMARKS.md").read_text()
    data = json.loads((record.RESULTS / "bench.json").read_text())
    refreshed = page
    for name, body in record.blocks():
        refreshed = record.replace_block(refreshed, name, body)
    assert refreshed == page, "BENCHMARKS.md is stale: run python benchmarks/record.py"
    assert "| >= 1e6, contiguous: Pythonic out= >= 0.9x bandwidth |" in page
    assert f"{data['elapsed_s']:.0f} s" in page


def test_replace_block_keeps_the_prose():
    record = _record()
    page = "intro\n<!-- generated:targets -->\nold\n<!-- /generated -->\nwhy it stands\n"
    assert record.replace_block(page, "targets", "| new |") == \
        "intro\n<!-- generated:targets -->\n| new |\n<!-- /generated -->\nwhy it stands\n"
    try:
        record.replace_block(page, "results", "x")
    except SystemExit as exc:
        assert "generated:results" in str(exc)
    else:
        raise AssertionError("a missing block must be reported")


def test_run_command_from_recorded_options():
    """A recorded run's command line: the default grid as the bare command, a sub-grid with the
    options that select it (sizes as BENCHMARKS.md writes them), the spin count included."""
    record = _record()
    assert record.command({"quick": False, "ops": None, "spin_count": None}) == "python benchmarks/bench.py"
    assert record.command({"ops": ["LeakyReluBackward"], "sizes": [4, 2500, 10**5], "threads": [2],
                           "spin_count": 30000}) == (
        "python benchmarks/bench.py --ops LeakyReluBackward --sizes 4 2500 1e5 --threads 2 --spin-count 30000")
    assert "| Run | 5 s (`python benchmarks/bench.py --quick`) |" in record.machine_table(
        {"machine": {"nproc": 2, "python": "3.11", "numpy": "2", "numba": "0.6"}, "elapsed_s": 5,
         "args": {"quick": True}})
