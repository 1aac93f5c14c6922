// SPDX-License-Identifier: Apache-2.0
// The host-data pipeline's schedule (detail/host_data/plan.hpp), checked on the
// CPU for every size from 0 to a few chunks, every alignment and depth, and
// every combination of memory kinds. Each plan is run many times by a
// simulator that starts, at random, any op whose queue is free and whose
// listed dependencies are done, and models every staging slot: a read must
// find the chunk it expects, and a write must not clobber a chunk that is
// still to be read. Each element must be staged, uploaded, computed,
// downloaded and staged out exactly once, as the memory kinds ask.
#include <fusekit/detail/host_data/plan.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace {

using fusekit::detail::pipeline_op;
using fusekit::detail::pipeline_op_kind;
using fusekit::detail::pipeline_queue;
using fusekit::detail::pipeline_shape;
using fusekit::detail::plan_pipeline;

constexpr int kinds = 5;
constexpr int queues = 4;

// One staging slot: which chunk it holds, and whether that chunk is still to be read.
struct slot {
  std::int64_t chunk = -1;
  bool pending = false;
};

struct simulation {
  std::vector<slot> pinned_in, device_in, device_out, pinned_out;
};

// Writes chunk c into s; fails if s holds a chunk that is still to be read.
void write(slot& s, std::int64_t c, const char* what, std::string& error) {
  if (s.pending && error.empty()) {
    error = std::string(what) + " of chunk " + std::to_string(c) + " overwrote chunk " + std::to_string(s.chunk);
  }
  s = {c, true};
}

// Reads chunk c from s; fails unless s holds it.
void read(slot& s, std::int64_t c, const char* what, std::string& error) {
  if ((s.chunk != c || !s.pending) && error.empty()) {
    error = std::string(what) + " of chunk " + std::to_string(c) + " found chunk " + std::to_string(s.chunk);
  }
  s.pending = false;
}

// Runs the plan once in a random order the dependencies allow; returns "" or the first hazard.
std::string simulate(const pipeline_shape& shape, const std::vector<pipeline_op>& ops, std::mt19937& rng,
                     std::vector<std::array<int, kinds>>& touched) {
  int const depth = shape.depth;
  simulation sim{std::vector<slot>(depth), std::vector<slot>(depth), std::vector<slot>(depth),
                 std::vector<slot>(depth)};
  std::vector<std::vector<std::size_t>> queue(queues);
  for (std::size_t k = 0; k < ops.size(); ++k) {
    queue[static_cast<std::size_t>(fusekit::detail::queue_of(ops[k].kind))].push_back(k);
  }
  std::vector<std::size_t> head(queues, 0);
  std::vector<bool> done(ops.size(), false);
  bool const upload = shape.upload || shape.stage_in;
  bool const download = shape.download || shape.stage_out;
  std::string error;
  for (std::size_t step = 0; step < ops.size(); ++step) {
    std::vector<int> ready;
    for (int q = 0; q < queues; ++q) {
      if (head[q] == queue[q].size()) { continue; }
      const pipeline_op& op = ops[queue[q][head[q]]];
      bool ok = true;
      for (std::int64_t a : op.after) { ok = ok && (a < 0 || done[static_cast<std::size_t>(a)]); }
      if (ok) { ready.push_back(q); }
    }
    if (ready.empty()) { return "deadlock after " + std::to_string(step) + " ops"; }
    int const q = ready[std::uniform_int_distribution<std::size_t>(0, ready.size() - 1)(rng)];
    std::size_t const k = queue[q][head[q]++];
    const pipeline_op& op = ops[k];
    auto const s = static_cast<std::size_t>(op.slot);
    switch (op.kind) {
      case pipeline_op_kind::stage_in:
        write(sim.pinned_in[s], op.chunk, "stage_in", error);
        break;
      case pipeline_op_kind::upload:
        if (shape.stage_in) { read(sim.pinned_in[s], op.chunk, "upload", error); }
        write(sim.device_in[s], op.chunk, "upload", error);
        break;
      case pipeline_op_kind::compute:
        if (upload) { read(sim.device_in[s], op.chunk, "compute", error); }
        if (download) { write(sim.device_out[s], op.chunk, "compute", error); }
        break;
      case pipeline_op_kind::download:
        read(sim.device_out[s], op.chunk, "download", error);
        if (shape.stage_out) { write(sim.pinned_out[s], op.chunk, "download", error); }
        break;
      case pipeline_op_kind::stage_out:
        read(sim.pinned_out[s], op.chunk, "stage_out", error);
        break;
    }
    for (std::int64_t i = op.begin; i < op.begin + op.count; ++i) {
      ++touched[static_cast<std::size_t>(i)][static_cast<std::size_t>(op.kind)];
    }
    done[k] = true;
    if (!error.empty()) { return error; }
  }
  return error;
}

