"""``opsnn demo``: the ops-nn samples on the emulated runtime, then every out-of-place
operator and dtype through the Pythonic API (the in-place pair runs the forwards' kernels),
checked bit for bit against the float64 reference and timed. Exit 1 where a sample failed (its
C sample's message printed, the rest still run: on Ascend310B, whose list lacks
LeakyReluBackward, its sample's GetWorkspaceSize returns 561003) or a row of the table is not
bit-exact (its "NO" shown, as ``opsnn run`` exits 1 on a mismatch), else 0."""

from __future__ import annotations

import argparse
import functools
import importlib.util
import math
import statistics
import sys
import time

import numpy as np
from rich.table import Table
from rich.text import Text

from . import kernels, reference, registry
from ._core import dtypes, memory, platform
from ._core.extras import install_hint
from ._core.shape import MAX_DIM
from .cli_args import Once, ShapeWords, given_as, random_input
from .cli_stdout import PipeConsole
from .cli_words import int_at_least
from .functional import hardtanh, hardtanh_backward, leaky_relu, leaky_relu_backward
from .samples import hardtanh_backward as hardtanh_sample
from .samples import leaky_relu_backward as leaky_sample
from .samples.common import run_sample

DEMO_SHAPE = (256, 1024)  # elements per call in the timing table: 262 144
# timed calls per row of the table, at most: the median of as many is as steady as the timer gets,
# and a count with no top ran for ever (--repeat 100000000000000000000: a breaker's)
MAX_REPEAT = 10_000


def add_arguments(parser) -> None:
    # opsnn run's shape grammar, so that a bad or negative shape fails before the samples run
    parser.add_argument("--shape", action=ShapeWords, nargs="*", default=DEMO_SHAPE,
                        help="shape of the random inputs for the dtype table: 256 1024, 256,1024, 256x1024 or [256, 1024] "
                             "(default 256 1024; nothing or [] for 0-d)")
    # (Once: each noted as given, which --train refuses, and refused given twice)
    parser.add_argument("--repeat", type=int_at_least(1, MAX_REPEAT), default=20, action=Once,
                        help=f"timed calls per row, the median shown (default %(default)s, at most {MAX_REPEAT})")
    parser.add_argument("--seed", type=int_at_least(0), default=0, action=Once,
                        help="seed of the random inputs of the dtype table (default 0)")
    parser.add_argument("--train", nargs=argparse.REMAINDER, metavar="...",
                        help="instead: train the digits MLP with torch's and with opsnn's activations "
                             "and compare (needs the train extra, opsnn[train]; options after --train go to it, "
                             "e.g. --train --quick)")


