// The communicators the collectives tests run on, with the membership each must have: the world, and two
// splits into unequal groups (color = rank % 2, so W = 3 gives sizes 2 and 1), one ranked by rank and one
// by a key that reverses the order. Tests compare against references built from `members`, so a backend
// that ignored the split (or its key) fails them.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "backends.hpp"
#include "llmtrain/dist/collectives.hpp"
#include "llmtrain/dist/runtime.hpp"

extern llmtrain::dist::Runtime* g_runtime;

namespace llmtrain::dist::testing {

struct Group {
  std::string label;
  std::unique_ptr<Collectives> comm;
  std::vector<int> members;  // world rank of each member, in the communicator's rank order
};

// Collective over the world: every rank builds the same three groups in the same order.
inline std::vector<Group> groups(std::size_t max_chunk = kMpiMaxChunk) {
  const int me = g_runtime->rank(), world = g_runtime->size();
  std::vector<Group> out;
  auto all = make_mpi_collectives(*g_runtime, max_chunk);
  std::vector<int> same_parity;
  for (int r = me % 2; r < world; r += 2) same_parity.push_back(r);
  auto by_rank = all->split(me % 2, me);
  auto reversed = all->split(me % 2, -me);
  std::vector<int> everyone(world);
  for (int r = 0; r < world; ++r) everyone[r] = r;
  out.push_back({"world", std::move(all), everyone});
  out.push_back({"rank % 2, by rank", std::move(by_rank), same_parity});
  std::reverse(same_parity.begin(), same_parity.end());
  out.push_back({"rank % 2, reversed", std::move(reversed), same_parity});
  // A failed expectation must not change which collectives a rank calls (the others would wait for it):
  // a wrong size would, as buffers are sized from it, so that one ends the job.
  for (const Group& g : out) {
    if (g.comm->size() != int(g.members.size())) {
      ADD_FAILURE() << g.label << ": size " << g.comm->size() << ", expected " << g.members.size();
      g_runtime->abort(1);
    }
    EXPECT_EQ(g.members[std::size_t(g.comm->rank())], me) << g.label << ": wrong rank order";
  }
  return out;
}

}  // namespace llmtrain::dist::testing
