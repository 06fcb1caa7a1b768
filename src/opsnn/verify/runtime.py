"""One case run the way a CANN user runs it (``run_aclnn``): device memory and a copy of each
input, the aclTensors and aclScalars, GetWorkspaceSize, a workspace, phase 2, a stream
synchronize and the copy back, every handle destroyed and freed again whatever happens, in
one acl ``Session`` (init, device 0, one stream) for the whole verify run.

Separate because it is verify's only contact with the emulated acl runtime: a failure status
from it is a ``CaseError`` carrying that status, which the command reports.
"""

from __future__ import annotations

import contextlib
import math
from pathlib import Path

import numpy as np

from opsnn._core.dtypes import DataType, Format, from_numpy
from opsnn.verify.bindings import Arrays, OpBinding, Scalars
from opsnn.verify.cases import Case, TensorSpec
from opsnn.verify.inputs import python_number


class CaseError(Exception):
    """A runtime or operator call of a case returned a failure status (``status``, None where
    no call returned one)."""

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.status = status


class Session:
    """One acl session for a verify run: init, device 0, one stream; torn down in reverse."""

    def __init__(self):
        from opsnn import acl, aclnn

        self.acl, self.aclnn = acl, aclnn
        self.stream = None
        self._owns_init = False
        self.dump_labels: dict[str, str] = {}  # case file (resolved) -> its --dump folder name
        self.dump_written: list[Path] = []     # the case folders this run wrote, in order
        self.dump_foreign: list[Path] = []     # what it removed from them that no dump wrote
        self.dump_emptied: set[Path] = set()   # its case folders the probe emptied, no case run there yet

    def __enter__(self) -> Session:
        ret = self.acl.init()
        self._owns_init = ret == self.acl.ACL_SUCCESS  # else someone else initialised acl
        _check(self.acl.rt.set_device(0), "acl.rt.set_device", self.acl)
        self.stream, ret = self.acl.rt.create_stream()
        _check(ret, "acl.rt.create_stream", self.acl)
        return self

    def __exit__(self, *exc) -> None:
        self.acl.rt.destroy_stream(self.stream)
        self.acl.rt.reset_device(0)
        if self._owns_init:
            self.acl.finalize()

    def missing(self, binding: OpBinding) -> bool:
        return not all(hasattr(self.aclnn, n) for n in (binding.aclnn, binding.aclnn + "GetWorkspaceSize"))


def _check(ret: int, call: str, acl) -> None:
    """Raise CaseError with the status and acl's recent error message unless ``ret`` is 0."""
    if ret != 0:
        message = acl.get_recent_err_msg()
        raise CaseError(f"{call} returned {ret}" + (f": {message}" if message else ""), ret)


def run_aclnn(session: Session, binding: OpBinding, case: Case, inputs: Arrays, scalars: Scalars) -> np.ndarray:
    """Run one case the way a CANN user does; returns the output copied back to the host."""
    acl = session.acl
    with contextlib.ExitStack() as stack:
        tensors = [_device_tensor(stack, acl, inputs[role], _spec(case, role).format)[0]
                   for role in binding.tensors]
        out = np.empty(case.out_shape, case.out_dtype)
        out_tensor, out_addr = _device_tensor(stack, acl, out, case.out_format, upload=False)
        handles = [_scalar(stack, acl, scalars[role]) for role in binding.scalars]
        flags = [dict(case.flags)[name] for name in binding.flags]
        size, executor, ret = getattr(session.aclnn, binding.aclnn + "GetWorkspaceSize")(
            *tensors, *handles, *flags, out_tensor)
        _check(ret, binding.aclnn + "GetWorkspaceSize", acl)
        workspace = _malloc(stack, acl, size) if size > 0 else None
        _check(getattr(session.aclnn, binding.aclnn)(workspace, size, executor, session.stream), binding.aclnn, acl)
        _check(acl.rt.synchronize_stream(session.stream), "acl.rt.synchronize_stream", acl)
        if out.nbytes:  # (aclrtMemcpy refuses a count of 0, as the upload's guard knows)
            _check(acl.rt.memcpy(out, out.nbytes, out_addr, out.nbytes, acl.ACL_MEMCPY_DEVICE_TO_HOST),
                   "acl.rt.memcpy (device to host)", acl)
    return out


def _spec(case: Case, role: str) -> TensorSpec:
    return next(t for t in case.tensors if t.role == role)


def _malloc(stack: contextlib.ExitStack, acl, nbytes: int) -> int:
    # aclrtMalloc refuses 0 bytes; an empty tensor still needs an address to describe.
    addr, ret = acl.rt.malloc(max(nbytes, 1), acl.ACL_MEM_MALLOC_HUGE_FIRST)
    _check(ret, f"acl.rt.malloc({nbytes})", acl)
    stack.callback(acl.rt.free, addr)
    return addr


def _device_tensor(stack: contextlib.ExitStack, acl, host: np.ndarray, fmt: str, upload: bool = True):
    """Device copy of a host array and its contiguous aclTensor; returns (tensor, address)."""
    addr = _malloc(stack, acl, host.nbytes)
    if upload and host.nbytes:
        _check(acl.rt.memcpy(addr, host.nbytes, np.ascontiguousarray(host), host.nbytes,
                             acl.ACL_MEMCPY_HOST_TO_DEVICE), "acl.rt.memcpy (host to device)", acl)
    strides = [math.prod(host.shape[i + 1:]) for i in range(host.ndim)]
    acl_format = int(Format[fmt])  # (a name casefiles._format read)
    tensor = acl.create_tensor(list(host.shape), int(from_numpy(host.dtype)), strides, 0, acl_format,
                               list(host.shape), addr)
    if tensor is None:
        raise CaseError(f"acl.create_tensor failed: {acl.get_recent_err_msg()}")
    stack.callback(acl.destroy_tensor, tensor)
    return tensor, addr


def _scalar(stack: contextlib.ExitStack, acl, value: np.generic):
    dtype = from_numpy(value.dtype)
    python_value = python_number(value)
    handle = acl.create_scalar(python_value, int(dtype))
    if handle is None:
        raise CaseError(f"acl.create_scalar({python_value!r}, {DataType(dtype).acl_name}) failed: "
                        f"{acl.get_recent_err_msg()}")
    stack.callback(acl.destroy_scalar, handle)
    return handle

