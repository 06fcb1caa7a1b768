"""``opsnn tiling OP --shape ... --dtype ... [--soc ...] [--json] [--simulate]``.

Shows what ops-nn's op_host does for a kernel op on a SoC: the op definition row the dtypes
match, the inferred output shape, the tiling struct, key, block dim and workspace, and with
``--simulate`` a simulated device run checked for coverage, UB use, bounds and bit-exact results.
OP is a kernel op (HardtanhGrad, LeakyReluGrad, LeakyRelu) or an aclnn API (HardtanhBackward,
LeakyReluBackward, aclnnLeakyRelu: a name that is both is the kernel op unless it carries the
``aclnn`` prefix); an aclnn name maps onto its kernel op, its tensors given in API order.

``cli.py`` wires it: ``tiling_cli.add_arguments(subparser)`` and ``tiling_cli.run(args)``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from . import opdef, registry, simulate
from ._core import platform
from ._core.dtypes import DataType, value_text
from ._core.dtypes import name as dtype_name
from ._core.shape import MAX_DIM
from ._core.status import AclError, AclnnError
from ._core.tiling import flatten
from .cli_args import SOC_ONCE, Once, ShapeList, soc_metavar
from .cli_files import strict_json
from .cli_words import (
    data_type,
    dtype_list,
    dynamic_shape_refusal,
    float_argument,
    int_at_least,
    soc_name,
)
from .opdef import AclnnAlias, OpDef, TensorDesc

AclnnDetailsHook = Callable[[argparse.Namespace, str, dict], dict]

# the attrs' options, for messages that tell which to give
_ATTR_OPTIONS = {"negative_slope": "--negative-slope", "min_val": "--min-val", "max_val": "--max-val"}


class _UsageError(Exception):
    pass


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``tiling`` subcommand's arguments to ``parser``."""
    parser.add_argument("op", help="kernel op (HardtanhGrad, LeakyReluGrad, LeakyRelu) or aclnn API "
                                   "(HardtanhBackward, LeakyReluBackward, aclnnLeakyRelu: LeakyRelu alone "
                                   "is the kernel op), in any case, or its Pythonic name (hardtanh_backward, "
                                   "leaky_relu_)")
    parser.add_argument("--shape", action=ShapeList, nargs="*", default=[], metavar="DIMS",
                        help="an input shape: 1 64 2 64, 1,64,2,64 or 1x64x2x64 (nothing or [] for 0-d; GE's "
                             "dynamic dims as they are: -1 8, -1,8 or -2); repeat once per input in argument order; "
                             "a single --shape applies to every input")
    parser.add_argument("--shape2", action=ShapeList, nargs="*", metavar="DIMS",
                        help="the second input's shape, in place of a second --shape (not beside one; nothing or [] "
                             "for 0-d)")
    # given twice, these are refused (Once): argparse kept the last silently, and beside --shape,
    # given once per input, --dtype f16 --dtype f32 may mean one per tensor
    parser.add_argument("--dtype", type=dtype_list(data_type), default=(DataType.FLOAT16,), metavar="DTYPE[,DTYPE...]",
                        action=Once, hint="give one, or one per tensor in one, inputs then output: --dtype f16,f16,f32",
                        help="dtype of every tensor (float16, bfloat16, float32, ...; f16, bf16, i8 ..., short names "
                             "in bits), or one per tensor, "
                             "inputs then output (default float16, the dtype of the ops' own tiling tests; "
                             "`opsnn run` defaults to float32)")
    # SUPPRESS: no default of its own, so a top-level ``opsnn --soc X tiling ...`` is not overwritten
    parser.add_argument("--soc", default=argparse.SUPPRESS, action=Once, hint=SOC_ONCE, check=soc_name,
                        metavar=soc_metavar(), help="SoC profile (default: the current one if the op is built for it, "
                             "else the SoC the op is built for)")
    parser.add_argument("--negative-slope", type=float_argument, action=Once,
                        help="LeakyRelu/LeakyReluGrad attr (default 0.0, the op definition's; `opsnn run` "
                             "and the Pythonic API default to 0.01)")
    parser.add_argument("--min-val", type=float_argument, action=Once, help="HardtanhGrad attr (default -1.0)")
    parser.add_argument("--max-val", type=float_argument, action=Once, help="HardtanhGrad attr (default 1.0)")
    parser.add_argument("--transpose", action="store_true",
                        help="aclnn names: pass self as a view with its axes reversed (a transposed matrix), "
                             "so the executor steps and the host launch are those of a strided input; the "
                             "NPU tiling depends on shapes only")
    parser.add_argument("--simulate", action="store_true",
                        help="run the tiling on a simulated device and check it (random data, see --seed)")
    parser.add_argument("--seed", type=int_at_least(0), action=Once,
                        help="seed of the --simulate data (default 0; only with --simulate)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def _resolve(args: argparse.Namespace) -> tuple[OpDef, AclnnAlias | None, platform.SocProfile, str | None,
                                                AclnnError | None]:
    """The def, alias, profile, a note when the profile was chosen for the user, and for an aclnn
    name on a SoC the op is not built for, the AclnnError to raise if the call launches a kernel
    (``_tile_and_check``: one that launches none needs no op_host config). Arguments that do not
    fit the op are usage errors before a kernel op's SoC fails (AclnnError)."""
    soc = getattr(args, "soc", None)
    try:
        op, alias = opdef.find(args.op)
        # `is not None`: an empty --soc (an unset "$SOC") is an unknown name, not "no --soc"
        profile = platform.get_profile(soc) if soc is not None else None
    except ValueError as exc:
        raise _UsageError(str(exc)) from None
    if profile is not None:
        try:
            return (*opdef.find(args.op, profile), profile, None, None)
        except AclnnError as exc:  # not built for it
            if alias is None:  # arguments that do not fit the op are said first
                _tensors(args, op, alias)
                _attrs(args, op)
                raise
            if profile.name in registry.get(alias.api).unsupported_socs:
                # the aclnn call refuses the product line before any kernel is looked for: say
                # that, not that a built-in kernel runs (the message breakers read as success)
                exc = AclnnError(exc.status, f"aclnn{alias.api} is not supported on {profile.name} "
                                             f"({profile.product_line}): its GetWorkspaceSize returns {exc.status} for a "
                                             f"non-empty call that passes its checks; no {op.name} kernel to "
                                             "tile")
            return op, alias, profile, None, exc
    current = platform.current()
    try:
        return (*opdef.find(args.op, current), current, "the current profile (set_soc, OPSNN_SOC or the default)",
                None)
    except AclnnError:
        profile = next(p for p in platform.PROFILES.values() if op.supports(p))
    return op, alias, profile, f"{op.name} is not built for the current {current.name}; using {profile.name}", None


