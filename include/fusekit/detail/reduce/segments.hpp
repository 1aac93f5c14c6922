// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The sums per segment and per row, shared by every backend: where each
/// segment lies (given offsets, or rows of one length), the call as one object
/// (`segmented_reduction`, what `run_segmented` receives), and its checks,
/// made before anything runs.

#include <fusekit/detail/core/checks.hpp>
#include <fusekit/detail/core/dispatch.hpp>
#include <fusekit/detail/reduce/checks.hpp>
#include <fusekit/detail/reduce/source.hpp>
#include <fusekit/error.hpp>
#include <fusekit/policy.hpp>

#include <cuda/std/span>

#include <cstdint>
#include <string>
#include <type_traits>

namespace fusekit {
namespace detail {
inline namespace reduce {

/// Segment s is [offsets[s], offsets[s + 1]) (CUB's begin and end offsets, one array).
template <class Offset>
struct offset_segments {
  const Offset* offsets;
  FUSEKIT_HD FUSEKIT_FORCEINLINE std::int64_t begin(std::int64_t s) const {
    return static_cast<std::int64_t>(offsets[s]);
  }
  FUSEKIT_HD FUSEKIT_FORCEINLINE std::int64_t end(std::int64_t s) const {
    return static_cast<std::int64_t>(offsets[s + 1]);
  }
};

/// Segment s is row s of a row-major matrix with `length` columns.
struct row_segments {
  std::int64_t length;
  FUSEKIT_HD FUSEKIT_FORCEINLINE std::int64_t begin(std::int64_t s) const { return s * length; }
  FUSEKIT_HD FUSEKIT_FORCEINLINE std::int64_t end(std::int64_t s) const { return (s + 1) * length; }
};

/// One call of a segmented sum: out[s] = Σ src(i) over segment s, for s < count,
/// each in the deterministic tree's order over that segment alone. `values`
/// is the length of the source (every segment lies inside it).
template <class Acc, class Src, class Segments>
struct segmented_reduction {
  using accumulator = Acc;
  const char* function;
  Src src;
  Segments segments;
  std::int64_t count;
  std::int64_t values;
  Acc* out;
};

/// Whether a distributed Policy sums each rank's own segments on the rank's
/// local policy (true for fusekit::mpi: detail/distributed/mpi.hpp).
template <class Policy>
inline constexpr bool segmented_on_each_rank_v = false;

/// The policy check of every call here: fusekit::cpu (with its backend
/// included) and fusekit::mpi, until the GPU's backend is written.
template <class Policy>
constexpr bool segmented_usable() {
  if constexpr (is_policy_v<Policy> && !std::is_same_v<Policy, cpu> && !segmented_on_each_rank_v<Policy>) {
    static_assert(sizeof(Policy) == 0,
                  "fusekit: the sums per segment and per row run on fusekit::cpu and fusekit::mpi only so far "
                  "(segmented_api.hpp)");
    return false;
  } else {
    return policy_usable<segmented_tag, Policy>();
  }
}

/// Segment offsets: an integer type (the indices of the values).
template <class Offset>
constexpr void check_offset_type() {
  static_assert(std::is_integral_v<std::remove_cv_t<Offset>> && !std::is_same_v<std::remove_cv_t<Offset>, bool>,
                "fusekit::segmented_sum: offsets are integers (int32_t, int64_t, ...)");
}

/// The offsets of S = offsets.size() − 1 segments over `values` values, read on
/// the host: at least one offset, the first ≥ 0, none decreasing, the last ≤
/// values. Returns S.
template <class Offset>
std::int64_t check_host_offsets(const char* function, ::cuda::std::span<Offset> offsets, std::int64_t values) {
  named_range const o = describe("offsets", offsets);
  expect_not_null(function, o);
  expect_aligned(function, o);
  FUSEKIT_EXPECTS(!offsets.empty(), std::string(function) +
                                        ": offsets is empty; it holds S + 1 offsets for S segments (one, 0, for none)");
  auto const at = [&](std::size_t s) { return static_cast<std::int64_t>(offsets[s]); };
  FUSEKIT_EXPECTS(at(0) >= 0, std::string(function) + ": offsets[0] is " + std::to_string(at(0)) +
                                  "; the first offset must be 0 or more");
  for (std::size_t s = 1; s < offsets.size(); ++s) {
    FUSEKIT_EXPECTS(at(s) >= at(s - 1), std::string(function) + ": offsets[" + std::to_string(s) + "] = " +
                                            std::to_string(at(s)) + " is less than offsets[" + std::to_string(s - 1) +
                                            "] = " + std::to_string(at(s - 1)) + "; offsets must not decrease");
  }
  std::int64_t const last = at(offsets.size() - 1);
  FUSEKIT_EXPECTS(last <= values, std::string(function) + ": offsets[" + std::to_string(offsets.size() - 1) +
                                      "] = " + std::to_string(last) + " is past the end of the " +
                                      std::to_string(values) + " values; every segment must lie inside them");
  return static_cast<std::int64_t>(offsets.size()) - 1;
}

/// `out`: `count` accumulators, non-null, aligned, and sharing no byte with
/// any of the `inputs`.
template <class Acc>
void check_segment_out(const char* function, ::cuda::std::span<Acc> out, std::int64_t count, const named_range* inputs,
                       std::size_t n_inputs) {
  named_range const o = describe("out", out);
  FUSEKIT_EXPECTS(static_cast<std::int64_t>(out.size()) == count,
                  std::string(function) + ": out has " + std::to_string(out.size()) + " elements for " +
                      std::to_string(count) + " segments; it needs one per segment");
  expect_not_null(function, o);
  expect_aligned(function, o);
  for (std::size_t k = 0; k < n_inputs; ++k) { expect_disjoint(function, o, inputs[k]); }
}

}  // namespace reduce
}  // namespace detail
}  // namespace fusekit
