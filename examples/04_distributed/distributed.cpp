// SPDX-License-Identifier: Apache-2.0
//
// 04_distributed — a sum and a fit over MPI ranks, with results you can check
// against one process
//
//     mpirun -np 4 ./04_distributed [n]
//
// Each rank holds a block of the data: n float values for the sum (default
// 10,000,000), and a block of the rows of X (K × L) and Y (K × N) for the
// trainer. fusekit::mpi is fusekit::cpu on every rank, with MPI between them.
//
// * The deterministic sum gives the bits of the one-process sum of all the
//   data, on every rank, whatever the number of ranks and the split: rank 0,
//   which also builds all the data, checks that. An MPI_Allreduce of the
//   ranks' own sums (what `cub` does here) changes with the rank count.
// * fit with the Gram formulation adds XᵀX and YᵀX over the ranks once, then
//   every rank runs the same L × L iterations and ends with the same W, which
//   the program checks on every rank against the W that made Y.
//
// Exit status 0 when verified on every rank.

#include <fusekit/mpi.hpp>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

// Value i of the data, the same on every rank (a counter-based generator).
float value_at(std::uint64_t i) {
  std::uint64_t z = i * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<float>(z >> 40) * 0x1p-24f;  // uniform in [0, 1)
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  std::int64_t const n = argc > 1 ? std::strtoll(argv[1], nullptr, 10) : 10000000;
  fusekit::mpi const world{MPI_COMM_WORLD};
  bool ok = true;

  // ---- the sum: rank r holds values [n·r/P, n·(r+1)/P) ---------------------------
  std::int64_t const begin = n * rank / ranks, end = n * (rank + 1) / ranks;
  std::vector<float> shard(static_cast<std::size_t>(end - begin));
  for (std::int64_t i = begin; i < end; ++i) {
    shard[static_cast<std::size_t>(i - begin)] = value_at(static_cast<std::uint64_t>(i));
  }
  MPI_Barrier(MPI_COMM_WORLD);
  auto t0 = std::chrono::steady_clock::now();
  float const total = fusekit::sum(world, shard, fusekit::reduce_algorithm::deterministic);
  double const sum_s = seconds_since(t0);
  float const engine = fusekit::sum(world, shard, fusekit::reduce_algorithm::run_to_run);  // local sums + MPI_Allreduce
  if (rank == 0) {
    std::vector<float> all(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) { all[static_cast<std::size_t>(i)] = value_at(static_cast<std::uint64_t>(i)); }
    float const one_process = fusekit::sum(fusekit::cpu{}, all, fusekit::reduce_algorithm::deterministic);
    bool const same = std::memcmp(&total, &one_process, sizeof total) == 0;
    ok = ok && same;
    std::printf("sum of %lld floats on %d ranks\n", static_cast<long long>(n), ranks);
    std::printf("  deterministic:       %.9g  (%.3f ms)  %s the one-process bits\n", total, sum_s * 1e3,
                same ? "==" : "!=");
    std::printf("  cub + MPI_Allreduce: %.9g  (its bits may change with the rank count)\n", engine);
  }

  // ---- the trainer: rank r holds a block of rows -----------------------------------
  std::int64_t const K = 200000, L = 16, N = 4;
  std::vector<double> W_true(static_cast<std::size_t>(N * L));
  for (std::int64_t i = 0; i < N * L; ++i) {
    W_true[static_cast<std::size_t>(i)] = 2.0 * value_at(static_cast<std::uint64_t>(n + i)) - 1.0;
  }
  std::int64_t const row0 = K * rank / ranks, row1 = K * (rank + 1) / ranks, rows = row1 - row0;
  std::vector<double> X(static_cast<std::size_t>(rows * L)), Y(static_cast<std::size_t>(rows * N));
  for (std::int64_t k = 0; k < rows; ++k) {
    for (std::int64_t l = 0; l < L; ++l) {
      X[static_cast<std::size_t>(k * L + l)] = value_at(static_cast<std::uint64_t>(7 * n + (row0 + k) * L + l));
    }
    for (std::int64_t j = 0; j < N; ++j) {
      double y = 0;
      for (std::int64_t l = 0; l < L; ++l) {
        y += X[static_cast<std::size_t>(k * L + l)] * W_true[static_cast<std::size_t>(j * L + l)];
      }
      Y[static_cast<std::size_t>(k * N + j)] = y;
    }
  }
  fusekit::gd_options options;
  options.formulation = fusekit::gd_formulation::gram;
  options.method = fusekit::gd_method::nesterov;
  options.tolerance = 1e-16;
  options.max_iterations = 200000;
  std::vector<double> W(static_cast<std::size_t>(N * L), 0.0);
  MPI_Barrier(MPI_COMM_WORLD);
  t0 = std::chrono::steady_clock::now();
  fusekit::fit_report const report =
      fusekit::fit(world, fusekit::matrix<const double>(X.data(), rows, L),
                   fusekit::matrix<const double>(Y.data(), rows, N), fusekit::matrix<double>(W.data(), N, L), options);
  double const fit_s = seconds_since(t0);
  double worst = 0;
  for (std::size_t i = 0; i < W.size(); ++i) { worst = std::fmax(worst, std::fabs(W[i] - W_true[i])); }
  // Every rank holds the same W: compare with rank 0's bytes.
  std::vector<double> root = W;
  MPI_Bcast(root.data(), static_cast<int>(root.size()), MPI_DOUBLE, 0, MPI_COMM_WORLD);
  int const same_here =
      std::memcmp(root.data(), W.data(), W.size() * sizeof(double)) == 0 && report.all_converged() && worst <= 1e-6;
  int same_everywhere = 0;
  MPI_Allreduce(&same_here, &same_everywhere, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  ok = ok && same_everywhere == 1;
  if (rank == 0) {
    std::printf("fit of K = %lld rows (L = %lld, N = %lld) on %d ranks, Gram: %lld iterations, %.3f ms\n",
                static_cast<long long>(K), static_cast<long long>(L), static_cast<long long>(N), ranks,
                static_cast<long long>(report.most_iterations()), fit_s * 1e3);
    std::printf("  largest |W - W_true|: %.2e; the same W and statuses on every rank: %s\n", worst,
                same_everywhere ? "yes" : "NO");
  }

  int const mine = ok ? 1 : 0;
  int all_ok = 0;
  MPI_Allreduce(&mine, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (rank == 0) { std::printf("%s\n", all_ok ? "verified" : "FAILED verification"); }
  MPI_Finalize();
  return all_ok ? EXIT_SUCCESS : EXIT_FAILURE;
}