def _kernel_order(values: Sequence, alias: AclnnAlias | None) -> list:
    return [values[i] for i in alias.kernel_inputs] if alias else list(values)


def given_shapes(args: argparse.Namespace) -> list:
    """The input shapes given, in argument order: each --shape, --shape2 the second. Raises
    _UsageError for a --shape2 with no first --shape or beside a second one (a breaker: the
    second --shape was dropped without a word)."""
    shapes = list(args.shape)
    if args.shape2 is None:
        return shapes
    if not shapes:
        raise _UsageError("--shape2 needs a first --shape")
    if len(shapes) > 1:
        raise _UsageError(f"--shape2 gives the second input's shape, which the second --shape gives too: "
                          f"give one of them (got --shape {list(shapes[1])} and --shape2 {list(args.shape2)})")
    return [shapes[0], args.shape2]


def _tensors(args: argparse.Namespace, op: OpDef, alias: AclnnAlias | None) -> tuple[list, list[DataType]]:
    """Kernel-order input shapes and the dtypes of inputs then outputs."""
    shapes = given_shapes(args)
    n_in, n_all = len(op.inputs), len(op.inputs) + len(op.outputs)
    if not shapes:
        raise _UsageError("give at least one --shape")
    if len(shapes) == 1:
        shapes *= n_in
    if len(shapes) != n_in:
        raise _UsageError(f"{args.op} takes {n_in} input shape(s), got {len(shapes)}")
    for shape in shapes:  # GE's dynamic shapes: -1 an unknown dim, [-2] an unknown rank
        why = dynamic_shape_refusal(shape)
        if why:
            raise _UsageError(why)
        if len(shape) > MAX_DIM and alias is None:  # (an aclnn name's phase 1 refuses it: 161002)
            raise _UsageError(f"shape {list(shape)} has {len(shape)} dims; a kernel's shapes (GE's gert::Shape) "
                              f"hold at most {MAX_DIM}")
    dtypes = list(args.dtype) * n_all if len(args.dtype) == 1 else list(args.dtype)
    if len(dtypes) != n_all:
        raise _UsageError(f"--dtype takes 1 or {n_all} dtypes (inputs then output), got {len(dtypes)}")
    if alias is not None and registry.get(alias.api).inplace and dtypes[n_in] != dtypes[0]:
        # its out is selfRef itself (registry.inplace_variant): an out dtype of its own would be
        # dropped unsaid, the steps and the def match reading as if it were taken
        raise _UsageError(f"aclnn{alias.api} writes its result into selfRef, so its out dtype is selfRef's "
                          f"{dtype_name(dtypes[0])}; got {dtype_name(dtypes[n_in])} (give one dtype)")
    return _kernel_order(shapes, alias), _kernel_order(dtypes[:n_in], alias) + dtypes[n_in:]


