"""Emulated device and host memory with integer addresses, bounds checks and accounting.

``acl.rt.malloc`` hands out 64-byte aligned integer addresses (pyACL returns the C pointer as an
int). Every access resolves an address range to the allocation holding it; a range that leaves
the allocation, or an address that was freed or never allocated, raises ``AclnnError``.
"""

from __future__ import annotations

import bisect
import dataclasses
import functools
import os

import numpy as np

from . import forksafe
from .checks import brief
from .status import AclError, AclnnError

ALIGN = 64


@dataclasses.dataclass
class Allocation:
    addr: int
    size: int  # bytes the caller asked for
    buffer: np.ndarray  # uint8, size rounded up like aclrtMalloc (+32 B, 32 B multiple)
    kind: str  # "device" or "host"
    # False once freed (or the runtime was finalized). Addresses are never reused, so a holder
    # of this object (a tensor's cached view, a queued task) can tell "still live" in one read.
    live: bool = True


# Bumped after an allocation is freed, a tensor destroyed or moved (``released``): a repeatable
# launch that found its tensors and memory alive at one count still has them while the count has
# not moved, so its relaunch skips walking them (aclnn._Launch.intact). Bumped under a lock so
# that releases in two threads move it twice (``+= 1`` alone can lose one between threads).
RELEASE_COUNT = 0
_RELEASE_LOCK = forksafe.lock()
# Called at each release: caches that keep views of device memory between calls let go of them
# (aclnn's last launch of a fresh executor per operator), so a freed buffer's host memory goes.
RELEASE_HOOKS: list = []


def released() -> None:
    global RELEASE_COUNT
    with _RELEASE_LOCK:
        RELEASE_COUNT += 1
    for hook in RELEASE_HOOKS:
        hook()


# Capacity of the emulated memories: the device's, an Ascend910B's 64 GiB of HBM (get_mem_info's
# total); pinned host memory (aclrtMallocHost) is the host's RAM, which bounds it on a device
# too, and opsnn caps it at as much again, a bound of its own. A request beyond what is left is
# refused with ACL_ERROR_BAD_ALLOC before any host memory is touched.
DEVICE_CAPACITY = 64 << 30
HOST_CAPACITY = 64 << 30


