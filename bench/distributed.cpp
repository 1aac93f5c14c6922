// SPDX-License-Identifier: Apache-2.0
// fusekit::mpi against the rank count: the sum (deterministic, and cub with
// MPI_Allreduce) and the trainer (Gram: one reduction of A and B; direct: one
// reduction of the gradient per iteration), at sizes where communication
// matters. Run it under mpirun with 1, 2, 4, ... ranks; rank 0 prints CSV:
//
//   mpirun -np 4 distributed_bench [--help] [--sizes=2^16,2^20,2^24] [--repeats=R]
//
// task,algorithm,ranks,n,seconds   (median of R timed runs, after one warm-up;
// every rank starts together after a barrier, and the time is the slowest rank's)
#include <fusekit/mpi.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

float value_at(std::uint64_t i) {
  std::uint64_t z = i * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return static_cast<float>((z ^ (z >> 31)) >> 40) * 0x1p-24f;
}

// Median over `repeats` of the slowest rank's time of `work`.
template <class Work>
double timed(int repeats, const Work& work) {
  work();
  std::vector<double> samples;
  for (int r = 0; r < repeats; ++r) {
    MPI_Barrier(MPI_COMM_WORLD);
    auto const t0 = std::chrono::steady_clock::now();
    work();
    double mine = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), slowest = 0;
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    samples.push_back(slowest);
  }
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

std::int64_t parse_size(const std::string& s) {
  if (s.rfind("2^", 0) == 0) { return std::int64_t{1} << std::atoi(s.c_str() + 2); }
  return std::atoll(s.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  for (int a = 1; a < argc; ++a) {
    if (std::strcmp(argv[a], "--help") == 0) {
      std::printf(
          "usage: mpirun -np P distributed_bench [--sizes=LIST] [--repeats=R]\n"
          "  --sizes   sum sizes, numbers or 2^k, comma-separated (default 2^16,2^20,2^24)\n"
          "  --repeats timed runs per case, median reported (default 7)\n"
          "prints CSV on rank 0: task,algorithm,ranks,n,seconds\n");
      return 0;
    }
  }
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  std::vector<std::int64_t> sizes = {std::int64_t{1} << 16, std::int64_t{1} << 20, std::int64_t{1} << 24};
  int repeats = 7;
  for (int a = 1; a < argc; ++a) {
    std::string const arg = argv[a];
    if (arg.rfind("--sizes=", 0) == 0) {
      sizes.clear();
      std::string list = arg.substr(8);
      for (std::size_t at = 0; at <= list.size();) {
        std::size_t const comma = std::min(list.find(',', at), list.size());
        sizes.push_back(parse_size(list.substr(at, comma - at)));
        at = comma + 1;
      }
    } else if (arg.rfind("--repeats=", 0) == 0) {
      repeats = std::max(1, std::atoi(arg.c_str() + 10));
    }
  }
  fusekit::mpi const world{MPI_COMM_WORLD};
  if (rank == 0) { std::printf("task,algorithm,ranks,n,seconds\n"); }

  for (std::int64_t n : sizes) {
    std::int64_t const begin = n * rank / ranks, end = n * (rank + 1) / ranks;
    std::vector<float> shard(static_cast<std::size_t>(end - begin));
    for (std::int64_t i = begin; i < end; ++i) {
      shard[static_cast<std::size_t>(i - begin)] = value_at(static_cast<std::uint64_t>(i));
    }
    for (auto a : {fusekit::reduce_algorithm::deterministic, fusekit::reduce_algorithm::run_to_run}) {
      float sink = 0;
      double const s = timed(repeats, [&] { sink += fusekit::sum(world, shard, a); });
      if (rank == 0) {
        std::printf("sum,%s,%d,%lld,%.6e\n", fusekit::to_string(a), ranks, static_cast<long long>(n), s);
      }
      if (sink == -1.0f) { std::printf("?\n"); }
    }
  }

  // The trainer: K rows split in blocks, a fixed number of iterations.
  std::int64_t const K = std::int64_t{1} << 15, L = 16, N = 4;
  std::int64_t const row0 = K * rank / ranks, row1 = K * (rank + 1) / ranks, rows = row1 - row0;
  std::vector<double> X(static_cast<std::size_t>(rows * L)), Y(static_cast<std::size_t>(rows * N));
  for (std::int64_t i = 0; i < rows * L; ++i) {
    X[static_cast<std::size_t>(i)] = value_at(static_cast<std::uint64_t>(row0 * L + i));
  }
  for (std::int64_t i = 0; i < rows * N; ++i) {
    Y[static_cast<std::size_t>(i)] = value_at((std::uint64_t{1} << 30) + static_cast<std::uint64_t>(row0 * N + i));
  }
  for (auto f : {fusekit::gd_formulation::gram, fusekit::gd_formulation::direct}) {
    fusekit::gd_options o;
    o.formulation = f;
    o.tolerance = 1e-300;  // never met: every fit runs max_iterations
    o.max_iterations = 100;
    std::vector<double> W(static_cast<std::size_t>(N * L));
    double const s = timed(std::min(repeats, 3), [&] {
      std::fill(W.begin(), W.end(), 0.0);
      (void)fusekit::fit(world, fusekit::matrix<const double>(X.data(), rows, L),
                         fusekit::matrix<const double>(Y.data(), rows, N), fusekit::matrix<double>(W.data(), N, L), o);
    });
    if (rank == 0) {
      std::printf("fit_100_iterations,%s,%d,%lld,%.6e\n", f == fusekit::gd_formulation::gram ? "gram" : "direct", ranks,
                  static_cast<long long>(K), s);
    }
  }
  MPI_Finalize();
  return 0;
}
