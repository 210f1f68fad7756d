// The decode step's own kernels (every weight matrix goes through
// kernels/gemv). One step, for one token at position `pos`:
//
//   embed          x = embedding[tokens[pos]]
//   per layer:
//     gemv         qkv = Wqkv · x                       (raw: x not normalized, see below)
//     attention    r = rsqrt(mean(x²) + eps); q, k, v = r·qkv; RoPE(q, k) at pos;
//                  K/V cache[pos] = k, v; out = softmax(q·Kᵀ/√hd) · V over 0..pos
//                  (one block per kv head, or split over the sequence)
//     gemv         x = Wo · out + x
//     gemv_swiglu  h = silu(r·(Wgate · x)) · (r·(Wup · x)), r = rsqrt(mean(x²) + eps)
//     gemv         x = Wdown · h + x
//   gemv           raw logits = Wout · x                (raw)
//   sample         r = rsqrt(mean(x²) + eps); logits = r·raw; tokens[pos+1] = prompt
//                  token or argmax(logits); pos += 1
//
// RMSNorm is applied after the projection it feeds: with weight g,
// W·(r·(g∘x)) = r·((W·diag(g))·x), and r is a scalar. The norm weights are
// ones here (gpt-fast initializes them so); a checkpoint's g would be folded
// into W when the weights are loaded. So the norm costs no kernel of its own:
// each consumer of a projection recomputes r from the 8 KB residual x (which
// stays unchanged until the next residual add) and scales what it reads.
//
// The position and the token ids live in device memory, so one captured
// graph serves every step. All launchers check their launch. The kernels
// live by concern: step_kernels.cu (weights, state, embed, sample),
// attention_split.cu and attention_whole.cu, moe_kernels.cu.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/decode/model_config.h"

