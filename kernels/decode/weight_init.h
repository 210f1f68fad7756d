// Random weights from a hash of (seed, tensor, i): the GPU fills at write
// bandwidth and the host recomputes any element. int8 row scales vary by
// row, so that a wrong scale index shows.
#pragma once

#include <cmath>
#include <cstdint>

#if defined(__CUDACC__)
#define KB_HOST_DEVICE __host__ __device__
#else
#define KB_HOST_DEVICE
#endif

namespace kb::decode {

// Tensor ids: one per tensor of the model, so that no two tensors share values.
enum TensorKind : uint32_t { kQkv = 0, kWo = 1, kGateUp = 2, kDown = 3, kKinds = 4 };
constexpr uint32_t kEmbeddingTensor = 0xE0000000u;
constexpr uint32_t kOutputTensor = 0xE0000001u;
constexpr uint32_t kScaleTensorOffset = 0x10000000u;
KB_HOST_DEVICE inline uint32_t layer_tensor(int layer, TensorKind kind) {
  return static_cast<uint32_t>(layer) * kKinds + kind;
}
// A mixture of experts' tensors, in a range of their own: the router, every
// expert's gate | up rows as one tensor, every expert's down rows.
enum MoeKind : uint32_t { kRouter = 0, kExpertsGateUp = 1, kExpertsDown = 2, kMoeKinds = 3 };
constexpr uint32_t kMoeTensorBase = 0x20000000u;
KB_HOST_DEVICE inline uint32_t moe_tensor(int layer, MoeKind kind) {
  return kMoeTensorBase + static_cast<uint32_t>(layer) * kMoeKinds + kind;
}

// "lowbias32" (C. Wellons): a 32-bit bijective mixer with a low bias.
KB_HOST_DEVICE inline uint32_t mix32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}

KB_HOST_DEVICE inline uint32_t tensor_key(uint64_t seed, uint32_t tensor) {
  return mix32(static_cast<uint32_t>(seed) ^
               mix32(static_cast<uint32_t>(seed >> 32) + tensor * 0x9E3779B9u));
}

KB_HOST_DEVICE inline uint32_t hash_bits(uint32_t key, uint64_t i) {
  return mix32(mix32(static_cast<uint32_t>(i) ^ key) + static_cast<uint32_t>(i >> 32));
}

// Uniform in [-1, 1): the top 24 bits of the hash (exact in a float).
KB_HOST_DEVICE inline float hash_uniform(uint32_t key, uint64_t i) {
  return static_cast<float>(hash_bits(key, i) >> 8) * (2.0f / 16777216.0f) - 1.0f;
}

// Uniform in [-127, 127], in integers only (no float rounding to disagree on).
KB_HOST_DEVICE inline int8_t hash_int8(uint32_t key, uint64_t i) {
  return static_cast<int8_t>(static_cast<int>(((hash_bits(key, i) >> 8) * 255u) >> 24) - 127);
}

// The amplitude of a projection with `k` inputs: standard deviation 1/sqrt(k).
inline float weight_amplitude(int64_t k) { return std::sqrt(3.0f / static_cast<float>(k)); }

KB_HOST_DEVICE inline float row_scale_value(uint32_t scale_key, uint64_t row, float amplitude) {
  return amplitude / 127.0f * (0.75f + 0.25f * hash_uniform(scale_key, row));
}

}  // namespace kb::decode
