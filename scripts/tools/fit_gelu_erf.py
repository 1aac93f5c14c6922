#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The coefficients of gelu_erf's polynomial (detail/elementwise/activations.hpp).

H(a) = (1 + a)·e^{a²/2}·Q(a), Q(a) = erfc(a/√2)/2 the normal upper tail, as a
polynomial in t = (a − 4)/(a + 4) ∈ [−1, 1) for a ∈ [0, ∞): the Chebyshev
interpolant at 90 nodes in t, cut after the last term above 2^-62, written in
powers of t and rounded to double. Prints the coefficients, highest power
first, as the header's Horner steps use them, and their largest relative
error over t (exact arithmetic, 2001 points), which must stay below 0.5·2^-53.

    python3 scripts/tools/fit_gelu_erf.py        (needs mpmath; about 10 s)
"""
import mpmath as mp

mp.mp.dps = 80
K = mp.mpf(4)
NODES = 90


def h(a):
    return (1 + a) * mp.exp(a * a / 2) * mp.erfc(a / mp.sqrt(2)) / 2


def a_of(t):
    return K * (1 + t) / (1 - t)


def chebyshev():
    nodes = [mp.cos(mp.pi * (k + mp.mpf(1) / 2) / NODES) for k in range(NODES)]
    values = [h(a_of(t)) for t in nodes]
    c = [sum(values[k] * mp.cos(mp.pi * j * (k + mp.mpf(1) / 2) / NODES) for k in range(NODES)) * 2 / NODES
         for j in range(NODES)]
    c[0] /= 2
    last = max(j for j, v in enumerate(c) if abs(v) > mp.mpf(2) ** -62)
    return c[:last + 1]


def powers(cheb):
    """Σ c_j T_j(t) as Σ p_i t^i."""
    t_polys = [[mp.mpf(1)], [mp.mpf(0), mp.mpf(1)]]
    while len(t_polys) < len(cheb):
        prev, before = t_polys[-1], t_polys[-2]
        nxt = [mp.mpf(0)] + [2 * v for v in prev]
        for i, v in enumerate(before):
            nxt[i] -= v
        t_polys.append(nxt)
    p = [mp.mpf(0)] * len(cheb)
    for c, tp in zip(cheb, t_polys):
        for i, v in enumerate(tp):
            p[i] += c * v
    return p


def main():
    p = [float(v) for v in powers(chebyshev())]
    worst = mp.mpf(0)
    for i in range(2001):
        t = -1 + mp.mpf(2) * i / 2000
        ref = h(a_of(t)) if t < 1 else 1 / mp.sqrt(2 * mp.pi)
        y = mp.mpf(0)
        for v in reversed(p):
            y = y * t + mp.mpf(v)
        worst = max(worst, abs(y / ref - 1))
    print(f"degree {len(p) - 1}; largest relative error {mp.nstr(worst * mp.mpf(2) ** 53, 3)} * 2^-53")
    for v in reversed(p):
        print(repr(v))


if __name__ == "__main__":
    main()
