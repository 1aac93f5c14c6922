#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""bench/compare.py's figure P6 divides like by like: the kernel-per-op loop's
time per output and iteration by the single launch's, which runs the N
outputs at once (a time per fit iteration would understate it N times).
Prints PASS: on success (ctest scripts.p6_compares_per_output_iteration)."""
import json
import pathlib
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "bench"))
import compare  # noqa: E402

with tempfile.TemporaryDirectory() as d:
    runs = [
        # 9 outputs at once: 90 us per fit iteration, 10 us per output and iteration
        {"name": "gpu/plain_single_launch/f64/9x9x9", "run_type": "iteration", "real_time": 9.0, "time_unit": "ms",
         "us_per_iteration": 90.0, "us_per_output_iteration": 10.0, "outputs": 9},
        # one output at a time: 40 us per output and iteration
        {"name": "gpu/plain_per_operation/f64/9x9x9", "run_type": "iteration", "real_time": 360.0, "time_unit": "ms",
         "us_per_iteration": 40.0, "us_per_output_iteration": 40.0},
    ]
    (pathlib.Path(d) / "train_bench.json").write_text(json.dumps({"context": {}, "benchmarks": runs}))
    line = [l for l in compare.figures(pathlib.Path(d)) if l.startswith("P6")][0]
    if not line.endswith(": 4.00x"):
        print("FAIL:", line)
        sys.exit(1)
    print("PASS:", line)
