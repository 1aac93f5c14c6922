// SPDX-License-Identifier: Apache-2.0
// cpu_inlining.cpp compiled by nvcc, for check_dispatch.cmake: in a .cu file too,
// every AVX2 dispatch entry of the CPU backend holds its loop in AVX2 code.
#include "cpu_inlining.cpp"
