// A minimal parallel loop for the CPU references of large shapes.
#pragma once

#include <algorithm>
#include <cstdint>
#include <exception>
#include <thread>
#include <vector>

namespace kb {

// Calls body(i) for every i in [0, n) in contiguous chunks over up to 32
// threads; body writes only what index i owns. A chunk's first exception
// is rethrown after all threads have joined.
template <typename Body>
void parallel_for(int64_t n, Body body) {
  if (n <= 0) return;
  const int64_t hw = std::max<int64_t>(1, std::thread::hardware_concurrency());
  const int64_t threads = std::min<int64_t>({hw, int64_t(32), n});
  if (threads == 1) {
    for (int64_t i = 0; i < n; ++i) body(i);
    return;
  }
  std::vector<std::thread> pool;
  std::vector<std::exception_ptr> errors(static_cast<size_t>(threads));
  const int64_t chunk = (n + threads - 1) / threads;
  for (int64_t t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      try {
        const int64_t end = std::min(n, (t + 1) * chunk);
        for (int64_t i = t * chunk; i < end; ++i) body(i);
      } catch (...) {
        errors[static_cast<size_t>(t)] = std::current_exception();
      }
    });
  }
  for (auto& th : pool) th.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace kb
