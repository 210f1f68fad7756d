#include "suite/shard.h"

#include <cstdlib>
#include <map>

namespace kb {

ShardSpec parse_shard(const std::string& spec) {
  const auto slash = spec.find('/');
  auto whole_number = [](const std::string& s, long* out) {
    if (s.empty() || s.size() > 5) return false;
    for (char c : s)
      if (c < '0' || c > '9') return false;
    *out = std::strtol(s.c_str(), nullptr, 10);
    return true;
  };
  long i = 0, n = 0;
  if (slash == std::string::npos || !whole_number(spec.substr(0, slash), &i) ||
      !whole_number(spec.substr(slash + 1), &n))
    throw ShardError("--shard needs i/n (shard i of n, counted from 1: 1/4 .. 4/4), got '" + spec +
                     "'");
  if (n < 1) throw ShardError("--shard " + spec + ": n must be at least 1");
  if (i < 1 || i > n)
    throw ShardError("--shard " + spec + ": i must be from 1 to " + std::to_string(n) +
                     " (shards count from 1)");
  return {static_cast<int>(i), static_cast<int>(n)};
}

std::vector<int> deal_shards(const std::vector<ShardItem>& items, int count) {
  std::vector<int> out;
  out.reserve(items.size());
  std::map<std::string, int> group_unit;  // seed-mean group -> its unit
  int units = 0;
  for (const ShardItem& it : items) {
    int unit;
    if (it.in_seed_mean) {
      auto [pos, fresh] = group_unit.try_emplace(it.experiment + '\x1f' + it.group, units);
      if (fresh) ++units;
      unit = pos->second;
    } else {
      unit = units++;
    }
    out.push_back(count < 1 ? 1 : unit % count + 1);
  }
  return out;
}

}  // namespace kb
