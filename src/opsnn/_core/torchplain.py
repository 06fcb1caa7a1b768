"""Plain torch CPU tensors, told apart without importing torch: the one test that ``opsnn.torch``
(which imports torch) and the Pythonic layer (``opsnn.functional``, which must not: it finds torch
in ``sys.modules`` once its caller has loaded it, and importing ``opsnn.torch`` registers torch
ops) both apply, and the torch dtypes whose ``Tensor.numpy()`` view is the NumPy dtype of their name.

A plain tensor is ``torch.Tensor`` itself (no subclass: no FakeTensor, Parameter or wrapper
subclass) whose dispatch keys are those of a tensor ``torch.empty`` makes on the CPU, outside or
inside ``torch.inference_mode`` (which leaves out the autograd keys): so on the CPU, strided (not
sparse, mkldnn or nested), not quantized, no lazy conjugate / negative view or zero tensor, not
wrapped by functorch (vmap, grad), each of which adds or swaps a key. One C call in place of
reading nine attributes: 0.4-1.5 us less a tensor (in-process A/B runs on the Xeon VM of
BENCHMARKS.md). It may require grad (every tensor made outside inference mode has the
autograd keys).

``bind(torch)`` fills the tables once a process (``opsnn.torch`` at its import, the Pythonic layer
at its first torch argument); until then, and where this torch cannot tell a tensor's dispatch
keys, no tensor is plain.
"""

from __future__ import annotations

from . import dtypes

# the raw reprs (DispatchKeySet.raw_repr()) of a plain tensor's dispatch keys: made outside
# inference mode (NORMAL_KEYS), inside it (INFERENCE_KEYS), either (PLAIN_KEYS); empty until bind()
PLAIN_KEYS: frozenset = frozenset()
NORMAL_KEYS: frozenset = frozenset()
INFERENCE_KEYS: frozenset = frozenset()
# the torch dtypes that cross to NumPy as ``Tensor.numpy()`` itself, the NumPy dtype of their name
# (``dtypes.TORCH_NAMES``); bfloat16 and the float8 types cross as integer views, complex32 and
# the dtypes with no aclDataType as data-less handles (``dtypes.TORCH_VIEWS`` / ``BYTES_ONLY``)
NUMPY_DTYPES: frozenset = frozenset()
# torch.Tensor and torch._C._dispatch_keys, once bound
TENSOR = None
KEYS_OF = None


def bind(torch) -> bool:
    """Fill the tables from ``torch`` (once: later calls return at once); whether they are filled.
    The two tensors whose keys they take are made on the CPU and outside / inside inference mode
    whatever the caller's thread is in; where they come back as anything but plain CPU tensors (a
    torch function or dispatch mode intercepting ``torch.empty``), nothing is bound and False is
    returned (the next call tries again)."""
    global PLAIN_KEYS, NORMAL_KEYS, INFERENCE_KEYS, NUMPY_DTYPES, TENSOR, KEYS_OF
    if TENSOR is not None:
        return True
    keys_of = getattr(torch._C, "_dispatch_keys", None)
    made = []
    for inference in (False, True):
        with torch.inference_mode(inference):
            made.append(torch.empty(0, device="cpu"))
    if any(type(t) is not torch.Tensor or t.device.type != "cpu" for t in made):
        return False
    if keys_of is not None and hasattr(keys_of(made[0]), "raw_repr"):
        normal, inference = (keys_of(t).raw_repr() for t in made)
        NORMAL_KEYS, INFERENCE_KEYS = frozenset((normal,)), frozenset((inference,))
        PLAIN_KEYS = NORMAL_KEYS | INFERENCE_KEYS
    NUMPY_DTYPES = numpy_dtypes(torch)
    KEYS_OF, TENSOR = keys_of, torch.Tensor  # TENSOR last: a thread that sees it sees the tables
    return True


def numpy_dtypes(torch) -> frozenset:
    """The torch dtypes whose ``Tensor.numpy()`` view has the NumPy dtype of their name."""
    return frozenset(getattr(torch, name) for name in dtypes.TORCH_NAMES if hasattr(torch, name))


def plain_keys(t) -> int | None:
    """``t``'s dispatch keys (their raw repr: in ``NORMAL_KEYS`` or ``INFERENCE_KEYS``) where ``t``
    is a plain dense CPU tensor (see the module doc), else None; None for every ``t`` before
    ``bind``."""
    if not PLAIN_KEYS or type(t) is not TENSOR:
        return None
    keys = KEYS_OF(t).raw_repr()
    return keys if keys in PLAIN_KEYS else None


def is_plain(t) -> bool:
    """Whether ``t`` is a plain dense CPU tensor (see the module doc); False before ``bind``."""
    return plain_keys(t) is not None
