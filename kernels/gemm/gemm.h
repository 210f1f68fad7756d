// cuBLASLt GEMM in nn.Linear's convention, row-major:
//
//   D[M, N] = epilogue(A[M, K] · W[N, K]^T (+ bias[N]))
//
// A and W in bf16 (or FP8 E4M3 on GPUs that have it), D and bias in bf16,
// fp32 accumulation and scaling. Epilogues are cuBLASLt's own, fused into
// the GEMM: `bias` adds bias[n] to every row; `gelu_bias` adds the bias and
// then applies cuBLASLt's GELU (the tanh approximation, as PyTorch's
// _addmm_activation uses it); `gelu` applies GELU alone.
//
// cuBLASLt is column-major, so the row-major product is computed as its
// transpose: D^T[N, M] = W[N, K] · A^T[K, M], i.e. cuBLASLt's A = W with
// op T (a K x N column-major matrix, ld = K), B = A with op N (K x M,
// ld = K), D column-major N x M (ld = N) - the "TN" layout, the one FP8
// requires. The bias is a vector over D's rows (N), as cuBLASLt wants it.
//
// A Gemm is a plan for one shape: the constructor runs the algorithm pinned
// for its key in this GPU's tuning table (set_pinned_algos; chosen by
// `kbench tune`, which times the candidates), else asks cuBLASLt's
// heuristic once for up to `candidates` algorithms within `max_workspace`
// and keeps the first one it reports usable; it allocates the workspace
// that algorithm needs and runs every later call with it, so timed calls
// never re-plan and every night runs the same kernel. A shape
// or type cuBLASLt refuses throws kb::CudaError naming the status
// (CUBLAS_STATUS_NOT_SUPPORTED, ...), which the engine turns into a
// `failed` row. Arguments the wrapper can judge itself (non-positive
// sizes, null or misaligned pointers, a missing bias) throw
// std::invalid_argument before any cuBLASLt call.
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
  // The most workspace the heuristic may choose an algorithm for; 32 MiB is
  // NVIDIA's recommendation for Hopper. Only what the chosen algorithm needs
  // is allocated.
  size_t max_workspace = size_t(32) << 20;
  int candidates = 8;    // algorithms asked of the heuristic
  bool use_pins = true;  // false: ignore the pinned table (kbench tune)
  // The alignment in bytes the algorithm may assume of every pointer given
  // to run() (A, W, bias, D); run() refuses pointers less aligned than
  // this. cudaMalloc gives 256.
  uint32_t min_alignment = 256;
};

// The algorithms pinned for this process (the GPU's tuning table,
// suite/tuning.h): a plan whose key is here runs that algorithm instead of
// the heuristic's first choice, unless this cuBLASLt refuses it. Set once
// before any plan is made (the runner's worker does).
void set_pinned_algos(std::vector<PinnedAlgo> pins);
const PinnedAlgo* find_pinned(const AlgoKey& key);
// Every key planned in this process since the last clear, in order, once
// each: `kbench tune` builds the suite's cases and tunes what they planned.
std::vector<AlgoKey> planned_keys();
void clear_planned_keys();

// Where a plan's algorithm came from.
enum class AlgoSource {
  table,      // the pinned algorithm
  heuristic,  // the heuristic's first usable choice (no pin for this key)
  refused,    // the pin was refused by this cuBLASLt: the heuristic's first ran
  candidate,  // one of the heuristic's candidates chosen by index (kbench tune)
};
const char* algo_source_name(AlgoSource s);  // "table", "heuristic", "refused", "candidate"

class Gemm {
 public:
  // Plans the GEMM on the current device. Throws std::invalid_argument for
  // M, N, K <= 0 or bad options, kb::CudaError when cuBLASLt refuses.
  Gemm(int64_t M, int64_t N, int64_t K, Options opts = {});
  ~Gemm();
  Gemm(const Gemm&) = delete;
  Gemm& operator=(const Gemm&) = delete;
  Gemm(Gemm&&) noexcept;
  Gemm& operator=(Gemm&&) noexcept;

