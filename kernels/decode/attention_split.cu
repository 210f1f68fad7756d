// The split attention (AttentionArgs without `whole`), and attention().
#include <algorithm>
#include <cmath>
#include <string>

#include "kernels/common/cuda_check.h"
#include "kernels/common/pdl.cuh"
#include "kernels/decode/attention_parts.cuh"
#include "kernels/decode/decode_device.cuh"
#include "kernels/decode/decode_kernels.h"

namespace kb::decode {

using namespace detail;

namespace {

constexpr int kAttnThreads = 128;
constexpr int kAttnWarps = kAttnThreads / 32;
constexpr int kAttnRound = 4;  // cache positions per warp whose loads are in flight together

// One block = one kv head x one chunk of the sequence, for the G query heads
// of the kv head. Each warp runs an online softmax (log2 domain) over every
// 4th position of the chunk; lanes own HD/32 consecutive dims. The kernel is
// pure latency, so every load it can is issued before the one block-wide
// reduction (r); r is folded into the score scale. The block holding `pos`
// appends the new k/v and uses them from registers, so no block waits for
// the append. With several splits each block leaves (o, m, l) in `partial`
// and the kv head's last block to finish combines them.

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

// One round of a warp's online softmax for the G query heads: the U
// positions' scores, then the running maximum m, sum l and output o. An
// invalid position weighs 0; valid[0] must hold.
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

// A warp's (m, l, o) into the block's shared memory, for the merge.
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

// The warps' (m, l, o) merged into the block's; written out when the block
// is the only active split, else left in `partial` for the last block.
template <int HD, int G, int W>
__device__ __forceinline__ void merge_warps(const AttentionArgs& a, int kvh, int split, int active,
                                            bf16* out, const float (&s_m)[W][G],
                                            const float (&s_l)[W][G],
                                            const float (&s_o)[W][G][HD]) {
  for (int t = threadIdx.x; t < G * HD; t += blockDim.x) {
    const int g = t / HD, d = t % HD;
    float M = -INFINITY;
#pragma unroll
    for (int w = 0; w < W; ++w) M = fmaxf(M, s_m[w][g]);
    float L = 0.f, O = 0.f;
#pragma unroll
    for (int w = 0; w < W; ++w) {
      const float f = exp2f(s_m[w][g] - M);
      L += f * s_l[w][g];
      O += f * s_o[w][g][d];
    }
    if (active == 1) {
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
}

// The kv head's last block to get here combines the splits (threadfence
// reduction).
template <int HD, int G>
__device__ __forceinline__ void merge_splits(const AttentionArgs& a, int kvh, int active, bf16* out,
                                             int* s_last) {
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) *s_last = atomicAdd(&a.counters[kvh], 1) == active - 1;
  __syncthreads();
  if (!*s_last) return;
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

template <int HD, int G, int W>
__global__ void __launch_bounds__(W * 32) attention_kernel(AttentionArgs a) {
  constexpr int EPL = HD / 32;
  constexpr int U = kAttnRound;
  __shared__ float s_red[32];
  __shared__ float s_m[W][G], s_l[W][G];
  __shared__ float s_o[W][G][HD];
  __shared__ int s_last;

  const int kvh = blockIdx.x, split = blockIdx.y;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  let_next_grid_launch();  // the next gemv streams its weights meanwhile
  bf16* out = a.out + size_t(kvh) * G * HD;
  // Before the wait only what earlier steps wrote (AttentionArgs::pdl).
  const int pos = *a.pos;
  if (pos < 0 || pos >= a.max_seq) {  // a cache overflow shows as NaN, never as a stray write
    wait_for_previous_grid();
    if (split == 0)
      for (int i = threadIdx.x; i < G * HD; i += blockDim.x) out[i] = __float2bfloat16_rn(NAN);
    return;
  }
  const int len = pos + 1;
  const int chunk = max(a.min_chunk, (len + a.n_splits - 1) / a.n_splits);
  const int active = (len + chunk - 1) / chunk;  // the last active split holds `pos`
  if (split >= active) return;
  const int begin = split * chunk, end = min(len, begin + chunk);
  const bool owner = split == active - 1;  // block-uniform

  const int H = a.n_heads, KVH = a.n_kv_heads;
  const int d0 = lane * EPL;
  const size_t head_base = size_t(kvh) * a.max_seq * HD;
  bf16* kc = a.k_cache + head_base + d0;
  bf16* vc = a.v_cache + head_base + d0;

  // The first round of the cache, then (after the wait) q and the new k/v.
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
  float cs[EPL / 2], sn[EPL / 2];  // RoPE's angles need only the position
  rope_angles<EPL, HD>(a.rope_theta, d0, pos, cs, sn);
  // r before the wait where x was complete before this grid could launch.
  float r = a.x_ready ? block_rms_scale<true>(a.x, a.dim, a.eps, s_red) : 0.f;
  wait_for_previous_grid();
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

  // Merge the warps; warp 0 always has a position, so the maximum is finite.
  publish_warp<W, G, HD, EPL>(warp, lane, d0, m, l, o, s_m, s_l, s_o);
  __syncthreads();
  merge_warps<HD, G, W>(a, kvh, split, active, out, s_m, s_l, s_o);
  if (active == 1) return;
  merge_splits<HD, G>(a, kvh, active, out, &s_last);
}

}  // namespace

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
  // Up to four blocks per SM, never more splits than chunks of 16 positions.
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
  require(a.n_splits == 1 || (a.partial && a.counters),
          "attention: several splits need the partial workspace and counters");
  if (a.whole) {
    if (const char* why = attention_whole_refusal(a.max_seq, a.head_dim))
      throw std::invalid_argument(std::string("attention: ") + why);
    return launch_attention_whole(a, stream);
  }
  for_head_shape(a, [&](auto hd, auto g) {
    constexpr int HD = decltype(hd)::value, G = decltype(g)::value;
    launch_maybe_pdl(a.pdl, attention_kernel<HD, G, kAttnWarps>, dim3(a.n_kv_heads, a.n_splits),
                     dim3(kAttnThreads), stream, a);
  });
}

}  // namespace kb::decode
