# SPDX-License-Identifier: Apache-2.0
"""sum and reduce on NumPy arrays: every algorithm and accumulator against an
exact reference and reduce_api.hpp's bounds, and the deterministic tree's bits
against the C++ tests' pinned values (tests/common/pinned_sums.hpp)."""
import math
import os
import re

import numpy as np
import pytest

import fusekit as fk
from conftest import REPO

FLOAT_INPUTS = ["float32", "float64"] + (["float16"] if fk.has_half_types else [])
INT_INPUTS = ["uint8", "int8", "uint16", "int16", "uint32", "int32", "uint64", "int64"]
P = os.cpu_count() or 1


def unit_roundoff(acc):
    return 2.0 ** -24 if np.dtype(acc) == np.float32 else 2.0 ** -53


def error_bound(algorithm, n, acc, S):
    """reduce_api.hpp's bound on |computed − exact| on the CPU (P threads at most)."""
    u = unit_roundoff(acc)
    if algorithm == "naive_atomic":
        return max(n - 1, 0) * u * S
    if algorithm == "block_atomic":
        return (n / 8 + 8 + P) * u * S  # (n/(8P) + 8 + P)·u·S, largest at P = 1 for the first term
    if algorithm == "cub":
        return (u + (4096 / 8 + 8 + n / 4096) * 2.0 ** -53) * S
    levels = max(1, math.ceil(math.log(max(n, 2), 8192)))
    return 40 * levels * u * S


def raw_values(n, dtype, seed):
    """Raw units: magnitudes from 2^-20 to 2^12, both signs."""
    rng = np.random.default_rng(seed)
    v = np.ldexp(1 + rng.random(n), rng.integers(-20, 13, n)) * rng.choice([-1.0, 1.0], n)
    return v.astype(dtype)


@pytest.mark.parametrize("dtype", FLOAT_INPUTS)
@pytest.mark.parametrize("algorithm", fk.ALGORITHMS)
@pytest.mark.parametrize("n", [0, 1, 255, 8193, 100003])
def test_float_sums_are_within_the_documented_bound(dtype, algorithm, n):
    x = raw_values(n, dtype, seed=n)
    exact = math.fsum(x.astype(np.float64).tolist())
    S = float(np.sum(np.abs(x.astype(np.float64))))
    accumulators = ["float64"] if dtype == "float64" else ["float32", "float64"]
    for acc in accumulators:
        s = fk.sum(x, algorithm, dtype=acc)
        assert isinstance(s, np.generic) and s.dtype == np.dtype(acc)
        assert abs(float(s) - exact) <= error_bound(algorithm, n, acc, S), (acc, float(s), exact)
    default = fk.sum(x, algorithm)
    assert default.dtype == (np.float64 if dtype == "float64" else np.float32)


def test_run_to_run_is_the_algorithm_cub_named():
    # C++ calls it run_to_run; "cub" is its earlier name, kept: the same algorithm, the same bits.
    x = raw_values(100003, "float32", seed=3)
    for acc in ("float32", "float64"):
        a, b = fk.sum(x, "run_to_run", dtype=acc), fk.sum(x, "cub", dtype=acc)
        assert a.tobytes() == b.tobytes()
    with pytest.raises(ValueError, match="run_to_run"):
        fk.sum(x, "two_pass")


@pytest.mark.parametrize("dtype", INT_INPUTS)
@pytest.mark.parametrize("algorithm", fk.ALGORITHMS)
def test_integer_sums_are_exact_in_64_bits(dtype, algorithm):
    info = np.iinfo(dtype)
    rng = np.random.default_rng(7)
    x = rng.integers(info.min, info.max, 50001, dtype=dtype, endpoint=True)
    acc = np.int64 if info.min < 0 else np.uint64
    exact = int(sum(int(v) for v in x.tolist()))
    wrapped = exact % 2 ** 64
    if acc == np.int64 and wrapped >= 2 ** 63:
        wrapped -= 2 ** 64
    s = fk.sum(x, algorithm)
    assert s.dtype == acc and int(s) == wrapped  # 64-bit wrap-around, as documented


def pinned_values(n, dtype, seed):
    """tests/common/pinned_sums.hpp's values(): the hash, in NumPy's wrapping uint64."""
    i = np.arange(n, dtype=np.uint64)
    with np.errstate(over="ignore"):
        z = i * np.uint64(0x9E3779B97F4A7C15) + np.uint64(seed)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    h = z ^ (z >> np.uint64(31))
    if np.dtype(dtype).kind == "f":
        m = (h >> np.uint64(40)).astype(np.float64) * 2.0 ** -24
        e = ((h >> np.uint64(8)) % np.uint64(33)).astype(np.int64) - 20
        sign = np.where((h & np.uint64(1)) != 0, -1.0, 1.0)
        return (sign * np.ldexp(1.0 + m, e)).astype(dtype)
    return (h >> np.uint64(3)).astype(dtype)


