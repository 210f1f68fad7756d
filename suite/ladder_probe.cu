#include <algorithm>
#include <chrono>
#include <stdexcept>

#include "kernels/common/cuda_check.h"
#include "kernels/common/device_buffer.h"
#include "suite/chain_probe.h"
#include "suite/experiment.h"
#include "suite/ideal_kernels.h"
#include "suite/ladder_probe.h"
#include "suite/sampling.h"
#include "suite/stats.h"

namespace kb {

namespace {

// The buffer sets one rung rotates over, as many as a point of the same
// bytes gets, so that the ladder pays what a row pays for where its buffers
// landed.
std::vector<DeviceBuffer<char>> rung_sets(size_t bytes) {
  size_t free_b = 0, total = 0;
  KB_CUDA_CHECK(cudaMemGetInfo(&free_b, &total));
  const EngineOptions o;  // the engine's defaults: what `kbench run` builds
  const int n = buffer_sets(bytes, free_b, total, o.max_buffer_sets, o.sampled_bytes_goal);
  std::vector<DeviceBuffer<char>> sets;
  for (int i = 0; i < n; ++i) {
    sets.emplace_back(bytes);
    KB_CUDA_CHECK(cudaMemset(sets.back().get(), 0x5a, bytes));
  }
  KB_CUDA_CHECK(cudaDeviceSynchronize());
  return sets;
}

// The engine's warm-up, for one kernel over `sets` buffer sets: round-robin,
// every set at least once, then until warmup_done (warmed on one set only,
// the ideal kernels read 2-5% faster as rows than in the ladder).
template <typename Run>
void warm_up(Engine& engine, size_t sets, Run&& run) {
  const auto t0 = std::chrono::steady_clock::now();
  int runs = 0;
  do {
    const size_t set = static_cast<size_t>(runs) % sets;
    engine.time_as_sample([&](cudaStream_t s) { run(set, s); });
    ++runs;
  } while (runs < static_cast<int>(sets) || !warmup_done(runs, seconds_since(t0), false));
}

// Rounds over the sets: at least `reps` samples of each kernel, and 3 a set.
int rounds(int reps, size_t sets) {
  return std::max<int>(3, (reps + static_cast<int>(sets) - 1) / static_cast<int>(sets));
}

}  // namespace

LadderProbe probe_ladder(Engine& engine, int sms, size_t mem_bytes, bool quick) {
  // The largest rung: 2 GB, or less where three of them and the flush would
  // take more than 3/16 of the memory.
  double max_bytes = 4096;
  while (max_bytes * 2 <= std::min<double>(double(size_t(2) << 30), mem_bytes / 16.0))
    max_bytes *= 2;
  DeviceBuffer<int> sink(1);
  const int reps = quick ? 5 : 15;
  // The GPU leaves its idle state first: half a second of back-to-back
  // reads (the first rungs of an idle GPU measured up to 8% slow).
  {
    const size_t warm_bytes = static_cast<size_t>(std::min(max_bytes, 256.0 * (1 << 20)));
    DeviceBuffer<char> warm(warm_bytes);
    KB_CUDA_CHECK(cudaMemset(warm.get(), 0, warm_bytes));
    const auto t0 = std::chrono::steady_clock::now();
    while (seconds_since(t0) < (quick ? 0.1 : 0.5))
      engine.time_cold([&](cudaStream_t s) {
        launch_ideal(kIdealReads[0], warm.get(), warm.get(), warm_bytes, sms, sink.get(), s);
      });
  }

  LadderProbe out;
  out.max_bytes = max_bytes;
  auto measure = [&](const Ideal* kernels, size_t n_kernels, std::vector<LadderRung>& rungs,
                     Ladder& ladder) {
    for (double b : ladder_bytes(max_bytes)) {
      const size_t bytes = static_cast<size_t>(b);
      auto sets = rung_sets(bytes);
      auto launch = [&](Ideal k, size_t set, cudaStream_t s) {
        char* p = sets[set].get();
        launch_ideal(k, p, p + bytes / 2, bytes, sms, sink.get(), s);
      };
      std::vector<std::vector<double>> t(n_kernels);
      for (size_t k = 0; k < n_kernels; ++k)
        warm_up(engine, sets.size(),
                [&](size_t set, cudaStream_t s) { launch(kernels[k], set, s); });
      // Each kernel as the engine samples a point: round-robin over the sets
      // (a copy rewriting one output back to back read 8-13% slower).
      for (size_t k = 0; k < n_kernels; ++k)
        for (int r = 0, n = rounds(reps, sets.size()); r < n; ++r)
          for (size_t set = 0; set < sets.size(); ++set)
            t[k].push_back(
                engine.time_as_sample([&](cudaStream_t s) { launch(kernels[k], set, s); }));
      LadderRung rung;
      rung.bytes = b;
      double best = 0;
      for (size_t k = 0; k < n_kernels; ++k) {
        const double m = median(t[k]);
        rung.median_s.push_back({ideal_name(kernels[k]), m});
        best = k == 0 ? m : std::min(best, m);
      }
      rungs.push_back(rung);
      ladder.rungs.push_back({b, best});
    }
    make_monotone(ladder);
  };
  measure(kIdealReads, std::size(kIdealReads), out.read, out.sol.read);
  measure(kIdealCopies, std::size(kIdealCopies), out.copy, out.sol.copy);

  return out;
}

const Experiment& chain_experiment() {
  const Experiment* e = Registry::instance().find(kChainExperiment);
  if (!e)
    throw std::runtime_error(
        std::string("the ladder probe measures the chains of the experiment ") + kChainExperiment +
        ", which this kbench does not have (suite/experiments/roofline_ideal.cu)");
  for (const char* v : {kStreamChain, kGraphChain}) {
    bool have = false;
    for (const Point& p : e->points()) have = have || p.variant == v;
    if (!have)
      throw std::runtime_error(std::string("the ladder probe measures the chains ") + v +
                               " of the experiment " + kChainExperiment +
                               ", which has no such variant");
  }
  return *e;
}

}  // namespace kb
