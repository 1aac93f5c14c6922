#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Summarizes fusekit's Google Benchmark JSON files into the tables the
targets are stated in.

    python3 bench/summarize.py DIR_OR_JSON... [--csv]

--csv also writes each JSON file's runs as CSV next to it (same name, .csv):
one row per benchmark with its time in microseconds and every counter.

For the elementwise bench, per backend and size: the copy roofline, the fused
and unfused layer for float and uint8 greyscales, fused as % of copy, the
fused/unfused speedup, and uint8 over float. For the reduce bench, per
backend, type and size: each algorithm's time, % of the read-only roofline and
relative error. A % comes from the bench's paired counter where it has one (the
CPU runs: the roofline timed right before every iteration, pct_of_*_paired),
else from the ratio of the medians' bandwidths. Standard library only.
"""
import argparse
import csv
import json
import pathlib
import sys


def measured_runs(data):
    """The runs of one Google Benchmark JSON document: the median of each
    benchmark's repetitions where it has them (--benchmark_repetitions), named
    as its runs are, else its iteration runs."""
    runs = data.get("benchmarks", [])
    medians = [dict(b, name=b.get("run_name", b["name"])) for b in runs
               if b.get("run_type") == "aggregate" and b.get("aggregate_name") == "median"]
    with_median = {b["name"] for b in medians}
    return medians + [b for b in runs if b.get("run_type", "iteration") == "iteration"
                      and b.get("run_name", b["name"]) not in with_median]


def load(paths):
    """Returns {bench name: [runs]} and [(file, context)]."""
    runs, contexts = {}, []
    for p in paths:
        p = pathlib.Path(p)
        # The peers' files (peer_*.json) are compare.py's to read.
        files = sorted(f for f in p.glob("*.json") if not f.name.startswith("peer_")) if p.is_dir() else [p]
        for f in files:
            text = f.read_text()
            if not text.strip():  # a bench with nothing to measure on this machine (GPU-only)
                continue
            data = json.loads(text)
            contexts.append((f.name, data.get("context", {})))
            benches = measured_runs(data)
            kind = f.stem if f.stem in ("elementwise_bench", "reduce_bench", "train_bench") else (
                "elementwise_bench" if any("/fused/" in b["name"] for b in benches) else
                "train_bench" if any("iterations" in b for b in benches) else "reduce_bench")
            runs.setdefault(kind, []).extend(benches)
    return runs, contexts


def micros(b):
    return b["real_time"] * {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}[b.get("time_unit", "ns")]


def paired_or_median_pct(b, roof):
    """% of the roofline: the paired counter where the bench measured one
    (pct_of_<kind>_paired: the roofline run right before each iteration, the
    median of the repetitions' ratios), else the ratio of the medians'
    bandwidths (with interleaved repetitions both cover the same minutes; the
    per-run pct_of_ counter compares with whichever roofline ran last)."""
    paired = [v for k, v in b.items() if k.startswith("pct_of_") and k.endswith("_paired")]
    if paired:
        return paired[0]
    if roof and roof.get("bytes_per_second") and "bytes_per_second" in b:
        return 100 * b["bytes_per_second"] / roof["bytes_per_second"]
    return float("nan")


def spread_warnings(runs, limit=10.0):
    """A line per benchmark whose in-run roofline spread (roofline_spread_pct:
    the paired roofline's 75th over its 25th percentile time, minus 1)
    passes `limit` percent: the machine was busy, or its memory drifted, and
    the "% of" figures beside it are not to be trusted."""
    lines = []
    for b in runs:
        spread = b.get("roofline_spread_pct")
        if spread is not None and spread > limit:
            lines.append(f"WARNING: {b['name']}: the in-run roofline spread {spread:.0f}% (over {limit:.0f}%): "
                         "another process was running, or the memory drifted; rerun on a quiet machine")
    return lines


def overhead_table(runs):
    """'cpu/call_overhead/sum_of_64_f32/threads/2': a call's own cost per cpu{threads} form."""
    lines = []
    for b in runs:
        parts = b["name"].split("/")
        if len(parts) >= 5 and parts[1] == "call_overhead":
            form = "cpu{}" if parts[4] == "0" else f"cpu{{{parts[4]}}}"
            lines.append(f"{form:>10} {micros(b):8.3f} us")
    if lines:
        lines.insert(0, "\nA call's own cost: sum of 64 floats (target: at most 0.3 us for every cpu{...} form)")
    return lines


def reduce_table(runs):
    # Names look like "gpu/block_atomic/f32_acc_f64/268435456/manual_time".
    cells, algorithms = {}, {}
    for b in runs:
        parts = b["name"].split("/")
        if len(parts) < 4 or parts[0] not in ("gpu", "cpu") or parts[1] == "call_overhead":
            continue
        backend, algorithm, dtype, n = parts[0], parts[1], parts[2], int(parts[3])
        algorithms.setdefault(backend, [])
        if algorithm != "read" and algorithm not in algorithms[backend]:
            algorithms[backend].append(algorithm)
        cells[(backend, algorithm, dtype, n)] = b
    lines = []
    for backend in ("gpu", "cpu"):
        keys = sorted({(k[2], k[3]) for k in cells if k[0] == backend and k[1] != "read"})
        if not keys:
            continue
        algs = algorithms[backend]
        lines.append(f"\n{backend.upper()} sums: time in microseconds, % of the read-only roofline, relative error")
        header = f"{'type':>12} {'n':>10} {'read GB/s':>9} " + " ".join(f"{a:>26}" for a in algs)
        lines += [header, "-" * len(header)]
        for dtype, n in keys:
            read = cells.get((backend, "read", "f32", n))
            read_gbs = read.get("bytes_per_second", 0) / 1e9 if read else float("nan")
            row = f"{dtype:>12} {n:>10} {read_gbs:>9.1f} "
            for a in algs:
                b = cells.get((backend, a, dtype, n))
                if b is None:
                    row += f"{'-':>26} "
                    continue
                pct = paired_or_median_pct(b, read)
                row += f"{micros(b):>10.1f} {pct:>5.0f}% {b.get('rel_error', float('nan')):>8.1e} "
            lines.append(row)
    return lines


def elementwise_table(runs):
    # Names look like "gpu/fused/f32/268435456/manual_time".
    by = {}
    for b in runs:
        parts = b["name"].split("/")
        if len(parts) < 3 or parts[0] not in ("gpu", "cpu"):
            continue
        backend, variant = parts[0], parts[1]
        if variant == "copy":
            key, n = (backend, "copy", ""), int(parts[2])
        else:
            key, n = (backend, variant, parts[2]), int(parts[3])
        by[key + (n,)] = {"us": micros(b), "gbs": b.get("bytes_per_second", 0) / 1e9,
                          "paired": b.get("pct_of_copy_paired")}
    lines = []
    for backend in ("gpu", "cpu"):
        sizes = sorted({k[3] for k in by if k[0] == backend})
        if not sizes:
            continue
        lines.append(f"\n{backend.upper()} hidden layer: tanh((grey/255)*w), times in microseconds")
        header = (f"{'n':>11} {'copy GB/s':>10} {'fused f32':>10} {'unfused f32':>12} {'fused/copy':>10} "
                  f"{'speedup':>8} {'fused u8':>9} {'unfused u8':>11} {'speedup':>8} {'u8 vs f32':>9}")
        lines += [header, "-" * len(header)]
        for n in sizes:
            def get(variant, dtype, field="us"):
                r = by.get((backend, variant, dtype, n))
                return r[field] if r and r[field] is not None else float("nan")
            copy = by.get((backend, "copy", "", n), {}).get("gbs", float("nan"))
            ff, uf = get("fused", "f32"), get("unfused", "f32")
            paired = by.get((backend, "fused", "f32", n), {}).get("paired")
            fused_pct = (paired if paired is not None else
                         100 * get("fused", "f32", "gbs") / copy if copy and copy == copy else float("nan"))
            f8, u8 = get("fused", "u8"), get("unfused", "u8")
            lines.append(f"{n:>11} {copy:>10.1f} {ff:>10.1f} {uf:>12.1f} {fused_pct:>9.1f}% "
                         f"{uf / ff:>7.2f}x {f8:>9.1f} {u8:>11.1f} {u8 / f8:>7.2f}x {ff / f8:>8.2f}x")
        part_sizes = [n for n in sizes if (backend, "part", "tanh", n) in by]
        if part_sizes:
            lines.append(f"\n{backend.upper()} layer's parts alone (float32), microseconds and share of the fused layer's time")
            header = f"{'n':>11} {'fused':>10} {'normalize·weigh':>16} {'share':>6} {'tanh':>10} {'share':>6}"
            lines += [header, "-" * len(header)]
            for n in part_sizes:
                ff = by.get((backend, "fused", "f32", n), {}).get("us", float("nan"))
                nw = by.get((backend, "part", "normalize_weigh", n), {}).get("us", float("nan"))
                th = by[(backend, "part", "tanh", n)]["us"]
                lines.append(f"{n:>11} {ff:>10.1f} {nw:>16.1f} {100 * nw / ff:>5.0f}% {th:>10.1f} {100 * th / ff:>5.0f}%")
    return lines


def train_table(runs):
    # Names look like "cpu/nesterov_gram/f64/1000x100x10/iterations:1/real_time".
    lines = ["\nTrainer: time of the whole fit (ms), iterations of the slowest output, converged outputs, us per iteration"]
    header = f"{'benchmark':<44} {'time ms':>10} {'iterations':>10} {'converged':>10} {'us/iter':>10}"
    lines += [header, "-" * len(header)]
    per_iteration = {}
    for b in runs:
        parts = b["name"].split("/")
        name = "/".join(parts[:4])
        us_it = b.get("us_per_iteration", float("nan"))
        per_iteration[name] = us_it
        conv = f"{int(b.get('converged', 0))}/{int(b.get('outputs', 0))}" if "outputs" in b else "-"
        its = f"{int(b['iterations'])}" if "iterations" in b else "-"
        lines.append(f"{name:<44} {micros(b) / 1e3:>10.2f} {its:>10} {conv:>10} {us_it:>10.2f}")
    ratios = []
    for backend in ("cpu", "gpu"):
        for dtype in ("f64", "f32"):
            d = per_iteration.get(f"{backend}/fixed_direct/{dtype}/100000x256x32")
            g = per_iteration.get(f"{backend}/fixed_gram/{dtype}/100000x256x32")
            if d and g:
                ratios.append(f"{backend} {dtype} (100000, 256, 32): gram {d / g:.1f}x faster per iteration than direct")
            slow = per_iteration.get(f"gpu/plain_per_operation/{dtype}/9x9x9")
            fast = per_iteration.get(f"gpu/plain_single_launch/{dtype}/9x9x9")
            if backend == "gpu" and slow and fast:
                ratios.append(f"gpu {dtype} (9, 9, 9): single launch {slow / fast:.0f}x faster per iteration than one kernel per operation")
    return lines + [""] + ratios


def write_csv(json_path):
    """JSON results -> CSV next to them: name, real_time_us, cpu_time_us, then every counter."""
    json_path = pathlib.Path(json_path)
    benches = [b for b in json.loads(json_path.read_text()).get("benchmarks", [])
               if b.get("run_type", "iteration") == "iteration"]
    standard = {"name", "family_index", "per_family_instance_index", "run_name", "run_type", "repetitions",
                "repetition_index", "threads", "iterations", "real_time", "cpu_time", "time_unit"}
    counters = sorted({k for b in benches for k in b if k not in standard})
    out = json_path.with_suffix(".csv")
    scale = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}
    with out.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["name", "real_time_us", "cpu_time_us"] + counters)
        for b in benches:
            k = scale[b.get("time_unit", "ns")]
            w.writerow([b["name"], b["real_time"] * k, b["cpu_time"] * k] + [b.get(c, "") for c in counters])
    return out


