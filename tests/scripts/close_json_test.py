#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""bench/close_json.py against files cut where a stopped or crashed bench
leaves them: inside a run, between runs, inside the context, and whole.
Prints PASS: on success (ctest scripts.close_json_keeps_whole_runs)."""
import json
import os
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
tool = os.path.join(here, "..", "..", "bench", "close_json.py")
runs = [{"name": f"gpu/run/{i}", "run_type": "iteration", "real_time": 1.5 * i, "label": "a, {b} [c]"}
        for i in range(3)]
whole = json.dumps({"context": {"date": "2026-12-06", "host_name": "h"}, "benchmarks": runs}, indent=2)


def close(text):
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        f.write(text)
    out = subprocess.run([sys.executable, tool, f.name], capture_output=True, text=True, check=True).stdout
    body = open(f.name).read()
    os.unlink(f.name)
    return out.strip(), body


failures = []
# Whole: left as it is, byte for byte.
out, body = close(whole)
if not out.endswith(": whole") or body != whole:
    failures.append(f"whole file changed: {out}")
# Cut at every byte after the context: the runs written whole before the cut are kept, in order.
context_end = whole.index('"benchmarks"')
for cut in range(context_end, len(whole) - 1):
    out, body = close(whole[:cut])
    data = json.loads(body)
    kept = data["benchmarks"]
    expected = [r for r in runs if whole.index(json.dumps(r, indent=2).replace("\n", "\n    ")) +
                len(json.dumps(r, indent=2).replace("\n", "\n    ")) <= cut]
    if kept != expected or data["context"].get("closed_after_stop") is not True:
        failures.append(f"cut at {cut}: kept {len(kept)} runs, expected {len(expected)}")
        break
    if not out.endswith(f"closed after {len(kept)} runs"):
        failures.append(f"cut at {cut}: said {out!r}")
        break
# Cut inside the context: nothing to keep, and the file is left alone.
out, body = close(whole[:20])
if "unreadable" not in out or body != whole[:20]:
    failures.append(f"cut inside the context: {out!r}")
for f in failures:
    print("FAIL:", f)
if failures:
    sys.exit(1)
print(f"PASS: {len(whole) - context_end - 1} cuts, each keeping the runs written whole before it")
