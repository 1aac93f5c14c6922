// SPDX-License-Identifier: Apache-2.0
// What a policy carries: the stream (cudaStream_t or cuda::stream_ref), a
// memory resource by reference, and a tuning override. No device needed: the
// resource here hands out host memory and records its calls.
#include <fusekit/policy.hpp>
#include <fusekit/tuning.hpp>

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

namespace {

struct recording_resource {
  struct call {
    bool allocate;
    void* p;
    std::size_t bytes, alignment;
    cudaStream_t stream;
  };
  std::vector<call> calls;
  void* allocate_async(std::size_t bytes, std::size_t alignment, cuda::stream_ref s) {
    void* p = std::aligned_alloc(alignment, (bytes + alignment - 1) / alignment * alignment);
    calls.push_back({true, p, bytes, alignment, s.get()});
    return p;
  }
  void deallocate_async(void* p, std::size_t bytes, std::size_t alignment, cuda::stream_ref s) {
    calls.push_back({false, p, bytes, alignment, s.get()});
    std::free(p);
  }
};

struct not_a_resource {
  void* allocate(std::size_t) { return nullptr; }
};

TEST(Policy, CarriesAnAsyncResourceByReference) {
  recording_resource r;
  auto const stream = reinterpret_cast<cudaStream_t>(std::uintptr_t{0x1234});
  fusekit::cuda const policy{cuda::stream_ref(stream), r};
  EXPECT_EQ(policy.stream, stream);
  EXPECT_FALSE(policy.memory.is_default());
  void* p = policy.memory.allocate(1000, 256, policy.stream);
  policy.memory.deallocate(p, 1000, 256, policy.stream);
  ASSERT_EQ(r.calls.size(), 2u);
  EXPECT_TRUE(r.calls[0].allocate);
  EXPECT_EQ(r.calls[0].bytes, 1000u);
  EXPECT_EQ(r.calls[0].alignment, 256u);
  EXPECT_EQ(r.calls[0].stream, stream);
  EXPECT_FALSE(r.calls[1].allocate);
  EXPECT_EQ(r.calls[1].p, p);
  EXPECT_EQ(r.calls[1].stream, stream);
}

// A synchronous host resource, as the pinned staging buffers take it.
struct recording_host_resource {
  std::vector<std::size_t> allocated, deallocated;
  void* allocate(std::size_t bytes, std::size_t alignment) {
    allocated.push_back(bytes);
    return std::aligned_alloc(alignment, (bytes + alignment - 1) / alignment * alignment);
  }
  void deallocate(void* p, std::size_t bytes, std::size_t) {
    deallocated.push_back(bytes);
    std::free(p);
  }
};

TEST(Policy, CarriesAPinnedResourceByReference) {
  recording_host_resource h;
  fusekit::cuda const policy{nullptr, {}, h};
  EXPECT_TRUE(policy.memory.is_default());
  EXPECT_FALSE(policy.pinned.is_default());
  void* p = policy.pinned.allocate(4096, 256);
  policy.pinned.deallocate(p, 4096, 256);
  EXPECT_EQ(h.allocated, std::vector<std::size_t>{4096});
  EXPECT_EQ(h.deallocated, std::vector<std::size_t>{4096});
  EXPECT_TRUE(fusekit::cuda{}.pinned.is_default());
  static_assert(std::is_constructible_v<fusekit::pinned_resource_ref, recording_host_resource&>);
  static_assert(!std::is_constructible_v<fusekit::pinned_resource_ref, recording_resource&>,
                "a stream-ordered resource is not a pinned host resource");
  static_assert(!std::is_constructible_v<fusekit::pinned_resource_ref, not_a_resource&>);
  // The pipeline's tuning travels with the policy too.
  fusekit::tuning t = fusekit::tuning_for(9, 0);
  EXPECT_EQ(t.pipeline.chunk_bytes, std::int64_t{4} << 20);
  EXPECT_EQ(t.pipeline.depth, 4);
  t.pipeline.depth = 2;
  EXPECT_EQ(policy.with(t).tune.pipeline.depth, 2);
}

TEST(Policy, DefaultsAndWhatConverts) {
  fusekit::cuda const plain{};
  EXPECT_EQ(plain.stream, nullptr);
  EXPECT_TRUE(plain.memory.is_default());
  EXPECT_FALSE(plain.tuned);
  static_assert(std::is_constructible_v<fusekit::memory_resource_ref, recording_resource&>);
  static_assert(!std::is_constructible_v<fusekit::memory_resource_ref, not_a_resource&>,
                "only the cuda::mr async interface is a resource");
  static_assert(std::is_constructible_v<fusekit::cuda, cudaStream_t>);
  static_assert(std::is_constructible_v<fusekit::cuda, cuda::stream_ref>);
}

TEST(Policy, TuningOverrideTravelsWithThePolicy) {
  fusekit::tuning t = fusekit::tuning_for(9, 0);
  EXPECT_EQ(t.elementwise.block_threads, 256);
  EXPECT_EQ(t.train.batch_iterations, 64);
  t.train.batch_iterations = 5;
  fusekit::cuda const tuned = fusekit::cuda{}.with(t);
  EXPECT_TRUE(tuned.tuned);
  EXPECT_EQ(tuned.tune.train.batch_iterations, 5);
  // Every block size is whole warps, at most 1024 threads.
  for (int major : {7, 8, 9, 10}) {
    fusekit::tuning const d = fusekit::tuning_for(major, 0);
    for (int threads : {d.elementwise.block_threads, d.train.max_block_threads, d.train.power_iteration_max_threads}) {
      EXPECT_EQ(threads % 32, 0);
      EXPECT_LE(threads, 1024);
    }
    EXPECT_GE(d.train.batch_iterations, 1);
    // cuBLAS's recommended workspace: 32 MiB from Hopper on, 4 MiB before; the
    // device-free default is the largest, so a workspace sized with it always fits.
    EXPECT_EQ(d.train.cublas_workspace_bytes, std::int64_t{major >= 9 ? 32 : 4} << 20) << "sm_" << major << "0";
    EXPECT_LE(d.train.cublas_workspace_bytes, fusekit::tuning{}.train.cublas_workspace_bytes);
    EXPECT_EQ(d.train.cublas_workspace_bytes % 256, 0);
  }
}

}  // namespace
