"""Shared fixtures and helpers: the emulated ACL runtime, device tensors from NumPy views,
read-back, the two-phase launch, SoC selection and the failure checks used by every test file."""

from __future__ import annotations

import dataclasses
import os

# Every test process (the xdist workers, the CLI's subprocesses) takes the threshold a host without
# a measure gets, not this host's: which walker variants compile (serial or pool) then does not
# depend on the machine, and a first run compiles no more than it must. The tests of the
# measurement reset it themselves. Set before opsnn is imported, which reads it once.
os.environ.setdefault("OPSNN_PARALLEL_MIN_BYTES", str(16 << 20))

import numpy as np
import pytest

import cases
import opsnn
import opsnn.acl as acl
from opsnn import aclnn


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config):
    """With `-n`, a worker that runs out of tests takes the rest of another's queue (worksteal),
    unless --dist names a schedule. Most of a first run is numba compiling kernels, unevenly spread
    over the tests: under xdist's default (load) one worker idled through the last minutes of an
    empty-cache run on 2 cores (12m01s, 1.63 cores busy on average); with worksteal both stayed busy
    (10m16s). Set here rather than in pyproject's addopts, where `--dist` is an unknown option once
    xdist is left out (`-p no:xdist`). Runs before xdist's own hook, which turns "no" into "load"."""
    if config.pluginmanager.hasplugin("xdist") and config.option.dist == "no" and config.option.numprocesses:
        config.option.dist = "worksteal"


# ---- operator registry (what the shared tests iterate over) ------------------------------------
@dataclasses.dataclass(frozen=True)
class OpInfo:
    """How to call one operator through both public layers."""

    key: str
    api: str                 # aclnn name without the GetWorkspaceSize suffix
    null_order: tuple        # CANN argument names in the documented null-check order (DECISION 15)
    pythonic: str            # opsnn function name

    @property
    def phase1(self):
        return getattr(aclnn, self.api + "GetWorkspaceSize")

    @property
    def phase2(self):
        return getattr(aclnn, self.api)

    @property
    def py(self):
        return getattr(opsnn, self.pythonic)


LEAKY = OpInfo("leaky", "aclnnLeakyReluBackward", ("gradOutput", "self", "negativeSlope", "out"),
               "leaky_relu_backward")
HARDTANH = OpInfo("hardtanh", "aclnnHardtanhBackward", ("self", "gradOutput", "out", "min", "max"),
                  "hardtanh_backward")
OPS = {"leaky": LEAKY, "hardtanh": HARDTANH}


def sigint_default() -> None:
    """``preexec_fn`` for a child a test sends SIGINT (Ctrl-C): SIGINT's default disposition, so
    the child's Python installs its KeyboardInterrupt handler however pytest was started. A
    background job (``nohup pytest ... &``) starts with SIGINT ignored, every child inherits that
    through exec, and Python then installs no handler: the signal did nothing, and such a test
    failed on how pytest was launched, not on opsnn."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.fixture
def python_sigint():
    """Python's own SIGINT handler (``signal.default_int_handler``) in force for a test that sends
    this process SIGINT, then the one before: under ``nohup pytest ... &`` SIGINT is ignored, and
    opsnn rightly leaves a program that ignores it alone (``_core.interrupts``)."""
    import signal

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def run_python(code: str, timeout: int = 120, env: dict | None = None, sigint: bool = False) -> str:
    """Run ``code`` in a fresh interpreter (``python -c``) and return its stdout; the test fails,
    showing both streams' ends, unless it exits 0. For what one process cannot show again: a
    first import, a fork, a start with an empty kernel cache. ``sigint``: the code sends itself
    SIGINT (the child starts with its default: ``sigint_default``)."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout,
                          env=env, check=False, preexec_fn=sigint_default if sigint else None)
    assert done.returncode == 0, (done.stdout[-2000:], done.stderr[-3000:])
    return done.stdout


def acl_dtype(dtype) -> int:
    """The acl.ACL_* constant of a NumPy dtype (or of an aclDataType name such as 'UINT32')."""
    name = dtype if isinstance(dtype, str) else cases.ACL_NAME[np.dtype(dtype)]
    return getattr(acl, "ACL_" + name)


def acl_format(name: str) -> int:
    return getattr(acl, "ACL_FORMAT_" + name)


