#!/usr/bin/env python
"""Benchmark opsnn against PyTorch, NumPy and a memory-bandwidth reference.

    python benchmarks/bench.py                 # the full grid (~30-40 minutes on 2 cores), results in benchmarks/results/
    python benchmarks/bench.py --quick         # seconds
    opsnn bench --help                         # the same through the CLI (results in ./bench-results)

See BENCHMARKS.md for a recorded run and src/opsnn/bench.py for what is measured.
"""

import sys
from pathlib import Path

from opsnn.bench import main

if __name__ == "__main__":
    # this script records into benchmarks/results unless told otherwise (a later --out-dir wins)
    sys.exit(main(["--out-dir", str(Path(__file__).parent / "results"), *sys.argv[1:]]))
