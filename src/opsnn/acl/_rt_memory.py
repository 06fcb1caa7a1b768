"""``acl.rt``'s memory calls (aclrtMalloc, aclrtMemcpy, aclrtMemset, ...), re-exported by
``acl.rt``: ``(value, ret)`` or ``ret``; never raises.

Device memory is emulated (``opsnn._core.memory``); addresses are ints, every access is
bounds-checked. Host memory is either ``malloc_host`` memory, a pointer from ``acl.util``
(``numpy_to_ptr`` / ``bytes_to_ptr``), or, as a convenience, a NumPy array / bytes object passed
directly to ``memcpy``.
"""

from __future__ import annotations

import numpy as np

from .._core import memory
from .._core.checks import is_c_int, is_null
from .._core.status import AclError, AclnnError
from . import _host
from ._rt_state import STATE
from ._rt_state import c_int as _int
from ._rt_state import c_size_t
from ._rt_state import live_stream as _stream
from ._rt_state import named as _named
from ._rt_state import returns_pair as _pair
from ._rt_state import returns_ret as _ret
from ._rt_state import returns_triple as _triple
from .constants import (ACL_MEMCPY_DEFAULT, ACL_MEMCPY_DEVICE_TO_DEVICE, ACL_MEMCPY_DEVICE_TO_HOST,
                        ACL_MEMCPY_HOST_TO_DEVICE, ACL_MEMCPY_HOST_TO_HOST)

# aclrtMemMallocPolicy: HUGE_FIRST .. HUGE1G_ONLY_P2P, plus OR-able flags (pyacl_conventions §1.1)
_POLICIES = frozenset(range(8))
_BANDWIDTH_FLAGS = 0x0100 | 0x1000
_POLICY_FLAGS = _BANDWIDTH_FLAGS | 0x100000


@_pair
def malloc(size, policy):
    """aclrtMalloc: ``(device_address, ret)``, an int address, 64-byte aligned, of ``size``
    bytes (an int >= 1) of emulated device memory; ``policy`` an aclrtMemMallocPolicy
    (``ACL_MEM_MALLOC_HUGE_FIRST`` ..., with CANN's OR-able flags). The address is 0 when ret is
    not: 100001 before ``init``, 107002 with no device set, 100000 for a bad size or policy,
    200000 beyond the emulated 64 GiB, the host's RAM (less the live device and pinned host
    allocations: both are host memory here) or the device address range, the message naming
    the limit that binds."""
    STATE.require_device("malloc")
    nbytes = _int(size, "size", "malloc", minimum=1)
    mode = _int(policy, "policy", "malloc")
    if (mode & ~_POLICY_FLAGS) not in _POLICIES or bin(mode & _BANDWIDTH_FLAGS).count("1") > 1:
        raise AclnnError(AclError.INVALID_PARAM,
                         f"malloc: policy {mode:#x} is not an aclrtMemMallocPolicy (ACL_MEM_MALLOC_* 0-7, "
                         "optionally OR-ed with one ACL_MEM_TYPE_* bandwidth flag and "
                         "ACL_MEM_ACCESS_USER_SPACE_READONLY)")
    return memory.DEVICE.malloc(nbytes), 0


@_ret
def free(dev_ptr) -> int:
    """aclrtFree: release device memory allocated by ``malloc``. Returns ret: 0; 100001 before
    ``init``, 107002 with no device set, 100000 for an address that is not the start of a live
    device allocation (never allocated, interior, freed already, None, pinned host memory)."""
    STATE.require_device("free")
    memory.DEVICE.free(_int(dev_ptr, "devPtr", "free"))
    return 0


# aclrtMemAttr: ACL_DDR_MEM (0) .. ACL_MEM_P2P_HUGE1G (17), acl_rt.h
_MEM_ATTRS = range(18)


