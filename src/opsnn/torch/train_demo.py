"""A real training run on opsnn's kernels: an MLP on scikit-learn's digits, trained twice.

The same network (same initial weights, same batches, same optimizer) is trained once with
torch.nn's activations and once after ``swap_activations`` put opsnn's LeakyReLU (in place, so
its backward runs with self_is_result=True), Hardtanh and ReLU6 in their places. Forward and
backward of every activation then run through aclnnLeakyRelu/aclnnInplaceLeakyRelu,
aclnnHardtanh, aclnnLeakyReluBackward and aclnnHardtanhBackward (the emulated two-phase API);
everything else (Linear, loss, SGD) is torch's.

With deterministic settings (one intra-op thread, ``torch.use_deterministic_algorithms``) the
two runs agree to the last bit: opsnn's activations and gradients are bit-identical to torch's
CPU kernels for float32. The only documented differences (DECISIONS 8 and 2) cannot occur here:
NaN never reaches a Hardtanh in training (a NaN loss would stop learning anyway), and the slope
is applied as float32(negative_slope) by both libraries for float32 tensors.

Usage: ``python examples/train_digits.py [--quick] [--epochs N] [--seed N] [--threads N] [--plot PATH]``
or ``main(argv)``; exit status 0 when the two runs are bit-identical, 1 when they are not.
Needs torch, scikit-learn (the data ships with it, no download) and matplotlib (for the plot).
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import dataclasses
import os
import time
from pathlib import Path

import numpy as np
import torch

from .._core.checks import counted
from ..cli_args import Parser
from ..cli_stdout import run_writing_stdout
from ..cli_words import int_at_least
from ..results import cannot_write
from .nn import swap_activations


@dataclasses.dataclass
class RunResult:
    """One training run."""

    label: str
    losses: list[float]           # training loss per step (float32 values)
    test_accuracy: list[float]    # after each epoch
    final_state: dict
    seconds: float


def load_digits_split(seed: int = 0, test_fraction: float = 0.2):
    """Digits (1797 8x8 images, 10 classes) scaled to [0, 1], split by a seeded permutation.

    Returns float32 ``x_train, y_train, x_test, y_test`` tensors (labels int64)."""
    from sklearn.datasets import load_digits

    data = load_digits()
    x = (data.data / 16.0).astype(np.float32)
    y = data.target.astype(np.int64)
    order = np.random.RandomState(seed).permutation(len(x))
    n_test = int(round(len(x) * test_fraction))
    test, train = order[:n_test], order[n_test:]
    return (torch.from_numpy(x[train]), torch.from_numpy(y[train]),
            torch.from_numpy(x[test]), torch.from_numpy(y[test]))


def make_model(seed: int = 0) -> torch.nn.Module:
    """64 -> 128 -> 128 -> 64 -> 10 MLP with torch.nn's LeakyReLU (in place), Hardtanh, ReLU6."""
    torch.manual_seed(seed)
    return torch.nn.Sequential(
        torch.nn.Linear(64, 128), torch.nn.LeakyReLU(0.1, inplace=True),
        torch.nn.Linear(128, 128), torch.nn.Hardtanh(-1.0, 1.0),
        torch.nn.Linear(128, 64), torch.nn.ReLU6(),
        torch.nn.Linear(64, 10),
    )


@contextlib.contextmanager
def deterministic(threads: int = 1):
    """One fixed intra-op thread count and deterministic algorithms; restored afterwards."""
    saved_threads = torch.get_num_threads()
    saved_det = torch.are_deterministic_algorithms_enabled()
    torch.set_num_threads(threads)
    torch.use_deterministic_algorithms(True)
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(saved_det)
        torch.set_num_threads(saved_threads)


