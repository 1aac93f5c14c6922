// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The CPU backend's thread pool: a job of numbered chunks that the calling
/// thread works through itself, and that helper threads join only if they are running.
///
/// Why not an OpenMP region: a region ends at a barrier that waits for every
/// thread of its team, and a team thread the operating system has not
/// scheduled (the machine is busy) makes the whole call wait a time slice:
/// 10–1000× a one-thread call on a loaded 2-core machine (docs/performance.md).
/// Here nothing waits for a thread that has not taken a chunk:
///
/// * the caller publishes the job (one atomic word: next chunk, chunk count,
///   helpers allowed), wakes sleeping helpers, and claims chunks itself;
/// * a helper claims chunks from the same word (a compare-and-swap) while any
///   are left, then spins briefly for the next job and sleeps;
/// * the caller, when no chunk is left to claim, waits only for the chunks
///   that helpers already took, which they are running.
///
/// With every helper descheduled, or held back by the test hook, the caller
/// runs every chunk alone. Results never depend on which thread ran a chunk:
/// a chunk's bounds and its slot for partial results come from its number.
///
/// One job at a time: a call made while the pool serves another (a call from
/// a user's own threads, or from inside a chunk) runs its chunks on its own
/// thread, so calls nest without deadlock and without more threads.
/// The pool is created by the first call that asks for a helper, grows to the
/// most helpers any call asked for, and lives until the process ends (its
/// threads sleep between calls). A child made by fork() starts with an empty
/// pool of its own.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <system_error>
#include <thread>

#if defined(__unix__) || defined(__APPLE__)
#include <pthread.h>
#define FUSEKIT_HAS_PTHREAD_ATFORK 1
#else
#define FUSEKIT_HAS_PTHREAD_ATFORK 0
#endif

namespace fusekit {
namespace detail {
inline namespace core {

/// [0, count) split into `chunks` contiguous ranges whose sizes differ by at
/// most one: chunk c is [begin(c), begin(c + 1)).
struct cpu_chunks {
  std::int64_t count = 0;
  std::int64_t chunks = 1;
  [[nodiscard]] std::int64_t begin(std::int64_t c) const noexcept {
    std::int64_t const share = count / chunks, extra = count % chunks;
    return share * c + (c < extra ? c : extra);
  }
  [[nodiscard]] std::int64_t end(std::int64_t c) const noexcept { return begin(c + 1); }
};

/// The most chunks a job has (a chunk number fits the job word's 24 bits).
inline constexpr std::int64_t cpu_max_chunks = (std::int64_t{1} << 24) - 1;

/// count items in chunks of about `grain` (≥ 1), one chunk at least: a
/// function of (count, grain) only, never of the thread count.
inline cpu_chunks cpu_split(std::int64_t count, std::int64_t grain) noexcept {
  std::int64_t chunks = count <= 0 ? 1 : count / grain + (count % grain != 0 ? 1 : 0);
  if (chunks > cpu_max_chunks) { chunks = cpu_max_chunks; }
  return cpu_chunks{count < 0 ? 0 : count, chunks < 1 ? 1 : chunks};
}

/// A chunk's work: run(context, chunk). noexcept: an exception escaping a
/// chunk ends the process (as it did from an OpenMP region), on any thread.
using cpu_chunk_fn = void (*)(const void*, std::int64_t) noexcept;

inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#else
  std::this_thread::yield();
#endif
}

class cpu_pool {
 public:
  /// The process's pool.
  static cpu_pool& instance() {
    static bool const registered = [] {
#if FUSEKIT_HAS_PTHREAD_ATFORK
      // The child has no helper threads: it gets a new, empty pool (the old
      // one, whose mutex a helper may have held at the fork, is left alone).
      pthread_atfork(nullptr, nullptr, [] { slot() = new cpu_pool; });
#endif
      slot() = new cpu_pool;
      return true;
    }();
    (void)registered;
    return *slot();
  }

  /// fn(context, c) once for every c in [0, chunks), on the calling thread and
  /// on at most `helpers` helper threads that are running; returns when every
  /// chunk has run. Nothing waits for a helper that has not claimed a chunk.
  void run(std::int64_t chunks, int helpers, cpu_chunk_fn fn, const void* context) noexcept {
    if (helpers > max_helpers) { helpers = max_helpers; }
    // More chunks than the job word counts (cpu_split never makes so many):
    // all of them on the caller.
    if (chunks <= 1 || chunks > cpu_max_chunks || helpers <= 0 || busy_.exchange(true, std::memory_order_acquire)) {
      for (std::int64_t c = 0; c < chunks; ++c) { fn(context, c); }
      return;
    }
    int const started = start_helpers(helpers);
    run_ = fn;
    context_ = context;
    done_.store(0, std::memory_order_relaxed);
    claim_.store(pack(0, chunks, started < helpers ? started : helpers), std::memory_order_release);
    wake(helpers);
    std::int64_t mine = 0;
    for (std::int64_t c; (c = claim(-1)) >= 0; ++mine) { fn(context, c); }
    // Only chunks a helper took are left: it is running them.
    await_helpers(chunks - mine);
    busy_.store(false, std::memory_order_release);
  }