# ---- device tensors -----------------------------------------------------------------------------
@dataclasses.dataclass
class DevTensor:
    """A device tensor made from a NumPy view of a C-contiguous base array."""

    env: "AclEnv"
    tensor: object
    addr: int
    base_shape: tuple
    dtype: np.dtype
    view_shape: tuple
    strides: list
    offset: int

    def storage(self) -> np.ndarray:
        """The whole storage (base), read back from the device."""
        return self.env.read(self.addr, self.base_shape, self.dtype)

    def storage_bytes(self) -> bytes:
        return self.storage().tobytes()

    def view(self) -> np.ndarray:
        """The view, read back from the device (a contiguous copy)."""
        base = self.storage()
        if int(np.prod(self.view_shape, dtype=np.int64)) == 0:
            return np.zeros(self.view_shape, self.dtype)
        flat = base.reshape(-1)
        return np.lib.stride_tricks.as_strided(
            flat[self.offset:], shape=self.view_shape,
            strides=tuple(s * self.dtype.itemsize for s in self.strides)).copy()


class AclEnv:
    """One stream plus everything a test allocated on it; released at teardown."""

    def __init__(self):
        self.stream, ret = acl.rt.create_stream()
        assert ret == 0, f"create_stream -> {ret}"
        self._addrs, self._tensors, self._scalars = [], [], []

    # memory
    def malloc(self, nbytes: int) -> int:
        addr, ret = acl.rt.malloc(max(int(nbytes), 32), acl.ACL_MEM_MALLOC_HUGE_FIRST)
        assert ret == 0, f"malloc({nbytes}) -> {ret}"
        self._addrs.append(addr)
        return addr

    def write(self, addr: int, base: np.ndarray) -> None:
        raw = np.ascontiguousarray(base).reshape(-1).view(np.uint8)
        if raw.size:
            ret = acl.rt.memcpy(addr, raw.size, raw, raw.size, acl.ACL_MEMCPY_HOST_TO_DEVICE)
            assert ret == 0, f"memcpy H2D -> {ret}"

    def read(self, addr: int, shape, dtype) -> np.ndarray:
        dtype = np.dtype(dtype)
        n = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        raw = np.zeros(n, np.uint8)
        if n:
            ret = acl.rt.memcpy(raw, n, addr, n, acl.ACL_MEMCPY_DEVICE_TO_HOST)
            assert ret == 0, f"memcpy D2H -> {ret}"
        return raw.view(dtype).reshape(shape)

    # tensors and scalars
    def put(self, view, base=None, *, fmt: str = "ND", dtype_name: str | None = None) -> DevTensor:
        """Upload `base` (default: `view` made contiguous) and describe `view` inside it with
        explicit strides / offset / storage shape."""
        view = np.asarray(view)
        if base is None:
            base = np.array(view, order="C", copy=True)
            view = base
        strides, offset = cases.layout_of(view, base)
        addr = self.malloc(base.nbytes)
        self.write(addr, base)
        t = acl.create_tensor(list(view.shape), acl_dtype(dtype_name or base.dtype), strides, offset,
                              acl_format(fmt), list(base.shape), addr)
        assert t is not None, f"create_tensor failed: {acl.get_recent_err_msg()}"
        self._tensors.append(t)
        return DevTensor(self, t, addr, tuple(base.shape), base.dtype, tuple(view.shape), strides, offset)

    def put_layout(self, a, layout: str, **kw) -> DevTensor:
        view, base = cases.make_layout(np.asarray(a), layout)
        return self.put(view, base, **kw)

    def out(self, shape, dtype, layout: str = "contig", sentinel=777.0, **kw) -> DevTensor:
        view, base = cases.out_layout(shape, dtype, layout, sentinel)
        return self.put(view, base, **kw)

    def scalar(self, value, dtype) -> object:
        """acl.create_scalar(value, ACL_<dtype>); dtype is an aclDataType name or NumPy dtype."""
        s = acl.create_scalar(value, acl_dtype(dtype))
        assert s is not None, f"create_scalar({value!r}, {dtype}) failed: {acl.get_recent_err_msg()}"
        self._scalars.append(s)
        return s

    # two-phase launch
    def launch(self, op: OpInfo, *args) -> "Launch":
        """Phase 1, workspace malloc when > 0, phase 2, synchronize. Stops at the first failure."""
        ws, executor, ret = op.phase1(*args)
        result = Launch(ret, ws, executor)
        if ret != 0:
            return result
        workspace = self.malloc(ws) if ws > 0 else None
        result.phase2 = op.phase2(workspace, ws, executor, self.stream)
        if result.phase2 == 0:
            result.sync = acl.rt.synchronize_stream(self.stream)
        return result

    def close(self) -> None:
        for t in self._tensors:
            acl.destroy_tensor(t)
        for s in self._scalars:
            acl.destroy_scalar(s)
        for a in self._addrs:
            acl.rt.free(a)
        acl.rt.destroy_stream(self.stream)
        acl.get_recent_err_msg()


