// `kbench run --shard i/n`: a deterministic share of the suite's points for
// n nodes of a job array, with no coordination. The seed points of one
// (experiment, dtype, variant) stay together (their `shape=mean` row needs
// all); units are dealt round-robin in list order. No CUDA here.
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

// "i/n" with 1 <= i <= n <= 10000, else ShardError.
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
