"""What ``opsnn verify`` and ``opsnn compare`` report, in one place: the statuses, a case's
``Result``, the per-file table, the failure lines, the summary and its line, and the ``--json``
results file (with its guard against replacing anything but an earlier results file)."""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import sys
from collections.abc import Iterator
from pathlib import Path

from rich.table import Table

PASS, FAIL, SKIP, DOC = "PASS", "FAIL", "SKIP", "DOC"


@dataclasses.dataclass
class Result:
    """The outcome of one case (the rows of the table and of ``--json``)."""

    file: str
    index: int
    name: str
    op: str
    dtype: str
    shape: str
    numel: int
    status: str
    reason: str = ""
    max_abs: float | None = None
    max_rel: float | None = None
    bit_exact: bool | None = None
    mismatches: int | None = None
    seconds: float = 0.0
    note: str = ""  # what the row's kernel or SoC would do differently; never changes the status



def path_argument(text: str) -> str:
    """A path option's value; an empty one (an unset shell variable) is a usage error, where it
    had been taken as the option left out."""
    if not text.strip():
        raise argparse.ArgumentTypeError(f"an empty path ({text!r}); name a file or folder")
    return text



LOG_WIDTH = 200
_STYLE = {PASS: "green", FAIL: "bold red", SKIP: "yellow", DOC: "cyan"}


def table(path, results: list[Result]) -> Table:
    """One case file's results as a table (long notes folded; ``failures`` prints them whole)."""
    ops = ", ".join(dict.fromkeys(r.op for r in results))
    table = Table(title=f"{path}: {ops} ({len(results)} cases)")
    for column in ("#", "case", "dtype", "shape", "elements", "result", "max abs", "max rel", "exact"):
        table.add_column(column, justify="right" if column in ("#", "elements") else "left",
                         no_wrap=column not in ("case", "shape"), overflow="fold")
    table.add_column("note", overflow="fold")
    for r in results:
        exact = "" if r.bit_exact is None else ("yes" if r.bit_exact else "no")
        table.add_row(str(r.index), r.name, r.dtype, r.shape, f"{r.numel:,}", f"[{_STYLE[r.status]}]{r.status}",
                      _num(r.max_abs), _num(r.max_rel), exact, "; ".join(filter(None, (r.reason, r.note))))
    return table


def failures(results: list[Result]) -> Iterator[str]:
    """Full text of every failure (the table cuts long notes)."""
    for r in results:
        if r.status == FAIL:
            yield f"[bold red]FAIL[/] {Path(r.file).name} #{r.index} {r.name}: {r.reason}"


def _num(value: float | None) -> str:
    return "" if value is None else f"{value:.3g}"


def summary(results: list[Result], elapsed: float) -> dict:
    """Counts by status, bit-exact passes, seconds: the summary of a table and of ``--json``."""
    counts = {status: sum(r.status == status for r in results) for status in (PASS, FAIL, SKIP, DOC)}
    # (a case that failed after a bit-exact comparison, its --dump not written, is not counted)
    return {**counts, "total": len(results),
            "bit_exact": sum(bool(r.bit_exact) and r.status != FAIL for r in results),
            "seconds": round(elapsed, 3)}


def summary_line(summary: dict, golden: str, soc: str, seed) -> str:
    """The run's last line: counts, time, and what the results were judged against."""
    cases, docs = summary["total"], summary[DOC]
    return (f"[bold]{cases} case{'s' * (cases != 1)}[/]: [green]{summary[PASS]} passed[/] "
            f"({summary['bit_exact']} bit-exact), [cyan]{docs} documented difference{'s' * (docs != 1)}[/], "
            f"[yellow]{summary[SKIP]} skipped[/], [bold red]{summary[FAIL]} failed[/] "
            f"in {summary['seconds']:.1f} s (golden {golden}, SoC {soc}, seed {seed})")


_RESULT_KEYS = {"settings", "summary", "cases"}  # what write_json writes (and a rerun may replace)


def check_writable(path: str, inputs: list[str]) -> None:
    """Fail before the run, not after it, when ``--json PATH`` cannot be written, or when it names
    a case file of this run or an existing file that is not a results file of opsnn verify or
    compare (both write ``write_json``'s shape): the results replace only their own kind (a
    breaker: ``--json FILE FILE2``, tiling's switch written verify's way, overwrote the first
    case file with the results). ``-`` is stdout."""
    if path == "-":
        return
    target = Path(path)
    if target.is_file() and any(target.samefile(f) for f in inputs if Path(f).is_file()):
        raise ValueError(f"--json {path!r} is one of the case files this run reads; --json takes the path "
                         "the results are written to (or - for stdout)")
    if target.is_file() and target.stat().st_size:
        try:
            previous = json.loads(target.read_text())
        except (OSError, UnicodeDecodeError, ValueError):
            previous = None
        if not (isinstance(previous, dict) and _RESULT_KEYS <= previous.keys()):
            raise ValueError(f"--json {path!r} exists and is not a results file of opsnn verify or compare, the "
                             "only file --json replaces (--json takes the path the results are written to, or - "
                             "for stdout); remove it or name another path")
    existed = target.exists()
    try:
        with open(target, "a"):
            pass
    except OSError as exc:
        raise ValueError(f"--json: cannot write {path!r}: {exc.strerror}") from None
    if not existed:
        target.unlink()  # leave no empty file behind if the run stops early


def write_json(path: str, settings: dict, summary: dict, results: list[Result]) -> None:
    """The results file of ``--json PATH`` (``-``: stdout), of verify and ``opsnn compare``."""
    document = {"settings": settings, "summary": summary,
                "cases": [{k: _json_safe(v) for k, v in dataclasses.asdict(r).items()} for r in results]}
    text = json.dumps(document, indent=1, allow_nan=False) + "\n"
    if path == "-":
        sys.stdout.write(text)
    else:
        Path(path).write_text(text)


def _json_safe(value):
    """Strict JSON has no inf/nan: write them as the strings "inf", "-inf", "nan"."""
    return str(value) if isinstance(value, float) and not math.isfinite(value) else value
