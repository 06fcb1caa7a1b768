"""The ``opsnn`` command: ``demo | run | verify | compare | tiling | bench | describe | list | cache``.

Exit status: 0 on success, 1 when an operator call or a verified or compared case fails (or host memory
runs out, or an output cannot be written: a file, ``cli_files.OutputError``, or stdout, a full disk,
``cli_stdout.StdoutError``; or ``cache`` could not remove a cache), 2 for usage errors (argparse, an unknown
operator name) and unreadable or malformed input files, 141 (128 + SIGPIPE, as for other command-line tools) when
the reader of stdout went away before the output ended (``opsnn ... | head``), 5 when ``verify`` or ``compare``
checked no case, each skipped or, for ``compare``, a dump that lists none (``results.exit_status``: pytest's status
for a run of no test), 130 (128 + SIGINT) when interrupted
(Ctrl-C: one line, no traceback; verify and compare still report the cases done). Operator statuses (161002, ...) are
printed, not used as exit codes: they do not fit in 0-255.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import importlib
import itertools
import math
import sys
import tempfile
import warnings

import numpy as np

from . import kernels, registry
from ._core import dtypes, memory, platform, settings
from ._core.checks import counted
from ._core.shape import MAX_DIM, broadcast_shape
from ._core.status import AclnnError
from .cli_args import (
    Once,
    Parser,
    ScalarWords,
    ShapeWords,
    add_soc_option,
    equals_hint,
    random_input,
)
from .cli_files import OutputError, remove_tree
from .cli_stdout import PipeConsole, run_writing_stdout
from .cli_words import dtype_list, int_at_least, numpy_dtype

# subcommand -> module providing add_arguments(parser) and run(args) -> int
_COMMANDS = {
    "demo": ("opsnn.demo", "run the ops-nn samples, then every out-of-place operator and dtype, checked and timed"),
    "run": ("opsnn.cli", "run one operator through the aclnn API on random inputs"),
    "verify": ("opsnn.verify", "run CANN system-test case files (ttk csv / atk json) against opsnn"),
    "compare": ("opsnn.compare", "check a board's results against the goldens of opsnn verify --dump"),
    "tiling": ("opsnn.cli", "show the op definition, infershape and tiling an NPU would use"),
    "bench": ("opsnn.bench", "benchmark against PyTorch and a memory-bandwidth reference"),
    "describe": ("opsnn.cli", "print an operator's spec: parameters, dtypes per SoC, checks"),
    "list": ("opsnn.cli", "list the operators"),
    "cache": ("opsnn.cli", "show the compiled-kernel cache; remove other versions' caches or all"),
}

# the commands that run kernels, refused up front where $OPSNN_BACKEND names no usable backend (as
# for an unknown $OPSNN_SOC); bench checks in its run, after setting the OpenMP variables that a
# backend loaded here would have been loaded without
_KERNEL_COMMANDS = ("demo", "run", "verify")  # (and tiling of an aclnn call, _aclnn_details: its host plan)
# the commands no SoC concerns, each with why: an unknown $OPSNN_SOC, which stops the others up front,
# does not stop them, and a --soc given to them, which they would ignore, is a usage error saying why
_SOC_FREE_COMMANDS = {
    "compare": "each case is judged as dumped, on the SoC its case.json names",
    "list": "it names every operator, the same on every SoC (`opsnn describe OP` shows each SoC's dtypes and the "
            "SoCs without the operator)",
    "cache": "the kernel cache is the same on every SoC (kernels are compiled per operator and dtype)",
}


class _Version(argparse.Action):
    """``--version``: opsnn's and its libraries' versions, read when asked (installed metadata,
    nothing imported), then exit 0."""

    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        from importlib import metadata

        from . import __version__

        def version(name: str) -> str:
            try:
                return metadata.version(name)
            except metadata.PackageNotFoundError:
                return "not installed"

        libraries = ", ".join(f"{name} {version(name)}" for name in ("numpy", "numba", "ml_dtypes", "torch"))
        # (argparse's writer: into a closed pipe, exit 141 as help and every command; print's
        # BrokenPipeError was a traceback, exit 1)
        parser._print_message(f"opsnn {__version__} (Python {sys.version.split()[0]}; {libraries})\n", sys.stdout)
        parser.exit()


def main(argv: list[str] | None = None) -> int:
    """The ``opsnn`` command; ``argv`` None reads ``sys.argv``, as the console script and
    ``python -m opsnn`` call it. There a warning raised while the command runs (a
    BackendFallbackWarning, an ``OPSNN_*`` byte count ignored) prints as one ``opsnn: warning:
    ...`` line: Python's form pointed at the launcher ('.../bin/opsnn:8: ... sys.exit(main())'),
    no line of the user's. Only the text changes (``warnings.formatwarning``): where and whether it
    prints stays Python's (a stderr that is closed or full drops it, a caller recording warnings
    still records them). A caller passing ``argv`` keeps its own warning format."""
    command_line = argv is None
    argv = sys.argv[1:] if argv is None else list(argv)
    before = warnings.formatwarning
    if command_line:
        warnings.formatwarning = _format_warning
    command = _command_word(argv)
    prog = f"opsnn{' ' + command if command else ''}"
    try:
        # stdout's reader gone (| head) or a full disk, in a command's output or its help alike
        return run_writing_stdout(prog, lambda: _main(argv))
    except KeyboardInterrupt:  # Ctrl-C, wherever it came (a command's import of numba included)
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130
    finally:
        warnings.formatwarning = before


def _command_word(argv: list[str]) -> str | None:
    """The command ``argv`` names: its first word that is a command's name, but for the value of
    an ``opsnn --soc`` before it (``--soc list run``: a SoC's word, checked as one, of run)."""
    soc = ("--s", "--so", "--soc")  # (argparse reads an option's unambiguous prefix as the option)
    return next((word for i, word in enumerate(argv) if word in _COMMANDS and not (i and argv[i - 1] in soc)), None)


def _format_warning(message, category, filename, lineno, line=None) -> str:
    """A warning as the command line prints it: 'opsnn: warning: ' and the message (opsnn's own
    begin 'opsnn: ', said once), the category named where it is not opsnn's."""
    text = str(message)
    if text.startswith("opsnn: "):
        text = text[len("opsnn: "):]
    else:  # another library's (numba's, torch's): its category says whose
        text = f"{category.__name__}: {text}"
    return f"opsnn: warning: {text}\n"


def _main(argv: list[str]) -> int:
    for stream in (sys.stdout, sys.stderr):
        # a character the stream cannot encode prints as ?, where it ended the command with
        # UnicodeEncodeError: in an ASCII or Latin-1 locale the µ of µs or the § of a spec
        # reference; in any locale the surrogates that hold the bytes of a file name that is
        # not UTF-8 (os.fsdecode: a Latin-1 café.json)
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="replace")
    parser = Parser(
        prog="opsnn", description="CANN ops-nn activation operators (aclnn API, tiling, kernels) on a CPU.",
        epilog="exit status: 0 success; 1 an operator call, a verified or compared case or a tiling check failed, "
               "or an output (a file, stdout) could not be written, or a cache the system keeps could not be removed; "
               "2 usage error or unreadable input file; 5 verify or compare checked no case (each skipped, or the "
               "dump lists none); "
               "130 interrupted (Ctrl-C); 141 stdout closed early (| head). "
               "`opsnn COMMAND -h` for a command's options.")
    # only the chosen command's module is imported (bench and verify pull in heavy libraries)
    chosen = _command_word(argv)
    # before a command no SoC concerns, any word is taken, to be refused below with the command's
    # reason: its choices had answered "choose from" with names refused then too, as after it
    add_soc_option(parser, checked=chosen not in _SOC_FREE_COMMANDS)
    parser.add_argument("--version", action=_Version, help="opsnn's version and its libraries' (for a bug report)")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    chosen_parser = None
    for name, (module_name, help_text) in _COMMANDS.items():
        sub = commands.add_parser(name, help=help_text, description=help_text)
        if name != chosen:
            continue
        chosen_parser = sub
        module = sys.modules[__name__] if module_name == __name__ else importlib.import_module(module_name)
        adder = getattr(module, f"_add_{name}_arguments", None) or module.add_arguments
        adder(sub)
        # every command takes --soc after its name too (verify and tiling define their own); compare's,
        # list's and cache's are hidden and refused below with their reason (_SOC_FREE_COMMANDS), any
        # value alike, a second too: a SoC's choices had answered "choose from", and Once's "give one
        # SoC", with names refused then too
        with contextlib.suppress(argparse.ArgumentError):
            if name in _SOC_FREE_COMMANDS:
                sub.add_argument("--soc", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
            else:
                add_soc_option(sub, default=argparse.SUPPRESS, help="emulated SoC, as `opsnn --soc` before the command")
        sub.set_defaults(handler=getattr(module, f"_run_{name}", None) or module.run)
    if not argv:  # a bare `opsnn`: the commands, not just "COMMAND is required"
        parser.print_help()
        return 2
    args, extra = parser.parse_known_args(argv)
    if extra:  # the command's own usage and, for another command's spelling, its own (not opsnn's)
        before = chosen is not None and extra[0] in argv and argv.index(extra[0]) < argv.index(chosen)  # opsnn's
        (parser if before or chosen_parser is None else chosen_parser).error(
            f"unrecognized arguments: {' '.join(extra)}"
            f"{'' if before else _spelling(args.command, extra, args, argv, chosen_parser)}")
    if args.command in _SOC_FREE_COMMANDS and args.soc is not None:  # (an empty one too)
        parser.error(f"--soc does not apply to {args.command}: {_SOC_FREE_COMMANDS[args.command]}")
    try:
        soc_free = args.command in _SOC_FREE_COMMANDS
        with contextlib.nullcontext() if soc_free else platform.use_soc(args.soc or platform.current().name):
            if args.command in _KERNEL_COMMANDS:
                kernels.for_command()
            return int(args.handler(args))  # (its output flushed by main's run_writing_stdout)
    except BrokenPipeError:  # (an OSError, but no input file's: main ends it with 141)
        raise
    except (AclnnError, OutputError) as exc:
        print(f"opsnn {args.command}: {exc}", file=sys.stderr)
        return 1
    except (OSError, ValueError) as exc:  # a missing or malformed file, an unknown operator, an impossible request
        print(f"opsnn {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except MemoryError as exc:
        print(f"opsnn {args.command}: out of host memory ({exc or 'allocation failed'})", file=sys.stderr)
        return 1


# options one command spells another way: the word the other command takes -> this one's
_SPELLINGS = {
    "run": {"--negative-slope": "--scalar SLOPE", "--min-val": "--scalar MIN MAX", "--max-val": "--scalar MIN MAX",
            "--shape2": "--grad-shape DIMS", "--json": "nothing: opsnn run prints text (opsnn tiling --json)"},
    "tiling": {"--scalar": "--negative-slope / --min-val / --max-val", "--grad-shape": "--shape2 DIMS (or a "
               "second --shape)", "--out-dtype": "a last --dtype (inputs, then the output)"},
}


def _spelling(command: str, extra: list[str], args, argv: list[str], parser) -> str:
    """What ``command`` calls the options of ``extra`` that another command takes (written
    whole, with ``=value``, or shortened, as argparse reads them), the option a misspelt one
    (``--shapes``) is likely to be, how to write an option of several words given with "="
    (``--shape=2 3``: "=" hands it "2" alone), and, where OP was read from a word after an unknown option
    (``run --shapes 2 3 leaky_relu_backward``: OP '2'), that it was."""
    known = _SPELLINGS.get(command, {})
    said = {}
    for word in extra:
        option = word.split("=", 1)[0]
        found = [key for key in known if option.startswith("--") and len(option) > 3 and key.startswith(option)]
        close = difflib.get_close_matches(option, parser._option_string_actions, n=1) \
            if option.startswith("--") else []
        if len(found) == 1:
            said.setdefault(found[0], f"{found[0]}: opsnn {command} takes {known[found[0]]}")
        elif close:
            said.setdefault(option, f"{option} is no option of opsnn {command}, did you mean {close[0]}?")
    for i, word in enumerate(argv):  # the words after --shape=2: "=" hands an option that one word
        option, equals, value = word.partition("=")
        rest = list(itertools.takewhile(lambda w: w in extra and not w.startswith("-"), argv[i + 1:]))
        if not (option.startswith("--") and equals and rest):
            continue
        action = parser._action_of(option)  # (as argparse reads a unique prefix of its name too)
        if action is not None and action.nargs in ("*", "+"):
            words = [value, *rest] if value else rest  # ("--shape= 3": 3 is the value, and ",3" no shape)
            said.setdefault(word, equals_hint(word, action.option_strings[0], words,
                                              getattr(action, "reads_commas", False)))
    op = getattr(args, "op", None)
    unknown = [argv.index(word) for word in extra if word.startswith("-") and word in argv]
    if op in argv and unknown and min(unknown) < argv.index(op):
        said["OP"] = (f"OP was read as {op!r}, the first word no option took: give the operator first, "
                      f"opsnn {command} OP [options]")
    return f" ({'; '.join(said.values())})" if said else ""


# ---- cache -------------------------------------------------------------------------------

def _add_cache_arguments(parser) -> None:
    what = parser.add_mutually_exclusive_group()
    what.add_argument("--prune", action="store_true",
                      help="remove the caches of other opsnn, numba or NumPy versions (this install never reads "
                           "them; another environment or checkout sharing the root may, and compiles again)")
    what.add_argument("--clear", action="store_true",
                      help="remove every kernel cache, this version's too (the next calls compile anew)")


def _run_cache(args) -> int:
    """The kernel cache (``kernel_cache.existing_cache_dir``: listing makes none) and the stale
    ones beside it; removes only directories named as kernel caches (``stale_cache_dirs``) and
    this version's own, never a symbolic link or anything else. Exit 1 when one could not be
    removed (each named, with the system's reason): a change the system refused, as an output
    it will not take, not a usage error (2)."""
    from .kernels import kernel_cache

    root = kernel_cache.cache_root()
    current = kernel_cache.existing_cache_dir()
    stale = kernel_cache.stale_cache_dirs()
    unusable = kernel_cache.root_problem()
    where = "" if current is None or current.parent == root else f" (a temporary directory: {root} {unusable})"
    if args.prune or args.clear:
        doomed = stale + ([current] if args.clear and current and not current.is_symlink() else [])
        freed, failed = {}, []
        for path in doomed:
            size = _tree_bytes(path)
            try:
                remove_tree(path, vanished_ok=True)  # (a concurrent --clear: removed, as asked)
                freed[path] = size
            except OSError as exc:
                failed.append(f"opsnn cache: could not remove {path}: {exc}")
        # the temporary directory is told apart (a breaker: it was counted "under" a root that was a file)
        elsewhere = freed.pop(current, None) if where else None
        print(f"removed {counted(len(freed), 'kernel cache directory', 'kernel cache directories')} "
              f"({_mib(sum(freed.values()))}) under {root}"
              + (f"; and this version's {current} ({_mib(elsewhere)})" if elsewhere is not None else ""))
        if args.clear and current and current.is_symlink():
            print(f"left {current}: a symbolic link (remove its target yourself)")
        for line in failed:
            print(line, file=sys.stderr)
        return 1 if failed else 0
    numba_version = kernel_cache.numba_version()
    versions = f"(this opsnn's, for numba {numba_version} and NumPy {np.__version__})"
    if numba_version is None:  # (a breaker: a traceback, --clear's too)
        print("kernel cache  none: numba is not installed, so this opsnn compiles nothing")
    elif current is None:
        try:
            where = f"under {root}" if kernel_cache.root_takes_cache() else \
                f"in {tempfile.gettempdir()} ({root} {unusable})"
        except OSError as exc:  # no temporary directory either: the numba backend does not load
            print(f"kernel cache  none: {kernel_cache.nowhere(exc)}; kernels run on the NumPy backend")
        else:
            print(f"kernel cache  none yet {versions}: the first call makes it {where}")
    else:
        modules = len(list(current.glob("k_*.py")))
        print(f"kernel cache  {current}{where}: {counted(modules, 'kernel module')}, "
              f"{_mib(_tree_bytes(current))} {versions}")
    if stale:
        print(f"other versions  {counted(len(stale), 'directory', 'directories')}, "
              f"{_mib(sum(_tree_bytes(p) for p in stale))} under {root} "
              f"(`opsnn cache --prune` removes {'it' if len(stale) == 1 else 'them'})")
    return 0


def _tree_bytes(path) -> int:
    """The bytes of the files under ``path``; a file another process removes meanwhile counts 0
    (a breaker: two `opsnn cache --clear` at once, one ended in a bare FileNotFoundError)."""
    total = 0
    for f in path.rglob("*"):
        with contextlib.suppress(OSError):
            total += f.stat().st_size if f.is_file() else 0
    return total


def _mib(nbytes: int) -> str:
    return f"{nbytes / (1 << 20):.1f} MiB"


# ---- list / describe ---------------------------------------------------------------------

# what run's and describe's OP takes (registry.resolve's names)
_OP_HELP = ("an operator of `opsnn list` by its aclnn name (aclnn prefix optional), Pythonic name or kernel op name, "
            "in any case (LeakyReluBackward, aclnnHardtanhBackward, leaky_relu_backward, hardtanh_grad)")


def _add_list_arguments(parser) -> None:
    del parser  # no options


def _run_list(args) -> int:
    """Each operator by its aclnn API, Pythonic function and kernel names (every command's OP
    takes any of them) and its formula."""
    for spec in registry.all_specs():
        print(f"{spec.api_name:<24} {spec.python_name:<20} kernel {spec.kernel_name:<15} {spec.formula}")
    return 0


def _add_describe_arguments(parser) -> None:
    parser.add_argument("op", help=_OP_HELP)


def _run_describe(args) -> int:
    spec = _spec_or_usage_error(args.op)
    print(f"{spec.api_name}GetWorkspaceSize / {spec.api_name}   (kernel op {spec.kernel_name})")
    print(f"  formula:    {spec.formula}")
    print(f"  source:     {spec.source}")
    # an in-place operator's one tensor is selfRef, written in place: no out (a new user's
    # breaker: describe listed an out that `opsnn run` then said the operator has not)
    written = "the result is written into selfRef" if spec.inplace else \
        f"out dtype/shape == self: {'yes' if spec.out_equals_self else 'no'}"
    print(f"  promotion:  {spec.promotion.value}; broadcast: {'yes' if spec.broadcast else 'no'}; {written}")
    print(f"  null check order: {', '.join(spec.call_name(spec.param(n)) for n in spec.null_order)}")
    emulated = platform.current_name()
    print(f"  parameters (* marks the emulated SoC, {emulated}; --soc picks another):")
    for p in spec.call_params:
        print(f"    {spec.call_name(p):<14} ({p.name}, {p.kind})")
        if p.dtypes is None:
            if p.name == "out":
                print("      must equal self's dtype" if spec.out_equals_self
                      else "      any dtype the result can be cast to (CanCast)")
            elif p.kind != "flag":
                print("      dtype not checked")
            continue
        for profile in platform.PROFILES.values():
            listed = ", ".join(dtypes.name(d) for d in p.dtypes.for_profile(profile))
            mark = "*" if profile.name == emulated else " "
            print(f"     {mark}{profile.name:<13} {listed}")
    if spec.extra_checks:
        print("  extra checks: " + ", ".join(c.__name__ for c in spec.extra_checks))
    if spec.unsupported_socs:
        print("  not supported on: " + ", ".join(sorted(spec.unsupported_socs)) + " (561003)")
    return 0


# ---- tiling (opsnn.tiling_cli), with the aclnn executor steps from the engine --------------

def _add_tiling_arguments(parser) -> None:
    from . import tiling_cli

    tiling_cli.add_arguments(parser)


def _run_tiling(args) -> int:
    from . import opdef, tiling_cli

    # a Pythonic name (hardtanh_backward, leaky_relu_): its aclnn API's tiling; a word past ASCII is
    # refused as every command's OP is, in registry.resolve's words (opdef.find refuses it too)
    if "_" in args.op or not args.op.isascii():
        try:
            spec = registry.resolve(args.op)
        except KeyError as exc:
            if args.op.isascii():  # refused as any name opdef.find reads (hardtanh__ had been told registry's
                opdef.find(args.op)  # 'did you mean hardtanh_?' and every operator, tilings it refuses too)
            raise ValueError(exc.args[0]) from None
        # a kernel op's name in snake case (hardtanh_grad) is the kernel op, as HardtanhGrad is: it
        # was its aclnn API's, which takes its tensors in another order (gradOutput, self) and runs phase 1
        typed = args.op.strip().lower()
        word = typed.replace("_", "")
        kernel = typed != spec.python_name and word.removeprefix("aclnn") == spec.kernel_name.lower() != spec.name.lower()
        # a kernel whose tiling opsnn does not model (ops-math's clip_by_value_v2) is refused for that,
        # whatever the prefix (dropping it, or naming its API, fails alike), in the words typed, as
        # opdef.find says a name it reads itself (aclnn_hardtanh had been refused as 'aclnnHardtanh')
        if not any(d.name == spec.kernel_name for d in opdef.OPDEFS):
            raise opdef.not_modelled(args.op, spec)
        if kernel and word.startswith("aclnn"):  # no such API, as aclnnHardtanhGrad, said in the words typed
            raise opdef.no_such_api(args.op.strip(), 6 if typed.startswith("aclnn_") else 5, spec.api_name)
        args.op = spec.kernel_name if kernel else spec.api_name
    return tiling_cli.run(args, aclnn_details=_aclnn_details)


def _aclnn_details(args, api: str, attrs: dict) -> dict:
    """The steps phase 1 of the aclnn call records for these shapes and dtypes (or its error),
    its scalars the tiled kernel's ``attrs`` (given, else the op definition's defaults), and the
    host plan opsnn's kernel walks for it here."""
    from . import engine, tiling_cli
    from ._core import reserved
    from ._core.status import AclnnError
    from ._core.tensor import ArrayTensor, DataLessTensor, aclScalar

    kernels.for_command()  # the host plan is the backend's: refused up front as run's is (a kernel op's tiling has none)
    spec = registry.get(api)
    shapes = tiling_cli.given_shapes(args)
    shapes = shapes * len(spec.inputs) if len(shapes) == 1 else shapes
    if any(d < 0 for shape in shapes for d in shape):
        return {"executorSteps": ["phase 1 not run: aclnn tensors have static shapes"]}
    kinds = list(args.dtype) * (len(spec.inputs) + 1) if len(args.dtype) == 1 else list(args.dtype)
    try:
        out_shape = np.broadcast_shapes(*shapes) if spec.broadcast else shapes[-1]
    except ValueError:  # not broadcastable: phase 1 reports it (161002)
        out_shape = shapes[-1]

    # Phase 1 and the host plan read metadata only (shapes, strides, dtypes, and for the out-overlap
    # check each storage's address range), so every tensor is described, not allocated
    # (reserved.described: addresses of its own, no byte committed): a call of any size runs the
    # very checks a small one does.
    def tensor(name, shape, kind):
        if len(shape) > MAX_DIM:  # phase 1's rank check refuses it (161002) before anything reads an address,
            # and NumPy holds at most 64 dims (a 65-d shape said "phase 1 not run here")
            return DataLessTensor(tuple(shape), kind, dtypes.name(kind))
        if not dtypes.holds_data(kind):  # (hifloat8, int4 ...: NumPy has no type) phase 1 refuses it, reading
            # none; its own bytes (a byte an element at least) are what the out-overlap check reads
            memory = reserved.described(shape, f"u{max(1, dtypes.BITS[kind] // 8)}")
            return DataLessTensor(tuple(shape), kind, dtypes.name(kind), memory)
        dtype = dtypes.to_numpy(kind)
        if name == "self" and args.transpose and len(shape) >= 2:  # the same shape, axes reversed in memory
            return ArrayTensor(reserved.described(shape[::-1], dtype).T)
        return ArrayTensor(reserved.described(shape, dtype))

    try:
        call = {p.name: tensor(p.name, tuple(shape), kind) for p, shape, kind in zip(spec.inputs, shapes, kinds)}
        # an in-place call writes into selfRef (registry.inplace_variant): no out of its own
        call["out"] = call["self"] if spec.inplace else tensor("out", tuple(out_shape), kinds[len(spec.inputs)])
    except MemoryError as exc:  # (reserved.described) past this host's address space
        return {"executorSteps": [(f"phase 1 not run here: its tensors cannot be described in this host's "
                                   f"address space ({exc})")]}
    for p in spec.params:
        if p.kind == "scalar":
            call[p.name] = aclScalar(attrs[p.name], dtypes.DataType.FLOAT)
        elif p.kind == "flag":
            call[p.name] = False
    try:
        executor = engine.plan(spec, call)
    except AclnnError as exc:
        return {"executorSteps": [f"phase 1 fails: {exc.status} {exc.message}"], "phase1Status": int(exc.status)}
    plan = executor.plan
    details = {"executorSteps": [f"workspace {plan.workspace_size} B", *plan.describe().splitlines()],
               "hostPlan": _host_launch_lines(executor)}
    unchanged = _untransposed(call["self"].array().shape) if args.transpose else None
    if unchanged:
        details["aclnnNote"] = unchanged
    kernel = next((step for step in plan.steps if step.kind == "Kernel"), None)
    if kernel is not None:  # what the kernel is handed after the executor's casts, kernel order
        slot_dtype = {slot.index: slot.dtype for slot in plan.slots}
        fed = [call[ref.tensor].dtype if ref.slot is None else slot_dtype[ref.slot] for ref in kernel.srcs]
        details["kernelDtypes"] = [d.name for d in (*fed, kernel.dtype)]
    return details


def _host_launch_lines(executor) -> list[str]:
    """How opsnn's compiled kernel would walk this call on this machine (the host plan), or
    why there is none (the NumPy backend, an empty tensor, a layout it runs step by step)."""
    impl = kernels.get()
    if not hasattr(impl, "host_launch"):
        return [f"none: the {impl.NAME} backend runs each step whole"]
    if not executor.plan.steps:
        return ["none: nothing to launch (empty tensor)"]
    arrays = {name: t.array() for name, t in executor.tensors.items()}
    out = arrays["out"]
    moved = impl.parallelism.moved_bytes(out, [a for name, a in arrays.items() if name != "out"])
    try:
        found = impl.host_launch(executor.plan, arrays)
    except impl.Fallback as exc:
        return [f"none: the steps run one by one ({exc})"]
    if found is None:
        return ["none: the steps run one by one (no fused compiled program)"]
    launch, threads, work = found
    first, *rest = launch.describe().removeprefix("host launch: ").splitlines()
    lines = [f"{threads} of {impl.get_num_threads()} threads ({moved} bytes moved): {first}", *rest]
    pool = impl.parallelism
    lo, hi = pool.PARALLEL_MIN_RANGE
    if impl.get_num_threads() > 1 and not pool.FORKED and (pool.PARALLEL_MIN_SET or lo <= work < hi):
        # the thread count then follows a threshold: one set by OPSNN_PARALLEL_MIN_BYTES, which
        # decides at any size, or one timed at the first launch in the range a measured one falls
        # in, so two runs of the same call can print different plans: say so, and what fixes it
        how = ("set by OPSNN_PARALLEL_MIN_BYTES" if pool.PARALLEL_MIN_SET
               else "measured in this process, so runs may differ; OPSNN_PARALLEL_MIN_BYTES fixes it")
        threshold = pool.parallel_min_bytes()  # (LIMIT: a set 'inf' or a huge value, the pool off)
        where = "never" if threshold >= settings.LIMIT else f"from {threshold} bytes of work"
        lines.append(f"the pool {where}, this launch {work} ({how})")
    return lines


# ---- run ---------------------------------------------------------------------------------

_SCALAR_DEFAULTS = {"negative_slope": 0.01, "min_val": -1.0, "max_val": 1.0}


def _default_scalars(spec, input_dtypes: dict) -> list:
    """``opsnn run``'s scalars where --scalar gives none: ``_SCALAR_DEFAULTS``, but min 0 for an
    unsigned self, which cannot hold -1 (a new user's: ``opsnn run hardtanh --dtype uint8``, a
    dtype README lists, failed with its own defaults, 161002)."""
    unsigned = np.dtype(input_dtypes.get("self", np.float32)).kind == "u"
    return [0.0 if unsigned and p.name == "min_val" else _SCALAR_DEFAULTS[p.name] for p in spec.scalars]


def _add_run_arguments(parser) -> None:
    parser.add_argument("op", help=_OP_HELP)
    parser.add_argument("--shape", action=ShapeWords, nargs="*", default=(2, 3),
                        help="shape of self: 2 3, 2,3, 2x3 or [2, 3] (default 2 3; nothing or [] for 0-d)")
    parser.add_argument("--grad-shape", action=ShapeWords, nargs="*", help="shape of gradOutput (default: --shape)")
    # given twice, --dtype, --out-dtype and --seed are refused (Once), as --shape and --scalar are:
    # argparse kept the last silently, and --dtype f16 --dtype f32 may mean one per input
    parser.add_argument("--dtype", default=(np.dtype(np.float32),), type=dtype_list(numpy_dtype),
                        metavar="DTYPE[,DTYPE]", action=Once, hint="give one, or one per input in one: --dtype f16,f32",
                        help="float32 | float16 | bfloat16 | float64 | int32 ... (f32, bf16, i8 ... too, short names "
                             "in bits; default float32) for every input, or one per input in the API's order "
                             "(gradOutput,self)")
    parser.add_argument("--out-dtype", type=numpy_dtype, action=Once,
                        help="dtype of out (default: the one phase 1 would allocate: the inputs' promoted "
                             "dtype, or self's where the operator keeps it)")
    parser.add_argument("--transpose", action="store_true", help="pass self as a transposed (strided) view")
    parser.add_argument("--scalar", nargs="+", action=ScalarWords,
                        help="scalar arguments in the API's order, by spaces or commas: an int travels as "
                             "ACL_INT64, true / false as ACL_BOOL, others as ACL_DOUBLE, as in the Pythonic "
                             "API (default: slope 0.01; min -1 max 1, min 0 for an unsigned self)")
    parser.add_argument("--self-is-result", action="store_true", help="selfIsResult (LeakyReluBackward)")
    parser.add_argument("--seed", type=int_at_least(0), default=0, action=Once,
                        help="seed of the random inputs (default 0)")


def _run_run(args) -> int:
    """One aclnn call on random inputs, as a CANN user writes it; prints status, workspace,
    steps and the comparison with the float64 reference."""
    from . import acl, aclnn
    from .functional import _as_scalar

    spec = _spec_or_usage_error(args.op)
    unused = _options_not_taken(spec, args)
    for option, why in unused:
        print(f"opsnn run: error: {option} does not apply to {spec.api_name}: {why}", file=sys.stderr)
    if unused:
        return 2
    console = PipeConsole(highlight=False, soft_wrap=True)
    rng = np.random.default_rng(args.seed)
    if len(args.dtype) not in (1, len(spec.inputs)):
        counts = "1 dtype" if len(spec.inputs) == 1 else f"1 or {len(spec.inputs)} dtypes"
        print(f"opsnn run: error: --dtype takes {counts} for {spec.api_name} "
              f"({','.join(p.api_name for p in spec.inputs)}); got {len(args.dtype)}", file=sys.stderr)
        return 2
    input_dtypes = dict(zip((p.name for p in spec.inputs), args.dtype * len(spec.inputs) if len(args.dtype) == 1
                            else args.dtype))
    scalars = args.scalar if args.scalar else _default_scalars(spec, input_dtypes)
    if len(scalars) != len(spec.scalars):
        names = " ".join(p.api_name for p in spec.scalars) or "none"
        print(f"opsnn run: error: {spec.api_name} takes {len(spec.scalars)} scalar(s) ({names}); "
              f"--scalar gave {len(scalars)}", file=sys.stderr)
        return 2
    # self takes --shape, any other input (gradOutput) --grad-shape, else --shape
    shapes = {p.name: tuple(args.shape if p.name == "self" or args.grad_shape is None else args.grad_shape)
              for p in spec.inputs}
    for p in spec.inputs:
        # NumPy's own refusal ("array is too big") names nothing
        refusal = memory.beyond_device(math.prod(shapes[p.name]) * np.dtype(input_dtypes[p.name]).itemsize,
                                       f"{p.api_name} of shape {list(shapes[p.name])}")
        if refusal:
            raise ValueError(refusal)
    what = ", ".join(f"{p.api_name} {list(shapes[p.name])}" for p in spec.inputs)
    refusal = memory.beyond_available(_run_host_bytes(shapes, input_dtypes, args.out_dtype),
                                      f"{spec.api_name} of {what}")
    if refusal:
        raise ValueError(refusal)
    host = {name: random_input(rng, shape, input_dtypes[name], 2 if name == "self" else 4)
            for name, shape in shapes.items()}
    unchanged = _untransposed(host["self"].shape) if args.transpose else None
    if unchanged:
        console.print(f"note: {unchanged}")
    elif args.transpose:
        host["self"] = np.ascontiguousarray(host["self"].T).T  # same values, strided layout
    out_shape, out_dtype = _phase1_out(spec, host, scalars, args.self_is_result)
    out_dtype = args.out_dtype or out_dtype

    owns_runtime = acl.init() == 0  # leave a runtime someone else initialised as it was
    acl.rt.set_device(0)
    stream, _ = acl.rt.create_stream()
    tensors = {name: _device_tensor(acl, array) for name, array in host.items()}
    if not spec.inplace:
        tensors["out"] = _device_tensor(acl, np.zeros(out_shape, dtype=out_dtype))
    # typed as the Pythonic API types them (ints ACL_INT64, floats ACL_DOUBLE, bools ACL_BOOL)
    typed = [_as_scalar(v, p.api_name) for v, p in zip(scalars, spec.scalars)]
    scalar_handles = [acl.create_scalar(s.value, s.dtype) for s in typed]
    workspace = None
    try:
        call = []
        for p in spec.call_params:
            if p.kind == "tensor":
                call.append(tensors[p.name][1])
            elif p.kind == "scalar":
                call.append(scalar_handles[spec.scalars.index(p)])
            else:
                call.append(args.self_is_result)
        size, executor, ret = getattr(aclnn, spec.api_name + "GetWorkspaceSize")(*call)
        console.print(f"{spec.api_name}GetWorkspaceSize: ret {int(ret)} ({_status_name(ret)})")
        if ret != 0:
            console.print(f"  {acl.get_recent_err_msg()}")
            return 1
        console.print(f"  workspace {size} bytes; steps:")
        for line in executor.plan.describe().splitlines():
            console.print(f"    {line}")
        workspace = acl.rt.malloc(size, acl.ACL_MEM_MALLOC_HUGE_FIRST)[0] if size else None
        ret = getattr(aclnn, spec.api_name)(workspace, size, executor, stream)
        ret = ret or acl.rt.synchronize_stream(stream)
        console.print(f"{spec.api_name}: ret {int(ret)} ({_status_name(ret)})")
        if ret != 0:
            console.print(f"  {acl.get_recent_err_msg()}")
            return 1
        result = _read_back(acl, *tensors["self" if spec.inplace else "out"])
    finally:  # the C sample's steps 6 and 7: destroy, free, reset
        for _, tensor, _ in tensors.values():
            acl.destroy_tensor(tensor)
        for handle in scalar_handles:
            acl.destroy_scalar(handle)
        for addr in [a for a, _, _ in tensors.values()] + ([workspace] if workspace else []):
            acl.rt.free(addr)
        acl.rt.destroy_stream(stream)
        acl.rt.reset_device(0)
        if owns_runtime:
            acl.finalize()
    expected = _reference(spec)(*host.values(), *(s.value for s in typed))
    golden = np.empty(expected.shape, dtype=result.dtype)
    dtypes.cast_into(golden, expected)
    exact = result.tobytes() == golden.tobytes()
    console.print(f"result vs float64 reference: {'bit-exact' if exact else '[red]MISMATCH[/red]'}")
    for p in spec.inputs:  # the random inputs too, so the result can be checked by hand
        console.print(f"{p.api_name}:")
        console.print(host[p.name])
    console.print("result:")
    console.print(result)
    return 0 if exact else 1


def _device_tensor(acl, host: np.ndarray):
    """Copy an array's storage to the device and describe it with its own strides.

    Returns ``(device_addr, aclTensor, host)``; a transposed view's storage is its C-ordered base.
    """
    storage = np.ascontiguousarray(host if host.flags.c_contiguous else host.T)
    addr, _ = acl.rt.malloc(max(storage.nbytes, 1), acl.ACL_MEM_MALLOC_HUGE_FIRST)
    if storage.nbytes:
        acl.rt.memcpy(addr, storage.nbytes, storage, storage.nbytes, acl.ACL_MEMCPY_HOST_TO_DEVICE)
    strides = [s // host.itemsize for s in host.strides]
    tensor = acl.create_tensor(list(host.shape), dtypes.from_numpy(host.dtype), strides, 0,
                               acl.ACL_FORMAT_ND, [storage.size], addr)
    return addr, tensor, host


def _read_back(acl, addr: int, tensor, host: np.ndarray) -> np.ndarray:
    """Copy a tensor made by ``_device_tensor`` back, in ``host``'s layout."""
    base = host if host.flags.c_contiguous else host.T
    storage = np.empty(base.shape, dtype=host.dtype)
    if storage.nbytes:  # (aclrtMemcpy refuses a count of 0)
        acl.rt.memcpy(storage, storage.nbytes, addr, storage.nbytes, acl.ACL_MEMCPY_DEVICE_TO_HOST)
    return storage if host.flags.c_contiguous else storage.T


def _options_not_taken(spec: registry.OpSpec, args) -> list[tuple[str, str]]:
    """(option, why) for each option given that the operator has no parameter for: dropping it
    silently would run another call than the one asked for."""
    unused = []
    if args.self_is_result and not any(p.kind == "flag" for p in spec.params):
        unused.append(("--self-is-result", "it has no selfIsResult parameter"))
    if args.grad_shape is not None and all(p.name == "self" for p in spec.inputs):
        unused.append(("--grad-shape", "it has no gradOutput tensor"))
    if args.out_dtype is not None and spec.inplace:
        unused.append(("--out-dtype", "it has no out tensor (the result is written to self)"))
    return unused


def _untransposed(shape: tuple[int, ...]) -> str | None:
    """Why ``--transpose`` changes nothing for a self of ``shape`` (opsnn run and opsnn tiling say
    it alike), None where it gives a strided self: with one dim past 1 at most (1 x 4), reversing
    the axes keeps the elements' order in memory, as a 1-d self is its own transpose."""
    if len(shape) < 2:
        return (f"--transpose leaves a {len(shape)}-d self as it is (its transpose is itself): give --shape two "
                "dims or more for a strided self")
    if sum(dim > 1 for dim in shape) < 2:
        return (f"--transpose leaves a self of shape {list(shape)} as it is (its transpose holds its elements in "
                "the same order): give --shape two dims past 1 for a strided self")
    return None


def _run_host_bytes(shapes: dict, input_dtypes: dict, out_dtype) -> int:
    """About the host memory ``opsnn run`` touches for inputs of ``shapes`` (by name): each input
    and the result three times (host array, device copy, the copy back or the reference's cast)
    and ~32 bytes an element of the float64 reference (measured peaks at 2e6 elements: 16-88
    bytes an element, this estimate above each). The result has the inputs' broadcast shape (the
    largest input's size where they do not broadcast: phase 1 refuses them), in the widest dtype
    given."""
    sizes = {name: math.prod(shape) for name, shape in shapes.items()}
    widest = max([np.dtype(d).itemsize for d in input_dtypes.values()]
                 + ([np.dtype(out_dtype).itemsize] if out_dtype else []))
    result = ()  # (the broadcast of no shape)
    for shape in shapes.values():
        result = None if result is None else broadcast_shape(result, shape)
    elements = max(sizes.values()) if result is None else math.prod(result)
    return (3 * sum(sizes[name] * np.dtype(d).itemsize for name, d in input_dtypes.items())
            + elements * (3 * widest + 32))


def _phase1_out(spec: registry.OpSpec, host: dict, scalars: list, self_is_result: bool) -> tuple:
    """The shape and dtype phase 1 gives the output it would allocate for these inputs
    (``engine.infer_output``: broadcast or self's shape, the promoted dtype or self's); self's
    where phase 1 refuses the call, which the call itself then reports."""
    from . import engine
    from .functional import _handles  # the Pythonic layer's handles over host arrays

    kwargs = {**host, **{p.name: v for p, v in zip(spec.scalars, scalars)},
              **{p.name: self_is_result for p in spec.params if p.kind == "flag"}}
    try:
        shape, dtype = engine.infer_output(spec, _handles(spec, kwargs)[0])
    except AclnnError:
        return host["self"].shape, host["self"].dtype
    return shape, dtypes.to_numpy(dtype)


def _reference(spec: registry.OpSpec):
    """The float64 golden of an operator in opsnn.reference, named as its Pythonic function (an
    in-place variant's is its operator's)."""
    from . import reference

    return getattr(reference, spec.python_name.removesuffix("_"))


def _status_name(code: int) -> str:
    from ._core.status import status_name

    return status_name(int(code))


def _spec_or_usage_error(name: str) -> registry.OpSpec:
    """The operator's spec by any name ``registry.resolve`` takes (its aclnn or kernel name in
    any case, or its Pythonic name), as ``opsnn tiling`` reads names in any case (a new user's:
    ``run leakyrelubackward`` was unknown); an unknown or ambiguous name is a usage error (exit
    2 in ``main``)."""
    try:
        return registry.resolve(name)
    except KeyError as exc:
        raise ValueError(exc.args[0]) from None



if __name__ == "__main__":
    sys.exit(main())
