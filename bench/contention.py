#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""cpu{} against cpu{1}, on a quiet machine and under contention, in one run.

Runs cpu_threads_bench (bench/cpu_threads.cpp) twice: quiet, then with two busy
processes at `nice -n 19` beside it (users' machines are never idle). The busy
processes are started and stopped by this script, each also bounded by
`timeout`, so none outlives the run. Where the fusekit Python package imports,
it also times fk.hidden_layer and fk.sum against NumPy at 10^6 float32 in the
same two conditions (alternating rounds, medians).

Writes OUT/summary.json (command, machine, commit, every row) and OUT/summary.md
(the tables README and docs cite).

    bench/contention.py --bench build/default/bench/cpu_threads_bench --out bench/results/DATE_NAME
        [--sizes 10000,100000,1000000,10000000] [--rounds 9] [--busy-seconds 900] [--no-python]
        [--before OLD_cpu_threads_bench]

--before: the same bench built from an earlier commit, run in the same
conditions right before this one's, for a before/after table in one run.
"""
import argparse
import csv
import datetime
import io
import json
import os
import platform
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def machine():
    model = platform.processor()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return {"cpu": model, "processors": os.cpu_count(), "python": platform.python_version(),
            "commit": commit.stdout.strip() or "unknown",
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}


class busy:
    """Two busy processes at nice 19 for the duration of the block (bounded by `seconds`)."""

    def __init__(self, seconds):
        self.seconds = seconds
        self.procs = []

    def __enter__(self):
        for _ in range(2):
            self.procs.append(subprocess.Popen(
                ["timeout", str(self.seconds), "nice", "-n", "19", "sh", "-c", "while :; do :; done"]))
        time.sleep(1.0)
        return self

    def __exit__(self, *exc):
        for p in self.procs:
            p.terminate()
        for p in self.procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
        return False


def run_bench(bench, sizes, rounds):
    out = subprocess.run([bench, "--sizes", sizes, "--rounds", str(rounds)], check=True, capture_output=True,
                         text=True, timeout=1800)
    return list(csv.DictReader(io.StringIO(out.stdout)))


PYTHON_PROBE = r"""
import json, sys, time
import numpy as np, fusekit as fk
n, rounds = int(sys.argv[1]), int(sys.argv[2])
rng = np.random.default_rng(1)
g = rng.integers(0, 256, n, dtype=np.uint8); w = rng.standard_normal(n).astype(np.float32)
x = rng.standard_normal(n).astype(np.float32); out = np.empty(n, np.float32)
def per_call(f):
    reps, start = 0, time.perf_counter()
    while True:
        f(); reps += 1
        t = time.perf_counter() - start
        if t > 0.004 or reps >= 1000: return t / reps * 1e3
cases = {"fk.hidden_layer": lambda: fk.hidden_layer(g, w, out=out),
         "fk.hidden_layer, 1 thread": lambda: fk.hidden_layer(g, w, out=out),
         "np.tanh(g / 255 * w)": lambda: np.tanh(g / np.float32(255) * w, out=out),
         "fk.sum": lambda: fk.sum(x), "fk.sum, 1 thread": lambda: fk.sum(x), "np.sum": lambda: np.sum(x)}
times = {k: [] for k in cases}
for f in cases.values(): f()
for r in range(rounds):
    for k in (cases if r % 2 == 0 else list(cases)[::-1]):
        fk.set_num_threads(1 if "1 thread" in k else 0)
        times[k].append(per_call(cases[k]))
fk.set_num_threads(0)
print(json.dumps({k: sorted(v)[len(v) // 2] for k, v in times.items()}))
"""


def run_python(rounds):
    out = subprocess.run([sys.executable, "-c", PYTHON_PROBE, "1000000", str(rounds)], capture_output=True, text=True,
                         timeout=600)
    if out.returncode != 0:
        return {"skipped": out.stderr.strip().splitlines()[-1] if out.stderr.strip() else "failed"}
    return json.loads(out.stdout)


def compact_json(obj):
    """JSON with one line per key and per row: short, and diffable."""
    lines = ["{"]
    for i, (k, v) in enumerate(obj.items()):
        end = "," if i < len(obj) - 1 else ""
        if isinstance(v, list):
            rows = [f"  {json.dumps(r)}" for r in v]
            lines += [f" {json.dumps(k)}: ["] + [r + "," for r in rows[:-1]] + rows[-1:] + [f" ]{end}"]
        else:
            lines.append(f" {json.dumps(k)}: {json.dumps(v)}{end}")
    return "\n".join(lines + ["}"]) + "\n"


def markdown(result):
    lines = [f"Machine: {result['machine']['cpu']}, {result['machine']['processors']} processors; "
             f"commit {result['machine']['commit']}; {result['machine']['date']}.", "",
             "cpu{} ÷ cpu{1} (median per-call times in one run, rounds alternating; below 1: threads help):", "",
             "| call | n | " + ("quiet, before | under contention, before | " if "quiet_before" in result else "")
             + "quiet | under contention |", "|---|---|---|---|" + ("---|---|" if "quiet_before" in result else "")]
    keyed = {cond: {(r["call"], r["n"]): r for r in result.get(cond, [])}
             for cond in ("quiet_before", "loaded_before", "quiet", "loaded")}

    def cell(cond, key):
        r = keyed[cond].get(key)
        return f" {float(r['ratio']):.2f} ({float(r['median_ms_all']):.4g} ms) |" if r else " — |"

    for r in result["quiet"]:
        key = (r["call"], r["n"])
        conds = (("quiet_before", "loaded_before") if "quiet_before" in result else ()) + ("quiet", "loaded")
        lines.append(f"| {r['call']} | {r['n']} |" + "".join(cell(c, key) for c in conds))
    for cond in ("python_quiet", "python_loaded"):
        p = result.get(cond)
        if not p:
            continue
        lines += ["", f"Python, 10^6 float32, {'quiet' if cond == 'python_quiet' else 'under contention'} "
                      "(median ms per call):", ""]
        if "skipped" in p:
            lines.append(f"skipped: {p['skipped']}")
            continue
        lines += ["| call | ms |", "|---|---|"] + [f"| {k} | {v:.4f} |" for k, v in p.items()]
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bench", required=True, help="the cpu_threads_bench binary")
    ap.add_argument("--out", required=True, help="the results folder to write")
    ap.add_argument("--sizes", default="10000,100000,1000000,10000000,16777216")
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--busy-seconds", type=int, default=900, help="the longest the busy processes may live")
    ap.add_argument("--no-python", action="store_true")
    ap.add_argument("--before", help="the bench built from an earlier commit, run beside it")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    result = {"command": " ".join([os.path.relpath(sys.argv[0], ROOT)] + sys.argv[1:]), "machine": machine(),
              "load": "two `nice -n 19 sh -c 'while :; do :; done'` processes beside the run"}
    if a.before:
        result["quiet_before"] = run_bench(a.before, a.sizes, a.rounds)
    result["quiet"] = run_bench(a.bench, a.sizes, a.rounds)
    if not a.no_python:
        result["python_quiet"] = run_python(a.rounds)
    with busy(a.busy_seconds):
        if a.before:
            result["loaded_before"] = run_bench(a.before, a.sizes, a.rounds)
        result["loaded"] = run_bench(a.bench, a.sizes, a.rounds)
        if not a.no_python:
            result["python_loaded"] = run_python(a.rounds)
    with open(os.path.join(a.out, "summary.json"), "w") as f:
        f.write(compact_json(result))
    with open(os.path.join(a.out, "summary.md"), "w") as f:
        f.write(markdown(result))
    print(markdown(result))


if __name__ == "__main__":
    main()
