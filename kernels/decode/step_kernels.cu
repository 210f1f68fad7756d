// The decode step's kernels around the layers (decode_kernels.h): the
// weights' fill, the state reset, the embedding and the greedy sampler.
#include <cmath>

#include "kernels/common/cuda_check.h"
#include "kernels/decode/decode_device.cuh"
#include "kernels/decode/decode_kernels.h"
#include "kernels/decode/weight_init.h"

namespace kb::decode {

using namespace detail;

namespace {

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

}  // namespace

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
