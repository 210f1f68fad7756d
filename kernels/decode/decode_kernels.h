// The decode step's kernels besides kernels/gemv (no RMSNorm kernel:
// docs/notes/decode.md).
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/decode/model_config.h"

namespace kb::decode {

using bf16 = __nv_bfloat16;

// Fills `n` elements of tensor `tensor` (weight_init.h).
void init_bf16(bf16* w, int64_t n, uint64_t seed, uint32_t tensor, float amplitude,
               cudaStream_t stream);
void init_int8(int8_t* w, int64_t n, uint64_t seed, uint32_t tensor, cudaStream_t stream);
void init_row_scales(bf16* scale, int64_t rows, uint64_t seed, uint32_t tensor, float amplitude,
                     cudaStream_t stream);

// pos = pos0, tokens[0, prompt_len) = prompt (pos0 = prompt_len - 1 before a
// prefill, whose sampler then consumes the last prompt position).
void reset_state(const int32_t* prompt, int prompt_len, int32_t* tokens, int32_t* pos,
                 cudaStream_t stream, int pos0 = 0);

// x = embedding[tokens[*pos]]; a position outside [0, capacity) or a token id
// outside [0, vocab) gives a NaN x (and so NaN logits), never a stray read.
void embed(const bf16* embedding, const int32_t* tokens, const int32_t* pos, int capacity,
           int vocab, int dim, bf16* x, cudaStream_t stream);

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
  // Split over the sequence: grid n_kv_heads x n_splits; chunk =
  // max(min_chunk, ceil(len / n_splits)), the splits past the length exit.
  int n_splits = 1;
  int min_chunk = 16;
  float* partial = nullptr;     // workspace [KVH][n_splits][G][hd + 2] (o, m, l)
  int32_t* counters = nullptr;  // [KVH], zero before the first launch; left zero after each
  // A programmatic dependent that reads *pos and the earlier cache rows
  // before its wait: the previous kernel must wait for its own predecessors.
  bool pdl = false;
  bool x_ready = false;  // x is complete at launch: r is computed before the wait
  // One block per kv head, its cache copied to shared memory before the
  // wait (docs/decisions/0039); else the split kernel.
  bool whole = false;
};
// AttentionArgs::whole's shared memory; why it cannot run here (or nullptr).
size_t attention_whole_smem(int max_seq, int head_dim);
const char* attention_whole_refusal(int max_seq, int head_dim);
// Floats of AttentionArgs::partial for a config and split count.
int64_t attention_workspace_floats(const ModelConfig& c, int n_splits);
// The split count the decoder uses on a GPU with `sm_count` SMs.
int default_attention_splits(const ModelConfig& c, int sm_count, int max_seq);
void attention(const AttentionArgs& a, cudaStream_t stream);

// The MoE router of one layer, one block: logits[e] = r · scale[e] · (W[e] · x);
// the top `top` (the lower id on a tie) and their renormalized softmax; for
// the checks, each position's logits and ids at *pos · hist_stride.
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
  bool pdl = false;  // as AttentionArgs::pdl; before its wait it loads only its weights
};
void moe_route(const RouteArgs& a, cudaStream_t stream);

// The router beside the o projection (docs/decisions/0035): W[e]·y = W[e]·x
// + F[e]·a for y = x + so ⊙ (Wo·a), F = W · diag(so) · Wo. moe_route_fold:
// F [n_experts, q_size] fp32 for one layer, at setup (so: int8 Wo's row
// scales; bf16: nullptr = 1).
void moe_route_fold(bool int8, const void* w, const void* wo, const bf16* wo_scale, int n_experts,
                    int dim, int q_size, float* fold, cudaStream_t stream);

// moe_route_finish: one block beside the gate/up gather.
struct RouteFinishArgs {
  const bf16* y = nullptr;  // the o projection's output (the MoE block's input)
  int dim = 0;
  float eps = 1e-5f;
  int n_experts = 0, top = 0;
  const float* logits = nullptr;  // the router blocks' [n_experts] without r, then the chosen
  float* weights = nullptr;       // out [top]: softmax of r·l over the chosen
  const int32_t* pos = nullptr;
  int capacity = 0;
  float* hist_logits = nullptr;  // r·l, as RouteArgs
  int hist_stride = 0;
};
void moe_route_finish(const RouteFinishArgs& a, cudaStream_t stream);

// A MoE prefill, after gemv::gather_tokens_gemv (D [E, tokens, dim]): for each token t,
// x[t, :] += sum_k weights[t, k] · D[ids[t, k], t, :] in fp32, rounded once;
// an id outside [0, E) gives a NaN row.
void moe_tokens_combine(bf16* x, const bf16* D, const int32_t* ids, const float* weights,
                        int tokens, int dim, int E, int top, cudaStream_t stream, bool pdl);

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