def arguments(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("paths", nargs="+", metavar="DIR_OR_JSON", help="result folders or Google Benchmark JSON files")
    parser.add_argument("--csv", action="store_true", help="also write each JSON file as CSV next to it")
    return parser.parse_args(argv[1:])


def main(argv):
    args = arguments(argv)
    runs, contexts = load(args.paths)
    if not runs:
        print("no benchmark results found in", " ".join(args.paths))
        return 1
    if args.csv:
        for p in args.paths:
            p = pathlib.Path(p)
            for f in (sorted(p.glob("*.json")) if p.is_dir() else [p]):
                print("wrote", write_csv(f))
    for name, ctx in contexts:
        print(f"{name}: {ctx.get('date', '?')}, host {ctx.get('host_name', '?')}, {ctx.get('num_cpus', '?')} CPUs, "
              f"GPU {ctx.get('gpu', 'none')}, driver {ctx.get('cuda_driver', '-')}, runtime {ctx.get('cuda_runtime', '-')}")
    if "elementwise_bench" in runs:
        print("\n".join(elementwise_table(runs["elementwise_bench"])))
        print("\nfused/copy: the fused layer's bandwidth (read grey and w, write out) over the copy kernel's"
              "\n(CPU: the copy run right before each iteration, the median of the repetitions' ratios);"
              "\nspeedup: unfused time / fused time; u8 vs f32: fused float-greyscale time / fused uint8 time.")
    if "train_bench" in runs:
        print("\n".join(train_table(runs["train_bench"])))
    if "reduce_bench" in runs:
        print("\n".join(reduce_table(runs["reduce_bench"]) + overhead_table(runs["reduce_bench"])))
        print("\nEach sum: time, bandwidth as % of the read-only kernel (CPU: the read loop run right before"
              "\neach iteration, the median of the repetitions' ratios), |sum - reference| / |reference|.")
    warnings = [w for name in ("elementwise_bench", "reduce_bench") for w in spread_warnings(runs.get(name, []))]
    if warnings:
        print("\n" + "\n".join(warnings))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
