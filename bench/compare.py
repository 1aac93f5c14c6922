#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""fusekit side by side with the stacks its users come from.

    python3 bench/compare.py RESULTS_DIR [--build BUILD_DIR] [--run-peers] [--cpu-only] [--csv] [--plot]
    python3 bench/compare.py RESULTS_DIR --figures    (the GPU run's figures P1-P6)
    python3 bench/compare.py --merge-peers FOLDER FILE    (peer_*.json of FOLDER into one FILE)

Reads fusekit's Google Benchmark JSON in RESULTS_DIR (elementwise_bench.json,
reduce_bench.json, train_bench.json, host_pipeline_bench.json; with --build, runs the bench binaries of
BUILD_DIR/bench first), runs the Python peers in bench/peers with --run-peers
(peer_*.json; a stack that is not installed is skipped with a line), and prints
one table per task: size, fusekit's time, each peer's time, the ratio
peer/fusekit, and for the memory-bound tasks the share of the copy or read
roofline measured by fusekit's bench in the same run. With --csv, every JSON
file in RESULTS_DIR is also written as CSV next to it; with --plot, the figures
of bench/plots.py are drawn into RESULTS_DIR (matplotlib, optional). Otherwise
standard library only.
"""
import argparse
import json
import pathlib
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import summarize  # noqa: E402  (the runs of a JSON file, and CSV)
FUSEKIT = {"elementwise": "elementwise_bench", "sum": "reduce_bench", "train": "train_bench",
           "host": "host_pipeline_bench"}
PEERS = {"elementwise": "hidden_layer", "sum": "sum", "train": "train", "host": "host_pipeline"}


def load(path):
    """The runs of a Google Benchmark JSON file; a peer_<task>.json that is missing
    is looked up in peers.json next to it (the GPU check's one file for every peer)."""
    if not path.exists():
        merged = path.parent / "peers.json"
        task = path.stem[len("peer_"):] if path.stem.startswith("peer_") else None
        if task is None or not merged.exists():
            return []
        data = json.loads(merged.read_text()).get(task, {})
    else:
        text = path.read_text()
        # A bench with nothing to measure here (a GPU-only one on a CPU machine)
        # leaves its output file empty.
        data = json.loads(text) if text.strip() else {}
    return summarize.measured_runs(data)


def merge_peers(folder, target):
    """Writes every peer_<task>.json of `folder` into one file, a section per task."""
    merged = {f.stem[len("peer_"):]: json.loads(f.read_text()) for f in sorted(pathlib.Path(folder).glob("peer_*.json"))}
    pathlib.Path(target).write_text(json.dumps(merged, indent=1))
    return 0


def micros(b):
    return b["real_time"] * {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}[b.get("time_unit", "ns")]


def key(name):
    """'cpu/fused/f32/1048576/real_time' -> ('cpu', 'fused', 'f32', '1048576')."""
    parts = name.split("/")
    return tuple(parts[:4])


def index(runs):
    return {key(b["name"]): b for b in runs}


def fmt_time(us):
    return f"{us / 1e3:.3f} ms" if us >= 1000 else f"{us:.1f} us"


def table(title, header, rows):
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
    lines = ["", title, "  ".join(str(h).rjust(w) for h, w in zip(header, widths))]
    lines.append("-" * len(lines[-1]))
    lines += ["  ".join(str(c).rjust(w) for c, w in zip(r, widths)) for r in rows]
    return lines


def roofline_pct(b, roof):
    pct = summarize.paired_or_median_pct(b, roof)
    return "-" if pct != pct else f"{pct:.0f}%"


def elementwise_tables(fk, peers):
    out = []
    for backend in ("cpu", "gpu"):
        names = sorted({k[1] for k in peers if k[0] == backend})
        sizes = sorted({int(k[3]) for k in fk if k[0] == backend and k[1] == "fused" and k[2] == "f32"})
        if not sizes:
            continue
        header = ["n", "fusekit", "of copy"] + [h for p in names for h in (p, "ratio")]
        rows = []
        for n in sizes:
            mine = fk.get((backend, "fused", "f32", str(n)))
            roof = fk.get((backend, "copy", str(n), "real_time")) or fk.get((backend, "copy", str(n), "manual_time"))
            row = [n, fmt_time(micros(mine)), roofline_pct(mine, roof)]
            for p in names:
                b = peers.get((backend, p, "f32", str(n)))
                row += [fmt_time(micros(b)), f"{micros(b) / micros(mine):.1f}x"] if b else ["-", "-"]
            rows.append(row)
        out += table(f"Hidden layer tanh((grey/255)*w), float32, {backend.upper()}: fusekit's fused layer vs peers "
                     f"(ratio = peer time / fusekit time)", header, rows)
        if backend == "cpu":
            out += thread_note(names)
    return out


# How many threads each peer runs on (the notes under the tables).
PEER_THREADS = {"np_sum": "1 thread", "numpy_three_pass": "1 thread", "numpy_plain": "1 thread",
                "numpy_tanh": "1 thread", "numexpr": "every core", "jax_jit": "every core (XLA's pool)",
                "jax_jit_sum": "every core (XLA's pool)", "numba_prange": "every core",
                "numba_njit_prange": "every core", "numba_vectorize_parallel": "every core"}


def thread_note(names):
    known = [f"{p}: {PEER_THREADS[p]}" for p in names if p in PEER_THREADS]
    import os
    return [f"threads: fusekit every core ({os.cpu_count()} here); " + "; ".join(known)] if known else []


def sum_tables(fk, peers):
    out = []
    # CPU: the default algorithm (deterministic) first; the GPU's table leads
    # with block_atomic, the figures' baseline.
    mine_alg = {"cpu": "deterministic", "gpu": "block_atomic"}
    other_alg = {"cpu": "cub", "gpu": "deterministic"}
    for backend in ("cpu", "gpu"):
        names = sorted({k[1] for k in peers if k[0] == backend})
        series = sorted({(k[2], int(k[3])) for k in fk if k[0] == backend and k[1] == mine_alg[backend]})
        if not series:
            continue
        header = ["type", "n", f"fusekit {mine_alg[backend]}", "of read", "error",
                  other_alg[backend], "error"] + [h for p in names for h in (p, "ratio", "error")]
        rows = []
        for dtype, n in series:
            mine = fk[(backend, mine_alg[backend], dtype, str(n))]
            det = fk.get((backend, other_alg[backend], dtype, str(n)))
            roof = fk.get((backend, "read", "f32", str(n)))
            row = [dtype, n, fmt_time(micros(mine)), roofline_pct(mine, roof), f"{mine.get('rel_error', 0):.1e}",
                   fmt_time(micros(det)) if det else "-", f"{det.get('rel_error', 0):.1e}" if det else "-"]
            for p in names:
                b = peers.get((backend, p, dtype, str(n)))
                row += ([fmt_time(micros(b)), f"{micros(b) / micros(mine):.2f}x", f"{b.get('rel_error', 0):.1e}"]
                        if b else ["-", "-", "-"])
            rows.append(row)
        out += table(f"Sums, {backend.upper()}: fusekit vs peers (ratio = peer time / fusekit {mine_alg[backend]} time; "
                     f"error = |sum - reference| / |reference|)", header, rows)
        if backend == "cpu":
            out += thread_note(names)
    return out


def train_tables(fk, peers):
    out = []
    mine_variant = {"cpu": "plain_gram", "gpu": "plain_single_launch"}
    for backend in ("cpu", "gpu"):
        # The loops; lstsq, which is no loop, has its own table (least_squares_tables).
        names = sorted({k[1] for k in peers if k[0] == backend and not k[1].endswith("_lstsq")})
        cases = sorted({(k[2], k[3]) for k in fk if k[0] == backend and k[1] == mine_variant[backend]})
        if not cases:
            continue
        header = ["type", "K x L x N", f"fusekit {mine_variant[backend]}", "iterations", "nesterov", "iterations"]
        header += [h for p in names for h in (p, "iterations", "ratio")]
        rows = []
        for dtype, shape in cases:
            mine = fk[(backend, mine_variant[backend], dtype, shape)]
            nes = fk.get((backend, mine_variant[backend].replace("plain", "nesterov"), dtype, shape))
            row = [dtype, shape, fmt_time(micros(mine)), int(mine.get("iterations", 0)),
                   fmt_time(micros(nes)) if nes else "-", int(nes.get("iterations", 0)) if nes else "-"]
            for p in names:
                b = peers.get((backend, p, dtype, shape))
                if not b:
                    row += ["-", "-", "-"]
                    continue
                # A peer cut short by its time budget compares per iteration.
                if b.get("finished", 1):
                    ratio = f"{micros(b) / micros(mine):.0f}x"
                else:
                    ratio = f"{b['us_per_iteration'] / (micros(mine) / max(1, mine.get('iterations', 1)) / max(1, b.get('outputs', 1))):.0f}x/it"
                row += [fmt_time(micros(b)) + ("" if b.get("finished", 1) else " (cut)"), int(b.get("iterations", 0)), ratio]
            rows.append(row)
        out += table(f"Trainer, plain gradient descent to the same tolerance, {backend.upper()} "
                     f"(ratio = peer time / fusekit time; whole fit, all outputs)", header, rows)
    return out


def least_squares_tables(fk, peers):
    """The recommended method (CG with Jacobi) against the least-squares solver a NumPy user calls."""
    cases = sorted({(k[2], k[3]) for k in fk if k[0] == "cpu" and k[1] == "cg_jacobi"})
    rows = []
    for dtype, shape in cases:
        mine = fk[("cpu", "cg_jacobi", dtype, shape)]
        peer = peers.get(("cpu", "numpy_lstsq", dtype, shape))
        row = [dtype, shape, fmt_time(micros(mine)), int(mine.get("iterations", 0)),
               f"{int(mine.get('converged', 0))}/{int(mine.get('outputs', 0))}"]
        if peer:
            row += [fmt_time(micros(peer)), f"{micros(mine) / micros(peer):.2f}x"]
        else:
            row += ["-", "-"]
        rows.append(row)
    if not rows:
        return []
    header = ["type", "K x L x N", "fusekit cg_jacobi", "iterations", "converged", "np.linalg.lstsq",
              "fusekit / lstsq"]
    return table("Least squares, CPU: fusekit's recommended method (gd_options::recommended()) against "
                 "np.linalg.lstsq (time ratio; below 1 is faster)", header, rows)


def raw_data_tables(fk, peers):
    """Every method and preconditioner on raw-unit tabular data (fusekit alone: the peers' loop is plain)."""
    del peers
    rows = []
    for k in sorted(k for k in fk if k[0] == "cpu" and k[1].startswith("raw_")):
        b = fk[k]
        method = k[1][len("raw_"):]
        status = ", ".join(f"{int(b.get(s, 0))} {s}" for s in ("max_iterations", "diverged", "stalled")
                           if b.get(s, 0))
        rows.append([k[2], k[3], method, f"{int(b.get('converged', 0))}/{int(b.get('outputs', 0))}",
                     status or "-", int(b.get("iterations", 0)), f"{b.get('rel_error', float('nan')):.1e}",
                     fmt_time(micros(b))])
    if not rows:
        return []
    header = ["type", "K x L x N", "method_preconditioner", "converged", "other stops", "iterations",
              "|W - W*| / |W*|", "time"]
    return table("Raw-unit tabular data (units 10^-3 to 10^4, correlated pairs, an intercept), CPU: "
                 "W* by long-double QR", header, rows)


def host_tables(fk, peers):
    """Host-resident data: fusekit's one call against the sequential version, the peers and the bus."""
    out = []
    for task, dtype, both, mine, others in (
            ("layer", "layer", "both", ["fused_pinned", "fused_pageable"],
             ["sequential_pinned", "sequential_pageable"]),
            ("sum", "f32", "h2d", ["sum_pinned", "sum_pageable"], ["sum_sequential_pinned"])):
        sizes = sorted({int(k[3]) for k in fk if k[0] == "host" and k[1] == mine[0]})
        if not sizes:
            continue
        names = sorted({k[1] for k in peers if k[0] == "host" and k[2] == dtype})
        header = ["n", f"roofline ({both})"] + [h for m in mine for h in (m, "of roofline")] + \
                 [h for o in others + names for h in (o, "ratio")]
        rows = []
        for n in sizes:
            roof = fk.get(("host", both, dtype if both == "both" else "f32", str(n)))
            first = fk.get(("host", mine[0], dtype, str(n)))
            row = [n, fmt_time(micros(roof)) if roof else "-"]
            for m in mine:
                b = fk.get(("host", m, dtype, str(n)))
                row += [fmt_time(micros(b)), roofline_pct(b, roof)] if b else ["-", "-"]
            for o in others:
                b = fk.get(("host", o, dtype, str(n)))
                row += [fmt_time(micros(b)), f"{micros(b) / micros(first):.2f}x"] if b and first else ["-", "-"]
            for p in names:
                b = peers.get(("host", p, dtype, str(n)))
                row += [fmt_time(micros(b)), f"{micros(b) / micros(first):.2f}x"] if b and first else ["-", "-"]
            rows.append(row)
        title = ("Hidden layer on host data (uint8 + float32 in, float32 out; 9 bytes per element over the bus)"
                 if task == "layer" else "Deterministic sum on host data (float32; 4 bytes per element over the bus)")
        out += table(f"{title}: host-to-host times; ratio = time / fusekit {mine[0]} time", header, rows)
    return out


def figures(results, n=1 << 28):
    """The figures a first GPU run must give (P1-P6), each a ratio of two runs of
    the same results folder; '-' where a run is missing."""
    ew = index(load(results / "elementwise_bench.json"))
    rd = index(load(results / "reduce_bench.json"))
    tr = index(load(results / "train_bench.json"))
    hl = index(load(results / "peer_hidden_layer.json"))
    s = str(n)

    def us(runs, k):
        return micros(runs[k]) if k in runs else None

    def ratio(a, b, unit="x"):
        return f"{a / b:.2f}{unit}" if a and b else "-"

    fused = us(ew, ("gpu", "fused", "f32", s))
    copy = ew.get(("gpu", "copy", s, "manual_time")) or ew.get(("gpu", "copy", s, "real_time"))
    read = rd.get(("gpu", "read", "f32", s))
    block, cub, tree = (rd.get(("gpu", a, "f32", s)) for a in ("block_atomic", "cub", "deterministic"))
    # P6 per output and iteration: the kernel-per-op run stops at its budget, the
    # single launch runs to convergence, so their whole-fit times do not
    # compare; and the single launch runs the N outputs at once while the
    # per-op loop takes them one by one, so a time per fit iteration would
    # understate the single launch N times.
    def per_iteration(k):
        return tr[k].get("us_per_output_iteration") if k in tr else None

    single = per_iteration(("gpu", "plain_single_launch", "f64", "9x9x9"))
    per_op = per_iteration(("gpu", "plain_per_operation", "f64", "9x9x9"))
    lines = [f"", f"Figures of the GPU run (n = 2^{n.bit_length() - 1} where a size applies; x = times faster):",
             f"P1 fused layer f32, % of the copy kernel:           "
             f"{roofline_pct(ew[('gpu', 'fused', 'f32', s)], copy) if ('gpu', 'fused', 'f32', s) in ew else '-'}",
             f"P2 fused vs unfused (f32; u8):                      {ratio(us(ew, ('gpu', 'unfused', 'f32', s)), fused)}; "
             f"{ratio(us(ew, ('gpu', 'unfused', 'u8', s)), us(ew, ('gpu', 'fused', 'u8', s)))}",
             f"P3 fused vs torch.compile; vs CuPy ElementwiseKernel: {ratio(us(hl, ('gpu', 'torch_compile', 'f32', s)), fused)}; "
             f"{ratio(us(hl, ('gpu', 'cupy_elementwise_kernel', 'f32', s)), fused)}",
             f"P4 block_atomic vs CUB; % of the read loop:          "
             f"{ratio(micros(cub) if cub else None, micros(block) if block else None)}; "
             f"{roofline_pct(block, read) if block else '-'}",
             f"P5 deterministic vs CUB; % of the read loop:         "
             f"{ratio(micros(cub) if cub else None, micros(tree) if tree else None)}; "
             f"{roofline_pct(tree, read) if tree else '-'}",
             f"P6 (9, 9, 9) fit per output and iteration, single launch vs kernel per op: {ratio(per_op, single)}"]
    return lines


def arguments(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("results", metavar="RESULTS_DIR", help="folder of the JSON results (created if missing)")
    parser.add_argument("--build", metavar="BUILD_DIR", help="run BUILD_DIR/bench/*_bench first, into RESULTS_DIR")
    parser.add_argument("--run-peers", action="store_true", help="run the Python peers in bench/peers first")
    parser.add_argument("--cpu-only", action="store_true", help="the peers' CPU stacks only")
    parser.add_argument("--csv", action="store_true", help="also write every JSON file as CSV next to it")
    parser.add_argument("--plot", action="store_true", help="draw the figures (PNG and SVG) into RESULTS_DIR")
    parser.add_argument("--figures", action="store_true",
                        help="print only the GPU run's figures P1-P6 (ratios within RESULTS_DIR) and exit")
    return parser.parse_args(argv[1:])


def main(argv):
    if len(argv) == 4 and argv[1] == "--merge-peers":
        return merge_peers(argv[2], argv[3])
    args = arguments(argv)
    results = pathlib.Path(args.results)
    results.mkdir(parents=True, exist_ok=True)
    if args.figures:
        print("\n".join(figures(results)))
        return 0
    cpu_only = args.cpu_only
    if args.build:
        build = pathlib.Path(args.build)
        for binary in FUSEKIT.values():
            exe = build / "bench" / binary
            if exe.exists():
                subprocess.run([str(exe), f"--benchmark_out={results / (binary + '.json')}", "--benchmark_out_format=json"],
                               check=True, stdout=subprocess.DEVNULL)
    if args.run_peers:
        for task, script in PEERS.items():
            cmd = [sys.executable, str(HERE / "peers" / f"{script}.py"), "--out", str(results / f"peer_{script}.json")]
            if cpu_only:
                cmd.append("--cpu-only")
            print(f"running peers: {script}", file=sys.stderr, flush=True)
            subprocess.run(cmd, check=False)
    lines = []
    for task, make in (("elementwise", elementwise_tables), ("sum", sum_tables), ("train", train_tables),
                       ("train", least_squares_tables), ("train", raw_data_tables),
                       ("host", host_tables)):
        fk = index(load(results / f"{FUSEKIT[task]}.json"))
        peers = index(load(results / f"peer_{PEERS[task]}.json"))
        if not fk:
            lines.append(f"\n{task}: no fusekit results in {results}")
            continue
        if not peers:
            lines.append(f"\n{task}: no peer results (python3 bench/compare.py {results} --run-peers)")
        lines += make(fk, peers)
    print("\n".join(lines))
    if args.plot:
        sys.path.insert(0, str(HERE))
        import plots
        for path in plots.draw(results, load(results / "elementwise_bench.json"), load(results / "reduce_bench.json"),
                               load(results / "train_bench.json"), load(results / "peer_hidden_layer.json"),
                               load(results / "peer_sum.json"), load(results / "peer_train.json")):
            print("drew", path)
    if args.csv:
        sys.path.insert(0, str(HERE))
        import summarize
        for f in sorted(results.glob("*.json")):
            summarize.write_csv(f)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
