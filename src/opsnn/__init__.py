"""opsnn: CANN ops-nn activation operators on a host-emulated Ascend runtime.

Three ways in:

* ``opsnn.leaky_relu_backward`` / ``opsnn.hardtanh_backward`` and the forward partners
  ``opsnn.leaky_relu`` / ``leaky_relu_`` / ``hardtanh`` / ``hardtanh_``: NumPy arrays in and
  out, raising ``AclnnError`` (with ``.status``) on bad input;
* ``opsnn.aclnn``: the C-shaped two-phase API (``aclnnLeakyReluBackwardGetWorkspaceSize`` ...)
  returning CANN status codes;
* ``opsnn.acl``: the pyACL-shaped runtime the aclnn API runs on (device memory, streams,
  tensors, scalars).

Beside them: ``opsnn.torch`` (the operators as torch custom ops with autograd, and nn modules;
needs the torch extra) and the ``opsnn`` command (``opsnn demo``, ``run``, ``verify``,
``tiling``, ``describe`` ...; ``opsnn --help``).

The emulated SoC (default Ascend910B) is chosen with ``set_soc`` / ``use_soc`` or ``OPSNN_SOC``;
``current_soc()`` is the one in force.
"""

from ._core.platform import current as current_soc
from ._core.platform import set_soc, use_soc
from ._core.status import AclnnError, Status
from .functional import (hardtanh, hardtanh_, hardtanh_backward, leaky_relu, leaky_relu_,
                         leaky_relu_backward)

__version__ = "0.1.0"

__all__ = ["AclnnError", "Status", "current_soc", "hardtanh", "hardtanh_", "hardtanh_backward",
           "leaky_relu", "leaky_relu_", "leaky_relu_backward", "set_soc", "use_soc"]
