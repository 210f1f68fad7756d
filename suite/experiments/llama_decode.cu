// Whole-model decode at batch 1, the seed's model rows (`Llama-2-7b-chat-hf`,
// bf16 and int8 weight-only), in our own CUDA: random weights generated on
// the GPU, the prefill and one decode step each captured once as a CUDA
// graph and replayed.
//
// Measured as benchmarks/gpt_fast measures: one generation = the 6-token
// prompt + 200 new tokens, one warm-up generation, then the mean of 5. As
// gpt-fast, the prompt is one forward (the prefill graph: every weight read
// once for the 6 tokens) that also picks the first new token; 199 decode
// steps follow.
//
//   token_per_sec          = 200 / t
//   memory_bandwidth(GB/s) = seed model size × 200 / t, the seed's count:
//                            every parameter but the embedding (linear
//                            weights, int8 scales, RMSNorm weights)
//   memory_bandwidth_kv    = adds the KV-cache bytes the 205 attentions read
//   latency(us)            = t / 200 (per generated token)
//   compilation_time(s)    = the Case constructor: allocation, weights,
//                            one eager step and prefill, graph captures and
//                            uploads
//
// The roofline counts every graph node (the prefill's + 199 × a step's).
// A model that does not fit in GPU memory becomes a `failed` row saying
// how much it needs.
//
// `Mixtral-8x7B-v0.1` (int8, the seed's third model row): the same case
// with the mixture-of-experts step (kernels/decode/decoder.h), at shapes
// layers=16 (the seed's row: its 32 layers cut to 16) and layers=32 (the
// whole model, 47 GB; a GPU with less memory gives a `skipped` row). Its
// bytes are those one token reads: the two chosen experts of each layer,
// not all eight (docs/metrics.md).
#include <cstdio>
#include <memory>
#include <string>

#include "kernels/common/cuda_check.h"
#include "kernels/decode/decode_check.h"
#include "kernels/decode/decoder.h"
#include "suite/experiment.h"
#include "suite/experiments/decode_metrics.h"

namespace {

namespace dec = kb::decode;
namespace dm = kb::decode_metrics;

constexpr int kNewTokens = 200;
// gpt-fast's benchmark prompt, "Hello, my name is" in the Llama tokenizer.
const std::vector<int32_t> kPrompt = {1, 15043, 29892, 590, 1024, 338};
constexpr int kPositions = 6 + kNewTokens - 1;  // attended positions: 6 in the prefill, 199 steps
constexpr int kMaxSeq = 256;                    // >= kPositions
constexpr uint64_t kWeightSeed = 20261122;

dec::WeightType weight_type(kb::DType d) {
  if (d == kb::DType::bf16) return dec::WeightType::bf16;
  if (d == kb::DType::i8) return dec::WeightType::int8;
  throw std::invalid_argument(std::string("decode: no weights of dtype ") + kb::dtype_name(d));
}

// Device memory a model needs beside the reserve the decoder keeps free.
std::string gb_text(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GB", bytes / 1e9);
  return buf;
}

dec::DecoderOptions decoder_options(const dec::ModelConfig& c) {
  dec::DecoderOptions o;
  o.max_seq = kMaxSeq;
  o.seed = kWeightSeed;
  o.prompt.clear();
  for (int32_t id : kPrompt) o.prompt.push_back(id % c.vocab);
  return o;
}

class DecodeCase : public kb::Case {
 public:
  DecodeCase(const dec::ModelConfig& c, kb::DType d)
      : cfg_(c), wt_(weight_type(d)), decoder_(c, wt_, decoder_options(c)) {}

  void run(cudaStream_t s) override {
    decoder_.prefill(s);
    for (int i = 1; i < kNewTokens; ++i) decoder_.replay(s);
  }

  kb::Check check(cudaStream_t s, uint64_t seed) override {
    std::string tiny_detail;
    if (cfg_.moe()) {
      // 0. The tiny mixture of experts (4 experts, top 2) against the CPU
      //    over 16 steps, the prompt as a prefill: the routing of every
      //    layer and position, and the logits.
      dec::ReferenceCheckOptions to;
      to.prompt = kPrompt;
      to.steps = 16;
      to.max_seq = 32;
      to.attn_min_chunk = 2;
      to.seed = seed;
      to.prefill = true;
      const dec::DecodeCheck tiny =
          dec::check_against_reference(dec::find_config("tiny-moe"), wt_, to);
      if (!tiny.ok) return kb::Check::fail("tiny-moe vs CPU: " + tiny.detail);
      tiny_detail = tiny.detail + "; ";
    }
    // 1. One layer at the model's own sizes (every kernel and gemv shape of
    //    the real step) against the CPU fp32 reference, on fresh weights:
    //    the prefill graph, then 4 decode steps through the step graph, with
    //    2 attention splits from the third position on.
    dec::ModelConfig one = cfg_;
    one.n_layers = 1;
    dec::ReferenceCheckOptions ro;
    ro.prompt = kPrompt;
    ro.steps = static_cast<int>(kPrompt.size()) + 4;
    ro.max_seq = 32;
    ro.attn_min_chunk = 2;  // several splits even at these lengths
    ro.seed = seed;
    ro.prefill = true;  // as run() starts
    const dec::DecodeCheck ref = dec::check_against_reference(one, wt_, ro);
    if (!ref.ok) return kb::Check::fail("one layer vs CPU: " + ref.detail);
    // 2. The whole model: finite logits, greedy = argmax, LM-head rows on
    //    the CPU, graph replay = eager launches = prefill then steps.
    const dec::DecodeCheck full = dec::check_full_model(decoder_, 12, s);
    if (!full.ok) return kb::Check::fail(full.detail);
    return kb::Check::pass(tiny_detail + ref.detail + "; " + full.detail);
  }

