// SPDX-License-Identifier: Apache-2.0
// Sums on the GPU: every algorithm against a long-double reference, the
// deterministic tree against the CPU backend bit for bit (50 sizes, repeated
// runs, different grids), a graph-captured workspace call, and n = 2^31 + 17.
// Argument validation for the cuda policy runs without a device.
#include <fusekit/fusekit.cuh>

#include "common/device_buffer.cuh"
#include "common/test_support.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <algorithm>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace {

// A thread block is a team (detail/team/team.hpp): every member of the contract.
static_assert(fusekit::detail::is_team_v<fusekit::detail::block_team>);

using ::cuda::std::span;
using fusekit::reduce_algorithm;
using fusekit::test::device_buffer;
using fusekit::test::signed_values;
using fusekit::test::uniform01;

template <class Acc, class T>
Acc gpu_sum(const device_buffer<T>& d, reduce_algorithm a) {
  device_buffer<Acc> out(1);
  fusekit::reduce_sum(fusekit::cuda{}, d.cview(), out.data(), a);
  return out.to_host()[0];
}

// Bound factors from reduce_api.hpp's table, with the device's block and SM counts.
template <class Acc>
long double gpu_bound(reduce_algorithm a, std::size_t n, long double abs_sum) {
  long double const u = std::ldexp(1.0L, -std::numeric_limits<Acc>::digits);
  int sms = fusekit::detail::current_sm_count();
  long double const threads = static_cast<long double>(sms) * 2048;
  long double factor = 0;
  switch (a) {
    case reduce_algorithm::naive_atomic:
      factor = static_cast<long double>(n);
      break;
    case reduce_algorithm::block_atomic:
      factor = n / threads + 10 + 2.0L * sms + 1;
      break;
    case reduce_algorithm::run_to_run:
      factor = n / threads + std::log2(static_cast<double>(n) + 2) + 1;
      break;
    case reduce_algorithm::deterministic:
      factor = 40.0L * (fusekit::detail::tree_levels(static_cast<std::int64_t>(n)) + 1);
      break;
  }
  return factor * u * abs_sum;
}

// Whether |got − exact| ≤ bound can fail for got = 0.
bool bound_can_fail(long double bound, long double exact) { return bound < fabsl(exact); }

template <class T, class Acc>
void check_algorithms(std::size_t n, std::uint32_t seed) {
  auto const x = signed_values<T>(n, seed);
  long double abs_sum = 0;
  long double const exact = fusekit::test::exact_sum(x, &abs_sum);
  device_buffer<T> d(x);
  for (auto a : fusekit::all_reduce_algorithms) {
    long double const bound = gpu_bound<Acc>(a, n, abs_sum);
    // A bound checks something only where a wrong answer fails it: 0 (a kernel
    // that wrote nothing) must lie outside. naive_atomic's (n − 1)·u·S in float
    // exceeds a signed sum from n ≈ 1e5 on; NaiveAtomicBoundThatCanFail covers it there.
    if (!bound_can_fail(bound, exact)) { continue; }
    Acc const got = gpu_sum<Acc>(d, a);
    EXPECT_LE(fabsl(static_cast<long double>(got) - exact), bound) << fusekit::to_string(a) << " n=" << n;
  }
}

TEST(GpuSum, EveryAlgorithmWithinItsBound) {
  FUSEKIT_REQUIRE_CUDA_DEVICE();
  for (std::size_t n : {1, 1000, 8193, 1000003, 1 << 24}) {
    check_algorithms<float, float>(n, 1);
    check_algorithms<float, double>(n, 2);
    check_algorithms<double, double>(n, 3);
    check_algorithms<__half, float>(n, 4);
  }
}

// n uniform floats in [0, 1), and their exact sum.
std::vector<float> uniform_floats(std::size_t n, unsigned seed, long double& exact) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  std::vector<float> x(n);
  exact = 0;
  for (auto& v : x) {
    v = u(gen);
    exact += v;
  }
  return x;
}

