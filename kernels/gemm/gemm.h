// cuBLASLt GEMM in nn.Linear's convention, row-major: D[M, N] =
// epilogue(A[M, K] · W[N, K]^T (+ bias[N])); A and W bf16 or FP8 E4M3, D and
// bias bf16, fp32 sums; computed as D^T = W · A^T, the "TN" layout FP8
// requires. A Gemm is a plan for one shape, so that every call runs one
// algorithm: the GPU's pinned one, else the heuristic's first usable one
// (docs/decisions/0046). cuBLASLt's refusal throws kb::CudaError; bad
// arguments throw std::invalid_argument first.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/gemm_algo.h"

namespace kb::gemm {

using bf16 = __nv_bfloat16;
using fp8 = __nv_fp8_e4m3;

inline bool has_bias(Epilogue e) { return e == Epilogue::bias || e == Epilogue::gelu_bias; }
inline bool has_gelu(Epilogue e) { return e == Epilogue::gelu || e == Epilogue::gelu_bias; }

struct Options {
  Epilogue epilogue = Epilogue::none;
  Input input = Input::bf16;
  // NVIDIA's recommendation for Hopper; only what the algorithm needs is allocated.
  size_t max_workspace = size_t(32) << 20;
  int candidates = 8;    // algorithms asked of the heuristic
  bool use_pins = true;  // false: ignore the pinned table (kbench tune)
  // The alignment the algorithm may assume of every pointer run() takes
  // (it refuses less aligned ones); cudaMalloc gives 256.
  uint32_t min_alignment = 256;
};

// The GPU's tuning table's algorithms, set before any plan is made.
void set_pinned_algos(std::vector<PinnedAlgo> pins);
// Every key planned since the last clear, once each (what `kbench tune` tunes).
std::vector<AlgoKey> planned_keys();
void clear_planned_keys();

// The pin, the heuristic (no pin; the pin refused), a candidate (kbench tune).
enum class AlgoSource { table, heuristic, refused, candidate };
const char* algo_source_name(AlgoSource s);  // its name, as the enum spells it

class Gemm {
 public:
  // Plans the GEMM on the current device.
  Gemm(int64_t M, int64_t N, int64_t K, Options opts = {});
  ~Gemm();

  // `bias` exactly when the epilogue has one; the overload of Options::input.
  void run(const bf16* A, const bf16* W, const bf16* bias, bf16* D, cudaStream_t stream);
  void run(const fp8* A, const fp8* W, const bf16* bias, bf16* D, cudaStream_t stream);

  // The heuristic's usable candidates; run the i-th from now on (kbench tune).
  int candidates() const;
  void use_candidate(int index);

  const Options& options() const;
  const AlgoConfig& algo() const;
  // The chosen algorithm for the row's variant (core/gemm_algo.h's algo_id).
  const std::string& id() const;
  AlgoSource source() const;
  AlgoKey key() const;
  // The pin that this cuBLASLt refused, and why ("" when none).
  const std::string& note() const;
  // "bf16 GEMM M=3 N=72 K=40 epilogue=bias", for messages.
  std::string describe() const;

 private:
  struct Impl;
  void choose(int index);                  // the index-th usable algorithm of the heuristic
  bool try_pinned(const PinnedAlgo& pin);  // false (note set) when cuBLASLt refuses it
  void launch(const void* A, const void* W, const void* bias, void* D, cudaStream_t stream);
  std::unique_ptr<Impl> impl_;
};

// ---- CPU references (fp32 dot products, the epilogue in fp32) ----
float gelu_tanh(float v);  // cuBLASLt's GELU

void gemm_ref(const float* A, const float* W, const float* bias, float* D, int64_t M, int64_t N,
              int64_t K, Epilogue ep);

// Rows `rows` of D for bf16 or fp8 (T) inputs held on the host; out is
// [rows.size(), N].
template <typename T>
std::vector<float> ref_rows(const std::vector<int64_t>& rows, const T* A, const T* W,
                            const float* bias, int64_t N, int64_t K, Epilogue ep);

float fp8_to_float(fp8 v);  // exact (every E4M3 value is a float)

// The check of D = A W^T (D: M x N bf16) where the sampled rows and columns
// cross (docs/decisions/0045), against A's rows `a_rows` and W's rows
// `w_rows`: relative L2 within 5e-3 and every value within 1/128 relative
// plus 4e-3 of the reference's rms. `text` says how it came out.
template <typename T>
bool check_crossings(const std::vector<bf16>& D, int64_t N, const std::vector<int64_t>& rows,
                     const std::vector<int64_t>& cols, const T* a_rows, const T* w_rows, int64_t K,
                     std::string* text);

}  // namespace kb::gemm