@_triple
def get_mem_info(attr):
    """aclrtGetMemInfo: ``(free, total, ret)``, in bytes, of the emulated device memory.

    ``total`` is its documented capacity, ``opsnn._core.memory.DEVICE_CAPACITY`` (64 GiB, an
    Ascend910B's HBM); ``free`` is what ``malloc`` may still take: the capacity less every live
    allocation as aclrtMalloc pads it (size rounded up to 32 B, plus 32 B), where the capacity is
    the host's RAM if that is less (``memory.AddressSpace.free_bytes``: every emulated allocation
    is host memory; a breaker's pool sized at half the free HBM failed on a 23 GB host). A malloc
    whose padded size is beyond ``free`` is refused (200000); within it, it succeeds unless other
    processes hold the host's memory (they are not counted, so the figures hold from one call
    to the next). The emulated device has one memory, without DDR / HBM, page-size or P2P
    partitions, so every aclrtMemAttr (ACL_DDR_MEM ... ACL_MEM_P2P_HUGE1G) describes all of it
    (on a device the attrs are parts of it: summing ACL_HBM_MEM_HUGE and ACL_HBM_MEM_NORMAL
    here counts it twice). Pinned host memory (malloc_host) is not device memory, but it is the
    host's RAM too: it lowers ``free`` where the host's RAM is what bounds it.

    Returns ``(0, 0, ret)`` on failure: 107016 (ACL_ERROR_RT_INVALID_MEMORY_TYPE, as CANN's
    runtime answers) for an integer that is no aclrtMemAttr, 100000 for a non-integer, 107002
    before set_device (CANN: "specify the compute device first"), 100001 before acl.init."""
    STATE.require_device("get_mem_info")
    if not is_c_int(attr):
        raise AclnnError(AclError.INVALID_PARAM, f"get_mem_info: attr must be an aclrtMemAttr (int), got {attr!r}")
    if attr not in _MEM_ATTRS:
        raise AclnnError(AclError.RT_INVALID_MEMORY_TYPE,
                         f"get_mem_info: attr {int(attr)} is not an aclrtMemAttr (ACL_DDR_MEM {_MEM_ATTRS.start} .. "
                         f"ACL_MEM_P2P_HUGE1G {_MEM_ATTRS.stop - 1})")
    return memory.DEVICE.free_bytes, memory.DEVICE.capacity, 0


@_ret
def memset(dev_ptr, max_count, value, count) -> int:
    """aclrtMemset (synchronous): set ``count`` bytes at ``dev_ptr`` (device memory, or host
    memory from ``malloc_host`` / ``acl.util``) to ``value``'s low byte, as C's memset.
    ``max_count`` bounds the destination. Returns ret: 0; 100001 before ``init``; 107002 for
    device memory with no device set (host memory needs none); 100000 for count > max_count, a
    value outside int32, a range outside an allocation or freed memory."""
    target, byte, _ = _memset_region("memset", dev_ptr, max_count, value, count)
    target[:] = byte
    return 0


@_ret
def memset_async(dev_ptr, max_count, value, count, stream) -> int:
    """aclrtMemsetAsync: queue the memset ``memset`` would make on ``stream`` (None or 0: the
    default stream). Its arguments are checked now, as memset's (100000; 107002 without a
    device; 200005 for a stream that is not live); the bytes are set when the stream runs, in
    order with the copies and launches queued before and after it, as memcpy_async's copy.
    Memory freed before then fails the task at the stream's synchronize (500003, naming it).
    Returns ret."""
    target, byte, allocations = _memset_region("memset_async", dev_ptr, max_count, value, count)

    def fill() -> None:
        target[:] = byte
    _enqueue_write(stream, "memset_async", "memset", allocations, fill)
    return 0


def _memset_region(call: str, dev_ptr, max_count, value, count) -> tuple:
    """memset's checks: the destination's bytes (a view), the byte to write (``value``'s low
    byte) and the allocation the destination lies in, for a queued memset to check again."""
    STATE.require_init(call)
    max_count = c_size_t(max_count, "maxCount", call)
    count = _int(count, "count", call)
    if not is_c_int(value) or not -2**31 <= value < 2**31:
        raise AclnnError(AclError.INVALID_PARAM, f"{call}: value must be an int32, got {value!r}")
    if count > max_count:
        raise AclnnError(AclError.INVALID_PARAM, f"{call}: count {count} exceeds maxCount {max_count}")
    side = _side_of(dev_ptr)
    if side == "device":
        STATE.require_device(call)
    allocations = _allocations(dev_ptr)  # (before the check: see _allocations)
    return (_region(dev_ptr, count, side, f"{call} destination", writable=True), int(value) & 0xFF,
            allocations)


