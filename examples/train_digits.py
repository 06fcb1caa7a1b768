"""Train a small MLP on scikit-learn's digits twice from one seed: with torch.nn's activations and
with opsnn's (LeakyReLU in place, Hardtanh, ReLU6), then compare the runs bit for bit and plot the
loss curves side by side.

    python examples/train_digits.py            # full run (30 epochs), writes train_digits.png
    python examples/train_digits.py --quick    # a few steps (CI)

The work is in opsnn.torch.train_demo (also ``opsnn demo --train``). Needs the train extra
(torch 2.13.0 CPU, scikit-learn, matplotlib): ``pip install -e '.[train]'`` in a clone,
``pip install 'opsnn[train]'`` beside an installed opsnn; the message below names the one that fits.
"""

import importlib.util

from opsnn._core.extras import install_hint  # needs neither torch nor scikit-learn

_missing = [name for name in ("torch", "sklearn") if importlib.util.find_spec(name) is None]
if _missing:  # before importing anything that needs them: one line, not a traceback
    raise SystemExit(f"this example needs the train extra (missing {', '.join(_missing)}): "
                     f"{install_hint('train')}")

from opsnn.torch.train_demo import main  # after the check above

if __name__ == "__main__":
    raise SystemExit(main())