TEST(GpuSum, UniformFloatWithinTheDocumentedBound) {
  FUSEKIT_REQUIRE_CUDA_DEVICE();
  std::size_t const n = std::size_t{1} << 26;
  long double exact = 0;
  device_buffer<float> d(uniform_floats(n, 5, exact));
  // The documented bound (positive data: S = the exact sum), not a typical error:
  // block_atomic's atomics run in an order that changes run to run, and a fixed
  // threshold such as 1e-6 is exceeded by some orders.
  for (auto a : {reduce_algorithm::block_atomic, reduce_algorithm::run_to_run, reduce_algorithm::deterministic}) {
    ASSERT_TRUE(bound_can_fail(gpu_bound<float>(a, n, exact), exact)) << fusekit::to_string(a);
    float const s = gpu_sum<float>(d, a);
    EXPECT_LE(fabsl(s - exact), gpu_bound<float>(a, n, exact)) << fusekit::to_string(a);
  }
}

// naive_atomic in float where its documented bound, (n − 1)·u·S, is a check:
// positive values (S = the sum) and n < 2^23, so the bound stays under half the sum.
TEST(GpuSum, NaiveAtomicBoundThatCanFail) {
  FUSEKIT_REQUIRE_CUDA_DEVICE();
  for (std::size_t n : {std::size_t{1000003}, std::size_t{1} << 22}) {
    long double exact = 0;
    device_buffer<float> d(uniform_floats(n, 6, exact));
    long double const bound = gpu_bound<float>(reduce_algorithm::naive_atomic, n, exact);
    ASSERT_LE(bound, exact / 2) << "n=" << n;
    float const s = gpu_sum<float>(d, reduce_algorithm::naive_atomic);
    EXPECT_LE(fabsl(s - exact), bound) << "n=" << n;
  }
}

TEST(GpuSum, IntegersExactAndEmptyIsZero) {
  FUSEKIT_REQUIRE_CUDA_DEVICE();
  std::vector<std::int32_t> ints(1000001);
  std::int64_t want = 0;
  for (std::size_t i = 0; i < ints.size(); ++i) {
    ints[i] = static_cast<std::int32_t>((i % 3 ? -1 : 2) * static_cast<std::int64_t>(i) * 1777);
    want += ints[i];
  }
  std::vector<std::uint8_t> grey = fusekit::test::make_greyscales<std::uint8_t>(777777, 3);
  std::uint64_t want8 = 0;
  for (auto g : grey) { want8 += g; }
  device_buffer<std::int32_t> d(ints);
  device_buffer<std::uint8_t> d8(grey);
  device_buffer<float> empty(0);
  for (auto a : fusekit::all_reduce_algorithms) {
    EXPECT_EQ((gpu_sum<std::int64_t>(d, a)), want) << fusekit::to_string(a);
    EXPECT_EQ((gpu_sum<std::uint64_t>(d8, a)), want8) << fusekit::to_string(a);
    EXPECT_EQ((gpu_sum<float>(empty, a)), 0.0f) << fusekit::to_string(a);
  }
}

TEST(GpuSum, SpecialValuesPropagate) {
  FUSEKIT_REQUIRE_CUDA_DEVICE();
  std::vector<float> x(50000, 1.0f);
  x[777] = INFINITY;
  device_buffer<float> inf(x);
  x[49999] = -INFINITY;
  device_buffer<float> nan(x);
  for (auto a : fusekit::all_reduce_algorithms) {
    EXPECT_EQ((gpu_sum<float>(inf, a)), INFINITY) << fusekit::to_string(a);
    EXPECT_TRUE(fusekit::test::is_nan(gpu_sum<float>(nan, a))) << fusekit::to_string(a);
  }
}

