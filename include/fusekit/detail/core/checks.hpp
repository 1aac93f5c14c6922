// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Argument checks shared by every algorithm. Each throws
/// `fusekit::invalid_argument` naming the function, the argument and the
/// constraint, before anything is launched or written.

#include <fusekit/error.hpp>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>

namespace fusekit {
namespace detail {
inline namespace core {

/// A named view of caller memory, for the checks: begin address, element count,
/// element size.
struct named_range {
  const char* name;
  std::uintptr_t begin;
  std::size_t size;
  std::size_t element_bytes;

  [[nodiscard]] std::uintptr_t end() const { return begin + size * element_bytes; }
};

/// rows·columns elements of `bytes` bytes each, as a count; throws naming
/// `function` and `name` when the product wraps int64 or its bytes pass
/// PTRDIFF_MAX (a wrapped count of 0 would let a null view through).
inline std::int64_t checked_elements(const std::string& function, const char* name, std::int64_t rows,
                                     std::int64_t columns, std::size_t bytes) {
  std::int64_t count = 0, total = 0;
  bool const wraps = rows < 0 || columns < 0 || __builtin_mul_overflow(rows, columns, &count) ||
                     __builtin_mul_overflow(count, static_cast<std::int64_t>(bytes), &total);
  FUSEKIT_EXPECTS(!wraps, function + ": " + name + " is " + std::to_string(rows) + " x " + std::to_string(columns) +
                              ", which is more elements of " + std::to_string(bytes) +
                              " bytes than a 64-bit address space holds");
  return count;
}

template <class Span>
named_range describe(const char* name, const Span& s) {
  return {name, reinterpret_cast<std::uintptr_t>(s.data()), s.size(), sizeof(typename Span::element_type)};
}

inline void expect_not_null(const char* function, const named_range& r) {
  FUSEKIT_EXPECTS(r.begin != 0 || r.size == 0, std::string(function) + ": " + r.name + " is null but has " +
                                                   std::to_string(r.size) + " elements; a null view must be empty");
}

/// Elements at their natural alignment (the GPU cannot load a float from an odd address).
inline void expect_aligned(const char* function, const named_range& r) {
  FUSEKIT_EXPECTS(r.begin % r.element_bytes == 0, std::string(function) + ": " + r.name +
                                                      " is not aligned to its element size (" +
                                                      std::to_string(r.element_bytes) + " bytes)");
}

inline void expect_same_size(const char* function, const named_range& r, const named_range& ref) {
  FUSEKIT_EXPECTS(r.size == ref.size, std::string(function) + ": " + r.name + " has " + std::to_string(r.size) +
                                          " elements but " + ref.name + " has " + std::to_string(ref.size) +
                                          "; they must be the same size");
}

/// Whether two ranges share a byte (empty ranges share none).
inline bool overlaps(const named_range& a, const named_range& b) {
  return a.size != 0 && b.size != 0 && a.begin < b.end() && b.begin < a.end();
}

/// `out` may be exactly `in` (same address, same element size: in-place) or
/// disjoint from it; anything in between is rejected.
inline void expect_in_place_or_disjoint(const char* function, const named_range& out, const named_range& in) {
  bool const in_place = out.begin == in.begin && out.element_bytes == in.element_bytes;
  FUSEKIT_EXPECTS(in_place || !overlaps(out, in),
                  std::string(function) + ": " + out.name + " partially overlaps " + in.name +
                      "; an output must be the same view as an input of its element type (in place) or "
                      "not overlap it at all");
}

inline void expect_disjoint(const char* function, const named_range& out, const named_range& in) {
  FUSEKIT_EXPECTS(!overlaps(out, in),
                  std::string(function) + ": " + out.name + " overlaps " + in.name + "; they must not share memory");
}

/// The aliasing rule of every call, in one place: every view non-null (unless
/// empty) and aligned, and every output (written) sharing no byte with any
/// input or any other output. The one documented exception, an elementwise
/// output that is exactly one of its inputs, is expect_in_place_or_disjoint.
inline void expect_apart(const char* function, std::initializer_list<named_range> outputs,
                         std::initializer_list<named_range> inputs) {
  for (const auto& list : {outputs, inputs}) {
    for (const named_range& r : list) {
      expect_not_null(function, r);
      expect_aligned(function, r);
    }
  }
  for (auto out = outputs.begin(); out != outputs.end(); ++out) {
    for (const named_range& in : inputs) { expect_disjoint(function, *out, in); }
    for (auto other = outputs.begin(); other != out; ++other) { expect_disjoint(function, *out, *other); }
  }
}

}  // namespace core
}  // namespace detail
}  // namespace fusekit
