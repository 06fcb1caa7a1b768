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
