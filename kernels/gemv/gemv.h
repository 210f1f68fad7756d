// GEMV for batch-1 decode: y = W·x, weights streamed once from HBM.
//
//   y[n] = scale[n] * sum_k W[n, k] * x[k]  (+ residual[n])
//
// W row-major [N, K] in bf16, or int8 weight-only with a per-output-row bf16
// scale (gpt-fast's int8 path: scale == nullptr for bf16); x, y, residual
// bf16; fp32 accumulation. `residual` may alias `y` (in-place residual add)
// and serves as a bias too.
//
// gather_gemv: W [E, N, K] (scales [E, N]); `experts` holds `n_sel` expert
// ids in device memory; y[s, :] = W[experts[s]] · x (MoE expert selection at
// batch 1). The ids live on the device, so the kernel cannot refuse them
// before launch: an id outside [0, E) is never read out of bounds, its rows
// are written as NaN instead (a check shows it). Callers that hold the ids
// on the host refuse them first with check_experts().
//
// Shapes a kernel cannot serve (N or K <= 0, K not a multiple of the vector
// width, a pointer not 16-byte aligned, n_sel <= 0, E <= 0) throw
// std::invalid_argument before any launch.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

namespace kb::gemv {

using bf16 = __nv_bfloat16;

// The vector width in elements that K must be a multiple of (16 bytes).
int k_multiple_bf16();
int k_multiple_int8();

// `pdl`: launch as a programmatic dependent of the previous work on the
// stream (compute capability 9.0+, else ignored). The kernel reads its
// first weights before waiting for that work to complete, and reads x and
// residual only after; it lets the next grid launch once its weights are
// streamed. A chain of dependent kernels (a decode step) then overlaps each
// GEMV's start with the previous kernel's tail. The one condition: the
// work just before it on the stream must not write W (or scale).
void gemv_bf16(const bf16* W, const bf16* x, bf16* y, int64_t N, int64_t K, cudaStream_t stream,
               const bf16* residual = nullptr, bool pdl = false);
void gemv_int8(const int8_t* W, const bf16* scale, const bf16* x, bf16* y, int64_t N, int64_t K,
               cudaStream_t stream, const bf16* residual = nullptr, bool pdl = false);

// Several tokens at once (a prompt's prefill): Y[t, :] = W · X[t, :]
// (+ residual[t, :]) for t < tokens <= kMaxTokens, X [tokens, K], Y and
// residual [tokens, N] (residual may alias Y). Each weight is read once for
// all tokens; int8 weights need `scale`, bf16 ones take nullptr.
constexpr int kMaxTokens = 8;
void gemv_tokens(bool int8, const void* W, const bf16* scale, const bf16* X, bf16* Y, int tokens,
                 int64_t N, int64_t K, cudaStream_t stream, const bf16* residual = nullptr,
                 bool pdl = false);

// The SwiGLU of an RMSNormed input, fused (a Llama MLP's first half):
// W [2·F, K] holds F gate rows then F up rows; for each token t < tokens,
//   H[t, i] = silu(r·g) · (r·u),  g = W[i]·X[t] (·scale[i]), u = W[F+i]·X[t] (·scale[F+i]),
//   r = rsqrt(mean(X[t]²) + eps),  silu(z) = z / (1 + e^-z),
// g and u in fp32; X [tokens, K], H [tokens, F].
void gemv_swiglu(bool int8, const void* W, const bf16* scale, const bf16* X, bf16* H, int tokens,
                 int64_t F, int64_t K, float eps, cudaStream_t stream, bool pdl = false);

void gather_gemv_bf16(const bf16* W, const int32_t* experts, int n_sel, int E, const bf16* x,
                      bf16* y, int64_t N, int64_t K, cudaStream_t stream);
void gather_gemv_int8(const int8_t* W, const bf16* scale, const int32_t* experts, int n_sel, int E,
                      const bf16* x, bf16* y, int64_t N, int64_t K, cudaStream_t stream);

// Throws std::invalid_argument naming the first id outside [0, E).
void check_experts(const std::vector<int32_t>& experts, int E);

struct Config;

// MoE at batch 1 (a Mixtral block), the ids (and weights) in device memory,
// written by a router kernel just before; both launch the general kernel
// and wait for the previous grid before reading the ids. An id outside
// [0, E) makes the launch write NaN (SwiGLU: that slot's F outputs;
// combine: every output) and read no weight.
//
// gather_gemv_swiglu: W [E, 2·F, K] (each expert gate | up rows, scales
// [E, 2·F]); for each slot s < n_sel, H[s, :] = gemv_swiglu of expert
// experts[s] for x (H [n_sel, F]; r from x as gemv_swiglu).
void gather_gemv_swiglu(bool int8, const void* W, const bf16* scale, const int32_t* experts,
                        int n_sel, int E, const bf16* x, bf16* H, int64_t F, int64_t K, float eps,
                        cudaStream_t stream, bool pdl = false, const Config* cfg = nullptr);
// gather_gemv_combine: W [E, N, K]; the weighted sum of the selected
// experts, one launch (no per-slot output):
//   y[n] = residual[n] + sum_{s < n_sel} weights[s] · scale[e_s, n] · (W[e_s, n] · X[s]),
// e_s = experts[s], X [n_sel, K] (the slots' inputs, e.g. H above), n_sel
// <= 2, weights fp32 in device memory; residual may alias y or be nullptr.
void gather_gemv_combine(bool int8, const void* W, const bf16* scale, const int32_t* experts,
                         const float* weights, int n_sel, int E, const bf16* X, bf16* y, int64_t N,
                         int64_t K, const bf16* residual, cudaStream_t stream, bool pdl = false,
                         const Config* cfg = nullptr);

// CPU reference (fp64 accumulation over the same bf16/int8 inputs given as
// floats; y in fp32). scale and residual may be nullptr.
void gemv_ref(const float* W, const float* scale, const float* x, float* y, int64_t N, int64_t K,
              const float* residual = nullptr);
// CPU reference of gemv_swiglu for one token (h: F floats).
void gemv_swiglu_ref(const float* W, const float* scale, const float* x, float* h, int64_t F,
                     int64_t K, float eps);

// The tuning knobs of the kernel, for the hidden `gemv_tune` experiment and
// the tests; the public functions above pick them by shape.
struct Config {
  int rows_per_warp = 1;    // 1, 2 or 4: rows a warp reduces together (x loaded once for all)
  int unroll = 4;           // 1, 2, 4 or 8: 16-byte weight loads per row per thread and batch
  int warps_per_block = 4;  // 1..8 (the bulk kernel: 8 or 16 consumer warps)
  bool pipeline = false;    // load the next batch while using this one
  bool pdl = false;         // programmatic dependent launch (see gemv_bf16)
  int k_split = 1;          // 1, 2, 4, 8 warps share rows and split K (divides warps_per_block)
  // Small GEMVs (the seed's D = 1024, where the launch and the first HBM
  // round trip are most of the time): every lane loads exactly one 16-byte
  // weight vector, as its first instruction, and k_split warps cover a row;
  // no loop. Needs K = 32 · k_split vectors and k_split in {1, 2, 4}; one
  // token, no SwiGLU; blocks of 8 warps if warps_per_block is 8, else 4;
  // rows_per_warp, unroll and pipeline are ignored.
  bool one_load = false;
  // int8 on compute capability 8.0+: the tensor-core kernel (gemv.cu): a
  // warp multiplies a tile of 16 rows with mma.sync after converting its
  // int8 to f16 (about half the general kernel's instructions per weight);
  // unroll (1, 2, 4, 8) 64-byte units per row per batch, mma_depth
  // batches in flight;
  // k_split warps share a tile; x staged in shared memory as f16 (K <=
  // 49152). One token, no SwiGLU; rows_per_warp and pipeline are ignored;
  // older GPUs run the general kernel.
  // int8 rows of at most 8192 bytes on compute capability 9.0+: the
  // whole-tile kernel (gemv.cu): a block of warps_per_block (4 or 8) warps
  // per 16 rows, copied into shared memory at once (cp.async.bulk) and
  // multiplied as the mma kernel does. One token, no SwiGLU; the other
  // fields are ignored; older GPUs run the general kernel.
  bool tile = false;
  bool mma = false;
  int mma_depth = 2;  // mma: batches in flight, 2 or 3 (3: not with unroll 8)
  // mma: 2 rows per warp group instead of 16, each warp-wide load 512
  // contiguous bytes of a row, the MMA's diagonal used (gemv.cu); unroll
  // 1, 2 or 4 (3 batches in flight at unroll 2 only).
  bool mma_diag = false;
  // Large GEMVs on compute capability 9.0+: bulk_stages > 0 picks the
  // bulk-copy kernel (gemv.cu): bulk_blocks_per_sm blocks per SM of
  // warps_per_block warps (8 or 16), each streaming its share of the rows
  // through a ring of bulk_stages (3, 4 or 6) buffers in shared memory
  // with cp.async.bulk. Needs one token, no SwiGLU, K / (32 · warps_per_block)
  // of 1, 2 or 4 16-byte vectors, and the ring within shared memory; on
  // older GPUs the general kernel runs instead (as pdl is ignored there).
  // rows_per_warp, unroll, pipeline and k_split are ignored.
  // bulk_rows: which rows a block takes: 0 a contiguous share, 1 every
  // gridDim-th, 2 the next of a counter shared by the grid (one of 1024
  // counters, round robin per launch: at most 1024 such launches may run
  // at once).
  // bulk_rows_per_buffer: rows per ring buffer, 1 or 2 (a gather's N even);
  // 0: 2 for rows of at most 16 KB, else 1.
  int bulk_stages = 0;
  int bulk_blocks_per_sm = 1;
  int bulk_rows = 2;
  int bulk_rows_per_buffer = 0;
  // bulk_mma: int8 with 2 rows per buffer only; the consumer warps multiply
  // on the tensor cores (as mma_diag: a buffer's two rows make the MMA's
  // rows, about 1.3 instructions per weight instead of 3), x in registers
  // as f16 scaled by a power of two (as mma).
  bool bulk_mma = false;
  // Diagnostics (tools/gemv_profile): when set, thread 0 of block b writes
  // %globaltimer (ns) at its start to trace[2b] and when its weights are
  // streamed to trace[2b + 1] (b = blockIdx.y · gridDim.x + blockIdx.x;
  // every kernel but the one-load one). Never set by the library.
  unsigned long long* trace = nullptr;
};
// n_sel: the experts a gather selects (its bytes are n_sel times a GEMV's).
Config default_config(bool int8, int64_t N, int64_t K, int n_sel = 1);
// default_config on the general kernel (or the one-load kernel) alone:
// what it picks where it picks neither bulk, tile nor mma.
Config general_config(bool int8, int64_t N, int64_t K, int n_sel = 1);
// The bulk kernel so configured (Config::bulk_*; the other fields default).
Config bulk_config(int stages, int warps, int blocks_per_sm, int rows = 2, int rows_per_buffer = 0);
// The blocks the bulk kernel launches for cfg on the current device (n_sel
// experts selected; gather: a gather_gemv, whose N decides the rows per
// buffer).
int64_t bulk_blocks(bool int8, int64_t N, int64_t K, const Config& cfg, int n_sel = 1,
                    bool gather = false);
// The blocks a one-token launch of cfg runs (grid.x · grid.y; the bulk
// kernel's need the current device, the others' none): the size of
// Config::trace / 2. tools/gemv_profile sizes its trace with it.
int64_t grid_blocks(bool int8, int64_t N, int64_t K, const Config& cfg, int n_sel = 1,
                    bool gather = false);
// What gemv_tokens (swiglu: gemv_swiglu) takes for `tokens` tokens: each
// token's sums equal the one-token gemv's bits where its k_split and unroll
// are the one-token configuration's.
Config tokens_config(bool int8, int64_t N, int64_t K, int tokens, bool swiglu = false);
// What gather_gemv_swiglu and gather_gemv_combine take without a config:
// general-kernel configurations (rows_per_warp 2, unroll 2 or 4, pipelined
// for the SwiGLU; rows_per_warp 1 or 2, unroll 1 or 2 for the combine).
Config gather_swiglu_config(bool int8, int64_t F, int64_t K);
Config combine_config(bool int8, int64_t N, int64_t K);
// gemv (n_sel = 1, experts = nullptr) or gather_gemv with an explicit config.
// `tokens` > 1: as gemv_tokens (rows_per_warp 1 or 2, unroll 2 or 4, pipelined only).
void launch(bool int8, const void* W, const bf16* scale, const int32_t* experts, int n_sel, int E,
            const bf16* x, bf16* y, int64_t N, int64_t K, const bf16* residual, Config cfg,
            cudaStream_t stream, int tokens = 1);

}  // namespace kb::gemv
