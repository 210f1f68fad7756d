// `kbench run --shard i/n`: a deterministic share of the suite's points, so
// that n nodes of a scheduler's job array (Slurm, a Kubernetes Indexed Job)
// measure the suite between them, each point once, with no coordination:
// every node builds the same ordered list (the selected experiments in the
// registry's order, each one's points in order) and keeps its share of it.
//
// The unit dealt out is not the point but the group a row depends on: the
// seed points of one (experiment, dtype, variant) stay together, because
// their `shape=mean` row is the mean over all of them; every other point is
// a unit of its own. Units are dealt round-robin in list order (unit u to
// shard u mod n), which spreads each experiment's points over the shards.
// No CUDA here: the CPU tests check it.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace kb {

struct ShardError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// 1-based: shard `index` of `count` (1/1 = the whole suite).
struct ShardSpec {
  int index = 1;
  int count = 1;
  bool whole() const { return count == 1; }
};

// "i/n" with 1 <= i <= n <= 10000; ShardError with a message naming the
// problem otherwise ("--shard 0/3": shards count from 1).
ShardSpec parse_shard(const std::string& spec);

// One point of the ordered list, as far as dealing it needs.
struct ShardItem {
  std::string experiment;
  bool in_seed_mean = false;  // its rows feed the experiment's `shape=mean` row
  std::string group;          // the seed-mean group within the experiment (dtype;variant)
};

// The shard (1-based) of each item of `items`, in order.
std::vector<int> deal_shards(const std::vector<ShardItem>& items, int count);

}  // namespace kb
