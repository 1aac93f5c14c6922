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

/// Which cache a prefetch fills: every level down to L1 (x86 prefetcht0), or
/// the outer levels only, from L2 out (prefetcht2).
enum class prefetch_to { l1, l2 };

/// Prefetches the lines of the `bytes` bytes from `p` for reading.
template <prefetch_to To = prefetch_to::l1>
FUSEKIT_HD FUSEKIT_FORCEINLINE void prefetch_bytes(const void* p, std::int64_t bytes) {
#if !FUSEKIT_DEVICE_PASS && (defined(__GNUC__) || defined(__clang__))
  // __builtin_prefetch's third argument, the temporal locality: 3 is
  // prefetcht0, 1 is prefetcht2.
  constexpr int locality = To == prefetch_to::l1 ? 3 : 1;
  const char* const c = static_cast<const char*>(p);
  for (std::int64_t b = 0; b < bytes; b += 64) { __builtin_prefetch(c + b, 0, locality); }
#else
  (void)p, (void)bytes;
#endif
}

}  // namespace core
}  // namespace detail
}  // namespace fusekit
