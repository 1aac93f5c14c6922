// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Stores that go past the caches, for an output larger than they are. A
/// plain store to a line that is not in cache first reads the line (the
/// write-allocate): a loop that writes n bytes of an array past the caches
/// moves 2n bytes for it. x86's non-temporal stores (`movntdq`) combine a
/// line in a buffer and write it to memory whole, without reading it, and
/// without evicting what the caches hold. On other targets, and in the
/// device pass, these are plain copies.
///
/// Non-temporal stores are ordered neither with each other nor with later
/// stores: a thread that made them calls stream_fence() (`sfence`) before
/// another thread may read what they wrote.

#include <fusekit/config.hpp>

#include <cstdint>
#include <cstring>

#if !FUSEKIT_DEVICE_PASS && defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <emmintrin.h>
#define FUSEKIT_STREAM_STORES 1
#else
#define FUSEKIT_STREAM_STORES 0
#endif

namespace fusekit {
namespace detail {
inline namespace core {

/// The cache line, in bytes: a stream store writes whole lines.
inline constexpr std::int64_t stream_line_bytes = 64;

/// Copies `bytes` (a multiple of 64) from src (16-byte aligned) to dst
/// (64-byte aligned), past the caches where the CPU can.
FUSEKIT_FORCEINLINE void stream_store_lines(void* dst, const void* src, std::int64_t bytes) {
#if FUSEKIT_STREAM_STORES
  char* const d = static_cast<char*>(dst);
  const char* const s = static_cast<const char*>(src);
  for (std::int64_t b = 0; b < bytes; b += 16) {
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + b), _mm_load_si128(reinterpret_cast<const __m128i*>(s + b)));
  }
#else
  std::memcpy(dst, src, static_cast<std::size_t>(bytes));
#endif
}

/// Orders this thread's stream stores before its later stores (x86 sfence).
FUSEKIT_FORCEINLINE void stream_fence() {
#if FUSEKIT_STREAM_STORES
  _mm_sfence();
#endif
}

}  // namespace core
}  // namespace detail
}  // namespace fusekit
