"""``opsnn compare DIR``: check a board's results against the goldens ``opsnn verify --dump`` wrote.

A developer feeds each dumped case's inputs to the operator on a board and writes the result
into the case's folder as a raw file laid out as ``output.bin`` is (``ndarray.tofile``: C order,
little-endian, no header; case.json's ``output`` entry gives its dtype and shape). ``opsnn compare
DIR --output NAME`` reads that file (``golden_files.read_entry``: a missing file, or one of
another size, is that case's FAIL naming the file and the bytes expected and found) and judges it
as verify judged opsnn's own result: ``verify.comparison.compare`` at the tolerance case.json
records, then ``verify.comparison.verdict`` (PASS, FAIL, or DOC for a difference from a torch
golden that a documented decision explains). A FAIL names the first element outside the
tolerance (C order), its index and both values. A case dumped without a golden (its aclnn call,
or the torch golden, failed) is a SKIP giving the verdict recorded then; one whose case.json has
no golden beside another verdict (a PASS, DOC, a FAIL that compared a result, none) lost it, and
is damaged.

DIR is a dump root (its ``index.json`` lists the case folders), one case file's folder in it,
or one case folder. For the last two the dump's ``index.json`` beside the case file's folder,
where there is one, says which folders are the dump's: one it does not list (an earlier run's,
left there where that run's index was lost) is skipped, a stderr line naming it; without that
index, every folder there holding a case.json is compared, whichever run wrote it. The exit
status is 1 if any case fails, 5 if every case is a SKIP or the index lists none (of those
given: nothing compared, ``results.exit_status``; verify exited 5 too where it skipped each
case), else 0; a DIR that is none of
these, an index that lists folders outside DIR, and a case.json or golden file
that cannot be read as written, lacks a golden its verdict needs, or gives a complex golden
(verify dumps real results only, and ``compare`` judges those), or damaged scalars where the
golden is torch's (``_explain`` needs them), are usage errors (2): the dump itself is damaged,
and ``cli.main`` prints the ``GoldenFileError`` (a ValueError) naming file and field. Every case
folder is checked so (``read_case``: all but its files' data) before any case is judged, as
verify reads every case file before it runs one; such a run prints and writes nothing else (no
``--json``: a file at PATH is left as it was, as on a usage error of verify).
Ctrl-C reports the cases compared (tables, summary, ``--json`` with ``not_run``) and exits 130,
as verify does; one pressed while that report is written is held until it is out.
CANN publishes no such tool (its ST harness compares in memory); the layout is opsnn's.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import sys
import time
from pathlib import Path
from typing import NamedTuple

import numpy as np

from opsnn import golden_files
from opsnn import results as report
from opsnn._core import interrupts
from opsnn._core.checks import counted
from opsnn._core.dtypes import parse_name, to_numpy
from opsnn.cli_args import Once
from opsnn.cli_files import read_json
from opsnn.cli_stdout import PipeConsole
from opsnn.golden_files import GoldenFileError
from opsnn.results import FAIL, SKIP, Result
from opsnn.verify.bindings import OPS
from opsnn.verify.cases import (
    BIT_EXACT_SOURCES,
    TOLERANCE_SOURCES,
    Tolerance,
    dtype_label,
    is_tolerance,
    shape_label,
)
from opsnn.verify.comparison import compare, verdict
from opsnn.verify.inputs import python_number


@dataclasses.dataclass
class Checked(Result):
    """One case folder's outcome: verify's row (``file``, ``index``, ``name`` as case.json records
    them) and, for a FAIL, the first element outside the tolerance."""

    folder: str = ""
    first_index: list[int] | None = None  # (an empty list for a 0-d result)
    first_output: bool | int | float | None = None  # that element in the board's file
    first_golden: bool | int | float | None = None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``opsnn compare``, and its exit statuses (``--help``'s epilog)."""
    parser.epilog = ("exit status: 0 every case compared passed or differs as a decision documents (DOC), any "
                     "others skipped; 1 a case failed, or --json could not be written; 2 usage error: DIR no "
                     "dump, or a damaged case.json, golden or input file; "
                     f"{report.NOTHING_CHECKED} nothing compared: every case skipped (dumped without a golden), or "
                     "the dump lists no case (its verify run dumped none) or none of the case folders DIR holds; "
                     "130 interrupted (Ctrl-C: the cases compared are reported)")
    parser.add_argument("dir", metavar="DIR", type=report.path_argument,
                        help="a folder opsnn verify --dump wrote (its index.json lists the cases), one case file's "
                             "folder in it, or one case folder (those two: the case folders the dump's index.json "
                             "lists, others skipped and named; without that index, every one holding a case.json)")
    # given twice, these are refused (Once), as verify's: argparse kept the last silently
    parser.add_argument("--output", default="output.bin", type=_file_name, metavar="NAME", action=Once,
                        help="the file in each case folder holding the result to check, laid out as output.bin "
                             "(default output.bin: opsnn's own result; never the case's golden or an input file)")
    parser.add_argument("--json", dest="json_path", type=report.path_argument, default=None, metavar="PATH",
                        action=Once, help="also write machine-readable results to PATH (- for stdout, the tables "
                                          "then going to stderr); an existing PATH must be a results file of opsnn "
                                          "verify or compare; a usage error writes none")


