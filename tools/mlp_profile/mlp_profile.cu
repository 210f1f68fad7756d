// kbench_mlp_profile: where the time of one mlp_layer_norm_gelu call goes.
//
//   kbench_mlp_profile [--tokens T] [--D D[,D...]] [--reps R] [--chunks C[,C...]]
//
// For each D (default 1024,4096,8192,16384; T default 4096), builds the
// MLP's pieces as kb::mlp::Mlp does (two bare cuBLASLt GEMMs, tuned; the
// LayerNorm+GELU with the first bias; the last LayerNorm with the second)
// and prints medians of R samples (default 20), each after an L2 flush:
//   - the whole call (four kernels back to back), and the same call with
//     an event between kernels: each kernel's share in place;
//   - each GEMM alone (the bare GEMM rows' measurement);
//   - the LayerNorm over h alone with no activation, tanh GELU and erf GELU
//     (memory-bound if they agree);
//   - with --chunks: the call as C token chunks of T/C each (both GEMMs at
//     M = T/C), where h and g of a chunk may stay in L2 between kernels.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/common/cuda_check.h"
#include "kernels/common/device_buffer.h"
#include "kernels/common/fill.h"
#include "kernels/common/read_buffer.h"
#include "kernels/gemm/gemm.h"
#include "kernels/layer_norm/layer_norm.h"
#include "kernels/mlp/mlp.h"
#include "suite/stats.h"
#include "tools/common/options.h"

namespace {

using bf16 = __nv_bfloat16;
namespace ln = kb::layer_norm;

struct Args {
  int64_t tokens = 4096;
  std::vector<int64_t> dims = {1024, 4096, 8192, 16384};
  std::vector<int64_t> chunks;
  int reps = 20;
};

[[noreturn]] void usage(const std::string& why) {
  kb::tools::exit_with_usage(
      why, "kbench_mlp_profile [--tokens T] [--D D[,D...]] [--reps R] [--chunks C[,C...]]");
}

std::vector<int64_t> list(const std::string& v) {
  std::vector<int64_t> out;
  std::stringstream ss(v);
  std::string item;
  while (std::getline(ss, item, ',')) {
    const long long n = std::atoll(item.c_str());
    if (n <= 0) usage("bad list '" + v + "'");
    out.push_back(n);
  }
  return out;
}

Args parse(int argc, char** argv) {
  Args a;
  kb::tools::for_each_option(
      argc, argv,
      [&](const std::string& k, const std::string& v) {
        if (k == "--tokens")
          a.tokens = std::atoll(v.c_str());
        else if (k == "--D")
          a.dims = list(v);
        else if (k == "--chunks")
          a.chunks = list(v);
        else if (k == "--reps")
          a.reps = std::atoi(v.c_str());
        else
          usage("unknown option " + k);
      },
      usage);
  if (a.reps < 1 || a.tokens < 1) usage("--reps and --tokens must be positive");
  return a;
}

class Timer {
 public:
  explicit Timer(cudaStream_t s, size_t flush_bytes) : s_(s), flush_(flush_bytes) {
    events_.resize(8);
    for (auto& e : events_) KB_CUDA_CHECK(cudaEventCreate(&e));
  }
  ~Timer() {
    for (auto& e : events_) cudaEventDestroy(e);
  }
  // Medians (µs) of the intervals between the steps' ends: steps.size()
  // values, each sample after an L2 flush.
  std::vector<double> time(const std::vector<std::function<void()>>& steps, int reps) {
    std::vector<std::vector<double>> t(steps.size());
    for (int r = 0; r < reps + 1; ++r) {
      kb::read_buffer(flush_.get(), flush_.bytes(), s_);
      KB_CUDA_CHECK(cudaEventRecord(events_[0], s_));
      for (size_t i = 0; i < steps.size(); ++i) {
        steps[i]();
        KB_CUDA_CHECK(cudaEventRecord(events_[i + 1], s_));
      }
      KB_CUDA_CHECK(cudaEventSynchronize(events_[steps.size()]));
      if (r == 0) continue;  // warm-up
      for (size_t i = 0; i < steps.size(); ++i) {
        float ms = 0;
        KB_CUDA_CHECK(cudaEventElapsedTime(&ms, events_[i], events_[i + 1]));
        t[i].push_back(ms * 1e3);
      }
    }
    std::vector<double> out;
    for (auto& v : t) out.push_back(kb::median(v));
    return out;
  }
  double time1(const std::function<void()>& f, int reps) { return time({f}, reps)[0]; }

