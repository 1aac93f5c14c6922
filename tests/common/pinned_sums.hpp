// SPDX-License-Identifier: Apache-2.0
#pragma once
// The bits of a fixed set of deterministic sums, recorded once (2026-12-01,
// before the CPU tree was vectorized) and pinned: every build of the CPU
// backend, whatever its flags (default, -ffast-math, -mavx2 -mfma, without the
// AVX2 dispatch), must give exactly these. The data come from a hash written
// out here (no library generator), in raw units: magnitudes from 2^-20 to
// 2^12 and both signs for floating types, the full range for integers.

#include <fusekit/fusekit.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace fusekit::test::pinned {

inline std::uint64_t mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

template <class T>
std::vector<T> values(std::size_t n, std::uint64_t seed) {
  std::vector<T> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    std::uint64_t const h = mix(i * 0x9E3779B97F4A7C15ULL + seed);
    if constexpr (std::is_floating_point_v<T>) {
      double const m = static_cast<double>(h >> 40) * 0x1p-24;  // [0, 1), 24 bits
      int const e = static_cast<int>((h >> 8) % 33) - 20;       // 2^-20 .. 2^12
      v[i] = static_cast<T>(((h & 1) ? -1.0 : 1.0) * std::ldexp(1.0 + m, e));
    } else {
      v[i] = static_cast<T>(h >> 3);  // wraps into T's range, both signs for signed T
    }
  }
  return v;
}

template <class T>
std::uint64_t bits(T v) {
  std::uint64_t b = 0;
  std::memcpy(&b, &v, sizeof v);
  return b;
}

inline const std::size_t sizes[] = {1, 255, 256, 257, 8191, 8192, 8193, 3 * 8192 + 5, 100000, (1u << 20) + 7};

// Every case's result bits, one line per case: "<case> <size> <bits in hex>".
inline std::vector<std::string> results() {
  using ::cuda::std::span;
  std::vector<std::string> out;
  auto const add = [&](const char* name, std::size_t n, std::uint64_t b) {
    char line[96];
    std::snprintf(line, sizeof line, "%s %zu %016llx", name, n, static_cast<unsigned long long>(b));
    out.emplace_back(line);
  };
  auto const det = fusekit::reduce_algorithm::deterministic;
  for (std::size_t n : sizes) {
    auto const f = values<float>(n, 1), g = values<float>(n, 2);
    auto const d = values<double>(n, 3), e = values<double>(n, 4);
    auto const i = values<std::int32_t>(n, 5);
    auto const u = values<std::uint8_t>(n, 6);
    auto const l = values<std::int64_t>(n, 7);
    add("f32", n, bits(fusekit::sum(fusekit::cpu{}, span<const float>(f), det)));
    add("f64", n, bits(fusekit::sum(fusekit::cpu{}, span<const double>(d), det)));
    add("f32_in_f64", n,
        bits(fusekit::sum(fusekit::cpu{}, span<const float>(f), det, fusekit::accumulate_in<double>{})));
    add("i32_in_i64", n,
        bits(fusekit::sum(fusekit::cpu{}, span<const std::int32_t>(i), det, fusekit::accumulate_in<std::int64_t>{})));
    add("u8_in_u64", n,
        bits(fusekit::sum(fusekit::cpu{}, span<const std::uint8_t>(u), det, fusekit::accumulate_in<std::uint64_t>{})));
    add("i64", n, bits(fusekit::sum(fusekit::cpu{}, span<const std::int64_t>(l), det)));
    add("dot_f32", n,
        bits(fusekit::transform_reduce(fusekit::cpu{}, det, fusekit::accumulate_in<float>{}, fusekit::weigh{},
                                       span<const float>(f), span<const float>(g))));
    add("dot_f64", n,
        bits(fusekit::transform_reduce(fusekit::cpu{}, det, fusekit::accumulate_in<double>{}, fusekit::weigh{},
                                       span<const double>(d), span<const double>(e))));
  }
  return out;
}

