// The whole-cache attention (AttentionArgs::whole, docs/decisions/0039): one
// block per kv head with the head's cache in shared memory.
#include <cmath>

#include "kernels/common/cuda_check.h"
#include "kernels/common/pdl.cuh"
#include "kernels/common/tma.cuh"
#include "kernels/decode/attention_parts.cuh"
#include "kernels/decode/decode_device.cuh"
#include "kernels/decode/decode_kernels.h"

namespace kb::decode::detail {

namespace {

// The softmax in two passes over shared memory for the block's W warps (the
// cache rows 0..len-1 in ks/vs, q in s_q). Scores: 8 lanes a position (a
// quarter warp reads 128 contiguous bytes of a row, no bank conflict), added
// by 3 shuffles, into sp[j][g] (log2 domain), each warp's maximum into s_m.
// Then p = exp2(s - M) in place, each warp's sums of p into s_l; then warp
// w adds p · V over positions w, w + W, ... into s_o. out = sum s_o / sum s_l.
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
  // The warp's bounds, so that every lane takes part in the shuffles.
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

// One block of kWholeWarps warps per kv head. Before its dependency wait the
// block has the TMA engine copy the head's cache rows before `pos` (K and V)
// into shared memory and takes r and RoPE's angles; after it warp 0 appends
// the new k/v (to the cache and the rows in shared memory) and leaves q
// there; then the block waits for the copy and runs whole_two_pass.
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
  const int kvh = blockIdx.x;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  let_next_grid_launch();
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
  // r before the wait where x is complete (its barriers also publish the
  // mbarrier's init).
  float r = a.x_ready ? block_rms_scale<true>(a.x, a.dim, a.eps, s_red) : 0.f;
  if (!a.x_ready) __syncthreads();
  wait_for_previous_grid();
  float q[G][EPL], kn[EPL], vn[EPL];
  load_qkv<HD, G, EPL>(a.qkv, H, KVH, kvh, d0, true, q, kn, vn);
  if (!a.x_ready) r = block_rms_scale(a.x, a.dim, a.eps, s_red);
  if (warp == 0) {
    prepare_query<G, EPL>(q, cs, sn, r * kLog2e * rsqrtf(float(HD)));
    prepare_new_kv<EPL>(kn, vn, r, cs, sn);
    // Append at pos, in the cache and in shared memory; q for every warp.
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
  __trap();  // launched only on compute capability 9.0 and later (attention())
#endif
  whole_two_pass<HD, G, W>(ks, vs, sp, len, warp, lane, s_q, s_m, s_l, s_o);
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
}

}  // namespace

void launch_attention_whole(const AttentionArgs& a, cudaStream_t stream) {
  for_head_shape(a, [&](auto hd, auto g) {
    constexpr int HD = decltype(hd)::value, G = decltype(g)::value;
    const size_t smem = attention_whole_smem(a.max_seq, HD);
    auto* k = attention_whole_kernel<HD, G>;
    KB_CUDA_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
    launch_maybe_pdl_smem(a.pdl, k, dim3(a.n_kv_heads), dim3(kWholeWarps * 32), smem, stream, a);
  });
}

}  // namespace kb::decode::detail