def _attrs(args: argparse.Namespace, op: OpDef) -> dict[str, float]:
    given = {name: getattr(args, name) for name in _ATTR_OPTIONS if getattr(args, name) is not None}
    unknown = [_ATTR_OPTIONS[name] for name in given if name not in {a.name for a in op.attrs}]
    if unknown:
        raise _UsageError(f"{op.name} has no {', '.join(unknown)}")
    return op.attr_values(given)


def build_report(args: argparse.Namespace, aclnn_details: AclnnDetailsHook | None = None) -> tuple[dict, int]:
    """The whole answer as a JSON-ready dict, and the exit code: 0 ok (an aclnn call on an empty
    output included: it launches nothing; or one whose dtypes go to the op's AICPU kernel, which
    has no AI Core tiling; or a simulation this host cannot hold, ``simulation.notRun``); 1 when
    the aclnn call fails in phase 1, no def row
    matches the dtypes, or the infershape, tiling or simulation check fails. Raises _UsageError
    for arguments that do not fit the op."""
    report, code = _tile_and_check(args, aclnn_details)
    # The tiling is still shown for these two (it says what op_host would compute), but no kernel
    # would ever run it, so they fail the command like a failed check does.
    failures = report.get("failures", [])  # (_tile_and_check's: no def built for the SoC)
    if "phase1Status" in report:
        failures.append(f"aclnn{report['aclnn']['api']} fails in phase 1 with {report['phase1Status']} "
                        "(its executor step says why): no kernel is launched")
    match = report["defMatch"]
    if match["rowIndex"] is None and "emptyFastPath" not in report and "aicpu" not in report:
        # (no AI Core kernel is needed then)
        failures.append(f"no binary row of the {report['op']} def matches {', '.join(match['dtypes'])}: "
                        "ops-nn builds no kernel for these dtypes")
    if failures:
        report["failures"] = failures
    return report, 1 if failures else code


def _launches_nothing(op: OpDef, alias: AclnnAlias | None, report: dict, shapes: list, dtypes: list[DataType],
                      row: int | None) -> dict:
    """The report entry of an aclnn call whose phase 1 succeeds without a kernel to launch, so
    nothing is tiled and no op_host config is needed (exit 0 on every SoC), or {}: the empty-tensor
    fast path (``emptyFastPath``), or dtypes its l0 function hands to the AICPU op (``aicpu``)."""
    if not alias or "phase1Status" in report:
        return {}
    try:
        out_shape = op.infer_shape(shapes)
    except opdef.InferShapeError:
        return {}
    if any(d < 0 for shape in (*shapes, out_shape) for d in shape):  # -1 x 0 is no empty tensor
        return {}
    if 0 in out_shape:
        # CANN's aclnn returns before building any kernel; op_host's tiling would refuse the empty shape
        return {"emptyFastPath": f"aclnn{alias.api} takes the empty-tensor fast path: success, workspace 0, "
                                 f"no {op.name} kernel launched, nothing tiled"}
    if row is None and dtypes and all(d in op.aicpu_dtypes for d in dtypes):
        # (a breaker: float64 reported "FAILED ... ops-nn builds no kernel" while the aclnn call succeeds)
        return {"aicpu": f"aclnn{alias.api} hands {', '.join(sorted({d.name for d in dtypes}))} to the AICPU "
                         f"{op.name} op (its l0 function picks AI Core only for a def row's dtypes): no AI "
                         "Core kernel, nothing tiled"}
    return {}