@_pair
def malloc_host(size):
    """aclrtMallocHost: ``(host_address, ret)`` of page-locked (here: registered) host memory.
    ``(0, 200000)`` beyond the host's RAM less the live device and pinned host allocations, or
    beyond the 64 GiB opsnn caps pinned host memory at (``memory.HOST_CAPACITY``), the message
    naming the one that binds; 100000 for a ``size`` that is no int >= 1, 100001 before
    ``init`` (no device is needed)."""
    STATE.require_init("malloc_host")
    return memory.HOST.malloc(_int(size, "size", "malloc_host", minimum=1), "malloc_host"), 0


@_ret
def free_host(host_ptr) -> int:
    """aclrtFreeHost: release pinned host memory allocated by ``malloc_host``. Returns ret: 0;
    100001 before ``init``, 100000 for an address that is not the start of a live
    ``malloc_host`` allocation (a device address included)."""
    STATE.require_init("free_host")
    memory.HOST.free(_int(host_ptr, "hostPtr", "free_host"), "free_host")
    return 0


@_ret
def memcpy(dst, dest_max, src, count, kind) -> int:
    """aclrtMemcpy (synchronous): copy ``count`` bytes; ``dest_max`` bounds the destination.

    ``kind``: ACL_MEMCPY_HOST_TO_HOST/HOST_TO_DEVICE/DEVICE_TO_HOST/DEVICE_TO_DEVICE or
    ACL_MEMCPY_DEFAULT (direction inferred from the addresses). Host memory is a pointer from
    ``malloc_host`` or ``acl.util``, or a NumPy array / bytes object itself (a destination array
    C-contiguous and writable). Returns ret: 0; 100001 before ``init``; 100000 for a NULL
    ``dst`` or ``src`` (None, 0) or a kind that is no aclrtMemcpyKind, then 107000
    (ACL_ERROR_RT_PARAM_INVALID, CANN's runtime answer) for a ``dest_max`` or ``count`` of 0 or
    count > dest_max; 107002 for a copy that touches device memory with no device set (a
    host-to-host one needs none); 100000 for a range outside an allocation or freed, a kind its
    addresses contradict.
    """
    target, source, _, _ = _copy_regions("memcpy", dst, dest_max, src, count, kind)
    target[:] = source
    return 0


@_ret
def memcpy_async(dst, dest_max, src, count, kind, stream) -> int:
    """aclrtMemcpyAsync: queue the copy ``memcpy`` would make on ``stream`` (None or 0: the
    default stream). Its arguments are checked now, as memcpy's (100000; 107000, but for a
    ``dest_max`` of 0 alone, which aclrtMemcpyAsync leaves to count > dest_max; 107002 without a
    device; 200005 for a stream that is not live; 207000, ACL_ERROR_RT_FEATURE_NOT_SUPPORT, for a
    host-to-host copy, by its kind or by DEFAULT between host addresses, which CANN documents it
    does not queue in the EP form opsnn's run mode ACL_HOST stands for); the bytes move when the
    stream runs, in order with the operators queued before and after it (so a copy back queued
    after a launch reads its result). Memory freed before then fails the copy at the stream's
    synchronize (500003, naming it), where a device would fault. A non-contiguous NumPy array
    given as the source is read at the call (into a private contiguous copy, as numpy_to_ptr makes
    of one); the bytes of a pointer or of a contiguous array, when the stream runs. Returns ret."""
    target, source, allocations, sides = _copy_regions("memcpy_async", dst, dest_max, src, count, kind)
    if sides == ("host", "host"):
        _refuse_host_to_host("memcpy_async", kind, stream)

    def copy() -> None:
        target[:] = source
    _enqueue_write(stream, "memcpy_async", "copy", allocations, copy)
    return 0


