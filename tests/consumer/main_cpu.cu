// SPDX-License-Identifier: Apache-2.0
// main.cpp as a CUDA source: nvcc's own front end then reads the CPU backend
// (it drops the attributes of lambdas, and without -O nothing is inlined that
// is not forced), as in a user's `nvcc file.cu`.
#include "main.cpp"
