// Device parts the two attention kernels share: bf16 loads and stores of a
// lane's dims, RoPE, the query and the new k/v as the cache stores them.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <stdexcept>
#include <type_traits>

#include "kernels/decode/decode_device.cuh"
#include "kernels/decode/decode_kernels.h"

namespace kb::decode::detail {

constexpr float kLog2e = 1.4426950408889634f;

// N = 2 or 4 consecutive bf16. `cg`: through L2 only (what this grid writes).
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
// output ([H + 2 KVH][HD]), and with `kv` the new k and v.
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

// The new k and v as the cache stores them: scaled by r, k rotated, in bf16.
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

// Calls launch(integral_constant HD, integral_constant G) for the head_dim
// and group; throws for the shapes no kernel is compiled for.
template <typename Launch>
void for_head_shape(const AttentionArgs& a, Launch&& launch) {
  auto by_group = [&](auto hd) {
    switch (a.n_heads / a.n_kv_heads) {
      case 1:
        return launch(hd, std::integral_constant<int, 1>{});
      case 2:
        return launch(hd, std::integral_constant<int, 2>{});
      case 4:
        return launch(hd, std::integral_constant<int, 4>{});
      case 8:
        return launch(hd, std::integral_constant<int, 8>{});
      default:
        throw std::invalid_argument("attention: n_heads / n_kv_heads must be 1, 2, 4 or 8");
    }
  };
  if (a.head_dim == 128)
    by_group(std::integral_constant<int, 128>{});
  else if (a.head_dim == 64)
    by_group(std::integral_constant<int, 64>{});
  else
    throw std::invalid_argument("attention: head_dim must be 64 or 128");
}

// AttentionArgs::whole's launch; attention() has checked `a`.
void launch_attention_whole(const AttentionArgs& a, cudaStream_t stream);

}  // namespace kb::decode::detail