std::uint64_t bits(double v) {
  std::uint64_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

// Every grid fixed at `grid` blocks: cuda_reduce's grids, injected as CUB
// injects its launcher (see detail::device_grids).
struct fixed_grids {
  int grid;
  template <class Kernel>
  int flat(Kernel, std::int64_t, int) const {
    return grid;
  }
  template <class Kernel>
  int tree_level(Kernel, std::int64_t) const {
    return grid;
  }
};

TEST(GpuDeterministic, BitIdenticalToCpuRunToRunAndAcrossGrids) {
  FUSEKIT_REQUIRE_CUDA_DEVICE();
  std::mt19937 gen(77);
  std::uniform_int_distribution<std::size_t> size(0, 3000000);
  for (int trial = 0; trial < 50; ++trial) {
    std::size_t const n = trial < 5 ? std::size_t{8192} * (trial + 1) - 1 : size(gen);
    auto const x = signed_values<float>(n, static_cast<std::uint32_t>(trial));
    float const cpu = fusekit::sum(fusekit::cpu{}, span<const float>(x), reduce_algorithm::deterministic);
    double const cpu_d = fusekit::sum(fusekit::cpu{}, span<const float>(x), reduce_algorithm::deterministic,
                                      fusekit::accumulate_in<double>{});
    device_buffer<float> d(x);
    ASSERT_EQ(bits(gpu_sum<float>(d, reduce_algorithm::deterministic)), bits(cpu)) << "n=" << n;
    ASSERT_EQ(bits(gpu_sum<double>(d, reduce_algorithm::deterministic)), bits(cpu_d)) << "n=" << n;
  }
  // Ten repeats and five grid shapes, one size with three tree levels.
  std::size_t const n = std::size_t{8192} * 8192 + 12345;
  auto const x = signed_values<float>(n, 99);
  float const cpu = fusekit::sum(fusekit::cpu{}, span<const float>(x), reduce_algorithm::deterministic);
  device_buffer<float> d(x);
  device_buffer<float> out(1);
  for (int run = 0; run < 10; ++run) { ASSERT_EQ(bits(gpu_sum<float>(d, reduce_algorithm::deterministic)), bits(cpu)); }
  for (int grid : {1, 3, 64, 1000, 100000}) {
    fusekit::detail::cuda_reduce(fusekit::cuda{}, fusekit::detail::array_source<float, float>{d.data()},
                                 static_cast<std::int64_t>(n), out.data(), fusekit::deterministic{}, fusekit::plus{},
                                 0.0f, nullptr, fixed_grids{grid});
    ASSERT_EQ(bits(out.to_host()[0]), bits(cpu)) << "grid=" << grid;
  }
}

TEST(GpuSum, GraphCapturedWorkspaceCall) {
  FUSEKIT_REQUIRE_CUDA_DEVICE();
  std::size_t const n = 5000000;
  auto const x = signed_values<float>(n, 8);
  device_buffer<float> d(x);
  device_buffer<float> out(2);
  cudaStream_t stream = nullptr;
  FUSEKIT_CUDA_TRY(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  std::size_t const bytes = std::max(fusekit::reduce_sum_workspace_bytes<float>(n, reduce_algorithm::run_to_run),
                                     fusekit::reduce_sum_workspace_bytes<float>(n, reduce_algorithm::deterministic));
  ASSERT_GT(bytes, 0u);
  device_buffer<std::byte> ws(bytes);
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  FUSEKIT_CUDA_TRY(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  fusekit::reduce_sum(fusekit::cuda{stream}, d.cview(), out.data(), reduce_algorithm::run_to_run, ws.view());
  fusekit::reduce_sum(fusekit::cuda{stream}, d.cview(), out.data() + 1, reduce_algorithm::deterministic, ws.view());
  FUSEKIT_CUDA_TRY(cudaStreamEndCapture(stream, &graph));
  FUSEKIT_CUDA_TRY(cudaGraphInstantiate(&exec, graph, 0));
  FUSEKIT_CUDA_TRY(cudaMemsetAsync(out.data(), 0xff, 2 * sizeof(float), stream));
  FUSEKIT_CUDA_TRY(cudaGraphLaunch(exec, stream));
  FUSEKIT_CUDA_TRY(cudaStreamSynchronize(stream));
  auto const got = out.to_host();
  float const cpu = fusekit::sum(fusekit::cpu{}, span<const float>(x), reduce_algorithm::deterministic);
  EXPECT_EQ(got[1], cpu);
  EXPECT_NEAR(got[0], cpu, 1e-4 * std::fabs(cpu) + 1e-2);
  FUSEKIT_CUDA_TRY(cudaGraphExecDestroy(exec));
  FUSEKIT_CUDA_TRY(cudaGraphDestroy(graph));
  FUSEKIT_CUDA_TRY(cudaStreamDestroy(stream));
}

__global__ void fill_pattern(std::int32_t* x, std::int64_t n) {
  for (std::int64_t i = fusekit::detail::global_thread_id(); i < n; i += fusekit::detail::grid_stride()) {
    x[i] = static_cast<std::int32_t>(i % 1000) - 499;
  }
}

// More than 2^31 values (8.6 GB): 64-bit indices in every algorithm but the naive one.
TEST(GpuSum, MoreThanTwoToThe31Values) {
  FUSEKIT_REQUIRE_CUDA_DEVICE();
  std::int64_t const n = (std::int64_t{1} << 31) + 17;
  std::size_t free_bytes = 0, total = 0;
  FUSEKIT_CUDA_TRY(cudaMemGetInfo(&free_bytes, &total));
  if (free_bytes < static_cast<std::size_t>(n) * 4 + (std::size_t{1} << 30)) {
    GTEST_SKIP() << "needs 10 GB of device memory";
  }
  device_buffer<std::int32_t> d(static_cast<std::size_t>(n));
  fill_pattern<<<1024, 256>>>(d.data(), n);
  FUSEKIT_CHECK_LAUNCH();
  // Σ over whole periods of (i % 1000) − 499 is 500 per period; then the partial period.
  std::int64_t want = (n / 1000) * 500;
  for (std::int64_t r = 0; r < n % 1000; ++r) { want += r - 499; }
  for (auto a : {reduce_algorithm::block_atomic, reduce_algorithm::run_to_run, reduce_algorithm::deterministic}) {
    EXPECT_EQ((gpu_sum<std::int64_t>(d, a)), want) << fusekit::to_string(a);
    double const s = fusekit::sum(fusekit::cuda{}, span<const std::int32_t>(d.data(), d.size()), a);
    EXPECT_EQ(s, static_cast<double>(want)) << fusekit::to_string(a);
  }
}

TEST(GpuTransformReduce, DotProductAgainstCpu) {
  FUSEKIT_REQUIRE_CUDA_DEVICE();
  std::size_t const n = 2000003;
  auto const a = signed_values<double>(n, 31);
  auto const b = signed_values<double>(n, 32);
  device_buffer<double> da(a), db(b);
  double const cpu =
      fusekit::transform_reduce(fusekit::cpu{}, fusekit::weigh{}, span<const double>(a), span<const double>(b));
  for (auto alg : fusekit::all_reduce_algorithms) {
    double const gpu = fusekit::transform_reduce(fusekit::cuda{}, alg, fusekit::accumulate_in<double>{},
                                                 fusekit::weigh{}, da.cview(), db.cview());
    EXPECT_NEAR(gpu, cpu, 1e-9 * static_cast<double>(n)) << fusekit::to_string(alg);
  }
  // Deterministic: the same order; a·b is one rounded product on both sides.
  double const det = fusekit::transform_reduce(fusekit::cuda{}, fusekit::weigh{}, da.cview(), db.cview());
  EXPECT_EQ(bits(det), bits(cpu));
}

// The rule of reduce_api.hpp: the tree's additions never fuse with an op's product,
// so a·b sums to the CPU's bits; a·b + c inside the op is fused by nvcc (its
// default --fmad=true) and not by the host build, so the GPU sums fma(a, b, c);
// written with mul_rn/add_rn it is two roundings on both sides again.
struct multiply_add {
  template <class T>
  FUSEKIT_HD T operator()(T a, T b, T c) const {
    return a * b + c;
  }
};
struct multiply_add_rn {
  template <class T>
  FUSEKIT_HD T operator()(T a, T b, T c) const {
    return fusekit::add_rn(fusekit::mul_rn(a, b), c);
  }
};

TEST(GpuTransformReduce, MultiplyAddRuleOfTheDeterministicSum) {
  FUSEKIT_REQUIRE_CUDA_DEVICE();
  std::size_t const n = 1000003;
  auto const a = signed_values<float>(n, 41);
  auto const b = signed_values<float>(n, 42);
  auto const c = signed_values<float>(n, 43);
  device_buffer<float> da(a), db(b), dc(c);
  std::vector<float> fused(n);
  for (std::size_t i = 0; i < n; ++i) { fused[i] = std::fma(a[i], b[i], c[i]); }
  float const cpu_fused = fusekit::sum(fusekit::cpu{}, span<const float>(fused));
  float const cpu_rn = fusekit::transform_reduce(fusekit::cpu{}, multiply_add_rn{}, span<const float>(a),
                                                 span<const float>(b), span<const float>(c));
  ASSERT_NE(bits(cpu_fused), bits(cpu_rn)) << "the data must tell one rounding from two";
  float const gpu_plain =
      fusekit::transform_reduce(fusekit::cuda{}, multiply_add{}, da.cview(), db.cview(), dc.cview());
  float const gpu_rn =
      fusekit::transform_reduce(fusekit::cuda{}, multiply_add_rn{}, da.cview(), db.cview(), dc.cview());
  EXPECT_EQ(bits(gpu_plain), bits(cpu_fused)) << "nvcc fuses a * b + c inside the op";
  EXPECT_EQ(bits(gpu_rn), bits(cpu_rn)) << "mul_rn/add_rn: the same bits as the CPU";
}

// Validation needs no device: the cuda policy rejects before launching.
TEST(CudaSumArguments, RejectedBeforeAnyLaunch) {
  alignas(16) static float storage[64] = {};
  span<const float> const in(storage, 32);
  auto* misaligned = reinterpret_cast<double*>(reinterpret_cast<unsigned char*>(storage + 40) + 4);
  for (auto a : fusekit::all_reduce_algorithms) {
    EXPECT_THROW(fusekit::reduce_sum(fusekit::cuda{}, in, misaligned, a), fusekit::invalid_argument);
    EXPECT_THROW(fusekit::reduce_sum(fusekit::cuda{}, in, storage + 3, a), fusekit::invalid_argument);  // overlaps in
    EXPECT_THROW(
        fusekit::reduce_sum(fusekit::cuda{}, span<const float>(static_cast<const float*>(nullptr), 8), storage + 40, a),
        fusekit::invalid_argument);
  }
  try {
    fusekit::reduce_sum(fusekit::cuda{}, in, misaligned, reduce_algorithm::block_atomic);
  } catch (const fusekit::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("out is not aligned"), std::string::npos) << e.what();
  }
  // A workspace too small is rejected before anything runs (the tree's size needs no device).
  static std::vector<float> const large(100000, 1.0f);
  std::byte small[64];
  float result = 0;
  try {
    fusekit::reduce_sum(fusekit::cuda{}, span<const float>(large), &result, reduce_algorithm::deterministic,
                        span<std::byte>(small, sizeof small));
    ADD_FAILURE() << "small workspace not rejected";
  } catch (const fusekit::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("workspace has 64 bytes but needs"), std::string::npos) << e.what();
  }
  // A run-time algorithm outside the enum is rejected by the size functions as
  // by the calls, naming the function (it was sized as 0 bytes before).
  auto const bogus = static_cast<reduce_algorithm>(7);
  for (auto* const size_of :
       {+[](reduce_algorithm a) { return fusekit::sum_workspace_bytes<float>(100000, a); },
        +[](reduce_algorithm a) { return fusekit::reduce_sum_workspace_bytes<float>(100000, a); }}) {
    try {
      std::size_t const bytes = size_of(bogus);
      ADD_FAILURE() << "algorithm 7 sized as " << bytes << " bytes";
    } catch (const fusekit::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("workspace_bytes: algorithm is 7, not a reduce_algorithm"),
                std::string::npos)
          << e.what();
    }
  }
  // The tree's size is arithmetic, and the same for the tag and the value.
  EXPECT_EQ(fusekit::sum_workspace_bytes<float>(100000, fusekit::deterministic{}),
            fusekit::sum_workspace_bytes<float>(100000, reduce_algorithm::deterministic));
  EXPECT_GT(fusekit::sum_workspace_bytes<float>(100000), fusekit::reduce_sum_workspace_bytes<float>(100000));
  // A workspace that holds out is rejected: the tree would overwrite the result.
  alignas(256) static std::byte workspace[4096];
  auto* out_in_workspace = reinterpret_cast<float*>(workspace + 512);
  for (auto a : fusekit::all_reduce_algorithms) {
    try {
      fusekit::reduce_sum(fusekit::cuda{}, in, out_in_workspace, a, span<std::byte>(workspace, sizeof workspace));
      ADD_FAILURE() << "workspace overlapping out not rejected";
    } catch (const fusekit::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("workspace overlaps out"), std::string::npos) << e.what();
    }
  }
}

