// SPDX-License-Identifier: Apache-2.0
// The documentation's snippets, compiled (and run where a device allows), in
// the manner of CUB's *_api.cu tests. Each region between "// snippet: FILE"
// and "// end snippet" appears verbatim in FILE (a page of docs/, README.md, or a public
// header's /// comment); check_snippets.py checks that, so the documentation
// cannot drift from code that compiles. The variables a snippet uses are
// parameters of the function around it.
#include <fusekit/fusekit.cuh>
#include <fusekit/train.cuh>

#include "common/device_buffer.cuh"
#include "common/test_support.hpp"
#include "common/train_problem.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace {

using ::cuda::std::span;
template <class T>
using cmatrix = fusekit::matrix<const T>;

// A stream-ordered resource with the cuda::mr async interface.
struct async_pool {
  void* allocate_async(std::size_t bytes, std::size_t, cuda::stream_ref s) {
    void* p = nullptr;
    FUSEKIT_CUDA_TRY(cudaMallocAsync(&p, bytes, s.get()));
    return p;
  }
  void deallocate_async(void* p, std::size_t, std::size_t, cuda::stream_ref s) { (void)cudaFreeAsync(p, s.get()); }
};

float readme_quick_start(cudaStream_t stream, span<float> out, span<const std::uint8_t> grey, span<const float> weights,
                         span<float> h_out, span<const std::uint8_t> h_grey, span<const float> h_w,
                         span<const float> in, float* d_sum, span<const float> h_in) {
  // clang-format off
  // snippet: docs/guide.md
  auto layer = fusekit::fuse(fusekit::normalize{255.0f}, fusekit::weigh{}, fusekit::tanh_activate{});
  fusekit::transform(fusekit::cuda{stream}, out, layer, grey, weights);  // one kernel, async on `stream`
  fusekit::transform(fusekit::cpu{},        h_out, layer, h_grey, h_w);  // the same functor, threads + SIMD
  fusekit::hidden_layer(fusekit::cuda{stream}, grey, weights, out);      // the same layer, spelled out

  fusekit::reduce_sum(fusekit::cuda{stream}, in, d_sum, fusekit::reduce_algorithm::deterministic);
  float s = fusekit::sum(fusekit::cpu{}, h_in);                           // same bits as the GPU's tree
  // end snippet
  // clang-format on
  return s;
}

float readme_minimum(cudaStream_t stream, span<const float> in, float* d_lo, span<const float> h_in) {
  // clang-format off
  // snippet: docs/guide.md
  float lo;
  fusekit::reduce(fusekit::cuda{stream}, in, d_lo, fusekit::minimum{}, INFINITY);  // the tree
  fusekit::reduce(fusekit::cpu{}, h_in, &lo, fusekit::minimum{}, INFINITY);        // the same bits
  // end snippet
  // clang-format on
  return lo;
}

void readme_device_lambda(span<float> out, span<const std::uint8_t> grey, span<const float> w) {
  // clang-format off
  // snippet: docs/guide.md
  auto layer = fusekit::fuse(fusekit::normalize{255.f}, fusekit::weigh{},
                             fusekit::unary([] __device__ (float x) { return x > 0.f ? x : 0.f; }));
  // end snippet
  // clang-format on
  fusekit::transform(fusekit::cuda{}, out, layer, grey, w);
}

float readme_host_data(cudaStream_t stream, std::size_t n, std::vector<float>& out_copy) {
  // clang-format off
  // snippet: docs/host-data.md
  std::vector<std::uint8_t> grey(n);  std::vector<float> w(n), out(n);
  fusekit::hidden_layer(fusekit::cuda_staged{stream}, grey, w, out);  // host in, host out: one call
  float s = fusekit::sum(fusekit::cuda_staged{stream}, w);            // same bits as on the device
  // end snippet
  // clang-format on
  out_copy = out;
  return s;
}

void functors_device_lambda(span<float> out, span<const std::uint8_t> grey, span<const float> w) {
  // clang-format off
  // snippet: include/fusekit/functors.hpp
  auto layer = fusekit::fuse(fusekit::normalize{255.f}, fusekit::weigh{},
                             fusekit::unary([] __device__ (float x) { return x > 0.f ? x : 0.f; }));
  // end snippet
  // clang-format on
  fusekit::transform(fusekit::cuda{}, out, layer, grey, w);
}