def run(args) -> int:
    if args.train is not None:
        # the dtype table's options before --train would be dropped: `demo --seed 3 --train` trained
        # with seed 0 (the CLI breaker's); the training's own go after --train
        table = list(filter(None, (given_as(args, name) for name in ("shape", "repeat", "seed"))))
        if table:
            raise ValueError(f"{', '.join(table)}: {'an option' if len(table) == 1 else 'options'} of the dtype "
                             "table, which --train does not run; the "
                             "training takes its own after --train (--train --seed 3; --train --help lists them)")
        missing = [name for name in ("torch", "sklearn") if importlib.util.find_spec(name) is None]
        if missing:  # a one-line fix, not an ImportError traceback from deep inside
            print(f"opsnn demo --train: needs the train extra (torch 2.13.0 CPU, scikit-learn, matplotlib), "
                  f"missing {', '.join(missing)}: {install_hint('train')}", file=sys.stderr)
            return 2
        from .torch.train_demo import main as train_main

        return train_main(args.train, prog="opsnn demo --train")
    if len(args.shape) > MAX_DIM:  # every operator refuses it (161002): say so before the samples run
        raise ValueError(f"--shape {list(args.shape)} has {len(args.shape)} dims; aclnn tensors have at "
                         f"most {MAX_DIM}")
    # the widest dtype's inputs must fit, as opsnn run checks (NumPy's "array is too big" names nothing)
    refusal = (memory.beyond_device(math.prod(args.shape) * 8, f"a float64 input of shape {list(args.shape)}")
               or memory.beyond_available(math.prod(args.shape) * _TABLE_BYTES_PER_ELEMENT,
                                          f"the dtype table of shape {list(args.shape)}"))
    if refusal:
        raise ValueError(refusal)
    console = PipeConsole(highlight=False)
    profile = platform.current()
    console.print(f"[bold]opsnn demo[/bold] on the emulated {profile.name} ({profile.product_line})\n",
                  soft_wrap=True)
    failed = False
    for title, sample in (("aclnnLeakyReluBackward sample (test_aclnn_leaky_relu_backward)", leaky_sample),
                          ("aclnnHardtanhBackward sample (test_aclnn_hardtanh_grad)", hardtanh_sample)):
        # each line whole, as the C sample prints it (a narrow COLUMNS had folded "result[0] is: 2.000000"
        # in two, in a file too); the terminal wraps it
        console.print(f"[bold]{title}[/bold]", soft_wrap=True)
        # (a new user's: a failed sample had exited 0, where python -m opsnn.samples exits with its ret)
        failed = run_sample(sample.main, functools.partial(console.print, soft_wrap=True)) != 0 or failed
        console.print()
    # a first run on the numba backend compiles each kernel here (tens of seconds on 2 cores): say
    # so before the wait; the NumPy backend (numba missing, or OPSNN_BACKEND=numpy) compiles nothing
    compiles = (" (a first run compiles the kernels and caches them on disk: up to a minute)"
                if kernels.default_name() == "numba" else "")
    console.print(f"Every out-of-place operator and dtype through the Pythonic API{compiles} ...",
                  soft_wrap=True)  # (a pipe: one line)
    table, exact = _dtype_table(profile, args.shape, args.repeat, np.random.default_rng(args.seed))
    _print_table(console, table)
    # (the CLI breaker: a row of "NO" exited 0, the check's failure told to no script)
    return 1 if failed or not exact else 0


def _print_table(console, table: Table) -> None:
    """``table`` as a box where it fits the console's width, else one line a row, the columns
    aligned and separated by two spaces, printed whole for the terminal to wrap: rich fits a
    wider table by cutting its cells, and at COLUMNS=40 (a split pane) every operator and dtype
    read "Hard…", "DT_I…", at 20 the bit-exact column "…" (a new user's: the verdict gone)."""
    if console.measure(table, options=console.options.update_width(1 << 16)).maximum <= console.width:  # (unclamped)
        console.print(table)
        return
    columns = [[Text.from_markup(column.header), *map(Text.from_markup, column.cells)] for column in table.columns]
    widths = [max(cell.cell_len for cell in cells) for cells in columns]
    lines = [Text(table.title)] if table.title else []
    for row in zip(*columns):
        lines.append(Text("  ").join(Text(" " * (width - cell.cell_len)) + cell if column.justify == "right"
                                     else cell + " " * (width - cell.cell_len)
                                     for column, cell, width in zip(table.columns, row, widths)))
    lines += [Text(table.caption)] if table.caption else []
    console.print(Text("\n").join(lines), soft_wrap=True)


# host bytes the dtype table holds at once per element of --shape, at its float64 rows: two inputs,
# the result, the float64 reference and its intermediates, the timed out= (measured: 60 at 2e6
# elements). A shape within the device memory but not this host's was ended by the out-of-memory
# killer as the arrays filled (a new-user breaker: --shape 3000000000, exit 137, nothing said).
_TABLE_BYTES_PER_ELEMENT = 72