def _note_not_built(report: dict, op: OpDef, not_built: AclnnError, launches_nothing: bool) -> None:
    """The soc note of a call on a SoC ``op`` has no op_host config for (``not_built``, that
    refusal), saying what the call does there; one that launches a kernel gets the refusal as
    its failure too (shown last, ``build_report``), or, with no aclnn steps to show (a kernel
    op's name), raises it alone."""
    # (breakers: an empty call on Ascend910 exited 1 saying a built-in kernel runs; a call
    # phase 1 refuses said only that, as if it ran there)
    phase1_fails = "phase1Status" in report
    launches = not launches_nothing and not phase1_fails
    if launches and "executorSteps" not in report:  # (no aclnn steps to show: the failure alone)
        raise not_built
    # a call that launches a kernel is reported through phase 1 too, which runs on this SoC as on
    # any (a CANN developer's: only the failure was printed), the failure last (build_report)
    if launches and report["executorSteps"][0].startswith("phase 1 not run"):
        # (a dynamic shape, or tensors past this host's address space: its step says why, and the
        # note had said the call passes phase 1)
        does = ("this call's phase 1 is not run here (its executor step says why); where it passes, CANN "
                "launches its built-in kernel, which has no tiling here")
    elif launches:
        does = "this call passes phase 1 and launches CANN's built-in kernel, which has no tiling here"
    elif phase1_fails:
        does = "this call fails in phase 1, before any kernel is looked for"
    else:
        does = "this call launches no kernel, so needs none"
    report["soc"]["note"] = f"{op.name} has no op_host config for it; {does}"
    if launches:
        report["failures"] = [not_built.message]


def _tile_and_check(args: argparse.Namespace, aclnn_details: AclnnDetailsHook | None) -> tuple[dict, int]:
    op, alias, profile, soc_note, not_built = _resolve(args)
    if getattr(args, "transpose", False) and not alias:
        apis = ", ".join(f"aclnn{a.api}" for a in opdef.ALIASES if a.kernel == op.name)
        hint = f" ({apis} for {op.name})" if apis else ""
        raise _UsageError(f"--transpose needs an aclnn name{hint}: a kernel op's tiling depends on shapes only")
    if getattr(args, "seed", None) is not None and not getattr(args, "simulate", False):
        # (a breaker: it was taken and ignored, as if it changed the tiling)
        raise _UsageError("--seed seeds --simulate's random data; without --simulate nothing is random")
    shapes, dtypes = _tensors(args, op, alias)
    attrs = _attrs(args, op)
    report: dict = {"op": op.name, "variant": op.variant, "source": op.source, "inputs": list(op.inputs),
                    "outputs": list(op.outputs), "attrs": attrs, "config": op.soc, "opFile": op.op_file,
                    "soc": _soc_entry(profile, soc_note)}
    typed = dtypes
    if alias:
        report["aclnn"] = alias.to_dict()
        if aclnn_details is not None:
            # phase 1 for the SoC tiled, which is not the current one where the op is not built for it
            # (a breaker's: its steps named the current SoC's dtype list, or failed there, beside another's tiling)
            with platform.use_soc(profile.name):
                report.update(aclnn_details(args, alias.api, attrs))  # (the API's own name: OP is read in any case)
        if "kernelDtypes" in report:  # phase 1 succeeded: the kernel gets what the executor hands
            # it (inputs cast to the promoted dtype, the result cast to out's after it:
            # DECISIONS 3), not the dtypes typed
            dtypes = [DataType[name] for name in report["kernelDtypes"]]
    row = op.match_dtypes(dtypes)
    report["defMatch"] = {"dtypes": [d.name for d in dtypes], "rowIndex": row,
                          "rows": [[d.name for d in r] for r in op.dtype_rows]}
    if dtypes != typed:
        report["defMatch"]["typed"] = [d.name for d in typed]
    nothing_launched = _launches_nothing(op, alias, report, shapes, dtypes, row)
    if not_built is not None:
        _note_not_built(report, op, not_built, launches_nothing=bool(nothing_launched))
    try:
        out_shape = op.infer_shape(shapes)
    except opdef.InferShapeError as exc:
        report["error"] = exc.message
        return report, 1
    report["inferredShape"] = list(out_shape)
    dynamic = next(((name, s) for name, s in zip(op.inputs, shapes) if any(d < 0 for d in s)), None)
    if dynamic or any(d < 0 for d in out_shape):  # before the empty fast path: -1 x 0 is no empty tensor
        what = f"input {dynamic[0]} is {list(dynamic[1])}" if dynamic else f"the inferred shape {list(out_shape)}"
        report["error"] = f"{op.name} tiling needs static shapes; {what}, dynamic"
        return report, 1
    if nothing_launched:
        report.update(nothing_launched)
        return report, 0
    if not_built is not None:  # no def here, so no tiling to show (build_report says why)
        return report, 1
    inputs = [TensorDesc(s, d) for s, d in zip(shapes, dtypes)]
    outputs = [TensorDesc(out_shape, d) for d in dtypes[len(inputs):]]
    try:
        result = opdef.tile(op, profile, inputs, outputs, attrs)
    except AclnnError as exc:
        report["error"] = exc.message
        return report, 1
    report.update({"template": result.template, "tilingStruct": type(result.tiling_data).__name__,
                   "tilingData": result.tiling_data.to_dict(), "tilingKey": result.tiling_key,
                   "blockDim": result.block_dim, "workspaceSize": result.workspace_size, "notes": list(result.notes)})
    if not args.simulate:
        return report, 0
    if "phase1Status" in report:  # no kernel would run this tiling (build_report fails the command for it)
        report["simulation"] = {"error": "phase 1 fails, so no kernel is launched"}
        return report, 1
    try:
        check = simulate.check_op(result, op, inputs, outputs, attrs, seed=args.seed or 0)
    except AclnnError as exc:
        if exc.status == AclError.BAD_ALLOC:  # (simulate.host_array) a limit of this host, no failed check,
            # as the tiling of tensors phase 1 cannot allocate here (a breaker: exit 1 with no FAILED line)
            # (without simulate's own prefix: the line read "simulation not run: simulate: the simulation of")
            report["simulation"] = {"notRun": exc.message.removeprefix(simulate.REFUSAL_PREFIX)}
            return report, 0
        report["simulation"] = {"error": exc.message}
        return report, 1
    report["simulation"] = {**check.to_dict(), "coveredOnce": check.sim.covered_once, "withinUb": check.sim.within_ub,
                            "inBounds": check.sim.in_bounds, "ok": check.ok}
    return report, 0 if check.ok else 1