void elementwise_header_gpu(cudaStream_t stream, span<float> out, span<const std::uint8_t> grey,
                            span<const float> weights) {
  // clang-format off
  // snippet: include/fusekit/elementwise_api.hpp
  auto layer = fusekit::fuse(fusekit::normalize{255.0f}, fusekit::weigh{}, fusekit::tanh_activate{});
  fusekit::transform(fusekit::cuda{stream}, out, layer, grey, weights);  // one kernel (fusekit.cuh)
  // end snippet
  // clang-format on
}

void elementwise_header_cpu(span<float> out, span<const std::uint8_t> grey, span<const float> weights) {
  auto layer = fusekit::fuse(fusekit::normalize{255.0f}, fusekit::weigh{}, fusekit::tanh_activate{});
  // clang-format off
  // snippet: include/fusekit/elementwise_api.hpp
  fusekit::transform(fusekit::cpu{},        out, layer, grey, weights);  // threads + SIMD
  // end snippet
  // clang-format on
}

void elementwise_containers(std::size_t n, const std::vector<std::uint8_t>& grey, const std::vector<float>& w) {
  // clang-format off
  // snippet: include/fusekit/elementwise_api.hpp
  std::vector<float> out(n);
  fusekit::transform(fusekit::cpu{}, out, fusekit::make_hidden_layer(), grey, w);   // grey, w: std::vector
  // end snippet
  // clang-format on
}

double reduce_header(cudaStream_t stream, span<const float> in, float* d_sum, span<const float> h_in, float* d_min,
                     std::size_t n) {
  // clang-format off
  // snippet: include/fusekit/reduce_api.hpp
  float s = fusekit::sum(fusekit::cpu{}, h_in);                     // host value, deterministic
  fusekit::reduce_sum(fusekit::cuda{stream}, in, d_sum, fusekit::block_atomic{});
  double d = fusekit::sum(fusekit::cuda{stream}, in, fusekit::run_to_run{},
                          fusekit::accumulate_in<double>{});        // synchronizes
  // end snippet
  // clang-format on
  // clang-format off
  // snippet: include/fusekit/reduce_api.hpp
  fusekit::reduce(fusekit::cuda{stream}, in, d_min, fusekit::minimum{}, INFINITY);
  // end snippet
  // clang-format on
  {
    // clang-format off
    // snippet: include/fusekit/reduce_api.hpp
    std::vector<float> x(n);
    float s = fusekit::sum(fusekit::cpu{}, x);
    // end snippet
    // clang-format on
    d += s;
  }
  return d + s;
}

float reduce_cuh_workspace(cudaStream_t stream, span<const float> in, std::size_t n, span<std::byte> ws) {
  // clang-format off
  // snippet: include/fusekit/reduce.cuh
  std::size_t bytes = fusekit::sum_workspace_bytes<float>(n, fusekit::run_to_run{});
  // ... bytes of device memory in `ws`, allocated once ...
  float s = fusekit::sum(fusekit::cuda{stream}, in, fusekit::run_to_run{}, fusekit::accumulate_in<float>{}, ws);
  // end snippet
  // clang-format on
  return bytes > 0 ? s : s;
}

void train_header(cmatrix<double> X, cmatrix<double> Y, fusekit::matrix<double> W, fusekit::matrix<double> Y_hat) {
  // clang-format off
  // snippet: include/fusekit/train.hpp
  fusekit::gd_options opt;  opt.tolerance = 1e-8;  opt.max_iterations = 100000;
  fusekit::fit_report r = fusekit::fit(fusekit::cpu{}, X, Y, W, opt);
  fusekit::predict(fusekit::cpu{}, X, W, Y_hat);
  // end snippet
  // clang-format on
  (void)r;
}

void train_recommended(cmatrix<double> X, cmatrix<double> Y, fusekit::matrix<double> W) {
  // clang-format off
  // snippet: docs/trainer.md
  fusekit::fit_report r = fusekit::fit(fusekit::cpu{}, X, Y, W, fusekit::gd_options::recommended());
  // end snippet
  // clang-format on
  EXPECT_TRUE(r.all_converged());
}

