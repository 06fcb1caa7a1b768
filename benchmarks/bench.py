#!/usr/bin/env python
"""Benchmark opsnn against PyTorch, NumPy and a memory-bandwidth reference.

    python benchmarks/bench.py                 # the full grid (~30-40 minutes on 2 cores), results in benchmarks/results/
    python benchmarks/bench.py --quick         # seconds, into ./bench-results (not the recorded run's folder)
    opsnn bench --help                         # the same through the CLI (results in ./bench-results)

See BENCHMARKS.md for a recorded run and src/opsnn/bench.py for what is measured.
"""

import sys
from pathlib import Path

from opsnn.bench import main

if __name__ == "__main__":
    # a full run is recorded into benchmarks/results unless told otherwise (a later --out-dir wins);
    # a --quick one goes where opsnn bench puts it: it had overwritten the recorded run, which
    # record.py would then have put into BENCHMARKS.md (a breaker)
    recorded = [] if "--quick" in sys.argv[1:] else ["--out-dir", str(Path(__file__).parent / "results")]
    sys.exit(main(recorded + sys.argv[1:]))