@dataclasses.dataclass
class Launch:
    phase1: int
    workspace_size: int
    executor: object
    phase2: int | None = None
    sync: int | None = None

    def ok(self) -> bool:
        return self.phase1 == 0 and self.phase2 == 0 and self.sync == 0

    def __str__(self):
        return f"phase1={self.phase1} ws={self.workspace_size} phase2={self.phase2} sync={self.sync}"


# ---- runners (both layers) ---------------------------------------------------------------------
def _run_pythonic(function, g, x, layouts, out_shape, out_dtype, out_layout, **scalars):
    """Call a Pythonic backward op on (g, x) laid out as asked with an out= view; check out is
    returned, only its view is written and the inputs are untouched; return the values."""
    gv, _ = cases.make_layout(g, layouts[0])
    xv, _ = cases.make_layout(x, layouts[1])
    ov, ob = cases.out_layout(out_shape, out_dtype, out_layout)
    before = ob.copy()
    res = function(gv, xv, **scalars, out=ov)
    assert res is ov, "out= must be written in place and returned"
    mask = cases.outside_mask(ov, ob)
    assert cases.bits(ob[mask]).tobytes() == cases.bits(before[mask]).tobytes(), \
        "out storage outside the view was modified"
    assert cases.bits(gv).tobytes() == cases.bits(g).tobytes()
    assert cases.bits(xv).tobytes() == cases.bits(x).tobytes()
    return np.array(res, order="C", copy=True)


def run_leaky(layer, env, g, x, slope, *, sir=False, out_dtype=None, layouts=("contig", "contig"),
              out_layout="contig", slope_dtype="DOUBLE", fmt="ND"):
    """Run LeakyReluBackward on (g, x) laid out as asked; check it succeeded, that the result is
    written into out's view only, and return the result values (contiguous)."""
    g, x = np.asarray(g), np.asarray(x)
    shape = np.broadcast_shapes(g.shape, x.shape)
    odt = np.dtype(out_dtype or cases.promote(g.dtype, x.dtype))
    if layer == "py":
        return _run_pythonic(opsnn.leaky_relu_backward, g, x, layouts, shape, odt, out_layout,
                             negative_slope=slope, self_is_result=sir)
    gt = env.put_layout(g, layouts[0], fmt=fmt)
    xt = env.put_layout(x, layouts[1], fmt=fmt)
    ot = env.out(shape, odt, out_layout, fmt=fmt)
    base_before = ot.storage()
    in_before = (gt.storage_bytes(), xt.storage_bytes())
    s = env.scalar(slope, slope_dtype)
    r = env.launch(LEAKY, gt.tensor, xt.tensor, s, sir, ot.tensor)
    assert r.ok(), f"{r}: {acl.get_recent_err_msg()!r}"
    assert (gt.storage_bytes(), xt.storage_bytes()) == in_before, "inputs were modified"
    res = ot.view()
    assert_out_written(ot, res, base_before, "out")
    return res


def run_hardtanh(layer, env, g, x, lo, hi, *, layouts=("contig", "contig"), out_layout="contig",
                 bound_dtype="DOUBLE", fmt="ND"):
    g, x = np.asarray(g), np.asarray(x)
    if layer == "py":
        return _run_pythonic(opsnn.hardtanh_backward, g, x, layouts, x.shape, x.dtype, out_layout,
                             min_val=lo, max_val=hi)
    gt = env.put_layout(g, layouts[0], fmt=fmt)
    xt = env.put_layout(x, layouts[1], fmt=fmt)
    ot = env.out(x.shape, x.dtype, out_layout, fmt=fmt)
    base_before = ot.storage()
    in_before = (gt.storage_bytes(), xt.storage_bytes())
    r = env.launch(HARDTANH, gt.tensor, xt.tensor, env.scalar(lo, bound_dtype), env.scalar(hi, bound_dtype),
                   ot.tensor)
    assert r.ok(), f"{r}: {acl.get_recent_err_msg()!r}"
    assert (gt.storage_bytes(), xt.storage_bytes()) == in_before, "inputs were modified"
    res = ot.view()
    assert_out_written(ot, res, base_before, "out")
    return res


# ---- fixtures -----------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def acl_runtime():
    """acl.init + set_device(0) once per session; reset_device + finalize at the end."""
    ret = acl.init()
    assert ret in (0, 100002), f"acl.init -> {ret}"  # 100002: already initialised by the process
    assert acl.rt.set_device(0) == 0
    yield acl
    acl.rt.reset_device(0)
    if ret == 0:
        acl.finalize()


@pytest.fixture
def acl_env(acl_runtime):
    """A stream on device 0, with every tensor/scalar/buffer made through it freed at teardown."""
    acl.get_recent_err_msg()
    env = AclEnv()
    yield env
    env.close()