void train_extras(cmatrix<double> X, cmatrix<double> Y, fusekit::matrix<double> W, fusekit::matrix<double> Y_hat,
                  std::int64_t K, std::int64_t N, fusekit::gd_options o) {
  // clang-format off
  // snippet: include/fusekit/train.hpp
  std::vector<double> s(K, 1.0), b(N);
  o.fit_intercept = true;  o.ridge = 0.1;
  fusekit::fit(fusekit::cpu{}, X, Y, W, o, fusekit::fit_extras<double>{s, b});
  fusekit::predict(fusekit::cpu{}, X, W, b, Y_hat);      // X Wᵀ + b
  // end snippet
  // clang-format on
}

void trainer_md_ridge(cmatrix<double> X, cmatrix<double> Y, fusekit::matrix<double> W, fusekit::matrix<double> Y_hat,
                      std::int64_t K, std::int64_t N) {
  // clang-format off
  // snippet: docs/trainer.md
  fusekit::gd_options o = fusekit::gd_options::recommended();
  o.fit_intercept = true;   // b, not penalized
  o.ridge = 1.0;            // λ‖W‖², Ridge(alpha=1.0)
  std::vector<double> s(K, 1.0), b(N);   // sample weights, intercepts
  fusekit::fit(fusekit::cpu{}, X, Y, W, o, fusekit::fit_extras<double>{s, b});
  fusekit::predict(fusekit::cpu{}, X, W, b, Y_hat);   // X Wᵀ + b
  // end snippet
  // clang-format on
}

void train_cuh_workspace(cudaStream_t stream, std::int64_t K, std::int64_t L, std::int64_t N,
                         const fusekit::gd_options& options, cmatrix<float> X, cmatrix<float> Y,
                         fusekit::matrix<float> W, span<std::byte> ws) {
  // clang-format off
  // snippet: include/fusekit/train.cuh
  std::size_t bytes = fusekit::fit_workspace_bytes<float>(K, L, N, options);
  // ... bytes of device memory in `ws`, allocated once ...
  fusekit::fit_report r = fusekit::fit(fusekit::cuda{stream}, X, Y, W, options, ws);
  // end snippet
  // clang-format on
  (void)bytes;
  (void)r;
}

void linear_association_header(cudaStream_t stream, std::int64_t L, std::int64_t N, cmatrix<double> X,
                               cmatrix<double> Y, fusekit::matrix<double> Y_hat, cmatrix<float> d_X,
                               cmatrix<float> d_Y) {
  // clang-format off
  // snippet: include/fusekit/linear_association.hpp
  fusekit::linear_association<double> net(L, N);            // W: N × L zeros, on the host
  net.options().max_iterations = 1000;                       // options: gd_options::recommended()
  fusekit::fit_report r = net.fit(X, Y);                     // X: K × L, Y: K × N
  net.predict(X, Y_hat);                                     // Y_hat = X Wᵀ + b
  // end snippet
  // clang-format on
  (void)r;
  // clang-format off
  // snippet: include/fusekit/linear_association.hpp
  fusekit::linear_association<float, fusekit::cuda> gpu_net(L, N, fusekit::gd_options::recommended(),
                                                              fusekit::cuda{stream});
  gpu_net.fit(d_X, d_Y);                                     // device views; include <fusekit/train.cuh>
  // end snippet
  // clang-format on
}

void tuning_header(cudaStream_t stream, cmatrix<float> X, cmatrix<float> Y, fusekit::matrix<float> W) {
  // clang-format off
  // snippet: include/fusekit/tuning.hpp
  fusekit::tuning t = fusekit::tuning_for(9, 0);
  t.train.batch_iterations = 16;
  fusekit::fit(fusekit::cuda{stream}.with(t), X, Y, W);
  // end snippet
  // clang-format on
}

void policy_header(cudaStream_t stream, async_pool& my_pool) {
  // clang-format off
  // snippet: include/fusekit/policy.hpp
  fusekit::cuda gpu{stream};                  // temporaries from fusekit's pool, in stream order
  fusekit::cuda pooled{stream, my_pool};      // any cuda::mr-style async resource, e.g. an rmm pool
  fusekit::cpu host{4};                       // the calling thread and up to three helpers
  // end snippet
  // clang-format on
  (void)gpu;
  (void)pooled;
  (void)host;
}