PINNED_CASES = {"f32": ("float32", 1, None), "f64": ("float64", 3, None), "f32_in_f64": ("float32", 1, "float64"),
                "i32_in_i64": ("int32", 5, None), "u8_in_u64": ("uint8", 6, None), "i64": ("int64", 7, None)}


def test_deterministic_sums_have_the_bits_the_cpp_tests_pin():
    header = open(os.path.join(REPO, "tests", "common", "pinned_sums.hpp")).read()
    recorded = re.findall(r'"(\w+) (\d+) ([0-9a-f]{16})"', header)
    assert len(recorded) >= 60
    checked = 0
    for case, n, bits in recorded:
        if case not in PINNED_CASES:
            continue  # dot products: transform_reduce, not in the package
        dtype, seed, acc = PINNED_CASES[case]
        x = pinned_values(int(n), dtype, seed)
        s = fk.sum(x, "deterministic", dtype=acc)
        got = int(np.asarray(s).astype(s.dtype).view(np.uint32 if s.dtype.itemsize == 4 else np.uint64))
        assert f"{got:016x}" == bits, (case, n)
        checked += 1
    assert checked == 60


def test_deterministic_sums_do_not_change_run_to_run_while_atomics_may():
    x = raw_values(1 << 20, np.float32, seed=11)
    first = fk.sum(x)
    for _ in range(5):
        assert fk.sum(x).tobytes() == first.tobytes()


@pytest.mark.parametrize("dtype", FLOAT_INPUTS + ["int32", "uint8", "int64"])
@pytest.mark.parametrize("algorithm", ["deterministic", "cub"])
def test_min_and_max_are_exact(dtype, algorithm):
    x = (raw_values(30011, np.float64, seed=3) * (1 if dtype == "float16" else 1000)).astype(dtype)
    lo, hi = fk.reduce(x, "min", algorithm=algorithm), fk.reduce(x, "max", algorithm=algorithm)
    assert float(lo) == float(x.min()) and float(hi) == float(x.max())


def test_min_and_max_of_integers_run_on_the_atomics_too_and_floats_say_why_not():
    x = np.arange(-500, 500, dtype=np.int32)[::-1].copy()
    for algorithm in fk.ALGORITHMS:
        assert int(fk.reduce(x, "min", algorithm=algorithm)) == -500
        assert int(fk.reduce(x, "max", algorithm=algorithm)) == 499
    with pytest.raises(ValueError, match="atomic"):
        fk.reduce(x.astype(np.float32), "min", algorithm="block_atomic")


def test_nan_propagates_and_init_is_combined_once():
    x = np.arange(100, dtype=np.float32)
    x[37] = np.nan
    assert np.isnan(fk.reduce(x, "min")) and np.isnan(fk.reduce(x, "max")) and np.isnan(fk.sum(x))
    y = np.arange(1, 11, dtype=np.float64)
    assert fk.reduce(y, "sum", init=100.0) == 155.0
    assert fk.reduce(y, "max", init=50.0) == 50.0
    assert fk.reduce(np.empty(0, np.float32), "min") == np.inf
    assert fk.reduce(np.empty(0, np.int32), "max") == np.iinfo(np.int64).min
    assert fk.sum(np.empty(0, np.float32)) == 0


def test_out_receives_the_sum():
    x = raw_values(1000, np.float32, seed=5)
    out = np.zeros(1, np.float64)
    assert fk.sum(x, dtype=np.float64, out=out) is out
    assert out[0] == fk.sum(x, dtype=np.float64)


def test_accumulators_follow_the_cpp_rules():
    with pytest.raises(TypeError, match="float64"):
        fk.sum(np.ones(4, np.float64), dtype=np.float32)
    with pytest.raises(TypeError, match="int64"):
        fk.sum(np.ones(4, np.int32), dtype=np.int32)
    with pytest.raises(TypeError, match="uint64"):
        fk.sum(np.ones(4, np.uint8), dtype=np.float64)
    with pytest.raises(ValueError, match="'deterministic', 'cub'"):
        fk.sum(np.ones(4, np.float32), "pairwise")
    with pytest.raises(ValueError, match="'sum', 'min' or 'max'"):
        fk.reduce(np.ones(4, np.float32), "prod")
    with pytest.raises(TypeError, match="bool"):
        fk.sum(np.ones(4, bool))


