"""What ``opsnn verify`` and ``opsnn compare`` report, in one place: the statuses, a case's
``Result``, the per-file table, the failure lines, the summary and its line, and the ``--json``
results file (with its guard against replacing anything but an earlier results file)."""

from __future__ import annotations

import argparse
import dataclasses
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path

from rich.markup import escape
from rich.table import Table
from rich.text import Text

from .cli_files import OutputError, read_json, strict_json

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


# The table's columns, and the ones a narrow terminal leaves out first (an 80-column terminal
# had folded each case name into a two-letter column: a breaker); --json keeps every field.
_COLUMNS = ("#", "case", "dtype", "shape", "elements", "result", "max abs", "max rel", "exact", "note")
_DROPPED_FIRST = ("max rel", "elements", "max abs", "shape", "exact")


@dataclasses.dataclass
class ResultsTable:
    """One case file's results as a table, laid out for the width it is printed at: where the
    columns do not fit, the least needed ones (``_DROPPED_FIRST``) are left out, so the case
    names and results stay readable; a caption says which. Long notes are folded
    (``failures`` prints them whole)."""

    path: object
    results: list[Result]

    def rows(self) -> list[dict]:
        rows = []
        for r in self.results:
            rows.append({"#": str(r.index), "case": r.name, "dtype": r.dtype, "shape": r.shape,
                         "elements": f"{r.numel:,}", "result": r.status, "max abs": _num(r.max_abs),
                         "max rel": _num(r.max_rel),
                         "exact": "" if r.bit_exact is None else ("yes" if r.bit_exact else "no"),
                         "note": _short_note(r)})
        return rows

    def layout(self, width: int, rows: list[dict]) -> tuple[list[str], list[str]]:
        """The columns shown at ``width`` characters for these ``rows``, and those left out."""
        natural = {c: max([len(c)] + [len(row[c]) for row in rows]) for c in _COLUMNS}
        natural["note"] = min(natural["note"], 20)  # (folded: it takes what is left)
        shown, left_out = list(_COLUMNS), []
        for column in _DROPPED_FIRST:
            if sum(natural[c] + 3 for c in shown) + 1 <= width:
                break
            shown.remove(column)
            left_out.append(column)
        return shown, left_out

    def __rich_console__(self, console, options):
        rows = self.rows()
        shown, left_out = self.layout(options.max_width, rows)
        ops = ", ".join(dict.fromkeys(r.op for r in self.results))
        caption = f"(left out at this width: {', '.join(left_out)}; --json has them)" if left_out else None
        # the title on a line of its own: a table narrower than a long path had folded it
        count = len(self.results)
        yield Text(f"{self.path}: {ops} ({count} case{'s' * (count != 1)})", style="italic")
        table = Table(caption=caption)
        for column in shown:
            table.add_column(column, justify="right" if column in ("#", "elements") else "left",
                             no_wrap=column not in ("case", "shape", "note"), overflow="fold")
        for r, row in zip(self.results, rows):
            # as Text, never markup: a cell holds the case file's own words (a breaker: a case
            # named "case[/bad]" raised MarkupError, "[red]x[/red]" showed as x)
            cells = {c: Text(row[c]) for c in shown} | {"result": Text(r.status, style=_STYLE[r.status])}
            table.add_row(*(cells[c] for c in shown))
        yield table


def table(path, results: list[Result]) -> ResultsTable:
    """One case file's results as a table (``ResultsTable``: its columns fit the width printed at)."""
    return ResultsTable(path, results)


def failures(results: list[Result]) -> Iterator[str]:
    """Full text of every failure, printed once below the table (whose note column shows the
    start of it: ``_short_note``)."""
    for r in results:
        if r.status == FAIL:  # (markup: what the case file and case.json give is escaped, as the table's Text)
            yield f"[bold red]FAIL[/] {escape(f'{Path(r.file).name} #{r.index} {r.name}: {_full_note(r)}')}"


# A FAIL's note in the table, at most this many characters: its full text (a compare FAIL's names
# the board file, both values and the index) had widened a piped table, which is not folded, to
# LOG_WIDTH; ``failures`` prints it whole below the table.
_FAIL_NOTE_WIDTH = 40
_CUT = " ... (below)"


def _full_note(r: Result) -> str:
    return "; ".join(filter(None, (r.reason, r.note)))


