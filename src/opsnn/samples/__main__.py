"""``python -m opsnn.samples``: both ops-nn samples, one after the other, as ``opsnn demo`` starts.

Exit status: 0, or the first failing sample's ret (each sample exits with its own when run alone:
``python -m opsnn.samples.leaky_relu_backward``)."""

from . import hardtanh_backward, leaky_relu_backward
from .common import run_as_script


def main() -> int:
    """Both samples in turn; a failed step raises SampleError, which ``run_as_script`` prints and
    exits with."""
    for sample in (leaky_relu_backward, hardtanh_backward):
        print(f"== {sample.__name__.rsplit('.', 1)[-1]} (the ops-nn sample, line by line)")
        ret = sample.main()
        if ret:
            return ret
    return 0


if __name__ == "__main__":
    run_as_script(main)
