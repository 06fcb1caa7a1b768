"""Helpers for the reliability suite (test_reliability, test_fuzz, test_concurrency, test_soak):
hostile values, a small device helper that frees what it made, the documented status sets, the
memory-balance guard and a runtime guard that restores init/set_device after a test that ends
the runtime. Everything goes through the public surfaces (opsnn.acl, opsnn.aclnn, opsnn)."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest

import opsnn.acl as acl
from opsnn import aclnn
from opsnn._core import memory
from opsnn.acl import rt

# ---- documented status sets (README "Status codes", docs/reliability.md) --------------------
ACL_CODES = {0, 100000, 100001, 100002, 100003, 100037, 107000, 107002, 107006, 107007, 107016, 200000, 200002, 200005,
             207000, 500003, 507046, 507047}
ACLNN_CODES = {0, 161001, 161002, 361001, 561003, 561103}
INNER = 561000  # ACLNN_ERR_INNER: an opsnn bug; no hostile input may produce it

F16, F32, F64, BF16 = (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64),
                       np.dtype(ml_dtypes.bfloat16))
ACL_OF = {F16: acl.ACL_FLOAT16, F32: acl.ACL_FLOAT, F64: acl.ACL_DOUBLE, BF16: acl.ACL_BF16,
          np.dtype(np.int32): acl.ACL_INT32}  # int32: for the dtype refusals


class Sentinel:
    """An object of no type opsnn knows."""

    def __repr__(self) -> str:
        return "<Sentinel>"


class Exploding:
    """An object whose every attribute access and conversion raises."""

    PROTOCOLS = {"__dlpack__", "__dlpack_device__", "__array__", "__array_interface__",
                 "__array_struct__", "__array_priority__", "__buffer__"}

    def __getattr__(self, name):
        if name.startswith("__") and name not in self.PROTOCOLS:  # let tooling (pytest ids) look
            raise AttributeError(name)
        raise RuntimeError(f"hostile attribute {name}")

    def __index__(self):
        raise RuntimeError("hostile __index__")

    def __float__(self):
        raise RuntimeError("hostile __float__")

    def __len__(self):
        raise RuntimeError("hostile __len__")

    def __iter__(self):
        raise RuntimeError("hostile __iter__")


# values of every wrong kind: wrong Python types, None, negative, huge, non-integer, NaN/inf
JUNK = (None, True, False, 0, -1, 1, 3, 2**31, 2**62, 2**63, 2**64 + 5, -2**70, 10**30, 1.5, 0.0,
        -0.0, float("nan"), float("inf"), -float("inf"), 1e308, 2j, "0", "", b"\x00\x01", bytearray(4),
        [], [1], [2, -3], [1.5], [None], (1, 2), {}, {1: 2}, set(), range(3), Sentinel(), Exploding(),
        np.int64(-1), np.int64(2**62), np.uint64(2**64 - 1), np.float32(1.0), np.float64("nan"),
        np.bool_(True), np.array([1, 2]), np.array(3), np.zeros((2, 2)), np.array(["a"]),
        np.array([1.5]), np.float16(1.0), type, print)


def check_ret(ret, allowed=ACL_CODES, *, success_ok=True) -> str | None:
    """``ret`` is an int in ``allowed``; a failure left a non-empty recent-error message, which
    is returned (and cleared); never ACLNN_ERR_INNER."""
    assert isinstance(ret, int) and not isinstance(ret, bool), f"ret {ret!r} is not an int"
    assert ret != INNER, f"internal error: {acl.get_recent_err_msg()!r}"
    assert ret in allowed, f"undocumented status {ret}: {acl.get_recent_err_msg()!r}"
    if ret == 0:
        assert success_ok, "expected a failure"
        return None
    msg = acl.get_recent_err_msg()
    assert isinstance(msg, str) and msg.strip(), f"status {ret} without a recent-error message"
    assert "internal error" not in msg, msg
    return msg


def check_null(obj) -> str:
    """A constructor failed (None, a C NULL) and left a message."""
    assert obj is None
    msg = acl.get_recent_err_msg()
    assert isinstance(msg, str) and msg.strip(), "a NULL return without a recent-error message"
    assert "internal error" not in msg, msg
    return msg


def mem_state() -> tuple[int, int]:
    return memory.DEVICE.allocated_bytes, memory.DEVICE.allocation_count


def rss_bytes() -> int:
    """Resident set size of this process (Linux /proc/self/statm)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