def train(model: torch.nn.Module, data, *, label: str, epochs: int, batch_size: int = 64,
          lr: float = 0.05, max_steps: int | None = None, seed: int = 0) -> RunResult:
    """SGD with momentum on cross-entropy; batches from a seeded generator."""
    x_train, y_train, x_test, y_test = data
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()
    generator = torch.Generator().manual_seed(seed)
    losses: list[float] = []
    accuracy: list[float] = []
    start = time.perf_counter()
    steps = 0
    for _ in range(epochs):
        model.train()
        order = torch.randperm(len(x_train), generator=generator)
        for i in range(0, len(order), batch_size):
            batch = order[i:i + batch_size]
            optimizer.zero_grad()
            loss = loss_fn(model(x_train[batch]), y_train[batch])
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
            steps += 1
            if max_steps is not None and steps >= max_steps:
                break
        model.eval()
        with torch.no_grad():
            predicted = model(x_test).argmax(dim=1)
        accuracy.append((predicted == y_test).float().mean().item())
        if max_steps is not None and steps >= max_steps:
            break
    seconds = time.perf_counter() - start
    state = {k: v.detach().clone() for k, v in model.state_dict().items()}
    return RunResult(label, losses, accuracy, state, seconds)


def compare(a: RunResult, b: RunResult) -> tuple[bool, str]:
    """Bitwise comparison of the loss curves and the final weights, with where they part."""
    la = np.asarray(a.losses, dtype=np.float64)
    lb = np.asarray(b.losses, dtype=np.float64)
    if la.shape != lb.shape:
        return False, f"different step counts: {la.size} vs {lb.size}"
    differ = np.flatnonzero(la.view(np.int64) != lb.view(np.int64))
    weights = [k for k in a.final_state if not torch.equal(a.final_state[k], b.final_state[k])]
    if differ.size == 0 and not weights:
        return True, (f"bit-identical: all {la.size} losses and all {len(a.final_state)} final "
                      "parameter tensors are equal to the last bit")
    where = []
    if differ.size:
        step = int(differ[0])
        where.append(f"losses first differ at step {step} ({la[step]!r} vs {lb[step]!r}), "
                     f"max |diff| {np.max(np.abs(la - lb)):.3e}")
    if weights:
        where.append(f"final parameters differ in {', '.join(weights)}")
    return False, ("NOT bit-identical: " + "; ".join(where) + ". Expected only for NaN inputs to "
                   "Hardtanh (DECISION 8) or float64 models with a slope that is not float32-exact "
                   "(DECISION 2); anything else is an opsnn bug.")


