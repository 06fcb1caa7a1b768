"""``opsnn bench``: opsnn against PyTorch, a naive NumPy expression and a memory-bandwidth reference.

One run measures, side by side, for every operator (the backward pair and the forward pair), dtype,
size, thread count and layout:

* ``py_out`` / ``py_alloc``: the Pythonic API with ``out=`` / allocating its result;
* ``acl_fresh`` / ``acl_repeat``: the two-phase aclnn API (GetWorkspaceSize + launch +
  synchronize each call / one repeatable executor launched again and again);
* ``torch_out`` / ``torch_alloc``: ``torch.ops.aten.<op>.<out overload>`` / the allocating op;
* ``numpy``: the formula written as a NumPy expression;
* ``bandwidth``: a compiled numba kernel over the same number of full-size arrays (two read and
  one written for a backward op, one and one for a forward op), integer OR/copy only, split over
  the same threads with the same host plan: what the memory system allows.

Layouts: ``contiguous``; ``broadcast`` (grad (N, 1) with self (1, M); binary broadcasting ops
only); ``strided`` (self a transposed view, the rest dense); ``permuted`` (self a 3-D view with
its axes reversed, ``transpose(2, 1, 0)``, the rest dense: no two dims of it merge). Times are
medians of 5 samples (3 in ``--quick``), each a loop long enough to time; the methods of a row
take turns sample by sample, in a shuffled order each round, so an outside disturbance (or one
method's after-effects) hits them alike, and each loop starts
after one untimed call (the method before it left its own data in the caches). The spread
printed is the inter-quartile range (of ``--quick``'s 3 samples, ``statistics.quantiles`` gives
the extremes: there it is the whole range).
Ratios are speed ratios (other time / opsnn time: above 1 means opsnn is faster). Threads:
``numba.set_num_threads`` for opsnn, ``torch.set_num_threads`` for torch.

Writes ``bench.json``, ``bench.md`` (the headline ratios as markdown tables) and ``bench.png``
(throughput vs size, matplotlib Agg) to ``--out-dir``.
``--quick`` runs a small grid in seconds once its kernels are compiled (12 s on the 2-core VM of
BENCHMARKS.md; a minute or two the first time, while they compile into the disk cache); the test
suite uses it so this cannot rot.

OpenMP workers (numba's pool and torch's, two separate libgomp runtimes) sleep as soon as a
parallel region ends (``OMP_WAIT_POLICY=PASSIVE``, the default here), or, with ``--spin-count
N``, spin N times first (``GOMP_SPINCOUNT``; libgomp's own default spins for milliseconds, which on
a 2-core machine lets one library's idle workers stall the other's launches). Passive waiting
charges a wake-up to every 2-thread call (tens of microseconds on a VM, which is most of a
1e5-element call); a short spin keeps a library's pool awake between its back-to-back calls.
``pool_wait_env``: the variables each choice sets.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import math
import os
import platform as pyplatform
import random
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

import ml_dtypes
import numpy as np

from ._core import memory
from ._core.checks import counted
from ._core.extras import install_hint
from .cli_args import Distinct, Parser
from .cli_files import (
    OutputError,
    make_writable_folder,
    output_folder_refusal,
    strict_json,
)
from .cli_stdout import run_writing_stdout
from .cli_words import by_spaces, int_at_least, numpy_dtype

F32, F16, F64 = np.dtype(np.float32), np.dtype(np.float16), np.dtype(np.float64)
BF16 = np.dtype(ml_dtypes.bfloat16)
DTYPES = {"f32": F32, "f16": F16, "bf16": BF16, "f64": F64}
METHODS = ("py_out", "py_alloc", "acl_fresh", "acl_repeat", "torch_out", "torch_alloc", "numpy", "bandwidth")
LAYOUTS = ("contiguous", "broadcast", "strided", "permuted")
FULL_SIZES = (4, 10**4, 10**5, 10**6, 10**7, 10**8)
QUICK_SIZES = (4, 1024)
QUICK_DTYPES = ("f32", "bf16")
SLOPE = 0.01
BOUNDS = (-1.0, 1.0)
# the limit on the memory of an out= call beyond its inputs and output: recorded with the
# measurement (``peak_memory``), checked in the targets table, said in the run's summary
MEMORY_LIMIT_EXTRA_BYTES = 64 << 20


# ---- operators ---------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class OpBench:
    """How to call one operator every way the benchmark compares."""

    name: str
    inputs: tuple[str, ...]  # "grad"/"self" in the order the Python API takes them
    dtypes: tuple[str, ...]
    broadcast: bool

    def py_call(self, arrays, out=None):
        """A zero-argument callable: the Pythonic API (function bound once, like a user would)."""
        import opsnn

        fn = {"LeakyReluBackward": opsnn.leaky_relu_backward, "HardtanhBackward": opsnn.hardtanh_backward,
              "LeakyRelu": opsnn.leaky_relu, "Hardtanh": opsnn.hardtanh}[self.name]
        args = (*arrays, *self.scalar_values)
        if out is None:
            return lambda: fn(*args)
        return lambda: fn(*args, out=out)

    def torch_call(self, tensors, out=None):
        """A zero-argument callable: ``torch.ops.aten.<op>`` (allocating) or its out overload."""
        import torch

        aten = torch.ops.aten
        if self.name == "LeakyReluBackward":
            args = (*tensors, SLOPE, False)
            fn, fn_out, out_name = aten.leaky_relu_backward, aten.leaky_relu_backward.grad_input, "grad_input"
        elif self.name == "HardtanhBackward":
            args = (*tensors, *BOUNDS)
            fn, fn_out, out_name = aten.hardtanh_backward, aten.hardtanh_backward.grad_input, "grad_input"
        elif self.name == "LeakyRelu":
            args = (*tensors, SLOPE)
            fn, fn_out, out_name = aten.leaky_relu, aten.leaky_relu.out, "out"
        else:
            args = (*tensors, *BOUNDS)
            fn, fn_out, out_name = aten.hardtanh, aten.hardtanh.out, "out"
        if out is None:
            return lambda: fn(*args)
        kw = {out_name: out}
        return lambda: fn_out(*args, **kw)

    def numpy_call(self, arrays):
        """A zero-argument callable: the formula as a plain NumPy expression."""
        def call():
            with np.errstate(all="ignore"):
                if self.name == "LeakyReluBackward":
                    g, x = arrays
                    return np.where(x > 0, g, g * g.dtype.type(SLOPE))
                if self.name == "HardtanhBackward":
                    g, x = arrays
                    lo, hi = (x.dtype.type(b) for b in BOUNDS)
                    return np.where(((x > lo) & (x < hi)) | np.isnan(x), g, g.dtype.type(0))
                (x,) = arrays
                if self.name == "LeakyRelu":
                    return np.where(x > 0, x, x * x.dtype.type(SLOPE))
                return np.clip(x, *(x.dtype.type(b) for b in BOUNDS))
        return call

    def acl_phase1(self, aclnn, tensors, scalars, out):
        if self.name == "LeakyReluBackward":
            return aclnn.aclnnLeakyReluBackwardGetWorkspaceSize(*tensors, scalars[0], False, out)
        if self.name == "HardtanhBackward":
            return aclnn.aclnnHardtanhBackwardGetWorkspaceSize(*tensors, scalars[0], scalars[1], out)
        if self.name == "LeakyRelu":
            return aclnn.aclnnLeakyReluGetWorkspaceSize(*tensors, scalars[0], out)
        return aclnn.aclnnHardtanhGetWorkspaceSize(*tensors, scalars[0], scalars[1], out)

    def acl_phase2(self, aclnn):
        return getattr(aclnn, "aclnn" + self.name)

    @property
    def scalar_values(self):
        return (SLOPE,) if "Leaky" in self.name else BOUNDS


def available_ops() -> dict[str, OpBench]:
    """The operators the benchmark measures, by their registry names: the backward pair, then the
    forward pair."""
    return {"LeakyReluBackward": OpBench("LeakyReluBackward", ("grad", "self"), ("f32", "f16", "bf16", "f64"), True),
            "HardtanhBackward": OpBench("HardtanhBackward", ("grad", "self"), ("f32", "f16", "bf16"), False),
            "LeakyRelu": OpBench("LeakyRelu", ("self",), ("f32", "f16", "bf16", "f64"), False),
            "Hardtanh": OpBench("Hardtanh", ("self",), ("f32", "f16", "bf16", "f64"), False)}


# ---- data --------------------------------------------------------------------------------------

def factor(n: int) -> tuple[int, int]:
    """(rows, cols) with rows * cols == n, as square as powers of ten allow (4 -> (2, 2))."""
    rows = 10 ** (int(round(math.log10(n))) // 2) if n >= 10 else 1
    while n % rows:
        rows -= 1
    if n == 4:
        rows = 2
    return rows, n // rows


def factor3(n: int) -> tuple[int, int, int]:
    """A 3-D shape of ``n`` elements: a power of ten near the cube root, then ``factor`` of the rest
    (1e6 -> (100, 100, 100), 4 -> (1, 2, 2))."""
    first = 10 ** (int(round(math.log10(n))) // 3) if n >= 10 else 1
    while n % first:
        first -= 1
    return (first, *factor(n // first))


def make_inputs(op: OpBench, dtype: np.dtype, n: int, layout: str, rng) -> tuple[list, tuple[int, ...]]:
    """The operator's input arrays for ``layout`` and the output shape."""
    def fill(shape):
        return rng.standard_normal(shape, dtype=np.float32).astype(dtype)

    rows, cols = factor(n)
    if layout == "contiguous":
        return [fill((n,)) for _ in op.inputs], (n,)
    if layout == "broadcast":
        return [fill((rows, 1)), fill((1, cols))], (rows, cols)
    if layout == "permuted":
        shape = factor3(n)
        arrays = [fill(shape) for _ in op.inputs]
        arrays[-1] = fill(shape[::-1]).transpose(2, 1, 0)  # self: its axes reversed
        return arrays, shape
    arrays = [fill((rows, cols)) for _ in op.inputs]
    arrays[-1] = fill((cols, rows)).T  # self: a transposed view
    return arrays, (rows, cols)


