# SPDX-License-Identifier: Apache-2.0
"""The figures of `bench/compare.py --plot`, drawn from the same JSON as the
tables, as PNG and SVG into the results folder:

* <backend>_hidden_layer: the hidden-layer table's measures against n: fusekit's
  layer as % of the in-run copy loop (paired, as the table's "of copy"), and
  the time of fusekit and of each peer;
* <backend>_sum_error: relative error against n for each sum algorithm (float);
* <backend>_train_time: time to tolerance for the trainer, fusekit and peers,
  per problem shape.

Needs matplotlib (optional: without it, nothing is drawn and a line says so).
"""
import argparse
import pathlib
import sys

import summarize


def _series(runs, backend, keep):
    """{label: [(n, value)]} from runs whose name starts with backend/ and passes keep(parts)."""
    out = {}
    for b in runs:
        parts = b["name"].split("/")
        if parts[0] != backend:
            continue
        got = keep(parts, b)
        if got is None:
            continue
        label, n, value = got
        out.setdefault(label, []).append((n, value))
    return {k: sorted(v) for k, v in out.items()}


def _save(fig, folder, name):
    paths = []
    for ext in ("png", "svg"):
        path = pathlib.Path(folder) / f"{name}.{ext}"
        fig.savefig(path, dpi=120, bbox_inches="tight")
        paths.append(path)
    return paths


def _line_plot(plt, folder, name, series, style, xlabel, ylabel, title, log_y):
    """One figure of lines against n (log2 axis), saved as PNG and SVG."""
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for label, pts in sorted(series.items()):
        ax.plot([p[0] for p in pts], [p[1] for p in pts], style(label), label=label)
    ax.set_xscale("log", base=2)
    if log_y:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize=8)
    ax.grid(True, alpha=0.3)
    written = _save(fig, folder, name)
    plt.close(fig)
    return written


def draw(folder, elementwise, reduce, train, peers_layer, peers_sum, peers_train):
    """Draws every figure the data allows; returns the files written."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plots: matplotlib is not installed (python3 -m pip install matplotlib); nothing drawn")
        return []
    written = []
    for backend in ("cpu", "gpu"):
        # Hidden layer: the table's two measures, side by side. Left, fusekit's
        # layer as % of the copy loop (paired where the bench measured it, as
        # the table's "of copy" column); right, the time of fusekit and of each
        # peer (the table's time columns).
        def pct_of_copy(parts, b):
            if parts[1] not in ("fused", "unfused") or parts[2] != "f32" or len(parts) < 4:
                return None
            n = int(parts[3])
            roof = copies.get((backend, n))
            pct = summarize.paired_or_median_pct(b, roof)
            return (None if pct != pct else (f"fusekit {parts[1]}", n, pct))
        copies = {(p[0], int(p[2])): b for b in elementwise for p in [b["name"].split("/")]
                  if len(p) >= 3 and p[1] == "copy"}
        pct_series = _series(elementwise, backend, pct_of_copy)

        def layer_time(parts, b):
            if len(parts) < 4 or parts[2] != "f32" or parts[1] in ("copy", "unfused"):
                return None
            label = "fusekit fused" if parts[1] == "fused" else parts[1]
            return label, int(parts[3]), summarize.micros(b) / 1e3
        time_series = _series(elementwise + peers_layer, backend, layer_time)
        if pct_series or time_series:
            fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.2))
            for label, points in sorted(pct_series.items()):
                left.plot([p[0] for p in points], [p[1] for p in points], "-o", label=label)
            left.axhline(100, color="grey", linestyle="--", label="copy loop (100%)")
            left.set_xscale("log")
            left.set_xlabel("n (elements)")
            left.set_ylabel("% of the copy loop's bandwidth (minimum traffic)")
            left.set_title("fusekit's layer against the in-run copy")
            left.legend(fontsize=7)
            for label, points in sorted(time_series.items()):
                right.plot([p[0] for p in points], [p[1] for p in points],
                           "-o" if label.startswith("fusekit") else ":s", label=label)
            right.set_xscale("log")
            right.set_yscale("log")
            right.set_xlabel("n (elements)")
            right.set_ylabel("time (ms)")
            right.set_title("time: fusekit and the peers")
            right.legend(fontsize=7)
            fig.suptitle(f"Hidden layer tanh((grey/255)·w), float32, {backend.upper()}")
            written += _save(fig, folder, f"{backend}_hidden_layer")
            plt.close(fig)

        # Sums: relative error against n, float input in float.
        def err(prefix):
            def keep(parts, b):
                if len(parts) < 4 or parts[2] != "f32" or "rel_error" not in b or parts[1] == "read":
                    return None
                return prefix + parts[1], int(parts[3]), max(float(b["rel_error"]), 1e-12)
            return keep
        series = {**_series(reduce, backend, err("fusekit ")), **_series(peers_sum, backend, err(""))}
        if series:
            written += _line_plot(plt, folder, f"{backend}_sum_error", series, lambda label: "-o", "n (values)",
                                  "|sum − exact| / |exact|",
                                  f"Sum of float32 values, {backend.upper()}: error of each algorithm", log_y=True)

        # Trainer: time to tolerance per shape (plain descent, float64).
        rows = {}
        for b in [dict(r, fusekit=True) for r in train] + peers_train:
            parts = b["name"].split("/")
            if parts[0] != backend or len(parts) < 4 or parts[2] != "f64":
                continue
            if not (parts[1].startswith("plain") or parts[1].startswith("nesterov") or parts[1].endswith("_plain")):
                continue
            ms = b["real_time"] * {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[b.get("time_unit", "ns")]
            rows.setdefault(parts[3], {})[("fusekit " if b.get("fusekit") else "") + parts[1]] = ms
        if rows:
            shapes = sorted(rows)
            labels = sorted({k for r in rows.values() for k in r})
            fig, ax = plt.subplots(figsize=(7, 4.2))
            width = 0.8 / max(len(labels), 1)
            for i, label in enumerate(labels):
                xs = [j + i * width for j in range(len(shapes))]
                ax.bar(xs, [rows[s].get(label, 0) for s in shapes], width, label=label)
            ax.set_xticks([j + 0.4 - width / 2 for j in range(len(shapes))])
            ax.set_xticklabels([f"K×L×N = {s}" for s in shapes])
            ax.set_yscale("log")
            ax.set_ylabel("time to tolerance (ms)")
            ax.set_title(f"Trainer, float64, {backend.upper()}: fusekit and peers")
            ax.legend(fontsize=7)
            written += _save(fig, folder, f"{backend}_train_time")
            plt.close(fig)
    return written


def main(argv):
    parser = argparse.ArgumentParser(
        description="Draws the benchmark figures (PNG and SVG) from a results folder's JSON into that folder; "
                    "bench/compare.py RESULTS_DIR --plot does the same after its tables. Needs matplotlib.")
    parser.add_argument("results", help="a folder with elementwise_bench.json, reduce_bench.json, train_bench.json "
                                        "and the peers' JSON (any of them)")
    args = parser.parse_args(argv[1:])
    folder = pathlib.Path(args.results)
    from compare import load  # the same reading of each file as the tables'
    names = ("elementwise_bench", "reduce_bench", "train_bench", "peer_hidden_layer", "peer_sum", "peer_train")
    for path in draw(folder, *(load(folder / f"{name}.json") for name in names)):
        print("drew", path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