def _short_note(r: Result) -> str:
    """A row's note in the table: a FAIL's cut at a word to ``_FAIL_NOTE_WIDTH`` characters (its
    full text follows the table); the other statuses' whole (printed nowhere else)."""
    text = _full_note(r)
    if r.status != FAIL or len(text) <= _FAIL_NOTE_WIDTH:
        return text
    # a refused call's "aclnnXxxGetWorkspaceSize returned 161002: ..." as "161002: ...": the call's
    # name alone had filled the room, cut mid-word, and the status was lost (a breaker)
    text = re.sub(r"^\S+ returned (-?\d+)", r"\1", text)
    if len(text) <= _FAIL_NOTE_WIDTH:
        return text
    head = text[:_FAIL_NOTE_WIDTH - len(_CUT) + 1]
    return (head.rsplit(" ", 1)[0] if " " in head else head[:-1]).rstrip(";,:") + _CUT


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
    """The run's last line: counts, time, and what the results were judged against (as
    compare reads them from case.json: printed as written, never as markup)."""
    cases, docs = summary["total"], summary[DOC]
    judged = escape(f"golden {golden}, SoC {soc}, seed {seed}")
    return (f"[bold]{cases} case{'s' * (cases != 1)}[/]: [green]{summary[PASS]} passed[/] "
            f"({summary['bit_exact']} bit-exact), [cyan]{docs} documented difference{'s' * (docs != 1)}[/], "
            f"[yellow]{summary[SKIP]} skipped[/], [bold red]{summary[FAIL]} failed[/] "
            f"in {summary['seconds']:.1f} s ({judged})")


# The exit status of a verify or compare run that checked no case, each skipped: pytest's for a
# run of no test (its 5, "no tests collected"), so a CI job that verified nothing does not pass
# and a script can tell it from a failure (1) and a usage error (2).
NOTHING_CHECKED = 5


def exit_status(command: str, summary: dict, nothing: str = "there was none to check") -> int:
    """The exit status of a verify or compare run that ended (not interrupted) with ``summary``:
    1 where a case failed, ``NOTHING_CHECKED`` where every case was skipped or there was none
    (``nothing`` says why: compare of a dump that lists no case), a line on stderr saying so,
    else 0 (a DOC is a case checked: its difference is a documented one)."""
    if summary[FAIL]:
        return 1
    if summary[SKIP] == summary["total"]:
        count = summary["total"]
        why = (f"all {count} cases skipped" if count > 1 else "its 1 case skipped") if count else nothing
        if count:
            why += " (the table gives each reason)"
        verb = {"verify": "verified", "compare": "compared"}[command]
        print(f"opsnn {command}: no case {verb}: {why}; exit status {NOTHING_CHECKED}, not 0: a run that checked "
              "nothing is no pass", file=sys.stderr)
        return NOTHING_CHECKED
    return 0


def interrupted_line(command: str, done: int, total: int, json_path: str | None) -> str:
    """The line a verify or compare run stopped by Ctrl-C ends with (exit 130), its report of
    the ``done`` cases printed and written before it."""
    held = "the summary above and --json hold" if json_path else "the summary above holds"
    return (f"opsnn {command}: interrupted after {done} of {total} cases; {held} those {done} "
            "(a case under way is not counted)")


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
            previous = read_json(target.read_text())
        except (OSError, UnicodeDecodeError, ValueError):
            previous = None
        if not (isinstance(previous, dict) and _RESULT_KEYS <= previous.keys()):
            raise ValueError(f"--json {path!r} exists and is not a results file of opsnn verify or compare, the "
                             "only file --json replaces (--json takes the path the results are written to, or - "
                             "for stdout); remove it or name another path")
    why = cannot_write(path)
    if why:  # an I/O failure, not a usage error: the path may be right and its disk full or read-only
        raise OutputError("--json", path, why)


def cannot_write(path: str) -> str | None:
    """Why the file ``path`` cannot be written (the system's reason), or None: a write is tried,
    not judged from permission bits (``os.access`` tells root that /proc is writable), and a
    file made for the try is removed (none is left behind if the run then stops early): the file
    itself, where ``path`` is a symbolic link to a file not there yet, not the link (a breaker:
    a ``latest.json`` link was removed, an empty file left at its target)."""
    target = Path(path)
    existed = target.exists()
    made = Path(os.path.realpath(target))  # what the try makes where nothing is there (a link's target)
    try:
        with open(target, "a"):
            pass
    except OSError as exc:  # through a link, its target too: the folder missing may be the target's
        return f"{exc.strerror} (a link to {str(made)!r})" if target.is_symlink() else exc.strerror
    if not existed:
        made.unlink(missing_ok=True)
    return None


def write_json(path: str, settings: dict, summary: dict, results: list[Result]) -> None:
    """The results file of ``--json PATH`` (``-``: stdout), of verify and ``opsnn compare``;
    ``OutputError`` (exit 1) where the system refuses it after ``check_writable`` passed (a disk
    filled during the run)."""
    document = {"settings": settings, "summary": summary,
                "cases": [dataclasses.asdict(r) for r in results]}
    text = strict_json(document, indent=1) + "\n"
    if path == "-":
        sys.stdout.write(text)
        return
    try:
        Path(path).write_text(text)
    except OSError as exc:
        raise OutputError("--json", path, exc) from None