TEST(PipelinePlan, EveryElementMovesOnceAndNoSlotIsClobbered) {
  std::mt19937 rng(2024);
  std::int64_t const chunk = 12;
  std::int64_t plans = 0;
  for (std::int64_t align : {1, 2, 3, 4, 5, 8, 12, 16}) {
    for (int depth = 1; depth <= 4; ++depth) {
      for (int kinds_mask = 0; kinds_mask < 16; ++kinds_mask) {
        pipeline_shape shape;
        shape.chunk = chunk;
        shape.align = align;
        shape.depth = depth;
        shape.stage_in = (kinds_mask & 1) != 0;
        shape.upload = (kinds_mask & 2) != 0;
        shape.stage_out = (kinds_mask & 4) != 0;
        shape.download = (kinds_mask & 8) != 0;
        std::int64_t const step = fusekit::detail::pipeline_chunk(chunk, align);
        for (std::int64_t n = 0; n <= 5 * step + align + 1; ++n) {
          shape.n = n;
          std::vector<pipeline_op> const ops = plan_pipeline(shape);
          ++plans;
          SCOPED_TRACE("n " + std::to_string(n) + ", align " + std::to_string(align) + ", depth " +
                       std::to_string(depth) + ", kinds " + std::to_string(kinds_mask));
          // Chunks start on a multiple of the alignment and of the chunk; dependencies point back;
          // every op fits the staging staging_for sizes.
          auto const st = fusekit::detail::staging_for(shape);
          for (std::size_t k = 0; k < ops.size(); ++k) {
            ASSERT_LT(ops[k].slot, st.slots);
            ASSERT_LE(ops[k].count, st.elements);
            ASSERT_EQ(ops[k].begin % align, 0);
            ASSERT_EQ(ops[k].begin, ops[k].chunk * step);
            ASSERT_GT(ops[k].count, 0);
            ASSERT_EQ(ops[k].slot, ops[k].chunk % depth);
            for (std::int64_t a : ops[k].after) { ASSERT_LT(a, static_cast<std::int64_t>(k)); }
          }
          bool const upload = shape.upload || shape.stage_in;
          bool const download = shape.download || shape.stage_out;
          int const expected[kinds] = {shape.stage_in ? 1 : 0, upload ? 1 : 0, 1, download ? 1 : 0,
                                       shape.stage_out ? 1 : 0};
          for (int trial = 0; trial < 8; ++trial) {
            std::vector<std::array<int, kinds>> touched(static_cast<std::size_t>(n), {0, 0, 0, 0, 0});
            std::string const hazard = simulate(shape, ops, rng, touched);
            ASSERT_EQ(hazard, "");
            for (std::int64_t i = 0; i < n; ++i) {
              for (int kind = 0; kind < kinds; ++kind) {
                ASSERT_EQ(touched[static_cast<std::size_t>(i)][static_cast<std::size_t>(kind)], expected[kind])
                    << "element " << i << ", op kind " << kind;
              }
            }
          }
        }
      }
    }
  }
  EXPECT_GT(plans, 10000);
}

// Whether op `a` must finish before op `k` starts in `ops`: reachable backwards
// through the listed dependencies and the issue order of each queue.
bool implied(const std::vector<pipeline_op>& ops, std::size_t k, std::int64_t a) {
  std::vector<bool> seen(ops.size(), false);
  std::vector<std::size_t> stack{k};
  while (!stack.empty()) {
    std::size_t const j = stack.back();
    stack.pop_back();
    std::vector<std::int64_t> preds(ops[j].after.begin(), ops[j].after.end());
    for (std::size_t p = j; p-- > 0;) {  // the previous op of the same queue
      if (fusekit::detail::queue_of(ops[p].kind) == fusekit::detail::queue_of(ops[j].kind)) {
        preds.push_back(static_cast<std::int64_t>(p));
        break;
      }
    }
    for (std::int64_t p : preds) {
      if (p < 0 || seen[static_cast<std::size_t>(p)]) { continue; }
      if (p == a) { return true; }
      seen[static_cast<std::size_t>(p)] = true;
      stack.push_back(static_cast<std::size_t>(p));
    }
  }
  return false;
}

