// CPU references of kb::gemm: fp32 dot products over the same bf16/fp8
// inputs the GPU read, the epilogue in fp32, outputs left unrounded (the
// checks' tolerance covers the GPU's final rounding to bf16).
#include <array>
#include <cmath>

#include "kernels/common/allclose.h"
#include "kernels/common/host_math.h"
#include "kernels/common/host_parallel.h"
#include "kernels/gemm/gemm.h"

namespace kb::gemm {

namespace {

// Every E4M3 value, decoded once by CUDA's own host conversion.
const std::array<float, 256>& fp8_table() {
  static const std::array<float, 256> table = [] {
    std::array<float, 256> t{};
    for (int i = 0; i < 256; ++i) {
      __nv_fp8_e4m3 v;
      v.__x = static_cast<__nv_fp8_storage_t>(i);
      t[static_cast<size_t>(i)] = static_cast<float>(v);
    }
    return t;
  }();
  return table;
}

inline float to_f(bf16 v) { return bf16_to_float(v); }
inline float to_f(fp8 v) { return fp8_table()[v.__x]; }

template <typename T>
float dot_impl(const float* x, const T* w, int64_t K) {
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t k = 0;
  for (; k + 8 <= K; k += 8)
    for (int j = 0; j < 8; ++j) acc[j] += x[k + j] * to_f(w[k + j]);
  for (; k < K; ++k) acc[k % 8] += x[k] * to_f(w[k]);
  return ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
}

inline float apply(float acc, const float* bias, int64_t n, Epilogue ep) {
  float v = acc + (has_bias(ep) ? bias[n] : 0.f);
  return has_gelu(ep) ? gelu_tanh(v) : v;
}

}  // namespace

template <typename T>
std::vector<float> ref_rows(const std::vector<int64_t>& rows, const T* A, const T* W,
                            const float* bias, int64_t N, int64_t K, Epilogue ep) {
  const int64_t R = static_cast<int64_t>(rows.size());
  std::vector<float> a(static_cast<size_t>(R * K)), out(static_cast<size_t>(R * N));
  for (int64_t r = 0; r < R; ++r)
    for (int64_t k = 0; k < K; ++k) a[r * K + k] = to_f(A[rows[r] * K + k]);
  // Parallel over n: each task streams one row of W once for all the rows.
  parallel_for(N, [&](int64_t n) {
    for (int64_t r = 0; r < R; ++r)
      out[r * N + n] = apply(dot_impl(&a[r * K], W + n * K, K), bias, n, ep);
  });
  return out;
}

template std::vector<float> ref_rows(const std::vector<int64_t>&, const bf16*, const bf16*,
                                     const float*, int64_t, int64_t, Epilogue);
template std::vector<float> ref_rows(const std::vector<int64_t>&, const fp8*, const fp8*,
                                     const float*, int64_t, int64_t, Epilogue);

float fp8_to_float(fp8 v) { return to_f(v); }

float gelu_tanh(float v) {
  const double x = v;
  return static_cast<float>(0.5 * x *
                            (1.0 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))));
}

void gemm_ref(const float* A, const float* W, const float* bias, float* D, int64_t M, int64_t N,
              int64_t K, Epilogue ep) {
  parallel_for(M, [&](int64_t m) {
    for (int64_t n = 0; n < N; ++n) {
      double acc = 0;  // a reference more exact than the GPU's fp32
      for (int64_t k = 0; k < K; ++k) acc += double(A[m * K + k]) * W[n * K + k];
      D[m * N + n] = apply(static_cast<float>(acc), bias, n, ep);
    }
  });
}

template <typename T>
bool check_crossings(const std::vector<bf16>& D, int64_t N, const std::vector<int64_t>& rows,
                     const std::vector<int64_t>& cols, const T* a_rows, const T* w_rows, int64_t K,
                     std::string* text) {
  std::vector<int64_t> in_order(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) in_order[i] = static_cast<int64_t>(i);
  const std::vector<float> ref = ref_rows(in_order, a_rows, w_rows, nullptr,
                                          static_cast<int64_t>(cols.size()), K, Epilogue::none);
  std::vector<float> out;
  out.reserve(ref.size());
  for (int64_t r : rows)
    for (int64_t c : cols) out.push_back(bf16_to_float(D[static_cast<size_t>(r * N + c)]));
  const auto rel = compare(out, ref, 5e-3);
  const auto close = allclose(out, ref, 1.0 / 128, 4e-3 * rms(ref));
  *text = std::to_string(rows.size()) + " rows x " + std::to_string(cols.size()) +
          " columns vs CPU reference: " + rel.text() + "; " + close.text();
  return rel.ok && close.ok;
}

template bool check_crossings(const std::vector<bf16>&, int64_t, const std::vector<int64_t>&,
                              const std::vector<int64_t>&, const bf16*, const bf16*, int64_t,
                              std::string*);
template bool check_crossings(const std::vector<bf16>&, int64_t, const std::vector<int64_t>&,
                              const std::vector<int64_t>&, const fp8*, const fp8*, int64_t,
                              std::string*);

}  // namespace kb::gemm