  // Enqueues D = epilogue(A · W^T (+ bias)) on `stream` with the planned
  // algorithm. `bias` must be given exactly when the epilogue has one. The
  // overload must match Options::input.
  void run(const bf16* A, const bf16* W, const bf16* bias, bf16* D, cudaStream_t stream);
  void run(const fp8* A, const fp8* W, const bf16* bias, bf16* D, cudaStream_t stream);

  // The heuristic's usable candidates (in its order), and running the i-th
  // of them from now on (kbench tune times each; source() is then
  // `candidate`). Throws std::out_of_range for a bad index.
  int candidates() const;
  void use_candidate(int index);

  int64_t M() const;
  int64_t N() const;
  int64_t K() const;
  const Options& options() const;
  const AlgoConfig& algo() const;
  // The chosen algorithm for the row's variant, e.g.
  // "algo66_tile24_stages35_splitk1_swizzle0_custom0_cluster3" (enum values
  // of cublasLt.h; "_red<n>" follows splitk when K is split).
  const std::string& id() const;
  AlgoSource source() const;
  AlgoKey key() const;
  // What a row must say about the choice ("" when nothing): the pin that
  // this cuBLASLt refused, and why.
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

// ---- CPU references -------------------------------------------------------

// sum_k x[k] * w[k] in fp32 with eight interleaved partial sums (so the
// compiler can vectorize it, and the rounding error grows with sqrt(K/8)).
float dot(const float* x, const bf16* w, int64_t K);
float dot(const float* x, const fp8* w, int64_t K);
float gelu_tanh(float v);  // cuBLASLt's GELU
float gelu_erf(float v);   // nn.GELU's default, for comparison

// Full reference on float inputs: D[m, n] = epi(sum_k A[m,k] W[n,k] + bias[n]).
void gemm_ref(const float* A, const float* W, const float* bias, float* D, int64_t M, int64_t N,
              int64_t K, Epilogue ep);

// Rows `rows` of D for bf16/fp8 inputs held on the host; out is
// [rows.size(), N]. Parallel over the output columns.
std::vector<float> ref_rows(const std::vector<int64_t>& rows, const bf16* A, const bf16* W,
                            const float* bias, int64_t N, int64_t K, Epilogue ep);
std::vector<float> ref_rows(const std::vector<int64_t>& rows, const fp8* A, const fp8* W,
                            const float* bias, int64_t N, int64_t K, Epilogue ep);
// Columns `cols` of D for every row; out is [M, cols.size()].
std::vector<float> ref_cols(const std::vector<int64_t>& cols, const bf16* A, const bf16* W,
                            const float* bias, int64_t M, int64_t K, Epilogue ep);
std::vector<float> ref_cols(const std::vector<int64_t>& cols, const fp8* A, const fp8* W,
                            const float* bias, int64_t M, int64_t K, Epilogue ep);

float fp8_to_float(fp8 v);  // exact (every E4M3 value is a float)

// The values check of D = A W^T (no epilogue; D: M x N bf16 row-major)
// where the sampled rows and columns cross: D[rows[i], cols[j]] against
// the CPU reference of A's rows `a_rows` (rows.size() x K, in that order)
// and W's rows `w_rows` (cols.size() x K): relative L2 error within 5e-3
// and every value within 1/128 relative plus 4e-3 of the reference's rms
// (bf16 output rounding; fp32 summation order near zero). True when it
// holds; `text` says what was compared and how it came out.
bool check_crossings(const std::vector<bf16>& D, int64_t N, const std::vector<int64_t>& rows,
                     const std::vector<int64_t>& cols, const bf16* a_rows, const bf16* w_rows,
                     int64_t K, std::string* text);
bool check_crossings(const std::vector<bf16>& D, int64_t N, const std::vector<int64_t>& rows,
                     const std::vector<int64_t>& cols, const fp8* a_rows, const fp8* w_rows,
                     int64_t K, std::string* text);

}  // namespace kb::gemm
