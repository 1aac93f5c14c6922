// SPDX-License-Identifier: Apache-2.0
#pragma once
// The Python package's view of an array, free of nanobind so that the CUDA
// translation units (compiled by nvcc) share it with the module: a pointer,
// a size, an element type and, for matrices, two extents. module.cpp makes
// one from a DLPack tensor after checking its device and strides.

#include <fusekit/config.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#if FUSEKIT_HAS_CUDA_HEADERS
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#endif

namespace fusekit_python {

/// The element types the package passes to fusekit, as DLPack names them.
enum class dtype : int { u8, i8, u16, i16, u32, i32, u64, i64, f16, bf16, f32, f64 };

inline const char* dtype_name(dtype t) {
  constexpr const char* names[] = {"uint8",  "int8",  "uint16",  "int16",    "uint32",  "int32",
                                   "uint64", "int64", "float16", "bfloat16", "float32", "float64"};
  return names[static_cast<int>(t)];
}

/// An element type the call does not take: Python's TypeError (module.cpp
/// translates it), with a message that names the argument and what it may be.
struct type_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// One contiguous array: `size` elements of `type` at `data` (rows × cols for a matrix).
struct view {
  void* data = nullptr;
  std::int64_t size = 0;
  dtype type = dtype::f32;
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  const char* name = "";

  template <class T>
  [[nodiscard]] T* as() const {
    return static_cast<T*>(data);
  }
};

template <class T>
struct type_tag {
  using type = T;
};

/// Whether the half types are compiled in (they need the CUDA toolkit's headers).
inline constexpr bool has_half_types = FUSEKIT_HAS_CUDA_HEADERS != 0;

/// Calls f(type_tag<T>{}) for the floating-point type of `t`: float32,
/// float64, and float16/bfloat16 where the toolkit's headers are there.
template <class F>
decltype(auto) with_float(dtype t, const char* what, F&& f) {
  switch (t) {
    case dtype::f32:
      return f(type_tag<float>{});
    case dtype::f64:
      return f(type_tag<double>{});
#if FUSEKIT_HAS_CUDA_HEADERS
    case dtype::f16:
      return f(type_tag<__half>{});
    case dtype::bf16:
      return f(type_tag<__nv_bfloat16>{});
#endif
    default:
      break;
  }
  if (t == dtype::f16 || t == dtype::bf16) {
    throw type_error(std::string(what) + " is " + dtype_name(t) +
                     ": this build of fusekit has no half types (it was built without the CUDA toolkit's headers)");
  }
  throw type_error(std::string(what) + " is " + dtype_name(t) + "; it must be float32 or float64" +
                   (has_half_types ? ", float16 or bfloat16" : ""));
}

/// Calls f(type_tag<T>{}) for any element type fusekit takes as an input:
/// the integers, and the floating-point types of `with_float`.
template <class F>
decltype(auto) with_element(dtype t, const char* what, F&& f) {
  switch (t) {
    case dtype::u8:
      return f(type_tag<std::uint8_t>{});
    case dtype::i8:
      return f(type_tag<std::int8_t>{});
    case dtype::u16:
      return f(type_tag<std::uint16_t>{});
    case dtype::i16:
      return f(type_tag<std::int16_t>{});
    case dtype::u32:
      return f(type_tag<std::uint32_t>{});
    case dtype::i32:
      return f(type_tag<std::int32_t>{});
    case dtype::u64:
      return f(type_tag<std::uint64_t>{});
    case dtype::i64:
      return f(type_tag<std::int64_t>{});
    default:
      return with_float(t, what, std::forward<F>(f));
  }
}

/// Calls f(type_tag<T>{}) for float32 or float64: the trainer's types.
template <class F>
decltype(auto) with_real(dtype t, const char* what, F&& f) {
  switch (t) {
    case dtype::f32:
      return f(type_tag<float>{});
    case dtype::f64:
      return f(type_tag<double>{});
    default:
      throw type_error(std::string(what) + " is " + dtype_name(t) + "; the trainer takes float32 or float64");
  }
}

/// Throws type_error unless `v` has the element type `want`.
inline void expect_type(const view& v, dtype want, const char* why) {
  if (v.type != want) {
    throw type_error(std::string(v.name) + " is " + dtype_name(v.type) + " but must be " + dtype_name(want) + " (" +
                     why + ")");
  }
}

}  // namespace fusekit_python
