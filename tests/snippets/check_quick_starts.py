#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Builds and runs README.md's quick starts exactly as printed there, and holds
README.md to its length.

A quick start is a code block after `<!-- quickstart file: NAME -->` (written
to NAME in a fresh folder) and a shell block after
`<!-- quickstart run: NAME -->`, whose lines run there one by one. The only
changes to the printed commands: `fusekit/include` becomes this tree's
include folder, `/usr/local/cuda` the toolkit's folder, and a leading `g++` or
`nvcc` the compiler named on this command line.

    python3 tests/snippets/check_quick_starts.py SOURCE_ROOT WORK_DIR --only quickstart.cpp \\
        --cxx g++ --nvcc nvcc --cuda-root /usr/local/cuda --expect "converged: W = 2"
"""
import argparse
import pathlib
import re
import shutil
import subprocess
import sys

MAX_README_LINES = 300


def blocks(readme):
    """{name: source} and {name: [command lines]} from README's markers."""
    files, runs = {}, {}
    pattern = re.compile(r"<!-- quickstart (file|run): (\S+) -->\n```[a-z]*\n(.*?)```", re.S)
    for kind, name, body in pattern.findall(readme):
        if kind == "file":
            files[name] = body
        else:
            runs[name] = [line for line in body.splitlines() if line.strip()]
    return files, runs


def localize(line, args, root):
    line = line.replace("fusekit/include", str(root / "include"))
    line = line.replace("/usr/local/cuda", args.cuda_root)
    line = re.sub(r"^g\+\+ ", args.cxx + " ", line)
    line = re.sub(r"^nvcc ", args.nvcc + " ", line)
    return line


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", help="the source tree")
    parser.add_argument("work", help="a folder to build in (emptied first)")
    parser.add_argument("--only", required=True, help="the quick start to build: its file name")
    parser.add_argument("--cxx", default="g++")
    parser.add_argument("--nvcc", default="nvcc")
    parser.add_argument("--cuda-root", default="/usr/local/cuda")
    parser.add_argument("--expect", default="", help="a regular expression the last command's output must match")
    args = parser.parse_args(argv[1:])
    root = pathlib.Path(args.root).resolve()
    readme = (root / "README.md").read_text()
    lines = readme.count("\n")
    if lines > MAX_README_LINES:
        print(f"README.md has {lines} lines; at most {MAX_README_LINES} (the rest belongs in docs/)")
        return 1
    files, runs = blocks(readme)
    if args.only not in files or args.only not in runs:
        print(f"README.md has no quick start {args.only} (found files {sorted(files)}, runs {sorted(runs)})")
        return 1
    work = pathlib.Path(args.work)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    (work / args.only).write_text(files[args.only])
    output = ""
    for line in runs[args.only]:
        command = localize(line, args, root)
        print(f"$ {command}", flush=True)
        done = subprocess.run(command, shell=True, cwd=work, capture_output=True, text=True, timeout=600)
        output = done.stdout + done.stderr
        print(output, end="", flush=True)
        if done.returncode != 0:
            print(f"failed ({done.returncode}): {line}")
            return 1
    if args.expect and not re.search(args.expect, output):
        print(f"the last command did not print {args.expect!r}")
        return 1
    print(f"{args.only}: built and ran as README.md prints it ({lines} lines)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