// Every listed dependency matters: dropping any one of them either lets the
// simulator find a hazard, or leaves it implied by the others (the host
// thread runs its copies in order, which orders some slots already).
TEST(PipelinePlan, EachDependencyIsNeededOrImplied) {
  int needed = 0;
  for (int kinds_mask : {15, 10, 3, 12}) {
    pipeline_shape shape;
    shape.n = 6 * 8;
    shape.chunk = 8;
    shape.depth = 2;
    shape.stage_in = (kinds_mask & 1) != 0;
    shape.upload = (kinds_mask & 2) != 0;
    shape.stage_out = (kinds_mask & 4) != 0;
    shape.download = (kinds_mask & 8) != 0;
    std::vector<pipeline_op> const ops = plan_pipeline(shape);
    for (std::size_t k = 0; k < ops.size(); ++k) {
      for (std::size_t d = 0; d < 2; ++d) {
        std::int64_t const a = ops[k].after[d];
        if (a < 0) { continue; }
        std::vector<pipeline_op> broken = ops;
        broken[k].after[d] = -1;
        if (implied(broken, k, a)) { continue; }
        std::mt19937 rng(7);
        bool caught = false;
        for (int trial = 0; trial < 400 && !caught; ++trial) {
          std::vector<std::array<int, kinds>> touched(static_cast<std::size_t>(shape.n), {0, 0, 0, 0, 0});
          caught = !simulate(shape, broken, rng, touched).empty();
        }
        EXPECT_TRUE(caught) << "kinds " << kinds_mask << ": dependency " << d << " of op " << k
                            << " is neither needed nor implied";
        ++needed;
      }
    }
  }
  EXPECT_GT(needed, 40);
}

// No more staging than the call can use: slots = min(depth, chunks), elements = min(chunk, n).
TEST(PipelinePlan, StagingIsNoLargerThanTheCall) {
  auto const staging = [](std::int64_t n, std::int64_t chunk, int depth) {
    pipeline_shape s;
    s.n = n;
    s.chunk = chunk;
    s.depth = depth;
    auto const st = fusekit::detail::staging_for(s);
    return std::pair<int, std::int64_t>{st.slots, st.elements};
  };
  std::int64_t const mib4_floats = std::int64_t{1} << 20;  // the default 4 MiB chunk of floats
  EXPECT_EQ(staging(std::int64_t{1} << 20, mib4_floats, 4), (std::pair<int, std::int64_t>{1, mib4_floats}));
  EXPECT_EQ(staging(100, mib4_floats, 4), (std::pair<int, std::int64_t>{1, 100}));
  EXPECT_EQ(staging(3 * mib4_floats, mib4_floats, 4), (std::pair<int, std::int64_t>{3, mib4_floats}));
  EXPECT_EQ(staging(3 * mib4_floats + 1, mib4_floats, 4), (std::pair<int, std::int64_t>{4, mib4_floats}));
  EXPECT_EQ(staging(std::int64_t{1} << 28, mib4_floats, 4), (std::pair<int, std::int64_t>{4, mib4_floats}));
  EXPECT_EQ(staging(0, mib4_floats, 4), (std::pair<int, std::int64_t>{0, 0}));
  EXPECT_EQ(staging(5, 8, 0), (std::pair<int, std::int64_t>{1, 5}));  // depth below 1 counts as 1, as in plan_pipeline
}

TEST(PipelinePlan, ChunkSizeRoundsDownToTheAlignment) {
  EXPECT_EQ(fusekit::detail::pipeline_chunk(100, 8), 96);
  EXPECT_EQ(fusekit::detail::pipeline_chunk(5, 8), 8);
  EXPECT_EQ(fusekit::detail::pipeline_chunk(1 << 20, 8192), 1 << 20);
  EXPECT_EQ(fusekit::detail::pipeline_chunk(0, 1), 1);
  EXPECT_TRUE(plan_pipeline(pipeline_shape{}).empty());
}

}  // namespace