def _file_name(text: str) -> str:
    if Path(text).name != text or text in ("", ".", ".."):
        raise argparse.ArgumentTypeError(f"expected a file name in each case folder (such as npu_output.bin), "
                                         f"got {text!r}")
    return text


def run(args: argparse.Namespace) -> int:
    """Run ``opsnn compare``; returns the exit status (1 if any case failed, 5 if every case was
    skipped or the dump lists none: ``results.exit_status``; else 0)."""
    console = PipeConsole(stderr=args.json_path == "-")  # (as verify's: --json - keeps stdout JSON)
    if not console.is_terminal:
        console.width = max(console.width, report.LOG_WIDTH)
    root = Path(args.dir)
    listing = case_folders(root)
    folders = listing.folders
    # every case folder checked before any is judged, as verify reads every case file first: a
    # damaged one is a usage error at once, not after the cases before it were compared for nothing
    cases = [read_case(folder) for folder in folders]
    for case in cases:
        _check_board_name(case, args.output)
    if args.json_path:  # never one of the dump's own files (a breaker: an empty golden.bin took the results)
        report.check_writable(args.json_path, [str(root / golden_files.INDEX),
                                               *(str(file) for f in folders if f.is_dir() for file in f.iterdir())])
    if listing.skipped:  # (once the dump is checked: a usage error prints nothing else)
        print(f"opsnn compare: {_skipped_line(root, listing)}", file=sys.stderr)
    start = time.perf_counter()
    results: list[Checked] = []
    try:  # Ctrl-C: the cases compared are reported, as verify reports its cases done
        for case in cases:
            results.append(check_case(case, args.output))
        interrupted = False
    except KeyboardInterrupt:
        interrupted = True
    # held while the report is written, as verify's (a press then would lose it); then 130
    with interrupts.held(reraise=False) as pressed:
        elapsed = time.perf_counter() - start
        groups: dict[Path, list[Checked]] = {}
        for folder, result in zip(folders, results):  # a table per case file of the dump, as verify prints them
            groups.setdefault(folder.parent, []).append(result)
        for parent, group in groups.items():
            console.print(report.table(parent, group))
        for line in report.failures(results):
            console.print(line, soft_wrap=True)
        summary = report.summary(results, elapsed)
        if interrupted:
            summary["not_run"] = len(folders) - len(results)
        dumped = _dumped([case.manifest for case in cases]) if cases else _index_settings(listing.settings)
        console.print(report.summary_line(summary, **dumped))
        if args.json_path:
            report.write_json(args.json_path, {"dir": str(root), "output": args.output, **dumped}, summary, results)
    if interrupted or pressed:
        print(report.interrupted_line("compare", len(results), len(folders), args.json_path), file=sys.stderr)
        return 130
    # a dump of no case (its verify run skipped each, or wrote none): nothing compared, the 5 that
    # verify exited with, not a usage error (a breaker: a script of verify, board, compare got 5, then 2)
    nothing = (f"{listing.index} lists none of the case folders given ({root})" if listing.skipped else
               f"{listing.index} lists no case folder: the verify run that wrote it dumped none (each case was "
               "skipped, or failed before its files were written: verify's table gave each reason)")
    return report.exit_status("compare", summary, nothing)


