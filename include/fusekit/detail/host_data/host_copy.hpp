// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The host-data pipeline's threaded host copy (detail/host_data/walk.hpp
/// uses it between pageable memory and the pinned staging): a pool of helper
/// threads started on first use, and `host_copy`, which splits a large copy
/// over them.

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

namespace fusekit {
namespace detail {
inline namespace host_data {

/// Bytes below which a part of a host copy is not worth a thread of its own.
inline constexpr std::size_t host_copy_min_part = std::size_t{1} << 20;

/// Threads a host copy uses when the tuning leaves it to fusekit: half the
/// processors, at most 4 (one core moves pageable memory at about a third of
/// the bus's rate; more threads than that only contend).
inline int default_host_copy_threads() {
  unsigned const hw = std::thread::hardware_concurrency();
  return static_cast<int>(std::min<unsigned>(hw > 1 ? hw / 2 : 1, 4));
}

/// Helper threads for large host copies: started on first use, as many as
/// the largest copy asked for, and reused by every copy after (a copy per
/// chunk would otherwise start and join threads per chunk). One copy at a
/// time uses them; a host thread that finds them busy copies alone.
class host_copy_pool {
 public:
  static host_copy_pool& instance() {
    static host_copy_pool pool;  // its destructor stops and joins the threads at exit
    return pool;
  }

  /// Copies `bytes` from src to dst in `threads` parts, the calling thread
  /// taking the first; false, with nothing copied, when another copy holds the pool.
  bool try_copy(std::byte* dst, const std::byte* src, std::size_t bytes, int threads) {
    std::unique_lock<std::mutex> const busy(busy_, std::try_to_lock);
    if (!busy.owns_lock()) { return false; }
    auto const parts = static_cast<std::size_t>(threads);
    std::size_t const part = ((bytes + parts - 1) / parts + 63) / 64 * 64;  // parts × part ≥ bytes
    {
      std::lock_guard<std::mutex> const lock(mutex_);
      while (workers_.size() + 1 < parts) {
        workers_.emplace_back([this] { work(); });
      }
      jobs_.clear();
      for (std::size_t t = 1; t < parts && t * part < bytes; ++t) {
        jobs_.push_back({dst + t * part, src + t * part, std::min(part, bytes - t * part)});
      }
      next_ = 0;
      pending_ = jobs_.size();
    }
    wake_.notify_all();
    std::memcpy(dst, src, std::min(part, bytes));
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [this] { return pending_ == 0; });
    return true;
  }

  /// Helper threads started so far.
  std::size_t threads_started() {
    std::lock_guard<std::mutex> const lock(mutex_);
    return workers_.size();
  }

  host_copy_pool(const host_copy_pool&) = delete;
  host_copy_pool& operator=(const host_copy_pool&) = delete;

 private:
  struct job {
    std::byte* dst;
    const std::byte* src;
    std::size_t bytes;
  };

  host_copy_pool() = default;
  ~host_copy_pool() {
    {
      std::lock_guard<std::mutex> const lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    for (std::thread& t : workers_) { t.join(); }
  }

  void work() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      wake_.wait(lock, [this] { return stop_ || next_ < jobs_.size(); });
      if (stop_) { return; }
      job const j = jobs_[next_++];
      lock.unlock();
      std::memcpy(j.dst, j.src, j.bytes);
      lock.lock();
      if (--pending_ == 0) { done_.notify_all(); }
    }
  }

  std::mutex busy_;   ///< held by the copy that uses the threads
  std::mutex mutex_;  ///< guards everything below
  std::condition_variable wake_, done_;
  std::vector<std::thread> workers_;
  std::vector<job> jobs_;
  std::size_t next_ = 0, pending_ = 0;
  bool stop_ = false;
};

/// Copies `bytes` on the host with up to `threads` threads (1 MiB or more per
/// thread; `threads` ≤ 1 or a small copy: memcpy on the calling thread).
inline void host_copy(std::byte* dst, const std::byte* src, std::size_t bytes, int threads) {
  if (bytes == 0) { return; }  // an empty view's pointers may be null, which memcpy may not take
  std::size_t const parts =
      std::min<std::size_t>(threads > 1 ? static_cast<std::size_t>(threads) : 1, bytes / host_copy_min_part);
  if (parts <= 1 || !host_copy_pool::instance().try_copy(dst, src, bytes, static_cast<int>(parts))) {
    std::memcpy(dst, src, bytes);
  }
}

// ---- the walk ---------------------------------------------------------------

}  // namespace host_data
}  // namespace detail
}  // namespace fusekit