// ---- reduce with an operation ------------------------------------------------

struct largest_magnitude_gpu {
  FUSEKIT_HD float operator()(float a, float b) const { return fabsf(b) > fabsf(a) ? b : a; }
};

TEST(GpuReduce, MinMaxAndACallersOpMatchTheCpuBitForBit) {
  FUSEKIT_REQUIRE_CUDA_DEVICE();
  for (std::size_t n : {std::size_t{1}, std::size_t{8193}, std::size_t{1} << 20, (std::size_t{1} << 22) + 5}) {
    std::vector<float> x(n);
    for (std::size_t i = 0; i < n; ++i) { x[i] = static_cast<float>((i * 7919) % n) * (i % 2 ? -1.0f : 1.0f); }
    device_buffer<float> d(x);
    device_buffer<float> out(1);
    for (auto a : {reduce_algorithm::run_to_run, reduce_algorithm::deterministic}) {
      float cpu = 0;
      fusekit::reduce(fusekit::cpu{}, span<const float>(x), &cpu, fusekit::minimum{}, INFINITY, a);
      fusekit::reduce(fusekit::cuda{}, span<const float>(d.data(), n), out.data(), fusekit::minimum{}, INFINITY, a);
      EXPECT_EQ(out.to_host()[0], cpu) << n << " " << fusekit::to_string(a);
      fusekit::reduce(fusekit::cpu{}, span<const float>(x), &cpu, largest_magnitude_gpu{}, 0.0f, a);
      fusekit::reduce(fusekit::cuda{}, span<const float>(d.data(), n), out.data(), largest_magnitude_gpu{}, 0.0f, a);
      EXPECT_EQ(out.to_host()[0], cpu) << n << " " << fusekit::to_string(a);
    }
  }
}

