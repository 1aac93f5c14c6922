#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Planted one-line bugs in include/fusekit, each against the CPU tests that
should catch it: a mutant is killed when a test fails, ends abnormally or runs
past its time (a hang). Covers conjugate gradients, the Jacobi preconditioner,
the relative rule and the rounding floor, the MPI cross-rank checks, the
memory router, the reductions' ops (NaN, signed zeros, identities, the vector min/max and sum
loops, the tree's prefetches and exact integer sums), the no-throw contract, the CPU dispatch and stream stores, the overflow checks, the enums' names, tanh under
-ffast-math and the activations computed in double. Not run in CI (tens of minutes on 2 cores):

    scripts/check/mutation.py [--set planted|contract|false_success|dispatch|all] [--jobs N] [--only ID,...] [--keep DIR]
    scripts/check/mutation.py --check    (each mutant's text is in its file once: ctest layout.mutants_apply)

Prints one line per mutant and the score (killed / planted)."""
import argparse, concurrent.futures, os, shutil, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CUDA = os.environ.get("CUDA_HOME", "/usr/local/cuda")
FLAGS = ["-O2", "-DNDEBUG", "-fopenmp", "-std=gnu++20", "-I", "include", "-I", "tests",
         "-I", CUDA + "/include/cccl", "-isystem", CUDA + "/include"]

# test key: (source, extra flags, how to run, timeout in seconds)
TESTS = {
    "train": (["tests/train/fit_test.cpp", "tests/train/conjugate_gradient_test.cpp", "tests/train/refinement_test.cpp"], [], None,
              600),
    "kinds": ("tests/train/data_kinds_test.cpp", [], None, 600),
    "property": (["tests/reduce/property_test.cpp", "tests/train/property_test.cpp"], [], "rapidcheck", 300),
    "tree": ("tests/distributed/tree_test.cpp", [], None, 300),
    "agreement": ("tests/distributed/agreement_test.cpp", [], None, 120),
    "descent": ("tests/train/descent_test.cpp", [], None, 300),
    # the GPU's bodies on M threads; in turns a dropped sync() is a wrong answer
    "team": ("tests/team/threaded_team_test.cpp", [], "team", 600),
    "advtrain": (["tests/train/adversarial_test.cpp", "tests/train/false_success_test.cpp"], [], None, 600),
    # the same under -ffast-math: a subnormal weight compares as 0 there
    "advtrain_fastmath": (["tests/train/adversarial_test.cpp", "tests/train/false_success_test.cpp"],
                          ["-ffast-math"], None, 600),
    "reduce_op": ("tests/reduce/op_test.cpp", [], None, 300),
    "reduce_cpu": ("tests/reduce/cpu_test.cpp", [], None, 600),
    "segmented_cpu": ("tests/reduce/cpu_segmented_test.cpp", [], None, 300),
    "advreduce": ("tests/reduce/adversarial_test.cpp", [], None, 300),
    # under UBSan: an empty thrust::host_vector's data() is &front(), undefined
    # behaviour that gives a null pointer all the same in a plain build
    "containers_ubsan": ("tests/core/containers_test.cpp", ["-fsanitize=undefined", "-fno-sanitize-recover=all"], None, 120),
    "pinned_native_fastmath": ("tests/reduce/pinned_sums_test.cpp", ["-O3", "-march=native", "-ffast-math"], None, 300),
    "tanh_fastmath": ("tests/elementwise/tanh_sweep_test.cpp", ["-O3", "-ffast-math"], None, 300),
    "tanh": ("tests/elementwise/functors_test.cpp", [], None, 300),
    "activations": ("tests/elementwise/activations_test.cpp", [], None, 600),
    "activations_fastmath": ("tests/elementwise/activations_test.cpp", ["-ffast-math"], None, 600),
    "divisor": ("tests/elementwise/divisor_test.cpp", [], None, 300),
    "elementwise_cpu": ("tests/elementwise/cpu_test.cpp", [], None, 300),
    "mpi": ("tests/distributed/mpi_test.cpp", [], "mpi", 120),
    # a GPU test program, compiled by nvcc: without a device only its argument
    # checks run (the others skip themselves)
    "reduce_gpu_args": ("tests/reduce/cuda_test.cu", [], "nvcc-gtest", 300),
    "walk": (["tests/host_data/walk_test.cpp", "tests/host_data/router_test.cpp", "tests/host_data/host_copy_test.cpp"], [],
             None, 300),
    "names": ("tests/base/names_test.cpp", [], None, 60),
    "pool": ("tests/core/cpu_pool_test.cpp", [], None, 300),
    "model": ("tests/train/linear_association_test.cpp", [], None, 300),
    # object files, inspected by a codegen check (ctest codegen.cpu_tree_vectors_without_fma,
    # codegen.cpu_transform_stream_stores)
    "host_tree_codegen": ("tests/codegen/host_tree.cpp", ["-O3"], "codegen:check_host_tree.cmake", 300),
    "stream_codegen": ("tests/codegen/cpu_inlining.cpp", ["-O3"], "codegen:check_stream_stores.cmake", 300),
    # compiled by nvcc (ctest codegen.cpu_dispatch_inlined)
    "dispatch_codegen_cu": ("tests/codegen/cpu_dispatch.cu", [], "nvcc-codegen:check_dispatch.cmake", 300),
}

# (id, file under include/fusekit, the text, its replacement, tests)
MUTANTS = [
    # A dropped barrier in each body the GPU runs: the threaded team's turns catch it.
    ("team-tree-columns-unsynced", "detail/reduce/tree.hpp",
     "    team.template column_reduce<tree_per_lane>(lane, count, value, op, access);\n  }\n  team.sync();\n",
     "    team.template column_reduce<tree_per_lane>(lane, count, value, op, access);\n  }\n", ["team"]),
    ("team-tree-pairs-unsynced", "detail/reduce/tree.hpp",
     "team.combine_pairs(lane, pairs > 0 ? pairs : 0, s, op);\n    team.sync();", "team.combine_pairs(lane, pairs > 0 ? pairs : 0, s, op);",
     ["team"]),
    ("team-tree-result-unsynced", "detail/reduce/tree.hpp", "  Acc const total = lane[0];\n  team.sync();",
     "  Acc const total = lane[0];", ["team"]),
    ("team-power-normalize-unsynced", "detail/train/power_iteration.hpp", "v[i] = u[i] * inv; });\n    team.sync();",
     "v[i] = u[i] * inv; });", ["team"]),
    ("team-descent-begin-unsynced", "detail/train/descent.hpp", "    point[i] = v;\n  });\n  team.sync();",
     "    point[i] = v;\n  });", ["team"]),
    ("team-descent-step-unsynced", "detail/train/descent.hpp", "  finish_if_stopped(team, s, L, w, stop);\n  team.sync();",
     "  finish_if_stopped(team, s, L, w, stop);", ["team"]),
    ("team-cg-direction-unsynced", "detail/train/conjugate_gradient.hpp",
     "  s.started = true;\n  finish_if_stopped(team, s, L, w, stop);\n  team.sync();",
     "  s.started = true;\n  finish_if_stopped(team, s, L, w, stop);", ["team"]),
    # The Cholesky preconditioner's bodies (the factor once, the solve in each CG
    # update) and the best-iterate rule's bookkeeping.
    ("team-best-track-unsynced", "detail/train/output_bodies.hpp",
     "    team.sync();\n    if (better && team.leader()) { best_g2[n] = g2; }",
     "    if (better && team.leader()) { best_g2[n] = g2; }", ["team"]),
    ("team-cholesky-fill-unsynced", "detail/train/cholesky.hpp",
     "scaled(e / L, e % L); });\n    }\n    team.sync();", "scaled(e / L, e % L); });\n    }", ["team"]),
    ("team-cholesky-column-unsynced", "detail/train/cholesky.hpp",
     "      gi[j] = v / pivot;\n    });\n    team.sync();", "      gi[j] = v / pivot;\n    });", ["team"]),
    ("team-cholesky-solve-start-unsynced", "detail/train/cholesky.hpp",
     "t[i] = s[i] * static_cast<double>(r[i]); });\n  team.sync();", "t[i] = s[i] * static_cast<double>(r[i]); });",
     ["team"]),
    ("team-cholesky-forward-unsynced", "detail/train/cholesky.hpp",
     "        t[i] -= G[i * L + j] * u;\n      });\n      team.sync();", "        t[i] -= G[i * L + j] * u;\n      });",
     ["team"]),
    ("team-cholesky-middle-unsynced", "detail/train/cholesky.hpp",
     "t[i] = as_c(t[i] / G[i * L + i]); });  // t = u\n  team.sync();",
     "t[i] = as_c(t[i] / G[i * L + i]); });  // t = u", ["team"]),
    ("team-cholesky-backward-unsynced", "detail/train/cholesky.hpp",
     "t[k] = as_c(t[k] - g[k] * v); });\n    team.sync();", "t[k] = as_c(t[k] - g[k] * v); });", ["team"]),
    # The serial team's own orders (several chains side by side, each in the
    # generic order): the threaded team, which takes the generic loops, and
    # the serial sums' order test catch a chain taken out of order.
    ("serial-cholesky-forward-block-reversed", "detail/train/cholesky.hpp",
     "for (std::int64_t j = j0; j < j1; ++j) { v -= g[j] * u[j - j0]; }",
     "for (std::int64_t j = j1 - 1; j >= j0; --j) { v -= g[j] * u[j - j0]; }", ["team"]),
    ("serial-cholesky-backward-rows-swapped", "detail/train/cholesky.hpp",
     "t[k] = as_c(as_c(as_c(as_c(t[k] - g0[k] * v[0]) - g1[k] * v[1]) - g2[k] * v[2]) - g3[k] * v[3]);",
     "t[k] = as_c(as_c(as_c(as_c(t[k] - g1[k] * v[1]) - g0[k] * v[0]) - g2[k] * v[2]) - g3[k] * v[3]);", ["team"]),
    ("serial-cholesky-factor-row-mixed", "detail/train/cholesky.hpp", "v3 -= g3[k] * gj[k];", "v3 -= g2[k] * gj[k];",
     ["team"]),
    ("serial-column-sums-rows-swapped", "detail/team/cpu_team.hpp",
     "out[l] = (((out[l] + value(r, l)) + value(r + 1, l)) + value(r + 2, l)) + value(r + 3, l);",
     "out[l] = (((out[l] + value(r + 1, l)) + value(r, l)) + value(r + 2, l)) + value(r + 3, l);", ["team"]),
    ("non-finite-bit-short-carry", "detail/train/checks.hpp", "+ 0x0010000000000000ull) >>",
     "+ 0x0008000000000000ull) >>", ["train"]),
    # the sums per segment and per row (detail/reduce/cpu_segmented.hpp, segments.hpp)
    ("segmented-short-pairs-unbounded", "detail/reduce/cpu_segmented.hpp",
     "std::int64_t const pairs = n - s < s ? n - s : s;", "std::int64_t const pairs = s;", ["segmented_cpu"]),
    ("segmented-short-rows-partner", "detail/reduce/cpu_segmented.hpp",
     "lane[l][b] = plus{}(lane[l][b], lane[l + s][b]);", "lane[l][b] = plus{}(lane[l][b], lane[l + s - 1][b]);",
     ["segmented_cpu"]),
    ("segmented-short-keeps-minus-zero", "detail/reduce/cpu_segmented.hpp",
     "    return plus{}(Acc(0), cpu_short_tree_sum<Acc>(src, n));", "    return cpu_short_tree_sum<Acc>(src, n);",
     ["segmented_cpu"]),
    ("segmented-long-skipped", "detail/reduce/cpu_segmented.hpp", "if (n >= long_from) { out[s]",
     "if (n > 2 * long_from) { out[s]", ["segmented_cpu"]),
    ("segmented-offsets-decreasing-taken", "detail/reduce/segments.hpp", "at(s) >= at(s - 1)", "true",
     ["segmented_cpu"]),
    ("segmented-out-size-unchecked", "detail/reduce/segments.hpp",
     "static_cast<std::int64_t>(out.size()) == count", "static_cast<std::int64_t>(out.size()) >= count",
     ["segmented_cpu"]),
    # Not planted, as dropping them changes nothing the current callers can see:
    # the barrier that ends cgls_rows (the kernel's end orders what follows) and
    # the one that ends cg_step (cg_direction first sums each member's own
    # entries, and the Cholesky solve first scales them, before a barrier).
    ("tree-row-load-shifted", "detail/team/cpu_columns.hpp",
     "std::memcpy(&v, access.values(r * c0 + l), sizeof v);", "std::memcpy(&v, access.values(r * c0 + l + 1), sizeof v);",
     ["pinned_native_fastmath"]),
    ("tree-widened-load-wrong-row", "detail/team/cpu_columns.hpp",
     "load_widened<Bytes, Acc>(v, access.values(r * c0 + l));", "load_widened<Bytes, Acc>(v, access.values(l));",
     ["pinned_native_fastmath"]),
    ("transform-stream-head-skipped", "detail/elementwise/cpu.hpp", "          loop(i, first_line);\n", "\n",
     ["elementwise_cpu"]),
    ("transform-stream-block-short", "detail/elementwise/cpu.hpp",
     "stream_store_lines(out + i, staged, static_cast<std::int64_t>(sizeof staged));",
     "stream_store_lines(out + i, staged, static_cast<std::int64_t>(sizeof staged) - 16);", ["elementwise_cpu"]),
    ("transform-stream-threshold-off-by-one", "detail/elementwise/cpu.hpp",
     "n >= cpu_stream_tuning::stream_stores_from_bytes", "n > cpu_stream_tuning::stream_stores_from_bytes",
     ["elementwise_cpu"]),
    ("transform-stream-fence-dropped", "detail/elementwise/cpu.hpp", "          stream_fence();\n", "\n",
     ["stream_codegen"]),
    ("transform-stream-stores-plain", "detail/core/stream_store.hpp", "#define FUSEKIT_STREAM_STORES 1",
     "#define FUSEKIT_STREAM_STORES 0", ["stream_codegen"]),
    ("dispatch-not-flattened", "detail/core/cpu_parallel.hpp",
     "FUSEKIT_TARGET_AVX2 __attribute__((flatten)) auto call_avx2(const F& f) {",
     "FUSEKIT_TARGET_AVX2 auto call_avx2(const F& f) {", ["dispatch_codegen_cu"]),
    ("tree-row-zero-added-to-stale-lanes", "detail/team/cpu_columns.hpp", "    if (r > 0) {\n",
     "    if (r >= 0) {\n", ["pinned_native_fastmath"]),
    ("tree-far-prefetch-dropped", "detail/team/cpu_columns.hpp",
     "          access.prefetch_far(r * c0 + l + far, group * W);\n", "\n", ["host_tree_codegen"]),
    ("tree-near-prefetch-dropped", "detail/team/cpu_columns.hpp",
     "          access.prefetch(r * c0 + l + ahead, group * W);\n", "\n", ["host_tree_codegen"]),
    ("tree-widened-in-two-halves", "detail/team/cpu_columns.hpp",
     "if constexpr (Bytes == 32 && std::is_same_v<T, float> && std::is_same_v<Acc, double>) {", "if constexpr (false) {",
     ["host_tree_codegen"]),
    ("tree-far-prefetch-into-l1", "detail/reduce/source.hpp", "source_prefetch<prefetch_to::l2>(src, base + i, count);",
     "source_prefetch<prefetch_to::l1>(src, base + i, count);", ["host_tree_codegen"]),
    ("exact-sum-bias-dropped", "detail/reduce/cpu_exact_tiles.hpp", "              w ^= bias;\n", "\n",
     ["pinned_native_fastmath", "reduce_cpu"]),
    ("exact-sum-high-half-misplaced", "detail/reduce/cpu_exact_tiles.hpp", "total += bits == 32 ? (h << 16) + l : h + l;",
     "total += bits == 32 ? (h << 16) + l : (h << 8) + l;", ["reduce_cpu"]),
    ("exact-sum-tail-dropped", "detail/reduce/cpu_exact_tiles.hpp", "  for (std::int64_t i = body; i < count; ++i) {",
     "  for (std::int64_t i = body; i < count - 1; ++i) {", ["pinned_native_fastmath"]),
    ("exact-sum-wide-lanes-skip-a-vector", "detail/reduce/cpu_exact_tiles.hpp", "            acc += v;\n", "            acc += v * (k > 0);\n",
     ["pinned_native_fastmath"]),
    ("enum-name-past-the-end", "detail/base/enum_name.hpp", "i >= 0 && i < static_cast<long long>(M)",
     "i >= 0 && i <= static_cast<long long>(M)", ["names"]),
    ("refine-not-stalled", "detail/train/refinement.hpp",
     "return fit.status == fit_status::converged || fit.status == fit_status::stalled;",
     "return fit.status == fit_status::converged;", ["train"]),
    ("refine-skips-add", "detail/train/refinement.hpp", "  for (std::int64_t l = 0; l < L; ++l) { w[l] = w[l] + d[l]; }\n",
     "\n", ["train"]),
    ("refine-residual-from-zero", "detail/train/cpu_refinement.hpp",
     "? static_cast<C>(Y(k + i, n)) - s[i * residual_lanes + n - n0]", "? static_cast<C>(Y(k + i, n))", ["train"]),
    # the CPU trainer's vector kernels: Gram tiles, the refinement's residual, the best-iterate
    # rule's residuals of many candidates in one pass, the prepared copy's powers of two
    ("gram-mixed-tile-from-the-diagonal", "detail/train/cpu_system.hpp",
     "std::int64_t const from = r0 + R <= L ? r0 : 0;", "std::int64_t const from = r0 < L ? r0 : 0;", ["train"]),
    ("gram-four-columns-twice", "detail/train/cpu_system.hpp", "      j += 4;\n", "\n", ["train"]),
    ("residual-second-row-is-the-first", "detail/train/cpu_refinement.hpp",
     "const T* const xz = rows > 1 ? xk + L : xk;", "const T* const xz = xk;", ["train"]),
    ("residual-terms-skip-rows", "detail/train/cpu_best_iterate.hpp",
     "for (; k + 2 <= K; k += 2) { rows_from(k, std::integral_constant<int, 2>{}); }",
     "for (; k + 2 <= K; k += 3) { rows_from(k, std::integral_constant<int, 2>{}); }", ["train"]),
    ("ldexp-subnormal-shifted-short", "detail/base/exact_bits.hpp",
     "below = (fraction << (52 - p)) & ((1ull << 52) - 1);", "below = (fraction << (51 - p)) & ((1ull << 52) - 1);",
     ["train"]),
    ("refine-no-budget-cap", "detail/train/refinement.hpp",
     "plan.budget = used < 0 ? 0 : (half < left ? half : left);", "plan.budget = used < 0 ? 0 : max_iterations;",
     ["train"]),
    ("refine-steps-unchecked", "detail/train/checks.hpp",
     "o.refinement_steps >= 0 && o.refinement_steps <= gd_options::max_refinement_steps", "true", ["advtrain"]),
    ("cg-beta-zero", "detail/train/conjugate_gradient.hpp", "T const beta = s.started ? gamma / s.gamma : T(0);",
     "T const beta = T(0);", ["train"]),
    ("cg-no-confirmation", "detail/train/conjugate_gradient.hpp",
     "if (stop.is(fit_status::converged) && !true_residual) {", "if (false) {", ["descent", "train"]),
    ("cg-no-restart", "detail/train/conjugate_gradient.hpp", "    s.started = false;\n", "\n", ["descent", "train"]),
    ("cg-short-step", "detail/train/conjugate_gradient.hpp", "T const alpha = s.gamma / curvature;",
     "T const alpha = T(0.9) * s.gamma / curvature;", ["train"]),
    ("cgls-half-step", "detail/train/conjugate_gradient.hpp", "T const alpha = s.gamma / q2;",
     "T const alpha = s.gamma / (q2 + q2);", ["train"]),
    ("cg-unpreconditioned-direction", "detail/train/conjugate_gradient.hpp", "d[i] = scaling(i) * r[i] + beta * d[i];",
     "d[i] = r[i] + beta * d[i];", ["train"]),
    ("jacobi-zero-column", "detail/train/descent_state.hpp", "return diagonal > T(0) ? T(1) / diagonal : T(0);",
     "return T(1) / diagonal;", ["train"]),
    ("jacobi-ignored", "detail/train/descent_state.hpp", "return active ? inverse(i) : T(1);", "return T(1);", ["train"]),
    ("jacobi-plain-step", "detail/train/descent.hpp", "w[i] = point[i] - lr * (scaling(i) * grad(i));",
     "w[i] = point[i] - lr * grad(i);", ["train"]),
    ("relative-rule-loose", "detail/train/descent.hpp",
     "static_cast<double>(gd2) <= p.relative_tolerance2 * s.terms.rhs_norm2",
     "static_cast<double>(gd2) <= 10 * p.relative_tolerance2 * s.terms.rhs_norm2", ["train", "descent"]),
    ("floor-without-operator-norm", "detail/train/descent.hpp",
     "(s.terms.operator_norm * ::sqrt(v2) + s.terms.rhs_scale)", "(s.terms.rhs_scale)", ["descent", "train"]),
    ("warm-start-check-on-zeros", "detail/train/checks.hpp", "if (o.init == gd_init::warm_start) {",
     "if (o.init == gd_init::zeros) {", ["advtrain"]),
    ("count-wraps", "detail/core/checks.hpp", "__builtin_mul_overflow(rows, columns, &count) ||",
     "((count = static_cast<std::int64_t>(static_cast<std::uint64_t>(rows) * static_cast<std::uint64_t>(columns))), false) ||",
     ["advtrain"]),
    ("empty-container-data", "detail/core/ranges.hpp", "P const p = n == 0 ? P{} : raw_pointer(r.data());",
     "P const p = raw_pointer(r.data());", ["containers_ubsan"]),
    ("min-nan-first-only", "detail/base/extremum.hpp", "if (nan_x || nan_y) {", "if (nan_x) {", ["reduce_op"]),
    ("min-on-values-ties-first", "detail/base/extremum.hpp", "return (larger ? kx < ky : ky < kx) ? y : x;",
     "return (larger ? x < y : y < x) ? y : x;", ["reduce_op"]),
    ("vector-min-nan-first-only", "detail/team/cpu_simd.hpp", "lanes const either_nan = nan_x | nan_y;",
     "lanes const either_nan = nan_x;", ["reduce_op"]),
    ("vector-min-pick-swapped", "detail/team/cpu_simd.hpp", "lanes const r = (take_y & y) | (~take_y & x);",
     "lanes const r = (take_y & x) | (~take_y & y);", ["reduce_op"]),
    ("block-atomic-from-zero", "detail/reduce/cpu.hpp", "for (auto& v : lane) { v = atomic_op<Op, Acc>::identity(); }",
     "for (auto& v : lane) { v = Acc(0); }", ["reduce_op"]),
    ("sum-loop-without-barrier", "detail/team/cpu_simd.hpp", "      vector_barrier(acc);\n      vector_barrier(b);\n",
     "\n", ["pinned_native_fastmath"]),
    ("op-may-throw", "detail/core/cpu_parallel.hpp", "return nothrow_op<Op>{op};", "return op;", ["advreduce"]),
    ("tanh-float-division-under-fast-math", "detail/elementwise/tanh.hpp",
     "float const large = one - one * static_cast<float>(2.0 / (static_cast<double>(e) + 1.0));",
     "float const large = one - one * (2.0f / (e + 1.0f));", ["tanh_fastmath"]),
    ("tanh-k-in-float-under-fast-math", "detail/elementwise/tanh.hpp",
     "float const k = static_cast<float>(static_cast<std::int32_t>(v_bits - 0x4b40007fu));",
     "float const k = v - 12583039.0f;", ["tanh_fastmath"]),
    ("tanh-branch-at-half", "detail/elementwise/tanh.hpp",
     "static_cast<std::uint32_t>(key > 0x3fa66664);", "static_cast<std::uint32_t>(key > 0x3f7fffff);", ["tanh"]),
    ("tanh-nan-takes-large", "detail/elementwise/tanh.hpp",
     "static_cast<std::int32_t>(abs_bits + 0x007fffffu);", "static_cast<std::int32_t>(abs_bits) + 0x007fffff;",
     ["tanh"]),
    ("tanh-small-drops-sign", "detail/elementwise/tanh.hpp",
     "bit_cast<std::uint32_t>(f + f * (z * q)) | sign;", "bit_cast<std::uint32_t>(f + f * (z * q));", ["tanh"]),
    # The activations computed in double (activations.hpp), against their bounds.
    ("exp-ln2-low-part-dropped", "detail/elementwise/activations.hpp",
     "  r = fma_rn(-k, 1.90821492927058770002e-10, r) + tail;", "  r = r + tail;", ["activations"]),
    ("exp-argument-unclamped", "detail/elementwise/activations.hpp", "  a = at_least(a, -760.0);", "",
     ["activations"]),
    ("silu-minus-inf-times-zero", "detail/elementwise/activations.hpp",
     "scale_down(at_least(x, -1000.0) * s)", "scale_down(x * s)", ["activations"]),
    ("gelu-erf-square-low-part-dropped", "detail/elementwise/activations.hpp",
     "exp_scaled(-half_a2.hi, -half_a2.lo)", "exp_scaled(-half_a2.hi)", ["activations"]),
    ("two-sum-regrouped-under-fast-math", "detail/elementwise/activations.hpp",
     "return {s, keep(keep(a - keep(s - bb)) + keep(b - bb))};", "return {s, (a - (s - bb)) + (b - bb)};",
     ["activations_fastmath"]),
    ("cgls-rows-read-with-stride-n", "detail/train/output_bodies.hpp",
     "point + n * L, [&](std::int64_t k) { return Q[n * K + k]; },",
     "point + n * L, [&](std::int64_t k) { return Q[k * N + n]; },", ["team"]),
    # CGLS across GPUs (fusekit::nccl): the sums over the rows that every rank adds.
    ("ranks-cgls-curvature-local", "detail/train/conjugate_gradient.hpp", "      q2 = *sum.total;",
     "      q2 = cgls_square_sum<T>(team, K, q);", ["team"]),
    ("ranks-start-targets-local", "detail/train/output_bodies.hpp",
     "y2_total != nullptr ? y2_total[n] : target_square_sum", "false ? y2_total[n] : target_square_sum", ["team"]),
    ("ranks-square-sum-reads-other-output", "detail/train/output_bodies.hpp",
     "cgls_square_sum<T>(team, K, [&](std::int64_t k) { return Q[n * K + k]; })",
     "cgls_square_sum<T>(team, K, [&](std::int64_t k) { return Q[k]; })", ["team"]),
    ("team-predict-tile-unsynced", "detail/train/predict.hpp",
     "  team.for_each(rows * L, [&](std::int64_t i) { x_tile[i / L * stride + i % L] = x[i]; });\n  team.sync();\n",
     "  team.for_each(rows * L, [&](std::int64_t i) { x_tile[i / L * stride + i % L] = x[i]; });\n", ["team"]),
    # normalize's division by its reciprocal on the GPU (one product, two FMAs).
    ("divisor-no-correction", "detail/elementwise/divisor.hpp", "return fma_rn(r, z_, q);", "return q;", ["divisor"]),
    ("divisor-x-range-ignored", "detail/elementwise/divisor.hpp",
     "(from_x > 0x1p-125f ? from_x : 0x1p-125f)", "0x1p-125f", ["divisor"]),
    ("divisor-overflow-taken", "detail/elementwise/divisor.hpp", "a <= 0x1p126f", "a <= 0x1p128f", ["divisor"]),
    ("divisor-bad-reciprocal-taken", "detail/elementwise/divisor.hpp",
     "q_min_ = !normal ? INFINITY :", "q_min_ = !normal ? 0.0f :", ["divisor"]),
    ("transform-block-skips-last", "detail/elementwise/cpu.hpp",
     "loop(i, i + block);", "loop(i, i + block - 1);", ["elementwise_cpu"]),
    ("transform-stream-tail-dropped", "detail/elementwise/cpu.hpp", "      loop(i, end);\n", "\n", ["elementwise_cpu"]),
    ("mpi-keys-not-compared", "detail/distributed/agreement.hpp", "if (theirs[i] == all[i]) { continue; }",
     "if (theirs[i] == all[i] || i > 2) { continue; }", ["agreement", "mpi"]),
    ("mpi-tolerance-not-in-key", "detail/distributed/agreement.hpp",
     '  f("tolerance", o.tolerance.has_value() ? *o.tolerance : -1.0);\n', "", ["agreement", "mpi"]),
    ("mpi-relative-tolerance-not-in-key", "detail/distributed/agreement.hpp",
     '  f("relative_tolerance", o.relative_tolerance);\n', "", ["agreement", "mpi"]),
    ("mpi-warm-start-not-in-key", "detail/distributed/agreement.hpp",
     '    key.add("W (the warm start)", warm_start_hash);\n', "", ["agreement", "mpi"]),
    ("mpi-offset-below-minus-one", "detail/distributed/tree.hpp", "FUSEKIT_EXPECTS(offset >= -1,",
     "FUSEKIT_EXPECTS(offset >= -1000,", ["mpi"]),
    ("mpi-null-communicator", "detail/distributed/mpi_collectives.hpp", "FUSEKIT_EXPECTS(comm != MPI_COMM_NULL,", "FUSEKIT_EXPECTS(true,", ["mpi"]),
    ("mpi-callback-throw-not-shared", "detail/distributed/agreement.hpp", "    if (first != all.end()) {", "    if (false) {",
     ["agreement", "mpi"]),
    ("mpi-cgls-residual-not-summed", "detail/train/cpu_iterations.hpp", "  sum(o.previous.data(), L);\n", "\n", ["mpi"]),
    ("mpi-cgls-curvature-not-summed", "detail/train/conjugate_gradient.hpp", "      sum(&q2, 1);\n", "\n", ["mpi"]),
    ("mpi-rank-zero-twice", "detail/distributed/mpi_collectives.hpp", "for (int r = 1; r < ranks; ++r) { s = s + at(r, i); }",
     "for (int r = 0; r < ranks; ++r) { s = s + at(r, i); }", ["mpi"]),
    ("mpi-power-iteration-local", "detail/distributed/mpi.hpp",
     "[&](auto* values, std::int64_t count) { ordered_allreduce_sum(comm, values, count); }",
     "[&](auto*, std::int64_t) {}", ["mpi"]),
    ("nan-in-mpi-fold-dropped", "detail/distributed/agreement.hpp", "    result = op(result, part);",
     "    if (part == part) { result = op(result, part); }", ["mpi"]),
    ("mpi-engine-skips-a-rank", "detail/distributed/agreement.hpp", "for (std::size_t r = 0; r + 1 < all.size(); r += 2) {",
     "for (std::size_t r = 0; r + 3 < all.size(); r += 2) {", ["agreement", "mpi"]),
    ("route-ignores-outputs", "detail/host_data/router.hpp", "if (!outs_on_device || any_on_host(ins)) {",
     "if (any_on_host(ins)) {", ["walk"]),
    ("route-ignores-inputs", "detail/host_data/router.hpp", "if (!outs_on_device || any_on_host(ins)) {",
     "if (!outs_on_device) {", ["walk"]),
    # The messages and the progress a user reads (first-hour issue).
    ("finite-position-row-col-swapped", "detail/train/checks.hpp",
     "std::to_string(first.index / cols) + \", \" + std::to_string(first.index % cols)",
     "std::to_string(first.index % cols) + \", \" + std::to_string(first.index / cols)", ["train"]),
    ("progress-running-counted-as-ended", "train_types.hpp", "  if (still_running) {\n",
     "  if (!still_running) {\n", ["train"]),
    ("refinement-progress-restarts", "detail/train/refinement.hpp",
     "seen.iteration = before.iteration + now.iteration;", "seen.iteration = now.iteration;", ["train"]),
    ("report-method-not-recorded", "train.hpp", "    report.method = options.method;\n", "\n", ["train"]),
    ("model-columns-unchecked", "linear_association.hpp",
     '    expect_columns("fit", "X", X.extent(1), "inputs", "L", inputs_);\n', "\n", ["model"]),
    ("thread-count-unclamped", "detail/core/cpu_parallel.hpp",
     "if (threads <= cpu_thread_limit_per_processor) { return threads; }",
     "if (threads >= 1) { return threads; }", ["advreduce", "pool"]),
    # the CPU pool (detail/core/cpu_pool.hpp): its contract, from tests/core/cpu_pool_test.cpp
    ("pool-held-helpers-claim", "detail/core/cpu_pool.hpp",
     "if (helper >= 0 && held_.load(std::memory_order_relaxed)) { return -1; }", "", ["pool"]),
    ("pool-split-drops-remainder", "detail/core/cpu_pool.hpp",
     "return share * c + (c < extra ? c : extra);", "return share * c;", ["pool"]),
    ("pool-caller-skips-chunks", "detail/core/cpu_pool.hpp",
     "for (std::int64_t c; (c = claim(-1)) >= 0; ++mine) { fn(context, c); }",
     "for (std::int64_t c; (c = claim(-1)) >= 1; ++mine) { fn(context, c); }", ["pool"]),
    ("pool-oversized-job-cut", "detail/core/cpu_pool.hpp",
     "if (chunks <= 1 || chunks > cpu_max_chunks || helpers <= 0 ||",
     "if (chunks <= 1 || helpers <= 0 ||", ["pool"]),
    ("pool-default-count-ignored", "detail/core/cpu_parallel.hpp",
     "threads = set > 0 ? set : cpu_environment_threads();", "threads = cpu_environment_threads();", ["pool"]),
    ("reduce-range-first-twice", "detail/reduce/cpu.hpp", "for (std::int64_t i = first + 1; i < last; ++i) { a = op(a, src(i)); }",
     "for (std::int64_t i = first; i < last; ++i) { a = op(a, src(i)); }", ["containers_ubsan"]),
    # the blind spots a fresh planted set found (tests written from the contract)
    ("owner-of-closed-end", "detail/distributed/tree.hpp",
     "layout[r].offset <= i && i < layout[r].offset + layout[r].size", "layout[r].offset <= i && i <= layout[r].offset + layout[r].size",
     ["tree"]),
    ("rows-in-all-ignores-n", "detail/distributed/tree.hpp", "FUSEKIT_EXPECTS(L == shapes[1] && N == shapes[2],",
     "FUSEKIT_EXPECTS(L == shapes[1],", ["tree"]),
    ("element-bytes-unchecked", "detail/core/checks.hpp",
     " ||\n                     __builtin_mul_overflow(count, static_cast<std::int64_t>(bytes), &total);", ";",
     ["advtrain"]),
    ("float-finite-by-last-weight", "detail/train/prepare.hpp",
     "finite = finite && is_finite(W(n, l));", "finite = is_finite(W(n, l));", ["advtrain"]),
    ("relative-rule-in-plain-norm", "detail/train/descent.hpp", "      return scaling.inverse(i) * g * g;",
     "      return g * g;", ["kinds"]),
    ("metric-inverse-other-coordinate", "detail/train/conjugate_gradient.hpp",
     "return scaling.inverse(i) * r[i] * r[i]; });", "return scaling.inverse(L - 1 - i) * r[i] * r[i]; });", ["kinds"]),
    ("floor-in-plain-norm", "detail/train/descent.hpp", "return static_cast<double>(scaling.d(i)) * v * v;",
     "return v * v;", ["kinds"]),
    ("direct-jacobi-scale-without-sqrt", "detail/train/cpu_system.hpp",
     "scale.push_back(std::sqrt(static_cast<double>(jacobi_entry(d))));",
     "scale.push_back(static_cast<double>(jacobi_entry(d)));", ["advtrain"]),
    ("mpi-highest-failing-rank", "detail/distributed/agreement.hpp",
     "    if (theirs[0] == 0) { continue; }", "    if (theirs[0] == 0 || r + 1 < ranks) { continue; }", ["agreement", "mpi"]),
    # the trainer on every kind of data (ridge, intercept, weights, Cholesky, best iterate, extreme units)
    ("best-iterate-never-restored", "detail/train/cpu_best_iterate.hpp",
     "if (pick >= 0 && pick != 1) { std::copy(choice[pick], choice[pick] + L, w); }", "(void)pick;", ["kinds"]),
    ("ridge-rows-left-out", "detail/train/prepare.hpp",
     "std::int64_t const extra = has_ridge(o) && ridge_rows ? L : 0;", "std::int64_t const extra = 0;", ["kinds"]),
    ("means-unweighted", "detail/train/prepare.hpp",
     "for (std::int64_t l = 0; l < L; ++l) { sums[l] += s[k] * x(k, l); }",
     "for (std::int64_t l = 0; l < L; ++l) { sums[l] += x(k, l); }", ["kinds"]),
    ("weights-not-square-rooted", "detail/train/prepare.hpp", "double const r = std::sqrt(s[k]);",
     "double const r = s[k];", ["kinds"]),
    ("extreme-exponent-sign", "detail/train/prepare.hpp", "e[l] = own ? -lead[l] : lead[l] == INT_MIN ? 0 : common;",
     "e[l] = own ? lead[l] : lead[l] == INT_MIN ? 0 : common;", ["kinds"]),
    ("relative-tolerance-floor-unchecked", "detail/train/checks.hpp",
     "(!relative || o.relative_tolerance >= gd_options::min_relative_tolerance)", "true", ["kinds"]),
    ("absolute-rule-on-beside-relative", "detail/train/descent_state.hpp",
     "return o.relative_tolerance > 0 ? 0.0 : gd_options::default_tolerance;",
     "return gd_options::default_tolerance;", ["kinds"]),
    ("never-leaves-gram", "detail/train/cpu_system.hpp",
     "return cholesky && (factor.shift != 0 || factor.smallest_pivot < gram_pivot_limit) &&",
     "return cholesky && factor.shift != 0 &&", ["kinds"]),
    ("cholesky-unscaled-result", "detail/train/cholesky.hpp",
     "z[i] = static_cast<C>(s[i] * as_c(t[i] / G[i * L + i]));", "z[i] = static_cast<C>(as_c(t[i] / G[i * L + i]));",
     ["kinds"]),
    ("floor-growth-ignored", "detail/train/descent.hpp", "  if (worse_past_floor) {", "  if (false) {",
     ["kinds"]),
    ("reduce-container-drops-init", "reduce_api.hpp",
     "reduce(policy, detail::const_view_of(in), out, op, init, algorithm);",
     "reduce(policy, detail::const_view_of(in), out, op, Acc{}, algorithm);", ["containers_ubsan"]),
    # the GPU's range kernel and predict's intercept, through their bodies on the CPU
    ("range-slice-decoded-as-column-block", "detail/train/column_ranges.hpp",
     "std::int64_t const slice = block / column_blocks;", "std::int64_t const slice = block % column_blocks;",
     ["kinds"]),
    ("range-of-minus-x-is-x", "detail/train/column_ranges.hpp",
     "if (c < 2 * L) { return range_of::minus_x(X[k * L + c - L]); }",
     "if (c < 2 * L) { return range_of::x(X[k * L + c - L]); }", ["kinds"]),
    ("cpu-range-of-minus-x-is-x", "detail/train/column_ranges.hpp",
     "      take(L + l, range_of::minus_x(X(k, l)));", "      take(L + l, range_of::x(X(k, l)));", ["kinds"]),
    ("range-slices-of-any-size", "detail/train/column_ranges.hpp",
     "return std::max<std::int64_t>((K + most_slices - 1) / most_slices, 64);",
     "return (K + most_slices - 1) / most_slices;", ["kinds"]),
    ("tile-intercept-of-the-row", "detail/train/predict.hpp",
     "y[e] = plus_intercept(dot_in_order(x_tile + e / N * stride, W + e % N * L, L), b, e % N);",
     "y[e] = plus_intercept(dot_in_order(x_tile + e / N * stride, W + e % N * L, L), b, e / N % N);", ["team"]),
]

# The second set: one-line bugs written from the public headers' contract
# (train_types.hpp, train.hpp, linear_association.hpp, reduce_api.hpp: what each
# name, bound and status promises), not from the tests; each against every
# CPU test of the trainer. `--set contract`. (A zero column's Jacobi entry of
# 1 instead of 0 was dropped: its gradient is 0, so no output can show it.)
# Every CPU test of the trainer: a contract mutant runs them all (until one fails).
CPU_TRAINER = ["train", "advtrain", "descent", "kinds", "model", "property", "names"]

CONTRACT_MUTANTS = [
    ("all-converged-ignores-stalled", "train_types.hpp", "if (o.status != fit_status::converged) { return false; }",
     "if (o.status == fit_status::max_iterations) { return false; }", CPU_TRAINER),
    ("most-iterations-is-the-last", "train_types.hpp", "m = o.iterations > m ? o.iterations : m;",
     "m = o.iterations;", CPU_TRAINER),
    ("predict-sums-backwards", "detail/train/predict.hpp",
     "for (std::int64_t l = 0; l < L; ++l) { s = s + x[l] * w[l]; }",
     "for (std::int64_t l = L - 1; l >= 0; --l) { s = s + x[l] * w[l]; }", CPU_TRAINER),
    ("divergence-at-1e13", "detail/train/descent_state.hpp", "divergence_growth = 1e12;",
     "divergence_growth = 1e13;", CPU_TRAINER),
    ("stall-progress-one-percent", "detail/train/descent_state.hpp", "stall_progress = 1e-3;",
     "stall_progress = 1e-2;", CPU_TRAINER),
    ("recommended-rtol-1e-12", "train_types.hpp", "o.relative_tolerance = 1e-13;", "o.relative_tolerance = 1e-12;", CPU_TRAINER),
    ("negative-weights-accepted", "detail/train/prepare.hpp", "FUSEKIT_EXPECTS(!exact_bits(e.sample_weight[k]).negative,",
     "FUSEKIT_EXPECTS(e.sample_weight[k] > T(-1),", CPU_TRAINER),
    ("uniform-start-ignores-seed", "detail/train/descent.hpp",
     "uniform01<T>(static_cast<std::uint64_t>(n * L + l), seed)", "uniform01<T>(static_cast<std::uint64_t>(n * L + l), 0)", CPU_TRAINER),
    ("warm-start-ignored", "detail/train/descent.hpp", "  return current;\n", "  return T(0);\n", CPU_TRAINER),
    ("one-iteration-past-the-budget", "detail/train/descent.hpp", "if (done >= p.max_iterations) {",
     "if (done > p.max_iterations) {", CPU_TRAINER),
    ("cholesky-only-up-to-16", "detail/train/cholesky.hpp", "cholesky_max_columns = 2048;",
     "cholesky_max_columns = 16;", CPU_TRAINER),
    ("model-predict-without-intercepts", "linear_association.hpp",
     "fusekit::predict(policy, X, weights(), ::cuda::std::span<const T>(intercepts_), Y_hat);",
     "fusekit::predict(policy, X, weights(), Y_hat);", CPU_TRAINER),
    ("predict-columns-unchecked", "detail/train/checks.hpp", "FUSEKIT_EXPECTS(W.extent(1) == X.extent(1),",
     "FUSEKIT_EXPECTS(true,", CPU_TRAINER),
    ("ridge-is-lambda-squared", "detail/train/prepare.hpp", "  return {std::sqrt(m), t / 2};",
     "  return {m, t};", CPU_TRAINER),
    ("intercept-ignores-the-weights-means", "detail/train/prepare.hpp",
     "      b -= std::ldexp(static_cast<double>(view(n, l)), -d.x_pre[l]) * d.x_mean[l];\n", "", CPU_TRAINER),
    ("path-name-swapped", "train_types.hpp", '"nccl/single_launch", "nccl/cublas"}',
     '"nccl/cublas", "nccl/single_launch"}', CPU_TRAINER),
    ("refinement-takes-non-finite", "detail/train/refinement.hpp",
     "if (!is_finite(static_cast<T>(w[l] + d[l]))) { return false; }", "", CPU_TRAINER),
    ("progress-every-ignored", "detail/train/cpu_iterations.hpp",
     "std::int64_t const budget = o.progress ? o.progress_every : o.max_iterations;",
     "std::int64_t const budget = o.max_iterations;", CPU_TRAINER),
    ("converged-with-non-finite-weights", "detail/train/descent.hpp",
     "team.template sum<int>(L, [&](std::int64_t i) { return is_finite(w[i]) ? 0 : 1; }) != 0) {",
     "team.template sum<int>(L, [&](std::int64_t i) { return is_finite(w[i]) ? 0 : 1; }) > 1) {", CPU_TRAINER),
    ("automatic-picks-gram-at-k-equals-l", "detail/train/checks.hpp",
     "K > L ? gd_formulation::gram : gd_formulation::direct", "K >= L ? gd_formulation::gram : gd_formulation::direct", CPU_TRAINER),
    ("warm-start-not-checked-finite", "detail/train/checks.hpp", "  if (o.init == gd_init::warm_start) {",
     "  if (false) {", CPU_TRAINER),
]

# The third set: what makes a success status mean a right answer and keeps
# outputs apart (docs/trainer.md, "W on every status"; detail/core/checks.hpp,
# expect_apart), and the blind spots a fresh planted set found there: each
# breaks a documented promise. `--set false_success`.
FALSE_SUCCESS_MUTANTS = [
    ("weights-not-normalized", "detail/train/prepare.hpp",
     "s[k] = exact_bits(e.sample_weight[k]).scaled(-q);", "s[k] = exact_bits(e.sample_weight[k]).scaled(0);",
     CPU_TRAINER),
    ("negative-weight-by-comparison", "detail/train/prepare.hpp",
     "FUSEKIT_EXPECTS(!exact_bits(e.sample_weight[k]).negative,", "FUSEKIT_EXPECTS(e.sample_weight[k] >= T(0),",
     ["advtrain_fastmath"]),
    ("all-zero-weights-accepted", "detail/train/prepare.hpp", "FUSEKIT_EXPECTS(top > none / 2,",
     "FUSEKIT_EXPECTS(true,", CPU_TRAINER),
    ("no-common-exponent-without-preconditioner", "detail/train/prepare.hpp",
     "common = extreme(top) ? -top : 0;", "common = 0;", CPU_TRAINER),
    ("targets-never-rescaled", "detail/train/prepare.hpp", "f[n] = extreme ? -lead[n] : 0;", "f[n] = 0;",
     CPU_TRAINER),
    ("small-right-hand-sides-not-lifted", "detail/train/prepare.hpp",
     "if (b < -extreme_exponent) { f[n] += std::min(-b, 500 - y); }", "", CPU_TRAINER),
    ("no-pre-scaling-as-given", "detail/train/prepare.hpp",
     "pre[l] = extreme_units(largest) ? -std::ilogb(largest) : 0;", "pre[l] = 0;", CPU_TRAINER),
    ("non-finite-w-converged", "detail/train/prepare.hpp",
     "    if (!finite && out.status != fit_status::diverged) {", "    if (false) {", CPU_TRAINER),
    ("intercept-written-without-fit-intercept", "detail/train/prepare.hpp",
     "e.intercept[n] = fit_intercept ? round_to<T>(b) : T(0);", "e.intercept[n] = round_to<T>(b);", CPU_TRAINER),
    ("underflow-not-marked", "detail/train/prepare.hpp",
     "inline void mark_underflow(output_report& out) {\n  if (out.status == fit_status::converged) {",
     "inline void mark_underflow(output_report& out) {\n  if (false) {", CPU_TRAINER),
    ("ridge-root-ignores-the-weights", "detail/train/prepare.hpp", "  int t = b.exponent - q;",
     "  int t = b.exponent;", CPU_TRAINER),
    ("zero-design-needs-a-rate", "detail/train/prepare.hpp",
     "    if (d.zero_design && !o.learning_rate) { fit_options.learning_rate = 1.0; }", "", CPU_TRAINER),
    ("refinement-not-the-last-word", "detail/train/best_iterate.hpp",
     "return is_finite(refined2) && !(refined2 * residual_band<C>(K, L) > before2 + refined_rounding + before_rounding);",
     "return true;", CPU_TRAINER),
    ("outputs-may-overlap-each-other", "detail/core/checks.hpp",
     "    for (auto other = outputs.begin(); other != out; ++other) { expect_disjoint(function, *out, *other); }\n",
     "", CPU_TRAINER),
    ("predict-intercept-may-overlap", "train.hpp",
     "detail::as_matrix<T>(Y_hat), b);", "detail::as_matrix<T>(Y_hat), {});", CPU_TRAINER),
    ("empty-shard-rejects-weights", "detail/distributed/agreement.hpp",
     "inline bool weighted_fit(int mine, int any) { return mine < 0 ? any > 0 : mine > 0; }",
     "inline bool weighted_fit(int mine, int any) { return (void)any, mine > 0; }", ["agreement", "mpi"]),
    # the blind spots of issue 53's planted set, written again from the contract
    ("weights-alone-ignored", "detail/train/prepare.hpp",
     "return extreme || has_ridge(o) || o.fit_intercept || weighted;", "return extreme || has_ridge(o) || o.fit_intercept;",
     CPU_TRAINER),
    ("intercept-length-unchecked-without-fit-intercept", "detail/train/prepare.hpp",
     "FUSEKIT_EXPECTS(e.intercept.empty() || static_cast<std::int64_t>(e.intercept.size()) == N,",
     "FUSEKIT_EXPECTS(true,", CPU_TRAINER),
    ("cholesky-zero-column-needs-a-shift", "detail/train/cholesky.hpp",
     "if (i == j) { v = (s[i] > 0 ? v : 1.0) + out.shift; }", "if (i == j) { v = v + out.shift; }",
     CPU_TRAINER),
    ("cholesky-breakdown-only-at-zero", "detail/train/cholesky.hpp",
     "double const least = pivot_floor * static_cast<double>(L) * 0x1p-53;", "double const least = 0.0;",
     CPU_TRAINER),
    ("correction-gradient-unreported", "detail/train/refinement.hpp", "  fit.grad_norm2 = correction.grad_norm2;\n", "",
     CPU_TRAINER),
    ("refinement-budget-uncapped", "detail/train/refinement.hpp",
     "plan.budget = used < 0 ? 0 : (half < left ? half : left);", "plan.budget = used < 0 ? 0 : half;", CPU_TRAINER),
    ("single-launch-warm-start-from-row-0", "detail/train/output_bodies.hpp", "    w[i] = W[n * L + i];",
     "    w[i] = W[i];", ["team"]),
    ("prepared-normalize-double-by-reciprocal", "detail/elementwise/divisor.hpp",
     "return convert<C>(x) / static_cast<C>(divide.divisor());",
     "return convert<C>(x) * (C(1) / static_cast<C>(divide.divisor()));", ["divisor"]),
    ("serial-sum-reversed", "detail/team/cpu_team.hpp", "for (std::int64_t i = 0; i < n; ++i) { s = s + f(i); }",
     "for (std::int64_t i = n - 1; i >= 0; --i) { s = s + f(i); }", ["team"]),
    ("cpu-threads-one-per-processor", "detail/core/cpu_parallel.hpp",
     "static int const most = cpu_thread_limit_per_processor * cpu_processors();",
     "static int const most = cpu_processors();", ["pool"]),
]

# The fourth set: the one reduction hook and its algorithm tags
# (detail/reduce/reduction.hpp), the staged policy's rules, and fusekit::nccl's
# reduction over the ranks (agreement.hpp, shards_in_rank_order): each breaks
# what reduce_api.hpp, reduce_types.hpp or docs/architecture.md promise.
# `--set dispatch`.
DISPATCH_MUTANTS = [
    ("run-time-value-runs-another-algorithm", "detail/reduce/reduction.hpp",
     "    case reduce_algorithm::run_to_run:\n      return f(run_to_run{});",
     "    case reduce_algorithm::run_to_run:\n      return f(deterministic{});", ["reduce_cpu"]),
    ("out-not-checked", "detail/reduce/reduction.hpp",
     "check_sum_inputs(r.function, r.views) : check_sum_views(r.function, r.out, r.views);",
     "check_sum_inputs(r.function, r.views) : check_sum_inputs(r.function, r.views);",
     ["reduce_cpu", "advreduce"]),
    ("atomic-without-an-atomic-says-nothing-of-it", "detail/reduce/reduction.hpp",
     "    FUSEKIT_EXPECTS(!atomic, std::string(function)", "    FUSEKIT_EXPECTS(true, std::string(function)",
     ["reduce_op"]),
    ("shard-starts-from-init", "detail/distributed/agreement.hpp",
     "mine = reduce_from(src, size, atomic_op<Op, Acc>::identity());", "mine = reduce_from(src, size, init);",
     ["agreement"]),
    ("shard-counts-its-first-value-twice", "detail/distributed/agreement.hpp",
     "mine = reduce_from(source_from(src, 1), size - 1, first(src));", "mine = reduce_from(src, size, first(src));",
     ["agreement"]),
    ("source-from-the-wrong-element", "detail/reduce/source.hpp",
     "p[i] += k * static_cast<std::int64_t>(bytes[i]);", "p[i] += (k + 1) * static_cast<std::int64_t>(bytes[i]);",
     ["agreement"]),
    ("ranks-need-not-agree-on-init", "detail/distributed/agreement.hpp",
     '  key.add("combining op", type_code<typename R::op_type>()).add("init", r.init);',
     '  key.add("combining op", type_code<typename R::op_type>());', ["mpi"]),
    ("workspace-size-of-any-algorithm", "detail/reduce/cuda.cuh",
     "      check_algorithm(function, tag);  // throws\n", "", ["reduce_gpu_args"]),
    ("run-to-run-sum-not-carried-in-double", "detail/reduce/cpu.hpp",
     "  } else if constexpr (std::is_same_v<A, run_to_run> && std::is_same_v<Op, plus>) {",
     "  } else if constexpr (std::is_same_v<A, run_to_run> && std::is_same_v<Op, plus> && false) {",
     ["reduce_cpu", "property"]),
]


def build_and_run(tree, key, log):
    src, extra, how, timeout = TESTS[key]
    src = src if isinstance(src, list) else [src]  # one test program, from one or more files
    exe = os.path.join(tree, "t_" + key)
    if how == "mpi":
        cmd = ["mpicxx"] + FLAGS + extra + src + ["-o", exe, "-lgtest", "-pthread"]
    elif how and how.startswith("codegen:"):
        cmd = ["g++"] + FLAGS + extra + ["-c"] + src + ["-o", exe + ".o"]
    elif how and how.startswith("nvcc-codegen:"):
        cmd = [CUDA + "/bin/nvcc", "-O3", "-DNDEBUG", "-std=c++20", "--extended-lambda", "-Xcompiler=-fopenmp",
               "-arch=sm_90", "-I", "include", "-I", "tests"] + extra + ["-c"] + src + ["-o", exe + ".o"]
    elif how == "nvcc-gtest":
        cmd = [CUDA + "/bin/nvcc", "-O1", "-std=c++20", "--extended-lambda", "-arch=sm_90", "-I", "include", "-I",
               "tests"] + extra + src + ["-o", exe, "-lgtest", "-lgtest_main", "-Xcompiler=-pthread"]
    elif how == "rapidcheck":
        cmd = ["g++"] + FLAGS + extra + src + ["-o", exe, "-lrapidcheck", "-lgtest", "-lgtest_main", "-pthread"]
    else:
        cmd = ["g++"] + FLAGS + extra + src + ["-o", exe, "-lgtest", "-lgtest_main", "-pthread"]
    c = subprocess.run(cmd, cwd=tree, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if c.returncode != 0:
        log.write(c.stdout)
        return "does not compile"
    if how and "codegen:" in how:
        runs = [["cmake", "-DNM=nm", "-DOBJDUMP=objdump", "-DOBJECTS=" + exe + ".o", "-P",
                 "tests/codegen/" + how.split(":", 1)[1]]]
    elif how == "mpi":
        runs = [["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", str(n), exe] for n in (2, 3)]
    else:
        runs = [[exe]]
    for r in runs:
        try:
            p = subprocess.run(r, cwd=tree, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               timeout=timeout, env=dict(os.environ, RC_PARAMS="seed=2026 max_success=300",
                                                         FUSEKIT_TEAM_SCHEDULE="turns" if how == "team" else ""))
        except subprocess.TimeoutExpired:
            return "killed (hang past %d s)" % timeout
        if p.returncode != 0:
            failed = [l for l in p.stdout.splitlines() if "[  FAILED  ]" in l]
            return "killed (%s)" % (failed[0].split("]", 1)[1].strip() if failed else "rc %d" % p.returncode)
    return None


def run_mutant(m, keep):
    mid, rel, old, new, keys = m
    if keep:
        os.makedirs(keep, exist_ok=True)
    tree = tempfile.mkdtemp(prefix="fusekit-mut-", dir=keep)
    for d in ("include", "tests"):
        shutil.copytree(os.path.join(ROOT, d), os.path.join(tree, d))
    path = os.path.join(tree, "include", "fusekit", rel)
    text = open(path).read()
    if text.count(old) != 1:
        return mid, "NOT PLANTED (text found %d times)" % text.count(old)
    open(path, "w").write(text.replace(old, new))
    with open(os.path.join(tree, "log.txt"), "w") as log:
        for key in keys:
            verdict = build_and_run(tree, key, log)
            if verdict:
                if not keep:
                    shutil.rmtree(tree, ignore_errors=True)
                return mid, verdict + " by " + key
    if not keep:
        shutil.rmtree(tree, ignore_errors=True)
    return mid, "SURVIVED " + ",".join(keys)


def main():
    a = argparse.ArgumentParser()
    a.add_argument("--jobs", type=int, default=1)
    a.add_argument("--only", default="")
    a.add_argument("--keep", default=None)
    a.add_argument("--check", action="store_true")
    a.add_argument("--set", choices=["planted", "contract", "false_success", "dispatch", "all"], default="planted",
                   help="planted: the first set; contract: the second, from the headers' contract; "
                        "false_success: the third, what a success status and the aliasing rule promise; "
                        "dispatch: the fourth, the reduction hook, its tags and the ranks' fold")
    args = a.parse_args()
    every = MUTANTS + CONTRACT_MUTANTS + FALSE_SUCCESS_MUTANTS + DISPATCH_MUTANTS
    mutants = {"planted": MUTANTS, "contract": CONTRACT_MUTANTS, "false_success": FALSE_SUCCESS_MUTANTS,
               "dispatch": DISPATCH_MUTANTS, "all": every}[args.set]
    if args.check:  # the texts follow their code when it moves: nothing built
        stale = 0
        for mid, path, old, _, _ in every:
            full = os.path.join(ROOT, "include", "fusekit", path)
            count = open(full, encoding="utf-8").read().count(old) if os.path.exists(full) else 0
            if count != 1:
                stale += 1
                print("%s: its text is in %s %d times, not once" % (mid, path, count))
        print("%d mutants, %d stale" % (len(every), stale))
        return 1 if stale else 0
    pool_of = every if args.only else mutants
    chosen = [m for m in pool_of if not args.only or m[0] in args.only.split(",")]
    killed = planted = 0
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for mid, verdict in pool.map(lambda m: run_mutant(m, args.keep), chosen):
            print("%-40s %s" % (mid, verdict), flush=True)
            if verdict.startswith("NOT PLANTED") or verdict.startswith("does not compile"):
                continue
            planted += 1
            killed += verdict.startswith("killed")
    print("score: %d of %d planted bugs caught (%.0f%%)" % (killed, planted, 100.0 * killed / max(planted, 1)))
    return 0 if killed == planted else 1


if __name__ == "__main__":
    sys.exit(main())