def test_integer_init_is_combined_exactly():
    x = np.arange(1, 1001, dtype=np.int32)
    assert int(fk.reduce(x, "sum", init=-7)) == 500500 - 7
    assert int(fk.reduce(x, "min", init=-3)) == -3
    u = np.arange(10, dtype=np.uint16)
    assert int(fk.reduce(u, "max", init=2 ** 63)) == 2 ** 63
    with pytest.raises(TypeError, match="init"):
        fk.reduce(x, "sum", init="five")


@pytest.mark.parametrize("algorithm", ["deterministic", "cub", "naive_atomic", "block_atomic"])
def test_uint64_min_and_max_span_the_whole_range(algorithm):
    """uint64 values above 2^63 (where a signed identity would wrap): the exact min and max, and the
    identities of an empty input."""
    x = np.array([2**64 - 1, 2**63 + 5, 2**63 + 3, 2**63 + 9], dtype=np.uint64)
    assert int(fk.reduce(x, "min", algorithm=algorithm)) == 2**63 + 3
    assert int(fk.reduce(x, "max", algorithm=algorithm)) == 2**64 - 1
    assert int(fk.reduce(np.empty(0, np.uint64), "min", algorithm=algorithm)) == 2**64 - 1
    assert int(fk.reduce(np.zeros(3, np.uint64), "max", algorithm=algorithm)) == 0


# ------------------------------------------------------- sums per segment and per row

def tree_levels(n):
    levels = 0
    while n > 1:
        n = -(-n // 8192)
        levels += 1
    return levels


@pytest.mark.parametrize("dtype,acc", [("float32", None), ("float32", "float64"), ("float64", None)])
def test_each_segment_is_the_sum_of_its_slice_within_the_bound(dtype, acc):
    x = raw_values(300000, dtype, 5)
    rng = np.random.default_rng(6)
    lengths = np.concatenate([rng.integers(0, 9, 5000), [0, 200000, 1, 256, 257, 8192, 8193]])
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    offsets = offsets[offsets <= x.size]
    out = fk.segmented_sum(x, offsets, dtype=acc)
    assert out.shape == (offsets.size - 1,) and out.dtype == np.dtype(acc or dtype)
    for s in range(offsets.size - 1):
        seg = x[offsets[s]:offsets[s + 1]]
        assert out[s].tobytes() == np.asarray(fk.sum(seg, dtype=acc)).tobytes(), s
        if s % 97 == 0 or seg.size > 1000:
            exact = math.fsum(seg.astype(np.float64).tolist())
            S = float(np.abs(seg.astype(np.float64)).sum())
            assert abs(float(out[s]) - exact) <= 40 * (tree_levels(seg.size) + 1) * unit_roundoff(out.dtype) * S


def test_integer_segments_and_rows_are_exact():
    x = np.random.default_rng(7).integers(-2 ** 31, 2 ** 31, 100000).astype(np.int32)
    offsets = np.array([0, 1, 1, 50000, 100000], np.int32)
    out = fk.segmented_sum(x, offsets)
    assert out.dtype == np.int64
    wide = x.astype(np.int64)
    assert np.array_equal(out, [wide[0], 0, wide[1:50000].sum(), wide[50000:].sum()])
    X = x.reshape(1000, 100)
    assert np.array_equal(fk.sum(X, axis=1), X.astype(np.int64).sum(axis=1))


def test_row_sums_of_every_short_length_are_each_rows_sum():
    for L in (1, 2, 7, 8, 9, 100, 256, 257, 1000):
        X = raw_values(37 * L, "float32", L).reshape(37, L)
        rows = fk.sum(X, axis=1)
        assert all(rows[r].tobytes() == np.asarray(fk.sum(X[r])).tobytes() for r in range(37)), L
    out = np.empty(37, np.float64)
    assert fk.sum(X, axis=1, out=out) is out
    assert np.array_equal(out, fk.sum(X, axis=1, dtype=np.float64))


def test_segment_offsets_are_checked_before_anything_is_written():
    x = np.ones(64, np.float32)
    out = np.full(3, -7.0, np.float32)
    for offsets, message in (([0, 5, 4, 6], "offsets\\[2\\] = 4 is less than offsets\\[1\\] = 5"),
                             ([-1, 2, 3, 4], "offsets\\[0\\] is -1"),
                             ([0, 5, 6, 65], "past the end of the 64 values"),
                             ([0, 5, 6], "out has 3 elements for 2 segments")):
        with pytest.raises(ValueError, match="fusekit.segmented_sum: .*" + message):
            fk.segmented_sum(x, offsets, out=out)
    with pytest.raises(TypeError, match="offsets is float64; it must be int64 or int32"):
        fk.segmented_sum(x, np.array([0.0, 1.0]))
    assert np.all(out == -7.0)
    assert fk.segmented_sum(x, [0]).shape == (0,)

