// The decode step's own kernels; see decode_kernels.h for what each computes.
#include <cooperative_groups.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "kernels/common/cuda_check.h"
#include "kernels/common/pdl.cuh"
#include "kernels/common/route_choice.cuh"
#include "kernels/common/timeline.cuh"
#include "kernels/common/tma.cuh"
#include "kernels/common/warp.cuh"
#include "kernels/decode/decode_kernels.h"
#include "kernels/decode/weight_init.h"

namespace kb::decode {

namespace {

constexpr float kLog2e = 1.4426950408889634f;

// ---- bf16 packing: 8 bf16 in a uint4, element 0 in the low half of .x ----
__device__ __forceinline__ float bf16_lo(uint32_t w) { return __uint_as_float(w << 16); }
__device__ __forceinline__ float bf16_hi(uint32_t w) { return __uint_as_float(w & 0xffff0000u); }
__device__ __forceinline__ uint32_t pack_bf16x2(float lo, float hi) {
  __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<uint32_t*>(&h);
}
__device__ __forceinline__ void unpack8(const uint4& u, float f[8]) {
  const uint32_t w[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    f[2 * k] = bf16_lo(w[k]);
    f[2 * k + 1] = bf16_hi(w[k]);
  }
}
__device__ __forceinline__ uint4 pack8(const float f[8]) {
  return make_uint4(pack_bf16x2(f[0], f[1]), pack_bf16x2(f[2], f[3]), pack_bf16x2(f[4], f[5]),
                    pack_bf16x2(f[6], f[7]));
}

// N = 2 or 4 consecutive bf16 (4 or 8 bytes). `cg`: load through L2 only
// (the K/V cache, which this kernel also writes; the partials of other blocks).
template <int N, bool cg>
__device__ __forceinline__ void load_bf16(const bf16* p, float f[N]) {
  static_assert(N == 2 || N == 4, "2 or 4 elements");
  if constexpr (N == 2) {
    const uint32_t w = cg ? __ldcg(reinterpret_cast<const unsigned int*>(p))
                          : *reinterpret_cast<const uint32_t*>(p);
    f[0] = bf16_lo(w);
    f[1] = bf16_hi(w);
  } else {
    const uint2 w =
        cg ? __ldcg(reinterpret_cast<const uint2*>(p)) : *reinterpret_cast<const uint2*>(p);
    f[0] = bf16_lo(w.x);
    f[1] = bf16_hi(w.x);
    f[2] = bf16_lo(w.y);
    f[3] = bf16_hi(w.y);
  }
}
template <int N>
__device__ __forceinline__ void store_bf16(bf16* p, const float f[N]) {
  if constexpr (N == 2) {
    *reinterpret_cast<uint32_t*>(p) = pack_bf16x2(f[0], f[1]);
  } else {
    *reinterpret_cast<uint2*>(p) = make_uint2(pack_bf16x2(f[0], f[1]), pack_bf16x2(f[2], f[3]));
  }
}

// r = rsqrt(mean(x²) + eps) over `dim` bf16 (dim % 8 == 0), computed by the
// whole block; every thread returns it. All threads of the block must call.
// `red` holds 32 floats of shared memory.
// `cg`: x through L2 only (read before the wait for the previous grid: no
// wait has made its writer's stores visible to this SM's L1).
template <bool cg = false>
__device__ __forceinline__ float block_rms_scale(const bf16* x, int dim, float eps, float* red) {
  float ss = 0.f;
  const uint4* xv = reinterpret_cast<const uint4*>(x);
#pragma unroll 4
  for (int i = threadIdx.x; i < dim / 8; i += blockDim.x) {
    float f[8];
    unpack8(cg ? __ldcg(xv + i) : xv[i], f);
#pragma unroll
    for (int k = 0; k < 8; ++k) ss = fmaf(f[k], f[k], ss);
  }
  ss = warp_sum(ss);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) red[warp] = ss;
  __syncthreads();
  float total = 0.f;
  for (int w = 0; w < int(blockDim.x / 32); ++w) total += red[w];
  __syncthreads();  // `red` may be reused by the caller
  return rsqrtf(total / dim + eps);
}

int grid_for(int64_t items, int threads, int max_blocks = 4096) {
  const int64_t b = (items + threads - 1) / threads;
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(b, max_blocks)));
}

// ---------------------------------------------------------------- weights

__global__ void init_bf16_kernel(bf16* w, int64_t n, uint32_t key, float amp) {
  const int64_t n8 = n / 8, stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t v = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; v < n8; v += stride) {
    float f[8];
#pragma unroll
    for (int k = 0; k < 8; ++k) f[k] = amp * hash_uniform(key, uint64_t(v) * 8 + k);
    reinterpret_cast<uint4*>(w)[v] = pack8(f);
  }
  if (blockIdx.x == 0)
    for (int64_t i = n8 * 8 + threadIdx.x; i < n; i += blockDim.x)
      w[i] = __float2bfloat16_rn(amp * hash_uniform(key, uint64_t(i)));
}

__global__ void init_int8_kernel(int8_t* w, int64_t n, uint32_t key) {
  const int64_t n8 = n / 8, stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t v = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; v < n8; v += stride) {
    uint32_t word[2] = {0, 0};
#pragma unroll
    for (int k = 0; k < 8; ++k)
      word[k / 4] |= uint32_t(uint8_t(hash_int8(key, uint64_t(v) * 8 + k))) << (8 * (k % 4));
    reinterpret_cast<uint2*>(w)[v] = make_uint2(word[0], word[1]);
  }
  if (blockIdx.x == 0)
    for (int64_t i = n8 * 8 + threadIdx.x; i < n; i += blockDim.x)
      w[i] = hash_int8(key, uint64_t(i));
}

__global__ void init_scales_kernel(bf16* s, int64_t rows, uint32_t key, float amp) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < rows; i += stride)
    s[i] = __float2bfloat16_rn(row_scale_value(key, uint64_t(i), amp));
}

// ---------------------------------------------------------------- state

__global__ void reset_kernel(const int32_t* prompt, int prompt_len, int32_t* tokens, int32_t* pos,
                             int pos0) {
  for (int i = threadIdx.x; i < prompt_len; i += blockDim.x) tokens[i] = prompt[i];
  if (threadIdx.x == 0) *pos = pos0;
}

__global__ void embed_kernel(const bf16* emb, const int32_t* tokens, const int32_t* pos,
                             int capacity, int vocab, int dim, bf16* x) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;  // 8-element vector index
  if (i >= dim / 8) return;
  const int p = *pos;
  const int token = (p >= 0 && p < capacity) ? tokens[p] : -1;
  uint4 v;
  if (token >= 0 && token < vocab) {
    v = reinterpret_cast<const uint4*>(emb + size_t(token) * dim)[i];
  } else {
    const uint32_t nan2 = 0x7fc07fc0u;  // a bad token id or position shows as NaN logits
    v = make_uint4(nan2, nan2, nan2, nan2);
  }
  reinterpret_cast<uint4*>(x)[i] = v;
}

// ---------------------------------------------------------------- attention

constexpr int kAttnThreads = 128;
constexpr int kAttnWarps = kAttnThreads / 32;
constexpr int kAttnRound = 4;  // cache positions per warp whose loads are in flight together
// AttentionArgs::cluster: 8 warps a block, so that 8 splits load 256
// positions in one round.
constexpr int kAttnClusterWarps = 8;