def _refuse_host_to_host(call: str, kind: int, stream) -> None:
    """ACL_ERROR_RT_FEATURE_NOT_SUPPORT (207000) for a queued copy from host memory to host
    memory (``kind`` HOST_TO_HOST, or DEFAULT resolved so): aclrtMemcpyAsync's documentation
    refuses it in the EP form, a card beside the host, which opsnn's run mode (ACL_HOST) is; its
    runtime checks the device and the stream first (107002, 200005 here)."""
    STATE.require_device(call)
    _stream(stream, call)
    # (DEFAULT: the two host addresses, not the kind, make it host to host)
    how = "with both addresses in host memory" if kind == ACL_MEMCPY_DEFAULT else "copies host memory to host memory"
    raise AclnnError(AclError.RT_FEATURE_NOT_SUPPORT,
                     f"{call}: {_KIND_NAMES[kind]} {how}, which CANN's runtime does not queue where the device "
                     "is a card beside the host (run mode ACL_HOST): use acl.rt.memcpy")


def _enqueue_write(stream, call: str, what: str, allocations: list, write) -> None:
    """Queue ``write`` (the ``what``) as task ``call`` on the live stream handle ``stream``
    names (107002 without a device: a stream lives in the device's context); when the stream
    runs it, it first checks that the memory it touches is still allocated (freed memory fails
    the task: 500003 at the synchronize, where a device would fault)."""
    STATE.require_device(call)
    stream = _stream(stream, call)

    def task() -> None:
        for alloc in allocations:
            if not alloc.live:
                raise AclnnError(AclError.INVALID_PARAM, f"the {alloc.kind} memory at {alloc.addr:#x} was "
                                                         f"freed before the {what} ran")
        write()
    with _named(call):  # (a stream another thread destroys meanwhile refuses the task)
        stream.enqueue(call, task)


def _allocations(*ptrs) -> list:
    """The allocations (device, malloc_host) the addresses among ``ptrs`` lie in, for a queued
    task to check when it runs. Looked up before the regions are checked: one freed by another
    thread in between is then refused by the check, or found dead when the task runs; looked up
    after, it was missing from the list and the task ran unchecked."""
    return [alloc for alloc in (memory.DEVICE.find(int(ptr)) or memory.HOST.find(int(ptr))
                                for ptr in ptrs if is_c_int(ptr)) if alloc is not None]


_MEMCPY_SIDES = {ACL_MEMCPY_HOST_TO_HOST: ("host", "host"), ACL_MEMCPY_HOST_TO_DEVICE: ("host", "device"),
                 ACL_MEMCPY_DEVICE_TO_HOST: ("device", "host"), ACL_MEMCPY_DEVICE_TO_DEVICE: ("device", "device")}
_MEMCPY_KINDS = ("ACL_MEMCPY_HOST_TO_HOST 0, ACL_MEMCPY_HOST_TO_DEVICE 1, ACL_MEMCPY_DEVICE_TO_HOST 2, "
                 "ACL_MEMCPY_DEVICE_TO_DEVICE 3, ACL_MEMCPY_DEFAULT 4")  # what a refused kind may be


def _copy_regions(call: str, dst, dest_max, src, count, kind) -> tuple:
    """memcpy's checks: the destination's and the source's bytes (views), the allocations they
    lie in (device, malloc_host), for a queued copy to check again when it runs, and the copy's
    (source, destination) sides, "host" or "device", the kind's or, for DEFAULT, the addresses'."""
    STATE.require_init(call)
    count = _int(count, "count", call)
    dest_max = c_size_t(dest_max, "destMax", call)
    kind = _int(kind, "kind", call)
    for name, ptr in (("dst", dst), ("src", src)):  # aclrtMemcpy's own checks: NULL, then the kind
        if is_null(ptr):
            raise AclnnError(AclError.INVALID_PARAM, f"{call}: {name} is a null pointer ({ptr!r})")
    if kind == ACL_MEMCPY_DEFAULT:
        sides = (_side_of(src), _side_of(dst))
    elif kind in _MEMCPY_SIDES:
        sides = _MEMCPY_SIDES[kind]
    else:
        raise AclnnError(AclError.INVALID_PARAM, f"{call}: kind {kind} is not an aclrtMemcpyKind "
                                                 f"({_MEMCPY_KINDS})")
    _check_copy_sizes(call, dest_max, count)
    if "device" in sides:
        STATE.require_device(call)
    allocations = _allocations(dst, src)  # (before the checks: see _allocations)
    try:
        source = _region(src, count, sides[0], f"{call} source", writable=False)
        target = _region(dst, count, sides[1], f"{call} destination", writable=True)
    except AclnnError as exc:
        raise _wrong_kind(exc, call, src, dst, sides, kind) from None
    return target, source, allocations, sides


