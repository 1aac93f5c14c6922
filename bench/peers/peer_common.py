# SPDX-License-Identifier: Apache-2.0
"""Shared by fusekit's peer benchmarks: the same data as fusekit's benches,
timing, float64 checks, and output in Google Benchmark's JSON schema.

Standard library only at import; NumPy and the GPU stacks are imported by
the task scripts, each skipped with a line when it is not installed.
"""
import contextlib
import datetime
import importlib
import json
import pathlib
import platform
import statistics
import sys
import time

MASK64 = (1 << 64) - 1


def optional(module):
    """The module, or None (with a line saying so) when it is not installed."""
    try:
        return importlib.import_module(module)
    except Exception as e:  # ImportError, or a stack that fails to initialize
        print(f"skipped: {module} is not available ({type(e).__name__}: {e})", file=sys.stderr)
        return None


def hash32(np, i, seed):
    """fusekit::detail::hash32 (splitmix64's finalizer) on a uint64 array (NumPy's,
    or CuPy's: then the data is made on the GPU)."""
    quiet = np.errstate(over="ignore") if hasattr(np, "errstate") else contextlib.nullcontext()
    with quiet:
        z = (i * np.uint64(0x9E3779B97F4A7C15) + np.uint64((seed * 0xD1B54A32D192ED03) & MASK64)
             + np.uint64(0x632BE59BD9B4E019))
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return ((z ^ (z >> np.uint64(31))) >> np.uint64(32)).astype(np.uint32)


def uniform01(np, n, seed, dtype):
    """fusekit::detail::uniform01: 24 random bits in [0, 1)."""
    i = np.arange(n, dtype=np.uint64)
    return ((hash32(np, i, seed) >> np.uint32(8)).astype(np.float64) * 2.0 ** -24).astype(dtype)


def standard_normal(np, n, seed):
    """fusekit::bench::standard_normal: Box-Muller in double over two streams."""
    i = np.arange(n, dtype=np.uint64)
    u1 = ((hash32(np, i, seed) >> np.uint32(8)).astype(np.float64) + 1.0) * 2.0 ** -24
    u2 = (hash32(np, i, seed + 1) >> np.uint32(8)).astype(np.float64) * 2.0 ** -24
    return np.sqrt(-2.0 * np.log(u1)) * np.cos(6.283185307179586 * u2)


def layer_inputs(np, n, grey_dtype):
    """The hidden layer's inputs, element for element as in bench/elementwise.cu."""
    i = np.arange(n, dtype=np.uint64)
    grey = (hash32(np, i, 1) % np.uint32(255)).astype(grey_dtype)
    w = (0.5 + 0.1 * standard_normal(np, n, 2)).astype(np.float32)
    return grey, w


def sum_inputs(np, n, dtype):
    """The sum's inputs, as in bench/reduce.cu: uniform [0, 1) floats or integers in [0, 1000)."""
    if np.dtype(dtype).kind == "f":
        return uniform01(np, n, 7, dtype)
    i = np.arange(n, dtype=np.uint64)
    return (hash32(np, i, 7) % np.uint32(1000)).astype(dtype)


def train_problem(np, K, L, N, dtype):
    """The trainer's problem, as in bench/train.cu: X uniform [0, 1), Y = X W_trueᵀ, W_true ~ N(0, 1)."""
    X = uniform01(np, K * L, 11, np.float64).reshape(K, L).astype(dtype)
    W_true = standard_normal(np, N * L, 12).reshape(N, L)
    Y = (X.astype(np.float64) @ W_true.T).astype(dtype)
    return X, Y


def time_it(fn, sync=lambda: None, repeats=7, min_seconds=0.2, warmup=2):
    """Median seconds of `fn` over `repeats` timed runs after `warmup` runs;
    each timed run repeats fn until min_seconds passed, then divides."""
    for _ in range(warmup):
        fn()
    sync()
    samples = []
    for _ in range(repeats):
        count, t0 = 0, time.perf_counter()
        while True:
            fn()
            count += 1
            sync()
            elapsed = time.perf_counter() - t0
            if elapsed >= min_seconds / repeats or count >= 1000:
                break
        samples.append(elapsed / count)
    return statistics.median(samples)


