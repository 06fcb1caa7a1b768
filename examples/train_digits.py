"""Train a small MLP on scikit-learn's digits twice from one seed: with torch.nn's activations and
with opsnn's (LeakyReLU in place, Hardtanh, ReLU6), then compare the runs bit for bit and plot the
loss curves side by side.

    python examples/train_digits.py            # full run (30 epochs), writes train_digits.png
    python examples/train_digits.py --quick    # a few steps (CI)

The work is in opsnn.torch.train_demo (also ``opsnn demo --train``). Needs the train extra:
``pip install -e '.[train]'`` (torch 2.13.0 CPU, scikit-learn, matplotlib).
"""

try:
    from opsnn.torch.train_demo import main
except ImportError as exc:
    raise SystemExit(f"{exc}\nthis example needs the train extra: pip install -e '.[train]'") from None

if __name__ == "__main__":
    raise SystemExit(main())
