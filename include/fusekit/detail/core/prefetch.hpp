// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// A hint that bytes are read soon: each 64-byte cache line they span is
/// prefetched on the host (gcc and clang); the device, and other compilers,
/// ignore it. A prefetch never faults, but callers keep the range inside the
/// array all the same.

#include <fusekit/config.hpp>

#include <cstdint>

namespace fusekit {
namespace detail {
inline namespace core {

/// Prefetches the lines of the `bytes` bytes from `p` for reading.
FUSEKIT_HD FUSEKIT_FORCEINLINE void prefetch_bytes(const void* p, std::int64_t bytes) {
#if !FUSEKIT_DEVICE_PASS && (defined(__GNUC__) || defined(__clang__))
  const char* const c = static_cast<const char*>(p);
  for (std::int64_t b = 0; b < bytes; b += 64) { __builtin_prefetch(c + b); }
#else
  (void)p, (void)bytes;
#endif
}

}  // namespace core
}  // namespace detail
}  // namespace fusekit
