"""The real run: an MLP on scikit-learn's digits trained with torch's and with opsnn's activations
(quick mode here; the full run is ``python examples/train_digits.py``)."""

from __future__ import annotations

import runpy
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("sklearn")

from opsnn.torch import nn as onn  # noqa: E402
from opsnn.torch import train_demo  # noqa: E402

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "train_digits.py"


def test_quick_run_is_bit_identical_and_plots(tmp_path):
    pytest.importorskip("matplotlib")
    lines: list[str] = []
    result = train_demo.run(epochs=1, max_steps=12, plot_path=str(tmp_path / "loss.png"), log=lines.append)
    assert result["identical"], result["verdict"]
    assert len(result["torch"].losses) == len(result["opsnn"].losses) == 12
    assert result["torch"].losses == result["opsnn"].losses
    assert result["torch"].losses[-1] < result["torch"].losses[0]  # it learns
    assert (tmp_path / "loss.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = "\n".join(lines)
    assert "bit-identical" in text and "opsnn activations" in text


def test_the_opsnn_model_really_uses_opsnn_modules():
    model = train_demo.swap_activations(train_demo.make_model(0))
    kinds = {type(m) for m in model.modules()}
    assert {onn.LeakyReLU, onn.Hardtanh, onn.ReLU6} <= kinds
    assert not kinds & {torch.nn.LeakyReLU, torch.nn.Hardtanh, torch.nn.ReLU6}


def test_deterministic_settings_are_restored():
    threads, det = torch.get_num_threads(), torch.are_deterministic_algorithms_enabled()
    with train_demo.deterministic(1):
        assert torch.get_num_threads() == 1 and torch.are_deterministic_algorithms_enabled()
    assert (torch.get_num_threads(), torch.are_deterministic_algorithms_enabled()) == (threads, det)


def test_example_script_quick_mode(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", [str(EXAMPLE), "--quick", "--plot", ""])
    with pytest.raises(SystemExit) as done:
        runpy.run_path(str(EXAMPLE), run_name="__main__")
    assert done.value.code == 0
    assert "bit-identical" in capsys.readouterr().out


def test_main_reports_a_difference_with_exit_status_1(monkeypatch, capsys):
    real_compare = train_demo.compare

    def fake_compare(a, b):
        b.losses[3] += 1e-3
        return real_compare(a, b)

    monkeypatch.setattr(train_demo, "compare", fake_compare)
    assert train_demo.main(["--quick", "--plot", ""]) == 1
    assert "losses first differ at step 3" in capsys.readouterr().out


def test_bad_plot_paths_and_thread_counts_are_usage_errors_before_training(tmp_path, monkeypatch, capsys):
    """Found by a breaker: a plot path in a missing folder or without .png was refused only after
    the whole training run, a folder (`dir/`) was saved as `dir/.png`, and --threads 100000
    ended in a traceback. Each is a usage error now, before anything trains."""
    import os

    monkeypatch.setattr(train_demo, "run", lambda **kw: pytest.fail("trained before refusing the arguments"))
    cpus = os.cpu_count()
    for argv, words in ((["--plot", str(tmp_path / "missing" / "x.png")], "is no writable folder"),
                        (["--plot", str(tmp_path / "x.txt")], "is not a .png file name"),
                        (["--plot", f"{tmp_path}/"], "is a folder; name a .png file in it"),
                        (["--plot", str(tmp_path)], "is a folder"),
                        # (a breaker) 0, 3 on 2 CPUs and 1e19 are told one range: 0 had been "an integer
                        # >= 1", 1e19 "at most 1e18: write the digits for more", digits refused too
                        *((["--threads", word], f"argument --threads: expected an integer from 1 to {cpus}, got {word!r}")
                          for word in ("0", str(cpus + 1), "1e19")),
                        *((["--threads", word], (f"{word!r} (a thread count: at most this machine's "
                                                 f"{cpus} CPU{'s' if cpus > 1 else ''})\n"))
                          for word in (str(cpus + 1), "1e19")),
                        # (a breaker) root passes os.access for /proc, where no file can be made:
                        # the folder is tried, not judged by its permission bits
                        *([(["--plot", "/proc/nope.png"], "cannot write '/proc/nope.png': '/proc' is no "
                                                          "writable folder (")] if os.path.isdir("/proc") else [])):
        with pytest.raises(SystemExit) as exc:
            train_demo.main(["--quick", *argv])
        assert exc.value.code == 2 and words in capsys.readouterr().err, argv


def test_one_cpu_is_counted_as_one(monkeypatch, capsys):
    """(A regression breaker) on a one-CPU machine --threads 2 was told "at most this machine's 1
    CPUs": one CPU is said as one."""
    import os

    monkeypatch.setattr(train_demo, "run", lambda **kw: pytest.fail("trained before refusing the arguments"))
    monkeypatch.setattr(os, "cpu_count", lambda: 1)
    with pytest.raises(SystemExit) as exc:
        train_demo.main(["--quick", "--threads", "2"])
    assert exc.value.code == 2
    assert capsys.readouterr().err.endswith("argument --threads: expected an integer from 1 to 1, got '2' (a thread "
                                            "count: at most this machine's 1 CPU)\n")


@pytest.mark.parametrize("option", ["--epochs", "--seed", "--threads", "--plot"])
def test_an_option_given_dash_dash_by_equals_is_a_usage_error(capsys, option):
    """(A regression breaker) `opsnn demo --train --epochs=--` was a TypeError traceback,
    `--threads=--` a RuntimeError one, `--seed=--` "Seed must be non-empty" and `--plot=--` drew
    no plot, exit 0: argparse drops the `--` and hands the option an empty list. The training's
    parser is opsnn's (cli_args.Parser), which refuses it as every opsnn command does."""
    with pytest.raises(SystemExit) as done:
        train_demo.main([f"{option}=--"], prog="opsnn demo --train")
    assert done.value.code == 2
    assert capsys.readouterr().err.endswith(
        f"opsnn demo --train: error: argument {option}: expected a value, got '--'\n")


@pytest.mark.parametrize("argv", [["-m", "opsnn", "demo", "--train", "--help"], [str(EXAMPLE), "--help"],
                                  [str(EXAMPLE), "--quick", "--plot", ""]])
def test_help_and_output_into_a_closed_pipe_end_with_141(argv):
    """(A regression breaker) `opsnn demo --train --help | head -0` exited 0 (argparse drops the
    write's error) and examples/train_digits.py's output into a closed pipe was a
    BrokenPipeError traceback, exit 1, where every opsnn command ends with 141 and nothing on
    stderr."""
    proc = subprocess.Popen([sys.executable, *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert (proc.wait(timeout=300), err) == (141, "")


def test_epochs_have_a_top(monkeypatch, capsys):
    """(A breaker) --epochs had no top, where --repeat has one: `--epochs 1e18` trained for ever
    (an epoch takes ~0.1 s). At most MAX_EPOCHS (1000, a few minutes), said as other ranges are."""
    ran = []
    monkeypatch.setattr(train_demo, "run", lambda **kw: ran.append(kw["epochs"]) or {"identical": True})
    assert train_demo.MAX_EPOCHS == 1000 and train_demo.main(["--epochs", "1e3", "--plot", ""]) == 0 and ran == [1000]
    for word in ("1001", "1e18", "1e19"):
        with pytest.raises(SystemExit) as exc:
            train_demo.main(["--epochs", word], prog="opsnn demo --train")
        assert exc.value.code == 2 and capsys.readouterr().err.endswith(
            f"opsnn demo --train: error: argument --epochs: expected an integer from 1 to 1000, got {word!r}\n")
    assert ran == [1000]
