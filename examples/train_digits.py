"""Train a small MLP on scikit-learn's digits twice from one seed: with torch.nn's activations and
with opsnn's (LeakyReLU in place, Hardtanh, ReLU6), then compare the runs bit for bit and plot the
loss curves side by side.

    python examples/train_digits.py            # full run (30 epochs), writes train_digits.png
    python examples/train_digits.py --quick    # a few steps (CI)

The work is in opsnn.torch.train_demo (also ``opsnn demo --train``).
"""

from opsnn.torch.train_demo import main

if __name__ == "__main__":
    raise SystemExit(main())