class Listing(NamedTuple):
    """The case folders ``opsnn compare DIR`` judges (``case_folders``)."""

    folders: list[Path]
    settings: object  # the index's settings as read (None where no index is read)
    index: Path | None  # the dump's index read, DIR's or the one beside a case file's folder
    skipped: list[Path]  # case folders under DIR that index does not list


def case_folders(root: Path) -> Listing:
    """The case folders of a dump root (its index.json, in order: none where it lists none, a
    dump of a verify run that wrote no case), of one case file's folder in it (its case folders,
    by their index prefix: the index's order), or ``root`` itself, a case folder; ValueError (a
    usage error) for a root that is none of these. With them, the index's ``settings`` as read
    (None where there is no index): a dump of no case is described by them alone. For a case
    file's folder or a case folder, the dump's index beside it (``DIR/index.json``), where there
    is one, says which are the dump's: those it does not list (an earlier run's, left there
    where that run's index was lost) are skipped; without it, every case folder there is read."""
    if not root.is_dir():
        raise ValueError(f"{root}: {'not a folder' if root.exists() else 'no such folder'}; expected a folder "
                         "opsnn verify --dump wrote, one case file's folder in it, or one case folder")
    index = root / golden_files.INDEX
    if index.exists():
        return Listing(*_listed(index, root), index, [])
    # one case folder, or one case file's folder of a dump (DIR/<file>/): its case folders, in their index order
    own = (root / "case.json").exists()
    found = [root] if own else sorted((f for f in root.iterdir() if (f / "case.json").is_file()), key=_index_order)
    nothing = ValueError(f"{root} holds neither {golden_files.INDEX} (a folder opsnn verify --dump DIR wrote), "
                         "case.json (one of its case folders) nor case folders (one case file's folder)")
    dump = root.resolve().parent.parent if own else root.resolve().parent
    if not (dump / golden_files.INDEX).exists():
        if not found:
            raise nothing
        return Listing(found, None, None, [])
    try:
        listed, settings = _listed(dump / golden_files.INDEX, dump)
    except ValueError:
        if not found:  # (a folder of no dump, beside an index.json of another program's)
            raise nothing from None
        raise
    parent = (root.parent if own else root).resolve()
    dumped = {f.resolve() for f in listed if f.resolve().parent == parent}
    if own:
        folders = [root] if root.resolve() in dumped else []
    else:  # (in the index's order; a listed folder without its case.json is the dump's, damaged: read_case says so,
        # as for compare DIR, where every folder listed here has lost it too: a breaker's was 'holds neither')
        folders = [root / f.name for f in listed if f.resolve() in dumped]
    if not found and not folders:
        raise nothing
    return Listing(folders, settings, dump / golden_files.INDEX, [f for f in found if f.resolve() not in dumped])


