"""The helpers every ops-nn aclnn C sample defines, in Python (CHECK_RET, GetShapeSize, Init,
CreateAclTensor and the result read-back/print)."""

from __future__ import annotations

import sys

import numpy as np

import opsnn.acl as acl
from opsnn._core import platform
from opsnn.cli_args import Parser, add_soc_option
from opsnn.cli_stdout import run_writing_stdout


class SampleError(Exception):
    """A sample step failed; carries the step name and the status code (the C sample returns it)."""

    def __init__(self, what: str, ret: int):
        super().__init__(f"{what} failed. ERROR: {int(ret)}\n{acl.get_recent_err_msg()}")
        self.ret = int(ret)


def run_as_script(main, module: str) -> None:
    """``python -m <module>``: read its one option, ``--soc`` (as ``opsnn --soc``; any other
    argument is a usage error, exit 2: a new user's ``--soc Ascend310B`` had been ignored, the
    samples passing on the default SoC), then exit with what ``main()`` returns, as the C
    sample's ``main`` does: a failed step's ret (its message printed; the process's status is
    that ret modulo 256, 561003 as 107, as a C ``return ret`` from main gives), or 141 when
    stdout's reader went away (``| head``), as ``opsnn`` exits then, instead of a
    BrokenPipeError traceback, and 1 where stdout would not take the output (a full disk), in
    one line (``unwritable_stdout``)."""
    doc = sys.modules[main.__module__].__doc__ or ""
    # run by path (examples/ links to these files), the usage names that file, as argparse does
    by_path = getattr(sys.modules["__main__"], "__spec__", None) is None
    # opsnn's parser: --soc=-- refused (argparse's kept the default silently), and help into a
    # closed pipe ends with 141 below, as opsnn's does (argparse's exited 0)
    # (the docstring's first line, its reST ``code`` written as help texts write it, `code`)
    parser = Parser(prog=None if by_path else f"python -m {module}", description=doc.split("\n")[0].replace("``", "`"))
    add_soc_option(parser)

    def run() -> int:
        soc = parser.parse_args().soc
        try:
            with platform.use_soc(soc or platform.current().name):
                return main()
        except SampleError as exc:
            print(exc)
            return exc.ret

    # (a closed pipe: 141, a full disk: one line and 1, as opsnn's commands; it was a traceback)
    sys.exit(run_writing_stdout(parser.prog, run))


def run_sample(main, emit=print) -> int:
    """One sample's ``main(emit=emit)`` beside others (``opsnn demo``, ``python -m opsnn.samples``):
    its ret, 0 where it ran through. A failed step's message is emitted, as the C sample prints it
    before it returns the status, and the runtime finalized, as that sample's process would end
    with it, so the next sample initialises afresh."""
    try:
        return main(emit=emit)
    except SampleError as exc:
        emit(str(exc))
        acl.finalize()
        return exc.ret


def check_ret(what: str, ret: int) -> None:
    """CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("<what> failed. ERROR: %d\\n", ret); return ret)."""
    if ret != acl.ACL_SUCCESS:
        raise SampleError(what, ret)


def get_shape_size(shape) -> int:
    return int(np.prod(shape, dtype=np.int64))


def init(device_id: int) -> int:
    """(fixed pattern) aclInit -> aclrtSetDevice -> aclrtCreateStream; returns the stream."""
    check_ret("aclInit", acl.init())
    check_ret("aclrtSetDevice", acl.rt.set_device(device_id))
    stream, ret = acl.rt.create_stream()
    check_ret("aclrtCreateStream", ret)
    return stream


def create_acl_tensor(host_data, shape, data_type):
    """aclrtMalloc + aclrtMemcpy(host -> device) + aclCreateTensor with contiguous strides.

    Returns ``(device_addr, tensor)``.
    """
    host = np.asarray(host_data, dtype=acl_to_numpy(data_type))
    size = get_shape_size(shape) * host.itemsize
    device_addr, ret = acl.rt.malloc(size, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    check_ret("aclrtMalloc", ret)
    check_ret("aclrtMemcpy", acl.rt.memcpy(device_addr, size, host, size, acl.ACL_MEMCPY_HOST_TO_DEVICE))
    strides = [1] * len(shape)  # strides of a contiguous tensor
    for i in range(len(shape) - 2, -1, -1):
        strides[i] = shape[i + 1] * strides[i + 1]
    tensor = acl.create_tensor(shape, data_type, strides, 0, acl.ACL_FORMAT_ND, shape, device_addr)
    return device_addr, tensor


def print_result(device_addr: int, shape, data_type, emit=print) -> np.ndarray:
    """aclrtMemcpy(device -> host), then LOG_PRINT("result[%ld] is: %f\\n") per element."""
    size = get_shape_size(shape)
    result_data = np.zeros(size, dtype=acl_to_numpy(data_type))
    check_ret("copy result from device to host",
              acl.rt.memcpy(result_data, result_data.nbytes, device_addr, result_data.nbytes,
                            acl.ACL_MEMCPY_DEVICE_TO_HOST))
    for i in range(size):
        emit(f"result[{i}] is: {float(result_data[i]):f}")
    return result_data


def acl_to_numpy(data_type) -> np.dtype:
    from opsnn._core.dtypes import to_numpy

    return to_numpy(data_type)


def finalize(device_id: int, stream: int, device_addrs) -> None:
    """(fixed pattern) free device memory, destroy the stream, reset the device, aclFinalize."""
    for addr in device_addrs:
        acl.rt.free(addr)
    acl.rt.destroy_stream(stream)
    acl.rt.reset_device(device_id)
    acl.finalize()
