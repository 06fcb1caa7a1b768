#!/usr/bin/env python
"""Benchmark opsnn against PyTorch, NumPy and a memory-bandwidth reference.

    python benchmarks/bench.py                 # the full grid (~10 minutes), results in benchmarks/results/
    python benchmarks/bench.py --quick         # seconds
    opsnn bench --help                         # the same, through the CLI

See benchmarks/BENCHMARKS.md for a recorded run and src/opsnn/bench.py for what is measured.
"""

import sys

from opsnn.bench import main

if __name__ == "__main__":
    sys.exit(main())
