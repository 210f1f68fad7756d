// SwiGLU over [tokens, 2F] -> [tokens, F], bf16, fp32 math: every byte of
// gu read once, y written once. The grid runs over y's vectors as one flat
// range (no row leaves a block partly idle), 2 vectors a thread a block's
// stride apart, all 4 loads issued before the first store.
#include <cstdint>
#include <stdexcept>
#include <string>

#include "kernels/common/bf16x8.cuh"
#include "kernels/common/cuda_check.h"
#include "kernels/swiglu/swiglu.h"

namespace kb::swiglu {

namespace {

constexpr int kVec = kBf16x8;
constexpr int kThreads = 256;
// Two output vectors a thread, six blocks an SM (40 registers): 96 KB of
// loads in flight an SM; four vectors a thread halved the warps.
constexpr int kPerThread = 2;
constexpr int kMinBlocks = 6;
constexpr int64_t kMaxVectors = 0x7fffffff;

// n: y's vectors (tokens · F / 8); nvec: a row's (F / 8). Output vector i
// is row r = i / nvec, column c = i - r · nvec; its g vector is gu's vector
// r · 2·nvec + c = i + r · nvec, its u vector nvec further.
__global__ void __launch_bounds__(kThreads, kMinBlocks)
    swiglu_vectors(const bf16* __restrict__ gu, bf16* __restrict__ y, uint32_t n, uint32_t nvec) {
  const uint32_t first = blockIdx.x * (kThreads * kPerThread) + threadIdx.x;
  Bf16x8 g[kPerThread], u[kPerThread];
#pragma unroll
  for (int k = 0; k < kPerThread; ++k) {
    const uint32_t i = first + k * kThreads;
    if (i >= n) continue;
    const int64_t gv = static_cast<int64_t>(i) + static_cast<int64_t>(i / nvec) * nvec;
    g[k] = load_stream(gu + gv * kVec);
    u[k] = load_stream(gu + (gv + nvec) * kVec);
  }
#pragma unroll
  for (int k = 0; k < kPerThread; ++k) {
    const uint32_t i = first + k * kThreads;
    if (i >= n) continue;
    float gf[kVec], uf[kVec];
    to_floats(g[k], gf);
    to_floats(u[k], uf);
#pragma unroll
    for (int j = 0; j < kVec; ++j) {
      // expf: 2 ulps. __fdividef: 2 ulps, and 0 where 1 + e^-z > 2^126
      // (z < -87.3, e^-z up to inf), silu's limit there.
      gf[j] = __fdividef(gf[j], 1.f + expf(-gf[j])) * uf[j];
    }
    store_stream(y + static_cast<int64_t>(i) * kVec, from_floats(gf));
  }
}

}  // namespace

void swiglu(const bf16* gu, bf16* y, int64_t tokens, int64_t F, cudaStream_t stream) {
  if (tokens <= 0 || F <= 0)
    throw std::invalid_argument("swiglu: tokens and F must be > 0 (got tokens=" +
                                std::to_string(tokens) + ", F=" + std::to_string(F) + ")");
  if (F % kVec != 0)
    throw std::invalid_argument("swiglu: F must be a multiple of 8 (16-byte vectors), got F=" +
                                std::to_string(F));
  const int64_t nvec = F / kVec;
  if (tokens > kMaxVectors / nvec)
    throw std::invalid_argument("swiglu: tokens · F / 8 must be < 2^31 (got tokens=" +
                                std::to_string(tokens) + ", F=" + std::to_string(F) + ")");
  if (!gu || !y || !aligned16(gu) || !aligned16(y))
    throw std::invalid_argument("swiglu: gu and y must be non-null and 16-byte aligned");
  const int64_t n = tokens * nvec;
  const int64_t per_block = kThreads * kPerThread;
  const int64_t blocks = (n + per_block - 1) / per_block;
  swiglu_vectors<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
      gu, y, static_cast<uint32_t>(n), static_cast<uint32_t>(nvec));
  KB_CHECK_LAUNCH();
}

}  // namespace kb::swiglu
