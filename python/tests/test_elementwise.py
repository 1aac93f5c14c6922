# SPDX-License-Identifier: Apache-2.0
"""hidden_layer, hidden_layer_unfused and transform on NumPy arrays, against
long-double references and the bounds functors.hpp documents."""
import numpy as np
import pytest

import fusekit as fk
from conftest import layer_reference, ulp

GREY_TYPES = ["uint8", "int8", "uint16", "int16", "uint32", "int32", "uint64", "int64", "float32", "float64"]
OUT_TYPES = ["float32", "float64"] + (["float16"] if fk.has_half_types else [])
TANH_FLOAT_MAX_ULP = 1.6       # fusekit::tanh_float_max_ulp
FAST_TANH_MAX_RELATIVE = 2 ** -10.987  # fast_tanh_activate's documented device bound (the host runs tanh_activate)
# float64: the platform's tanh (glibc: at most 2 ulp, its libm-test-ulps), after
# a product rounded once (its ulp passes through tanh, whose condition number
# |x·tanh'(x)/tanh(x)| is at most 1) ...
DOUBLE_LAYER_MAX_ULP = 3 + 1
# ... and hidden_layer's normalize, which divides by its float scale in
# compute_t<grey, float>: float for grey of 8 or 16 bits and float (a relative
# 2^-24 in tanh's argument, so at most 2^-24·|y| in y).
FLOAT_NORMALIZE = 2.0 ** -24


def data(n, grey_type, w_type, seed=0):
    rng = np.random.default_rng(seed)
    grey = rng.integers(0, 256, n).astype(grey_type)
    w = (rng.standard_normal(n) * 4).astype(w_type)
    return grey, w


def layer_bound(ref, out_type):
    """The documented distance of the layer from the exact one, in out's type."""
    if out_type == "float32":
        return (TANH_FLOAT_MAX_ULP + 1) * ulp(ref, np.float32)
    if out_type == "float64":
        return DOUBLE_LAYER_MAX_ULP * ulp(ref, np.float64) + FLOAT_NORMALIZE * np.abs(ref).astype(np.float64)
    # float16: computed in float (within the float bound), rounded once to half
    return 0.5 * ulp(ref, np.float16) + (TANH_FLOAT_MAX_ULP + 1) * ulp(ref, np.float32)


@pytest.mark.parametrize("grey_type", GREY_TYPES)
@pytest.mark.parametrize("out_type", OUT_TYPES)
def test_hidden_layer_is_within_its_bound_of_the_exact_layer(grey_type, out_type):
    grey, w = data(4099, grey_type, out_type)
    y = fk.hidden_layer(grey, w)
    assert isinstance(y, np.ndarray) and y.dtype == np.dtype(out_type) and y.shape == w.shape
    ref = layer_reference(grey, w)
    err = np.abs(y.astype(np.longdouble) - ref).astype(np.float64)
    assert np.all(err <= layer_bound(ref, out_type)), float(np.max(err / layer_bound(ref, out_type)))


@pytest.mark.parametrize("out_type", OUT_TYPES)
def test_the_unfused_layer_and_the_composition_agree_with_the_fused_layer(out_type):
    grey, w = data(10007, "uint8", out_type, seed=1)
    y = fk.hidden_layer(grey, w)
    unfused = fk.hidden_layer_unfused(grey, w)
    ref = layer_reference(grey, w)
    if out_type == "float16":  # the three passes store each step in float16: within the bound, not the bits
        assert np.all(np.abs(unfused - ref.astype(np.float64)) <= 3 * ulp(ref, np.float16))
    else:  # every step in the compute type, as the fused layer does
        assert np.array_equal(unfused.view(np.uint8), y.view(np.uint8))
    op = fk.normalize(255.0) >> fk.weigh() >> fk.tanh()
    if out_type != "float64":  # float64's composition divides in double, the layer in float (its float scale)
        assert np.array_equal(fk.transform(op, grey, w).view(np.uint8), y.view(np.uint8))
    assert np.all(np.abs(fk.transform(op, grey, w) - ref.astype(np.float64)) <= layer_bound(ref, out_type))


def test_scale_is_the_greyscales_range():
    grey, w = data(1000, "uint16", "float32", seed=2)
    grey = (grey.astype(np.uint32) * 257).astype(np.uint16)  # 16-bit images
    y = fk.hidden_layer(grey, w, scale=65535.0)
    ref = layer_reference(grey, w, 65535.0)
    assert np.all(np.abs(y - ref.astype(np.float64)) <= layer_bound(ref, "float32"))


def test_out_is_written_in_place_and_returned():
    grey, w = data(333, "uint8", "float32", seed=3)
    expected = fk.hidden_layer(grey, w)
    out = np.full_like(w, np.nan)
    assert fk.hidden_layer(grey, w, out=out) is out
    assert np.array_equal(out, expected)
    assert fk.hidden_layer(grey, w, out=w) is w  # in place over the weights
    assert np.array_equal(w, expected)


def test_matrices_of_one_shape_and_empty_arrays():
    grey, w = data(12 * 7, "uint8", "float32", seed=4)
    y = fk.hidden_layer(grey.reshape(12, 7), w.reshape(12, 7))
    assert y.shape == (12, 7)
    assert np.array_equal(y.ravel(), fk.hidden_layer(grey, w))
    assert fk.hidden_layer(np.empty(0, np.uint8), np.empty(0, np.float32)).shape == (0,)


def test_special_values_follow_tanh():
    grey = np.full(5, 255, np.uint8)
    w = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0], np.float32)
    y = fk.hidden_layer(grey, w)
    assert y[0] == 1 and y[1] == -1 and np.isnan(y[2])
    assert y[3] == 0 and not np.signbit(y[3]) and y[4] == 0 and np.signbit(y[4])


