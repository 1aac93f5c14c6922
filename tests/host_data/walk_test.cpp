// SPDX-License-Identifier: Apache-2.0
// The host-data pipeline's walk (detail/host_data/walk.hpp) over a fake driver:
// host memory for every slot and view, streams that run their copies and
// kernels as late as the walk's events let them (lazy_streams), every copy
// checked to stay inside a live slot or view, every call logged. Checked here: every
// element of every memory-kind mix reaches the output through the right
// slots; the staging is exactly what staging_for sizes; and when anything
// throws mid-walk, the copy streams are joined into the caller's stream before
// the staging goes back.
#include <fusekit/detail/host_data/walk.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using fusekit::detail::memory_space;
using fusekit::detail::pipeline_queue;
using fusekit::detail::pipeline_view;

// Memory the fake lets copies touch: [begin, end) ranges; staging leaves when released.
struct regions {
  std::vector<std::pair<const std::byte*, const std::byte*>> ranges;
  void add(const void* p, std::size_t bytes) {
    auto const b = static_cast<const std::byte*>(p);
    ranges.emplace_back(b, b + bytes);
  }
  void remove(const void* p) {
    ranges.erase(std::remove_if(ranges.begin(), ranges.end(), [&](const auto& r) { return r.first == p; }),
                 ranges.end());
  }
  bool holds(const std::byte* p, std::size_t bytes) const {
    return std::any_of(ranges.begin(), ranges.end(),
                       [&](const auto& r) { return p >= r.first && p + bytes <= r.second; });
  }
};

// Streams that run their work as late as the walk lets them: an op runs only
// when the host waits for an event after it, when another stream's op that
// waits for such an event runs, or at the end. So a wait the walk leaves out
// shows as a slot read before it is written or after it is overwritten, or as
// a copy into staging already given back.
struct lazy_streams {
  struct entry {
    std::function<void()> work;  // or, when empty, a wait for (queue, position)
    int queue = -1;
    std::size_t position = 0;
  };
  std::array<std::vector<entry>, 4> queues;
  std::array<std::size_t, 4> done{};
  std::map<std::size_t, std::pair<int, std::size_t>> events;

  void run_until(int q, std::size_t position) {
    while (done[static_cast<std::size_t>(q)] < position) {
      entry const e = queues[static_cast<std::size_t>(q)][done[static_cast<std::size_t>(q)]++];
      if (e.work) {
        e.work();
      } else {
        run_until(e.queue, e.position);
      }
    }
  }
  void run_all() {
    for (int q = 0; q < 4; ++q) { run_until(q, queues[static_cast<std::size_t>(q)].size()); }
  }
  void run_event(std::size_t e) {
    auto const at = events.find(e);
    if (at != events.end()) { run_until(at->second.first, at->second.second); }
  }
};

struct fake_driver {
  std::vector<std::string>& log;
  regions& memory;
  std::size_t device_bytes = 0, pinned_bytes = 0;
  lazy_streams streams{};

  class slots {
   public:
    slots(fake_driver& d, std::size_t device_bytes, std::size_t pinned_bytes)
        : d_(d), device_(device_bytes), pinned_(pinned_bytes) {
      d_.memory.add(device_.data(), device_.size());
      d_.memory.add(pinned_.data(), pinned_.size());
    }
    slots(const slots&) = delete;
    slots& operator=(const slots&) = delete;
    // Given back in stream order on the caller's stream: what that stream holds runs first.
    ~slots() {
      d_.streams.run_until(int(pipeline_queue::compute), d_.streams.queues[int(pipeline_queue::compute)].size());
      d_.memory.remove(device_.data());
      d_.memory.remove(pinned_.data());
      d_.log.push_back("release staging");
    }
    std::byte* device() const { return const_cast<std::byte*>(device_.data()); }
    std::byte* pinned() const { return const_cast<std::byte*>(pinned_.data()); }

   private:
    fake_driver& d_;
    std::vector<std::byte> device_, pinned_;
  };

