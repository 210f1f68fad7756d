// Whole-model decode at batch 1, the seed's model rows (Llama-2-7b-chat-hf
// bf16 and int8, Mixtral-8x7B-v0.1 int8 at 16 and 32 layers), in our own
// CUDA, measured as benchmarks/gpt_fast measures; what a run is and what its
// rows count: docs/notes/decode.md.
#include <memory>
#include <string>

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

// The model at a point: Mixtral's points set its layers.
dec::ModelConfig config_at(const dec::ModelConfig& c, const kb::Point& p) {
  dec::ModelConfig l = c;
  if (p.shape.has("layers")) l.n_layers = static_cast<int>(p["layers"]);
  return l;
}

dec::DecoderOptions decoder_options(const dec::ModelConfig& c) {
  dec::DecoderOptions o;
  o.max_seq = kMaxSeq;
  o.seed = kWeightSeed;
  o.prompt.clear();
  for (int32_t id : kPrompt) o.prompt.push_back(id % c.vocab);
  return o;
}

// A check against the CPU: the prompt as a prefill (as run() starts), then
// steps, with several attention splits even at these lengths.
dec::ReferenceCheckOptions reference_options(int steps, uint64_t seed) {
  dec::ReferenceCheckOptions o;
  o.decoder.prompt = kPrompt;
  o.decoder.max_seq = 32;
  o.decoder.attn_min_chunk = 2;
  o.decoder.seed = seed;
  o.steps = steps;
  o.prefill = true;
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
    if (cfg_.moe()) {  // 0. the tiny mixture of experts: every routing, 16 steps
      const dec::DecodeCheck tiny = dec::check_against_reference(dec::find_config("tiny-moe"), wt_,
                                                                 reference_options(16, seed));
      if (!tiny.ok) return kb::Check::fail("tiny-moe vs CPU: " + tiny.detail);
      tiny_detail = tiny.detail + "; ";
    }
    // 1. One layer at the model's own sizes (every kernel and gemv shape of
    //    the real step) on fresh weights: the prefill, then 4 steps.
    dec::ModelConfig one = cfg_;
    one.n_layers = 1;
    const dec::DecodeCheck ref = dec::check_against_reference(
        one, wt_, reference_options(static_cast<int>(kPrompt.size()) + 4, seed));
    if (!ref.ok) return kb::Check::fail("one layer vs CPU: " + ref.detail);
    // 2. The whole model (decode_check.h).
    const dec::DecodeCheck full = dec::check_full_model(decoder_, 12, s);
    if (!full.ok) return kb::Check::fail(full.detail);
    return kb::Check::pass(tiny_detail + ref.detail + "; " + full.detail);
  }

 private:
  dec::ModelConfig cfg_;
  dec::WeightType wt_;
  dec::Decoder decoder_;
};

kb::Work decode_work(const dec::ModelConfig& c, kb::DType d) {
  kb::Work w;
  w.counts["tokens"] = kNewTokens;
  w.bytes = dec::active_weight_bytes(c, weight_type(d)) * kNewTokens;
  double& kv = w.counts["kv_bytes"];
  for (int pos = 0; pos < kPositions; ++pos) kv += dec::kv_bytes_read(c, pos + 1);
  w.bound = kb::Bound::read;
  w.graph = true;
  // The kernels that wait for each other: not moe_route_finish beside the chain.
  w.launches = dec::Decoder::prefill_nodes(c, static_cast<int>(kPrompt.size())) +
               double(kNewTokens - 1) * dec::Decoder::chain_kernels_per_step(c);
  return w;
}

kb::Experiment decode_experiment(const dec::ModelConfig& cfg, const std::string& doc) {
  return kb::Experiment(cfg.name)
      .doc(doc)
      .metrics({dm::kTokenPerSec, kb::Metric::memory_bandwidth, dm::kMemoryBandwidthKv,
                kb::Metric::compilation_time, dm::kLatencyPerToken})
      .model()
      .protocol(kb::Protocol::decode, 5)
      .work([cfg](const kb::Point& p) { return decode_work(config_at(cfg, p), p.dtype); })
      .make([cfg](const kb::Point& p) {
        return std::make_unique<DecodeCase>(config_at(cfg, p), p.dtype);
      });
}

}  // namespace

KB_EXPERIMENT(llama_2_7b_decode) {
  return decode_experiment(
             dec::find_config("Llama-2-7b-chat-hf"),
             "batch-1 decode of Llama-2-7b-chat-hf (random weights), prefill and step as CUDA "
             "graphs; 6-token prompt + 200 new tokens, greedy; mean of 5 generations after a "
             "warm-up")
      .point(kb::Shape{{"BS", 1}, {"prompt", 6}, {"new_tokens", kNewTokens}})
      .dtypes({kb::DType::bf16, kb::DType::i8});
}

KB_EXPERIMENT(mixtral_8x7b_decode) {
  const dec::ModelConfig& cfg = dec::find_config("Mixtral-8x7B-v0.1");
  return decode_experiment(
             cfg,
             "batch-1 decode of Mixtral-8x7B-v0.1 int8 (random weights, 8 experts, top 2 routed "
             "on the GPU), prefill and step as CUDA graphs; layers=16 is the seed's row, "
             "layers=32 the whole model; 6-token prompt + 200 new tokens, greedy; mean of 5 "
             "after a warm-up")
      .point(kb::Shape{{"layers", 16}})
      .point(kb::Shape{{"layers", 32}})
      .dtypes({kb::DType::i8})
      .supported([cfg](const kb::Point& p, const cudaDeviceProp& prop) -> std::string {
        const dec::ModelConfig c = config_at(cfg, p);
        // The decoder's arena, the one-layer check model beside it and 1 GB
        // for the context and the engine: a smaller GPU skips the point.
        dec::ModelConfig one = c;
        one.n_layers = 1;
        const double need = double(dec::Decoder::device_bytes(c, weight_type(p.dtype), kMaxSeq)) +
                            double(dec::Decoder::device_bytes(one, weight_type(p.dtype), 32)) + 1e9;
        if (need > double(prop.totalGlobalMem))
          return c.name + " with " + std::to_string(c.n_layers) + " layers needs about " +
                 dec::gigabytes(need) + " of GPU memory; this GPU has " +
                 dec::gigabytes(double(prop.totalGlobalMem));
        return "";
      });
}