def _check_copy_sizes(call: str, dest_max: int, count: int) -> None:
    """The sizes rtMemcpy / rtMemcpyAsync refuse before touching an address (hicann/runtime
    ApiErrorDecorator::MemCopySync, MemcpyAsync): a destMax of 0 (the synchronous copy only),
    a count of 0, a count past destMax; ACL_ERROR_RT_PARAM_INVALID (107000), as aclrtMemcpy
    passes the runtime's status on. So a copy of 0 bytes fails here as on a device."""
    if dest_max == 0 and call == "memcpy":
        raise AclnnError(AclError.RT_PARAM_INVALID, f"{call}: destMax must be greater than 0 (bytes), got 0")
    if count == 0:
        raise AclnnError(AclError.RT_PARAM_INVALID, f"{call}: count must be greater than 0 (bytes), got 0")
    if count > dest_max:
        raise AclnnError(AclError.RT_PARAM_INVALID, f"{call}: count {count} exceeds destMax {dest_max}")


_KIND_NAMES = {ACL_MEMCPY_HOST_TO_HOST: "ACL_MEMCPY_HOST_TO_HOST", ACL_MEMCPY_HOST_TO_DEVICE: "ACL_MEMCPY_HOST_TO_DEVICE",
               ACL_MEMCPY_DEVICE_TO_HOST: "ACL_MEMCPY_DEVICE_TO_HOST",
               ACL_MEMCPY_DEVICE_TO_DEVICE: "ACL_MEMCPY_DEVICE_TO_DEVICE", ACL_MEMCPY_DEFAULT: "ACL_MEMCPY_DEFAULT"}


def _wrong_kind(exc: AclnnError, call: str, src, dst, sides: tuple, kind: int) -> AclnnError:
    """``exc`` (an address refused), told where the kind and the addresses disagree: a device
    address where the kind reads or writes host memory, or known host memory where it wants
    device memory (else ``exc`` as it is)."""
    for ptr, side, what in ((src, sides[0], "source"), (dst, sides[1], "destination")):
        if not is_c_int(ptr) or ptr == 0:
            continue
        actual = _side_of(ptr)
        if actual == "host" and side == "device" and not (_host.known(int(ptr)) or memory.HOST.spans(int(ptr))):
            continue  # an unknown address: exc says so
        if actual != side:
            return AclnnError(exc.status, f"{call} {what}: {int(ptr):#x} is {actual} memory, but "
                                          f"{_KIND_NAMES[kind]} takes {side} memory there; pass the kind "
                                          f"for the copy's direction, or ACL_MEMCPY_DEFAULT")
    return exc


def _side_of(ptr) -> str:
    """Which memory an address given without a direction (memcpy's DEFAULT kind, memset) is in:
    the emulated device range's addresses are device ones, freed ones too (so their refusal
    says the device allocation is gone, not that host memory is unknown)."""
    if is_c_int(ptr) and memory.DEVICE.spans(int(ptr)):
        return "device"
    return "host"


def _region(ptr, nbytes: int, side: str, what: str, writable: bool) -> np.ndarray:
    if side == "device":
        if not is_c_int(ptr):
            raise AclnnError(AclError.INVALID_PARAM, f"{what}: a device address (int) was expected "
                                                     f"for this memcpy kind, got {type(ptr).__name__}")
        return memory.DEVICE.region(int(ptr), nbytes, what)
    return _host.region(ptr, nbytes, what, writable)
