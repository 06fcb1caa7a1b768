"""Every OpSpec is bound on every surface, documented, and the layers import only downward."""

import ast
import pathlib

import pytest

import opsnn
from opsnn import aclnn, functional, registry

SRC = pathlib.Path(opsnn.__file__).parent
PYTHONIC = {"LeakyReluBackward": "leaky_relu_backward", "HardtanhBackward": "hardtanh_backward",
            "LeakyRelu": "leaky_relu", "Hardtanh": "hardtanh",
            "InplaceLeakyRelu": "leaky_relu_", "InplaceHardtanh": "hardtanh_"}


@pytest.mark.parametrize("spec", registry.all_specs(), ids=lambda s: s.name)
def test_every_spec_has_both_aclnn_phases_and_a_pythonic_function(spec):
    phase1 = getattr(aclnn, spec.api_name + "GetWorkspaceSize")
    phase2 = getattr(aclnn, spec.api_name)
    assert phase1.__doc__ and phase2.__doc__
    assert spec.python_name == PYTHONIC[spec.name]  # (what opsnn list and an unknown name's message show)
    assert registry.resolve(spec.python_name) is spec
    function = getattr(opsnn, PYTHONIC[spec.name])
    assert function.__doc__ and "Raises" in function.__doc__
    assert spec.formula and spec.source


@pytest.mark.parametrize("spec", registry.all_specs(), ids=lambda s: s.name)
def test_spec_is_consistent(spec):
    names = {p.name for p in spec.params}
    assert set(spec.null_order) <= names
    assert set(spec.kernel_inputs) <= {p.name for p in spec.inputs} | {"out"}
    assert spec.output.name == "out" or spec.output.name in names
    assert registry.get(spec.api_name) is spec
    assert registry.get(spec.kernel_name).kernel_name == spec.kernel_name


def test_every_dtype_list_is_shown_in_one_order():
    """(A new user) `opsnn demo` and `opsnn describe` listed Hardtanh's dtypes from FLOAT16 (its
    source's order), the other operators' from FLOAT: every list is now in opbase's PromoteType
    order, whatever order its source gives."""
    from opsnn._core import platform
    from opsnn._core.dtypes import DataType as D

    hardtanh = registry.get("Hardtanh").param("self").dtypes
    assert hardtanh.for_profile(platform.get_profile("Ascend910B")) == (
        D.FLOAT, D.FLOAT16, D.DOUBLE, D.BF16, D.INT8, D.UINT8, D.INT16, D.INT32, D.INT64)
    assert hardtanh.for_profile(platform.get_profile("Ascend910")) == (
        D.FLOAT, D.FLOAT16, D.DOUBLE, D.INT8, D.UINT8, D.INT16, D.INT32, D.INT64)
    promote_order = [D.FLOAT, D.FLOAT16, D.DOUBLE, D.BF16, D.INT8, D.UINT8, D.INT16, D.UINT16, D.INT32,
                     D.UINT32, D.INT64, D.UINT64, D.BOOL]
    for spec in registry.all_specs():
        for param in spec.params:
            for profile in platform.PROFILES.values():
                listed = param.dtypes.for_profile(profile) if param.dtypes else ()
                assert list(listed) == sorted(listed, key=promote_order.index), (spec.name, param.name, profile.name)


def _imports(path: pathlib.Path) -> set[str]:
    """Absolute module names a file imports (relative imports resolved against opsnn)."""
    tree = ast.parse(path.read_text())
    package = ".".join(("opsnn",) + path.relative_to(SRC).parent.parts)
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)
    return found


def test_core_imports_nothing_above_it():
    for path in (SRC / "_core").glob("*.py"):
        for module in _imports(path):
            if module.startswith("opsnn"):
                assert module.startswith("opsnn._core"), f"{path.name} imports {module}"
            assert not module.startswith(("torch", "numba")), f"{path.name} imports {module}"


def test_only_opsnn_torch_imports_torch_at_module_level():
    for path in SRC.rglob("*.py"):
        if "torch" in path.relative_to(SRC).parts[:1] or path.name == "bench.py":
            continue
        tree = ast.parse(path.read_text())
        top_level = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
        for node in top_level:
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            assert not any(n == "torch" or n.startswith("torch.") for n in names), path


def test_registry_rejects_a_duplicate_and_unknown_names():
    spec = registry.get("LeakyReluBackward")
    with pytest.raises(ValueError):
        registry.register(spec)
    with pytest.raises(KeyError):
        registry.get("NoSuchOp")
    assert functional.leaky_relu_backward is opsnn.leaky_relu_backward


@pytest.mark.parametrize("word, name", [
    ("aclnnHardtanhBackward", "HardtanhBackward"), ("hardtanhbackward", "HardtanhBackward"),
    ("ACLNNHARDTANHBACKWARD", "HardtanhBackward"), ("hardtanh_backward", "HardtanhBackward"),
    ("HARDTANH_BACKWARD", "HardtanhBackward"), ("aclnn_hardtanh_backward", "HardtanhBackward"),
    ("hardtanhgrad", "HardtanhBackward"), ("hardtanh_grad", "HardtanhBackward"), ("aclnnHardtanhGrad", "HardtanhBackward"),
    ("clip_by_value_v2", "Hardtanh"), ("hardtanh_", "InplaceHardtanh"), ("inplace_hardtanh", "InplaceHardtanh"),
    ("Leaky_Relu_", "InplaceLeakyRelu"), ("aclnninplaceleakyrelu", "InplaceLeakyRelu"),
])
def test_resolve_takes_each_canonical_spelling_in_any_case(word, name):
    """The aclnn name (prefix optional), its snake_case (the Pythonic name), the kernel op's
    CamelCase name and its snake_case, in any case."""
    assert registry.resolve(word).name == name


@pytest.mark.parametrize("word, hint", [
    ("h_a_r_d_t_a_n_h", " (did you mean Hardtanh?)"), ("hard_tanh", " (did you mean Hardtanh?)"),
    ("leakyrelu_backward", " (did you mean leaky_relu_backward?)"), ("leaky_relubackward", " (did you mean leaky_relu_backward?)"),
    ("_hardtanh", " (did you mean Hardtanh?)"), ("hardtanh__", " (did you mean hardtanh_?)"),
    ("hardtanh_backward_", " (did you mean hardtanh_backward?)"), ("aclnnhardtanh_backward", None),
    ("aclnn_hardtanhbackward", None),
])
def test_resolve_refuses_underscores_put_anywhere(word, hint):
    """(a breaker) the underscores of a name were all dropped before it was looked up, so
    h_a_r_d_t_a_n_h was Hardtanh: only the canonical spellings resolve (a snake_case name's
    underscores where its CamelCase has capitals), a near miss still hinting the closest."""
    with pytest.raises(KeyError) as exc:
        registry.resolve(word)
    message = exc.value.args[0]
    assert message.startswith(f"unknown operator {word!r}{hint if hint is not None else ''}"), message
