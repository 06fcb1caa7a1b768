"""``opsnn verify FILE...``: run CANN's own system-test case files against opsnn.

Two formats are read (spec §9.3, ``../shared/cases/README.md``):

* **kernel ST csv** (``ttk_kernel_*_st.csv``): one row per case naming a kernel op
  (``leaky_relu_grad``, ``hardtanh_grad``, ``leaky_relu``, ``clip_by_value_v2``), its input dtypes,
  shapes, formats, attrs and data ranges such as ``(-1, 1, nan, -0.0, inf)`` (uniform in [-1, 1]
  with nan, -0.0 and inf injected; an integer input's special values must be integers its dtype
  holds), plus a tolerance.
* **aclnn ST json** (``atk_aclnn*.json``): a list of cases whose inputs carry a dtype, a shape and
  ``range_values``: ``[low, high]``, one fill value (a number or ``"inf"``/``"-inf"``/``"nan"``)
  or a one-element list holding one; an integer is read as one, not through a float.

Dtype and format names are read in any case, op names (``op_name``, ``aclnn_name``) as written
but for surrounding spaces, as CANN reads them; one that misses a known name only in case and underscores (``LeakyReluGrad``
for ``leaky_relu_grad``), or by a slip, is a usage error naming it (``casefiles._unknown_op``).

Each case runs exactly like a CANN user runs it: ``acl.rt.malloc`` + ``memcpy`` for every input,
``acl.create_tensor`` / ``create_scalar``, ``aclnnXxxGetWorkspaceSize``, a workspace
``malloc``, phase 2, ``synchronize_stream``, ``memcpy`` back, then destroy and free. The result
is compared with ``opsnn.reference`` (default) or with ``torch.ops.aten`` (``--golden torch``,
as CANN's own harness does), at the case's tolerance (bit-exact for the atk "md5" standard and a
csv row that gives none: ``comparison.compare``). opsnn's kernels are meant to be bit-exact,
so every row also says whether it is (NaN counts equal to NaN).

Kernel cases are mapped onto the aclnn API: ``LeakyReluGrad(gradients, features)`` ->
``aclnnLeakyReluBackward(gradOutput=gradients, self=features, selfIsResult=False)``;
``HardtanhGrad(result, grad)`` -> ``aclnnHardtanhBackward(gradOutput=grad, self=result)`` (the
kernel takes the forward input first, spec §7.1); ``LeakyRelu(x)`` -> ``aclnnLeakyRelu``;
``ClipByValueV2(x, min, max)`` -> ``aclnnHardtanh`` when min and max hold one element each. Float
kernel attrs become ``ACL_FLOAT`` scalars; an absent OPTIONAL attr takes the kernel default
(slope 0.0), an absent REQUIRED one (HardtanhGrad's min_val and max_val) makes the row malformed.
Operators that ``opsnn.aclnn`` does not provide yet are reported as SKIP, and so is a csv row
that is disabled (``is_enabled`` False: read for its name and op alone, ``casefiles._disabled``)
or gives its inputs or golden as binary files (``manual_input_binaries`` /
``manual_golden_binaries``: ``casefiles._not_run``), and a case
that phase 1 refuses with 561003 because the ``--soc`` product line has no kernel for its
operator (LeakyReluBackward on Ascend310B), and a case whose BF16 tensors or scalars the ``--soc``
dtype lists refuse (Ascend910: "needs a BF16-capable SoC"; ``command.bf16_refusal``). A kernel
row runs as the aclnn call would, casts included, so a dtype mix the kernel's own def has no
binary for (ops-nn's tiling refuses it: LeakyReluGrad's float16 and float32 inputs) still runs,
with a note saying so; so does a row whose ``soc_series`` names another SoC than the one run
(``--soc`` picks it). Notes never change a result. A case whose inputs do not broadcast runs
too, and FAILs as the aclnn call refuses it (161002).

Results: PASS (within tolerance), FAIL, SKIP (with the reason; never silently dropped) and DOC (a
``--golden torch`` difference that a documented decision explains element by element:
DECISIONS 2, the float32 slope for DOUBLE tensors; DECISIONS 8, NaN in self for HardtanhBackward).
The exit status is 1 if any case fails, 5 if every case is a SKIP (nothing verified, so a CI job
does not pass: ``results.exit_status``), else 0; a file that holds no case is a usage error (2).

The package, in the order a case travels through it (each module's docstring says more):
``cases`` (the case model and ``--cases``), ``casefiles`` and ``fields`` (reading the two formats
and checking each case), ``inputs`` (its data), ``bindings`` (the operator table: goldens, torch
calls, explanations), ``runtime`` (the acl calls), ``comparison`` (``compare`` and ``verdict``,
which ``opsnn compare`` shares) and ``command`` (skips, one case end to end, ``--dump``, the
options and the run). The package itself gives the CLI its ``add_arguments`` and ``run``.
"""

from opsnn.verify.command import add_arguments, run

__all__ = ["add_arguments", "run"]