def to_torch(a: np.ndarray):
    import torch

    if a.dtype == BF16:
        return torch.from_numpy(a.view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(a)


# ---- the bandwidth reference -------------------------------------------------------------------

_BW = {}

_BW_SOURCE = """
def read2_write1(out, a, b, n_blocks, block_former, numel):
    for blk in prange(n_blocks):
        start = blk * block_former
        stop = min(start + block_former, numel)
        for i in range(np.uint64(start), np.uint64(stop)):
            out[i] = a[i] | b[i]
    return 0


def read1_write1(out, a, n_blocks, block_former, numel):
    for blk in prange(n_blocks):
        start = blk * block_former
        stop = min(start + block_former, numel)
        for i in range(np.uint64(start), np.uint64(stop)):
            out[i] = a[i]
    return 0
"""


def _bandwidth_kernels():
    """(serial, parallel) versions of the two reference kernels, compiled like opsnn's walkers."""
    if not _BW:
        import numba

        from .kernels.numba_backend import guard_compiles

        env = {"np": np, "prange": numba.prange}
        exec(_BW_SOURCE, env)  # noqa: S102 - fixed source above
        for name in ("read2_write1", "read1_write1"):
            _BW[name] = tuple(guard_compiles(numba.njit(nogil=True, parallel=parallel)(env[name]))
                              for parallel in (False, True))
    return _BW


def bandwidth_call(n_inputs: int, dtype: np.dtype, n: int, threads: int):
    """The reference: the same number of full-size arrays, the same host plan and the same
    serial/parallel rule (``parallelism.use_parallel``) as opsnn's kernels; integer OR (two inputs) or copy."""
    from ._core.tiling import plan_host
    from .kernels import parallelism

    serial, parallel = _bandwidth_kernels()["read2_write1" if n_inputs == 2 else "read1_write1"]
    udt = np.dtype(f"u{dtype.itemsize}")
    arrays = [np.ones(n, udt) for _ in range(n_inputs + 1)]
    big = parallelism.use_parallel((n_inputs + 1) * n * dtype.itemsize)  # the bytes it moves
    plan = plan_host(n, dtype.itemsize, threads if big else 1)
    fn = parallel if big else serial
    return lambda: fn(*arrays, plan.n_blocks, plan.block_former, n)


# ---- the two-phase API -------------------------------------------------------------------------

class AclCase:
    """Device copies of one case's arrays, their aclTensors and scalars, a workspace."""

    _initialised = False

    def __init__(self, op: OpBench, arrays: list, out_shape, dtype):
        import opsnn.acl as acl
        from opsnn import aclnn

        self.acl, self.aclnn, self.op = acl, aclnn, op
        if not AclCase._initialised:
            acl.init()  # returns a "repeat" code when something else initialised it: fine
            acl.rt.set_device(0)
            AclCase._initialised = True
        self.allocs = []
        self.tensors = [self._tensor(a) for a in arrays]
        self.out = self._tensor(np.zeros(out_shape, dtype))
        self.scalars = [acl.create_scalar(v, acl.ACL_DOUBLE) for v in op.scalar_values]
        self.stream, _ = acl.rt.create_stream()
        self.ws_size = 0
        self.ws = None
        self.executors = []  # repeatable ones, one per thread count: each destroyed at close (a breaker)

    def _tensor(self, view: np.ndarray):
        acl = self.acl
        base = view
        while base.base is not None and isinstance(base.base, np.ndarray):
            base = base.base
        base = np.ascontiguousarray(base)
        nbytes = max(base.nbytes, 1)
        addr, _ = acl.rt.malloc(nbytes, acl.ACL_MEM_MALLOC_HUGE_FIRST)
        self.allocs.append(addr)
        if base.nbytes:  # (aclrtMemcpy refuses a count of 0)
            acl.rt.memcpy(addr, nbytes, base, base.nbytes, acl.ACL_MEMCPY_HOST_TO_DEVICE)
        from ._core import dtypes as dt

        strides = [s // view.itemsize for s in view.strides]
        offset = (view.__array_interface__["data"][0] - base.__array_interface__["data"][0]) // view.itemsize
        tensor = acl.create_tensor(list(view.shape), int(dt.from_numpy(view.dtype)), strides, offset,
                                   acl.ACL_FORMAT_ND, list(base.shape), addr)
        if tensor is None:
            raise RuntimeError(f"create_tensor failed: {acl.get_recent_err_msg()}")
        return tensor

    def _workspace(self, size):
        if size > self.ws_size:
            if self.ws:
                self.acl.rt.free(self.ws)
            self.ws, _ = self.acl.rt.malloc(size, self.acl.ACL_MEM_MALLOC_HUGE_FIRST)
            self.ws_size = size
        return self.ws if size else None

    def fresh(self):
        size, executor, ret = self.op.acl_phase1(self.aclnn, self.tensors, self.scalars, self.out)
        if ret:
            raise RuntimeError(f"phase 1 failed: {ret} {self.acl.get_recent_err_msg()}")
        ret = self.op.acl_phase2(self.aclnn)(self._workspace(size), size, executor, self.stream)
        ret = ret or self.acl.rt.synchronize_stream(self.stream)
        if ret:
            raise RuntimeError(f"launch failed: {ret} {self.acl.get_recent_err_msg()}")

    def repeatable(self):
        size, executor, ret = self.op.acl_phase1(self.aclnn, self.tensors, self.scalars, self.out)
        if ret:
            raise RuntimeError(f"phase 1 failed: {ret} {self.acl.get_recent_err_msg()}")
        self.aclnn.aclSetAclOpExecutorRepeatable(executor)
        ws = self._workspace(size)
        launch = self.op.acl_phase2(self.aclnn)
        stream, sync = self.stream, self.acl.rt.synchronize_stream

        def call():
            if launch(ws, size, executor, stream) or sync(stream):
                raise RuntimeError(f"launch failed: {self.acl.get_recent_err_msg()}")
        self.executors.append(executor)
        return call

    def close(self):
        acl = self.acl
        for executor in self.executors:
            self.aclnn.aclDestroyAclOpExecutor(executor)
        for t in self.tensors + [self.out]:
            acl.destroy_tensor(t)
        for s in self.scalars:
            acl.destroy_scalar(s)
        for addr in self.allocs + ([self.ws] if self.ws else []):
            acl.rt.free(addr)
        acl.rt.destroy_stream(self.stream)


# ---- timing ------------------------------------------------------------------------------------

@dataclasses.dataclass
class Timing:
    median: float
    q1: float
    q3: float
    best: float
    samples: int
    loops: int

    @property
    def spread(self) -> float:
        return self.q3 - self.q1


def measure(fns: dict, sample_seconds: float, samples: int) -> dict:
    """Per method, the median per-call seconds over ``samples`` samples of ``loops`` calls each,
    each sample after one untimed call of its own. The methods take turns sample by sample, so a
    disturbance from outside (another job on a shared machine) lands on every method of a row
    alike, not on one; and each round takes them in its own (seeded) shuffled order, so the
    after-effects of a method land on different ones from round to round: at 1e8 elements, after
    the NumPy expression (GBs of temporaries freed) and the bandwidth kernel, the next call ran
    1.2-1.7x slower, whichever method it was, and in a fixed order that was opsnn's `out=` call
    every round."""
    loops = {}
    for name, fn in fns.items():
        fn()
        one = math.inf
        for _ in range(3):  # the loop length from the fastest warm call: a cold one would give short loops
            t0 = time.perf_counter()
            fn()
            one = min(one, time.perf_counter() - t0)
            # a call of ten samples' length: one-call samples, without two more such calls (one
            # slow call alone had ended the sizing: the second call of a kernel just loaded took
            # ~1 ms, and a 2 us call was timed one call a sample under --quick: a breaker)
            if one >= 10 * sample_seconds:
                break
        loops[name] = max(1, int(sample_seconds / max(one, 1e-9)))
    per_call: dict = {name: [] for name in fns}
    for sample in range(samples):
        order = list(fns)
        random.Random(sample).shuffle(order)
        for name in order:
            fn = fns[name]
            # untimed: the method before this one left its own data in the caches, and the first
            # calls after it would time refilling them (for a data set that fits in them, ~1e6
            # elements: 2-3x slower calls at first). One-call samples too: a last-level cache of
            # hundreds of MiB (the Xeon VMs of BENCHMARKS.md) holds 1e7-element arrays, and without the
            # warm call a one-call method (a transposed float32 1e7 call: 9.2 ms after 1.2 GB of
            # other traffic, 7.1 ms the call after) was timed cold beside a two-call one (the
            # bandwidth kernel, 4.4 ms) timed warm
            fn()
            t0 = time.perf_counter()
            for _ in range(loops[name]):
                fn()
            per_call[name].append((time.perf_counter() - t0) / loops[name])
    return {name: _timing(sorted(values), samples, loops[name]) for name, values in per_call.items()}


def _timing(per_call: list, samples: int, loops: int) -> Timing:
    q = statistics.quantiles(per_call, n=4) if len(per_call) >= 2 else [per_call[0]] * 3
    return Timing(statistics.median(per_call), q[0], q[2], per_call[0], samples, loops)


def set_threads(n: int) -> None:
    import numba
    import torch

    numba.set_num_threads(min(n, numba.config.NUMBA_NUM_THREADS))
    torch.set_num_threads(n)


# ---- the run -----------------------------------------------------------------------------------

def machine_info() -> dict:
    info = {"nproc": os.cpu_count(), "python": sys.version.split()[0], "platform": pyplatform.platform()}
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                info["cpu"] = line.split(":", 1)[1].strip()
                break
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                info["memory_gib"] = round(int(line.split()[1]) / 2**20, 1)
    except OSError:
        pass
    import numba
    import torch
    from llvmlite import binding

    from .kernels import _numba_support, parallelism

    info.update(numpy=np.__version__, numba=numba.__version__, torch=torch.__version__,
                llvm_cpu=binding.get_host_cpu_name(), vector_bytes=_numba_support.VECTOR_BYTES,
                parallel_min_bytes=parallelism.parallel_min_bytes(),
                numba_threading_layer=_threading_layer(), OMP_WAIT_POLICY=os.environ.get("OMP_WAIT_POLICY"),
                GOMP_SPINCOUNT=os.environ.get("GOMP_SPINCOUNT"),
                OPSNN_PARALLEL_MIN_BYTES=os.environ.get("OPSNN_PARALLEL_MIN_BYTES"))
    return info


def _threading_layer() -> str:
    import numba

    try:
        return numba.threading_layer()
    except ValueError:
        return "not initialised"


def on_soc(op: OpBench, dname: str) -> bool:
    """Whether the emulated SoC runs ``op`` on ``dname`` (its product line has the operator, and
    its dtype list the dtype): ``opsnn --soc Ascend910 bench`` had stopped with a traceback at
    bfloat16 (a breaker)."""
    from . import registry
    from ._core import dtypes, platform

    spec = registry.get(op.name)
    profile = platform.current()
    return (profile.name not in spec.unsupported_socs
            and dtypes.from_numpy(DTYPES[dname]) in spec.param("self").dtypes.for_profile(profile))


def default_threads() -> tuple[int, ...]:
    """``--threads``' default: 1 and 2, as far as numba's pool has them (with NUMBA_NUM_THREADS=1
    the "2 threads" rows had timed one opsnn thread against two of torch's: a breaker)."""
    import numba

    return tuple(t for t in (1, 2) if t <= numba.config.NUMBA_NUM_THREADS)


def cells(args, op: OpBench) -> list[tuple[str, str, int]]:
    """``(dtype, layout, size)`` of every cell ``args`` asks of ``op``, in the order they run:
    the dtypes it has on the emulated SoC (``on_soc``), broadcast for the backward pair only, the
    forward ops up to ``--forward-max-size``, 1e8 for ``--max-large-dtypes`` only."""
    sizes = args.sizes or (QUICK_SIZES if args.quick else FULL_SIZES)
    dtypes = [d for d in (args.dtypes or (QUICK_DTYPES if args.quick else op.dtypes))
              if d in op.dtypes and on_soc(op, d)]
    return [(dname, layout, n) for dname in dtypes for layout in (args.layouts or LAYOUTS)
            if layout != "broadcast" or op.broadcast
            for n in sizes
            if not (args.max_large_dtypes is not None and n >= 10**8 and dname not in args.max_large_dtypes)
            and not (len(op.inputs) == 1 and n > args.forward_max_size)]


def cell_bytes(op: OpBench, dname: str, layout: str, n: int, methods) -> int:
    """About the host memory one cell holds at its peak, in bytes: its inputs and opsnn's out, then
    per method the arrays it adds, in arrays of the cell's dtype and n elements: the aclnn calls'
    device copies of the inputs and out, the NumPy expression's temporaries (1.5), the
    bandwidth kernel's own inputs and out, 2 more where several methods keep theirs beside each
    other, 1 more for a strided or permuted self. Measured (VmHWM, LeakyReluBackward float32,
    1e7 elements, one method at a time): 3.0 arrays for py_out, py_alloc, torch_out, torch_alloc;
    5.0 an acl method, 4.25 numpy, 5.15 bandwidth; 12.3 all of them, 13.0 strided; this is above each."""
    rows, cols = factor(n)
    inputs = (rows + cols) / n if layout == "broadcast" else len(op.inputs)
    arrays = inputs + 1
    if {"acl_fresh", "acl_repeat"} & set(methods):
        arrays += inputs + 1
    if "numpy" in methods:
        arrays += 1.5
    if "bandwidth" in methods:
        arrays += len(op.inputs) + 1
    arrays += (2 if len(methods) > 1 else 0) + (1 if layout in ("strided", "permuted") else 0)
    return math.ceil(arrays * DTYPES[dname].itemsize * n)


def check_selection(args) -> None:
    """Raise ValueError (a usage error) for a selection that would measure nothing for an operator
    named in ``--ops`` (or for every operator, when none is named), for a largest cell this
    host's available memory cannot hold (Linux overcommits: the out-of-memory killer ended a
    run of ``--sizes 3000000000`` as its arrays filled, exit 137, nothing said), or for more
    threads than numba's pool has (torch would take them, opsnn could not; ``thread_count`` refuses
    them as it reads them, where ``pool_threads`` knows the pool; both by ``thread_reader``)."""
    import numba

    ops = available_ops()
    empty = [name for name in (args.ops or ops) if not cells(args, ops[name])]
    if empty and (args.ops or len(empty) == len(ops)):
        name, op = empty[0], ops[empty[0]]
        from ._core import platform

        if args.dtypes and not set(args.dtypes) & set(op.dtypes):
            why = f"it has none of --dtypes {' '.join(args.dtypes)} (its dtypes: {' '.join(op.dtypes)})"
        elif not any(on_soc(op, d) for d in op.dtypes):
            why = f"the emulated {platform.current().name} has no kernel of it (opsnn describe {name})"
        elif args.dtypes and not any(on_soc(op, d) for d in args.dtypes):
            # (the CLI breaker: --soc Ascend910 --dtypes bf16 blamed the layouts and sizes)
            there = " ".join(d for d in op.dtypes if on_soc(op, d))
            why = (f"the emulated {platform.current().name} has no kernel of it for --dtypes {' '.join(args.dtypes)} "
                   f"(its dtypes there: {there}; opsnn describe {name})")
        elif args.max_large_dtypes is not None and args.sizes and min(args.sizes) >= 10**8:
            # (a breaker: the layouts and sizes were blamed)
            why = (f"--max-large-dtypes {' '.join(args.max_large_dtypes) or '(none)'} leaves none of its dtypes "
                   "at the 1e8 sizes asked for")
        else:
            why = ("the layouts and sizes asked for leave no cell (broadcast is the backward pair's; "
                   "the forward operators stop at --forward-max-size)")
        raise ValueError(f"nothing to measure for {name}: {why}")
    methods = args.methods or METHODS
    need, cell = max(((cell_bytes(ops[name], dname, layout, n, methods), f"{name} {dname} {layout} {n}")
                      for name in (args.ops or ops) for dname, layout, n in cells(args, ops[name])),
                     default=(0, ""))
    refusal = memory.beyond_available(need, f"the largest cell ({cell} elements)")
    if refusal:
        raise ValueError(refusal)
    read = thread_reader(numba.config.NUMBA_NUM_THREADS)
    try:
        for count in args.threads or ():
            read(str(count))
    except argparse.ArgumentTypeError as exc:  # (as argparse words a refusal of the word as read)
        raise ValueError(f"argument --threads: {exc}") from None


def run_grid(args) -> dict:
    import opsnn
    from ._core import outpool

    rng = np.random.default_rng(0)
    ops = available_ops()
    chosen_ops = [ops[name] for name in (args.ops or list(ops))]  # argparse checked the names
    threads = args.threads or default_threads()
    methods = args.methods or METHODS
    sample_s = 0.001 if args.quick else 0.01
    records = []
    started = time.perf_counter()
    for op in chosen_ops:
        for dname, layout, n in cells(args, op):
            dtype = DTYPES[dname]
            arrays, out_shape = make_inputs(op, dtype, n, layout, rng)
            out = np.empty(out_shape, dtype)
            tensors = [to_torch(a) for a in arrays]
            tout = to_torch(out)
            acl_case = AclCase(op, arrays, out_shape, dtype) if {"acl_fresh", "acl_repeat"} & set(methods) else None
            samples = 3 if args.quick else 5
            for th in threads:
                set_threads(th)
                calls = {
                    "py_out": op.py_call(arrays, out=out),
                    "py_alloc": op.py_call(arrays),
                    "torch_out": op.torch_call(tensors, out=tout),
                    "torch_alloc": op.torch_call(tensors),
                    "numpy": op.numpy_call(arrays),
                }
                if acl_case is not None:
                    calls["acl_fresh"] = acl_case.fresh
                    calls["acl_repeat"] = acl_case.repeatable()
                if "bandwidth" in methods:
                    calls["bandwidth"] = bandwidth_call(len(op.inputs), dtype, n, th)
                timed = {m: calls[m] for m in methods
                         # ml_dtypes/half ufuncs: seconds per call, skipped unless asked
                         if not (m == "numpy" and n >= 10**7 and dtype in (F16, BF16)
                                 and not args.slow_numpy)}
                row = measure(timed, sample_s, samples)
                for method, timing in row.items():
                    records.append({"op": op.name, "dtype": dname, "size": n, "shape": list(out_shape),
                                    "layout": layout, "threads": th, "method": method,
                                    **dataclasses.asdict(timing)})
                if not args.json_only:
                    print_row(op.name, dname, n, layout, th, row)
                if "bandwidth" in calls:
                    del calls["bandwidth"]
            if acl_case is not None:
                acl_case.close()
            del arrays, out, tensors, tout, calls
            outpool.clear()
            opsnn.engine.clear_plan_cache()
    memory = None
    if args.memory and on_soc(ops["LeakyReluBackward"], "f32"):
        memory = peak_memory(args)
    elif args.memory and not args.json_only:  # (a breaker: its refusal had lost the whole run)
        print("\nno peak-memory row: the emulated SoC has no float32 LeakyReluBackward kernel")
    return {"machine": machine_info(), "args": {k: v for k, v in vars(args).items() if k != "handler"},
            "elapsed_s": round(time.perf_counter() - started, 1), "results": records, "memory": memory}


_PRINTED = set()


def _fmt(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:.2f}us"
    if seconds < 1:
        return f"{seconds * 1e3:.2f}ms"
    return f"{seconds:.2f}s"


def print_row(op, dname, n, layout, th, row: dict) -> None:
    header = (op, dname, layout)
    if header not in _PRINTED:
        _PRINTED.add(header)
        cols = "".join(f"{m:>20}" for m in row)
        print(f"\n{op} {dname} {layout}  (median, +-IQR/2; speed ratios: other time / opsnn time)")
        print(f"{'size':>10} {'thr':>3}{cols}   {'vs torch_out':>12} {'alloc vs torch':>14} {'vs bandwidth':>12}")
    cells = "".join(f"{_fmt(t.median) + ' +-' + _fmt(t.spread / 2):>20}" for t in row.values())
    ratios = []
    for a, b in (("torch_out", "py_out"), ("torch_alloc", "py_alloc"), ("bandwidth", "py_out")):
        ratios.append(f"{row[a].median / row[b].median:.2f}x" if a in row and b in row else "-")
    print(f"{n:>10} {th:>3}{cells}   {ratios[0]:>12} {ratios[1]:>14} {ratios[2]:>12}")


def peak_memory(args) -> dict:
    """Extra memory of one 1e8-element (1e6 with --quick) float32 LeakyReluBackward call with out= (contiguous,
    strided and broadcast), beyond its inputs and output: tracemalloc peak (NumPy reports its
    allocations) and, where Linux allows resetting it, the RSS high-water mark."""
    n = 10**8 if not args.quick else 10**6
    rng = np.random.default_rng(1)
    op = available_ops()["LeakyReluBackward"]
    result = {"elements": n, "dtype": "f32", "limit_extra_bytes": MEMORY_LIMIT_EXTRA_BYTES}
    for layout in ("contiguous", "strided", "broadcast"):
        arrays, out_shape = make_inputs(op, F32, n, layout, rng)
        out = np.empty(out_shape, F32)
        call = op.py_call(arrays, out=out)
        call()  # warm: compile, plan cache
        rss_before = _proc_status_bytes("VmRSS")
        hwm_reset = _reset_hwm()
        tracemalloc.start()
        call()
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        hwm = _proc_status_bytes("VmHWM") if hwm_reset else None
        io_bytes = sum(a.nbytes for a in arrays) + out.nbytes
        result[layout] = {"io_bytes": io_bytes, "tracemalloc_peak_bytes": peak,
                          "rss_peak_extra_bytes": None if hwm is None else max(0, hwm - rss_before)}
        del arrays, out
    return result


def _proc_status_bytes(field: str) -> int:
    """A ``/proc/self/status`` memory field (``VmRSS``, ``VmHWM``: kB there) in bytes; 0 if absent."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    return 0


def _reset_hwm() -> bool:
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


# ---- plot --------------------------------------------------------------------------------------

_STYLE = {"py_out": ("C0", "-"), "py_alloc": ("C0", "--"), "acl_fresh": ("C2", ":"), "acl_repeat": ("C2", "-."),
          "torch_out": ("C3", "-"), "torch_alloc": ("C3", "--"), "numpy": ("C7", ":"), "bandwidth": ("k", "-")}


def plot(data: dict, path: Path, dtype: str = "f32") -> Path | None:
    """Throughput (output elements per second) vs size: one panel per operator x layout, for
    ``dtype`` at the largest thread count measured (matplotlib: the bench extra); None when
    nothing was measured."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rec = [r for r in data["results"] if r["dtype"] == dtype] or data["results"]
    if not rec:
        return None
    dtype = rec[0]["dtype"]
    threads = max(r["threads"] for r in rec)
    ops = list(dict.fromkeys(r["op"] for r in rec))
    layouts = [lay for lay in LAYOUTS if any(r["layout"] == lay for r in rec)]
    fig, axes = plt.subplots(len(ops), len(layouts), figsize=(4.2 * len(layouts), 3.2 * len(ops)),
                             squeeze=False, sharex=True)
    for i, op in enumerate(ops):
        for j, layout in enumerate(layouts):
            ax = axes[i][j]
            sel = [r for r in rec if r["op"] == op and r["layout"] == layout and r["threads"] == threads]
            if not sel:
                ax.axis("off")
                ax.text(0.5, 0.5, f"{op}: no {layout} case", ha="center", va="center", fontsize=8,
                        transform=ax.transAxes)
                continue
            for method in METHODS:
                pts = sorted((r["size"], r["size"] / r["median"]) for r in sel if r["method"] == method)
                if pts:
                    color, style = _STYLE[method]
                    ax.plot(*zip(*pts), color=color, linestyle=style, marker=".", label=method)
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_title(f"{op} {dtype} {layout}", fontsize=9)
            ax.grid(True, which="both", alpha=0.3)
            if j == 0:
                ax.set_ylabel("elements / s")
            if i == len(ops) - 1:
                ax.set_xlabel("elements")
    axes[0][0].legend(fontsize=7)
    fig.suptitle(f"opsnn vs torch, NumPy and a bandwidth reference ({threads} threads)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


# ---- summary (markdown) ------------------------------------------------------------------------

def _index(data: dict) -> dict:
    return {(r["op"], r["dtype"], r["size"], r["layout"], r["threads"], r["method"]): r["median"]
            for r in data["results"]}


# The targets as speed ratios (other time / opsnn time >= threshold), for the backward
# pair at the largest thread count: (text, layout, sizes, other method, opsnn method, threshold).
TARGET_OPS = ("LeakyReluBackward", "HardtanhBackward")
TARGETS = (
    (">= 1e6, contiguous: Pythonic out= >= 0.9x bandwidth", "contiguous", lambda n: n >= 10**6,
     "bandwidth", "py_out", 0.9),
    (">= 1e6, contiguous: Pythonic out= >= 1.0x torch out=", "contiguous", lambda n: n >= 10**6,
     "torch_out", "py_out", 1.0),
    (">= 1e6, contiguous: allocating Pythonic >= 1.5x torch allocating", "contiguous",
     lambda n: n >= 10**6, "torch_alloc", "py_alloc", 1.5),
    ("1e5 (cache resident): Pythonic out= >= 1.4x torch out=", "contiguous", lambda n: n == 10**5,
     "torch_out", "py_out", 1.4),
    ("4 elements: Pythonic call <= 1.0x the torch.ops.aten call (allocating)", None, lambda n: n == 4,
     "torch_alloc", "py_alloc", 1.0),
    ("4 elements: Pythonic call <= 1.0x the torch.ops.aten call (out=)", None, lambda n: n == 4,
     "torch_out", "py_out", 1.0),
    ("4 elements: two-phase, repeatable executor <= 2x torch's time (speed ratio >= 0.5)", None, lambda n: n == 4,
     "torch_alloc", "acl_repeat", 0.5),
    (">= 1e5, broadcast: Pythonic out= >= 1.0x torch out=", "broadcast", lambda n: n >= 10**5,
     "torch_out", "py_out", 1.0),
    (">= 1e5, strided input: Pythonic out= >= 0.5x bandwidth", "strided", lambda n: n >= 10**5,
     "bandwidth", "py_out", 0.5),
    (">= 1e5, permuted input (3-D, axes reversed): Pythonic out= >= 0.5x bandwidth", "permuted",
     lambda n: n >= 10**5, "bandwidth", "py_out", 0.5),
)


def _down(ratio: float) -> str:
    """A target's ratio with two decimals, rounded down (0.996 is 0.99): rounded to nearest, a
    miss read 1.00 beside its target (the 1e-9 keeps 0.29, stored as 0.28999..., 0.29)."""
    return f"{math.floor(ratio * 100 + 1e-9) / 100:.2f}"


def targets(data: dict) -> str:
    """The targets table of this run: per target, how many measured rows meet it, the range of
    the speed ratio and the rows that miss it (worst first)."""
    idx = _index(data)
    top = max(r["threads"] for r in data["results"])
    lines = ["| target | met | speed ratio (min - max) | misses (worst first) |", "|---|---|---|---|"]
    for text, layout, size_ok, other, mine, threshold in TARGETS:
        ratios = []
        for (op, dt, n, lay, th, method), value in idx.items():
            if (method != mine or th != top or op not in TARGET_OPS or not size_ok(n)
                    or (layout is not None and lay != layout)):
                continue
            ref = idx.get((op, dt, n, lay, th, other))
            if ref and value:
                ratios.append((ref / value, f"{op} {dt} {n:.0e}" + ("" if layout else f" {lay}")))
        if not ratios:
            continue
        ratios.sort()
        misses = [f"{label} {_down(r)}" for r, label in ratios if r < threshold]
        shown = ", ".join(misses[:6]) + (f", ... ({len(misses) - 6} more)" if len(misses) > 6 else "")
        lines.append(f"| {text} | {len(ratios) - len(misses)}/{len(ratios)} | {_down(ratios[0][0])} - "
                     f"{_down(ratios[-1][0])} | {shown or '-'} |")
    memory = data.get("memory")
    if memory:
        worst = max(max(m["tracemalloc_peak_bytes"], m["rss_peak_extra_bytes"] or 0)
                    for key, m in memory.items() if isinstance(m, dict))
        lines.append(f"| peak memory of a {memory['elements']:.0e}-element f32 out= call <= inputs + output "
                     f"+ {MEMORY_LIMIT_EXTRA_BYTES >> 20} MiB | {'yes' if worst <= MEMORY_LIMIT_EXTRA_BYTES else 'no'} "
                     f"| {worst / 2**20:.2f} MiB above inputs + output (tracemalloc / RSS high-water, worst layout) "
                     "| - |")
    return "\n".join(lines) + "\n"


def summarize(data: dict) -> str:
    """Markdown tables of the headline comparisons (speed ratios: other time / opsnn time)."""
    idx = _index(data)
    ops = list(dict.fromkeys(r["op"] for r in data["results"]))
    sizes = sorted({r["size"] for r in data["results"]})
    threads = sorted({r["threads"] for r in data["results"]})
    top = max(threads)

    def t(op, dt, n, lay, th, m):
        return idx.get((op, dt, n, lay, th, m))

    def ratio(a, b, spec=".2f", unit="x"):  # "-" where a method was not measured (--methods)
        return f"{a / b:{spec}}{unit}" if a and b else "-"

    def with_ratio(v, ref):
        return "-" if v is None else f"{us(v)} ({ratio(v, ref, '.1f')})"

    def us(v):
        return "-" if v is None else (f"{v * 1e6:.2f} us" if v < 1e-3 else f"{v * 1e3:.2f} ms")

    out = [f"\n### targets ({top} threads; speed ratios, other time / opsnn time)\n", targets(data)]
    for lay in LAYOUTS:
        rows = []
        for op in ops:
            for dt in DTYPES:
                for n in sizes:
                    if n < 10**5 or t(op, dt, n, lay, top, "py_out") is None:
                        continue
                    py, pya = t(op, dt, n, lay, top, "py_out"), t(op, dt, n, lay, top, "py_alloc")
                    rows.append(f"| {op} | {dt} | {n:.0e} | {us(py)} | {ratio(t(op, dt, n, lay, top, 'bandwidth'), py)} "
                                f"| {ratio(t(op, dt, n, lay, top, 'torch_out'), py)} "
                                f"| {ratio(t(op, dt, n, lay, top, 'torch_alloc'), pya)} "
                                f"| {ratio(t(op, dt, n, lay, 1, 'torch_out'), t(op, dt, n, lay, 1, 'py_out'))} |")
        if rows:
            out += [f"\n### {lay}, {top} threads (last column: 1 thread)\n",
                    "| op | dtype | elements | opsnn out= | vs bandwidth | vs torch out= | alloc vs torch alloc "
                    "| vs torch out= (1 thr) |", "|---|---|---|---|---|---|---|---|"] + rows
    small = min(sizes)
    rows = []
    for op in ops:
        for dt in DTYPES:
            for lay in LAYOUTS:
                torch_t = t(op, dt, small, lay, top, "torch_alloc")
                if torch_t is None:
                    continue
                py, pya = t(op, dt, small, lay, top, "py_out"), t(op, dt, small, lay, top, "py_alloc")
                rep, fresh = t(op, dt, small, lay, top, "acl_repeat"), t(op, dt, small, lay, top, "acl_fresh")
                rows.append(f"| {op} | {dt} | {lay} | {us(pya)} | {us(py)} | {us(torch_t)} | "
                            f"{us(t(op, dt, small, lay, top, 'torch_out'))} | {ratio(pya, torch_t, '.2f', '')} | "
                            f"{with_ratio(rep, torch_t)} | {us(fresh)} |")
    if rows:
        out += [f"\n### {small} elements: call times ({top} threads)\n",
                "| op | dtype | layout | opsnn alloc | opsnn out= | torch alloc | torch out= "
                "| opsnn alloc time / torch alloc time | two-phase repeatable (its time / torch alloc's) "
                "| two-phase fresh |",
                "|---|---|---|---|---|---|---|---|---|---|"] + rows
    return "\n".join(out) + "\n"


# ---- CLI hook ----------------------------------------------------------------------------------

def bench_dtype(text: str) -> str:
    """A ``--dtypes`` word as the short name bench prints (f32, f16, bf16, f64): that name, or
    any name ``opsnn run --dtype`` reads (``cli_words.data_type``: FLOAT, ACL_FLOAT16, bfloat16,
    double ...). Usage error (argparse.ArgumentTypeError) for a dtype bench does not measure."""
    if text in DTYPES:
        return text
    named = numpy_dtype(text)
    for short, measured in DTYPES.items():
        if named == measured:
            return short
    raise argparse.ArgumentTypeError(f"bench does not measure dtype {text!r} ({named}); "
                                     f"expected one of {', '.join(DTYPES)} or their CANN / NumPy names")


def bench_op(text: str) -> str:
    """An ``--ops`` word as the operator's name (LeakyReluBackward): any name ``opsnn run``,
    ``describe`` and ``tiling`` take (``registry.resolve``: aclnn or kernel names in any case,
    Pythonic names). Usage error (argparse.ArgumentTypeError) for an unknown name, and for an
    operator bench does not measure (the in-place ones); an unknown name is told of these four
    only (the closest of their names, and the list)."""
    from . import registry

    try:
        name = registry.resolve(text, among=available_ops()).name
    except KeyError as exc:
        raise argparse.ArgumentTypeError(exc.args[0]) from None
    if name not in available_ops():
        raise argparse.ArgumentTypeError(f"{text!r} names {name}, which bench does not measure; expected one "
                                         f"of {', '.join(available_ops())} (by any name opsnn run takes)")
    return name


def pool_threads() -> int | None:
    """The threads of numba's pool as ``numba.config`` reads them (NUMBA_NUM_THREADS, else the CPUs
    this process may run on), known without importing numba where it is not yet (seconds, for a
    usage error); None where numba's own reading decides (a variable that is no count, which it
    warns of; a ``.numba_config.yaml`` here, which may set it): ``check_selection`` checks then."""
    numba = sys.modules.get("numba")
    if numba is not None and hasattr(numba, "config"):
        return numba.config.NUMBA_NUM_THREADS
    if Path(".numba_config.yaml").exists():
        return None
    from .kernels import numba_threads_setting

    count = numba_threads_setting()
    return count if count is not None and count >= 1 else None


def thread_count(text: str) -> int:
    """A ``--threads`` word: 1 to numba's pool's threads (``pool_threads``), read as it is given, so
    that the hint for ``--threads 1,3`` (write 1 3) names only counts taken: 3 on a pool of 2 had
    been refused only after it (a breaker). Past an unknown pool, ``check_selection`` refuses."""
    return thread_reader(pool_threads())(text)


def thread_reader(most: int | None):
    """The reader of a thread count on numba's pool of ``most`` threads (None: not known yet): 1 to
    ``most``, a refusal naming the pool. The one policy, and wording, of ``--threads``, as its words
    are read and once numba has read its pool (``check_selection``): they had been worded apart."""
    bound = (f"numba's pool has {counted(most, 'thread')} here, NUMBA_NUM_THREADS" if most
             else "a thread count: at most numba's pool's, NUMBA_NUM_THREADS")
    return int_at_least(1, most, bound=bound)


def _size_words(sizes) -> str:
    """Sizes as the help writes them (``4 1e4 1e5``): the grids' sizes are powers of ten from 1e4."""
    return " ".join(str(n) if n < 10**4 else f"1e{round(math.log10(n))}" for n in sizes)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--quick", action="store_true",
                        help=f"a small grid (sizes {_size_words(QUICK_SIZES)}, dtypes {' '.join(QUICK_DTYPES)}, "
                             "unless given): seconds once its kernels are compiled (a minute or two the first time)")
    parser.add_argument("--out-dir", default="bench-results",
                        help="where bench.json / bench.md / bench.png go (default ./bench-results; the "
                             "recorded run of BENCHMARKS.md is benchmarks/results)")
    parser.add_argument("--ops", nargs="+", action=Distinct, type=by_spaces(bench_op), metavar="OP",
                        help=f"operators: {' '.join(available_ops())}, by any name opsnn run takes "
                             "(hardtanh_backward, aclnnHardtanhBackward ...; default: all of them)")
    parser.add_argument("--dtypes", nargs="+", action=Distinct, type=by_spaces(bench_dtype), metavar="DTYPE",
                        help="dtypes: f32 f16 bf16 f64, or as `opsnn run --dtype` names them (default: each op's; "
                             f"--quick: {' '.join(QUICK_DTYPES)})")
    parser.add_argument("--sizes", nargs="+", action=Distinct, type=int_at_least(1),
                        help=f"element counts (1e5 or 100000; default {_size_words(FULL_SIZES)}, "
                             f"--quick: {_size_words(QUICK_SIZES)})")
    parser.add_argument("--threads", nargs="+", action=Distinct,
                        type=by_spaces(thread_count),
                        help="thread counts (default 1 2; at most numba's NUMBA_NUM_THREADS)")
    parser.add_argument("--layouts", nargs="+", action=Distinct, type=by_spaces(None, LAYOUTS), choices=LAYOUTS,
                        help="contiguous; broadcast (grad (N,1) with self (1,M)); strided (self a transposed 2-D "
                             "view); permuted (self a 3-D view, axes reversed) (default: all)")
    parser.add_argument("--methods", nargs="+", action=Distinct, type=by_spaces(None, METHODS), choices=METHODS,
                        help="py_out / py_alloc: the Pythonic call with and without out=; acl_fresh / acl_repeat: "
                             "the two-phase API, a fresh executor each call / one repeatable executor; torch_out / "
                             "torch_alloc: torch.ops.aten with and without out=; numpy: a NumPy expression; "
                             "bandwidth: a compiled copy that reads two arrays and writes one (one for the forward "
                             "operators) (default: all)")
    parser.add_argument("--max-large-dtypes", nargs="*", action=Distinct, type=bench_dtype, metavar="DTYPE",
                        help="at 1e8 elements, measure only these dtypes (default: all)")
    parser.add_argument("--forward-max-size", type=int_at_least(1), default=10**7,
                        help="largest size for the forward operators (default 1e7; the backward pair goes to 1e8)")
    parser.add_argument("--slow-numpy", action="store_true",
                        help="also time the NumPy expression for f16/bf16 at >= 1e7 elements")
    parser.add_argument("--no-memory", dest="memory", action="store_false",
                        help="skip the peak-memory measurement (a float32 LeakyReluBackward call with out=, "
                             "whatever --ops says: 1e8 elements, 1e6 with --quick)")
    parser.add_argument("--no-plot", dest="plot", action="store_false", help="do not draw bench.png")
    parser.add_argument("--spin-count", type=int_at_least(0), metavar="N",
                        help="OpenMP workers of both libraries spin N times before sleeping (GOMP_SPINCOUNT, "
                             "OMP_WAIT_POLICY unset) instead of sleeping at once (OMP_WAIT_POLICY=PASSIVE)")
    parser.add_argument("--json-only", action="store_true", help="do not print the tables")


def pool_wait_env(spin_count: int | None, environ) -> dict[str, str | None]:
    """The environment a run measures under (None: the variable removed): how the OpenMP workers
    of numba and torch wait between parallel regions (module docstring). By default a caller's
    own OMP_WAIT_POLICY is kept, else PASSIVE; ``spin_count`` sets GOMP_SPINCOUNT and removes
    OMP_WAIT_POLICY, which would override it (PASSIVE spins 0 times, ACTIVE without end)."""
    if spin_count is None:
        return {"OMP_WAIT_POLICY": environ.get("OMP_WAIT_POLICY") or "PASSIVE"}
    return {"OMP_WAIT_POLICY": None, "GOMP_SPINCOUNT": str(spin_count)}


def out_folder(text: str) -> Path:
    """``--out-dir`` made (with its parents) and checked writable, before anything is measured:
    ValueError (a usage error) naming the option where it is a file or a link to nothing
    (``output_folder_refusal``; a breaker: "[Errno 17] File exists: 'afile'", naming neither);
    ``OutputError`` (an I/O failure, exit 1, as verify's ``--json`` and ``--dump``) where the
    system will not make it or write into it."""
    refusal = output_folder_refusal("--out-dir", text)
    if refusal:
        raise ValueError(f"{refusal} (bench.json, bench.md and bench.png go into it)")
    folder = Path(text)
    try:
        make_writable_folder(folder)
    except OSError as exc:
        raise OutputError("--out-dir", text, exc, "into the folder") from None
    return folder


def run(args) -> int:
    # libgomp reads these when it loads: set before either runtime does (torch below, numba's pool
    # on opsnn's first launch), or they cannot apply
    loaded = sorted({"torch", "opsnn.kernels.numba_backend"} & set(sys.modules))
    if loaded:
        print(f"opsnn bench: {', '.join(loaded)} already imported: its OpenMP wait settings are the "
              "ones it loaded with, whatever this run records", file=sys.stderr)
    for key, value in pool_wait_env(args.spin_count, os.environ).items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value
    try:
        import torch  # noqa: F401 - the reference every ratio is taken against
    except ImportError:
        print("opsnn bench: needs PyTorch (torch.ops.aten is the reference); install the bench extra "
              f"(torch==2.13.0 CPU and matplotlib): `{install_hint('bench')}`", file=sys.stderr)
        return 2
    from . import kernels

    try:  # what it times: opsnn's compiled kernels, beside a compiled bandwidth kernel
        kernels.get("numba")
    except ImportError as exc:  # (no numba, NUMBA_DISABLE_JIT ...: a traceback from inside the grid)
        print(f"opsnn bench: needs the numba backend, whose kernels it times ({exc})", file=sys.stderr)
        return 2
    kernels.for_command()  # (cli._KERNEL_COMMANDS: a bad $OPSNN_BACKEND is a usage error)
    check_selection(args)
    out_dir = out_folder(args.out_dir)
    data = run_grid(args)
    json_path = out_dir / "bench.json"
    json_path.write_text(strict_json(data, indent=None))
    md_path = out_dir / "bench.md"
    md_path.write_text(summarize(data))
    if not args.json_only:
        print(f"\ntargets ({max(args.threads or default_threads())} threads; speed ratios, other time / opsnn "
              "time):")
        print(targets(data))
    print(f"wrote {json_path} and {md_path}")
    if data["memory"] and not args.json_only:
        mem = data["memory"]
        print(f"peak extra memory of one {mem['elements']:.0e}-element f32 LeakyReluBackward call with out=:")
        for layout in ("contiguous", "strided", "broadcast"):
            m = mem[layout]
            rss = m["rss_peak_extra_bytes"]
            print(f"  {layout:<10} tracemalloc {m['tracemalloc_peak_bytes'] / 2**20:8.2f} MiB, RSS high-water "
                  f"{'n/a' if rss is None else f'{rss / 2**20:8.2f} MiB'} (limit {MEMORY_LIMIT_EXTRA_BYTES >> 20} "
                  f"MiB; inputs + output {m['io_bytes'] / 2**20:.0f} MiB)")
    if not args.plot or importlib.util.find_spec("matplotlib") is None:
        # an earlier run's must not stand beside this JSON (with --no-plot too: a breaker)
        (out_dir / "bench.png").unlink(missing_ok=True)
        if args.plot:
            print(f"no plot: matplotlib is not installed ({install_hint('bench')})")
    else:
        png = plot(data, out_dir / "bench.png")
        if png:
            print(f"wrote {png}")
    print(f"elapsed {data['elapsed_s']} s")
    return 0


def main(argv=None) -> int:
    # (python -OO strips the docstring: None there, and None.splitlines() was a traceback)
    # opsnn's parser, as `opsnn bench` reads the line: argparse's handed --sizes=-- an empty list
    # (every size measured) and dropped a closed pipe's error under --help (exit 0)
    parser = Parser(prog="opsnn bench", description=(__doc__ or "").partition("\n")[0] or None)
    add_arguments(parser)
    try:  # (a closed pipe: 141, a full disk: one line and 1, as `opsnn bench` ends them)
        return run_writing_stdout(parser.prog, lambda: run(parser.parse_args(argv)))
    except ValueError as exc:  # a selection that measures nothing: a usage error, as in `opsnn bench`
        parser.error(str(exc))
    except OutputError as exc:  # as `opsnn bench` reports it
        print(f"{parser.prog}: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
