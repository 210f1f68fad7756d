// kbench_gemv_profile: where the time of one GEMV goes, block by block.
//
//   kbench_gemv_profile [--dtype int8|bfloat16] [--N N] [--K K] [--reps R]
//                       [--bulk STAGES,WARPS,BLOCKS_PER_SM[,ROWS[,ROWS_PER_BUFFER]]]
//                       [--bulk-mma 0|1] [--general 0|1]
//
// Times gemv (the default configuration; general_config's under --general
// 1; or the bulk-copy kernel so configured, with tensor-core consumers
// under --bulk-mma 1) as the engine does (after an L2 flush, median of R),
// then runs it R more times with Config::trace set and prints, for the
// median traced run, the blocks' timeline relative to
// the first block's start (%globaltimer, ns): when the last block started,
// when the blocks' weight streams ended (percentiles), and how many blocks
// were still streaming at points of the run, against the event-timed
// duration. The tail (the last blocks alone) and the ramp (the first
// blocks before the grid is resident) show here.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "kernels/common/cuda_check.h"
#include "kernels/common/device_buffer.h"
#include "kernels/common/fill.h"
#include "kernels/common/read_buffer.h"
#include "kernels/gemv/gemv.h"
#include "suite/stats.h"
#include "tools/common/options.h"

namespace {

struct Args {
  bool int8 = true;
  int64_t N = 16384, K = 16384;
  int reps = 20;
  int bulk_stages = 0, bulk_warps = 16, bulk_per_sm = 1, bulk_rows = 2, bulk_rs = 0;  // --bulk
  bool bulk_mma = false;                                                              // --bulk-mma
  bool general = false;                                                               // --general
};

[[noreturn]] void usage(const std::string& why) {
  kb::tools::exit_with_usage(
      why,
      "kbench_gemv_profile [--dtype int8|bfloat16] [--N N] [--K K] [--reps R] "
      "[--bulk STAGES,WARPS,BLOCKS_PER_SM[,ROWS[,ROWS_PER_BUFFER]]] [--bulk-mma 0|1] [--general "
      "0|1]");
}

Args parse(int argc, char** argv) {
  Args a;
  kb::tools::for_each_option(
      argc, argv,
      [&](const std::string& k, const std::string& v) {
        if (k == "--dtype")
          a.int8 = v == "int8"                      ? true
                   : v == "bfloat16" || v == "bf16" ? false
                                                    : (usage("--dtype: int8 or bfloat16"), true);
        else if (k == "--N")
          a.N = std::atoll(v.c_str());
        else if (k == "--K")
          a.K = std::atoll(v.c_str());
        else if (k == "--reps")
          a.reps = std::atoi(v.c_str());
        else if (k == "--bulk-mma")
          a.bulk_mma = kb::tools::flag_01(k, v, usage);
        else if (k == "--general")
          a.general = kb::tools::flag_01(k, v, usage);
        else if (k == "--bulk") {
          if (std::sscanf(v.c_str(), "%d,%d,%d,%d,%d", &a.bulk_stages, &a.bulk_warps,
                          &a.bulk_per_sm, &a.bulk_rows, &a.bulk_rs) < 3 ||
              a.bulk_stages < 1)
            usage(
                "--bulk: STAGES,WARPS,BLOCKS_PER_SM[,ROWS[,ROWS_PER_BUFFER]], e.g. 4,16,1 "
                "(gemv::Bulk)");
        } else
          usage("unknown option " + k);
      },
      usage);
  if (a.reps < 1 || a.N < 1 || a.K < 1) usage("--reps, --N and --K must be positive");
  if (a.bulk_mma && a.bulk_stages == 0) usage("--bulk-mma needs --bulk");
  if (a.general && a.bulk_stages > 0) usage("--general and --bulk: one or the other");
  return a;
}

}  // namespace