def _listed(index: Path, root: Path) -> tuple[list[Path], object]:
    """The case folders the dump's ``index`` (in ``root``) lists, in order, and its settings;
    ValueError where it cannot be read as one, or lists a folder outside ``root``."""
    try:
        document = read_json(index.read_text())
    except (OSError, ValueError) as exc:
        raise ValueError(f"{index}: cannot read it as a dump's index ({exc})") from None
    cases = document.get("cases") if isinstance(document, dict) else None
    if not isinstance(cases, list) or not all(isinstance(c, str) for c in cases):
        raise ValueError(f"{index}: expected an object whose 'cases' lists the case folders by path "
                         "(as opsnn verify --dump writes it)")
    folders = list({(root / case).resolve(): root / case for case in cases}.values())  # (listed twice: one case)
    outside = [str(f) for f in folders if not f.resolve().is_relative_to(root.resolve())]
    if outside:  # (as golden_files.probe, which reads only folders below the root)
        raise ValueError(f"{index} lists case folders outside {root}: {', '.join(outside)}; a dump's index lists "
                         "its own (opsnn verify --dump writes them below DIR)")
    return folders, document.get("settings")


def _skipped_line(root: Path, listing: Listing) -> str:
    """The line naming the case folders under ``root`` that the dump's index does not list."""
    count = len(listing.skipped)
    names = ", ".join(f.name for f in listing.skipped[:3]) + (f" and {count - 3} more" if count > 3 else "")
    where = root if listing.skipped != [root] else root.parent
    return (f"skipped {counted(count, 'case folder')} in {str(where)!r} that {str(listing.index)!r} "
            f"does not list (not written by the run that wrote it): {names}")


def _index_order(folder: Path) -> tuple:
    """A case folder's place among its file's: by its index prefix as a number (a name's order is
    the index order only up to 9999: ``golden_files.case_folder`` pads to 4 digits, not beyond),
    then by name; a folder without one last."""
    prefix = folder.name.split("_", 1)[0]
    return (0, int(prefix), folder.name) if prefix.isdecimal() else (1, 0, folder.name)


@dataclasses.dataclass(frozen=True)
class DumpedCase:
    """A case folder as its case.json describes it, checked (``read_case``) but for the data of
    its files, which ``check_case`` reads."""

    folder: Path
    manifest: dict
    inputs: dict[str, tuple[np.dtype, list[int]]]  # role -> the dtype and shape of its file
    tolerance: Tolerance | None  # None: dumped without a golden (its aclnn call failed), a SKIP
    scalars: dict | None  # a torch golden's case: its scalars (as verify handed them), to explain a difference


def read_case(folder: Path) -> DumpedCase:
    """A case folder's case.json read and checked with every file it names (their sizes, not
    their data): GoldenFileError (a usage error) for a damaged one, as the module's text says,
    and for the scalars of a torch golden's case (``_scalars``), which a difference needs."""
    manifest = golden_files.read_manifest(folder)
    inputs = {role: tuple(golden_files.checked_entry(folder, f"inputs.{role}", entry)[1:])
              for role, entry in manifest["inputs"].items()}
    if not golden_files.has_file(manifest, "golden"):
        _failed_call(folder, manifest)  # (raises where the golden was lost)
        return DumpedCase(folder, manifest, inputs, None, None)
    _, golden_dtype, golden_shape = golden_files.checked_entry(folder, "golden", manifest["golden"])
    if golden_dtype.kind == "c":  # (compared through float64, the imaginary parts were dropped: a breaker)
        raise GoldenFileError(f"{folder / 'case.json'}: golden.dtype is {manifest['golden']['dtype']!r}; opsnn compare "
                              "judges real results (floating point, integer or bool), as opsnn verify dumps them")
    dtype, shape = golden_files.entry_layout(folder, "output", manifest.get("output"))
    if (dtype, list(shape)) != (golden_dtype, list(golden_shape)):
        raise GoldenFileError(f"{folder / 'case.json'}: output is {dtype.name} {shape}, golden "
                              f"{golden_dtype.name} {list(golden_shape)}; expected the dtype and shape of both")
    return DumpedCase(folder, manifest, inputs, _tolerance(folder, manifest), _scalars(folder, manifest))


