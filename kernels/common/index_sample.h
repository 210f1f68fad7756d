// Which rows (tokens, columns) a check of a large output looks at: the
// first and the last (the edges, where tile bounds go wrong) and seeded
// random ones between, distinct and sorted. All of them when n <= count.
#pragma once

#include <algorithm>
#include <cstdint>
#include <set>
#include <vector>

namespace kb {

inline std::vector<int64_t> sample_indices(int64_t n, int64_t count, uint64_t seed) {
  std::vector<int64_t> out;
  if (n <= 0) return out;
  if (count >= n) {
    for (int64_t i = 0; i < n; ++i) out.push_back(i);
    return out;
  }
  std::set<int64_t> picked = {0, n - 1};
  uint64_t s = seed;
  while (static_cast<int64_t>(picked.size()) < std::max<int64_t>(count, 2)) {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);  // splitmix64
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    picked.insert(static_cast<int64_t>(z % static_cast<uint64_t>(n)));
  }
  return {picked.begin(), picked.end()};
}

}  // namespace kb