namespace kb::decode {

using bf16 = __nv_bfloat16;

// ---- weights ----
// Fills `n` elements of tensor `tensor` (see weight_init.h).
void init_bf16(bf16* w, int64_t n, uint64_t seed, uint32_t tensor, float amplitude,
               cudaStream_t stream);
void init_int8(int8_t* w, int64_t n, uint64_t seed, uint32_t tensor, cudaStream_t stream);
void init_row_scales(bf16* scale, int64_t rows, uint64_t seed, uint32_t tensor, float amplitude,
                     cudaStream_t stream);

// ---- step state ----
// pos = pos0, tokens[0, prompt_len) = prompt (pos0 = prompt_len - 1 before a
// prefill, whose sampler then consumes the last prompt position).
void reset_state(const int32_t* prompt, int prompt_len, int32_t* tokens, int32_t* pos,
                 cudaStream_t stream, int pos0 = 0);

// x = embedding[tokens[*pos]]; a position outside [0, capacity) or a token id
// outside [0, vocab) gives a NaN x (and so NaN logits), never a stray read.
void embed(const bf16* embedding, const int32_t* tokens, const int32_t* pos, int capacity,
           int vocab, int dim, bf16* x, cudaStream_t stream);

// ---- attention ----
struct AttentionArgs {
  const bf16* qkv = nullptr;  // raw [q (H·hd) | k (KVH·hd) | v (KVH·hd)] of this token
  const bf16* x = nullptr;    // the residual that qkv was projected from (for r)
  int dim = 0;
  float eps = 1e-5f;
  float rope_theta = 10000.f;
  int n_heads = 0, n_kv_heads = 0, head_dim = 0;
  bf16* k_cache = nullptr;  // this layer's [KVH][max_seq][hd]
  bf16* v_cache = nullptr;
  int max_seq = 0;
  const int32_t* pos = nullptr;  // device: attends over positions 0..*pos, appends at *pos
  bf16* out = nullptr;           // [H·hd]; query head h uses kv head h / (H / KVH)
  // Split over the sequence: the grid is n_kv_heads x n_splits; for a length
  // `len`, chunk = max(min_chunk, ceil(len / n_splits)) and only
  // ceil(len / chunk) splits work (the others exit at once).
  int n_splits = 1;
  int min_chunk = 16;
  float* partial = nullptr;     // workspace [KVH][n_splits][G][hd + 2] (o, m, l)
  int32_t* counters = nullptr;  // [KVH], zero before the first launch; left zero after each
  // Launch as a programmatic dependent of the previous kernel, and let the
  // next one launch at once (it must wait for this grid before reading what
  // it writes, as the gemv does). Before waiting, the kernel reads *pos and
  // the cache rows before it: the previous kernel must wait for its own
  // predecessors before it lets this one launch (the gemv does).
  bool pdl = false;
  // x is complete when this grid can launch (as it is in the decode step:
  // x's writer precedes the qkv gemv, which waits for it before it lets
  // this grid launch; or without pdl). r is then computed before the wait,
  // during the qkv gemv's tail, through L2. False: after the wait.
  bool x_ready = false;
  // One block per kv head that has the head's cache rows before pos copied
  // into its shared memory before its wait (compute capability 9.0; the
  // cache of one head, attention_whole_smem, must fit): no splits, no
  // merge between blocks; n_splits and min_chunk are ignored. Without it
  // (GPUs below 9.0, longer caches) the split kernel runs.
  bool whole = false;
};
// Dynamic shared memory of AttentionArgs::whole: K and V rows of one kv head
// and their scores (for up to 8 query heads a kv head).
size_t attention_whole_smem(int max_seq, int head_dim);
// Why AttentionArgs::whole cannot run on the current device at these
// sizes (compute capability below 9.0, or one head's cache too large for
// shared memory), or nullptr where it can.
const char* attention_whole_refusal(int max_seq, int head_dim);
// Floats of AttentionArgs::partial for a config and split count.
int64_t attention_workspace_floats(const ModelConfig& c, int n_splits);
// The split count the decoder uses on a GPU with `sm_count` SMs.
int default_attention_splits(const ModelConfig& c, int sm_count, int max_seq);
void attention(const AttentionArgs& a, cudaStream_t stream);

// ---- mixture of experts (Mixtral) ----
// The router of one layer, one block: r = rsqrt(mean(x²) + eps); logits[e]
// = r · scale[e] · (W[e] · x) (int8; bf16: no scale) for e < n_experts;
// softmax, the top `top` (the larger logit first, the lower id on a tie),
// their probabilities renormalized to sum 1: ids[j], weights[j]. The ids
// and weights stay in device memory for the gather kernels that follow
// (gemv::gather_gemv_swiglu, gather_gemv_combine). For the checks it also
// keeps every position's logits and ids: hist_logits[*pos · hist_stride
// + e], hist_ids[*pos · hist_stride + j] (skipped if *pos is outside
// [0, capacity) or the pointers are null).
struct RouteArgs {
  const void* w = nullptr;      // [n_experts, dim]: int8 with `scale`, or bf16
  const bf16* scale = nullptr;  // int8: [n_experts]; bf16: nullptr
  const bf16* x = nullptr;      // the residual (raw)
  int dim = 0;
  float eps = 1e-5f;
  int n_experts = 0;         // <= 64
  int top = 0;               // 1 or 2
  int32_t* ids = nullptr;    // out [top]
  float* weights = nullptr;  // out [top]
  const int32_t* pos = nullptr;
  int capacity = 0;
  float* hist_logits = nullptr;  // [capacity][hist_stride], this layer's offset applied
  int32_t* hist_ids = nullptr;   // [capacity][hist_stride]
  int hist_stride = 0;
  // Tests only: 1 = a wrong but valid routing (the last choice replaced by
  // the next-ranked expert); 2 = an id outside [0, n_experts) (E) in slot 0.
  int fault = 0;
  // as AttentionArgs::pdl; before waiting it only prefetches its own
  // weights into L2 (they do not depend on the kernel before it)
  bool pdl = false;
};
void moe_route(const RouteArgs& a, cudaStream_t stream);

// ---- the router beside the o projection (DecoderOptions::moe_route_parallel) ----
// The router needs y = x + Wo·a (the o projection's output, with the int8
// row scales so: y = x + so ⊙ (Wo·a)), but only linearly:
//   W[e]·y = W[e]·x + F[e]·a,   F = W · diag(so) · Wo   ([n_experts, q_size], fp32),
// and the RMSNorm factor r = rsqrt(mean(y²) + eps) > 0 scales every logit
// alike, so the choice of experts does not depend on it. The o projection's
// grid therefore carries router blocks (gemv::RouteBlocks) that pick the
// experts from x (the layer's input) and a (the attention's output, the o
// projection's own input) while its other blocks stream Wo, and
// moe_route_finish, once y exists, takes r for the weights and the logits
// the checks keep. (The logits differ from the router's on y only by y's
// rounding to bf16 and the order of the sums: the checks' near-tie rule.)
//
// moe_route_fold: F = W · diag(so) · Wo for one layer (setup): W [n_experts,
// dim] (int8 or bf16 as stored), so [dim] (int8: Wo's row scales; bf16:
// nullptr = 1), Wo [dim, q_size] as stored, F fp32 out.
void moe_route_fold(bool int8, const void* w, const void* wo, const bf16* wo_scale, int n_experts,
                    int dim, int q_size, float* fold, cudaStream_t stream);

// moe_route_finish: one block beside the gate/up gather; `logits` are the
// router blocks' (gemv::RouteBlocks::logits: [n_experts] without r, then the
// chosen ones').
struct RouteFinishArgs {
  const bf16* y = nullptr;  // the o projection's output (the MoE block's input)
  int dim = 0;
  float eps = 1e-5f;
  int n_experts = 0, top = 0;
  const float* logits = nullptr;  // the router blocks' [n_experts + top]
  float* weights = nullptr;       // out [top]: softmax of r·l over the chosen
  const int32_t* pos = nullptr;
  int capacity = 0;
  float* hist_logits = nullptr;  // r·l, as RouteArgs
  int hist_stride = 0;
};
void moe_route_finish(const RouteFinishArgs& a, cudaStream_t stream);

// ---- a MoE prefill (several tokens routed at once) ----
// After gemv::gather_tokens_gemv (D [E, tokens, dim], each token's rows
// under the experts it chose): for every token t < tokens,
//   x[t, :] = x[t, :] + sum_{k < top} weights[t, k] · D[ids[t, k], t, :]
// in fp32, rounded once to bf16. A token with an id outside [0, E) gets a
// NaN row and reads no D. `pdl`: as AttentionArgs::pdl (it reads nothing
// before waiting).
void moe_tokens_combine(bf16* x, const bf16* D, const int32_t* ids, const float* weights,
                        int tokens, int dim, int E, int top, cudaStream_t stream, bool pdl);

// ---- next token ----
struct SampleArgs {
  const bf16* raw_logits = nullptr;  // Wout · x, [vocab]
  const bf16* x = nullptr;           // final residual (for r)
  int dim = 0;
  float eps = 1e-5f;
  int vocab = 0;
  float* logits = nullptr;    // out: r · raw_logits in fp32, [vocab]
  int32_t* tokens = nullptr;  // tokens[pos + 1] = argmax unless pos + 1 < prompt_len
  int capacity = 0;           // entries of `tokens`
  int prompt_len = 0;
  int32_t* pos = nullptr;          // advanced by one
  float* partial_value = nullptr;  // workspace [sample_blocks(vocab)]
  int32_t* partial_index = nullptr;
  int32_t* counter = nullptr;  // zero before the first launch; left zero after each
};
int sample_blocks(int vocab);
void sample_greedy(const SampleArgs& a, cudaStream_t stream);

}  // namespace kb::decode