 private:
  dec::ModelConfig cfg_;
  dec::WeightType wt_;
  dec::Decoder decoder_;
};

kb::Experiment decode_experiment(const std::string& model) {
  const dec::ModelConfig& cfg = dec::find_config(model);
  return kb::Experiment(model)
      .doc("batch-1 decode of " + model +
           " (random weights), prefill and step as CUDA graphs; 6-token prompt + 200 new tokens, "
           "greedy; mean of 5 generations after a warm-up")
      .point(kb::Shape{{"BS", 1}, {"prompt", 6}, {"new_tokens", kNewTokens}})
      .dtypes({kb::DType::bf16, kb::DType::i8})
      .metrics({dm::kTokenPerSec, kb::Metric::memory_bandwidth, dm::kMemoryBandwidthKv,
                kb::Metric::compilation_time, dm::kLatencyPerToken})
      .model()
      .protocol(kb::Protocol::decode, 5)
      .work([cfg](const kb::Point& p) {
        const dec::WeightBytes wb = dec::weight_bytes(cfg, weight_type(p.dtype));
        kb::Work w;
        w.counts["tokens"] = kNewTokens;
        w.bytes = wb.seed_model_size() * kNewTokens;
        double& kv = w.counts["kv_bytes"];
        for (int pos = 0; pos < kPositions; ++pos) kv += dec::kv_bytes_read(cfg, pos + 1);
        w.bound = kb::Bound::read;
        w.graph = true;
        w.launches = dec::Decoder::prefill_nodes(cfg, static_cast<int>(kPrompt.size())) +
                     double(kNewTokens - 1) * dec::Decoder::kernels_per_step(cfg);
        return w;
      })
      .make([cfg](const kb::Point& p) { return std::make_unique<DecodeCase>(cfg, p.dtype); });
}

}  // namespace

KB_EXPERIMENT(llama_2_7b_decode) { return decode_experiment("Llama-2-7b-chat-hf"); }

// The config at a point's `layers` (Mixtral's shapes).
static dec::ModelConfig with_layers(const dec::ModelConfig& c, const kb::Point& p) {
  dec::ModelConfig l = c;
  l.n_layers = static_cast<int>(p["layers"]);
  return l;
}

KB_EXPERIMENT(mixtral_8x7b_decode) {
  const dec::ModelConfig& cfg = dec::find_config("Mixtral-8x7B-v0.1");
  return kb::Experiment(cfg.name)
      .doc(
          "batch-1 decode of Mixtral-8x7B-v0.1 int8 (random weights, 8 experts, top 2 routed on "
          "the GPU), prefill and step as CUDA graphs; layers=16 is the seed's row, layers=32 the "
          "whole model; 6-token prompt + 200 new tokens, greedy; mean of 5 after a warm-up")
      .point(kb::Shape{{"layers", 16}})
      .point(kb::Shape{{"layers", 32}})
      .dtypes({kb::DType::i8})
      .metrics({dm::kTokenPerSec, kb::Metric::memory_bandwidth, dm::kMemoryBandwidthKv,
                kb::Metric::compilation_time, dm::kLatencyPerToken})
      .model()
      .protocol(kb::Protocol::decode, 5)
      .supported([cfg](const kb::Point& p, const cudaDeviceProp& prop) -> std::string {
        const dec::ModelConfig c = with_layers(cfg, p);
        // The decoder's arena, the one-layer check model beside it and 1 GB
        // for the context and the engine: a smaller GPU skips the point.
        dec::ModelConfig one = c;
        one.n_layers = 1;
        const double need = double(dec::Decoder::device_bytes(c, weight_type(p.dtype), kMaxSeq)) +
                            double(dec::Decoder::device_bytes(one, weight_type(p.dtype), 32)) + 1e9;
        if (need > double(prop.totalGlobalMem))
          return c.name + " with " + std::to_string(c.n_layers) + " layers needs about " +
                 gb_text(need) + " of GPU memory; this GPU has " +
                 gb_text(double(prop.totalGlobalMem));
        return "";
      })
      .work([cfg](const kb::Point& p) {
        const dec::ModelConfig c = with_layers(cfg, p);
        kb::Work w;
        w.counts["tokens"] = kNewTokens;
        w.bytes = dec::active_weight_bytes(c, weight_type(p.dtype)) * kNewTokens;
        double& kv = w.counts["kv_bytes"];
        for (int pos = 0; pos < kPositions; ++pos) kv += dec::kv_bytes_read(c, pos + 1);
        w.bound = kb::Bound::read;
        w.graph = true;
        // The roofline counts the kernels that wait for each other: not
        // moe_route_finish beside the chain (DecoderOptions::moe_route_parallel).
        w.launches = dec::Decoder::prefill_chain_nodes(c, static_cast<int>(kPrompt.size())) +
                     double(kNewTokens - 1) * dec::Decoder::chain_kernels_per_step(c);
        return w;
      })
      .make([cfg](const kb::Point& p) {
        return std::make_unique<DecodeCase>(with_layers(cfg, p), p.dtype);
      });
}