// One block = one kv head x one chunk of the sequence, for the G query heads
// that share the kv head (K and V are read once per group). Each warp runs an
// online softmax over every 4th position of the chunk, kAttnRound positions
// per round; lanes own HD/32 consecutive dims (a RoPE pair never crosses
// lanes). The kernel is pure latency at decode lengths, so every global load
// it can (x for r, q, the new k/v, the first round of the cache) is issued
// before the one block-wide reduction (r). RMSNorm and RoPE are linear, so q
// is rotated raw and r folded into the score scale. The block holding `pos`
// appends the new k/v to the cache and uses them from registers (rounded to
// bf16 as stored), so no block waits for the append. The warps merge in
// shared memory; with several splits each block leaves (o, m, l) in
// `partial` and the last block of the kv head to finish combines them.
// Scores are kept in the log2 domain (q pre-scaled by log2(e)/sqrt(hd)).
// CL (AttentionArgs::cluster; compute capability 9.0): the splits of a kv
// head are one thread-block cluster of W = kAttnClusterWarps warps a block.
// Every split runs (one past the length holds no positions), chunk =
// ceil(len / n_splits); each block merges its warps in shared memory, then
// the blocks merge through distributed shared memory, each writing a share
// of the outputs: no workspace, no counters, no last block.
// RoPE of a lane's EPL/2 interleaved pairs, the angles' cos and sin given.
template <int EPL>
__device__ __forceinline__ void rope_pairs(float (&f)[EPL], const float (&cs)[EPL / 2],
                                           const float (&sn)[EPL / 2]) {
#pragma unroll
  for (int p = 0; p < EPL / 2; ++p) {
    const float x0 = f[2 * p], x1 = f[2 * p + 1];
    f[2 * p] = x0 * cs[p] - x1 * sn[p];
    f[2 * p + 1] = x1 * cs[p] + x0 * sn[p];
  }
}

// RoPE's angles for a lane's EPL/2 pairs (dims d0, d0 + 2, ...) at `pos`.
template <int EPL, int HD>
__device__ __forceinline__ void rope_angles(float theta, int d0, int pos, float (&cs)[EPL / 2],
                                            float (&sn)[EPL / 2]) {
#pragma unroll
  for (int p = 0; p < EPL / 2; ++p) {
    const float inv_freq = powf(theta, -float(d0 + 2 * p) / float(HD));
    sincosf(float(pos) * inv_freq, &sn[p], &cs[p]);
  }
}

// q of the G query heads, rotated and scaled (r · log2(e) / sqrt(hd)).
template <int G, int EPL>
__device__ __forceinline__ void prepare_query(float (&q)[G][EPL], const float (&cs)[EPL / 2],
                                              const float (&sn)[EPL / 2], float qscale) {
#pragma unroll
  for (int g = 0; g < G; ++g) {
    rope_pairs<EPL>(q[g], cs, sn);
#pragma unroll
    for (int e = 0; e < EPL; ++e) q[g][e] *= qscale;
  }
}

// This lane's dims of the kv head's G query rows from the qkv projection's
// output ([H + 2 KVH][HD]: q heads, then k, then v), and with `kv` the new
// k and v (else kn and vn are left unset).
template <int HD, int G, int EPL>
__device__ __forceinline__ void load_qkv(const bf16* qkv, int H, int KVH, int kvh, int d0, bool kv,
                                         float (&q)[G][EPL], float (&kn)[EPL], float (&vn)[EPL]) {
#pragma unroll
  for (int g = 0; g < G; ++g) load_bf16<EPL, false>(qkv + size_t(kvh * G + g) * HD + d0, q[g]);
  if (kv) {
    load_bf16<EPL, false>(qkv + size_t(H) * HD + size_t(kvh) * HD + d0, kn);
    load_bf16<EPL, false>(qkv + size_t(H + KVH) * HD + size_t(kvh) * HD + d0, vn);
  }
}

// The new position's k and v as the cache stores them: scaled by r (the
// RMSNorm), k rotated (RoPE), both rounded to bf16.
template <int EPL>
__device__ __forceinline__ void prepare_new_kv(float (&kn)[EPL], float (&vn)[EPL], float r,
                                               const float (&cs)[EPL / 2],
                                               const float (&sn)[EPL / 2]) {
#pragma unroll
  for (int e = 0; e < EPL; ++e) {
    kn[e] *= r;
    vn[e] = __bfloat162float(__float2bfloat16_rn(vn[e] * r));
  }
  rope_pairs<EPL>(kn, cs, sn);
#pragma unroll
  for (int e = 0; e < EPL; ++e) kn[e] = __bfloat162float(__float2bfloat16_rn(kn[e]));
}

// The online softmax's start: no position yet.
template <int G, int EPL>
__device__ __forceinline__ void softmax_start(float (&m)[G], float (&l)[G], float (&o)[G][EPL]) {
#pragma unroll
  for (int g = 0; g < G; ++g) {
    m[g] = -INFINITY;
    l[g] = 0.f;
#pragma unroll
    for (int e = 0; e < EPL; ++e) o[g][e] = 0.f;
  }
}

// One round of a warp's online softmax (log2 domain) for the G query heads
// of a kv head: the U positions' scores (kk against q, each lane holding
// EPL dims, added over the warp), then the running maximum m, sum l and
// output o with vv. An invalid position weighs 0; valid[0] must hold.
template <int G, int U, int EPL>
__device__ __forceinline__ void softmax_round(const float (&q)[G][EPL], const float (&kk)[U][EPL],
                                              const float (&vv)[U][EPL], const bool (&valid)[U],
                                              float (&m)[G], float (&l)[G], float (&o)[G][EPL]) {
#pragma unroll
  for (int g = 0; g < G; ++g) {
    float s[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      s[u] = 0.f;
#pragma unroll
      for (int e = 0; e < EPL; ++e) s[u] = fmaf(q[g][e], kk[u][e], s[u]);
    }
#pragma unroll
    for (int off = 16; off > 0; off >>= 1)
#pragma unroll
      for (int u = 0; u < U; ++u) s[u] += __shfl_xor_sync(0xffffffffu, s[u], off);
    float m_new = m[g];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      if (!valid[u]) s[u] = -INFINITY;
      m_new = fmaxf(m_new, s[u]);  // finite: position j0 is valid
    }
    const float c = exp2f(m[g] - m_new);  // 0 on the first round (m = -inf)
    l[g] *= c;
#pragma unroll
    for (int e = 0; e < EPL; ++e) o[g][e] *= c;
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const float p = exp2f(s[u] - m_new);  // 0 for an invalid position
      l[g] += p;
#pragma unroll
      for (int e = 0; e < EPL; ++e) o[g][e] = fmaf(p, vv[u][e], o[g][e]);
    }
    m[g] = m_new;
  }
}

// A warp's (m, l, o) into the block's shared memory, for the merge of the
// warps.
template <int W, int G, int HD, int EPL>
__device__ __forceinline__ void publish_warp(int warp, int lane, int d0, const float (&m)[G],
                                             const float (&l)[G], const float (&o)[G][EPL],
                                             float (&s_m)[W][G], float (&s_l)[W][G],
                                             float (&s_o)[W][G][HD]) {
#pragma unroll
  for (int g = 0; g < G; ++g) {
#pragma unroll
    for (int e = 0; e < EPL; ++e) s_o[warp][g][d0 + e] = o[g][e];
    if (lane == 0) {
      s_m[warp][g] = m[g];
      s_l[warp][g] = l[g];
    }
  }
}

