// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Counter-based random numbers: value i of stream `seed` is a pure function of
/// (i, seed), so the host and the device produce the same numbers in any order.

#include <fusekit/config.hpp>

#include <cstdint>

namespace fusekit {
namespace detail {
inline namespace core {

/// 32 well-mixed bits of (i, seed) (splitmix64's finalizer).
FUSEKIT_HD inline std::uint32_t hash32(std::uint64_t i, std::uint64_t seed) {
  std::uint64_t z = i * 0x9e3779b97f4a7c15ull + seed * 0xd1b54a32d192ed03ull + 0x632be59bd9b4e019ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return static_cast<std::uint32_t>((z ^ (z >> 31)) >> 32);
}

/// Uniform in [0, 1) with 24 random bits (exact in float and double).
template <class T>
FUSEKIT_HD inline T uniform01(std::uint64_t i, std::uint64_t seed) {
  return static_cast<T>(hash32(i, seed) >> 8) * static_cast<T>(1.0 / 16777216.0);
}

}  // namespace core
}  // namespace detail
}  // namespace fusekit