def _soc_entry(profile: platform.SocProfile, note: str | None) -> dict:
    """The report's ``soc``: the profile tiled for and the note saying why it was chosen."""
    return {"name": profile.name, "vectorCoreNum": profile.vector_core_num, "ubSize": profile.ub_size, "note": note}


def _text(report: dict) -> str:
    lines = [f"op           {report['op']} ({report['variant']}) - {report['source']}",
             f"             {', '.join(report['inputs'])} -> {', '.join(report['outputs'])}; attrs "
             # a float attr is a C float, printed as its step prints it (2e11: 2e+11, never 200000000000.0)
             + (", ".join(f"{k}={value_text(float(v), DataType.FLOAT)}" for k, v in report["attrs"].items())
                or "none")
             + f"; config {report['config']}" + (f" (opFile {report['opFile']})" if report["opFile"] else "")]
    if "aclnn" in report:
        a = report["aclnn"]
        feeds = ", ".join(f"{report['inputs'][i]}={a['tensors'][j]}" for i, j in enumerate(a["kernelInputs"]))
        lines.append(f"aclnn        aclnn{a['api']}({', '.join(a['tensors'])}) -> {a['kernel']}({feeds})")
        lines += [f"  note       {report['aclnnNote']}"] if "aclnnNote" in report else []
        lines += [f"  step       {step}" for step in report.get("executorSteps", [])]
        lines += [f"  host       {line}" for line in report.get("hostPlan", [])]
    soc = report["soc"]
    lines.append(f"soc          {soc['name']}: {soc['vectorCoreNum']} vector cores, UB {soc['ubSize']} B"
                 + (f"; {soc['note']}" if soc["note"] else ""))
    match = report["defMatch"]
    rows = " | ".join(",".join(r) for r in match["rows"])
    found = (f"binary row {match['rowIndex'] + 1} of {len(match['rows'])}" if match["rowIndex"] is not None
             else "no binary row matches")
    handed = f" (the executor's casts; typed {', '.join(match['typed'])})" if "typed" in match else ""
    lines.append(f"def match    {', '.join(match['dtypes'])}{handed}: {found} ({rows})")
    if "inferredShape" in report:
        lines.append(f"infershape   {report['outputs'][0]} = {report['inferredShape']}")
    for reason in ("emptyFastPath", "aicpu"):
        if reason in report:
            lines.append(f"tiling       none: {report[reason]}")
    if "tilingData" in report:
        lines.append(f"tiling       {report['template']} -> {report['tilingStruct']}")
        lines += [f"  {key} = {value}" for key, value in flatten(report["tilingData"])]
        lines += [f"tiling key   {report['tilingKey']}", f"block dim    {report['blockDim']}",
                  f"workspace    {report['workspaceSize']} B"]
        lines += [f"note         {note}" for note in report["notes"]]
    if "error" in report:
        lines.append(f"FAILED       {report['error']}")
    if "simulation" in report:
        lines += _simulation_text(report["simulation"])
    lines += [f"FAILED       {failure}" for failure in report.get("failures", [])]
    return "\n".join(lines)