# ---- a device helper that frees what it made ----------------------------------------------
class Dev:
    """Allocations, tensors and scalars made for a test; ``close`` releases all of them."""

    def __init__(self, stream=None):
        self.addrs: list[int] = []
        self.tensors: list = []
        self.scalars: list = []
        self.stream = stream

    def malloc(self, nbytes: int) -> int:
        addr, ret = acl.rt.malloc(max(int(nbytes), 1), acl.ACL_MEM_MALLOC_HUGE_FIRST)
        assert ret == 0, acl.get_recent_err_msg()
        self.addrs.append(addr)
        return addr

    def upload(self, host: np.ndarray) -> int:
        host = np.ascontiguousarray(host)
        addr = self.malloc(host.nbytes)
        if host.nbytes:
            assert acl.rt.memcpy(addr, host.nbytes, host, host.nbytes, acl.ACL_MEMCPY_HOST_TO_DEVICE) == 0
        return addr

    def tensor(self, host: np.ndarray, addr: int | None = None, *, shape=None, strides=None,
               offset: int = 0, storage=None):
        """A device tensor over ``host``'s bytes (uploaded unless ``addr`` is given)."""
        host = np.asarray(host)
        if addr is None:
            addr = self.upload(host)
        shape = list(host.shape if shape is None else shape)
        if strides is None:
            strides = [int(s) for s in np.cumprod([1] + shape[::-1][:-1])[::-1]] if shape else []
        storage = list(host.shape if storage is None else storage)
        t = acl.create_tensor(shape, ACL_OF[host.dtype], strides, offset, acl.ACL_FORMAT_ND, storage, addr)
        assert t is not None, acl.get_recent_err_msg()
        self.tensors.append(t)
        return t

    def scalar(self, value, dtype=acl.ACL_DOUBLE):
        s = acl.create_scalar(value, dtype)
        assert s is not None, acl.get_recent_err_msg()
        self.scalars.append(s)
        return s

    def read(self, addr: int, shape, dtype) -> np.ndarray:
        dtype = np.dtype(dtype)
        n = math.prod(shape) * dtype.itemsize
        raw = np.zeros(n, np.uint8)
        if n:
            assert acl.rt.memcpy(raw, n, addr, n, acl.ACL_MEMCPY_DEVICE_TO_HOST) == 0, acl.get_recent_err_msg()
        return raw.view(dtype).reshape(shape)

    def close(self) -> None:
        for t in self.tensors:
            acl.destroy_tensor(t)
        for s in self.scalars:
            acl.destroy_scalar(s)
        for a in self.addrs:
            acl.rt.free(a)
        self.addrs.clear(), self.tensors.clear(), self.scalars.clear()
        acl.get_recent_err_msg()


def launch(phase1, args, stream, dev: Dev, phase2=None):
    """Phase 1 + workspace + phase 2 + synchronize; returns (phase1 ret, phase2 ret, sync ret)."""
    ws, ex, ret = phase1(*args)
    if ret != 0:
        return ret, None, None
    workspace = dev.malloc(ws) if ws else None
    name = phase1.__name__.removesuffix("GetWorkspaceSize")
    r2 = (phase2 or getattr(aclnn, name))(workspace, ws, ex, stream)
    if r2 != 0:
        return ret, r2, None
    return ret, r2, acl.rt.synchronize_stream(stream)


# ---- runtime guard ------------------------------------------------------------------------
def restore_runtime(initialized: bool, refs: dict) -> None:
    """Bring the runtime back to ``initialized`` with the device references ``refs``."""
    if rt.STATE.initialized and not initialized:
        acl.finalize()
    if initialized and not rt.STATE.initialized:
        assert acl.init() == 0
    if initialized:
        for device, count in refs.items():
            while rt.STATE.device_refs.get(device, 0) < count:
                assert acl.rt.set_device(device) == 0
            while rt.STATE.device_refs.get(device, 0) > count:
                assert acl.rt.reset_device(device) == 0
        for device in list(rt.STATE.device_refs):
            if device not in refs:
                while device in rt.STATE.device_refs:
                    acl.rt.reset_device(device)
    acl.get_recent_err_msg()


@pytest.fixture
def runtime_guard(acl_runtime):
    """For tests that finalize / re-init: the session's runtime state is restored afterwards."""
    initialized, refs = rt.STATE.initialized, dict(rt.STATE.device_refs)
    yield
    restore_runtime(initialized, refs)


@pytest.fixture
def dev(acl_runtime):
    """A Dev on a fresh stream; everything released (and memory balanced) at teardown."""
    before = mem_state()
    stream, ret = acl.rt.create_stream()
    assert ret == 0
    d = Dev(stream)
    yield d
    d.close()
    acl.rt.destroy_stream(stream)
    acl.get_recent_err_msg()
    assert mem_state() == before, f"device memory not balanced: {before} -> {mem_state()}"