  // ---- Test hooks (tests/core/cpu_pool_test.cpp) ----

  /// While held, helpers claim no chunk: every call runs on its caller.
  void hold_helpers(bool hold) noexcept { held_.store(hold, std::memory_order_relaxed); }
  /// A permutation of [0, chunks) applied to the order in which chunks are
  /// claimed (null: in order): which thread runs which chunk changes, and
  /// no result may.
  void set_claim_order(std::int64_t (*order)(std::int64_t claimed, std::int64_t chunks)) noexcept {
    order_.store(order, std::memory_order_relaxed);
  }
  /// Chunks run by helpers since the process started.
  [[nodiscard]] std::int64_t helper_chunks() const noexcept { return helper_chunks_.load(std::memory_order_relaxed); }
  /// Helper threads started.
  [[nodiscard]] int helpers_started() const noexcept { return started_.load(std::memory_order_acquire); }

  /// The most helper threads a pool starts.
  static constexpr int max_helpers = 1023;

 private:
  cpu_pool() = default;
  static cpu_pool*& slot() noexcept {
    static cpu_pool* pool = nullptr;
    return pool;
  }

  // The job word: next chunk (bits 0–23), chunk count (24–47), helpers allowed (48–63).
  static constexpr std::uint64_t field = (std::uint64_t{1} << 24) - 1;
  static std::uint64_t pack(std::int64_t next, std::int64_t chunks, int helpers) noexcept {
    return static_cast<std::uint64_t>(next) | static_cast<std::uint64_t>(chunks) << 24 |
           static_cast<std::uint64_t>(helpers) << 48;
  }
  static bool claimable(std::uint64_t word, int helper) noexcept {
    return (word & field) < (word >> 24 & field) && (helper < 0 || static_cast<std::uint64_t>(helper) < word >> 48);
  }

  // A chunk number for the caller (helper = −1) or helper `helper`, or −1 when
  // none is left to it. A successful exchange from a word with a chunk left
  // means the job it names is running (the caller is still in `run`), so
  // run_ and context_, written before the word was published, are its own.
  std::int64_t claim(int helper) noexcept {
    if (helper >= 0 && held_.load(std::memory_order_relaxed)) { return -1; }
    std::uint64_t word = claim_.load(std::memory_order_acquire);
    while (claimable(word, helper)) {
      if (claim_.compare_exchange_weak(word, word + 1, std::memory_order_acq_rel, std::memory_order_acquire)) {
        auto const next = static_cast<std::int64_t>(word & field);
        auto const chunks = static_cast<std::int64_t>(word >> 24 & field);
        auto const order = order_.load(std::memory_order_relaxed);
        return order != nullptr ? order(next, chunks) : next;
      }
    }
    return -1;
  }

  // Starts helpers up to `wanted` (as many as the system gives); returns how many run.
  int start_helpers(int wanted) noexcept {
    int have = started_.load(std::memory_order_acquire);
    if (have >= wanted) { return have; }
    std::lock_guard<std::mutex> lock(mutex_);
    for (have = started_.load(std::memory_order_relaxed); have < wanted; ++have) {
      try {
        slots_.emplace_back();
        std::thread(&cpu_pool::helper, this, have).detach();
      } catch (const std::exception&) {
        if (static_cast<int>(slots_.size()) > have) { slots_.pop_back(); }
        break;  // no more threads: the calls run with those there are
      }
      started_.store(have + 1, std::memory_order_release);
    }
    return have;
  }

  // Wakes the sleeping helpers among the first `helpers`.
  void wake(int helpers) noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    ++epoch_;
    int const n = helpers < static_cast<int>(slots_.size()) ? helpers : static_cast<int>(slots_.size());
    for (int h = 0; h < n; ++h) {
      if (slots_[static_cast<std::size_t>(h)].sleeping) { slots_[static_cast<std::size_t>(h)].wake.notify_one(); }
    }
  }

