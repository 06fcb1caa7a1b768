"""The host containers of opbase's acl_meta.h: ``aclIntArray``, ``aclFloatArray``,
``aclBoolArray``, ``aclTensorList`` and ``aclScalarList``.

No opsnn operator takes one; they exist so that a ported C program's create / size / destroy
sequence runs. Each copies its elements when created, as opbase's constructors do: an array
copies the values, a list the handles (not the tensors or scalars they point at, which
destroying the list destroys: opbase's aclDestroyTensorList / aclDestroyScalarList).
"""

from __future__ import annotations

import numpy as np

from .checks import is_null
from .dtypes import DataType
from .status import AclnnError
from .tensor import _bad, _Fixed, aclScalar, aclTensor, host_copy


class HostList(_Fixed):
    """The elements (``values``, a tuple: fixed once created, as the C object's copy is) and the
    ``destroyed`` flag of every acl_meta.h container; each kind's ``element(value, index)``
    stores one."""

    _FIXED = frozenset({"values"})

    ITEMSIZE: int  # bytes of one element in the C copy (the host memory check of host_copy)

    def __init__(self, values):
        fields = self.__dict__  # as aclTensor's: _Fixed.__setattr__ is for later changes
        fields["destroyed"] = False
        # opbase builds an empty container for a null value pointer (None, or 0 as everywhere in
        # opsnn.acl), not NULL
        if is_null(values):
            fields["values"] = ()
            return
        # a list/tuple/range/array only: an arbitrary iterable could be endless
        expected = "value must be a list, tuple, range or 1-D array, got"
        if isinstance(values, np.ndarray) and values.ndim != 1:
            raise _bad(f"{expected} a {values.ndim}-D array")
        if not isinstance(values, (list, tuple, range, np.ndarray)):
            raise _bad(f"{expected} {type(values).__name__}")
        host_copy(values, self.ITEMSIZE, "value")
        if isinstance(values, np.ndarray):
            values = values.tolist()
        fields["values"] = tuple(self.element(value, index) for index, value in enumerate(values))

    @property
    def size(self) -> int:
        return len(self.values)

    def __repr__(self) -> str:  # (Python values: NumPy 2 would print np.int64(1) for each)
        return f"<{type(self).__name__} {[v.item() if isinstance(v, np.generic) else v for v in self.values]!r}>"


class _ValueArray(HostList):
    """An array of C values: each stored as ``aclCreateScalar`` stores a value of ``DTYPE`` (one
    conversion policy: C's, a float truncated into an integer, overflow to +-inf in a float),
    as a C caller's own conversion into the array's element type would."""

    DTYPE: DataType

    def element(self, value, index: int):
        try:
            return aclScalar(value, self.DTYPE).value
        except AclnnError as exc:
            raise AclnnError(exc.status, f"value[{index}]: {exc.message}") from None


class aclIntArray(_ValueArray):  # noqa: N801 - the CANN type name
    """``aclCreateIntArray``: int64 values (NumPy int64 scalars)."""

    DTYPE = DataType.INT64
    ITEMSIZE = 8


class aclFloatArray(_ValueArray):  # noqa: N801 - the CANN type name
    """``aclCreateFloatArray``: C float values (NumPy float32 scalars)."""

    DTYPE = DataType.FLOAT
    ITEMSIZE = 4


class aclBoolArray(_ValueArray):  # noqa: N801 - the CANN type name
    """``aclCreateBoolArray``: C bool values (NumPy bool scalars)."""

    DTYPE = DataType.BOOL
    ITEMSIZE = 1


class HandleList(HostList):
    """A list of ``KIND`` handles, each live when the list is made, or None (a null element,
    which C copies as any pointer)."""

    KIND: type
    ITEMSIZE = 8  # a pointer

    def element(self, value, index: int):
        if is_null(value):
            return None
        name = self.KIND.__name__
        if not isinstance(value, self.KIND):
            raise _bad(f"value[{index}] must be an {name} or None, got {type(value).__name__}")
        if value.destroyed:
            raise _bad(f"value[{index}] is an {name} that was already destroyed")
        return value

    def owned(self) -> list:
        """The handles destroying the list destroys, each once; AclnnError, before anything is
        destroyed, for one destroyed since the list was made or listed twice (C would free it
        a second time)."""
        owned, seen = [], set()
        for index, handle in enumerate(self.values):
            if handle is None:  # opbase's destroy of a null element does nothing
                continue
            if handle.destroyed:
                raise _bad(f"value[{index}], an {self.KIND.__name__}, was destroyed after the list was made: "
                           "destroying the list would destroy it again")
            if id(handle) in seen:
                raise _bad(f"value[{index}] is an {self.KIND.__name__} listed before: destroying the list "
                           "would destroy it twice")
            seen.add(id(handle))
            owned.append(handle)
        return owned


class aclTensorList(HandleList):  # noqa: N801 - the CANN type name
    """``aclCreateTensorList``: aclTensor handles (or None)."""

    KIND = aclTensor


class aclScalarList(HandleList):  # noqa: N801 - the CANN type name
    """``aclCreateScalarList``: aclScalar handles (or None)."""

    KIND = aclScalar
