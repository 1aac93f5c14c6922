// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// What every distributed backend (fusekit::mpi, fusekit::nccl) checks before
/// a collective call and agrees on during one, written once over a gather of
/// int64 rows so that the transport only carries it:
///  - the call key: the function, types, op, algorithm, init, the options, L,
///    N and a warm start's hash, compared across the ranks; a rank that differs
///    makes every rank throw naming it and the value;
///  - the ranks' argument checks: one failing rank makes every rank throw its
///    message, the lowest failing rank's, so none is left waiting;
///  - the progress callback of a fit: every rank stops at the iteration where
///    any rank's callback threw;
///  - the fold of the ranks' partial results with the op itself, in rank order:
///    the same bits on every rank, whatever the transport's own sum does.
/// A gather is `std::vector<std::int64_t>(const std::vector<std::int64_t>& mine)`:
/// every rank's row (rows of one length), concatenated in rank order, on every
/// rank. tests/distributed/agreement_test.cpp drives all of it with a fake
/// communicator of threads.

#include <fusekit/detail/core/checks.hpp>
#include <fusekit/detail/reduce/atomics.hpp>
#include <fusekit/detail/reduce/source.hpp>
#include <fusekit/reduce_types.hpp>
#include <fusekit/train_types.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <exception>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

namespace fusekit {
namespace detail {
inline namespace distributed {

/// An FNV-1a hash of a string: the same on every rank of one program.
constexpr std::int64_t text_hash(const char* s) {
  std::uint64_t h = 1469598103934665603ull;
  for (; *s != 0; ++s) { h = (h ^ static_cast<unsigned char>(*s)) * 1099511628211ull; }
  return static_cast<std::int64_t>(h);
}

/// A code for the type T (its name as the compiler spells it, hashed once per
/// type): the same on every rank of one program, different for float and double.
template <class T>
std::int64_t type_code() {
#if defined(__GNUC__) || defined(__clang__)
  static std::int64_t const code = text_hash(__PRETTY_FUNCTION__);
#else
  static std::int64_t const code = text_hash(__FUNCSIG__);
#endif
  return code;
}

/// What every rank of a collective call must pass alike: the function, the
/// element and accumulator types, the op, the algorithm, init, the options, L
/// and N, as up to `capacity` named values. Its size does not depend on the
/// types, so ranks that call with different types still exchange it safely.
struct call_key {
  static constexpr int capacity = 24;
  const char* names[capacity] = {};
  std::int64_t values[capacity] = {};
  int count = 0;

  explicit call_key(const char* function) { add("function called", text_hash(function)); }

  /// A value that must agree (integers, enums, or a value's bits).
  template <class V>
  call_key& add(const char* name, const V& v) {
    std::int64_t bits = 0;
    if constexpr (std::is_enum_v<V> || std::is_integral_v<V>) {
      bits = static_cast<std::int64_t>(v);
    } else {
      static_assert(sizeof(V) <= sizeof(bits) && std::is_trivially_copyable_v<V>, "a value of at most 8 bytes");
      std::memcpy(&bits, &v, sizeof(V));
    }
    if (count == capacity) { throw std::logic_error("fusekit: call_key holds at most 24 values"); }
    names[count] = name;
    values[count] = bits;
    ++count;
    return *this;
  }
};

/// Every field of gd_options, by name, in declaration order: the one list
/// the agreement key is made of (a callback's presence, not its target).
template <class F>
void for_each_option(const gd_options& o, const F& f) {
  f("learning_rate", o.learning_rate.has_value() ? *o.learning_rate : -1.0);
  f("tolerance", o.tolerance.has_value() ? *o.tolerance : -1.0);
  f("relative_tolerance", o.relative_tolerance);
  f("max_iterations", o.max_iterations);
  f("init", o.init);
  f("seed", o.seed);
  f("method", o.method);
  f("formulation", o.formulation);
  f("preconditioner", o.preconditioner);
  f("stall_window", o.stall_window);
  f("progress (set or not)", static_cast<bool>(o.progress));
  f("progress_every", o.progress_every);
  f("refinement_steps", o.refinement_steps);
  f("ridge", o.ridge);
  f("fit_intercept", o.fit_intercept);
}

/// gd_options's fields as for_each_option lists them: a field added to
/// gd_options and not here changes its size, and the check below fails to
/// compile until both lists have it.
struct listed_options {
  std::optional<double> learning_rate, tolerance;
  double relative_tolerance;
  std::int64_t max_iterations;
  gd_init init;
  std::uint64_t seed;
  gd_method method;
  gd_formulation formulation;
  gd_preconditioner preconditioner;
  std::int64_t stall_window;
  std::function<void(const fit_progress&)> progress;
  std::int64_t progress_every, refinement_steps;
  double ridge;
  bool fit_intercept;
};
static_assert(sizeof(listed_options) == sizeof(gd_options),
              "a gd_options field is missing from for_each_option (agreement.hpp): every rank must agree on it");

/// A hash of n values' bytes (FNV-1a): for values every rank must pass alike
/// (a warm start), compared without sending them.
template <class T>
std::int64_t bytes_hash(const T* values, std::int64_t n) {
  std::uint64_t h = 1469598103934665603ull;
  if (values == nullptr) { return 0; }  // the checks name a null view
  const auto* const b = reinterpret_cast<const unsigned char*>(values);
  for (std::int64_t i = 0; i < n * static_cast<std::int64_t>(sizeof(T)); ++i) { h = (h ^ b[i]) * 1099511628211ull; }
  return static_cast<std::int64_t>(h);
}

/// The call key of a sum of T in Acc (reduce_sum, sum).
template <class T, class Acc>
call_key sum_key(const char* function, reduce_algorithm algorithm) {
  call_key key(function);
  key.add("element type", type_code<std::remove_cv_t<T>>())
      .add("accumulator type", type_code<Acc>())
      .add("algorithm", algorithm);
  return key;
}

/// The call key of a sum of op over inputs Ins in Acc (transform_reduce(_sum)).
template <class Acc, class Op, class... Ins>
call_key transform_sum_key(const char* function, reduce_algorithm algorithm) {
  call_key key(function);
  key.add("input types", type_code<std::tuple<std::remove_cv_t<Ins>...>>())
      .add("accumulator type", type_code<Acc>())
      .add("op", type_code<Op>())
      .add("algorithm", algorithm);
  return key;
}

/// The key of the values a reduction reads: an array's element type, or a
/// transform's input types and function.
template <class Acc, class T>
call_key source_key(const char* function, reduce_algorithm algorithm, const array_source<Acc, T>*) {
  return sum_key<T, Acc>(function, algorithm);
}

template <class Acc, class F, class... Ins>
call_key source_key(const char* function, reduce_algorithm algorithm, const transform_source<Acc, F, Ins...>*) {
  return transform_sum_key<Acc, F, Ins...>(function, algorithm);
}

/// The call key of a reduction (detail/reduce/reduction.hpp): the function,
/// the element types (and a transform's function), the accumulator, the op,
/// init and the algorithm.
template <class R>
call_key reduction_key(const R& r, reduce_algorithm algorithm) {
  using Acc = typename R::accumulator;
  using Src = typename R::source;
  call_key key = source_key<Acc>(r.function, algorithm, static_cast<const Src*>(nullptr));
  key.add("combining op", type_code<typename R::op_type>()).add("init", r.init);
  return key;
}

/// The call key of a fit of T: the types, L and N, every option, and the warm
/// start's hash when W is one (`warm_start_hash`, computed where W lives).
template <class T>
call_key fit_key(const char* function, std::int64_t L, std::int64_t N, const gd_options& o,
                 std::int64_t warm_start_hash) {
  call_key key(function);
  key.add("element type", type_code<T>()).add("L (columns of X)", L).add("N (columns of Y)", N);
  for_each_option(o, [&](const char* name, const auto& value) { key.add(name, value); });
  if (o.init == gd_init::warm_start) {  // the same start on every rank, or ranks iterate apart (and may hang)
    key.add("W (the warm start)", warm_start_hash);
  }
  return key;
}

/// `key` with what a fit's extras (fit_extras) must agree on across the
/// ranks: whether weights are given (`weighted`, agreed_weighting) and
/// whether intercepts are; ridge and fit_intercept are options (fit_key).
inline call_key& with_extras(call_key& key, bool weighted, bool intercept_given) {
  return key.add("sample weights (given or not; a shard without rows gives either)", weighted)
      .add("intercept (given or not)", intercept_given);
}

/// Whether a fit is weighted, from this rank's `mine` (1 weights given, 0
/// not, -1 a shard without rows, which has none to give) and the largest over
/// the ranks (`any`): a shard without rows joins the others' answer.
inline bool weighted_fit(int mine, int any) { return mine < 0 ? any > 0 : mine > 0; }

/// weighted_fit over the ranks' `gather`.
template <class Gather>
bool agreed_weighting(const Gather& gather, int mine) {
  std::vector<std::int64_t> const all = gather(std::vector<std::int64_t>{mine});
  return weighted_fit(mine, static_cast<int>(*std::max_element(all.begin(), all.end())));
}

/// `count` doubles of every rank combined by `op` in rank order (rank 0's
/// first) into `values`, on every rank, through the ranks' `gather`: the same
/// bits everywhere, and the same as fusekit::mpi's ordered sum.
template <class Gather, class Op>
void doubles_in_rank_order(const Gather& gather, double* values, std::int64_t count, const Op& op) {
  if (count == 0) { return; }
  std::vector<std::int64_t> mine(static_cast<std::size_t>(count));
  std::memcpy(mine.data(), values, mine.size() * sizeof(double));
  std::vector<std::int64_t> const all = gather(mine);
  std::int64_t const ranks = static_cast<std::int64_t>(all.size()) / count;
  for (std::int64_t i = 0; i < count; ++i) {
    double v = 0;
    std::memcpy(&v, &all[static_cast<std::size_t>(i)], sizeof(double));
    for (std::int64_t r = 1; r < ranks; ++r) {
      double part = 0;
      std::memcpy(&part, &all[static_cast<std::size_t>(r * count + i)], sizeof(double));
      v = op(v, part);
    }
    values[i] = v;
  }
}

/// Bytes of a failing check's message that travel with the key.
inline constexpr std::size_t agreement_message_bytes = 480;
/// int64 values per rank in the agreement's gather: failed, key count, the key, the message.
inline constexpr std::size_t agreement_row = 2 + call_key::capacity + agreement_message_bytes / 8;

/// Runs this rank's argument checks and compares `key` across the ranks, in one
/// gather. If the keys differ, every rank throws naming the first rank and value
/// that differ from rank 0's (`backend` names the policy); else if any rank's
/// checks failed, every rank throws the lowest failing rank's message. The same
/// exception on every rank, and none left waiting.
template <class Gather, class Checks>
void agree(const char* backend, const Gather& gather, const call_key& key, const Checks& checks) {
  std::string message;
  try {
    checks();
  } catch (const invalid_argument& e) { message = e.what(); }
  std::vector<std::int64_t> mine(agreement_row, 0);
  mine[0] = message.empty() ? 0 : 1;
  mine[1] = key.count;
  std::memcpy(mine.data() + 2, key.values, sizeof(key.values));
  std::memcpy(mine.data() + 2 + call_key::capacity, message.data(),
              std::min(message.size(), agreement_message_bytes - 1));
  std::vector<std::int64_t> const all = gather(mine);
  std::size_t const ranks = all.size() / agreement_row;
  for (std::size_t r = 0; r < ranks; ++r) {
    const std::int64_t* const theirs = all.data() + r * agreement_row;
    for (std::size_t i = 1; i < 2 + call_key::capacity; ++i) {
      if (theirs[i] == all[i]) { continue; }
      bool const same_call = i > 2;  // then the names are the same on every rank
      std::string const what =
          same_call && static_cast<int>(i) - 2 < key.count ? key.names[i - 2] : "function called or its types";
      throw invalid_argument(std::string(backend) + ": rank " + std::to_string(r) + " passes a different " + what +
                             " than rank 0; every rank must pass the same (" + what + ")");
    }
  }
  for (std::size_t r = 0; r < ranks; ++r) {
    const std::int64_t* const theirs = all.data() + r * agreement_row;
    if (theirs[0] == 0) { continue; }
    const char* const text = reinterpret_cast<const char*>(theirs + 2 + call_key::capacity);
    throw invalid_argument(std::string(text, strnlen(text, agreement_message_bytes)) + " (rank " + std::to_string(r) +
                           ")");
  }
}

/// o's progress callback made collective: every rank calls it at the same
/// iterations; one that throws on some ranks throws on all (its own exception
/// where it threw, a runtime_error naming the lowest such rank elsewhere), so
/// that every rank stops at that iteration. Unset stays unset.
template <class Gather>
std::function<void(const fit_progress&)> collective_progress(const char* function, const gd_options& o,
                                                             const Gather& gather) {
  if (!o.progress) { return {}; }
  return [&o, gather, function](const fit_progress& now) {
    std::exception_ptr thrown;
    try {
      o.progress(now);
    } catch (...) { thrown = std::current_exception(); }
    std::vector<std::int64_t> const all = gather(std::vector<std::int64_t>{thrown ? 1 : 0});
    if (thrown) { std::rethrow_exception(thrown); }
    auto const first = std::find(all.begin(), all.end(), std::int64_t{1});
    if (first != all.end()) {
      throw std::runtime_error(std::string(function) + ": the progress callback threw on rank " +
                               std::to_string(first - all.begin()) + " at iteration " + std::to_string(now.iteration) +
                               "; every rank stops there");
    }
  };
}

/// init ⊕ every rank's partial result, in rank order, with op itself (not the
/// transport's sum, whose rounding and NaN rules are its own): the same bits on
/// every rank, for any op. A rank with no values adds nothing.
template <class Acc, class Gather, class Op>
Acc fold_in_rank_order(const Gather& gather, Acc mine, std::int64_t size, const Op& op, Acc init) {
  static_assert(sizeof(Acc) == sizeof(std::int64_t) || sizeof(Acc) == sizeof(float), "a scalar accumulator");
  std::int64_t bits = 0;
  std::memcpy(&bits, &mine, sizeof(Acc));
  std::vector<std::int64_t> const all = gather(std::vector<std::int64_t>{bits, size});
  Acc result = init;
  for (std::size_t r = 0; r + 1 < all.size(); r += 2) {
    if (all[r + 1] <= 0) { continue; }
    Acc part;
    std::memcpy(&part, &all[r], sizeof(Acc));
    result = op(result, part);
  }
  return result;
}

/// init ⊕ every rank's values for the algorithms other than the tree: each
/// rank reduces its own `size` values of `src`, then every rank folds the
/// ranks' results in rank order (fold_in_rank_order). A rank's reduction
/// starts from op's identity where the op has one (`reduce_from(src, n,
/// identity)`), else from its first value (`first(src)`) over the rest
/// (`reduce_from(src from 1 on, n − 1, first)`): no init is applied twice.
/// fusekit::nccl runs it with a GPU reduction; the host tests with a fake
/// communicator.
template <class Acc, class Gather, class Src, class Op, class ReduceFrom, class First>
Acc shards_in_rank_order(const Gather& gather, const Src& src, std::int64_t size, const Op& op, Acc init,
                         const ReduceFrom& reduce_from, const First& first) {
  Acc mine = init;
  if (size > 0) {
    if constexpr (atomic_op<Op, Acc>::exists) {
      mine = reduce_from(src, size, atomic_op<Op, Acc>::identity());
    } else {
      mine = reduce_from(source_from(src, 1), size - 1, first(src));
    }
  }
  return fold_in_rank_order(gather, mine, size, op, init);
}

}  // namespace distributed
}  // namespace detail
}  // namespace fusekit