TEST(GpuReduce, IntegerMinMaxWithAtomics) {
  FUSEKIT_REQUIRE_CUDA_DEVICE();
  std::vector<std::int32_t> x(1000003);
  std::mt19937 gen(11);
  for (auto& v : x) { v = std::uniform_int_distribution<std::int32_t>(-2000000000, 2000000000)(gen); }
  device_buffer<std::int32_t> d(x);
  device_buffer<std::int64_t> lo(1), hi(1);
  for (auto a : {reduce_algorithm::naive_atomic, reduce_algorithm::block_atomic, reduce_algorithm::run_to_run,
                 reduce_algorithm::deterministic}) {
    fusekit::reduce(fusekit::cuda{}, span<const std::int32_t>(d.data(), x.size()), lo.data(), fusekit::minimum{},
                    std::numeric_limits<std::int64_t>::max(), a);
    fusekit::reduce(fusekit::cuda{}, span<const std::int32_t>(d.data(), x.size()), hi.data(), fusekit::maximum{},
                    std::numeric_limits<std::int64_t>::lowest(), a);
    EXPECT_EQ(lo.to_host()[0], *std::min_element(x.begin(), x.end())) << fusekit::to_string(a);
    EXPECT_EQ(hi.to_host()[0], *std::max_element(x.begin(), x.end())) << fusekit::to_string(a);
  }
}

TEST(GpuReduce, FloatMinWithAnAtomicAlgorithmIsRejectedBeforeAnyLaunch) {
  // No device needed: the check runs first.
  float* out = reinterpret_cast<float*>(std::uintptr_t{256});
  const float* in = reinterpret_cast<const float*>(std::uintptr_t{4096});
  EXPECT_THROW(fusekit::reduce(fusekit::cuda{}, span<const float>(in, 10), out, fusekit::minimum{}, INFINITY,
                               reduce_algorithm::block_atomic),
               fusekit::invalid_argument);
}

}  // namespace