 private:
  cudaStream_t s_;
  kb::DeviceBuffer<uint8_t> flush_;
  std::vector<cudaEvent_t> events_;
};

void fill(kb::DeviceBuffer<bf16>& b, uint64_t seed, cudaStream_t s) {
  kb::fill_bf16(b.get(), b.size(), seed, s);
}

void profile(int64_t T, int64_t D, const Args& a, Timer& timer, cudaStream_t s) {
  const int64_t F = kb::mlp::kHidden;
  kb::DeviceBuffer<bf16> x(T * D), w1(F * D), b1(F), g1(F), be1(F), w2(D * F), b2(D), g2(D), be2(D),
      h(T * F), g(T * F), u(T * D), y(T * D);
  uint64_t seed = 11;
  for (auto* b : {&x, &w1, &b1, &g1, &be1, &w2, &b2, &g2, &be2}) fill(*b, seed++, s);
  kb::gemm::Gemm up(T, F, D), down(T, D, F);
  const double flops = 4.0 * T * D * F;
  auto gemm1 = [&] { up.run(x.get(), w1.get(), nullptr, h.get(), s); };
  auto gemm2 = [&] { down.run(g.get(), w2.get(), nullptr, u.get(), s); };
  auto ln_h = [&](ln::Activation act) {
    return [&, act] {
      ln::layer_norm(h.get(), g1.get(), be1.get(), g.get(), T, F, kb::mlp::kEps, act, s, b1.get());
    };
  };
  auto ln_u = [&] {
    ln::layer_norm(u.get(), g2.get(), be2.get(), y.get(), T, D, kb::mlp::kEps, ln::Activation::none,
                   s, b2.get());
  };
  auto whole = [&] {
    gemm1();
    ln_h(ln::Activation::gelu_erf)();
    gemm2();
    ln_u();
  };
  const double t_whole = timer.time1(whole, a.reps);
  const auto parts = timer.time({gemm1, ln_h(ln::Activation::gelu_erf), gemm2, ln_u}, a.reps);
  const double t_up = timer.time1(gemm1, a.reps), t_down = timer.time1(gemm2, a.reps);
  const double t_none = timer.time1(ln_h(ln::Activation::none), a.reps);
  const double t_tanh = timer.time1(ln_h(ln::Activation::gelu_tanh), a.reps);
  const double t_erf = timer.time1(ln_h(ln::Activation::gelu_erf), a.reps);
  const double t_lnu = timer.time1(ln_u, a.reps);
  std::printf("\nT=%lld D=%lld F=%lld   up=%s   down=%s\n", (long long)T, (long long)D,
              (long long)F, up.id().c_str(), down.id().c_str());
  std::printf(
      "  whole call             %9.1f us  %6.1f TFLOP/s   bare GEMMs %9.1f us  ratio %.3f\n",
      t_whole, flops / t_whole * 1e-6, t_up + t_down, (t_up + t_down) / t_whole);
  std::printf("  in place: up %.1f | LN+GELU %.1f | down %.1f | LN %.1f  (sum %.1f)\n", parts[0],
              parts[1], parts[2], parts[3], parts[0] + parts[1] + parts[2] + parts[3]);
  const double hb = 2.0 * T * F * 2;  // h read + g written
  std::printf(
      "  alone: up %.1f  down %.1f  | LN(h) none %.1f  tanh %.1f  erf %.1f us (%.0f GB/s erf) | "
      "LN(u) %.1f us\n",
      t_up, t_down, t_none, t_tanh, t_erf, hb / t_erf * 1e-3, t_lnu);
  for (int64_t c : a.chunks) {
    if (T % c != 0) {
      std::printf("  chunks=%lld: T not divisible, skipped\n", (long long)c);
      continue;
    }
    const int64_t Tc = T / c;
    kb::gemm::Gemm cup(Tc, F, D), cdown(Tc, D, F);
    auto chunked = [&] {
      for (int64_t i = 0; i < c; ++i) {
        const int64_t t0 = i * Tc;
        cup.run(x.get() + t0 * D, w1.get(), nullptr, h.get(), s);  // h, g: one chunk's rows, reused
        ln::layer_norm(h.get(), g1.get(), be1.get(), g.get(), Tc, F, kb::mlp::kEps,
                       ln::Activation::gelu_erf, s, b1.get());
        cdown.run(g.get(), w2.get(), nullptr, u.get() + t0 * D, s);
        ln::layer_norm(u.get() + t0 * D, g2.get(), be2.get(), y.get() + t0 * D, Tc, D,
                       kb::mlp::kEps, ln::Activation::none, s, b2.get());
      }
    };
    const double t = timer.time1(chunked, a.reps);
    std::printf("  chunks=%lld (M=%lld): %9.1f us  ratio to bare GEMMs %.3f   up=%s down=%s\n",
                (long long)c, (long long)Tc, t, (t_up + t_down) / t, cup.id().c_str(),
                cdown.id().c_str());
  }
}

}  // namespace

int main(int argc, char** argv) {
  const Args a = parse(argc, argv);
  try {
    cudaDeviceProp prop{};
    int dev = 0;
    KB_CUDA_CHECK(cudaGetDevice(&dev));
    KB_CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
    std::printf("mlp_layer_norm_gelu pieces on %s (%d SMs, L2 %d MB), T=%lld, medians of %d\n",
                prop.name, prop.multiProcessorCount, prop.l2CacheSize >> 20, (long long)a.tokens,
                a.reps);
    cudaStream_t s;
    KB_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    Timer timer(s, std::max<size_t>(size_t(prop.l2CacheSize) * 2, size_t(8) << 20));
    for (int64_t D : a.dims) profile(a.tokens, D, a, timer, s);
    KB_CUDA_CHECK(cudaStreamSynchronize(s));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kbench_mlp_profile: %s\n", e.what());
    return 1;
  }
  return 0;
}