// results() as recorded on 2026-12-01 (gcc 12, x86-64; the same in the default
// build, -ffast-math, -mavx2 -mfma, -O1 and FUSEKIT_NO_CPU_DISPATCH).
inline const char* const recorded[] = {
    "f32 1 00000000c32b490b",
    "f64 1 3f01e535e0000000",
    "f32_in_f64 1 c065692160000000",
    "i32_in_i64 1 ffffffffb7d768bb",
    "u8_in_u64 1 000000000000006d",
    "i64 1 0255c6046f62fbe2",
    "dot_f32 1 00000000c91f2e97",
    "dot_f64 1 3dcebb8e1fd047e0",
    "f32 255 0000000046d5ddd8",
    "f64 255 c0aca35a045b4bee",
    "f32_in_f64 255 40dabbbb0a8c609f",
    "i32_in_i64 255 fffffffa5547ac57",
    "u8_in_u64 255 00000000000080af",
    "i64 255 fde1e7a03c67cd91",
    "dot_f32 255 000000004bd091d3",
    "dot_f64 255 4146e5856e4bb576",
    "f32 256 0000000046d6543e",
    "f64 256 c0aca3568bafa3ee",
    "f32_in_f64 256 40daca87baec609f",
    "i32_in_i64 256 fffffffabc916662",
    "u8_in_u64 256 0000000000008191",
    "i64 256 103ccac04b481512",
    "dot_f32 256 000000004bd091d2",
    "dot_f64 256 4146e5981d2d1df2",
    "f32 257 0000000046d6567f",
    "f64 257 c0aca353c3608bee",
    "f32_in_f64 257 40dacacfdfbc609f",
    "i32_in_i64 257 fffffffa3df7c5ba",
    "u8_in_u64 257 000000000000822b",
    "i64 257 153294c62c3e1d19",
    "dot_f32 257 000000004bd091d2",
    "dot_f64 257 4146e5981d31aaf6",
    "f32 8191 0000000048008b60",
    "f64 8191 c0e401fade5b10dc",
    "f32_in_f64 8191 4100116bf20e521f",
    "i32_in_i64 8191 ffffffc845166ae7",
    "u8_in_u64 8191 00000000000ff31b",
    "i64 8191 d9304d5dea729a05",
    "dot_f32 8191 000000004d34d2cb",
    "dot_f64 8191 c1861b0cb6a7d434",
    "f32 8192 0000000048008b60",
    "f64 8192 c0e401f99ff02ddc",
    "f32_in_f64 8192 4100116bf1fad1fa",
    "i32_in_i64 8192 ffffffc892e04c73",
    "u8_in_u64 8192 00000000000ff34b",
    "i64 8192 f3edaadaaf164918",
    "dot_f32 8192 000000004d34d2cb",
    "dot_f64 8192 c1861b0cb6a77000",
    "f32 8193 0000000048008b61",
    "f64 8193 c0e401f99981f040",
    "f32_in_f64 8193 4100116c0214249a",
    "i32_in_i64 8193 ffffffc8c59dec0e",
    "u8_in_u64 8193 00000000000ff36b",
    "i64 8193 1300740c3a6a2b5b",
    "dot_f32 8193 000000004d34d2cb",
    "dot_f64 8193 c1861b0cd510bbc4",
    "f32 24581 0000000047afbbd7",
    "f64 24581 40fa7c8c2dd9eda4",
    "f32_in_f64 24581 40f5f77ad3cd54be",
    "i32_in_i64 24581 ffffffa5e51eadc2",
    "u8_in_u64 24581 00000000002fd5b8",
    "i64 24581 8165343250b28721",
    "dot_f32 24581 000000004c548604",
    "dot_f64 24581 c17327e8f34a4700",
    "f32 100000 00000000490c4f0e",
    "f64 100000 c1236b3e60c470d6",
    "f32_in_f64 100000 412189e1a522a1fc",
    "i32_in_i64 100000 ffffffbad6f3bd24",
    "u8_in_u64 100000 0000000000c22016",
    "i64 100000 543e674b668d00bf",
    "dot_f32 100000 00000000cd995f5d",
    "dot_f64 100000 c1a4d8187f6bd081",
    "f32 1048583 0000000049949954",
    "f64 1048583 c144fbd8f7b53261",
    "f32_in_f64 1048583 4132932a365f1dea",
    "i32_in_i64 1048583 fffffe19cc42727a",
    "u8_in_u64 1048583 0000000007f803dc",
    "i64 1048583 44c2874949057256",
    "dot_f32 1048583 00000000cf40a0bc",
    "dot_f64 1048583 c1ee3477df95aabc",
};

}  // namespace fusekit::test::pinned
