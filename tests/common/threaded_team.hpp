// SPDX-License-Identifier: Apache-2.0
#pragma once
// threaded_team: a thread block's schedule on the CPU, for the bodies the GPU
// kernels run (detail/team/team.hpp's contract). M std::threads are the
// members; member t takes indices t, t + M, ... as block_team does; `sync()` is
// a real barrier; `sum` and `total` add in the block's order: each warp of 32
// members as cub::WarpReduce does (shuffle-down steps 1, 2, 4, 8, 16: a
// pairwise tree), then the warp sums in warp order from R(0). A missing
// `sync()` in a body is then a real race: ThreadSanitizer names it (the tsan
// preset), and the `turns` schedule makes it a wrong answer in any build.
//
// Two schedules:
//  - concurrent: members run at once between barriers (for ThreadSanitizer);
//  - turns: one member runs at a time, in an order drawn afresh for each phase
//    between barriers, so a member that runs past a dropped barrier reads what
//    the members after it have not written yet, every time.
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <exception>
#include <mutex>
#include <numeric>
#include <random>
#include <stdexcept>
#include <thread>
#include <vector>

namespace fusekit::test {

enum class schedule { concurrent, turns };

// A run's schedule; for turns, the seed of the orders drawn at each barrier.
struct run_mode {
  schedule how;
  std::uint64_t seed;
  std::string name() const {
    return how == schedule::turns ? "turns (seed " + std::to_string(seed) + ")" : std::string("concurrent");
  }
};

// The runs a test makes: concurrent, and turns in two different orders (a
// correct body gives the same bits in every order; a missing barrier makes
// the result depend on it). FUSEKIT_TEAM_SCHEDULE=concurrent or turns keeps
// one kind (the tsan preset runs `concurrent`: in turns, the handoffs order
// every access, so ThreadSanitizer has no race to see).
inline std::vector<run_mode> modes_to_run() {
  const char* const only = std::getenv("FUSEKIT_TEAM_SCHEDULE");
  std::string const kind = only != nullptr ? only : "";
  std::vector<run_mode> modes;
  if (kind != "turns") { modes.push_back({schedule::concurrent, 0}); }
  if (kind != "concurrent") {
    modes.push_back({schedule::turns, 1});
    modes.push_back({schedule::turns, 2});
  }
  return modes;
}

// What the members of one team share: the barrier, the turn, the sum slots.
class team_state {
 public:
  team_state(int members, schedule how, std::uint64_t seed)
      : members_(members),
        how_(how),
        rng_(seed),
        order_(static_cast<std::size_t>(members)),
        slots_(static_cast<std::size_t>(members) + 1),
        turn_(static_cast<std::size_t>(members)) {
    std::iota(order_.begin(), order_.end(), 0);
    new_phase();
  }

  int members() const { return members_; }

  // Member t may run: in `turns`, once its turn has come.
  void begin(int t) {
    if (how_ != schedule::turns) { return; }
    std::unique_lock<std::mutex> lock(mutex_);
    wait(lock, t, [&] { return order_[static_cast<std::size_t>(at_)] == t; });
  }

  // Member t is done: in `turns`, the next member's turn.
  void finish(int t) {
    if (how_ != schedule::turns) { return; }
    std::lock_guard<std::mutex> const lock(mutex_);
    if (order_[static_cast<std::size_t>(at_)] == t && at_ + 1 < members_) { pass_turn(); }
  }

  // The barrier: every member waits for every other; what each wrote before
  // it is seen by all after it.
  void barrier(int t) {
    std::unique_lock<std::mutex> lock(mutex_);
    std::uint64_t const generation = generation_;
    ++arrived_;
    ++barriers_;
    if (arrived_ == members_) {
      arrived_ = 0;
      ++generation_;
      new_phase();
      if (how_ == schedule::turns) {
        woken(order_[0]).notify_one();
      } else {
        all_.notify_all();
      }
    } else if (how_ == schedule::turns) {
      pass_turn();
    }
    wait(lock, t, [&] {
      return generation_ != generation && (how_ != schedule::turns || order_[static_cast<std::size_t>(at_)] == t);
    });
  }

  // Barriers passed, over all members.
  std::int64_t barriers() const {
    std::lock_guard<std::mutex> const lock(mutex_);
    return barriers_;
  }

  double* slots() { return slots_.data(); }