# ------------------------------------------------------------------ transform

STAGES = {"normalize": fk.normalize(255.0), "weigh": fk.weigh(), "tanh": fk.tanh(), "fast_tanh": fk.fast_tanh()}


def composition_reference(names, x, w):
    v = np.asarray(x).astype(np.longdouble)
    for name in names:
        if name == "normalize":
            v = v / np.longdouble(255)
        elif name == "weigh":
            v = v * np.asarray(w).astype(np.longdouble)
        else:
            v = np.tanh(v)
    return v


def test_every_compiled_composition_is_listed_and_runs():
    assert len(fk.COMPOSITIONS) == 11
    rng = np.random.default_rng(5)
    for text in fk.COMPOSITIONS:
        names = text.split(" >> ")
        op = fk.fuse(*(STAGES[n] for n in names))
        assert repr(op).count(">>") == len(names) - 1
        for first in ("uint8", "float32"):
            x = rng.integers(0, 256, 2053).astype(first)
            w = (rng.standard_normal(2053) * 3).astype(np.float32)
            y = fk.transform(op, x, w if "weigh" in names else None)
            assert y.dtype == np.float32
            ref = composition_reference(names, x, w)
            if any(n.endswith("tanh") for n in names):
                # rounding of normalize and weigh (1 ulp), then tanh's documented bound
                # (fast_tanh runs tanh_activate on the host: within the same bound).
                bound = (TANH_FLOAT_MAX_ULP + 1) * ulp(ref, np.float32)
            else:
                # each stage is one correctly rounded operation: exactly numpy's float32 chain
                expected = x.astype(np.float32)
                for n in names:
                    expected = expected / np.float32(255) if n == "normalize" else expected * w
                assert np.array_equal(y, expected), text
                continue
            assert np.all(np.abs(y - ref.astype(np.float64)) <= bound), text


def test_normalize_is_the_correctly_rounded_division_for_every_uint8_and_double():
    x = np.arange(256, dtype=np.uint8)
    for scale in (255.0, 3.0, 0.1, 1e-30, 7.5):
        assert np.array_equal(fk.transform(fk.normalize(scale), x, dtype=np.float32),
                              x.astype(np.float32) / np.float32(scale))
        assert np.array_equal(fk.transform(fk.normalize(scale), x.astype(np.float64)), x / np.float64(scale))


@pytest.mark.parametrize("chain", [("weigh", "normalize"), ("tanh", "weigh"), ("tanh", "tanh"),
                                   ("tanh", "fast_tanh"), ()])
def test_a_chain_that_is_not_compiled_says_which_are(chain):
    with pytest.raises(ValueError, match="compiled"):
        fk.fuse(*(STAGES[n] for n in chain))


def test_inputs_must_match_the_compositions_arity():
    x = np.ones(4, np.float32)
    with pytest.raises(ValueError, match="two inputs"):
        fk.transform(fk.weigh(), x)
    with pytest.raises(ValueError, match="one input"):
        fk.transform(fk.tanh(), x, x)


def test_transform_picks_outs_type_as_documented():
    x8 = np.arange(256, dtype=np.uint8)
    assert fk.transform(fk.tanh(), x8).dtype == np.float32             # not floating: float32
    assert fk.transform(fk.tanh(), x8.astype(np.float64)).dtype == np.float64  # x's own floating type
    w = np.ones(256, np.float64)
    assert fk.transform(fk.weigh(), x8, w).dtype == np.float64           # w's type
    assert fk.transform(fk.normalize(2.0), x8, dtype="float64").dtype == np.float64
    with pytest.raises(TypeError, match="uint8 or has out's type"):
        fk.transform(fk.tanh(), x8.astype(np.int32))
    with pytest.raises(TypeError, match="weigh's input has out's type"):
        fk.transform(fk.weigh(), x8, w, dtype=np.float32)


def test_weigh_and_normalize_compose_to_the_rounded_chain_in_double():
    rng = np.random.default_rng(6)
    x = rng.integers(0, 256, 5000).astype(np.uint8)
    w = rng.standard_normal(5000)
    y = fk.transform(fk.normalize(7.0) >> fk.weigh(), x, w)
    assert np.array_equal(y, (x / 7.0) * w)  # normalize<double> for a float64 out: two roundings in double


@pytest.mark.parametrize("out_type", OUT_TYPES)
def test_the_unfused_layer_is_three_transforms_that_store_in_outs_type(out_type):
    grey, w = data(20011, "uint8", out_type, seed=9)
    a = fk.transform(fk.normalize(255.0), grey, dtype=out_type)
    b = fk.transform(fk.weigh(), a, w)
    c = fk.transform(fk.tanh(), b)
    if out_type == "float64":  # the layer's own normalize divides by its float scale
        a = fk.transform(fk.normalize(255.0), grey, dtype="float32").astype(np.float64)
        c = fk.transform(fk.tanh(), fk.transform(fk.weigh(), a, w))
    assert np.array_equal(fk.hidden_layer_unfused(grey, w).view(np.uint8), c.view(np.uint8))


def test_the_unfused_comparison_takes_uint8_grey_and_says_so():
    w = np.ones(8, np.float32)
    with pytest.raises(TypeError, match=r"fusekit\.hidden_layer_unfused: grey is int16 but must be uint8"):
        fk.hidden_layer_unfused(np.ones(8, np.int16), w)
    assert np.array_equal(fk.hidden_layer(np.ones(8, np.int16), w), fk.hidden_layer(np.ones(8, np.uint8), w))
