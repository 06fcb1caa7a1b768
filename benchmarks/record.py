#!/usr/bin/env python
"""Refresh the generated blocks of BENCHMARKS.md from the recorded run in benchmarks/results (and
the machine table and targets of the runs kept from other machines, ``OTHER_RUNS``).

    python benchmarks/bench.py     # the full grid (~30-40 minutes on 2 cores) into benchmarks/results
    python benchmarks/record.py    # the machine table, targets and result tables of BENCHMARKS.md

Each generated block sits between ``<!-- generated:NAME -->`` and ``<!-- /generated -->``; the
rest of the page (how to read it, where each target stands and why) is written by hand and kept.
Re-read that prose against the new numbers after each run.
"""

import json
import re
import sys
from pathlib import Path

from opsnn import bench

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
PAGE = ROOT / "BENCHMARKS.md"
# Full runs on other VMs of this workplace, kept beside the recorded one (their machine table and
# targets only): (block suffix, results folder)
OTHER_RUNS = (("zen3-s33", ROOT / "benchmarks" / "results-zen3-s33"),
              ("xeon-s23", ROOT / "benchmarks" / "results-xeon-s23"),
              ("zen4", ROOT / "benchmarks" / "results-zen4"),
              ("xeon-l3-105", ROOT / "benchmarks" / "results-xeon-l3-105"),
              ("zen3-passive", ROOT / "benchmarks" / "results-zen3-passive"),
              ("zen3-spin", ROOT / "benchmarks" / "results-zen3-spin"),
              ("zen3-final", ROOT / "benchmarks" / "results-zen3-final"),
              ("zen3-s27", ROOT / "benchmarks" / "results-zen3-s27"))


def machine_table(data: dict) -> str:
    m = data["machine"]
    threading = f" ({m['numba_threading_layer']} threading layer)" if m.get("numba_threading_layer") else ""
    rows = [
        ("CPUs", f"`nproc` = {m['nproc']}"),
        ("CPU model", f"`{m.get('cpu', '?')}` (as `/proc/cpuinfo` names it)"
                      + (f", `{m['llvm_cpu']}` to LLVM, {8 * m['vector_bytes']}-bit vector registers"
                         if m.get("llvm_cpu") else "")),
        ("Memory", f"{m.get('memory_gib', '?')} GiB"),
        ("Platform", m.get("platform", "?")),
        ("Software", f"Python {m['python']}, NumPy {m['numpy']}, numba {m['numba']}{threading}, "
                     f"torch {m.get('torch', '-')}"),
        ("Environment", (f"`GOMP_SPINCOUNT={m['GOMP_SPINCOUNT']}`" if m.get("GOMP_SPINCOUNT")
                         else f"`OMP_WAIT_POLICY={m.get('OMP_WAIT_POLICY') or 'unset'}`")
                        + (f"; launches from {m['parallel_min_bytes'] / 2**20:.1f} MiB of work on the thread "
                           f"pool (`parallel_min_bytes`, "
                           f"{'set' if m.get('OPSNN_PARALLEL_MIN_BYTES') else 'measured'})"
                           if m.get("parallel_min_bytes") else "")),
        ("Full run" if command(data["args"]) == "python benchmarks/bench.py" else "Run",
         f"{data['elapsed_s']:.0f} s (`{command(data['args'])}`)"),
    ]
    return "\n".join(["| | |", "|---|---|"] + [f"| {k} | {v} |" for k, v in rows])


# the selection options of bench.py a run's JSON records (``args``), as its command line gives them
_SELECTION = ("ops", "dtypes", "sizes", "threads", "layouts", "methods", "max_large_dtypes", "spin_count")


def command(args: dict) -> str:
    """The bench.py command line of a run, from the options its JSON records (the output folder
    and the default selections left out)."""
    def word(key, v):  # a size that is a power of ten as 1e5, as BENCHMARKS.md writes sizes
        digits = str(v)
        return f"1e{len(digits) - 1}" if key == "sizes" and v >= 1000 and digits.strip("0") == "1" else digits

    words = ["python benchmarks/bench.py"] + (["--quick"] if args.get("quick") else [])
    for key in _SELECTION:
        value = args.get(key)
        if value is not None:
            values = value if isinstance(value, list) else [value]
            words.append(f"--{key.replace('_', '-')} " + " ".join(word(key, v) for v in values))
    return " ".join(words)


def sections(bench_md: str) -> tuple[str, str]:
    """(the targets table, the result tables) of bench.md."""
    parts = bench_md.split("\n### ")
    targets = next(p for p in parts if p.startswith("targets"))
    results = [p for p in parts[1:] if not p.startswith("targets")]
    return targets.split("\n", 1)[1].strip(), "\n\n".join("### " + p.strip() for p in results)


def replace_block(page: str, name: str, body: str) -> str:
    pattern = re.compile(rf"(<!-- generated:{name} -->\n).*?(\n<!-- /generated -->)", re.S)
    if not pattern.search(page):
        raise SystemExit(f"BENCHMARKS.md has no '<!-- generated:{name} -->' block")
    return pattern.sub(lambda m: m.group(1) + body + m.group(2), page)


def blocks() -> list[tuple[str, str]]:
    """(block name, body) of every generated block: the recorded run's machine table, targets and
    result tables, then each other run's machine table and targets."""
    data = json.loads((RESULTS / "bench.json").read_text())
    # computed from the recorded JSON by today's code, not copied from the run's bench.md (a
    # breaker: the page kept targets an older rounding and label had written)
    targets, results = sections(bench.summarize(data))
    out = [("machine", machine_table(data)), ("targets", targets), ("results", results)]
    for suffix, folder in OTHER_RUNS:
        other = json.loads((folder / "bench.json").read_text())
        out += [(f"machine-{suffix}", machine_table(other)), (f"targets-{suffix}", sections(bench.summarize(other))[0])]
    return out


def main() -> int:
    page = PAGE.read_text()
    for name, body in blocks():
        page = replace_block(page, name, body)
    PAGE.write_text(page)
    print(f"updated {PAGE.relative_to(ROOT)} from {RESULTS.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
