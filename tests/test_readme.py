"""The README's runtime and aclnn snippets run as written and give the documented result."""

import pathlib
import re
import subprocess
import sys

import pytest
from conftest import run_python

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"


def test_readme_runtime_and_aclnn_snippets_run():
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    code = blocks[0] + blocks[1] + "\nassert ret == 0\nprint(result.tolist())\n"
    assert run_python(code).strip() == str([2.0, 0.029999999329447746, 0.03999999910593033, 5.0])


def test_readme_pythonic_snippet_runs():
    """Surface 3's block runs as written (a breaker: it used x, dy and buf undefined) and prints
    the refusal it describes."""
    block = next(b for b in re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
                 if "opsnn.leaky_relu_backward(dy, x" in b)
    code = block + "\nassert y.tolist() == [-0.019999999552965164, -0.004999999888241291, 0.5, 2.0]" \
                   "\nassert h.tolist() == [-1.0, -0.5, 0.5, 1.0] and x.tolist() == [-2.0, -0.5, 0.5, 2.0]" \
                       "\nassert buf.tolist() == [0.0, 1.0, 1.0, 0.0] and (dx == np.float32([0.01, 0.01, 1, 1])).all()\n"
    out = run_python(code)
    assert out.startswith("161002 LeakyReluBackward: selfIsResult is true with negativeSlope"), out


def test_quick_start_names_the_operators_the_demo_table_runs():
    """The Quick start's account of `opsnn demo` (a reader's check: it said "every operator",
    where the table has no in-place one) matches the table's operators: every out-of-place one."""
    from opsnn import demo, registry

    assert "then every out-of-place operator and supported dtype through the Pythonic API" in \
        " ".join(README.read_text().split())
    assert set(demo._CALLS) == {spec.name for spec in registry.all_specs() if not spec.inplace}


def test_tiling_doc_snippet_runs():
    """docs/tiling.md's block runs as written (a breaker: it raised NameError on placeholders)."""
    doc = README.parent / "docs" / "tiling.md"
    block = re.findall(r"```python\n(.*?)```", doc.read_text(), re.S)[0]
    code = block + "\nassert check.reference_mismatches == 0 and not check.sim.findings\nprint(plan.n_blocks)\n"
    assert run_python(code).split()[-1] == "1"


def test_torch_doc_snippet_runs():
    """docs/torch.md's first block runs as written and prints the swapped activation under
    opsnn's name, as its comment says; its torch.compile line runs the model eagerly here
    (test_torch_nn compiles such a model: a cold inductor compile costs CI ~10 s more)."""
    pytest.importorskip("torch")  # (an install without the torch extra runs the rest)
    doc = README.parent / "docs" / "torch.md"
    block = re.findall(r"```python\n(.*?)```", doc.read_text(), re.S)[0]
    printed = re.search(r"print\(model\[1\]\) +# (.*)", block).group(1)
    compiled = "torch.compile(model, fullgraph=True)(x)"
    assert compiled in block
    code = block.replace(compiled, "model(x)") + "\nassert x.grad is not None\n"
    assert run_python(code).strip() == printed


def test_readme_transcripts_are_what_the_commands_print(capsys, monkeypatch):
    """Each ``$ opsnn ...`` transcript in the README is what that command prints now (a breaker:
    the tiling example's tiling-key note had drifted from the code), but for the host plan's
    count of this machine's threads. They are a user's runs, without the OPSNN_PARALLEL_MIN_BYTES
    conftest sets (whose host plans say the threshold it sets)."""
    import shlex

    from opsnn import cli
    from opsnn.kernels import parallelism

    monkeypatch.setattr(parallelism, "PARALLEL_MIN_SET", False)

    def machine_free(text: str) -> str:
        return re.sub(r" of \d+ threads ", " of N threads ", text)

    transcripts = re.findall(r"```\n\$ (opsnn [^\n]*)\n(.*?)```", README.read_text(), re.S)
    assert transcripts
    for command, shown in transcripts:
        assert cli.main(shlex.split(command)[1:]) == 0
        assert machine_free(capsys.readouterr().out) == machine_free(shown), command


