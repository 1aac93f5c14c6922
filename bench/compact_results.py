#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Keeps a committed benchmark run to its evidence (bench/results/README.md).

    python3 bench/compact_results.py DIR...      (rewrites the files in place)
    python3 bench/compact_results.py --check DIR...  (exit 1 if any would change)

A Google Benchmark JSON file keeps its context and, for each benchmark, the
aggregates a reader checks: the median, standard deviation and coefficient
of variation Google Benchmark computed, plus the minimum and the maximum of
the repetitions (added here as aggregates named "min" and "max", when the
repetitions were kept). The mean is dropped: no figure is stated in it. The repetitions themselves are dropped where
a median stands for them; a benchmark that ran once keeps its one run. Every
entry is written on one line, so a file is a few hundred lines at most;
bench/summarize.py and bench/compare.py read it as before (they take the
median where there is one). Any other JSON (the peers' results) is written one
entry per line too, and an SVG without its line breaks (whitespace to XML):
the same image. Standard library only.
"""
import argparse
import json
import pathlib
import re
import statistics
import sys


def spread_aggregates(benchmarks):
    """min and max aggregates for each run_name whose repetitions are kept
    next to a median aggregate, built from the median's entry."""
    reps, medians = {}, {}
    for b in benchmarks:
        name = b.get("run_name", b["name"])
        if b.get("run_type") == "aggregate" and b.get("aggregate_name") == "median":
            medians[name] = b
        elif b.get("run_type", "iteration") == "iteration":
            reps.setdefault(name, []).append(b)
    extra = {}
    for name, median in medians.items():
        runs = reps.get(name, [])
        if len(runs) < 2 or any(b.get("run_type") == "aggregate" and b.get("aggregate_name") == "min"
                                for b in benchmarks if b.get("run_name", b["name"]) == name):
            continue
        out = []
        for which, pick in (("min", min), ("max", max)):
            agg = dict(median, name=median["name"].rsplit("_", 1)[0] + "_" + which, aggregate_name=which)
            for field, value in median.items():
                if isinstance(value, (int, float)) and not isinstance(value, bool) and field not in (
                        "family_index", "per_family_instance_index", "repetitions", "threads", "iterations"):
                    values = [b[field] for b in runs if isinstance(b.get(field), (int, float))]
                    if values:
                        agg[field] = pick(values)
            out.append(agg)
        extra[name] = out
    return extra


def compact_benchmarks(data):
    benchmarks = data.get("benchmarks", [])
    with_median = {b.get("run_name", b["name"]) for b in benchmarks
                   if b.get("run_type") == "aggregate" and b.get("aggregate_name") == "median"}
    extra = spread_aggregates(benchmarks)
    kept = []
    for b in benchmarks:
        name = b.get("run_name", b["name"])
        if b.get("run_type", "iteration") == "iteration" and name in with_median:
            continue  # a repetition: its median, spread, min and max stand for it
        if b.get("run_type") == "aggregate" and b.get("aggregate_name") == "mean":
            continue
        kept.append(b)
        if b.get("run_type") == "aggregate" and b.get("aggregate_name") == "cv" and name in extra:
            kept.extend(extra.pop(name))
    for rest in extra.values():
        kept.extend(rest)
    return dict(data, benchmarks=kept)


def json_text(data):
    """One entry per line: the context, then each benchmark (or each key of
    any other object)."""
    dump = lambda v: json.dumps(v, separators=(", ", ": "), ensure_ascii=False)
    if isinstance(data, dict) and isinstance(data.get("benchmarks"), list):
        head = {k: v for k, v in data.items() if k != "benchmarks"}
        lines = ["{"] + ["  %s: %s," % (dump(k), dump(v)) for k, v in head.items()]
        lines.append('  "benchmarks": [')
        lines += ["    %s%s" % (dump(b), "," if i + 1 < len(data["benchmarks"]) else "")
                  for i, b in enumerate(data["benchmarks"])]
        lines += ["  ]", "}"]
        return "\n".join(lines) + "\n"
    if isinstance(data, dict):
        items = list(data.items())
        return "{\n" + ",\n".join("  %s: %s" % (dump(k), dump(v)) for k, v in items) + "\n}\n"
    if isinstance(data, list):
        return "[\n" + ",\n".join("  " + dump(v) for v in data) + "\n]\n"
    return dump(data) + "\n"


def compacted(path):
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".json":
        if not text.strip():
            return text
        data = json.loads(text)
        if isinstance(data, dict) and isinstance(data.get("benchmarks"), list):
            data = compact_benchmarks(data)
        return json_text(data)
    if path.suffix == ".svg":
        # Line breaks are whitespace in XML attributes (path data), in CSS and
        # in SVG text (xml:space default): the same image on fewer lines.
        text = re.sub(r">\s*\n\s*<", "><", text.strip())
        return re.sub(r"[ \t]*\n\s*", " ", text) + "\n"
    return text


def main(argv):
    a = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    a.add_argument("dirs", nargs="+")
    a.add_argument("--check", action="store_true")
    args = a.parse_args(argv[1:])
    changed = []
    for root in args.dirs:
        for path in sorted(pathlib.Path(root).rglob("*")):
            if path.suffix not in (".json", ".svg") or not path.is_file():
                continue
            new = compacted(path)
            if new != path.read_text(encoding="utf-8"):
                changed.append(path)
                if not args.check:
                    path.write_text(new, encoding="utf-8")
    for path in changed:
        print(("would compact " if args.check else "compacted ") + str(path))
    return 1 if args.check and changed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