def _check_board_name(case: DumpedCase, name: str) -> None:
    """A usage error (ValueError) where ``--output NAME`` names a file the case was dumped with,
    its golden or an input: judged against the golden, it would pass or fail saying nothing of
    a board (a breaker: --output golden.bin was a green run of goldens against themselves)."""
    own = {entry.get("file"): f"its input {role}" for role, entry in case.manifest["inputs"].items()}
    if case.tolerance is not None:
        own[case.manifest["golden"]["file"]] = "its golden"
    if name in own:
        raise ValueError(f"--output {name} names {own[name]} in {case.folder}, not a board's result: write the "
                         "board's result to a file of its own (such as npu_output.bin) and name it")


def check_case(case: DumpedCase, name: str) -> Checked:
    """The file ``name`` of a case folder judged against its golden (see the module's text)."""
    folder, manifest = case.folder, case.manifest
    shapes = [shape for _, shape in case.inputs.values()]
    result = Checked(str(manifest.get("file", folder.parent)), manifest.get("index", 0),
                     str(manifest.get("name", folder.name)), str(manifest.get("aclnn", "")).removeprefix("aclnn"),
                     dtype_label(dtype for dtype, _ in case.inputs.values()), shape_label(shapes),
                     max((math.prod(s) for s in shapes), default=1), SKIP, folder=str(folder))
    tolerance = case.tolerance
    if tolerance is None:
        recorded = manifest["verdict"]  # (read_case checked it: _failed_call)
        result.reason = (f"no golden in {folder / 'case.json'}: the case failed before one was made when it was "
                         f"dumped (its verdict: {recorded['status']} {recorded.get('reason', '')})").rstrip()
        return result
    golden = golden_files.read_entry(folder, "golden", manifest["golden"])
    result.numel = max(result.numel, golden.size)
    try:
        board = golden_files.read_entry(folder, "output", manifest["output"], file=name)
    except GoldenFileError as exc:  # this board file: the case fails, and the others are still checked
        result.status, result.reason = FAIL, str(exc)
        return result
    comparison = compare(board, golden, tolerance)
    result.max_abs, result.max_rel = comparison.max_abs, comparison.max_rel
    result.bit_exact, result.mismatches = comparison.bit_exact, comparison.mismatches
    result.status, result.reason = verdict(comparison, tolerance,
                                           lambda: _explain(case, board, golden, comparison.differs))
    if result.status == FAIL:
        first = np.unravel_index(np.argmax(comparison.outside), comparison.outside.shape)
        result.first_index = [int(i) for i in first]
        result.first_output, result.first_golden = python_number(board[first]), python_number(golden[first])
        result.reason += (f"; the first at {result.first_index}: {result.first_output!r} in {folder / name}, "
                          f"golden {result.first_golden!r}")
    return result


def _failed_call(folder: Path, manifest: dict) -> dict:
    """The recorded verdict of a case folder without a golden: a FAIL that compared nothing (its
    aclnn call, or the torch golden, failed before a result was made), the one case verify
    --dump writes without a golden. GoldenFileError for any other: a PASS, DOC or compared FAIL
    was dumped with its golden, since lost, and a missing verdict cannot tell (a breaker: a PASS
    whose golden entry was deleted or nulled was reported as a SKIP, exit 0)."""
    recorded = manifest.get("verdict")
    if isinstance(recorded, dict) and recorded.get("status") == FAIL:
        if recorded.get("bit_exact") is None and recorded.get("mismatches") is None:
            return recorded
        verdict = f"its verdict is a FAIL that compared a result (mismatches: {json.dumps(recorded.get('mismatches'))})"
    elif isinstance(recorded, dict) and "status" in recorded:
        verdict = f"its verdict is {json.dumps(recorded['status'])}"
    else:
        verdict = "verdict is " + (json.dumps(recorded) if "verdict" in manifest else "missing")
    golden = f"golden is {json.dumps(manifest['golden'])}" if "golden" in manifest else "golden is missing"
    raise GoldenFileError(f"{folder / 'case.json'}: {golden}, with no file, yet {verdict}; verify --dump writes the "
                          "golden of every case whose aclnn call made a result, and leaves it out only beside a "
                          "FAIL verdict of a call that failed: expected a golden entry with file, dtype and shape")