 private:
  // In `turns` each member waits on its own condition, woken by the member
  // before it (a handoff wakes one thread, not all of them).
  std::condition_variable& woken(int t) { return how_ == schedule::turns ? turn_[static_cast<std::size_t>(t)] : all_; }
  void pass_turn() {
    ++at_;
    woken(order_[static_cast<std::size_t>(at_)]).notify_one();
  }
  template <class Ready>
  void wait(std::unique_lock<std::mutex>& lock, int t, const Ready& ready) {
    // Bounded: a member waiting 60 s means a body called sync() on some
    // members only, which hangs a real block; fail instead.
    if (!woken(t).wait_for(lock, std::chrono::seconds(60), ready)) {
      throw std::runtime_error("threaded_team: a member waited 60 s at a barrier (sync() not reached by all)");
    }
  }
  void new_phase() {
    at_ = 0;
    if (how_ == schedule::turns) { std::shuffle(order_.begin(), order_.end(), rng_); }
  }

  int members_;
  schedule how_;
  std::mt19937_64 rng_;
  std::vector<int> order_;
  std::vector<double> slots_;
  mutable std::mutex mutex_;
  std::condition_variable all_;
  std::vector<std::condition_variable> turn_;
  int arrived_ = 0;
  int at_ = 0;
  std::uint64_t generation_ = 0;
  std::int64_t barriers_ = 0;
};

// One member's view of the team: what a body's `team` argument is on member t.
class threaded_team {
 public:
  static constexpr int warp = 32;

  threaded_team(team_state& state, int t) : state_(&state), t_(t), m_(state.members()) {}

  template <class F>
  void for_each(std::int64_t n, const F& f) const {
    for (std::int64_t i = t_; i < n; i += m_) { f(i); }
  }

  template <class R, class F>
  R sum(std::int64_t n, const F& f) const {
    R part = R(0);
    for (std::int64_t i = t_; i < n; i += m_) { part = part + f(i); }
    return total(part);
  }

  // Σ of one value per member, on every member, in the block's order.
  template <class R>
  R total(R part) const {
    static_assert(sizeof(R) <= sizeof(double), "values of at most 8 bytes");
    R* const slots = reinterpret_cast<R*>(state_->slots());
    slots[t_] = part;
    state_->barrier(t_);
    if (t_ == 0) {
      R t = R(0);
      for (int w = 0; w < m_ / warp; ++w) {
        R lane[warp];
        for (int l = 0; l < warp; ++l) { lane[l] = slots[w * warp + l]; }
        for (int offset = 1; offset < warp; offset *= 2) {  // shuffle-down: lane l adds lane l + offset
          for (int l = 0; l + offset < warp; l += 2 * offset) { lane[l] = lane[l] + lane[l + offset]; }
        }
        t = t + lane[0];
      }
      slots[m_] = t;
    }
    state_->barrier(t_);
    R const result = slots[m_];
    state_->barrier(t_);  // the slots serve the next sum
    return result;
  }

  template <class R, class Value>
  void column_sums(std::int64_t rows, std::int64_t lanes, R* out, const Value& value) const {
    for (std::int64_t l = t_; l < lanes; l += m_) {
      R s = R(0);
      for (std::int64_t r = 0; r < rows; ++r) { s = s + value(r, l); }
      out[l] = s;
    }
  }

  template <int Rows, class Acc, class Count, class Value, class Op, class Access>
  void column_reduce(Acc* lane, const Count& count, const Value& value, const Op& op, const Access&) const {
    for (std::int64_t l = t_; l < count(0); l += m_) {
      Acc acc = value(0, l);
      for (int r = 1; r < Rows; ++r) {
        if (l < count(r)) { acc = op(acc, value(r, l)); }
      }
      lane[l] = acc;
    }
  }

  template <class Acc, class Op>
  void combine_pairs(Acc* lane, std::int64_t pairs, std::int64_t s, const Op& op) const {
    for_each(pairs, [&](std::int64_t l) { lane[l] = op(lane[l], lane[l + s]); });
  }

  void sync() const { state_->barrier(t_); }
  bool leader() const { return t_ == 0; }
  int member() const { return t_; }

 private:
  team_state* state_;
  int t_;
  int m_;
};

// Runs body(team) on `members` threads as one team (members a multiple of 32,
// as block_team requires); rethrows the first member's exception.
template <class Body>
void run_team(int members, const run_mode& mode, const Body& body) {
  if (members % threaded_team::warp != 0) { throw std::invalid_argument("run_team: whole warps only"); }
  team_state state(members, mode.how, mode.seed);
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(members));
  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(members));
  for (int t = 0; t < members; ++t) {
    threads.emplace_back([&, t] {
      try {
        state.begin(t);
        body(threaded_team(state, t));
        state.finish(t);
      } catch (...) {
        errors[static_cast<std::size_t>(t)] = std::current_exception();
        state.finish(t);
      }
    });
  }
  for (auto& th : threads) { th.join(); }
  for (const auto& e : errors) {
    if (e) { std::rethrow_exception(e); }
  }
}

}  // namespace fusekit::test
