#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Closes a benchmark JSON that its program left unterminated.

Google Benchmark writes --benchmark_out as runs finish and closes it at exit;
a bench stopped by its time limit, or one that crashes, leaves the file open,
and then bench/compare.py and bench/summarize.py cannot read any of it. This
keeps every run that was written whole: the context and the complete objects
of "benchmarks", with "closed_after_stop": true in the context so that a
reader sees the file was cut. A file that parses is left as it is.

    python3 bench/close_json.py FILE...    prints one line per file: "whole",
                                           "closed after N runs" or "unreadable"
"""
import json
import sys


def close(text):
    """(JSON text, runs kept) for a possibly unterminated benchmark file, or (None, 0)."""
    decoder = json.JSONDecoder()
    at = text.find('"context"')
    if at < 0:
        return None, 0
    at = text.index(":", at) + 1
    while at < len(text) and text[at] in " \t\r\n":
        at += 1
    try:
        context, at = decoder.raw_decode(text, at)
    except json.JSONDecodeError:
        return None, 0
    runs = []
    start = text.find('"benchmarks"', at)
    if start >= 0:
        at = text.find("[", start) + 1
        while at > 0:
            while at < len(text) and text[at] in " \t\r\n,":
                at += 1
            if at >= len(text) or text[at] != "{":
                break
            try:
                run, at = decoder.raw_decode(text, at)
            except json.JSONDecodeError:
                break  # the run being written when the program stopped
            runs.append(run)
    context["closed_after_stop"] = True
    return json.dumps({"context": context, "benchmarks": runs}, indent=2), len(runs)


def main(paths):
    for path in paths:
        try:
            text = open(path, encoding="utf-8").read()
        except OSError as e:
            print(f"{path}: unreadable ({e.strerror})")
            continue
        try:
            json.loads(text)
            print(f"{path}: whole")
            continue
        except json.JSONDecodeError:
            pass
        closed, runs = close(text)
        if closed is None:
            print(f"{path}: unreadable (no context)")
            continue
        with open(path, "w", encoding="utf-8") as f:
            f.write(closed + "\n")
        print(f"{path}: closed after {runs} runs")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