template <int HD, int G, int W, bool CL>
__global__ void __launch_bounds__(W * 32) attention_kernel(AttentionArgs a) {
  constexpr int EPL = HD / 32;
  constexpr int U = kAttnRound;
  __shared__ float s_red[32];
  __shared__ float s_m[W][G], s_l[W][G];
  __shared__ float s_o[W][G][HD];
  __shared__ float s_bm[G], s_bl[G];       // CL: this block's merged (m, l)
  __shared__ float s_bo[CL ? G * HD : 1];  // CL: and o
  __shared__ int s_last;

  stamp(a.timeline, 0);
  const int kvh = blockIdx.x, split = blockIdx.y;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  // The next kernel (a gemv) may launch now and stream its weights while
  // this one runs; it waits for this grid before reading `out`.
  let_next_grid_launch();
  bf16* out = a.out + size_t(kvh) * G * HD;
  // Before the wait (under programmatic dependent launch) only what earlier
  // steps wrote: the position and the cache rows before it (AttentionArgs::pdl).
  const int pos = *a.pos;
  if (pos < 0 || pos >= a.max_seq) {  // a cache overflow shows as NaN, never as a stray write
    wait_for_previous_grid();
    if (split == 0)
      for (int i = threadIdx.x; i < G * HD; i += blockDim.x) out[i] = __float2bfloat16_rn(NAN);
    return;
  }
  const int len = pos + 1;
  const int chunk = CL ? (len + a.n_splits - 1) / a.n_splits
                       : max(a.min_chunk, (len + a.n_splits - 1) / a.n_splits);
  const int active = (len + chunk - 1) / chunk;  // the last active split holds `pos`
  if (!CL && split >= active) return;            // CL: an idle split still takes part in the merge
  const int begin = split * chunk, end = min(len, begin + chunk);
  const bool owner = split == active - 1;  // block-uniform

  const int H = a.n_heads, KVH = a.n_kv_heads;
  const int d0 = lane * EPL;
  const size_t head_base = size_t(kvh) * a.max_seq * HD;
  bf16* kc = a.k_cache + head_base + d0;
  bf16* vc = a.v_cache + head_base + d0;

  // ---- loads first: the first round of the cache, then (after the wait
  // for the qkv projection) q and the new k/v (owner)
  float kk[U][EPL], vv[U][EPL];
  const int first = begin + warp;
  auto load_round = [&](int j0) {
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int j = j0 + u * W;
      if (j < end && j != pos) {
        load_bf16<EPL, true>(kc + size_t(j) * HD, kk[u]);
        load_bf16<EPL, true>(vc + size_t(j) * HD, vv[u]);
      } else {
#pragma unroll
        for (int e = 0; e < EPL; ++e) kk[u][e] = vv[u][e] = 0.f;
      }
    }
  };
  load_round(first);
  // RoPE of this lane's EPL/2 interleaved pairs (x[2i], x[2i+1]) at `pos`:
  // the angles need only the position, so before the wait.
  float cs[EPL / 2], sn[EPL / 2];
  rope_angles<EPL, HD>(a.rope_theta, d0, pos, cs, sn);
  // r before the wait where x was complete before this grid could launch.
  float r = a.x_ready ? block_rms_scale<true>(a.x, a.dim, a.eps, s_red) : 0.f;
  wait_for_previous_grid();
  stamp(a.timeline, 1);
  float q[G][EPL], kn[EPL], vn[EPL];
  load_qkv<HD, G, EPL>(a.qkv, H, KVH, kvh, d0, owner, q, kn, vn);
  if (!a.x_ready) r = block_rms_scale(a.x, a.dim, a.eps, s_red);

  prepare_query<G, EPL>(q, cs, sn, r * kLog2e * rsqrtf(float(HD)));
  if (owner) {  // append at `pos`; keep the values exactly as the cache stores them
    prepare_new_kv<EPL>(kn, vn, r, cs, sn);
    if (warp == 0) {
      store_bf16<EPL>(kc + size_t(pos) * HD, kn);
      store_bf16<EPL>(vc + size_t(pos) * HD, vn);
    }
  }

  float m[G], l[G], o[G][EPL];
  softmax_start<G, EPL>(m, l, o);
  for (int j0 = first; j0 < end; j0 += U * W) {
    if (j0 != first) load_round(j0);
    bool valid[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int j = j0 + u * W;
      valid[u] = j < end;  // uniform across the warp
      if (owner && j == pos) {
#pragma unroll
        for (int e = 0; e < EPL; ++e) {
          kk[u][e] = kn[e];
          vv[u][e] = vn[e];
        }
      }
    }
    softmax_round<G, U, EPL>(q, kk, vv, valid, m, l, o);
  }

  // Merge the warps. A warp without positions has m = -inf and weighs 0;
  // warp 0 always has one (begin < end), so the block maximum is finite
  // (but in CL's idle split, which has none: it leaves m = -inf, l = 0).
  publish_warp<W, G, HD, EPL>(warp, lane, d0, m, l, o, s_m, s_l, s_o);
  __syncthreads();
  for (int t = threadIdx.x; t < G * HD; t += blockDim.x) {
    const int g = t / HD, d = t % HD;
    float M = -INFINITY;
#pragma unroll
    for (int w = 0; w < W; ++w) M = fmaxf(M, s_m[w][g]);
    float L = 0.f, O = 0.f;
    if (!CL || M != -INFINITY) {
#pragma unroll
      for (int w = 0; w < W; ++w) {
        const float f = exp2f(s_m[w][g] - M);
        L += f * s_l[w][g];
        O += f * s_o[w][g][d];
      }
    }
    if constexpr (CL) {
      s_bo[t] = O;
      if (d == 0) {
        s_bm[g] = M;
        s_bl[g] = L;
      }
    } else if (active == 1) {
      out[t] = __float2bfloat16_rn(O / L);
    } else {
      float* pp = a.partial + ((size_t(kvh) * a.n_splits + split) * G + g) * (HD + 2);
      pp[d] = O;
      if (d == 0) {
        pp[HD] = M;
        pp[HD + 1] = L;
      }
    }
  }
  if constexpr (CL) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    // Every block's (o, m, l) in its shared memory, visible to the cluster
    // after the barrier; block rank s is split s. Outputs are shared out
    // over the cluster's threads; the second barrier keeps each block's
    // shared memory alive until the others have read it.
    namespace cgr = cooperative_groups;
    cgr::cluster_group cl = cgr::this_cluster();
    stamp(a.timeline, 2);
    cl.sync();
    // Each output's 3·S remote reads are issued together (one round trip of
    // distributed shared memory, not 3·S in a row), then added in split
    // order as before.
    constexpr int kMaxSplits = kMaxAttentionClusterSplits;  // attention() refuses more
    const int S = a.n_splits;
    for (int t = int(cl.block_rank()) * blockDim.x + threadIdx.x; t < G * HD; t += S * blockDim.x) {
      const int g = t / HD;
      float bm[kMaxSplits], bl[kMaxSplits], bo[kMaxSplits];
#pragma unroll
      for (int s = 0; s < kMaxSplits; ++s) {
        if (s < S) {
          bm[s] = *cl.map_shared_rank(&s_bm[g], s);
          bl[s] = *cl.map_shared_rank(&s_bl[g], s);
          bo[s] = *cl.map_shared_rank(&s_bo[t], s);
        }
      }
      float M = -INFINITY;
#pragma unroll
      for (int s = 0; s < kMaxSplits; ++s)
        if (s < S) M = fmaxf(M, bm[s]);
      float L = 0.f, O = 0.f;
#pragma unroll
      for (int s = 0; s < kMaxSplits; ++s) {
        if (s < S) {
          const float f = exp2f(bm[s] - M);  // 0 for an idle split
          L += f * bl[s];
          O += f * bo[s];
        }
      }
      out[t] = __float2bfloat16_rn(O / L);
    }
    cl.sync();
    stamp(a.timeline, 3);
#else
    __trap();  // launched only on compute capability 9.0 and later (attention())
#endif
    return;
  }
  if (active == 1) return;

  // The last block of this kv head to get here combines the splits
  // (threadfence reduction: every block publishes, then counts itself).
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) s_last = atomicAdd(&a.counters[kvh], 1) == active - 1;
  __syncthreads();
  if (!s_last) return;
  __threadfence();
  for (int t = threadIdx.x; t < G * HD; t += blockDim.x) {
    const int g = t / HD, d = t % HD;
    const float* p0 = a.partial + (size_t(kvh) * a.n_splits * G + g) * (HD + 2);
    const size_t split_stride = size_t(G) * (HD + 2);
    float M = -INFINITY;
    for (int s = 0; s < active; ++s) M = fmaxf(M, __ldcg(p0 + s * split_stride + HD));
    float L = 0.f, O = 0.f;
    for (int s = 0; s < active; ++s) {
      const float* ps = p0 + s * split_stride;
      const float f = exp2f(__ldcg(ps + HD) - M);
      L += f * __ldcg(ps + HD + 1);
      O += f * __ldcg(ps + d);
    }
    out[t] = __float2bfloat16_rn(O / L);
  }
  if (threadIdx.x == 0) a.counters[kvh] = 0;  // ready for the next layer / step
}

