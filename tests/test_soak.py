"""Resource soak (docs/reliability.md, "soak"): 100 000 create / run / destroy cycles through the
aclnn two-phase API (both operators, with and without a workspace, with refused misuse mixed
in) plus Pythonic calls leave the emulated device memory exactly where it was and the process
memory (RSS) flat.

The figures are printed, attached to the test report (``record_property``) and written to
``tests/artifacts/soak.json``. ``OPSNN_SOAK_CYCLES=1000000 pytest tests/test_soak.py -s`` runs a
longer soak.
"""

from __future__ import annotations

import gc
import json
import os
import pathlib
import time

import numpy as np
import pytest

import opsnn
import opsnn.acl as acl
from hostile import F16, F32, mem_state, rss_bytes
from opsnn import aclnn
from opsnn.acl import _host

CYCLES = int(os.environ.get("OPSNN_SOAK_CYCLES", "100000"))
WARMUP = 3000  # cycles before the baseline: caches (plans, compiled kernels, pools) fill up
RSS_BOUND = 16 << 20  # bytes of RSS growth allowed over the measured cycles
REPORT = pathlib.Path(__file__).parent / "artifacts" / "soak.json"

G = np.array([1.0, -2.0, 3.0, -4.0, 0.0, 5.0, -6.0, 7.0], F32)
X = np.array([-1.0, 0.5, 2.0, -0.0, 1.0, -3.0, 0.25, 9.0], F32)
EXPECTED = {"leaky": np.where(X > 0, G, G * np.float32(0.5)),
            "hardtanh": np.where((X > -1) & (X < 1), G, 0).astype(F32)}