def test_no_file_needs_a_newer_python_than_requires_python():
    """The Quick start and pyproject's requires-python promise CPython >= 3.10, but CI runs one
    interpreter (3.11): a standard-library name or syntax newer than the minimum would land
    unnoticed (session 48 found a 3.11-only attribute only by running on 3.10). vermin reads each
    file's syntax and the library names it uses and lists those needing a newer version; a line
    that runs only on a newer Python (behind a version test) says so with ``# novermin``. What it
    cannot see, private attributes and behaviour, still needs a run on the minimum."""
    root = README.parent
    minimum = re.search(r'requires-python = ">=(\d+\.\d+)"', (root / "pyproject.toml").read_text())[1]
    folders = [str(root / name) for name in ("src", "tests", "benchmarks", "examples")]
    done = subprocess.run([sys.executable, "-c", "import vermin; vermin.main()", "-q", "--no-tips",
                           "--violations", f"-t={minimum}-", *folders],
                          capture_output=True, text=True, timeout=120, check=False)
    assert (done.returncode, done.stdout + done.stderr) == (0, ""), done.stdout + done.stderr


def test_readme_says_what_python_numbers_and_fallbacks_do():
    """(A breaker) the README's Python numbers passed as tensors left out that a complex beside a
    real array is refused (161002), and its NumPy fallback note said "logged once" where a
    layout's fallback is logged once per operator and reason (numba_backend._fell_back): the
    README quotes the refusal as opsnn words it, and says when a fallback is logged."""
    import numpy as np

    import opsnn
    from opsnn.kernels import numba_backend

    text = " ".join(README.read_text().split())
    quoted = "it must be a real number (bool, int or float), got complex"
    assert f"a complex beside a real array is refused, 161002 (\"{quoted}\")" in text
    with pytest.raises(opsnn.AclnnError) as info:
        opsnn.leaky_relu_backward(1j, np.ones(2, np.float32), 0.1)
    assert (info.value.status, info.value.message.endswith(quoted)) == (161002, True), info.value.message
    assert ("for what the numba backend cannot lower, logged once per operator and reason, and for a generated "
            "kernel that fails to compile, logged once per kernel: same bits") in text
    assert "once per operator and reason" in numba_backend._fell_back.__doc__
    assert "logged the first time only" in numba_backend._compile_failure.__doc__


@pytest.mark.parametrize("command", ["run", "tiling"])
def test_the_command_table_names_every_option_of_run_and_tiling(command):
    """(A new user's) the command table's `opsnn run` row named no `--self-is-result`, the one way
    to call LeakyReluBackward with selfIsResult from the command line, nor `--seed`; `opsnn
    tiling`'s none of `--negative-slope`, `--min-val`, `--max-val` (which the tiling example
    below it uses) or `--seed`. Each option of the command's parser is in its row's synopsis, but
    `--soc`, which has a row of its own."""
    import argparse

    from opsnn import cli

    parser = argparse.ArgumentParser()
    getattr(cli, f"_add_{command}_arguments")(parser)
    options = [action.option_strings[-1] for action in parser._actions
               if action.option_strings and action.option_strings[-1] not in ("--help", "--soc")]
    row = next(line for line in README.read_text().splitlines() if line.startswith(f"| `opsnn {command} OP"))
    synopsis = row.split("`")[1]
    assert [option for option in options if f"[{option}" not in synopsis and f" {option} " not in synopsis] == []


def test_the_status_table_says_which_561000_is_no_bug():
    """(A new user's) the status table called every 561000 "an internal opsnn error (a bug: please
    report it ...)", where the Pythonic API called inside torch.compile answers 561000 by design
    (docs/torch.md), its message saying what to call instead: the row says so, and that message
    is the one the code gives an exception of torch's frame compiler."""
    from opsnn import functional, registry

    row = next(line for line in README.read_text().splitlines() if line.startswith("| ACLNN_ERR_INNER | 561000 |"))
    assert "but a Pythonic function called inside `torch.compile`, whose message says to call `opsnn.torch`'s" in row
    dynamo_error = type("InternalTorchDynamoError", (RuntimeError,), {"__module__": "torch._dynamo.exc"})
    said = functional._internal_error(registry.get("LeakyRelu"), dynamo_error("frame"))
    assert said.startswith("LeakyRelu: torch.compile cannot compile opsnn's NumPy-style functions; inside a compiled "
                           "function call opsnn.torch's (torch.ops.opsnn.*, which it compiles)"), said
