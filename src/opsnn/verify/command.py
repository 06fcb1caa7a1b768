"""The ``opsnn verify`` command: its options (``add_arguments``) and its run (``run``: the case
files read, the outputs checked before anything runs, every case run in order, the tables, the
summary, ``--json`` and the ``--dump`` index written, Ctrl-C still reporting the cases done),
and one case end to end (``verify_case``: why it is skipped, ``skip_reason``; its data made,
run, judged and dumped).

Separate from the pieces it drives so that what a run decides (a SKIP, a FAIL, the exit
status) is read in one place; ``opsnn.verify``'s docstring gives the whole picture.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import importlib.util
import math
import os
import stat
import sys
import time
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
)

from opsnn import golden_files, registry
from opsnn import results as report
from opsnn._core import interrupts, memory, platform
from opsnn._core.checks import counted
from opsnn._core.dtypes import DataType, from_numpy
from opsnn._core.extras import install_hint
from opsnn._core.status import Status
from opsnn.cli_args import SOC_ONCE, Once, soc_metavar
from opsnn.cli_files import OutputError, output_folder_refusal
from opsnn.cli_stdout import PipeConsole
from opsnn.cli_words import (
    decimal_word,
    expected_integer,
    int_at_least,
    misplaced_underscore,
    non_ascii,
    soc_name,
)
from opsnn.results import FAIL, SKIP, Result
from opsnn.verify.bindings import OPS, Arrays, OpBinding, Scalars
from opsnn.verify.casefiles import load_cases
from opsnn.verify.cases import _CASES_EXPECTED, Case, case_filter
from opsnn.verify.comparison import compare, verdict
from opsnn.verify.inputs import case_rng, generate, pick_scalar, python_number
from opsnn.verify.runtime import CaseError, Session, run_aclnn

# A case with more elements than this (its largest tensor) is skipped. Measured peak: ~80 B per
# element for fp64 (inputs and output on host and "device", float64 golden and comparison
# temporaries), so 1.2e8 elements stay near 10 GB, inside a 24 GiB machine, while the next case
# sizes in CANN's files (3.5e8 fp64 elements and up, ~28 GB) do not fit. With it the three
# backward files run 249 of their 260 cases in ~70 s on 2 cores; pass a smaller value for speed.
DEFAULT_MAX_ELEMENTS = 120_000_000
# That peak per element of a case's largest tensor, rounded up: a case below --max-elements that
# needs more than the host has available now is skipped too (Linux overcommits: its arrays were
# made and the out-of-memory killer ended the run as they filled, on a host smaller than 24 GiB
# or with a larger --max-elements)
CASE_BYTES_PER_ELEMENT = 80


# ---- one case, end to end -----------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Settings:
    """What a verify run was asked to do (also written to ``--json``)."""

    golden: str = "reference"
    seed: int = 0
    max_elements: int = DEFAULT_MAX_ELEMENTS
    soc: str = platform.DEFAULT_SOC
    dump: str | None = None  # a folder for each run case's tensors (opsnn.golden_files)


def skip_reason(case: Case, settings: Settings, session: Session) -> str | None:
    """Why a case is not run, or None."""
    if case.unsupported:
        return case.unsupported
    binding = OPS[case.op]
    if session.missing(binding):
        return f"operator not implemented: no {binding.aclnn} in opsnn.aclnn"
    if case.numel > settings.max_elements:
        return f"{case.numel:,} elements > --max-elements {settings.max_elements:,}"
    beyond = memory.beyond_available(case.numel * CASE_BYTES_PER_ELEMENT, f"the case ({case.numel:,} elements)")
    if beyond:
        return beyond
    unheld = _numpy_refusal(case)
    if unheld:
        return unheld
    return bf16_refusal(case, settings.soc)


def bf16_refusal(case: Case, soc: str) -> str | None:
    """Why ``soc``, whose dtype lists lack BF16, does not run a case made for a BF16-capable SoC,
    or None: its arguments whose BF16 those lists refuse (161002 from its aclnn call; the
    scalars' lists too, spec §3.2), or an ``ascend910B2`` name prefix (spec §9.1: such a case
    runs with the 910B lists). Such a case is another product line's, as a 561003 one is: its
    FAIL would say nothing of opsnn. Read from the OpSpecs' lists, so a BF16 argument the call
    does not check (LeakyRelu's slope, LeakyReluBackward's out) runs, as there the call does."""
    profile = platform.get_profile(soc)
    if profile.uses_910b_dtype_list:
        return None
    binding = OPS[case.op]
    spec = registry.get(binding.aclnn)
    params = dict(zip((*binding.tensors, *binding.scalars, "out"), (*spec.inputs, *spec.scalars, spec.output)))
    dtypes = {x.role: x.dtype for x in (*case.tensors, *case.scalars)} | {"out": case.out_dtype}
    refused = [role for role, param in params.items()  # in the aclnn call's order (a csv row's may differ)
               if from_numpy(dtypes[role]) == DataType.BF16 and param.dtypes
               and DataType.BF16 not in param.dtypes.for_profile(profile)]
    why = [f"{soc}'s dtype lists lack BF16, so its aclnn call refuses the BF16 {', '.join(refused)} (161002)"
           ] if refused else []
    if case.name.lower().startswith("ascend910b2"):
        why.append("its ascend910B2 name prefix marks it for the 910B dtype lists")
    capable = [p.name for p in platform.PROFILES.values() if p.uses_910b_dtype_list]
    return f"needs a BF16-capable SoC: {'; '.join(why)}; --soc {' / '.join(capable)} runs it" if why else None


def verify_case(case: Case, settings: Settings, session: Session) -> Result:
    """Generate, run, compare one case; never raises for a case-level problem. With ``--dump``
    the case's folder is emptied first (here, or by the probe where the earlier index lists it)
    and, where the case then writes none (skipped, or failed before its files), removed after
    (``_remove_emptied``)."""
    result = Result(case.file, case.index, case.name, case.op, case.dtype_label, case.shape_label,
                    case.numel, SKIP)
    other_soc = case.soc_series and settings.soc.lower() not in {s.lower() for s in case.soc_series}
    soc_note = f"soc_series names {', '.join(case.soc_series)}; run on {settings.soc} (--soc picks the SoC)"
    result.note = "; ".join(filter(None, (case.note, soc_note if other_soc else "")))
    emptied = None
    if settings.dump:  # whatever happens below, nothing an earlier run wrote stays as if current
        folder = _dump_folder(case, settings, session)
        # (one the probe emptied has no case.json left for clear to go by: it is the run's to remove too)
        probed = folder in session.dump_emptied
        session.dump_emptied.discard(folder)
        try:
            emptied = folder if golden_files.clear(folder, session.dump_foreign) or probed else None
        except OSError as exc:  # the case fails, as one whose files cannot be written; the run goes on
            _forget_written(folder, session)  # (emptied in part)
            result.status = FAIL
            result.reason = ("--dump: cannot empty the case's folder of an earlier run's files: "
                             f"{f'{exc.filename}: {exc.strerror}' if exc.filename else exc}")
            return result
        except BaseException:  # a Ctrl-C midway: emptied in part, so no longer the run's either
            _forget_written(folder, session)
            raise
    written = len(session.dump_written)
    try:
        _skip_or_run(case, settings, session, result)
    finally:  # (a Ctrl-C too)
        if emptied is not None and emptied not in session.dump_written[written:]:
            _forget_written(emptied, session)
            _remove_emptied(emptied, settings, result)
    return result


def _forget_written(folder: Path, session: Session) -> None:
    """Drop ``folder`` from the folders the index lists, emptied by its case and not written
    again: this run had written it before (a case file given twice, which ``_once`` now runs once;
    kept for any folder a run empties again), and a Ctrl-C or a failure
    before the files in its second run left it emptied yet listed (a regression breaker: opsnn
    compare then refused the dump)."""
    session.dump_written[:] = [done for done in session.dump_written if done != folder]


def _skip_or_run(case: Case, settings: Settings, session: Session, result: Result) -> None:
    """The case skipped (``skip_reason``) or run and judged, into ``result``."""
    reason = skip_reason(case, settings, session)
    if reason:
        result.reason = reason
        return
    start = time.perf_counter()
    try:
        _run_and_compare(case, settings, session, result)
    except CaseError as exc:
        elsewhere = _not_on_this_soc(case, settings, exc)
        result.status, result.reason = (SKIP, elsewhere) if elsewhere else (FAIL, str(exc))
    except Exception as exc:  # noqa: BLE001 - one broken case must not stop the run
        result.status, result.reason = FAIL, f"internal error: {type(exc).__name__}: {exc}"
    result.seconds = time.perf_counter() - start


def _remove_emptied(folder: Path, settings: Settings, result: Result) -> None:
    """Remove the case's ``folder``, emptied of an earlier run's files and not written again, and
    its case file's folder where nothing else is in it (``golden_files.remove_empty``: an empty
    folder of a skipped case had stayed, the leftovers breaker). Done after the case, never
    before it: removed and made again to be written, a case folder in a case file's folder that
    takes no new entry (read-only, its case folders writable) had failed its case. Where the
    system will not remove it, the case fails naming the folder and what it was."""
    try:
        golden_files.remove_empty(folder, Path(settings.dump))
    except OSError as exc:
        was = "was skipped" if result.status == SKIP else "failed"
        # the case file's folder, left empty, named as such (it had been called the case's folder)
        what = ("the case's folder, emptied of an earlier run's files" if exc.filename in (None, str(folder)) else
                "the case file's folder, left empty once the case's emptied folder went")
        result.status = FAIL
        result.reason = (f"--dump: cannot remove {what}: {exc.filename or folder}: {exc.strerror} "
                         f"(the case {was}: {result.reason})")


def _numpy_refusal(case: Case) -> str | None:
    """Why NumPy cannot hold a tensor of the case (an empty one whose other dims are huge,
    ``[2**63 - 1, 0]``: its bytes, counted without the 0, pass NumPy's limit), or None. Such a
    case is a SKIP, which verify, holding every tensor in NumPy, cannot run (it had been an
    "internal error" FAIL, though the aclnn API takes those tensors)."""
    for role, shape, dtype in [(t.role, t.shape, t.dtype) for t in case.tensors] + [("out", case.out_shape,
                                                                                  case.out_dtype)]:
        if math.prod(shape) == 0:
            try:
                np.empty(shape, dtype)
            except ValueError as exc:
                return f"NumPy cannot hold {role}'s empty shape {list(shape)} ({exc})"
    return None


def _not_on_this_soc(case: Case, settings: Settings, exc: CaseError) -> str | None:
    """Why the case is a SKIP where it failed only because the emulated SoC's product line has no
    kernel for the operator (561003 from phase 1, registry ``unsupported_socs``), else None: a
    case of another product line, as a bfloat16 case on a SoC without BF16 is. An empty case
    still runs there, as CANN's empty fast path comes before the kernel lookup."""
    binding = OPS[case.op]
    spec = registry.get(binding.aclnn)
    if exc.status != Status.ERR_INNER_FIND_KERNEL_ERROR or settings.soc not in spec.unsupported_socs:
        return None
    return (f"no {spec.kernel_name} kernel on {settings.soc}'s product line: "
            f"{binding.aclnn}GetWorkspaceSize returns {exc.status} there")


def _run_and_compare(case: Case, settings: Settings, session: Session, result: Result) -> None:
    binding = OPS[case.op]
    rng = case_rng(settings.seed, case)
    inputs = {t.role: generate(t.values, t.dtype, t.shape, rng) for t in case.tensors}
    scalars = {s.role: pick_scalar(s, rng) for s in case.scalars}
    ours = golden = None
    try:
        ours = run_aclnn(session, binding, case, inputs, scalars)
        if settings.golden == "torch":
            try:
                golden = np.asarray(binding.torch(inputs, scalars, dict(case.flags))).astype(case.out_dtype)
            except RuntimeError as exc:
                raise CaseError(f"the torch golden raised: {exc}") from None
        else:
            golden = binding.golden(inputs, scalars, case.out_dtype)
    except CaseError as exc:  # the folder holds what there is, and the verdict
        if settings.dump and not _not_on_this_soc(case, settings, exc):
            result.status, result.reason = FAIL, str(exc)
            _dump(case, settings, session, binding, inputs, scalars, golden, ours, result)
        raise
    comparison = compare(ours, golden, case.tolerance)
    result.max_abs, result.max_rel = comparison.max_abs, comparison.max_rel
    result.bit_exact, result.mismatches = comparison.bit_exact, comparison.mismatches
    explain = lambda: binding.explain(inputs, scalars, ours, golden, comparison.differs)  # noqa: E731
    result.status, result.reason = verdict(comparison, case.tolerance,
                                           explain if settings.golden == "torch" else lambda: None)
    if settings.dump:
        _dump(case, settings, session, binding, inputs, scalars, golden, ours, result)


def _dump(case: Case, settings: Settings, session: Session, binding: OpBinding, inputs: Arrays,
          scalars: Scalars, golden: np.ndarray | None, ours: np.ndarray | None, result: Result) -> None:
    """The case's tensors and what they mean, as ``opsnn.golden_files`` lays them out."""
    manifest = {"file": case.file, "index": case.index, "name": case.name, "aclnn": binding.aclnn,
                "soc": settings.soc, "seed": settings.seed,
                "scalars": {role: {"dtype": from_numpy(v.dtype).acl_name, "value": python_number(v)}
                            for role, v in scalars.items()},
                "flags": dict(case.flags), "golden": {"source": settings.golden},
                "formats": {**{t.role: t.format for t in case.tensors}, "output": case.out_format},
                "tolerance": dataclasses.asdict(case.tolerance),
                "verdict": {"status": result.status, "bit_exact": result.bit_exact,
                            "mismatches": result.mismatches, "reason": result.reason, "note": result.note}}
    folder = _dump_folder(case, settings, session)
    try:
        golden_files.write(folder, manifest, inputs, golden, ours)
    except OSError as exc:  # a full disk: the run fails (the folder was checked writable at its start)
        raise CaseError(f"--dump: cannot write the case's files: {exc}") from None
    session.dump_written.append(folder)


def _dump_folder(case: Case, settings: Settings, session: Session) -> Path:
    label = session.dump_labels.get(str(Path(case.file).resolve()), Path(case.file).name)
    return golden_files.case_folder(settings.dump, label, case.index, case.name)


# ---- CLI ----------------------------------------------------------------------------------------

_FLOAT64_MAX_EXPONENT = 308  # 1.8e308: the largest float64


def _positive_count(text: str) -> int:
    """``--max-elements``: a whole number, written as an integer or as 1.2e8 (a fraction was cut
    off unsaid: 1.9 ran as 1). Read exactly, as a Decimal (``decimal_word``): through a float,
    100.0000000000000001 was whole and 2**53 + 1 was 2**53. No number beyond float64's range (1e400), as before (its
    int would have as many digits as its exponent says), told that range; one not positive or not
    whole is told so at any size (-1e309, 0e309 and 1e-99999999999999999999 had been "expected a
    number", as if none). ASCII only (``non_ascii``: Decimal reads other scripts' digits, U+0661
    U+0660 U+0660 as 100), an underscore only between two digits (``misplaced_underscore``:
    Decimal reads _5 as 5)."""
    refused = f"expected a number of elements, got {text!r}"
    why = non_ascii(text.strip()) or misplaced_underscore(text)
    if why:
        raise argparse.ArgumentTypeError(f"{refused}: {why}")
    number = decimal_word(text)
    if number is None or not number.is_finite():
        raise argparse.ArgumentTypeError(refused)
    if number != number.to_integral_value():
        raise argparse.ArgumentTypeError(f"expected a whole number of elements, got {text!r}")
    if number < 1:
        raise argparse.ArgumentTypeError(f"{expected_integer(1)}, got {text!r}")
    if number.adjusted() > _FLOAT64_MAX_EXPONENT:  # (checked before int(), which builds every digit)
        raise argparse.ArgumentTypeError(f"{refused} (below 1e{_FLOAT64_MAX_EXPONENT + 1}: float64's range, far "
                                         "past any case's size)")
    return int(number)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``opsnn verify``, and its exit statuses (``--help``'s epilog)."""
    parser.epilog = ("exit status: 0 every case run passed or differs as a decision documents (DOC), any others "
                     "skipped; 1 a case failed, or --json or --dump could not be written; 2 usage error or a "
                     f"malformed case file; {report.NOTHING_CHECKED} every case skipped (nothing verified); "
                     "130 interrupted (Ctrl-C: the cases done are reported)")
    parser.add_argument("files", nargs="+", metavar="FILE",
                        help="case files: kernel ST .csv (ttk_kernel_*) or aclnn ST .json (atk_aclnn*)")
    # given twice, these are refused (Once): argparse kept the last silently (--cases 0 --cases 5-6
    # ran only 5-6: a breaker's)
    parser.add_argument("--golden", choices=("reference", "torch"), default="reference", action=Once,
                        help="compare with opsnn.reference (default) or torch.ops.aten like CANN's harness")
    parser.add_argument("--max-elements", type=_positive_count, default=DEFAULT_MAX_ELEMENTS, action=Once,
                        help=f"skip cases whose largest tensor has more elements (default {DEFAULT_MAX_ELEMENTS}, "
                             "sized for a 24 GiB / 2-core machine)")
    # SUPPRESS: no default of its own, so a top-level ``opsnn --soc X verify ...`` is not overwritten
    parser.add_argument("--soc", default=argparse.SUPPRESS, action=Once, hint=SOC_ONCE, check=soc_name,
                        metavar=soc_metavar(),
                        help=f"emulated SoC for phase 1 (default: the current one, {platform.DEFAULT_SOC} unless set)")
    parser.add_argument("--seed", type=int_at_least(0), default=0, action=Once,
                        help="seed of the input data (default 0)")
    parser.add_argument("--cases", type=case_filter, default=None, action=Once,
                        hint="give every selection in one, by commas: --cases 0,5-6",
                        help=f"select cases: {_CASES_EXPECTED}; each must match a case")
    parser.add_argument("--json", dest="json_path", type=report.path_argument, default=None, metavar="PATH",
                        action=Once, help="also write machine-readable results to PATH (- for stdout, the tables "
                             "then going to stderr); an existing PATH must be such a results file; a usage error "
                             "writes none")
    parser.add_argument("--dump", type=report.path_argument, default=None, metavar="DIR", action=Once,
                        help="also write each run case's inputs, golden and output as raw .bin files "
                             "(ndarray.tofile, as CANN's gen_data.py) with a case.json, under "
                             "DIR/<file>/<index>_<name>/ (a rerun empties those folders, a board's files too)")


def run(args: argparse.Namespace) -> int:
    """Run ``opsnn verify``; returns the exit status (1 if any case failed or the dump's index could
    not be written, 5 if every case was skipped: ``results.exit_status``; 130 after Ctrl-C, which
    still reports the cases done; else 0)."""
    # with --json -, stdout holds the JSON alone and the tables go to stderr
    console = PipeConsole(stderr=args.json_path == "-")
    if not console.is_terminal:  # a log or pipe: wide enough that every row stays on one line
        console.width = max(console.width, report.LOG_WIDTH)
    if args.golden == "torch" and importlib.util.find_spec("torch") is None:  # before running anything
        raise ValueError(f"--golden torch needs PyTorch: {install_hint('torch')}")
    # `is not None`: an empty --soc (an unset "$SOC") is an unknown name, not "no --soc"
    soc = getattr(args, "soc", None)
    profile = platform.current() if soc is None else platform.get_profile(soc)
    settings = Settings(args.golden, args.seed, args.max_elements, profile.name, args.dump)
    files = [(path, load_cases(path)) for path in _once(args.files)]
    if args.cases:
        every = [c for _, cases in files for c in cases]
        args.cases = args.cases.against(every)
        args.cases.check_matches(every)
        files = [(path, [c for c in cases if args.cases(c)]) for path, cases in files]
    # the outputs are probed once the inputs have been read: a refused run leaves no folder behind
    labels = golden_files.file_labels([path for path, _ in files])
    # a --json PATH in a --dump DIR not there yet is checked once the probe has made DIR (the
    # refusal below suggests DIR/results.json: a regression breaker's first run failed on it)
    in_new_dump = bool(args.json_path and args.dump and args.json_path != "-" and not Path(args.dump).exists()
                       and Path(args.json_path).resolve().parent == Path(args.dump).resolve())
    if args.json_path:
        _check_json_beside_dump(args.json_path, args.dump,
                                {labels[str(Path(path).resolve())] for path, cases in files if cases})
        if not in_new_dump:
            report.check_writable(args.json_path, args.files)
    foreign: list[Path] = []  # what the dump's probe and cases removed that no dump wrote (a board's files)
    try:
        emptied = _probe(args, files, labels, foreign, in_new_dump) if args.dump else []
        start = time.perf_counter()
        with contextlib.ExitStack() as reporting:
            with platform.use_soc(settings.soc), Session() as session:
                session.dump_labels = labels
                session.dump_foreign = foreign  # (the same list: each case's clear appends to it)
                session.dump_emptied = set(emptied)
                per_file, interrupted = _run_all(files, settings, session, console)
                # held while the report is written (a breaker: a press as the index was written or
                # the tables printed lost the whole report, and the index); the run then ends with 130
                pressed = reporting.enter_context(interrupts.held(reraise=False))
                _remove_unreached(settings, session)
                index_error = _write_index(settings, session) if settings.dump else None
            results, total, summary = _report(args, console, settings, files, per_file, interrupted, index_error,
                                              time.perf_counter() - start)
    finally:  # after the table, or before the line of what ended the run (the probe's refusal, a
        # Ctrl-C, a full disk, a closed stdout): what went is said whatever happens (it went unsaid)
        if foreign:
            print(f"opsnn verify: {_foreign_line(args.dump, foreign)}", file=sys.stderr)
    if interrupted or pressed:
        print(report.interrupted_line("verify", len(results), total, args.json_path), file=sys.stderr)
        return 130
    return 1 if index_error else report.exit_status("verify", summary)


def _once(paths: list[str]) -> list[str]:
    """``paths``, each file once, with a stderr note per path that names one again: ``verify F F``
    (a glob and a name, ``cases/*.csv cases/x.csv``) ran F's cases twice, counted twice. A path
    that names no regular file is kept as given, with no note (``verify F ./F`` with no F had
    said F's cases run once before saying F is missing): its reader refuses it, saying why."""
    kept: list[str] = []
    first: dict[object, str] = {}
    for path in paths:
        key = _file_key(path)
        if key is None:
            kept.append(path)
        elif key in first:
            again = "given twice" if path == first[key] else f"the file {first[key]!r} again"
            print(f"opsnn verify: note: {path!r} is {again}; its cases run once", file=sys.stderr)
        else:
            first[key] = path
            kept.append(path)
    return kept


def _file_key(path: str) -> object:
    """The file ``path`` names, as ``_once`` compares them: its device and inode (a hard link to F
    is F, ./F and a symbolic link to F too), else, where the system gives no inode (0: some
    filesystems give it every file, which would make them one), resolved (file_labels' key);
    None where ``path`` names no regular file (none, a folder, a loop of links: the last had
    been a traceback here, from Path.resolve, before Python 3.13)."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISREG(found.st_mode):
        return None
    return (found.st_dev, found.st_ino) if found.st_ino else str(Path(path).resolve())


def _probe(args: argparse.Namespace, files, labels: dict[str, str], foreign: list[Path],
           in_new_dump: bool) -> list[Path]:
    """Check and make ``--dump DIR`` and empty the earlier run's case folders there
    (``golden_files.probe``, appending to ``foreign`` what no dump wrote); the run's own case
    folders it emptied, to be written in place. A folder the system will not make or write is
    an OutputError (exit 1); a --json PATH in a DIR made here is checked once DIR exists."""
    _check_dump_folders(args.dump, files, labels)
    refusal = output_folder_refusal("--dump", args.dump)
    if refusal:  # a misread option (usage); a folder the system will not make is an I/O failure
        raise ValueError(refusal)
    made = _missing_folders(args.dump)
    try:
        emptied = golden_files.probe(args.dump, foreign, _run_folders(args.dump, files, labels))
    except OSError as exc:
        raise OutputError("--dump", args.dump, exc, "into the folder") from None
    if in_new_dump:
        try:
            report.check_writable(args.json_path, args.files)
        except BaseException:  # refused: the folders made for the run go (none is left behind)
            for folder in made:
                with contextlib.suppress(OSError):
                    folder.rmdir()
            raise
    return emptied


def _report(args: argparse.Namespace, console: Console, settings: Settings, files, per_file: list[list[Result]],
            interrupted: bool, index_error: str | None, elapsed: float) -> tuple[list[Result], int, dict]:
    """Print the tables, the failures and the summary line, and write ``--json``; returns the
    results, the count of cases and the summary (``report.summary``)."""
    for (path, _), file_results in zip(files, per_file):  # (per file: a table of its rows)
        if file_results or not interrupted:
            console.print(report.table(path, file_results))
    results = [r for file_results in per_file for r in file_results]
    for line in report.failures(results):
        console.print(line, soft_wrap=True)
    summary = report.summary(results, elapsed)
    total = sum(len(cases) for _, cases in files)
    if interrupted:
        summary["not_run"] = total - len(results)
    console.print(report.summary_line(summary, settings.golden, settings.soc, settings.seed))
    if args.json_path:
        report.write_json(args.json_path, dataclasses.asdict(settings), summary, results)
    if index_error:  # after the results: a full disk at the end must not lose the run's table and --json
        print(f"opsnn verify: {index_error}", file=sys.stderr)
    return results, total, summary


def _run_folders(dump: str, files, labels: dict[str, str]) -> list[Path]:
    """The case folders the run's cases write (``_dump_folder``'s), to be emptied in place."""
    return [golden_files.case_folder(dump, labels[str(Path(path).resolve())], case.index, case.name)
            for path, cases in files for case in cases]


def _remove_unreached(settings: Settings, session: Session) -> None:
    """Remove the case folders the probe emptied whose case never ran (a Ctrl-C came first), as
    the probe would have removed them: no empty folder of the run is left behind. One the system
    will not remove stays, empty, which no index lists and compare does not read."""
    for folder in session.dump_emptied:
        with contextlib.suppress(OSError):
            golden_files.remove_empty(folder, Path(settings.dump))


def _foreign_line(dump: str, removed: list[Path]) -> str:
    """The line saying which files of the earlier run's case folders no --dump wrote (a
    board's) this run removed: a user's files go, but never unsaid."""
    root = Path(dump).resolve()
    shown = ", ".join(str(p.relative_to(root) if p.is_relative_to(root) else p)
                      for p in (path.resolve() for path in removed[:3]))
    more = f" and {len(removed) - 3} more" if len(removed) > 3 else ""
    return (f"--dump removed {counted(len(removed), 'entry', 'entries')} no --dump wrote from "
            f"the earlier run's case folders in {str(dump)!r}, computed from that run's inputs: "
            f"{shown}{more}")


def _check_dump_folders(dump: str, files, labels: dict[str, str]) -> None:
    """A usage error (ValueError) where a case file's folder of the dump, ``DIR/<file name>``,
    is a file: every case of it would fail to write ("Not a directory"), each reported FAIL (a
    breaker: ``--dump`` into the folder holding the case file, whose folder is the case file)."""
    for path, _ in files:
        folder = Path(dump) / labels[str(Path(path).resolve())]
        if folder.exists() and not folder.is_dir():
            what = "the case file itself (DIR is the folder holding it)" if folder.samefile(path) else "a file"
            raise ValueError(f"--dump: cannot write the cases of {path!r} into {str(folder)!r}: it is {what}, "
                             "not a folder; name another DIR (each case file's cases go to DIR/<file name>/)")


def _missing_folders(folder: str) -> list[Path]:
    """``folder`` and those of its parents not there yet, deepest first (what making it makes)."""
    missing = []
    for path in (Path(folder).absolute(), *Path(folder).absolute().parents):
        if path.exists() or path.is_symlink():
            break
        missing.append(path)
    return missing


def _check_json_beside_dump(json_path: str, dump: str | None, folders: set[str]) -> None:
    """A usage error (ValueError) where ``--json`` names a file among those ``--dump DIR``
    writes or empties: DIR's index (the results would replace it), a case file's folder of this
    run (``folders``, the labels of the files with cases to run: the run makes DIR/<label>/ there,
    and a regression breaker's results were lost at the end, 'Is a directory') or anything in one,
    or in a case file's folder the earlier run's index lists (the run empties and removes their
    case folders: a breaker's --json inside a case folder passed the pre-run check and was lost at
    the end). Any other path in DIR, beside the index or in a folder of the user's
    (``DIR/notes/r.json``), is no dump's and is written. Paths are compared resolved (links
    followed, as the files are written)."""
    if not dump or json_path == "-":
        return
    root, target = Path(dump).resolve(), Path(json_path).resolve()
    if not target.is_relative_to(root) or target == root:
        return
    earlier = []
    with contextlib.suppress(OSError, ValueError):  # (an index that cannot be read is the probe's to refuse)
        earlier = golden_files.earlier_index(Path(dump) / golden_files.INDEX)["cases"]
    listed = [(root / str(case)).resolve() for case in earlier]  # (as the probe finds them)
    dumped = {golden_files.INDEX, golden_files.PARTIAL_INDEX, *folders,
              *(path.relative_to(root).parts[0] for path in listed if path != root and path.is_relative_to(root))}
    if target.relative_to(root).parts[0] in dumped:
        raise ValueError(f"--json {json_path!r} lies among the files --dump {dump!r} writes (its {golden_files.INDEX} "
                         "and each case file's folder, DIR/<file name>, whose case folders a run empties and "
                         f"replaces); name a path elsewhere, such as {str(Path(dump) / 'results.json')!r}")


def _write_index(settings: Settings, session: Session) -> str | None:
    """Write the dump's index (``golden_files.write_index``); what went wrong, or None. A failure
    (a full disk) fails the run, as a case whose files cannot be written does, but is not a
    usage error: the results are still printed and written."""
    try:
        golden_files.write_index(settings.dump, dataclasses.asdict(settings), session.dump_written)
    except OSError as exc:
        failure = OutputError("--dump", Path(settings.dump) / golden_files.INDEX, exc, "the dump's index")
        return (f"{failure}; the case folders written stand without it (opsnn compare reads one case "
                f"file's folder, {str(Path(settings.dump) / '<file>')!r}, without an index)")
    return None


def _run_all(files, settings: Settings, session: Session,
             console: Console) -> tuple[list[list[Result]], bool]:
    """Every case of every file, run in order: the results of each file, and whether Ctrl-C
    stopped the run (the results then those of the cases done: a long run's report is kept)."""
    per_file = []
    total = sum(len(cases) for _, cases in files)
    columns = (TextColumn("[progress.description]{task.description}"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True) as progress:
        task = progress.add_task("verify", total=total)
        try:
            for _, cases in files:
                per_file.append([])
                for case in cases:
                    # (the column reads markup: the file's and case's names as written, escaped)
                    progress.update(task, description=escape(f"{Path(case.file).name} #{case.index} {case.name}"))
                    per_file[-1].append(verify_case(case, settings, session))
                    progress.advance(task)
        except KeyboardInterrupt:
            return per_file, True
    return per_file, False