// The CPU snippets run here without a device; the others compile here and run on a GPU.
TEST(Snippets, CpuSnippetsRun) {
  std::size_t const n = 1000;
  std::vector<std::uint8_t> grey(n, 200);
  std::vector<float> w(n, 0.75f);
  elementwise_containers(n, grey, w);
  std::vector<float> out(n);
  elementwise_header_cpu(span<float>(out), span<const std::uint8_t>(grey), span<const float>(w));
  EXPECT_NEAR(out[0], std::tanh(200.0 / 255.0 * 0.75), 1e-6);
  auto const p = fusekit::test::make_problem<double>(50, 4, 2, 1, true, 0.0);
  std::vector<double> W(8), Y_hat(100);
  train_header(cmatrix<double>(p.X.data(), 50, 4), cmatrix<double>(p.Y.data(), 50, 2),
               fusekit::matrix<double>(W.data(), 2, 4), fusekit::matrix<double>(Y_hat.data(), 50, 2));
  for (std::size_t i = 0; i < Y_hat.size(); ++i) { EXPECT_NEAR(Y_hat[i], p.Y[i], 1e-3); }
  train_recommended(cmatrix<double>(p.X.data(), 50, 4), cmatrix<double>(p.Y.data(), 50, 2),
                    fusekit::matrix<double>(W.data(), 2, 4));
  // Y = X W_trueᵀ exactly: with an intercept it fits b = 0 and Y_hat = Y.
  train_extras(cmatrix<double>(p.X.data(), 50, 4), cmatrix<double>(p.Y.data(), 50, 2),
               fusekit::matrix<double>(W.data(), 2, 4), fusekit::matrix<double>(Y_hat.data(), 50, 2), 50, 2,
               fusekit::gd_options::recommended());
  for (std::size_t i = 0; i < Y_hat.size(); ++i) { EXPECT_NEAR(Y_hat[i], p.Y[i], 0.05 * (1 + std::fabs(p.Y[i]))); }
  trainer_md_ridge(cmatrix<double>(p.X.data(), 50, 4), cmatrix<double>(p.Y.data(), 50, 2),
                   fusekit::matrix<double>(W.data(), 2, 4), fusekit::matrix<double>(Y_hat.data(), 50, 2), 50, 2);
  for (std::size_t i = 0; i < Y_hat.size(); ++i) { EXPECT_NEAR(Y_hat[i], p.Y[i], 0.5 * (1 + std::fabs(p.Y[i]))); }
}

TEST(Snippets, GpuSnippetsRun) {
  FUSEKIT_REQUIRE_CUDA_DEVICE();
  std::size_t const n = 4096;
  std::vector<std::uint8_t> grey(n, 100);
  std::vector<float> w(n, 0.5f), h_out(n);
  fusekit::test::device_buffer<std::uint8_t> d_grey(grey);
  fusekit::test::device_buffer<float> d_w(w), d_out(n), d_sum(1), d_min(1);
  float const s = readme_quick_start(nullptr, d_out.view(), d_grey.cview(), d_w.cview(), span<float>(h_out),
                                     span<const std::uint8_t>(grey), span<const float>(w), d_w.cview(), d_sum.data(),
                                     span<const float>(w));
  EXPECT_EQ(s, 0.5f * static_cast<float>(n));
  EXPECT_EQ(readme_minimum(nullptr, d_w.cview(), d_min.data(), span<const float>(w)), 0.5f);
  readme_device_lambda(d_out.view(), d_grey.cview(), d_w.cview());
  functors_device_lambda(d_out.view(), d_grey.cview(), d_w.cview());
  elementwise_header_gpu(nullptr, d_out.view(), d_grey.cview(), d_w.cview());
  (void)reduce_header(nullptr, d_w.cview(), d_sum.data(), span<const float>(w), d_min.data(), n);
  std::size_t const bytes = fusekit::sum_workspace_bytes<float>(n, fusekit::reduce_algorithm::run_to_run);
  fusekit::test::device_buffer<std::byte> ws(bytes);
  EXPECT_EQ(reduce_cuh_workspace(nullptr, d_w.cview(), n, span<std::byte>(ws.data(), bytes)),
            0.5f * static_cast<float>(n));
  async_pool pool;
  policy_header(nullptr, pool);
  std::vector<float> layer_out;
  EXPECT_EQ(readme_host_data(nullptr, 5000, layer_out), 0.0f);  // zeros in: tanh(0) = 0, Σ 0 = 0
  EXPECT_EQ(layer_out, std::vector<float>(5000, 0.0f));
}

}  // namespace