def plot(results: list[RunResult], verdict: str, path: str) -> str:
    """Loss curves side by side (one panel per run, same axes) with final accuracies."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(results), figsize=(6 * len(results), 4.2), sharey=True)
    colors = ("tab:blue", "tab:orange")
    for ax, result, color in zip(np.atleast_1d(axes), results, colors):
        steps = np.arange(1, len(result.losses) + 1)
        ax.plot(steps, result.losses, color=color, linewidth=0.8, label="training loss (per step)")
        ax.set_yscale("log")
        ax.set_xlabel("step")
        ax.set_title(f"{result.label}\nfinal test accuracy {result.test_accuracy[-1]:.2%}, "
                     f"{result.seconds:.1f} s")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(loc="upper right")
    np.atleast_1d(axes)[0].set_ylabel("cross-entropy loss")
    fig.suptitle("MLP on scikit-learn digits, same seed: " + verdict.split(":")[0], fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def run(*, epochs: int = 30, max_steps: int | None = None, seed: int = 0, threads: int = 1,
        plot_path: str | None = "train_digits.png", log=print) -> dict:
    """Train both models; returns ``{"torch": RunResult, "opsnn": RunResult, "identical": bool,
    "verdict": str, "plot": path or None}``."""
    data = load_digits_split(seed)
    with deterministic(threads):
        reference = make_model(seed)
        candidate = swap_activations(copy.deepcopy(reference))
        log(f"model (opsnn run):\n{candidate}")
        results = [train(reference, data, label="torch.nn activations", epochs=epochs,
                         max_steps=max_steps, seed=seed),
                   train(candidate, data, label="opsnn activations", epochs=epochs,
                         max_steps=max_steps, seed=seed)]
    identical, verdict = compare(*results)
    log(f"{'run':<22} {'steps':>6} {'final loss':>12} {'test acc':>9} {'time':>8}")
    for r in results:
        log(f"{r.label:<22} {len(r.losses):>6} {r.losses[-1]:>12.6f} {r.test_accuracy[-1]:>9.2%} "
            f"{r.seconds:>7.2f}s")
    log(verdict)
    if results[1].seconds > results[0].seconds:  # a newcomer asked why opsnn's run is slower
        log("(opsnn's run is slower on these 64-sample batches: each activation call crosses from torch into "
            "opsnn's Python layer, a few microseconds more than torch's own kernel (docs/torch.md, \"Overhead\"), "
            "and a first call of a shape plans it (\"Direct calls\"). The comparison here is of the numbers.)")
    written = None
    if plot_path:
        try:
            written = plot(results, verdict, plot_path)
            log(f"plot: {written}")
        except ImportError as exc:
            log(f"plot skipped: {exc}")
    return {"torch": results[0], "opsnn": results[1], "identical": identical, "verdict": verdict,
            "plot": written}


# epochs of the full run, at most: an epoch takes ~0.1 s on the 2-core machine (docs/torch.md), so
# this is a few minutes, where a count with no top trained for ever (--epochs 1e18), as demo's --repeat had
MAX_EPOCHS = 1000


def _threads(text: str) -> int:
    """1 to this machine's CPUs: torch.set_num_threads far beyond them failed to map a library.
    One range for every refusal (0 had been "an integer >= 1", 3 on 2 CPUs "give 1 to 2")."""
    cpus = os.cpu_count() or 1
    return int_at_least(1, cpus, bound=f"a thread count: at most this machine's {counted(cpus, 'CPU')}")(text)


def _plot_path(text: str) -> str:
    """A .png file in an existing, writable folder, or '' for no plot: checked before training,
    which had taken minutes before a bad path was refused (a folder had been saved as .png)."""
    if not text:
        return text
    path = Path(text)
    if text.endswith(("/", os.sep)) or path.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} is a folder; name a .png file in it")
    if path.suffix.lower() != ".png":
        raise argparse.ArgumentTypeError(f"{text!r} is not a .png file name")
    folder = path.parent
    why = "no such folder" if not folder.is_dir() else cannot_write(text)  # (tried: root passes os.access)
    if why:
        raise argparse.ArgumentTypeError(f"cannot write {text!r}: {str(folder)!r} is no writable folder ({why})")
    return text


def main(argv: list[str] | None = None, prog: str = "train_digits") -> int:
    """CLI entry (``opsnn demo --train``, whose name ``prog`` is for its usage lines): exit
    status 0 when the runs are bit-identical, 1 where they differ or stdout would not take the
    log (a full disk), 2 for a usage error, 141 where stdout's reader went away (its help or log
    into ``| head``), as every opsnn command."""
    # opsnn's parser: argparse's handed --epochs=-- an empty list (a traceback) and dropped a
    # closed pipe's error under --help (exit 0)
    parser = Parser(
        prog=prog, description="Train an MLP on scikit-learn digits with torch's and with "
                                         "opsnn's activations and compare the runs bit for bit.")
    parser.add_argument("--quick", action="store_true", help="12 steps of one epoch only (CI)")
    parser.add_argument("--epochs", type=int_at_least(1, MAX_EPOCHS), default=30,
                        help=f"epochs for the full run (default 30, at most {MAX_EPOCHS})")
    parser.add_argument("--seed", type=int_at_least(0), default=0,
                        help="seed of the train/test split, the initial weights and the batch order (default 0)")
    parser.add_argument("--threads", type=_threads, default=1, help="torch intra-op threads (default 1)")
    parser.add_argument("--plot", type=_plot_path, default="train_digits.png", help="PNG path of the loss curves (default train_digits.png; '' for none)")

    def train() -> int:
        args = parser.parse_args(argv)
        epochs, max_steps = (1, 12) if args.quick else (args.epochs, None)
        result = run(epochs=epochs, max_steps=max_steps, seed=args.seed, threads=args.threads,
                     plot_path=args.plot or None)
        return 0 if result["identical"] else 1

    # (a closed pipe: 141, a full disk: one line and 1, as every opsnn command)
    return run_writing_stdout(parser.prog, train)


if __name__ == "__main__":
    raise SystemExit(main())