# operator -> (Pythonic function, reference, tensor inputs, scalar arguments) for the dtype table
_CALLS = {
    "LeakyReluBackward": (leaky_relu_backward, reference.leaky_relu_backward, 2, (0.01,)),
    "HardtanhBackward": (hardtanh_backward, reference.hardtanh_backward, 2, (-1.0, 1.0)),
    "LeakyRelu": (leaky_relu, reference.leaky_relu, 1, (0.01,)),
    "Hardtanh": (hardtanh, reference.hardtanh, 1, (-1.0, 1.0)),
}


# a row this many times slower than the table's median throughput was most likely waiting for a core
_SLOW = 5


def _slow_rows(rows: list[tuple]) -> set[int]:
    """The rows of ``(operator, dtype, exact, median, throughput, bytes moved)`` to star: under
    1/_SLOW of the median throughput where the launch could go to the thread pool, and so wait
    for its second thread, the cause the table's note gives. A launch on the calling thread alone
    (a few bytes, the NumPy backend) never waits so: a new user's ``--shape 4 --repeat 1`` had
    a 37 us row starred and blamed on a two-thread launch."""
    if not rows or kernels.default_name() != "numba":
        return set()
    from .kernels import parallelism  # (numba's: the numba backend is the one in use)

    typical = statistics.median(row[4] for row in rows)
    return {i for i, row in enumerate(rows) if row[4] * _SLOW < typical and parallelism.threads_for(row[5]) > 1}


def _dtype_table(profile, shape, repeat: int, rng) -> tuple[Table, bool]:
    """The table of every out-of-place operator and dtype the emulated SoC has, and whether every
    row is bit-exact."""
    rows, absent = [], []
    for name, (function, golden, n_inputs, scalars) in _CALLS.items():
        spec = registry.get(name)
        if profile.name in spec.unsupported_socs:
            absent.append(name)
            continue
        for dtype in spec.param("self").dtypes.for_profile(profile):
            np_dtype = dtypes.to_numpy(dtype)
            grad = random_input(rng, shape, np_dtype, 4)
            x = random_input(rng, shape, np_dtype, 2)
            inputs = (grad, x)[2 - n_inputs:]  # the forward operators take self only
            bounds = (0.0, 1.0) if np_dtype.kind == "u" and name == "Hardtanh" else scalars  # -1 has no uint8 value
            got = function(*inputs, *bounds)
            expected = golden(*inputs, *bounds)
            exact = got.dtype == expected.dtype and got.tobytes() == expected.tobytes()
            out = np.empty_like(got)
            for _ in range(2):  # untimed: a key's plan-cache entry is built at its second call (_fastpath)
                function(*inputs, *bounds, out=out)
            times = []
            for _ in range(repeat):
                start = time.perf_counter()
                function(*inputs, *bounds, out=out)
                times.append(time.perf_counter() - start)
            median = statistics.median(times)
            moved = (n_inputs + 1) * got.nbytes  # the inputs read, the output written
            rows.append((name, dtypes.name(dtype), exact, median, moved / median / 1e9, moved))
    slow = _slow_rows(rows)
    notes = []
    if slow:
        notes.append(f"* under 1/{_SLOW} of the median throughput: another process kept a core busy and a "
                     "two-thread launch waited for its second thread (README, Kernels: "
                     "OPSNN_PARALLEL_MIN_BYTES=1e18 keeps launches on one thread)")
    if absent:
        notes.append(f"not on {profile.name}'s product line (phase 1 returns 561003): {', '.join(absent)}")
    table = Table(title=f"Pythonic API on random {list(shape)} inputs vs the float64 reference",
                  caption="\n".join(notes) or None)
    for column in ("operator", "dtype", "bit-exact", "median time", "throughput"):
        table.add_column(column, justify="right" if column in ("median time", "throughput") else "left")
    for i, (name, dtype_name, exact, median, throughput, _) in enumerate(rows):
        table.add_row(name, dtype_name, "yes" if exact else "[red]NO[/red]",
                      f"{median * 1e6:,.0f} µs", f"{throughput:.2f} GB/s" + (" *" if i in slow else ""))
    return table, all(row[2] for row in rows)