  slots staging(std::size_t device, std::size_t pinned) {
    device_bytes = device;
    pinned_bytes = pinned;
    log.push_back("staging");
    return slots(*this, device, pinned);
  }
  int stream(pipeline_queue q) const { return static_cast<int>(q); }
  void reserve_events(std::size_t) {}
  void record(pipeline_queue q, std::size_t e) {
    streams.events[e] = {int(q), streams.queues[int(q)].size()};
    log.push_back("record " + std::to_string(int(q)) + " " + std::to_string(e));
  }
  void wait(pipeline_queue q, std::size_t e) {
    auto const at = streams.events.at(e);
    streams.queues[int(q)].push_back({{}, at.first, at.second});
    log.push_back("wait " + std::to_string(int(q)) + " " + std::to_string(e));
  }
  void host_wait(std::size_t e) {
    streams.run_event(e);
    log.push_back("host_wait " + std::to_string(e));
  }
  void copy(pipeline_queue q, std::byte* dst, const std::byte* src, std::size_t bytes, bool) {
    later(int(q), [this, dst, src, bytes] { check(dst, src, bytes); });
    log.push_back("copy");
  }
  void host_copy(std::byte* dst, const std::byte* src, std::size_t bytes) {
    check(dst, src, bytes);
    log.push_back("host_copy");
  }
  void join() noexcept {
    for (pipeline_queue side : {pipeline_queue::upload, pipeline_queue::download}) {
      streams.queues[int(pipeline_queue::compute)].push_back({{}, int(side), streams.queues[int(side)].size()});
    }
    log.push_back("join");
  }
  /// Work on a stream (the test's kernels), run when the stream gets there.
  void later(int q, std::function<void()> work) {
    streams.queues[static_cast<std::size_t>(q)].push_back({std::move(work)});
  }

  void check(std::byte* dst, const std::byte* src, std::size_t bytes) {
    if (!memory.holds(dst, bytes) || !memory.holds(src, bytes)) {
      ADD_FAILURE() << "a copy of " << bytes << " bytes touches memory that is not a live slot or view";
      return;
    }
    std::memmove(dst, src, bytes);
  }
};

constexpr memory_space spaces[] = {memory_space::device, memory_space::pinned, memory_space::pageable};

std::size_t aligned(std::size_t bytes) { return (bytes + 255) / 256 * 256; }