@pytest.fixture
def env(request):
    """acl_env for the aclnn layer, nothing for the Pythonic one."""
    callspec = getattr(request.node, "callspec", None)
    if callspec is not None and callspec.params.get("layer") == "acl":
        return request.getfixturevalue("acl_env")
    return None


@pytest.fixture(autouse=True)
def default_soc(monkeypatch):
    """Every test starts on the default profile (Ascend910B) unless it selects another."""
    monkeypatch.delenv("OPSNN_SOC", raising=False)
    yield


@pytest.fixture(autouse=True)
def no_compile_failures():
    """A generated walker that fails to compile runs on the NumPy backend (same bits, logged
    once: numba_backend.COMPILE_FAILURES), so a test's values alone would not show it: any test
    during which one failed fails here."""
    from opsnn.kernels import numba_backend

    failures = numba_backend.COMPILE_FAILURES
    before = len(failures)
    yield
    assert not failures[before:], f"a generated walker did not compile: {failures[before:]}"


@pytest.fixture(params=["Ascend910", "Ascend310P"])
def soc_without_bf16(request):
    with opsnn.use_soc(request.param) as profile:
        yield profile


@pytest.fixture(params=["Ascend910B", "Ascend910_93", "Ascend950"])
def soc_with_bf16(request):
    with opsnn.use_soc(request.param) as profile:
        yield profile


# ---- failure checks -----------------------------------------------------------------------------
def expect_acl_failure(ret: int, status: int, *, names=(), dtypes=(), shapes=(), words=()) -> str:
    """aclnn layer: `ret` is `status`; get_recent_err_msg() returns a non-empty message that names
    each argument / dtype / shape / word given, then None on the next call. Returns the message."""
    assert ret == status, f"status {ret}, expected {status}; message: {acl.get_recent_err_msg()!r}"
    msg = acl.get_recent_err_msg()
    assert isinstance(msg, str) and msg.strip(), f"no recent error message after status {ret}"
    check_message(msg, names=names, dtypes=dtypes, shapes=shapes, words=words)
    assert acl.get_recent_err_msg() is None, "get_recent_err_msg() must fetch-and-clear"
    return msg


def check_message(msg: str, *, names=(), dtypes=(), shapes=(), words=()) -> None:
    for n in names:
        assert cases.names_arg(msg, n), f"message does not name {n!r}: {msg!r}"
    for d in dtypes:
        assert cases.names_dtype(msg, d), f"message does not name dtype {d!r}: {msg!r}"
    for s in shapes:
        assert cases.names_shape(msg, s), f"message does not show shape {s}: {msg!r}"
    for w in words:
        assert w.lower() in msg.lower(), f"message does not contain {w!r}: {msg!r}"


def expect_py_failure(fn, *args, status: int, names=(), dtypes=(), shapes=(), words=(),
                      untouched=(), **kwargs) -> opsnn.AclnnError:
    """Pythonic layer: raises opsnn.AclnnError with .status == status and a message that names
    what is given; the arrays in `untouched` keep their bytes."""
    before = [np.ascontiguousarray(a).tobytes() for a in untouched]
    with pytest.raises(opsnn.AclnnError) as info:
        fn(*args, **kwargs)
    exc = info.value
    assert exc.status == status, f"AclnnError.status {exc.status}, expected {status}: {exc.message!r}"
    assert isinstance(exc.message, str) and exc.message.strip()
    check_message(exc.message, names=names, dtypes=dtypes, shapes=shapes, words=words)
    after = [np.ascontiguousarray(a).tobytes() for a in untouched]
    for i, (b, a) in enumerate(zip(before, after)):
        assert b == a, f"argument {i} was modified by a failing call"
    return exc


def snapshot(*tensors: DevTensor) -> list:
    return [t.storage_bytes() for t in tensors]


def assert_untouched(before: list, *tensors: DevTensor) -> None:
    for i, (b, t) in enumerate(zip(before, tensors)):
        assert t.storage_bytes() == b, f"device tensor {i} was modified"


def assert_out_written(out: DevTensor, expected: np.ndarray, base_before: np.ndarray, what: str = ""):
    """out's view equals `expected` bit-exactly and every storage element outside the view kept
    its bytes."""
    cases.assert_bits_equal(out.view(), expected, what=what)
    storage = out.storage()
    view = np.lib.stride_tricks.as_strided(
        storage.reshape(-1)[out.offset:] if storage.size else storage.reshape(-1),
        shape=out.view_shape, strides=tuple(s * out.dtype.itemsize for s in out.strides))
    mask = cases.outside_mask(view, storage)
    assert cases.bits(storage[mask]).tobytes() == cases.bits(base_before[mask]).tobytes(), \
        f"{what}: out storage outside the view was modified"
