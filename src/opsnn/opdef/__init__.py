"""op_host fidelity: kernel op definitions, infershape and tiling per SoC (spec §7).

    from opsnn import opdef
    op, alias = opdef.find("HardtanhBackward", profile)        # aclnn or kernel name
    out_shape = op.infer_shape([result_shape, grad_shape])
    result = opdef.tile(op, profile, inputs, outputs, {"min_val": -2.0, "max_val": 1.0})
    result.tiling_data.to_dict(), result.tiling_key, result.block_dim, result.launch()
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .._core.platform import SocProfile
from .._core.dtypes import BITS
from .._core.shape import INT64_MAX, MAX_DIM, numel
from .._core.status import AclnnError, Status
from .._core.tiling import TilingError
from .._core.words import non_ascii
from . import hardtanh_grad, leaky_relu, leaky_relu_grad
from .base import (AclnnAlias, AttrDef, InferShapeError, OpDef, Shape, TensorDesc, TilingResult, infer_broadcast,
                   infer_elewise)

__all__ = ["ALIASES", "OPDEFS", "AclnnAlias", "AttrDef", "InferShapeError", "OpDef", "Shape", "TensorDesc",
           "TilingResult", "find", "infer_broadcast", "infer_elewise", "no_such_api", "not_modelled", "tile"]

OPDEFS: tuple[OpDef, ...] = (leaky_relu_grad.OPDEF, hardtanh_grad.OPDEF, hardtanh_grad.OPDEF_EXPERIMENTAL,
                             leaky_relu.OPDEF)

ALIASES: tuple[AclnnAlias, ...] = (
    AclnnAlias("LeakyReluBackward", "LeakyReluGrad", ("gradOutput", "self"), (0, 1),
               (("negativeSlope", "negative_slope"),),
               "NN:activation/leaky_relu_grad/op_api/leaky_relu_grad.cpp (gradients = gradOutput, features = self)"),
    AclnnAlias("HardtanhBackward", "HardtanhGrad", ("gradOutput", "self"), (1, 0),
               (("min", "min_val"), ("max", "max_val")),
               "NN:activation/hardtanh_grad/op_api/hardtanh_grad.cpp (self first as result, gradOutput as grad)"),
    AclnnAlias("LeakyRelu", "LeakyRelu", ("self",), (0,), (("negativeSlope", "negative_slope"),),
               "NN:activation/leaky_relu/op_api/leaky_relu.cpp"),
    AclnnAlias("InplaceLeakyRelu", "LeakyRelu", ("selfRef",), (0,), (("negativeSlope", "negative_slope"),),
               "NN:activation/leaky_relu/op_api/aclnn_leaky_relu.cpp (selfRef is x and y)"),
)


def find(name: str, profile: SocProfile | None = None) -> tuple[OpDef, AclnnAlias | None]:
    """The def for a kernel op name (``HardtanhGrad``) or an aclnn name (``HardtanhBackward``,
    ``aclnnHardtanhBackward``), case-insensitive, surrounding whitespace ignored, and the alias
    used (None for a kernel name; a name that is both, like ``LeakyRelu``, is the kernel op
    unless written ``aclnnLeakyRelu``).

    With a profile, the def built for that SoC (HardtanhGrad has one per SoC config); without,
    the main def. Raises ValueError for an unknown name (one with a character past ASCII too) and AclnnError 561003 when no def of the
    op is built for the SoC (other SoCs run CANN built-in kernels that ops-nn does not hold).
    """
    why = non_ascii(name)
    if why:  # lower() reads some letters past ASCII as ASCII ones (the Kelvin sign as k), as registry.resolve says
        raise ValueError(f"no op definition for {name!r} ({why}, as no op name is): {_tilings_held()}")
    typed = name.strip().lower()  # surrounding whitespace (a quoting slip), as run, describe and --soc read it
    key = typed.removeprefix("aclnn")
    is_kernel = key == typed and any(d.name.lower() == key for d in OPDEFS)
    alias = None if is_kernel else next((a for a in ALIASES if a.api.lower() == key), None)
    if alias is None and key != typed and any(d.name.lower() == key for d in OPDEFS):
        # the API the user likely meant, that of this kernel, as the CLI tells aclnn_hardtanh_grad
        api = next(a.api for a in ALIASES if a.kernel.lower() == key)
        raise no_such_api(name, len("aclnn"), f"aclnn{api}")
    kernel = alias.kernel.lower() if alias else key
    defs = [d for d in OPDEFS if d.name.lower() == kernel]
    if not defs:
        from .. import registry  # a known operator whose kernel's tiling is not modelled says so

        spec = next((s for s in registry.all_specs() if key in (s.name.lower(), s.kernel_name.lower())), None)
        if spec:
            raise not_modelled(name, spec)
        suggestion = registry.closest(name)
        # only a name whose tiling it holds: 'hardtanhh' had been asked 'did you mean Hardtanh?', then refused
        if suggestion and not any(d.name == registry.resolve(suggestion).kernel_name for d in OPDEFS):
            suggestion = None
        why = f" (did you mean {suggestion}?)" if suggestion else ""
        raise ValueError(f"no op definition for {name!r}{why}: {_tilings_held()}")
    if profile is None:
        return defs[0], alias
    for opdef in defs:
        if opdef.supports(profile):
            return opdef, alias
    configs = ", ".join(d.soc for d in defs)
    raise AclnnError(Status.ERR_INNER_FIND_KERNEL_ERROR,
                     f"{defs[0].name} has no op_host config for {profile.name} (configs: {configs}); on other "
                     "SoCs CANN runs a built-in kernel that ops-nn does not hold (spec §13)")


def not_modelled(name: str, spec) -> ValueError:
    """``find``'s refusal of ``name``, a user's word for ``spec`` (a ``registry.OpSpec``), an
    operator opsnn runs whose kernel's tiling it does not model (ops-math's ClipByValueV2): for
    ``opsnn tiling``, which reads a Pythonic or snake_case name itself (``aclnn_hardtanh``), to
    say it in the words typed, as ``find`` says the names it reads."""
    from .. import registry

    apis = ", ".join(s.api_name for s in registry.all_specs() if s.kernel_name == spec.kernel_name)
    return ValueError(f"no op definition for {name!r} ({spec.kernel_name}, the kernel of {apis}, is ops-math's: "
                      f"opsnn runs it but does not model its tiling): {_tilings_held()}")


def no_such_api(name: str, prefix: int, api: str) -> ValueError:
    """The refusal of ``name``, a kernel op's name after an aclnn prefix of ``prefix`` characters
    (``aclnnLeakyReluGrad``; ``aclnn_hardtanh_grad`` as ``opsnn tiling`` reads snake_case): no aclnn
    API has it; ``api``, the aclnn API of that kernel, is likely what was meant."""
    word = name.strip()
    return ValueError(f"no aclnn API named {name!r}: {word[prefix:]} is a kernel op (name it without "
                      f"{word[:prefix]!r}); the aclnn API of its kernel is {api}")


def _tilings_held() -> str:
    """What a refusal of an op name lists: the names ``find`` takes."""
    return f"opsnn has the tilings of {', '.join(sorted({d.name for d in OPDEFS} | {a.api for a in ALIASES}))}"


def tile(opdef: OpDef, profile: SocProfile, inputs: Sequence[TensorDesc], outputs: Sequence[TensorDesc],
         attrs: Mapping[str, float] | None = None) -> TilingResult:
    """Run ``opdef``'s tiling for ``profile`` (core count, UB bytes). Attrs by kernel name; missing
    ones take the def's default. Raises TilingError (561103) with the reason (a shape of more than
    8 dims, a dynamic dim, more elements than an int64 counts or more bytes than GE sizes, then
    the op's own checks), ValueError for a tensor or attr count the def does not take, or
    AclnnError 561003 for a SoC the def is not built for."""
    if not opdef.supports(profile):
        raise AclnnError(Status.ERR_INNER_FIND_KERNEL_ERROR,
                         f"{opdef.name} ({opdef.variant}) is built for {opdef.soc}, not {profile.name}; "
                         "find(name, profile) gives the def for a SoC")
    if len(inputs) != len(opdef.inputs) or len(outputs) != len(opdef.outputs):
        raise ValueError(f"{opdef.name} takes inputs {opdef.inputs} and outputs {opdef.outputs}, "
                         f"got {len(inputs)} and {len(outputs)} tensors")
    for role, desc in zip(opdef.inputs + opdef.outputs, (*inputs, *outputs)):
        # tiling runs on the shapes a launch has (GE resolves -1 / -2 before it), and its
        # element counts are int64s (a count beyond one would wrap in the tiling struct)
        if len(desc.shape) > MAX_DIM:
            raise TilingError(opdef.name, f"{role} has {len(desc.shape)} dims {list(desc.shape)}; a kernel's shapes "
                                          f"(GE's gert::Shape) hold at most {MAX_DIM}")
        if any(d < 0 for d in desc.shape):
            raise TilingError(opdef.name, f"{role} has the dynamic shape {list(desc.shape)}: tiling runs on "
                                          "static shapes (every dim >= 0)")
        count = numel(desc.shape)
        if count >= 2**63:
            raise TilingError(opdef.name, f"{role} of shape {list(desc.shape)} holds {count} "
                                          "elements, more than an int64 counts")
        # GE sizes every tensor with GetSizeInBytes, which fails (-1) where count * element size
        # (in bits for a sub-byte dtype) overflows int64: no launch holds such a tensor
        # (DT_UNDEFINED has no size; the op's dtype checks refuse it)
        bits = BITS.get(desc.dtype)
        per, unit = (bits, "bits") if bits is not None and bits < 8 else ((bits or 0) // 8, "bytes")
        if count * per > INT64_MAX:
            raise TilingError(opdef.name, f"{role} of shape {list(desc.shape)} holds {count} elements of {per} "
                                          f"{unit}, {count * per} {unit}: more than GE's int64 tensor size counts "
                                          "(GetSizeInBytes fails), so no launch has such a tensor")
    return opdef.tiling(profile, inputs, outputs, opdef.attr_values(attrs or {}))