@functools.cache
def host_total() -> int | None:
    """Bytes of host RAM this process may use: Linux's MemTotal, or the least memory limit of the
    control groups holding this process (its own and each one above it, cgroup v2 or v1), where
    less (a container's); elsewhere the physical pages; None where none can be read. Every
    emulated allocation, device or pinned host, is host memory, so the live ones count against it
    (``AddressSpace.free_bytes``)."""
    sizes = []
    try:
        with open("/proc/meminfo") as meminfo:
            sizes += [int(line.split()[1]) * 1024 for line in meminfo if line.startswith("MemTotal:")]
    except (OSError, ValueError, IndexError):
        try:
            sizes.append(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
        except (AttributeError, OSError, ValueError):
            pass
    try:
        with open("/proc/self/cgroup") as f:
            groups = f.read()
    except OSError:
        groups = ""
    for limit in cgroup_limit_files(groups):
        try:
            with open(limit) as f:
                sizes.append(int(f.read().strip()))  # ("max", no limit, is no int)
        except (OSError, ValueError):
            pass
    return min(sizes) if sizes else None


def host_available() -> int | None:
    """Bytes of host RAM a new allocation may still get now: Linux's MemAvailable, at most
    ``host_total()``; None where it cannot be read. Linux overcommits, so an allocation beyond it
    succeeds and the kernel's out-of-memory killer ends the process once the pages are touched:
    work that will touch that much checks this first."""
    try:
        with open("/proc/meminfo") as meminfo:
            available = [int(line.split()[1]) * 1024 for line in meminfo if line.startswith("MemAvailable:")]
    except (OSError, ValueError, IndexError):
        return None
    if not available:
        return None
    total = host_total()
    return available[0] if total is None else min(available[0], total)


def cgroup_limit_files(groups: str) -> list[str]:
    """The memory-limit files of the control groups that ``groups`` (the text of
    /proc/self/cgroup) names, each group's own first, then each parent up to the hierarchy's
    root: a limit set on any of them bounds the process (a container's cgroup namespace shows its
    own group as the root, a systemd service or a batch job a nested path). Without that text,
    the roots' files."""
    files = []
    for line in groups.splitlines():  # "hierarchy-id:controllers:/path"; v2's single line is "0::/path"
        if line.count(":") < 2:
            continue
        _, controllers, path = line.split(":", 2)
        if controllers == "":
            root, name = "/sys/fs/cgroup", "memory.max"
        elif "memory" in controllers.split(","):
            root, name = "/sys/fs/cgroup/memory", "memory.limit_in_bytes"
        else:
            continue
        parts = [p for p in path.split("/") if p]
        files += [os.path.join(root, *parts[:depth], name) for depth in range(len(parts), -1, -1)]
    return files or ["/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"]


def beyond_device(nbytes: int, what: str) -> str | None:
    """Why ``what``, needing ``nbytes`` bytes, cannot be allocated on the emulated device, or None
    where it fits: the one wording of that refusal (an AclnnError 200000 from the Pythonic API,
    a usage error from ``opsnn run``)."""
    if nbytes <= DEVICE_CAPACITY:
        return None
    return f"{what} needs {nbytes} bytes, more than the {DEVICE_CAPACITY}-byte emulated device memory"


def beyond_available(nbytes: int, what: str) -> str | None:
    """Why ``what``, host work that will touch about ``nbytes`` bytes, should not start, or None
    where that fits what the host has available now (``host_available``; None where that cannot
    be read): Linux overcommits, so the arrays are made and the out-of-memory killer ends the
    process as they fill (exit 137, nothing said). The one wording of that refusal (a usage
    error from ``opsnn run`` and ``opsnn demo``, a simulation not run by ``opsnn tiling``)."""
    available = host_available()
    if available is None or nbytes <= available:
        return None
    return f"{what} needs ~{nbytes} bytes of host memory, more than the {available} bytes available now"


def beyond_host(nbytes: int, what: str) -> str | None:
    """Why ``what``, a host copy of ``nbytes`` bytes (an acl_meta.h constructor's C array), cannot
    be made, or None where it fits the host's RAM (``host_total``; where that cannot be read, the
    emulated host memory's ``HOST_CAPACITY``). A bound, not a reservation: what other
    allocations hold is not counted, as the host's allocator would only find out by trying."""
    host = host_total()
    total = host or HOST_CAPACITY
    if nbytes <= total:
        return None
    source = "the host's RAM" if host else "the emulated host memory"
    return f"{what} needs {brief(nbytes)} bytes, more than the {total} bytes of {source}"


class AddressSpace:
    """One address range ``[base, end)`` (device or pinned host) with a bump allocator that never
    reuses an address, so a stale one is caught rather than landing in a newer allocation. The
    ranges are disjoint: once a space has handed out its whole range (2**62 - 2**56 bytes of
    device allocations, freed ones included; 3 * 2**60 of pinned host ones) it refuses with
    ACL_ERROR_BAD_ALLOC rather than run into the other (a breaker's 4 GiB malloc/free loop had
    walked device addresses into the host range after ~32 000 rounds)."""

    def __init__(self, base: int, end: int, kind: str, capacity: int, lock):
        self._base = self._next = base
        self._end = end
        self._kind = kind
        self.capacity = capacity
        self._starts: list[int] = []
        self._allocs: dict[int, Allocation] = {}
        self._in_use = 0  # padded bytes held by live allocations
        # shared by the spaces the host's RAM backs: a check against it reads every space's
        # _in_use, so it and the reservation hold only under one lock for all of them
        self._lock = lock

    def malloc(self, size: int, call: str = "malloc") -> int:
        padded = ((size + 31) // 32) * 32 + 32  # aclrtMalloc rounds up to 32 B and adds 32 B
        with self._lock:  # checked and reserved atomically: two threads cannot both pass
            if padded > self._free():
                raise AclnnError(AclError.BAD_ALLOC, self._refusal(call, size, padded))
            step = ((padded + ALIGN - 1) // ALIGN) * ALIGN + ALIGN  # a guard gap after it
            if self._next + step > self._end:
                raise AclnnError(AclError.BAD_ALLOC,
                                 f"{call}: cannot allocate {size} bytes: the emulated {self._kind} address range "
                                 f"[{_hex(self._base)}, {_hex(self._end)}) is used up; addresses are never reused "
                                 "(so that a stale one is caught), so this process can allocate no more")
            try:
                buffer = np.zeros(padded, dtype=np.uint8)
            except (MemoryError, ValueError):
                raise AclnnError(AclError.BAD_ALLOC, f"{call}: cannot allocate {size} bytes "
                                                     "(host memory backing the emulation is exhausted)") from None
            self._in_use += padded
            addr = self._next
            self._next += step
            self._allocs[addr] = Allocation(addr, size, buffer, self._kind)
            bisect.insort(self._starts, addr)
        return addr

    def _refusal(self, call: str, size: int, padded: int) -> str:
        """Why ``size`` bytes (``padded`` as counted) do not fit (under ``_lock``), naming the
        call's own C name and the limits that bind: the device's emulated capacity (64 GiB, an
        Ascend910B's HBM: what get_mem_info's total reports), then the host's RAM where it is
        less; pinned host memory is the host's RAM, bound by it alone unless the cap opsnn puts
        on it (``HOST_CAPACITY``) is lower or the RAM cannot be read (a breaker: malloc_host was
        told of "aclrtMalloc's rounding" and an "emulated host memory" README does not have)."""
        free, left = self.capacity - self._in_use, _host_left()
        ram_binds = left is not None and left < free
        ram, leaves = f"the host's {host_total()}-byte RAM", (
            f"less the live device and pinned host allocations, leaves {max(0, left or 0)}")
        if self._kind == "device":
            return (f"{call}: cannot allocate {size} bytes ({padded} with aclrtMalloc's rounding up to 32 B plus "
                    f"32 B): {free} of the {self.capacity}-byte emulated device memory are free"
                    + (f"; {ram}, which backs them, {leaves}" if ram_binds else ""))
        gib = f" ({self.capacity >> 30} GiB)" if self.capacity % (1 << 30) == 0 else ""
        return (f"{call}: cannot allocate {size} bytes of pinned host memory (aclrtMallocHost; {padded} bytes as "
                "opsnn counts it, padded as aclrtMalloc pads: rounded up to 32 B, plus 32 B): "
                + (f"pinned host memory is the host's RAM, and {ram}, {leaves}" if ram_binds else
                   f"{free} of the {self.capacity} bytes{gib} opsnn lets pinned host memory hold are free"))

    def free(self, addr: int, call: str = "free") -> None:
        with self._lock:
            alloc = self._allocs.get(addr)
            if alloc is not None:
                # the start goes first, then the allocation, then the hooks: a fork between two of
                # these (another thread forking) leaves the child an allocation no lookup finds,
                # never a start without its allocation (``find`` would fail on it)
                i = bisect.bisect_left(self._starts, addr)
                if i < len(self._starts) and self._starts[i] == addr:
                    del self._starts[i]
                del self._allocs[addr]
                alloc.live = False
                self._in_use -= alloc.buffer.size
                released()
        if alloc is None:  # (told outside the lock, which ``elsewhere`` takes: both spaces share it)
            instead = elsewhere(addr, self)
            raise AclnnError(AclError.INVALID_PARAM, f"{call}: {_hex(addr)}{instead}" if instead else
                             f"{call}: {_hex(addr)} is not the start of a live {self._kind} allocation "
                             "(never allocated, already freed, or an interior address)")

    def spans(self, addr: int) -> bool:
        """Whether ``addr`` lies in this space's address range (live, freed or never used)."""
        return self._base <= addr < self._end

    def find(self, addr: int) -> Allocation | None:
        with self._lock:
            i = bisect.bisect_right(self._starts, addr) - 1
            if i < 0:
                return None
            alloc = self._allocs[self._starts[i]]
        return alloc if addr < alloc.addr + max(alloc.size, 1) else None

    def region(self, addr: int, nbytes: int, what: str) -> np.ndarray:
        """uint8 view of ``[addr, addr + nbytes)``; raises if it is not inside one allocation."""
        alloc, start = self.locate(addr, nbytes, what)
        return alloc.buffer[start:start + nbytes]

    def locate(self, addr: int, nbytes: int, what: str) -> tuple[Allocation, int]:
        """The allocation holding ``[addr, addr + nbytes)`` and the byte offset of ``addr`` in
        it; raises AclnnError (100000) if the range is not inside one live allocation."""
        if nbytes < 0:
            raise AclnnError(AclError.INVALID_PARAM, f"{what}: byte count {nbytes} is negative")
        alloc = self.find(addr)
        if alloc is None:
            raise AclnnError(AclError.INVALID_PARAM, f"{what}: address {_hex(addr)}" + (
                elsewhere(addr, self) or f" is not inside a live {self._kind} allocation (never allocated or "
                                         "already freed)"))
        start = addr - alloc.addr
        if start + nbytes > alloc.size:
            raise AclnnError(AclError.INVALID_PARAM,
                             f"{what}: {nbytes} bytes at {_hex(addr)} reach {start + nbytes - alloc.size} bytes "
                             f"past the end of the {alloc.size}-byte allocation at {_hex(alloc.addr)}")
        return alloc, start

    @property
    def free_bytes(self) -> int:
        """Bytes ``malloc`` may still hand out, the quantity each request is checked against: the
        capacity less the padded size (aclrtMalloc's rounding) of this space's live allocations,
        and at most the host's RAM (``host_total``) less those of both spaces, device and pinned
        host: every allocation is host memory (a new user's four 15 GiB mallocs on a 23 GB host
        all succeeded). Other processes' use of the host's memory is not counted, so the figure
        holds from one call to the next."""
        with self._lock:
            return self._free()

    def _free(self) -> int:
        free = self.capacity - self._in_use
        left = _host_left()
        if left is not None:  # the host's RAM backs both spaces (a breaker: device and pinned host
            free = min(free, left)  # mallocs each checked against all of it promised 1.55x the RAM)
        return max(0, free)

    @property
    def allocated_bytes(self) -> int:
        with self._lock:
            return sum(a.size for a in self._allocs.values())

    @property
    def allocation_count(self) -> int:
        with self._lock:
            return len(self._allocs)

    def clear(self) -> None:
        with self._lock:
            for alloc in self._allocs.values():
                alloc.live = False
            released()
            self._allocs.clear()
            self._starts.clear()
            self._in_use = 0


def _hex(addr: object) -> str:
    return hex(addr) if isinstance(addr, int) else repr(addr)


# From 2**56 up (the device space's first address is 2**56 itself), where no x86-64 or AArch64 user-space pointer can lie (57-bit addresses at most),
# so an emulated address is never also a real one that ``acl.util.numpy_to_ptr`` hands out (a
# breaker's pinned allocations at 0x7f... came to cover a NumPy array's real address, which
# memcpy then read from the emulated buffer). Still below 2**63: every address is an int64.
_HOST_RAM_LOCK = forksafe.lock()  # both spaces' (see AddressSpace.__init__)
DEVICE = AddressSpace(0x0100_0000_0000_0000, 0x4000_0000_0000_0000, "device", DEVICE_CAPACITY, _HOST_RAM_LOCK)
HOST = AddressSpace(0x4000_0000_0000_0000, 0x7000_0000_0000_0000, "host", HOST_CAPACITY, _HOST_RAM_LOCK)
_SPACES = (DEVICE, HOST)


_MADE_BY = {"device": ("device memory", "acl.rt.malloc", "acl.rt.free"),
            "host": ("pinned host memory", "acl.rt.malloc_host", "acl.rt.free_host")}


def elsewhere(addr: int, space: AddressSpace, wanted: str = "") -> str:
    """For ``addr`` refused by ``space``: where it lies in the other space's range, " is <the
    other memory> (...), not <``wanted``, or space's memory>", saying whether a live allocation
    starts there, holds it further in, or none does; else "". A live malloc_host address passed
    where device memory is taken (or the reverse) had been refused as "never allocated or
    already freed"."""
    for other in _SPACES:
        if other is not space and other.spans(addr):
            name, made, freed = _MADE_BY[other._kind]
            not_wanted = f"not {wanted or _MADE_BY[space._kind][0]}"
            alloc = other.find(addr)
            if alloc is None:  # (which of the two is not known: a breaker's "already freed" was a guess)
                return (f" is an address of {name}'s range ({made}), {not_wanted}; no live allocation "
                        "holds it (never allocated, or already freed)")
            if alloc.addr != addr:
                return f" lies {addr - alloc.addr} bytes into {name} ({made} at {_hex(alloc.addr)}), {not_wanted}"
            return f" is {name} ({made}; {freed} releases it), {not_wanted}"
    return ""


def _host_left() -> int | None:
    """The host's RAM less the live allocations of both spaces (padded), or None where the RAM
    cannot be read (under ``_HOST_RAM_LOCK``)."""
    host = host_total()
    return None if host is None else host - sum(space._in_use for space in _SPACES)