// The whole-cache attention's softmax in two passes over shared memory, for
// the block's W warps (the cache rows 0..len-1 in ks/vs, q in s_q, all
// visible to every thread; the caller's next barrier is inside). Scores:
// 8 lanes a position, each lane HD/8 dims (16-byte chunks `sub`, `sub` + 8:
// the 8 lanes of a quarter warp read 128 contiguous bytes of one row, no
// bank conflict), added over the 8 lanes by 3 shuffles (5 a score where a
// warp shares a position: the shuffles were the rounds' cost); the scores
// (log2 domain) go to sp[j][g], each warp's maximum to s_m. Then the block's
// maximum M, p = exp2(s - M) in place, each warp's sums of p to s_l. Then
// warp w adds p · V over positions w, w + W, ... (lanes own HD/32
// consecutive dims) and leaves its o in s_o: out = sum of s_o / sum of s_l.
template <int HD, int G, int W>
__device__ __forceinline__ void whole_two_pass(const bf16* ks, const bf16* vs, float* sp, int len,
                                               int warp, int lane, const float (&s_q)[G][HD],
                                               float (&s_m)[W][G], float (&s_l)[W][G],
                                               float (&s_o)[W][G][HD]) {
  constexpr int LP = 8;             // lanes a position
  constexpr int CPL = HD / LP / 8;  // 16-byte chunks a lane
  constexpr int PPB = W * 32 / LP;  // positions a pass of the block
  constexpr int EPL = HD / 32;
  static_assert(G <= LP && CPL >= 1, "G <= 8, HD a multiple of 64");
  __syncthreads();  // s_q and the new row
  const int sub = lane % LP;
  float qr[G][CPL][8];
#pragma unroll
  for (int g = 0; g < G; ++g)
#pragma unroll
    for (int c = 0; c < CPL; ++c)
#pragma unroll
      for (int e = 0; e < 8; ++e) qr[g][c][e] = s_q[g][(sub + LP * c) * 8 + e];
  float mx[G];
#pragma unroll
  for (int g = 0; g < G; ++g) mx[g] = -INFINITY;
  // The loop's bounds are the warp's (its first group's), so that every
  // lane takes part in the shuffles; a group past the end scores len - 1.
  for (int jw = warp * (32 / LP); jw < len; jw += 2 * PPB) {
    const int j0 = jw + lane / LP;
    float s[2][G];
#pragma unroll
    for (int u = 0; u < 2; ++u) {
      const int j = min(j0 + u * PPB, len - 1);  // a second row past the end: scored, not kept
#pragma unroll
      for (int g = 0; g < G; ++g) s[u][g] = 0.f;
#pragma unroll
      for (int c = 0; c < CPL; ++c) {
        float kf[8];
        unpack8(*reinterpret_cast<const uint4*>(ks + size_t(j) * HD + (sub + LP * c) * 8), kf);
#pragma unroll
        for (int g = 0; g < G; ++g)
#pragma unroll
          for (int e = 0; e < 8; ++e) s[u][g] = fmaf(qr[g][c][e], kf[e], s[u][g]);
      }
    }
#pragma unroll
    for (int off = LP / 2; off > 0; off >>= 1)
#pragma unroll
      for (int u = 0; u < 2; ++u)
#pragma unroll
        for (int g = 0; g < G; ++g) s[u][g] += __shfl_xor_sync(0xffffffffu, s[u][g], off);
#pragma unroll
    for (int u = 0; u < 2; ++u) {
      const int j = j0 + u * PPB;
      if (j < len) {
#pragma unroll
        for (int g = 0; g < G; ++g) {
          if (sub == g) sp[size_t(j) * G + g] = s[u][g];
          mx[g] = fmaxf(mx[g], s[u][g]);
        }
      }
    }
  }
#pragma unroll
  for (int g = 0; g < G; ++g) {
    mx[g] = fmaxf(mx[g], __shfl_xor_sync(0xffffffffu, mx[g], 8));
    mx[g] = fmaxf(mx[g], __shfl_xor_sync(0xffffffffu, mx[g], 16));
    if (lane == 0) s_m[warp][g] = mx[g];
  }
  __syncthreads();
  {  // p = exp2(s - M) in place; thread t always meets head t % G (G divides the stride)
    const int g = lane % G;
    float M = -INFINITY;
#pragma unroll
    for (int w = 0; w < W; ++w) M = fmaxf(M, s_m[w][g]);  // finite: position 0 is scored
    float lsum = 0.f;
    for (int i = warp * 32 + lane; i < len * G; i += W * 32) {
      const float p = exp2f(sp[i] - M);
      sp[i] = p;
      lsum += p;
    }
#pragma unroll
    for (int off = G; off < 32; off <<= 1) lsum += __shfl_xor_sync(0xffffffffu, lsum, off);
    if (lane < G) s_l[warp][lane] = lsum;
  }
  __syncthreads();
  const int d0 = lane * EPL;
  float o[G][EPL];
#pragma unroll
  for (int g = 0; g < G; ++g)
#pragma unroll
    for (int e = 0; e < EPL; ++e) o[g][e] = 0.f;
#pragma unroll 4
  for (int j = warp; j < len; j += W) {
    float vv[EPL];
    load_bf16<EPL, false>(vs + size_t(j) * HD + d0, vv);
#pragma unroll
    for (int g = 0; g < G; ++g) {
      const float p = sp[size_t(j) * G + g];
#pragma unroll
      for (int e = 0; e < EPL; ++e) o[g][e] = fmaf(p, vv[e], o[g][e]);
    }
  }
#pragma unroll
  for (int g = 0; g < G; ++g)
#pragma unroll
    for (int e = 0; e < EPL; ++e) s_o[warp][g][d0 + e] = o[g][e];
  __syncthreads();
}

