#include "kernels/common/host_math.h"

#include <cmath>
#include <cstring>

#include "kernels/common/index_sample.h"

namespace kb {

float bf16_to_float(bf16 v) {
  uint16_t bits = static_cast<__nv_bfloat16_raw>(v).x;
  uint32_t f = static_cast<uint32_t>(bits) << 16;
  float out;
  std::memcpy(&out, &f, 4);
  return out;
}

bf16 float_to_bf16(float v) {
  uint32_t f;
  std::memcpy(&f, &v, 4);
  uint16_t bits;
  if (std::isnan(v)) {
    bits = 0x7FC0;
  } else {
    uint32_t rounding = 0x7FFF + ((f >> 16) & 1);  // round to nearest even
    bits = static_cast<uint16_t>((f + rounding) >> 16);
  }
  __nv_bfloat16_raw raw;
  raw.x = bits;
  return bf16(raw);
}

std::vector<float> random_uniform(size_t n, uint64_t seed, float lo, float hi) {
  std::vector<float> v(n);
  uint64_t s = seed;
  for (auto& x : v) {
    double u = static_cast<double>(detail::splitmix64(s) >> 11) * (1.0 / 9007199254740992.0);
    x = static_cast<float>(lo + (hi - lo) * u);
  }
  return v;
}

std::vector<bf16> to_bf16(const std::vector<float>& v) {
  std::vector<bf16> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = float_to_bf16(v[i]);
  return out;
}

std::vector<bf16> random_bf16(size_t n, uint64_t seed, float lo, float hi) {
  return to_bf16(random_uniform(n, seed, lo, hi));
}

std::vector<int8_t> random_int8(size_t n, uint64_t seed) {
  std::vector<int8_t> v(n);
  uint64_t s = seed;
  for (auto& x : v) x = static_cast<int8_t>(static_cast<int>(detail::splitmix64(s) % 255) - 127);
  return v;
}

std::vector<float> to_float(const std::vector<bf16>& v) {
  std::vector<float> f(v.size());
  for (size_t i = 0; i < v.size(); ++i) f[i] = bf16_to_float(v[i]);
  return f;
}

}  // namespace kb