class Report:
    """Collects runs and writes them as Google Benchmark JSON: after every run
    when given a path, so a peer stopped by a time limit keeps what it measured."""

    def __init__(self, task, path=None):
        self.task = task
        self.path = path
        self.runs = []

    def add(self, name, n, seconds, bytes_processed=None, rel_error=None, **counters):
        run = {"name": name, "run_name": name, "run_type": "iteration", "iterations": 1,
               "real_time": seconds * 1e6, "cpu_time": seconds * 1e6, "time_unit": "us", "n": n}
        if bytes_processed is not None:
            run["bytes_per_second"] = bytes_processed / seconds
        if rel_error is not None:
            run["rel_error"] = rel_error
        run.update(counters)
        self.runs.append(run)
        extra = f" rel_error={rel_error:.2e}" if rel_error is not None else ""
        print(f"{name:<48} {seconds * 1e3:>12.3f} ms{extra}", file=sys.stderr)
        if self.path:
            self.write(self.path)

    def write(self, path):
        context = {"date": datetime.datetime.now().isoformat(timespec="seconds"), "host_name": platform.node(),
                   "python": platform.python_version(), "task": self.task}
        with open(path, "w") as f:
            json.dump({"context": context, "benchmarks": self.runs}, f, indent=1)


def gpu_stacks():
    """(cupy, torch, numba.cuda) for the GPU peers, each None (with a line) when
    missing or without a GPU."""
    cp = optional("cupy")
    if cp is not None:
        try:
            cp.cuda.runtime.getDeviceCount()
        except Exception as e:
            print(f"skipped: cupy sees no GPU ({e})", file=sys.stderr)
            cp = None
    torch = optional("torch")
    if torch is not None and not torch.cuda.is_available():
        print("skipped: torch sees no GPU", file=sys.stderr)
        torch = None
    numba_cuda = None
    if optional("numba") is not None:
        try:
            from numba import cuda as numba_cuda
            if not numba_cuda.is_available():
                print("skipped: numba.cuda sees no GPU", file=sys.stderr)
                numba_cuda = None
        except Exception as e:
            print(f"skipped: numba.cuda ({e})", file=sys.stderr)
            numba_cuda = None
    return cp, torch, numba_cuda


_sizes = None  # --sizes, when given: every size list of the task


def sizes(default):
    """The task's sizes: --sizes when given, else `default`."""
    return _sizes if _sizes is not None else default


def parse_sizes(text):
    """'2^20,1000' -> [1048576, 1000]."""
    out = []
    for item in text.split(","):
        item = item.strip()
        value = 1 << int(item[2:]) if item.startswith("2^") else int(item)
        if value <= 0:
            raise ValueError(f"--sizes: {item} is not a positive size")
        out.append(value)
    return out


def run_task(task, argv, cpu_peers, gpu_peers):
    """The main of a peer script: NumPy required; CPU peers unless --gpu-only,
    GPU peers unless --cpu-only."""
    global _sizes
    args = main_args(argv)
    _sizes = args.sizes
    np = optional("numpy")
    if np is None:
        return 0
    report = Report(task, args.out)
    if not args.gpu_only:
        cpu_peers(np, report)
    if not args.cpu_only:
        gpu_peers(np, report)
    return 0


def main_args(argv, more=None):
    """--out FILE, --cpu-only, --gpu-only, --sizes LIST (and --help); `more(parser)`
    adds a task's own."""
    import argparse
    parser = argparse.ArgumentParser(description=f"fusekit's peer benchmark {pathlib.Path(argv[0]).stem}: the same "
                                     "task in the stacks users come from, timed the same way; JSON for compare.py")
    parser.add_argument("--out", metavar="FILE", help="write the results as JSON (default: print only)")
    parser.add_argument("--cpu-only", action="store_true", help="skip the GPU stacks")
    parser.add_argument("--gpu-only", action="store_true", help="skip the CPU stacks")
    parser.add_argument("--sizes", type=parse_sizes, metavar="LIST",
                        help="comma-separated sizes (numbers or 2^k) in place of the task's own")
    if more is not None:
        more(parser)
    return parser.parse_args(argv[1:])
