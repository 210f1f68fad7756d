// Which rows (tokens, columns) a check of a large output looks at.
#pragma once

#include <algorithm>
#include <cstdint>
#include <set>
#include <vector>

namespace kb {

namespace detail {
// The next value of a splitmix64 stream at state s.
inline uint64_t splitmix64(uint64_t& s) {
  uint64_t z = (s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
}  // namespace detail

// The first and the last of [0, n) (the edges, where tile bounds go wrong)
// and seeded random ones between, `count` in all, distinct and sorted; all
// of them when n <= count.
inline std::vector<int64_t> sample_indices(int64_t n, int64_t count, uint64_t seed) {
  std::vector<int64_t> out;
  if (n <= 0) return out;
  if (count >= n) {
    for (int64_t i = 0; i < n; ++i) out.push_back(i);
    return out;
  }
  std::set<int64_t> picked = {0, n - 1};
  uint64_t s = seed;
  while (static_cast<int64_t>(picked.size()) < std::max<int64_t>(count, 2))
    picked.insert(static_cast<int64_t>(detail::splitmix64(s) % static_cast<uint64_t>(n)));
  return {picked.begin(), picked.end()};
}

// `per_band` seeded random indices in every band [b * band, (b + 1) * band)
// of [0, n) (all of a band no larger), and the first and the last of [0, n);
// distinct and sorted (with band no larger than a GEMM's tile, the crossings
// of such rows and columns hold an output of every tile).
inline std::vector<int64_t> sample_per_band(int64_t n, int64_t band, int64_t per_band,
                                            uint64_t seed) {
  std::set<int64_t> picked;
  if (n <= 0 || band <= 0 || per_band <= 0) return {};
  picked.insert(0);
  picked.insert(n - 1);
  uint64_t s = seed;
  for (int64_t lo = 0; lo < n; lo += band) {
    const int64_t width = std::min(band, n - lo);
    std::set<int64_t> in_band;
    while (static_cast<int64_t>(in_band.size()) < std::min(per_band, width))
      in_band.insert(lo +
                     static_cast<int64_t>(detail::splitmix64(s) % static_cast<uint64_t>(width)));
    picked.insert(in_band.begin(), in_band.end());
  }
  return {picked.begin(), picked.end()};
}

}  // namespace kb
