// A minimal parallel loop for CPU references: the checks of the large GEMM
// and MLP shapes do billions of multiply-adds, which take seconds on one
// core and a fraction of a second on the GPU machine's 16.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <thread>
#include <vector>

namespace kb {

// The CPU threads a reference may use: KBENCH_HOST_THREADS where it is a
// positive number, else hardware_concurrency(). `kbench run` on several
// GPUs sets it to the host's threads divided by the GPUs for every GPU's
// chain of workers (docs/scale.md): their references run at once.
inline int host_threads() {
  static const int n = [] {
    if (const char* e = std::getenv("KBENCH_HOST_THREADS")) {
      const int v = std::atoi(e);
      if (v > 0) return v;
    }
    return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  }();
  return n;
}

// Calls body(i) for every i in [0, n), split into contiguous chunks over up
// to host_threads() threads (capped at 32). body must only write
// state owned by index i. The first exception thrown by a chunk is rethrown
// here after all threads have joined.
template <typename Body>
void parallel_for(int64_t n, Body body) {
  if (n <= 0) return;
  const int64_t hw = host_threads();
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
