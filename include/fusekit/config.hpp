// fusekit — fused elementwise layers, sum reductions and a gradient-descent
// trainer for CUDA C++, each with a CPU twin.
// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The configuration every fusekit header starts from: the version, the
/// macros that let one function body compile for the host and the device, and
/// what the toolchain offers (the CUDA toolkit's headers, OpenMP). Every macro
/// is decided from the compiler alone, so the same headers serve nvcc, g++ and
/// clang++ without a generated config file.
///
///     #if FUSEKIT_VERSION >= 100   // 0.1.0 or newer
///
/// `FUSEKIT_HAS_CUDA_HEADERS` may be defined by the caller (0 or 1) to decide
/// by hand whether the toolkit's headers are used; the others are not meant to
/// be set from outside.

/// The version as major, minor and patch, and as one number:
/// major · 10000 + minor · 100 + patch.
#define FUSEKIT_VERSION_MAJOR 0
#define FUSEKIT_VERSION_MINOR 1
#define FUSEKIT_VERSION_PATCH 0
#define FUSEKIT_VERSION (FUSEKIT_VERSION_MAJOR * 10000 + FUSEKIT_VERSION_MINOR * 100 + FUSEKIT_VERSION_PATCH)

// FUSEKIT_HD marks functions that run on the host and on the device. Under a
// host compiler (g++ alone) it is empty, so functors and kernel bodies compile
// and run as plain C++.
#if defined(__CUDACC__)
#define FUSEKIT_HD __host__ __device__
#else
#define FUSEKIT_HD
#endif

// True while compiling device code (the device pass of nvcc).
#if defined(__CUDA_ARCH__)
#define FUSEKIT_DEVICE_PASS 1
#else
#define FUSEKIT_DEVICE_PASS 0
#endif

// Forces inlining of the small functions an elementwise loop is made of: a call
// left in the loop stops gcc from vectorizing it (the CPU backend then runs
// about 10x slower), and gcc's heuristics drop `inline` once a translation
// unit instantiates many of them.
#if defined(__CUDACC__)
#define FUSEKIT_FORCEINLINE __forceinline__
#elif defined(__GNUC__) || defined(__clang__)
#define FUSEKIT_FORCEINLINE inline __attribute__((always_inline))
#else
#define FUSEKIT_FORCEINLINE inline
#endif

// Whether the CUDA toolkit's own headers (cuda_runtime_api.h, cuda_fp16.h) are
// reachable. nvcc always has them. A host compiler has them when the toolkit's
// include directory is on its path; given CCCL's headers alone, fusekit.hpp
// still offers the whole CPU backend, without the half types, and
// fusekit::cuda is only declared, so that using it says what to do.
#if defined(FUSEKIT_HAS_CUDA_HEADERS)
#elif defined(__CUDACC__) || __has_include(<cuda_runtime_api.h>)
#define FUSEKIT_HAS_CUDA_HEADERS 1
#else
#define FUSEKIT_HAS_CUDA_HEADERS 0
#endif

// Whether OpenMP is on (-fopenmp): its `omp simd` pragmas vectorize the CPU
// backend's loops (FUSEKIT_SIMD_LOOP). The threads are fusekit's own
// (detail/core/cpu_pool.hpp) and need no OpenMP.
#if defined(_OPENMP)
#define FUSEKIT_HAS_OPENMP 1
#else
#define FUSEKIT_HAS_OPENMP 0
#endif

// C++17 at least: fusekit uses if constexpr, fold expressions and inline
// variables throughout.
#if !defined(__cplusplus) || (__cplusplus < 201703L && !defined(_MSVC_LANG))
#error "fusekit needs C++17 or newer"
#endif