// out[i] = grey[i] + 2 w[i] through the walk, for one mix of memory kinds.
void run_layer(std::int64_t n, std::int64_t chunk, int depth, memory_space grey_space, memory_space w_space,
               memory_space out_space) {
  // The inputs are written by earlier work on the caller's stream, which the
  // walk must wait for: until then they hold the wrong values.
  std::vector<std::uint8_t> grey(static_cast<std::size_t>(n), 255);
  std::vector<float> w(static_cast<std::size_t>(n), -9.0f), out(static_cast<std::size_t>(n), -1.0f);
  auto const write_inputs = [&] {
    for (std::int64_t i = 0; i < n; ++i) {
      grey[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(i * 7 % 251);
      w[static_cast<std::size_t>(i)] = static_cast<float>(i % 13) * 0.25f;
    }
  };
  std::array<pipeline_view, 2> const ins{pipeline_view{reinterpret_cast<const std::byte*>(grey.data()), 1, grey_space},
                                         pipeline_view{reinterpret_cast<const std::byte*>(w.data()), 4, w_space}};
  pipeline_view const outv{reinterpret_cast<const std::byte*>(out.data()), 4, out_space};
  std::vector<std::string> log;
  regions memory;
  memory.add(grey.data(), grey.size());
  memory.add(w.data(), w.size() * 4);
  memory.add(out.data(), out.size() * 4);
  fake_driver driver{log, memory};
  auto const shape = fusekit::detail::shape_of(n, chunk, 1, depth, ins, outv);
  std::vector<int> computed(static_cast<std::size_t>(n), 0);
  driver.later(int(pipeline_queue::compute), write_inputs);
  {
    fusekit::detail::walk_pipeline(driver, shape, ins, outv,
                                   [&](int stream, std::int64_t, std::int64_t begin, std::int64_t count,
                                       const std::array<const std::byte*, 2>& in, std::byte* o) {
                                     ASSERT_EQ(stream, int(pipeline_queue::compute));
                                     driver.later(
                                         stream, [&, begin, count, in, o] {  // the kernel, when its stream gets there
                                           ASSERT_TRUE(memory.holds(in[0], static_cast<std::size_t>(count)));
                                           ASSERT_TRUE(memory.holds(in[1], static_cast<std::size_t>(count) * 4));
                                           ASSERT_TRUE(memory.holds(o, static_cast<std::size_t>(count) * 4));
                                           auto const g = reinterpret_cast<const std::uint8_t*>(in[0]);
                                           auto const x = reinterpret_cast<const float*>(in[1]);
                                           auto const y = reinterpret_cast<float*>(o);
                                           for (std::int64_t i = 0; i < count; ++i) {
                                             y[i] = static_cast<float>(g[i]) + 2 * x[i];
                                             ++computed[static_cast<std::size_t>(begin + i)];
                                           }
                                         });
                                   });
  }
  driver.streams.run_all();  // what the streams still hold (a call's caller synchronizes)
  for (std::int64_t i = 0; i < n; ++i) {
    auto const u = static_cast<std::size_t>(i);
    ASSERT_EQ(computed[u], 1) << "element " << i;
    ASSERT_EQ(out[u], static_cast<float>(grey[u]) + 2 * w[u]) << "element " << i;
  }
  if (n == 0) { return; }
  // The staging, as staging_for sizes it: slots × elements of each view that needs them.
  auto const st = fusekit::detail::staging_for(shape);
  auto const slots = static_cast<std::size_t>(st.slots);
  auto const elements = static_cast<std::size_t>(st.elements);
  std::size_t device = 0, pinned = 0;
  for (auto [space, bytes] : {std::pair{grey_space, 1}, std::pair{w_space, 4}, std::pair{out_space, 4}}) {
    if (space != memory_space::device) { device += slots * aligned(elements * static_cast<std::size_t>(bytes)); }
    if (space == memory_space::pageable) { pinned += slots * aligned(elements * static_cast<std::size_t>(bytes)); }
  }
  EXPECT_EQ(driver.device_bytes, device);
  EXPECT_EQ(driver.pinned_bytes, pinned);
  // The copy streams join the caller's stream before the staging goes back.
  ASSERT_GE(log.size(), 2u);
  EXPECT_EQ(log[log.size() - 2], "join");
  EXPECT_EQ(log.back(), "release staging");
}

TEST(PipelineWalk, EveryMixOfMemoryKindsGivesEveryElementThroughItsSlots) {
  for (int depth = 1; depth <= 4; ++depth) {
    for (std::int64_t n : {0, 1, 11, 12, 13, 35, 36, 37, 100}) {
      for (memory_space g : spaces) {
        for (memory_space w : spaces) {
          for (memory_space o : spaces) {
            SCOPED_TRACE("n " + std::to_string(n) + ", depth " + std::to_string(depth) + ", kinds " +
                         std::to_string(int(g)) + std::to_string(int(w)) + std::to_string(int(o)));
            run_layer(n, 12, depth, g, w, o);
            if (HasFatalFailure()) { return; }
          }
        }
      }
    }
  }
}

// A throw in the middle of the walk (a kernel launch failing, say) must not
// hand the staging back while a copy stream may still use it: the join comes first.
TEST(PipelineWalk, AThrowJoinsTheCopyStreamsBeforeTheStagingGoesBack) {
  std::int64_t const n = 100;
  std::vector<float> in(n, 1.0f), out(n, 0.0f);
  std::array<pipeline_view, 1> const ins{
      pipeline_view{reinterpret_cast<const std::byte*>(in.data()), 4, memory_space::pageable}};
  pipeline_view const outv{reinterpret_cast<const std::byte*>(out.data()), 4, memory_space::pageable};
  for (std::int64_t fail_at : {0, 1, 3}) {
    std::vector<std::string> log;
    regions memory;
    memory.add(in.data(), in.size() * 4);
    memory.add(out.data(), out.size() * 4);
    fake_driver driver{log, memory};
    auto const shape = fusekit::detail::shape_of(n, 16, 1, 3, ins, outv);
    EXPECT_THROW(fusekit::detail::walk_pipeline(driver, shape, ins, outv,
                                                [&](int, std::int64_t chunk, std::int64_t, std::int64_t count,
                                                    const std::array<const std::byte*, 1>& i, std::byte* o) {
                                                  if (chunk == fail_at) { throw std::runtime_error("launch failed"); }
                                                  std::memcpy(o, i[0], static_cast<std::size_t>(count) * 4);
                                                }),
                 std::runtime_error);
    auto const join = std::find(log.begin(), log.end(), "join");
    auto const release = std::find(log.begin(), log.end(), "release staging");
    ASSERT_NE(release, log.end()) << "fail at chunk " << fail_at;
    ASSERT_NE(join, log.end()) << "the staging went back with the copy streams unjoined (fail at chunk " << fail_at
                               << ")";
    EXPECT_LT(join - log.begin(), release - log.begin());
    EXPECT_EQ(release + 1, log.end()) << "nothing after the staging goes back";
  }
}

}  // namespace