  void helper(int index) noexcept {
    for (;;) {
      for (std::int64_t c; (c = claim(index)) >= 0;) {
        run_(context_, c);
        helper_chunks_.fetch_add(1, std::memory_order_relaxed);
        done_.fetch_add(1, std::memory_order_seq_cst);
        if (caller_sleeping_.load(std::memory_order_seq_cst)) {
          std::lock_guard<std::mutex> lock(mutex_);
          caller_wake_.notify_one();
        }
      }
      // Calls often come in runs: look for the next job a little while before
      // sleeping (a sleeping helper takes tens of microseconds to wake). Never
      // sched_yield here either: on a busy core it gives the core away for a tick.
      if (await_job(index)) { continue; }
      std::unique_lock<std::mutex> lock(mutex_);
      // A job published before this lock was taken is seen here; one after
      // it bumps epoch_ and wakes this slot.
      if (!held_.load(std::memory_order_relaxed) && claimable(claim_.load(std::memory_order_acquire), index)) {
        continue;
      }
      std::uint64_t const seen = epoch_;
      auto& me = slots_[static_cast<std::size_t>(index)];
      me.sleeping = true;
      me.wake.wait(lock, [&] { return epoch_ != seen; });
      me.sleeping = false;
    }
  }

  // Returns when helpers have finished `chunks` chunks of this job. It spins
  // while they are likely running, then sleeps until the last one wakes it:
  // never sched_yield, which on a busy machine hands the core to another
  // process for a whole scheduler tick.
  void await_helpers(std::int64_t chunks) noexcept {
    auto const start = std::chrono::steady_clock::now();
    for (int look = 1; done_.load(std::memory_order_acquire) != chunks; ++look) {
      cpu_relax();
      if (look % 64 == 0 && std::chrono::steady_clock::now() - start > caller_spin) {
        caller_sleeping_.store(true, std::memory_order_seq_cst);
        std::unique_lock<std::mutex> lock(mutex_);
        caller_wake_.wait(lock, [&] { return done_.load(std::memory_order_seq_cst) == chunks; });
        caller_sleeping_.store(false, std::memory_order_relaxed);
        return;
      }
    }
  }

  // Whether a job this helper may join appears within helper_wait.
  bool await_job(int index) const noexcept {
    auto const start = std::chrono::steady_clock::now();
    for (int look = 0;; ++look) {
      if (!held_.load(std::memory_order_relaxed) && claimable(claim_.load(std::memory_order_relaxed), index)) {
        return true;
      }
      cpu_relax();
      if (look % 16 == 15 && std::chrono::steady_clock::now() - start > helper_wait) { return false; }
    }
  }

  struct helper_slot {
    std::condition_variable wake;
    bool sleeping = false;  // under mutex_
  };

  // How long the caller spins for helpers finishing their chunks before it
  // sleeps (a few chunks' time), and how long a helper looks for the next job
  // before it sleeps: 50 µs took a 10^6-element layer's median from 373 to
  // 355 µs on 2 cores, quiet and beside two busy processes alike.
  static constexpr std::chrono::microseconds caller_spin{100};
  static constexpr std::chrono::microseconds helper_wait{50};

  std::atomic<bool> busy_{false};  // a job is running
  std::atomic<std::uint64_t> claim_{0};
  std::atomic<std::int64_t> done_{0};  // chunks helpers finished in this job
  std::atomic<bool> caller_sleeping_{false};
  std::condition_variable caller_wake_;  // with mutex_
  cpu_chunk_fn run_ = nullptr;
  const void* context_ = nullptr;

  std::mutex mutex_;
  std::deque<helper_slot> slots_;  // under mutex_; a deque, so slots never move
  std::uint64_t epoch_ = 0;        // under mutex_: jobs published
  std::atomic<int> started_{0};

  std::atomic<bool> held_{false};
  std::atomic<std::int64_t (*)(std::int64_t, std::int64_t)> order_{nullptr};
  std::atomic<std::int64_t> helper_chunks_{0};
};

/// body(chunk, begin, end) for every chunk of `split`, on the pool with at most
/// `helpers` helpers (0: on the calling thread alone, without touching the pool).
template <class Body>
void cpu_run_chunks(const cpu_chunks& split, int helpers, const Body& body) {
  if (helpers > split.chunks - 1) { helpers = static_cast<int>(split.chunks - 1); }
  if (helpers <= 0) {
    for (std::int64_t c = 0; c < split.chunks; ++c) { body(c, split.begin(c), split.end(c)); }
    return;
  }
  struct job {
    const cpu_chunks* split;
    const Body* body;
    static void run(const void* p, std::int64_t c) noexcept {
      auto const& j = *static_cast<const job*>(p);
      (*j.body)(c, j.split->begin(c), j.split->end(c));
    }
  } const j{&split, &body};
  cpu_pool::instance().run(split.chunks, helpers, &job::run, &j);
}

}  // namespace core
}  // namespace detail
}  // namespace fusekit