def _simulation_text(sim: dict) -> list[str]:
    if "error" in sim:
        return [f"simulation   not run: {sim['error']}"]
    if "notRun" in sim:
        return [f"simulation   not run: {sim['notRun']}: a limit of this host, not a failed check"]
    run = sim["sim"]
    written = "its one element" if run["elements"] == 1 else f"every one of {run['elements']} elements"
    coverage = f"{written} written exactly once" if sim["coveredOnce"] else "BROKEN"
    bounds = "no access leaves the tensors" if sim["inBounds"] else "accesses past the tensors (see findings)"
    lines = [f"simulation   blocks {run['blocks']}, tiles {run['tiles']}, "
             f"{'double' if run['bufferNum'] == 2 else 'single'}-buffered; largest tile {run['maxTileElems']} "
             f"of {run['bufferElems']} elements per UB buffer; UB {run['ubAllocBytes']} of {run['ubSize']} B",
             f"  coverage   {coverage}",
             f"  UB budget  {'respected' if sim['withinUb'] else 'EXCEEDED'}",
             f"  bounds     {bounds}"]
    lines += [f"  finding    {f['kind']}: {f['elements']} elements, {f['bytes']} B - {f['detail']}"
              for f in run["findings"]]
    exact = "bit-exact" if sim["referenceMismatches"] == 0 else f"{sim['referenceMismatches']} elements differ"
    lines.append(f"  result     {exact} vs the float64-derived reference ({sim['semantics']})")
    if sim["torchDifferences"] is not None:
        lines.append(f"  vs PyTorch {sim['torchDifferences']} elements differ from PyTorch's result - "
                     f"{sim['torchNote']}")
    past = "" if sim["inBounds"] or not sim["ok"] else \
        " (the accesses past the tensors are the source kernel's own, reported above, not a failure)"
    lines.append(f"  verdict    {'OK' if sim['ok'] else 'FAILED'}{past}")
    return lines


def run(args: argparse.Namespace, *, aclnn_details: AclnnDetailsHook | None = None) -> int:
    """Run ``opsnn tiling``; returns the exit code (0 ok, 1 tiling/check failed, 2 bad arguments).

    ``aclnn_details(args, api, attrs)``, when given, returns report entries for aclnn API ``api``
    called with the tiled kernel's ``attrs`` as its scalars: the executor steps the aclnn call would
    record (``executorSteps``), how opsnn's compiled kernel walks it on this machine (``hostPlan``)
    and a note on the options (``aclnnNote``); ``opsnn.cli`` wires the engine in here.
    """
    try:
        report, code = build_report(args, aclnn_details)
    except _UsageError as exc:  # (as argparse and the other commands write a usage error)
        print(f"opsnn tiling: error: {exc}", file=sys.stderr)
        return 2
    except AclnnError as exc:  # no def of the op is built for the requested SoC: nothing to tile
        if args.json:  # a JSON reader gets the reason where a failed check's would be, with the
            # kernel op and the soc entry as every report has them, not the words typed
            soc = getattr(args, "soc", None)
            profile = platform.get_profile(soc) if soc is not None else platform.current()
            print(strict_json({"op": opdef.find(args.op)[0].name, "soc": _soc_entry(profile, None),
                               "failures": [exc.message]}, indent=2))
        else:
            print(f"opsnn tiling: {exc.message}", file=sys.stderr)
        return 1
    print(strict_json(report, indent=2) if args.json else _text(report))
    return code