// AttentionArgs::whole (compute capability 9.0): one block of kWholeWarps
// warps per kv head, no splits and no merge between blocks. Before its
// dependency wait the block has the TMA engine copy the head's cache rows
// before `pos` (two contiguous ranges, K and V) into its shared memory
// (cp.async.bulk, one mbarrier), and takes r and RoPE's angles as the split
// kernel does; after the wait warp 0 reads q and the new k/v, appends them
// to the cache and to the rows in shared memory and leaves q there; then
// the block waits for the copy and runs the softmax in two passes over
// shared memory (whole_two_pass): every score, the block's maximum, then
// p · V; out = the warps' sums over their sums of p. Dynamic shared memory:
// max_seq · (2 · HD bf16 + 8 floats) (attention_whole_smem).
// Measured on H100s (docs/decisions/0039-whole-cache-attention.md): the two passes against the
// online softmax's rounds (lanes over dims, 5 shuffles a score): Mixtral's
// step -0.57% at position 105, -1.28% at 200, Llama-2-7B int8 -0.34%;
// 16 warps against 8: +0.82% / +0.71% / +0.17%; r and the angles after
// the wait (their loads beside q's): +0.11%, Llama-2-7B int8 +0.54%.
constexpr int kWholeWarps = 8;
template <int HD, int G>
__global__ void __launch_bounds__(kWholeWarps * 32) attention_whole_kernel(AttentionArgs a) {
  constexpr int W = kWholeWarps;
  constexpr int EPL = HD / 32;
  extern __shared__ __align__(128) unsigned char smem_raw[];
  bf16* ks = reinterpret_cast<bf16*>(smem_raw);                       // [max_seq][HD]: K rows
  bf16* vs = ks + size_t(a.max_seq) * HD;                             // and V
  float* sp = reinterpret_cast<float*>(vs + size_t(a.max_seq) * HD);  // [max_seq][G]: scores
  __shared__ __align__(8) unsigned long long bar;
  __shared__ float s_red[32];
  __shared__ float s_m[W][G], s_l[W][G];
  __shared__ __align__(16) float s_o[W][G][HD];
  __shared__ __align__(16) float s_q[G][HD];
  stamp(a.timeline, 0);
  const int kvh = blockIdx.x;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  let_next_grid_launch();  // as the split kernel: the o projection may start streaming
  bf16* out = a.out + size_t(kvh) * G * HD;
  const int pos = *a.pos;
  if (pos < 0 || pos >= a.max_seq) {  // a cache overflow shows as NaN, never as a stray write
    wait_for_previous_grid();
    for (int i = threadIdx.x; i < G * HD; i += blockDim.x) out[i] = __float2bfloat16_rn(NAN);
    return;
  }
  const int len = pos + 1;
  const int H = a.n_heads, KVH = a.n_kv_heads;
  const int d0 = lane * EPL;
  const size_t head_base = size_t(kvh) * a.max_seq * HD;
  bf16* kc = a.k_cache + head_base;
  bf16* vc = a.v_cache + head_base;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  const uint32_t bar_a = smem_u32(&bar);
  if (threadIdx.x == 0) {
    mbar_init<1>(bar_a);
    mbar_init_fence();
    const uint32_t bytes = uint32_t(pos) * HD * sizeof(bf16);  // rows [0, pos), each range
    mbar_arrive_expect_tx(bar_a, 2 * bytes);
    if (bytes > 0) {
      bulk_copy_to_shared(smem_u32(ks), kc, bytes, bar_a);
      bulk_copy_to_shared(smem_u32(vs), vc, bytes, bar_a);
    }
  }
#endif
  float cs[EPL / 2], sn[EPL / 2];
  rope_angles<EPL, HD>(a.rope_theta, d0, pos, cs, sn);
  // r before the wait where x was complete before this grid could launch
  // (r after the wait, its loads beside q's, was measured slower: Mixtral
  // +0.11%, Llama-2-7B int8 +0.54%, H100, docs/decisions/0039-whole-cache-attention.md).
  // (block_rms_scale's barriers also publish the mbarrier's init.)
  float r = a.x_ready ? block_rms_scale<true>(a.x, a.dim, a.eps, s_red) : 0.f;
  if (!a.x_ready) __syncthreads();
  wait_for_previous_grid();
  stamp(a.timeline, 1);
  float q[G][EPL], kn[EPL], vn[EPL];
  load_qkv<HD, G, EPL>(a.qkv, H, KVH, kvh, d0, true, q, kn, vn);
  if (!a.x_ready) r = block_rms_scale(a.x, a.dim, a.eps, s_red);
  if (warp == 0) {
    prepare_query<G, EPL>(q, cs, sn, r * kLog2e * rsqrtf(float(HD)));
    prepare_new_kv<EPL>(kn, vn, r, cs, sn);
    // Append at pos, in the cache and in shared memory (the copy took only
    // the rows before it); q into shared memory for every warp.
    store_bf16<EPL>(kc + size_t(pos) * HD + d0, kn);
    store_bf16<EPL>(vc + size_t(pos) * HD + d0, vn);
    store_bf16<EPL>(ks + size_t(pos) * HD + d0, kn);
    store_bf16<EPL>(vs + size_t(pos) * HD + d0, vn);
#pragma unroll
    for (int g = 0; g < G; ++g)
#pragma unroll
      for (int e = 0; e < EPL; ++e) s_q[g][d0 + e] = q[g][e];
  }
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  mbar_wait(bar_a, 0);
#else
  __trap();    // launched only on compute capability 9.0 and later (attention())
#endif
  whole_two_pass<HD, G, W>(ks, vs, sp, len, warp, lane, s_q, s_m, s_l, s_o);
  stamp(a.timeline, 2);
  for (int t = threadIdx.x; t < G * HD; t += blockDim.x) {
    const int g = t / HD, d = t % HD;
    float L = 0.f, O = 0.f;
#pragma unroll
    for (int w = 0; w < W; ++w) {
      L += s_l[w][g];
      O += s_o[w][g][d];
    }
    out[t] = __float2bfloat16_rn(O / L);
  }
  stamp(a.timeline, 3);
}

template <int HD, int G>
void launch_attention_g(const AttentionArgs& a, dim3 grid, cudaStream_t stream) {
  if (a.whole) {
    const size_t smem = attention_whole_smem(a.max_seq, HD);
    auto* k = attention_whole_kernel<HD, G>;
    KB_CUDA_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
    launch_maybe_pdl_cluster(a.pdl, k, dim3(a.n_kv_heads), dim3(kWholeWarps * 32), smem,
                             dim3(0, 0, 0), stream, a);
    return;
  }
  if (!a.cluster) {
    launch_maybe_pdl(a.pdl, attention_kernel<HD, G, kAttnWarps, false>, grid, dim3(kAttnThreads),
                     stream, a);
    return;
  }
  // The splits of a kv head as one cluster (1, n_splits, 1).
  launch_maybe_pdl_cluster(a.pdl, attention_kernel<HD, G, kAttnClusterWarps, true>, grid,
                           dim3(kAttnClusterWarps * 32), 0, dim3(1, a.n_splits, 1), stream, a);
}

template <int HD>
void launch_attention_hd(const AttentionArgs& a, dim3 grid, cudaStream_t stream) {
  switch (a.n_heads / a.n_kv_heads) {
    case 1:
      return launch_attention_g<HD, 1>(a, grid, stream);
    case 2:
      return launch_attention_g<HD, 2>(a, grid, stream);
    case 4:
      return launch_attention_g<HD, 4>(a, grid, stream);
    case 8:
      return launch_attention_g<HD, 8>(a, grid, stream);
    default:
      throw std::invalid_argument("attention: n_heads / n_kv_heads must be 1, 2, 4 or 8");
  }
}

// ---------------------------------------------------------------- MLP

constexpr int kSiluThreads = 256;

__global__ void __launch_bounds__(kSiluThreads)
    silu_mul_kernel(const bf16* gu, const bf16* x, int dim, float eps, bf16* h, int ffn) {
  __shared__ float s_red[32];
  const int i = blockIdx.x * blockDim.x + threadIdx.x;  // 8-element vector index
  const bool in = i < ffn / 8;
  let_next_grid_launch();  // the down gemv streams its weights meanwhile
  wait_for_previous_grid();
  // Loads before the block reduction, so that they overlap it.
  const uint4 gv = in ? reinterpret_cast<const uint4*>(gu)[i] : uint4{};
  const uint4 uv = in ? reinterpret_cast<const uint4*>(gu + ffn)[i] : uint4{};
  const float r = block_rms_scale(x, dim, eps, s_red);
  if (!in) return;
  float g[8], u[8], y[8];
  unpack8(gv, g);
  unpack8(uv, u);
#pragma unroll
  for (int k = 0; k < 8; ++k) {
    const float gg = r * g[k];
    y[k] = gg / (1.f + __expf(-gg)) * (r * u[k]);
  }
  reinterpret_cast<uint4*>(h)[i] = pack8(y);
}

// ------------------------------------------------- MoE prefill's combine

constexpr int kTokensCombineThreads = 128;

