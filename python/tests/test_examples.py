# SPDX-License-Identifier: Apache-2.0
"""The seeds' scripts (python/examples/) run, at small sizes, and print the
user's code and fusekit's calls side by side."""
import os
import subprocess
import sys

import pytest

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "examples")


@pytest.mark.parametrize("script, args, rows", [
    ("hidden_layer.py", ["20000"], ["fusekit.hidden_layer", "hidden_layer_unfused"]),
    ("sum.py", ["30000"], ["fusekit.sum, deterministic", "fusekit.sum, naive_atomic", "distinct results"]),
    ("train.py", ["200", "8", "2"], ["user's NumPy loop", "GdOptions.recommended()", "np.linalg.lstsq"]),
])
def test_the_seeds_scripts_run_side_by_side(script, args, rows):
    done = subprocess.run([sys.executable, script, *args], cwd=EXAMPLES, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    for row in rows:
        assert row in done.stdout
    assert "vs original" in done.stdout
