"""``python -m opsnn.samples``: both ops-nn samples, one after the other, as ``opsnn demo`` starts.

Exit status: 0, or the first failing sample's ret (each sample exits with its own when run alone:
``python -m opsnn.samples.leaky_relu_backward``); a failed sample's message is printed and the
next sample still runs, as in ``opsnn demo``."""

from . import hardtanh_backward, leaky_relu_backward
from .common import run_as_script, run_sample


def main() -> int:
    """Both samples in turn; the first failing one's ret (``run_sample``: a failed one's message
    printed and the next sample run; a new user's: a LeakyReluBackward sample failing on
    Ascend310B had skipped the HardtanhBackward one)."""
    first = 0
    for sample in (leaky_relu_backward, hardtanh_backward):
        print(f"== {sample.__name__.rsplit('.', 1)[-1]} (the ops-nn sample, line by line)")
        ret = run_sample(sample.main)
        first = first or ret
    return first


if __name__ == "__main__":
    run_as_script(main, "opsnn.samples")