// blockIdx.y = the token; a thread sums 8 consecutive elements.
__global__ void __launch_bounds__(kTokensCombineThreads)
    moe_tokens_combine_kernel(bf16* x, const bf16* D, const int32_t* ids, const float* weights,
                              int tokens, int dim, int E, int top) {
  const int t = blockIdx.y;
  const int i = blockIdx.x * blockDim.x + threadIdx.x;  // 8-element vector index
  let_next_grid_launch();
  wait_for_previous_grid();
  if (i >= dim / 8) return;
  // Everything through L2 (__ldcg): earlier grids of the chain wrote it
  // (a line left in this SM's L1 before them may be stale).
  uint4* xv = reinterpret_cast<uint4*>(x + int64_t(t) * dim) + i;
  float acc[8];
  unpack8(__ldcg(xv), acc);
  for (int k = 0; k < top; ++k) {
    const int e = __ldcg(ids + t * top + k);
    if (e < 0 || e >= E) {
#pragma unroll
      for (int j = 0; j < 8; ++j) acc[j] = NAN;
      break;
    }
    const float w = __ldcg(weights + t * top + k);
    float d[8];
    unpack8(__ldcg(reinterpret_cast<const uint4*>(D + (int64_t(e) * tokens + t) * dim) + i), d);
#pragma unroll
    for (int j = 0; j < 8; ++j) acc[j] = fmaf(w, d[j], acc[j]);
  }
  *xv = pack8(acc);
}

// ---------------------------------------------------------------- MoE router

constexpr int kRouteThreads = 1024;
constexpr int kRouteWarps = kRouteThreads / 32;
constexpr int kMaxExperts = 64;
constexpr int kRouteUnroll = 4;

// kRouteUnroll groups of 8 weights of expert e, from group `i0` every
// `stride`-th, as loaded (int8: 8 bytes a group; bf16: 16); past the row: zero.
template <bool kInt8>
using RouteRaw = std::conditional_t<kInt8, uint2, uint4>;
template <bool kInt8>
__device__ __forceinline__ void route_load(const void* w, int e, int dim, int i0, int stride,
                                           RouteRaw<kInt8> (&raw)[kRouteUnroll]) {
  const RouteRaw<kInt8>* row = reinterpret_cast<const RouteRaw<kInt8>*>(
      static_cast<const char*>(w) + int64_t(e) * dim * (kInt8 ? 1 : 2));
#pragma unroll
  for (int u = 0; u < kRouteUnroll; ++u) {
    const int idx = i0 + u * stride;
    raw[u] = idx < dim / 8 ? row[idx] : RouteRaw<kInt8>{};
  }
}

// The partial dot product of those groups with x; `squares`: also adds
// their x² to xx (the lanes of one expert visit every group of x once).
template <bool kInt8>
__device__ __forceinline__ float route_use(const RouteRaw<kInt8> (&raw)[kRouteUnroll],
                                           const uint4* xv, int dim, int i0, int stride,
                                           bool squares, float& xx) {
  float acc = 0.f;
#pragma unroll
  for (int u = 0; u < kRouteUnroll; ++u) {
    const int idx = i0 + u * stride;
    if (idx >= dim / 8) continue;
    float wf[8], xf[8];
    if constexpr (kInt8) {
      const uint32_t qw[2] = {raw[u].x, raw[u].y};
#pragma unroll
      for (int k = 0; k < 8; ++k)
        wf[k] = static_cast<float>(static_cast<int8_t>((qw[k / 4] >> (8 * (k % 4))) & 0xffu));
    } else {
      unpack8(raw[u], wf);
    }
    unpack8(xv[idx], xf);
#pragma unroll
    for (int k = 0; k < 8; ++k) acc = fmaf(wf[k], xf[k], acc);
    if (squares)
#pragma unroll
      for (int k = 0; k < 8; ++k) xx = fmaf(xf[k], xf[k], xx);
  }
  return acc;
}

__device__ void route_pick(const float* logit, const RouteArgs& a);

// The router of one token: one block of 1024 threads; each expert's dot
// product split over kRouteWarps / E warps (g), kRouteUnroll loads in
// flight per lane. Its weights (E x dim, 32 KB int8 for Mixtral) do not
// depend on the kernel before it: each lane's first kRouteUnroll groups
// (all of them for Mixtral) are loaded into registers before the wait for
// that kernel, the rest prefetched into L2. After the wait one read of x
// serves the dot products and, in the first expert's warps, the sum of
// squares for r (no pass of its own): the router measured 7.9 us a layer
// inside the Mixtral graph with its weights read after the wait and r in
// a pass before the dot products (H100, docs/decisions/0035-router-beside-the-o-projection.md). The
// partial sums are added in a fixed order, so the logits, and with them
// the choice on a near tie, are the same on every run.
template <bool kInt8>
__global__ void __launch_bounds__(kRouteThreads) route_kernel(RouteArgs a) {
  __shared__ float s_part[kMaxExperts > kRouteWarps ? kMaxExperts : kRouteWarps];
  __shared__ float s_xx[kRouteWarps];
  __shared__ float s_logit[kMaxExperts];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  // Warps per expert (g) and experts in flight at once (kRouteWarps / g).
  const int g = a.n_experts >= kRouteWarps ? 1 : kRouteWarps / a.n_experts;
  const int slot = warp / g, sub = warp % g, slots = kRouteWarps / g;
  const int first = sub * 32 + lane, stride = g * 32;
  RouteRaw<kInt8> pre[kRouteUnroll];
  const bool has_pre = slot < slots && slot < a.n_experts;
  if (has_pre) route_load<kInt8>(a.w, slot, a.dim, first, stride, pre);
  // The registers hold every weight where each expert has a slot of its own
  // and a row is one pass of its lanes; else the weights also go into L2.
  if (a.n_experts > slots || a.dim / 8 > kRouteUnroll * stride) {
    const int64_t bytes = int64_t(a.n_experts) * a.dim * (kInt8 ? 1 : 2);
    const char* wb = static_cast<const char*>(a.w);
    for (int64_t off = int64_t(threadIdx.x) * 128; off < bytes; off += int64_t(kRouteThreads) * 128)
      asm volatile("prefetch.global.L2 [%0];" ::"l"(wb + off));
  }
  // The gather kernel that follows waits for this grid before reading the ids.
  let_next_grid_launch();
  wait_for_previous_grid();
  const uint4* xv = reinterpret_cast<const uint4*>(a.x);
  float xx = 0.f;
  for (int e = slot; e < a.n_experts && slot < slots; e += slots) {
    float acc = 0.f;
    for (int i0 = first; i0 < a.dim / 8; i0 += kRouteUnroll * stride) {
      RouteRaw<kInt8> raw[kRouteUnroll];
      if (e == slot && i0 == first) {
#pragma unroll
        for (int u = 0; u < kRouteUnroll; ++u) raw[u] = pre[u];
      } else {
        route_load<kInt8>(a.w, e, a.dim, i0, stride, raw);
      }
      acc += route_use<kInt8>(raw, xv, a.dim, i0, stride, e == 0, xx);
    }
    acc = warp_sum(acc);
    if (lane == 0) s_part[e * g + sub] = acc;
  }
  xx = warp_sum(xx);
  if (lane == 0) s_xx[warp] = xx;
  __syncthreads();
  if (threadIdx.x < a.n_experts) {
    const int e = threadIdx.x;
    float ss = 0.f, acc = 0.f;
    for (int w = 0; w < kRouteWarps; ++w) ss += s_xx[w];   // fixed order
    for (int k = 0; k < g; ++k) acc += s_part[e * g + k];  // fixed order
    const float r = rsqrtf(ss / a.dim + a.eps);
    s_logit[e] = r * acc * (kInt8 ? __bfloat162float(a.scale[e]) : 1.f);
  }
  __syncthreads();
  if (threadIdx.x == 0) route_pick(s_logit, a);
}

// Softmax over all experts, renormalized over the chosen = softmax over the
// chosen of r·logit.
__device__ void route_weights(const float (&chosen)[2], int top, float r, float* weights) {
  float p[2], sum = 0.f;
  for (int j = 0; j < top; ++j) sum += (p[j] = __expf(r * (chosen[j] - chosen[0])));
  for (int j = 0; j < top; ++j) weights[j] = p[j] / sum;
}