def _upload(host: np.ndarray):
    addr, ret = acl.rt.malloc(host.nbytes, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    assert ret == 0, acl.get_recent_err_msg()
    ptr = acl.util.numpy_to_ptr(host)  # exercised every cycle: dead arrays must not stay registered
    assert acl.rt.memcpy(addr, host.nbytes, ptr, host.nbytes, acl.ACL_MEMCPY_HOST_TO_DEVICE) == 0
    kind = {F32: acl.ACL_FLOAT, F16: acl.ACL_FLOAT16}[host.dtype]
    t = acl.create_tensor([host.size], kind, [1], 0, acl.ACL_FORMAT_ND, [host.size], addr)
    assert t is not None
    return addr, t


def cycle(i: int, stream) -> None:
    """One create / run / destroy cycle; every few cycles a variant or a refused misuse."""
    op = "hardtanh" if i % 2 else "leaky"
    grad = G.astype(F16) if i % 10 == 3 else G  # fp16 grad: a workspace for the Cast
    addrs, tensors = [], []
    for host in (grad, X, np.zeros(8, F32)):
        addr, t = _upload(host)
        addrs.append(addr), tensors.append(t)
    scalars = [acl.create_scalar(0.5, acl.ACL_DOUBLE)] if op == "leaky" else \
        [acl.create_scalar(-1.0, acl.ACL_FLOAT), acl.create_scalar(1.0, acl.ACL_FLOAT)]
    if op == "leaky":
        ws, ex, ret = aclnn.aclnnLeakyReluBackwardGetWorkspaceSize(tensors[0], tensors[1], scalars[0], False,
                                                                  tensors[2])
        phase2 = aclnn.aclnnLeakyReluBackward
    else:
        if grad.dtype == F16:
            grad_t = tensors[0]
            tensors[0] = acl.create_tensor([8], acl.ACL_FLOAT, [1], 0, acl.ACL_FORMAT_ND, [8], addrs[1])
            acl.destroy_tensor(grad_t)  # hardtanh has no promotion: use an fp32 grad (X's bytes)
        ws, ex, ret = aclnn.aclnnHardtanhBackwardGetWorkspaceSize(tensors[0], tensors[1], scalars[0], scalars[1],
                                                                 tensors[2])
        phase2 = aclnn.aclnnHardtanhBackward
    assert ret == 0, acl.get_recent_err_msg()
    workspace = None
    if ws:
        workspace, r = acl.rt.malloc(ws, acl.ACL_MEM_MALLOC_HUGE_FIRST)
        assert r == 0
    if i % 13 == 5:  # misuse that must be refused without leaking: too small a workspace
        assert phase2(None, ws - 1 if ws else -1, ex, stream) == 161002
    assert phase2(workspace, ws, ex, stream) == 0, acl.get_recent_err_msg()
    if i % 13 == 7:  # misuse: a second run of the single-use executor
        assert phase2(workspace, ws, ex, stream) == 161002
    assert acl.rt.synchronize_stream(stream) == 0, acl.get_recent_err_msg()
    if i % 97 == 0:
        out = np.empty(8, F32)
        assert acl.rt.memcpy(out, 32, addrs[2], 32, acl.ACL_MEMCPY_DEVICE_TO_HOST) == 0
        expected = EXPECTED[op] if grad.dtype == F32 or op == "leaky" else \
            np.where((X > -1) & (X < 1), X, 0).astype(F32)
        np.testing.assert_array_equal(out, expected)
    if i % 17 == 0:  # a destroyed scalar passed to phase 1: refused
        dead = acl.create_scalar(0.5, acl.ACL_FLOAT)
        acl.destroy_scalar(dead)
        assert aclnn.aclnnLeakyReluBackwardGetWorkspaceSize(tensors[0], tensors[1], dead, False,
                                                           tensors[2])[2] == 161002
    for t in tensors:
        assert acl.destroy_tensor(t) == 0
    for s in scalars:
        assert acl.destroy_scalar(s) == 0
    for addr in addrs + ([workspace] if workspace else []):
        assert acl.rt.free(addr) == 0
    if i % 7 == 0:  # the Pythonic layer, including a refused call
        res = opsnn.leaky_relu_backward(G, X, 0.5) if op == "leaky" else opsnn.hardtanh_backward(G, X)
        np.testing.assert_array_equal(res, EXPECTED[op])
        try:
            opsnn.hardtanh_backward(G, X[:4])
        except opsnn.AclnnError as exc:
            assert exc.status == 161002
    if i % 50 == 0:  # streams come and go too
        s2, r = acl.rt.create_stream()
        assert r == 0 and acl.rt.destroy_stream(s2) == 0


@pytest.mark.slow
def test_soak_create_run_destroy(acl_runtime, record_property):
    """CYCLES cycles after a warm-up: device memory exactly balanced, RSS growth < 16 MiB,
    no registered host pointer left behind; the figures are reported."""
    stream, ret = acl.rt.create_stream()
    assert ret == 0
    try:
        for i in range(WARMUP):
            cycle(i, stream)
        gc.collect()
        mem0, rss0, hosts0 = mem_state(), rss_bytes(), len(_host._registered)
        t0 = time.perf_counter()
        rss_mid = rss0
        for i in range(CYCLES):
            cycle(WARMUP + i, stream)
            if i == CYCLES // 2:
                rss_mid = rss_bytes()
        seconds = time.perf_counter() - t0
        gc.collect()
        mem1, rss1, hosts1 = mem_state(), rss_bytes(), len(_host._registered)
    finally:
        acl.rt.destroy_stream(stream)
    figures = {
        "cycles": CYCLES, "warmup_cycles": WARMUP, "seconds": round(seconds, 2),
        "us_per_cycle": round(seconds / max(CYCLES, 1) * 1e6, 1),
        "device_allocated_bytes_before": mem0[0], "device_allocated_bytes_after": mem1[0],
        "device_allocation_count_before": mem0[1], "device_allocation_count_after": mem1[1],
        "rss_bytes_before": rss0, "rss_bytes_middle": rss_mid, "rss_bytes_after": rss1,
        "rss_growth_bytes": rss1 - rss0, "registered_host_pointers_before": hosts0,
        "registered_host_pointers_after": hosts1,
    }
    for key, value in figures.items():
        record_property(key, value)
    REPORT.parent.mkdir(exist_ok=True)
    REPORT.write_text(json.dumps(figures, indent=2) + "\n")
    print("\nsoak:", json.dumps(figures))
    assert mem1 == mem0, f"device memory leaked: {figures}"
    assert rss1 - rss0 < RSS_BOUND, f"RSS grew: {figures}"
    assert hosts1 <= hosts0 + 1, f"host pointers leaked: {figures}"