def _tolerance(folder: Path, manifest: dict) -> Tolerance:
    entry = manifest.get("tolerance")
    values = [entry.get(key) for key in ("rtol", "atol", "source")] if isinstance(entry, dict) else [None] * 3
    if not all(map(is_tolerance, values[:2])) or values[2] not in TOLERANCE_SOURCES:
        raise GoldenFileError(f"{folder / 'case.json'}: tolerance is {json.dumps(entry)}; expected "
                              '{"rtol": R, "atol": A, "source": S} of non-negative finite numbers and S one of '
                              f"{', '.join(map(json.dumps, TOLERANCE_SOURCES))} (as verify --dump writes it: "
                              f"{' and '.join(map(json.dumps, BIT_EXACT_SOURCES))} compare bits, the others "
                              "within the bound)")
    return Tolerance(float(values[0]), float(values[1]), values[2])


def _scalars(folder: Path, manifest: dict) -> dict | None:
    """The scalars of a torch golden's case of a known operator, as verify handed them (NumPy
    scalars of their dtype), which ``_explain`` needs; GoldenFileError naming the field where
    case.json does not give them so; None for another golden (nothing to explain)."""
    binding = OPS.get(str(manifest.get("aclnn", "")).removeprefix("aclnn"))
    if binding is None or manifest["golden"].get("source") != "torch":
        return None
    recorded = manifest.get("scalars")
    try:
        return {role: to_numpy(parse_name(str(recorded[role]["dtype"]))).type(recorded[role]["value"])
                for role in binding.scalars}
    except (KeyError, TypeError, ValueError, OverflowError):
        raise GoldenFileError(f"{folder / 'case.json'}: scalars is {json.dumps(recorded)}; expected "
                              f"{binding.aclnn}'s {list(binding.scalars)}, each as "
                              '{"dtype": ..., "value": ...}') from None


def _explain(case: DumpedCase, board: np.ndarray, golden: np.ndarray, differs: np.ndarray) -> str | None:
    """The documented decision behind a difference from a torch golden, as verify finds it
    (``OpBinding.explain``, from the case's inputs and scalars); None for another golden."""
    if case.scalars is None:
        return None
    binding = OPS[str(case.manifest["aclnn"]).removeprefix("aclnn")]
    inputs = {role: golden_files.read_entry(case.folder, f"inputs.{role}", entry)
              for role, entry in case.manifest["inputs"].items()}
    return binding.explain(inputs, case.scalars, board, golden, differs)


def _index_settings(settings) -> dict:
    """What a dump of no case was made with, for the summary line and ``--json``: as its index's
    ``settings`` record them (each "not recorded" where they do not)."""
    values = [settings.get(key) if isinstance(settings, dict) else None for key in ("golden", "soc", "seed")]
    return {key: value if isinstance(value, (str, int)) else "not recorded"
            for key, value in zip(("golden", "soc", "seed"), values)}


def _dumped(manifests: list[dict]) -> dict:
    """What the dump was made with (the golden's source, the SoC, the seed), for the summary
    line and ``--json``: each as the case folders record it, or "mixed" where they differ."""
    def recorded(manifest: dict) -> tuple:
        golden = manifest.get("golden")
        source = golden.get("source", "not recorded") if isinstance(golden, dict) else "not recorded"
        return str(source), str(manifest.get("soc", "not recorded")), manifest.get("seed", "not recorded")
    columns = list(zip(*(recorded(m) for m in manifests)))
    values = [column[0] if len(set(map(repr, column))) == 1 else "mixed" for column in columns]
    seed = values[2] if not isinstance(values[2], float) or math.isfinite(values[2]) else str(values[2])
    return {"golden": values[0], "soc": values[1], "seed": seed}