// Thread 0 of the router's block: the top `a.top` of `logit`, their
// renormalized softmax weights, the history (RouteArgs).
__device__ void route_pick(const float* s_logit, const RouteArgs& a) {
  const RouteChoice c = route_choose(s_logit, a.n_experts, a.top, a.fault);
  for (int j = 0; j < a.top; ++j) a.ids[j] = c.ids[j];
  route_weights(c.chosen, a.top, 1.f, a.weights);
  const int pos = *a.pos;
  if (pos >= 0 && pos < a.capacity) {
    if (a.hist_logits)
      for (int e = 0; e < a.n_experts; ++e)
        a.hist_logits[int64_t(pos) * a.hist_stride + e] = s_logit[e];
    if (a.hist_ids)
      for (int j = 0; j < a.top; ++j) a.hist_ids[int64_t(pos) * a.hist_stride + j] = c.ids[j];
  }
}

// ---------------------------------------------------------------- the router beside o

// F[e, k] = sum_n W[e, n] · so[n] · Wo[n, k] (fp32, n in order): thread k of
// block (k / 256, e). A setup kernel (once per layer).
template <bool kInt8>
__global__ void __launch_bounds__(256)
    route_fold_kernel(const void* w, const void* wo, const bf16* so, int dim, int q, float* fold) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x, e = blockIdx.y;
  if (k >= q) return;
  using T = std::conditional_t<kInt8, int8_t, bf16>;
  const T* wr = static_cast<const T*>(w) + int64_t(e) * dim;
  const T* wc = static_cast<const T*>(wo) + k;
  auto f = [](T v) {
    if constexpr (kInt8)
      return static_cast<float>(v);
    else
      return __bfloat162float(v);
  };
  float acc = 0.f;
#pragma unroll 8
  for (int n = 0; n < dim; ++n)
    acc = fmaf(f(wr[n]) * (so ? __bfloat162float(so[n]) : 1.f), f(wc[int64_t(n) * q]), acc);
  fold[int64_t(e) * q + k] = acc;
}

// moe_route_finish: r from y (block_rms_scale: y is complete, the o
// projection's, a full dependency of this launch), the weights of the
// chosen, r·l into the history.
constexpr int kFinishThreads = 256;
__global__ void __launch_bounds__(kFinishThreads) route_finish_kernel(RouteFinishArgs a) {
  __shared__ float s_red[32];
  const float r = block_rms_scale(a.y, a.dim, a.eps, s_red);
  if (threadIdx.x == 0) {
    const float chosen[2] = {a.logits[a.n_experts], a.top > 1 ? a.logits[a.n_experts + 1] : 0.f};
    route_weights(chosen, a.top, r, a.weights);
  }
  const int pos = *a.pos;
  if (a.hist_logits && threadIdx.x < a.n_experts && pos >= 0 && pos < a.capacity)
    a.hist_logits[int64_t(pos) * a.hist_stride + threadIdx.x] = r * a.logits[threadIdx.x];
}

// ---------------------------------------------------------------- sample

constexpr int kSampleThreads = 256;
constexpr int kSamplePerThread = 8;
constexpr int kSamplePerBlock = kSampleThreads * kSamplePerThread;

struct Best {
  float v;
  int i;  // -1: none
};
// The larger value; on a tie the lower index (as torch.argmax).
__device__ __forceinline__ Best better(Best a, Best b) {
  if (b.i < 0) return a;
  if (a.i < 0) return b;
  if (b.v > a.v || (b.v == a.v && b.i < a.i)) return b;
  return a;
}
__device__ __forceinline__ Best warp_best(Best b) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    Best other{__shfl_xor_sync(0xffffffffu, b.v, o), __shfl_xor_sync(0xffffffffu, b.i, o)};
    b = better(b, other);
  }
  return b;
}

__global__ void __launch_bounds__(kSampleThreads, 1) sample_kernel(SampleArgs a) {
  __shared__ float s_red[32];
  __shared__ Best s_best[kSampleThreads / 32];
  __shared__ int s_last;
  const int base = blockIdx.x * kSamplePerBlock;
  float raw[kSamplePerThread];
#pragma unroll
  for (int k = 0; k < kSamplePerThread; ++k) {
    const int i = base + k * kSampleThreads + threadIdx.x;
    raw[k] = i < a.vocab ? __bfloat162float(a.raw_logits[i]) : 0.f;
  }
  const float r = block_rms_scale(a.x, a.dim, a.eps, s_red);
  Best b{-INFINITY, -1};
#pragma unroll
  for (int k = 0; k < kSamplePerThread; ++k) {
    const int i = base + k * kSampleThreads + threadIdx.x;
    if (i < a.vocab) {
      const float v = raw[k] * r;
      a.logits[i] = v;
      if (b.i < 0 || v > b.v) b = Best{v, i};  // i grows with k: ties keep the lower index
    }
  }
  b = warp_best(b);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) s_best[warp] = b;
  __syncthreads();
  if (threadIdx.x == 0) {
    Best blk = s_best[0];
#pragma unroll
    for (int w = 1; w < kSampleThreads / 32; ++w) blk = better(blk, s_best[w]);
    a.partial_value[blockIdx.x] = blk.v;
    a.partial_index[blockIdx.x] = blk.i;
    __threadfence();
    s_last = atomicAdd(a.counter, 1) == int(gridDim.x) - 1;
  }
  __syncthreads();
  if (!s_last || warp != 0) return;
  __threadfence();
  Best all{-INFINITY, -1};
  for (int k = lane; k < int(gridDim.x); k += 32)
    all = better(all, Best{__ldcg(a.partial_value + k), __ldcg(a.partial_index + k)});
  all = warp_best(all);
  if (lane == 0) {
    const int p = *a.pos;
    int next = all.i;
    if (p + 1 < a.prompt_len) next = a.tokens[p + 1];  // still feeding the prompt
    if (p + 1 < a.capacity) a.tokens[p + 1] = next;
    *a.pos = p + 1;
    *a.counter = 0;
  }
}

void require(bool ok, const char* what) {
  if (!ok) throw std::invalid_argument(what);
}

}  // namespace

// ---------------------------------------------------------------- launchers

void init_bf16(bf16* w, int64_t n, uint64_t seed, uint32_t tensor, float amplitude,
               cudaStream_t stream) {
  if (n <= 0) return;
  init_bf16_kernel<<<grid_for(n / 8 + 1, 256), 256, 0, stream>>>(w, n, tensor_key(seed, tensor),
                                                                 amplitude);
  KB_CHECK_LAUNCH();
}

void init_int8(int8_t* w, int64_t n, uint64_t seed, uint32_t tensor, cudaStream_t stream) {
  if (n <= 0) return;
  init_int8_kernel<<<grid_for(n / 8 + 1, 256), 256, 0, stream>>>(w, n, tensor_key(seed, tensor));
  KB_CHECK_LAUNCH();
}

void init_row_scales(bf16* scale, int64_t rows, uint64_t seed, uint32_t tensor, float amplitude,
                     cudaStream_t stream) {
  if (rows <= 0) return;
  init_scales_kernel<<<grid_for(rows, 256), 256, 0, stream>>>(
      scale, rows, tensor_key(seed, tensor + kScaleTensorOffset), amplitude);
  KB_CHECK_LAUNCH();
}

void reset_state(const int32_t* prompt, int prompt_len, int32_t* tokens, int32_t* pos,
                 cudaStream_t stream, int pos0) {
  require(prompt_len >= 1, "reset_state: the prompt needs at least one token");
  require(pos0 >= 0 && pos0 < prompt_len, "reset_state: pos0 must be within the prompt");
  reset_kernel<<<1, 256, 0, stream>>>(prompt, prompt_len, tokens, pos, pos0);
  KB_CHECK_LAUNCH();
}

void embed(const bf16* embedding, const int32_t* tokens, const int32_t* pos, int capacity,
           int vocab, int dim, bf16* x, cudaStream_t stream) {
  require(dim > 0 && dim % 8 == 0, "embed: dim must be a positive multiple of 8");
  embed_kernel<<<grid_for(dim / 8, 256), 256, 0, stream>>>(embedding, tokens, pos, capacity, vocab,
                                                           dim, x);
  KB_CHECK_LAUNCH();
}

