// SPDX-License-Identifier: Apache-2.0
#pragma once
// A communicator of threads for the distributed backends' host logic
// (detail/distributed/agreement.hpp), where neither NCCL nor a second GPU can
// run: rank r is a thread, and all_gather is a real rendezvous (every rank
// waits for every other, then each gets all rows in rank order), bounded so
// that a rank that never arrives fails the test instead of hanging it.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace fusekit::test {

class fake_communicator {
 public:
  explicit fake_communicator(int ranks) : ranks_(ranks), rows_(static_cast<std::size_t>(ranks)) {}

  int size() const { return ranks_; }

  /// Every rank's row, concatenated in rank order: MPI_Allgather's contract.
  std::vector<std::int64_t> all_gather(int rank, const std::vector<std::int64_t>& mine) {
    std::unique_lock<std::mutex> lock(mutex_);
    std::uint64_t const generation = generation_;
    rows_[static_cast<std::size_t>(rank)] = mine;
    ++calls_;
    if (++arrived_ == ranks_) {
      result_.clear();
      for (const auto& row : rows_) {
        if (row.size() != mine.size()) { failed_ = "ranks gathered rows of different lengths"; }
        result_.insert(result_.end(), row.begin(), row.end());
      }
      arrived_ = 0;
      ++generation_;
      arrived_all_.notify_all();
    } else if (!arrived_all_.wait_for(lock, std::chrono::seconds(20), [&] { return generation_ != generation; })) {
      failed_ = "a rank waited 20 s in all_gather: another rank never came";
      throw std::runtime_error(failed_);
    }
    if (!failed_.empty()) { throw std::runtime_error(failed_); }
    return result_;
  }

  /// The gather of one rank, in the form the backends take.
  std::function<std::vector<std::int64_t>(const std::vector<std::int64_t>&)> gather_of(int rank) {
    return [this, rank](const std::vector<std::int64_t>& mine) { return all_gather(rank, mine); };
  }

  /// Gathers made so far, over all ranks.
  std::int64_t calls() const {
    std::lock_guard<std::mutex> const lock(mutex_);
    return calls_;
  }

 private:
  int ranks_;
  mutable std::mutex mutex_;
  std::condition_variable arrived_all_;
  std::vector<std::vector<std::int64_t>> rows_;
  std::vector<std::int64_t> result_;
  int arrived_ = 0;
  std::uint64_t generation_ = 0;
  std::int64_t calls_ = 0;
  std::string failed_;
};

/// Runs body(rank, comm) on `ranks` threads; returns each rank's exception
/// message ("" when it returned normally), prefixed with its type's tag.
template <class Body>
std::vector<std::string> run_ranks(int ranks, const Body& body) {
  fake_communicator comm(ranks);
  std::vector<std::string> what(static_cast<std::size_t>(ranks));
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r) {
    threads.emplace_back([&, r] {
      try {
        body(r, comm);
      } catch (const std::invalid_argument& e) {
        what[static_cast<std::size_t>(r)] = std::string("invalid_argument: ") + e.what();
      } catch (const std::runtime_error& e) {
        what[static_cast<std::size_t>(r)] = std::string("runtime_error: ") + e.what();
      } catch (const std::exception& e) {
        what[static_cast<std::size_t>(r)] = std::string("exception: ") + e.what();
      } catch (...) { what[static_cast<std::size_t>(r)] = "unknown exception"; }
    });
  }
  for (auto& t : threads) { t.join(); }
  return what;
}

}  // namespace fusekit::test
