// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The CPU backend's thread count for the whole process: what `fusekit::cpu{}`
/// (threads == 0) means.
///
///     fusekit::set_default_threads(1);   // every cpu{} call on its calling thread alone
///     fusekit::set_default_threads(0);   // back to the default
///
/// The default is FUSEKIT_NUM_THREADS, else OMP_NUM_THREADS (its first
/// number), else the processors this process may run on; the environment is
/// read once. `cpu{N}` with N > 0 is not affected.
///
/// The threads are fusekit's own (detail/core/cpu_pool.hpp): the calling thread
/// works through a call's chunks itself and helper threads join only if they
/// are running, so a busy machine costs a call at most its one-thread time
/// (docs/architecture.md, "CPU threads"). They do not read OMP_WAIT_POLICY or
/// any other OpenMP setting but the count.

#include <fusekit/detail/core/cpu_parallel.hpp>
#include <fusekit/error.hpp>
#include <fusekit/policy.hpp>

#include <string>

namespace fusekit {

/// Sets the thread count of `cpu{}` for every thread of the process; 0
/// restores the default. Counts above 4 per processor are clamped when used,
/// as `cpu{N}`'s are. Throws fusekit::invalid_argument for a negative count.
inline void set_default_threads(int threads) {
  FUSEKIT_EXPECTS(threads >= 0, "fusekit::set_default_threads: threads is " + std::to_string(threads) +
                                    "; it must be 0 (the default) or a positive count");
  detail::cpu_default_threads_setting().store(threads, std::memory_order_relaxed);
}

/// The thread count `cpu{}` uses now.
inline int default_threads() { return detail::cpu_thread_count(cpu{}); }

}  // namespace fusekit