size_t attention_whole_smem(int max_seq, int head_dim) {
  // K and V rows, and a position's scores for up to 8 query heads.
  return size_t(max_seq) * (2 * size_t(head_dim) * sizeof(bf16) + 8 * sizeof(float));
}

const char* attention_whole_refusal(int max_seq, int head_dim) {
  int dev = 0, major = 0, optin = 0;
  KB_CUDA_CHECK(cudaGetDevice(&dev));
  KB_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
  KB_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  if (major < 9) return "whole needs compute capability 9.0";
  // The kernel's static shared memory (its warps' merge) is at most 48 KB.
  if (attention_whole_smem(max_seq, head_dim) + 48 * 1024 > size_t(optin))
    return "whole: the cache of one kv head does not fit in shared memory";
  return nullptr;
}

int64_t attention_workspace_floats(const ModelConfig& c, int n_splits) {
  return int64_t(c.n_kv_heads) * n_splits * c.group() * (c.head_dim + 2);
}

int default_attention_splits(const ModelConfig& c, int sm_count, int max_seq) {
  // Up to four blocks per SM at long lengths: with chunks of 16 positions
  // (the decoder's min_chunk) each warp then loads its 4 positions in one
  // round. Never more splits than chunks of 16 fit in the cache.
  const int by_sm = std::max(1, (4 * sm_count + c.n_kv_heads - 1) / c.n_kv_heads);
  const int by_len = std::max(1, (max_seq + 15) / 16);
  return std::min({by_sm, by_len, 64});
}

void attention(const AttentionArgs& a, cudaStream_t stream) {
  require(a.qkv && a.x && a.k_cache && a.v_cache && a.pos && a.out, "attention: null pointer");
  require(a.n_kv_heads > 0 && a.n_heads % a.n_kv_heads == 0,
          "attention: n_heads must be a multiple of n_kv_heads");
  require(a.dim > 0 && a.dim % 8 == 0, "attention: dim must be a positive multiple of 8");
  require(a.max_seq > 0 && a.n_splits >= 1 && a.n_splits <= 65535 && a.min_chunk >= 1,
          "attention: bad max_seq, n_splits or min_chunk");
  require(a.cluster || a.n_splits == 1 || (a.partial && a.counters),
          "attention: several splits need the partial workspace and counters");
  if (a.whole) {
    if (const char* why = attention_whole_refusal(a.max_seq, a.head_dim))
      throw std::invalid_argument(std::string("attention: ") + why);
  }
  if (a.cluster) {
    require(a.n_splits <= kMaxAttentionClusterSplits,
            "attention: a cluster holds at most 8 splits");
    int dev = 0, major = 0;
    KB_CUDA_CHECK(cudaGetDevice(&dev));
    KB_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
    require(major >= 9, "attention: clusters need compute capability 9.0");
  }
  const dim3 grid(a.n_kv_heads, a.n_splits);
  if (a.head_dim == 128)
    launch_attention_hd<128>(a, grid, stream);
  else if (a.head_dim == 64)
    launch_attention_hd<64>(a, grid, stream);
  else
    throw std::invalid_argument("attention: head_dim must be 64 or 128");
}

void silu_mul(const bf16* gu, const bf16* x, int dim, float eps, bf16* h, int ffn,
              cudaStream_t stream, bool pdl) {
  require(dim > 0 && dim % 8 == 0 && ffn > 0 && ffn % 8 == 0,
          "silu_mul: dim and ffn must be positive multiples of 8");
  launch_maybe_pdl(pdl, silu_mul_kernel, dim3(grid_for(ffn / 8, kSiluThreads, 1 << 30)),
                   dim3(kSiluThreads), stream, gu, x, dim, eps, h, ffn);
}

void moe_route(const RouteArgs& a, cudaStream_t stream) {
  require(a.w && a.x && a.ids && a.weights && a.pos, "moe_route: null pointer");
  require(a.dim > 0 && a.dim % 8 == 0, "moe_route: dim must be a positive multiple of 8");
  require(a.n_experts >= 1 && a.n_experts <= kMaxExperts, "moe_route: 1..64 experts");
  require(a.top >= 1 && a.top <= 2 && a.top <= a.n_experts, "moe_route: top must be 1 or 2");
  require((!a.hist_logits && !a.hist_ids) || a.hist_stride >= std::max(a.n_experts, a.top),
          "moe_route: hist_stride below the experts");
  if (a.scale)
    launch_maybe_pdl(a.pdl, route_kernel<true>, dim3(1), dim3(kRouteThreads), stream, a);
  else
    launch_maybe_pdl(a.pdl, route_kernel<false>, dim3(1), dim3(kRouteThreads), stream, a);
}

void moe_tokens_combine(bf16* x, const bf16* D, const int32_t* ids, const float* weights,
                        int tokens, int dim, int E, int top, cudaStream_t stream, bool pdl) {
  require(x && D && ids && weights, "moe_tokens_combine: null pointer");
  require(dim > 0 && dim % 8 == 0, "moe_tokens_combine: dim must be a positive multiple of 8");
  require(tokens >= 1 && tokens <= 65535 && E >= 1 && top >= 1 && top <= E,
          "moe_tokens_combine: needs 1..65535 tokens and 1 <= top <= E");
  const dim3 grid(grid_for(dim / 8, kTokensCombineThreads, 1 << 30), static_cast<unsigned>(tokens));
  launch_maybe_pdl(pdl, moe_tokens_combine_kernel, grid, dim3(kTokensCombineThreads), stream, x, D,
                   ids, weights, tokens, dim, E, top);
}

void moe_route_fold(bool int8, const void* w, const void* wo, const bf16* wo_scale, int n_experts,
                    int dim, int q_size, float* fold, cudaStream_t stream) {
  require(w && wo && fold, "moe_route_fold: null pointer");
  require(n_experts >= 1 && n_experts <= kMaxExperts && dim > 0 && q_size > 0,
          "moe_route_fold: bad shape");
  const dim3 grid((q_size + 255) / 256, n_experts);
  if (int8)
    route_fold_kernel<true><<<grid, 256, 0, stream>>>(w, wo, wo_scale, dim, q_size, fold);
  else
    route_fold_kernel<false><<<grid, 256, 0, stream>>>(w, wo, nullptr, dim, q_size, fold);
  KB_CHECK_LAUNCH();
}

void moe_route_finish(const RouteFinishArgs& a, cudaStream_t stream) {
  require(a.y && a.logits && a.weights && a.pos, "moe_route_finish: null pointer");
  require(a.dim > 0 && a.dim % 8 == 0, "moe_route_finish: dim must be a positive multiple of 8");
  require(a.n_experts >= 1 && a.n_experts <= kMaxExperts && a.top >= 1 && a.top <= 2 &&
              a.top <= a.n_experts,
          "moe_route_finish: 1..64 experts, top 1 or 2");
  require(!a.hist_logits || a.hist_stride >= a.n_experts,
          "moe_route_finish: hist_stride below the experts");
  route_finish_kernel<<<1, kFinishThreads, 0, stream>>>(a);
  KB_CHECK_LAUNCH();
}

int sample_blocks(int vocab) { return (vocab + kSamplePerBlock - 1) / kSamplePerBlock; }

void sample_greedy(const SampleArgs& a, cudaStream_t stream) {
  require(a.raw_logits && a.x && a.logits && a.tokens && a.pos && a.partial_value &&
              a.partial_index && a.counter,
          "sample_greedy: null pointer");
  require(a.vocab > 0 && a.dim > 0 && a.dim % 8 == 0, "sample_greedy: bad vocab or dim");
  require(a.prompt_len >= 1 && a.prompt_len <= a.capacity, "sample_greedy: bad prompt_len");
  sample_kernel<<<sample_blocks(a.vocab), kSampleThreads, 0, stream>>>(a);
  KB_CHECK_LAUNCH();
}

}  // namespace kb::decode