int main(int argc, char** argv) {
  const Args a = parse(argc, argv);
  try {
    namespace gemv = kb::gemv;
    cudaDeviceProp prop{};
    KB_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    cudaStream_t s;
    KB_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    const size_t wbytes = static_cast<size_t>(a.N) * a.K * (a.int8 ? 1 : 2);
    kb::DeviceBuffer<uint8_t> w(wbytes), flush(static_cast<size_t>(prop.l2CacheSize) * 2);
    kb::DeviceBuffer<kb::gemv::bf16> scale(a.N), x(a.K), y(a.N);
    if (a.int8)
      kb::fill_int8(reinterpret_cast<int8_t*>(w.get()), wbytes, 7, s);
    else
      kb::fill_bf16(reinterpret_cast<kb::gemv::bf16*>(w.get()), wbytes / 2, 7, s);
    kb::fill_bf16(scale.get(), a.N, 8, s);
    kb::fill_bf16(x.get(), a.K, 9, s);
    gemv::Config cfg =
        a.general ? gemv::general_config(a.int8, a.N, a.K) : gemv::default_config(a.int8, a.N, a.K);
    if (cfg.is<gemv::OneLoad>())  // the general, bulk, tile and mma kernels carry the trace
      cfg = gemv::Config(gemv::general_kernel(a.int8, a.N, a.K));
    if (a.bulk_stages > 0) {
      cfg = gemv::bulk_config(a.bulk_stages, a.bulk_warps, a.bulk_per_sm, a.bulk_rows, a.bulk_rs);
      cfg.get<gemv::Bulk>()->mma = a.bulk_mma;
    }
    const int64_t blocks = gemv::grid_blocks(a.int8, a.N, a.K, cfg);
    kb::DeviceBuffer<unsigned long long> trace(2 * blocks);
    cudaEvent_t e0, e1;
    KB_CUDA_CHECK(cudaEventCreate(&e0));
    KB_CUDA_CHECK(cudaEventCreate(&e1));
    auto run = [&](bool traced) {
      gemv::Config c = cfg;
      if (traced) c.trace = trace.get();
      gemv::Operands op;
      op.int8 = a.int8;
      op.W = w.get();
      op.scale = a.int8 ? scale.get() : nullptr;
      op.x = x.get();
      op.y = y.get();
      op.N = a.N;
      op.K = a.K;
      gemv::launch(op, c, s);
    };
    auto timed = [&](bool traced) {
      kb::read_buffer(flush.get(), flush.bytes(), s);
      KB_CUDA_CHECK(cudaEventRecord(e0, s));
      run(traced);
      KB_CUDA_CHECK(cudaEventRecord(e1, s));
      KB_CUDA_CHECK(cudaEventSynchronize(e1));
      float ms = 0;
      KB_CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
      return ms * 1e3;
    };
    timed(false);
    std::vector<double> plain, traced_us;
    for (int i = 0; i < a.reps; ++i) plain.push_back(timed(false));
    const std::string config =
        std::string(gemv::family_name(cfg.kernel)) + " " + gemv::kernel_name(cfg.kernel);
    int threads = 0;  // per block
    if (const auto* g = cfg.get<gemv::General>()) threads = 32 * g->warps;
    if (const auto* t = cfg.get<gemv::Tile>()) threads = 32 * t->warps;
    if (const auto* m = cfg.get<gemv::Mma>()) threads = 32 * m->warps;
    if (const auto* b = cfg.get<gemv::Bulk>()) threads = 32 * (b->warps + 1);  // + the producer
    std::printf("%s gemv N=%lld K=%lld on %s: config %s, %lld blocks of %d threads\n",
                a.int8 ? "int8" : "bf16", (long long)a.N, (long long)a.K, prop.name, config.c_str(),
                (long long)blocks, threads);
    const double med = kb::quantile(plain, 0.5);
    std::printf("  event-timed: median %.2f us (%.0f GB/s of weights), min %.2f, max %.2f\n", med,
                wbytes / med * 1e-3, kb::quantile(plain, 0), kb::quantile(plain, 1));
    // Traced runs: keep the one whose span is the median.
    std::vector<std::pair<double, std::vector<unsigned long long>>> runs;
    for (int i = 0; i < a.reps; ++i) {
      const double t = timed(true);
      runs.push_back({t, trace.download()});
      traced_us.push_back(t);
    }
    std::sort(runs.begin(), runs.end(),
              [](const auto& l, const auto& r) { return l.first < r.first; });
    const auto& [t_run, tr] = runs[runs.size() / 2];
    unsigned long long t0 = ~0ull;
    for (int64_t b = 0; b < blocks; ++b) t0 = std::min(t0, tr[2 * b]);
    std::vector<double> start, end, dur;
    for (int64_t b = 0; b < blocks; ++b) {
      if (tr[2 * b + 1] == 0) continue;  // a block with no rows
      start.push_back((tr[2 * b] - t0) * 1e-3);
      end.push_back((tr[2 * b + 1] - t0) * 1e-3);
      dur.push_back((tr[2 * b + 1] - tr[2 * b]) * 1e-3);
    }
    const double last_end = kb::quantile(end, 1);
    std::printf(
        "  traced run (event-timed %.2f us; traced median %.2f): first start 0, last start %.2f "
        "us\n",
        t_run, kb::quantile(traced_us, 0.5), kb::quantile(start, 1));
    std::printf("  streams end: first %.2f, 50%% %.2f, 90%% %.2f, 99%% %.2f, last %.2f us\n",
                kb::quantile(end, 0), kb::quantile(end, 0.5), kb::quantile(end, 0.9),
                kb::quantile(end, 0.99), last_end);
    std::printf("  block stream time: min %.2f, median %.2f, max %.2f us\n", kb::quantile(dur, 0),
                kb::quantile(dur, 0.5), kb::quantile(dur, 1));
    std::printf("  blocks streaming at:");
    for (double f : {0.01, 0.05, 0.25, 0.5, 0.75, 0.9, 0.95, 0.98, 0.99}) {
      const double t = f * last_end;
      int n = 0;
      for (size_t i = 0; i < start.size(); ++i) n += start[i] <= t && end[i] > t;
      std::printf(" %.0f%%:%d", f * 100, n);
    }
    std::printf("\n  ideal stream at the file's read ceiling would be %.2f us of the %.2f\n",
                wbytes / 3151e3, last_end);
    KB_CUDA_CHECK(cudaStreamSynchronize(s));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kbench_gemv_profile: %s\n", e.what());
    return 1;
  }
  return 0;
}
