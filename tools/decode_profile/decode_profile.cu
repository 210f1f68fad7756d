// kbench_decode_profile: where the time of one decode step goes.
//
//   kbench_decode_profile [--model NAME] [--layers N] [--dtype bfloat16|int8] [--pos N] [--reps R]
//   [--pdl 0|1] [--swiglu 0|1] [--tc 0|1] [--splits N] [--min-chunk N]
//                         [--moe-swiglu-ks N] [--moe-swiglu-unroll 2|4] [--moe-down-ks N]
//                         [--moe-down-rows 1|2] [--moe-down-unroll 1|2] [--moe-down-pipe 0|1]
//                         [--moe-early 0|1|0,1] [--moe-parallel 0|1|0,1]
//                         [--attn-cluster 0|1|0,1] [--attn-whole 0|1|0,1]
//                         [--moe-prefill 0|1|0,1] [--ab-rounds N]
//                         [--omit-each 0|1] [--timeline 0|1]
//                         [--qkv-kernels NAME,NAME,...] [--o-kernels NAME,NAME,...]
//                         [--gate-kernels NAME,...] [--down-kernels NAME,...]
//                         [--tuning targets/tuning/GPU.json]
//
// Mixtral: --model Mixtral-8x7B-v0.1 --layers 16 --dtype int8 (the seed's
// row); the bytes are those a token reads (two experts per layer), and the
// breakdown adds the split between attention, routing, experts and the LM
// head. The --moe-* options set the gather kernels' configurations
// (DecoderOptions::moe_swiglu_config / moe_down_config) for tuning.
// --moe-early sets DecoderOptions::moe_combine_early (the combine reads
// its ids before its wait; default 0, by measurement), --moe-parallel
// DecoderOptions::moe_route_parallel (the router beside the o projection;
// default 1), --attn-cluster DecoderOptions::attn_cluster (default 1),
// --attn-whole DecoderOptions::attn_whole (default 1), --moe-prefill
// DecoderOptions::moe_prefill_by_expert (default 1);
// with two values (0,1) each builds a decoder for each combination (the same weights; all must fit:
// four of 16 layers of int8 do on an 80 GB GPU), reports each, then times
// their prefills and graph steps interleaved, --ab-rounds rounds (of R
// replays each for the steps; default 7): the A/B of one process.
//
// Builds the model as the experiment does, advances the cache to position
// N (default 105, the middle of the seed's generation), then prints
//   - the graph step time (R replays from N, event-timed),
//   - the prefill graph, and a generation as the experiment measures it
//     (the prefill + 199 step replays),
//   - a per-kernel breakdown of an eager step at N (an event between
//     kernels; mean of R), with the bytes each kernel must move and its GB/s,
//   - the multi-token gemv of the prefill at the model's four linear shapes,
//     by configuration (rows per warp, K split), against one token.
// The eager sum is larger than the graph step by the launch gaps that the
// graph removes; the per-kernel times are what the next tuning step reads.
// --ideal-chain: the step's chain of dependent kernels as pure reads of
// each kernel's bytes (under 1 MB: an empty kernel that only waits), as
// programmatic dependents in one graph, timed interleaved with the step,
// and the same chain all empty: what this GPU allows that many dependent
// kernels and bytes without arithmetic (the bound the step is read against).
// --omit-each: what each kernel costs inside the graph. For each kernel of
// the step (and a few groups) a step graph without it
// (Decoder::capture_step_without: wrong results, stale inputs), its
// replays timed interleaved with the whole step's over --ab-rounds rounds;
// the difference of the medians, per step and per kernel launch, is that
// kernel's cost there (its dependency wait and tail included).
// --timeline: the step graph again with every block of its gemvs, gathers
// and attentions stamping %globaltimer at its start, when its dependency
// wait returned, when its main work was done and at its end
// (Decoder::capture_step_timeline, kb::stamp); R replays from N, each
// read back, and for each kernel of a layer on the chain (the middle
// layers, all replays: medians) the stamps' spread measured from the
// moment the kernel before it on the chain ended (its last block): when
// the blocks started, when their wait returned, when they had streamed,
// when they ended; and the chain time each kernel adds (its last end
// minus its predecessor's). The traced step's time beside the plain one's.
// --qkv-kernels (--o-kernels): the step graph again with the qkv (o)
// projection run by each named gemv configuration (a decode-table entry
// for its shape, e.g. R2U1W4P1K2, R4U1W4P1K2, R2U1W8P1K2), timed
// interleaved with the step as the decoder chooses it. --gate-kernels
// (--down-kernels), a MoE model: the same for the gate/up gather with the
// SwiGLU (the combine) by general-kernel configurations (RxUyWzPpKk; the
// gate/up gather needs R2, U2 or U4 and P1, and runs U2 at one token):
// Decoder::capture_step_with_moe. --tuning: the gemv
// table of a tuning file installed first, as `kbench run` installs the
// GPU's (else the generic rule alone).
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "core/tuning.h"
#include "kernels/common/cuda_check.h"
#include "kernels/common/device_buffer.h"
#include "kernels/common/fill.h"
#include "kernels/common/pdl.cuh"
#include "kernels/decode/decoder.h"
#include "kernels/gemv/gemv.h"
#include "suite/stats.h"
#include "tools/common/options.h"

namespace {

namespace dec = kb::decode;

struct Args {
  std::string model = "Llama-2-7b-chat-hf";
  dec::WeightType type = dec::WeightType::bf16;
  int pos = 105;
  int reps = 20;
  bool pdl = true;     // programmatic dependent launches (the decoder's default)
  bool swiglu = true;  // the fused gate/up SwiGLU gemv (the decoder's default)
  bool tc = false;     // DecoderOptions::tensor_core_gemv (its default)
  int splits = 0;      // attention splits (0: the decoder's default)
  int min_chunk = 0;   // attention positions per split at the least (0: default)
  int layers = 0;      // 0: the model's
  int moe_swiglu_ks = 0, moe_swiglu_unroll = 0;  // 0: the default
  int moe_down_ks = 0, moe_down_rows = 0, moe_down_unroll = 0, moe_down_pipe = -1;
  // Empty: the decoder's default; two values (0,1): an A/B (a decoder for
  // each combination of the options given two values).
  std::vector<bool> moe_early, moe_parallel, attn_cluster, attn_whole, moe_prefill;
  std::vector<std::string> qkv_kernels, o_kernels, gate_kernels, down_kernels;
  std::string tuning;  // a tuning file whose gemv table to install (as kbench run does)
  int ab_rounds = 7;
  bool omit_each = false;    // the in-graph cost of each kernel (steps without it)
  bool ideal_chain = false;  // the step's chain as pure reads of its kernels' bytes
  bool timeline = false;     // every traced block's stamps in the graph step
};

[[noreturn]] void usage(const std::string& why) {
  kb::tools::exit_with_usage(
      why,
      "kbench_decode_profile [--model NAME] [--dtype bfloat16|int8] [--pos N] [--reps R] "
      "[--pdl 0|1] [--swiglu 0|1] [--tc 0|1] [--splits N] [--min-chunk N] [--layers N] "
      "[--moe-swiglu-ks N] [--moe-swiglu-unroll 2|4] [--moe-down-ks N] [--moe-down-rows 1|2] "
      "[--moe-down-unroll 1|2] [--moe-down-pipe 0|1] [--moe-early 0|1|0,1] "
      "[--moe-parallel 0|1|0,1] "
      "[--attn-cluster 0|1|0,1] [--attn-whole 0|1|0,1] [--moe-prefill 0|1|0,1] [--ab-rounds N] "
      "[--omit-each 0|1] [--ideal-chain 0|1] [--timeline 0|1] [--qkv-kernels NAME,...] "
      "[--o-kernels NAME,...] "
      "[--gate-kernels NAME,...] [--down-kernels NAME,...] [--tuning FILE]");
}

// "0", "1" or "0,1".
std::vector<bool> flags(const std::string& k, const std::string& v) {
  std::vector<bool> out;
  for (const std::string& item : kb::tools::comma_items(v))
    out.push_back(kb::tools::flag_01(k, item, usage));
  if (out.size() > 2) usage(k + ": one value or two (0,1)");
  return out;
}

Args parse(int argc, char** argv) {
  Args a;
  kb::tools::for_each_option(
      argc, argv,
      [&](const std::string& k, const std::string& v) {
        if (k == "--model")
          a.model = v;
        else if (k == "--dtype")
          a.type = v == "int8"                      ? dec::WeightType::int8
                   : v == "bfloat16" || v == "bf16" ? dec::WeightType::bf16
                                                    : (usage("--dtype: bfloat16 or int8"), a.type);
        else if (k == "--pos")
          a.pos = std::atoi(v.c_str());
        else if (k == "--reps")
          a.reps = std::atoi(v.c_str());
        else if (k == "--pdl")
          a.pdl = v != "0";
        else if (k == "--swiglu")
          a.swiglu = v != "0";
        else if (k == "--tc")
          a.tc = v != "0";
        else if (k == "--splits")
          a.splits = std::atoi(v.c_str());
        else if (k == "--min-chunk")
          a.min_chunk = std::atoi(v.c_str());
        else if (k == "--layers")
          a.layers = std::atoi(v.c_str());
        else if (k == "--moe-swiglu-ks")
          a.moe_swiglu_ks = std::atoi(v.c_str());
        else if (k == "--moe-swiglu-unroll")
          a.moe_swiglu_unroll = std::atoi(v.c_str());
        else if (k == "--moe-down-ks")
          a.moe_down_ks = std::atoi(v.c_str());
        else if (k == "--moe-down-rows")
          a.moe_down_rows = std::atoi(v.c_str());
        else if (k == "--moe-down-unroll")
          a.moe_down_unroll = std::atoi(v.c_str());
        else if (k == "--moe-down-pipe")
          a.moe_down_pipe = v != "0";
        else if (k == "--moe-early")
          a.moe_early = flags(k, v);
        else if (k == "--moe-parallel")
          a.moe_parallel = flags(k, v);
        else if (k == "--attn-cluster")
          a.attn_cluster = flags(k, v);
        else if (k == "--attn-whole")
          a.attn_whole = flags(k, v);
        else if (k == "--moe-prefill")
          a.moe_prefill = flags(k, v);
        else if (k == "--qkv-kernels" || k == "--o-kernels") {
          for (const std::string& name : kb::tools::comma_items(v)) {
            if (!kb::gemv::parse_kernel(name)) usage(k + ": no kernel named " + name);
            (k == "--qkv-kernels" ? a.qkv_kernels : a.o_kernels).push_back(name);
          }
        } else if (k == "--gate-kernels" || k == "--down-kernels") {
          for (const std::string& name : kb::tools::comma_items(v)) {
            const auto kernel = kb::gemv::parse_kernel(name);
            if (!kernel || !std::holds_alternative<kb::gemv::General>(*kernel))
              usage(k + ": no general-kernel configuration named " + name);
            (k == "--gate-kernels" ? a.gate_kernels : a.down_kernels).push_back(name);
          }
        } else if (k == "--tuning") {
          a.tuning = v;
        } else if (k == "--ab-rounds")
          a.ab_rounds = std::atoi(v.c_str());
        else if (k == "--omit-each")
          a.omit_each = kb::tools::flag_01(k, v, usage);
        else if (k == "--ideal-chain")
          a.ideal_chain = kb::tools::flag_01(k, v, usage);
        else if (k == "--timeline")
          a.timeline = kb::tools::flag_01(k, v, usage);
        else
          usage("unknown option " + k);
      },
      usage);
  if (a.reps < 1) usage("--reps must be positive");
  if (a.layers < 0) usage("--layers must be positive");
  if (a.ab_rounds < 1) usage("--ab-rounds must be positive");
  return a;
}

// Bytes a kernel of the step must move at cache length `len` (weights,
// KV rows; activations only where they are all there is).
double kernel_bytes(const std::string& name, const dec::ModelConfig& c, dec::WeightType t,
                    int len) {
  const double w = t == dec::WeightType::int8 ? 1 : 2;
  const double sc = t == dec::WeightType::int8 ? 2 : 0;
  const double d = c.dim;
  auto linear = [&](double rows, double cols) {
    return rows * cols * w + rows * sc + cols * 2 + rows * 2;
  };
  if (name == "gemv_qkv") return linear(c.qkv_rows(), d);
  if (name == "gemv_o_residual") return linear(d, c.q_size()) + d * 2;
  if (name == "gemv_gate_up") return linear(2.0 * c.ffn, d);
  if (name == "gemv_gate_up_swiglu") return linear(2.0 * c.ffn, d) - c.ffn * 2;
  if (name == "gemv_down_residual") return linear(d, c.ffn) + d * 2;
  if (name == "gemv_lm_head") return linear(c.vocab, d);
  if (name == "attention") return 2.0 * c.kv_size() * 2 * len + c.qkv_rows() * 2 + c.q_size() * 2;
  if (name == "silu_mul") return 3.0 * c.ffn * 2;
  if (name == "sample_greedy") return c.vocab * (2.0 + 4.0);
  if (name == "embed") return 2.0 * d * 2;
  const double k = c.top_experts;
  if (name == "moe_route") return c.n_experts * (d * w + sc) + d * 2;
  // beside the chain (moe_route_parallel): y; the o projection's router
  // blocks read the router's weights, x and the fold F (counted in neither)
  if (name == "moe_route_finish") return d * 2;
  if (name == "gather_gate_up_swiglu") return k * (linear(2.0 * c.ffn, d) - c.ffn * 2);
  if (name == "gather_down_combine_residual") return k * linear(d, c.ffn) + d * 2;
  return 0;
}

// --ideal-chain: one kernel of the ideal chain. Reads `n` 16-byte vectors at
// p (none: an empty kernel that only waits), grid-stride, 8 loads in flight
// a thread, the first ones issued before the dependency wait as the gemvs'
// are; lets the next grid launch once it has read its bytes, as they do.
// Nothing is written unless the xor of what it read hits a value it never
// takes.
__global__ void __launch_bounds__(512) ideal_read_kernel(const int4* p, size_t n, int* sink) {
  constexpr int kFlight = 8;
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  int acc = 0;
  bool waited = false;
  for (size_t i0 = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i0 < n; i0 += kFlight * stride) {
    int4 v[kFlight];
#pragma unroll
    for (int u = 0; u < kFlight; ++u) {
      const size_t i = i0 + u * stride;
      v[u] = i < n ? __ldcs(p + i) : make_int4(0, 0, 0, 0);
    }
    if (!waited) {
      kb::wait_for_previous_grid();
      waited = true;
    }
#pragma unroll
    for (int u = 0; u < kFlight; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  if (!waited) kb::wait_for_previous_grid();
  kb::let_next_grid_launch();
  if (acc == 0x7fffffff && sink) *sink = acc;
}

}  // namespace

int main(int argc, char** argv) {
  const Args a = parse(argc, argv);
  try {
    dec::ModelConfig c = dec::find_config(a.model);
    if (a.layers > 0) c.n_layers = a.layers;
    dec::DecoderOptions o;
    if (c.moe()) {
      namespace gemv = kb::gemv;
      const bool i8 = a.type == dec::WeightType::int8;
      gemv::General sw = *gemv::gather_swiglu_config(i8, c.ffn, c.dim).get<gemv::General>();
      if (a.moe_swiglu_ks > 0) sw.k_split = a.moe_swiglu_ks;
      if (a.moe_swiglu_unroll > 0) sw.unroll = a.moe_swiglu_unroll;
      o.moe_swiglu_config = gemv::Config(sw);
      gemv::General dn = *gemv::combine_config(i8, c.dim, c.ffn).get<gemv::General>();
      if (a.moe_down_ks > 0) dn.k_split = a.moe_down_ks;
      if (a.moe_down_rows > 0) dn.rows_per_warp = a.moe_down_rows;
      if (a.moe_down_unroll > 0) dn.unroll = a.moe_down_unroll;
      if (a.moe_down_pipe >= 0) dn.pipeline = a.moe_down_pipe != 0;
      if (dn.rows_per_warp != 2) dn.min_blocks = 0;  // min_blocks: 2 rows a warp only
      o.moe_down_config = gemv::Config(dn);
      std::printf("gather swiglu: %s; combine: %s\n", gemv::kernel_name(sw).c_str(),
                  gemv::kernel_name(dn).c_str());
    }
    o.max_seq = 256;
    o.seed = 1;
    o.pdl = a.pdl;
    o.fuse_swiglu = a.swiglu;
    o.tensor_core_gemv = a.tc;
    if (a.splits > 0) o.attn_splits = a.splits;
    if (a.min_chunk > 0) o.attn_min_chunk = a.min_chunk;
    o.prompt.clear();
    for (int id : {1, 15043, 29892, 590, 1024, 338}) o.prompt.push_back(id % c.vocab);
    if (a.pos < 0 || a.pos + a.reps > o.max_seq) usage("--pos + --reps must stay within 256");
    cudaDeviceProp prop{};
    int dev = 0;
    KB_CUDA_CHECK(cudaGetDevice(&dev));
    KB_CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
    std::printf("%s %s on %s\n", c.name.c_str(), dec::weight_type_name(a.type), prop.name);
    if (!a.tuning.empty()) {
      std::string warning;
      auto table = kb::load_gemv_table(a.tuning, prop.name, &warning);
      if (!warning.empty()) std::printf("--tuning: %s\n", warning.c_str());
      std::printf("gemv table: %zu entries from %s\n", table.size(), a.tuning.c_str());
      kb::gemv::set_table(std::move(table), a.tuning);
    }

    // One decoder per combination of the two-valued options (the A/B axes):
    // each axis is a flag, its values and the DecoderOptions field it sets.
    struct Axis {
      const char* flag;
      std::vector<bool> values;
      bool dec::DecoderOptions::*field;
      bool moe_only;
    };
    std::vector<Axis> axes = {
        {"moe-early", a.moe_early, &dec::DecoderOptions::moe_combine_early, true},
        {"moe-parallel", a.moe_parallel, &dec::DecoderOptions::moe_route_parallel, true},
        {"attn-cluster", a.attn_cluster, &dec::DecoderOptions::attn_cluster, false},
        {"attn-whole", a.attn_whole, &dec::DecoderOptions::attn_whole, false},
        {"moe-prefill", a.moe_prefill, &dec::DecoderOptions::moe_prefill_by_expert, true},
    };
    for (Axis& x : axes) {
      if (x.values.empty()) x.values = {o.*x.field};
      if (x.values.size() > 1 && x.moe_only && !c.moe())
        usage(std::string("--") + x.flag + " with two values: a MoE model only");
    }
    std::vector<std::vector<bool>> vs = {{}};  // every combination, the first axis slowest
    for (const Axis& x : axes) {
      std::vector<std::vector<bool>> next;
      for (const auto& v : vs)
        for (const bool b : x.values) {
          next.push_back(v);
          next.back().push_back(b);
        }
      vs = std::move(next);
    }
    std::vector<std::unique_ptr<dec::Decoder>> ds;
    for (const auto& v : vs) {
      for (size_t k = 0; k < axes.size(); ++k) o.*axes[k].field = v[k];
      ds.push_back(std::make_unique<dec::Decoder>(c, a.type, o));
    }
    // The lines of decoder i start with its options when there are several.
    auto name = [&](size_t i) {
      std::string n;
      for (size_t k = 0; k < axes.size(); ++k)
        if (axes[k].values.size() > 1)
          n += std::string(n.empty() ? "" : " ") + axes[k].flag + (vs[i][k] ? " 1" : " 0");
      return n;
    };
    auto label = [&](size_t i) { return ds.size() > 1 ? "[" + name(i) + "] " : std::string(); };
    if (ds.size() == 1) {
      std::string opts;
      for (const Axis& x : axes)
        if (!x.moe_only || c.moe())
          opts += std::string(opts.empty() ? "" : ", ") + "--" + x.flag + " " +
                  (x.values[0] ? "1" : "0");
      std::printf("options: %s\n", opts.c_str());
    }
    for (size_t i = 0; i < ds.size(); ++i) {
      if (ds[i]->attention_whole())
        std::printf("%sattention: one block a kv head, its cache in shared memory (whole)\n",
                    label(i).c_str());
      else
        std::printf(
            "%sattention: %d splits, %s\n", label(i).c_str(), ds[i]->attention_splits(),
            ds[i]->attention_cluster() ? "one cluster a kv head" : "merged by the last block");
    }
    for (size_t i = 0; i < ds.size(); ++i)
      std::printf(
          "%sgraph: %zu nodes per step (%d expected with one kernel per gemv; %d on the "
          "chain)\n",
          label(i).c_str(), ds[i]->graph_nodes(), dec::Decoder::kernels_per_step(c, a.swiglu),
          dec::Decoder::chain_kernels_per_step(c, a.swiglu, ds[i]->route_parallel()));
    cudaStream_t s;
    KB_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaEvent_t e0, e1;
    KB_CUDA_CHECK(cudaEventCreate(&e0));
    KB_CUDA_CHECK(cudaEventCreate(&e1));
    auto advance_to = [&](dec::Decoder& d, int pos) {
      d.reset(s);
      for (int i = 0; i < pos; ++i) d.replay(s);
    };
    // Time of one of R replays from `pos` of a step graph (the decoder's own
    // when `g` is null; the cache is advanced by the decoder's own).
    auto graph_step_us = [&](dec::Decoder& d, cudaGraphExec_t g = nullptr) {
      advance_to(d, a.pos);
      KB_CUDA_CHECK(cudaEventRecord(e0, s));
      for (int i = 0; i < a.reps; ++i) {
        if (g)
          KB_CUDA_CHECK(cudaGraphLaunch(g, s));
        else
          d.replay(s);
      }
      KB_CUDA_CHECK(cudaEventRecord(e1, s));
      KB_CUDA_CHECK(cudaEventSynchronize(e1));
      float ms = 0;
      KB_CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
      return ms * 1e3 / a.reps;
    };
    // One prefill (graph), event-timed, in us.
    auto prefill_us = [&](dec::Decoder& d) {
      float ms = 0;
      KB_CUDA_CHECK(cudaEventRecord(e0, s));
      d.prefill(s);
      KB_CUDA_CHECK(cudaEventRecord(e1, s));
      KB_CUDA_CHECK(cudaEventSynchronize(e1));
      KB_CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
      return ms * 1e3;
    };
    const int P = int(o.prompt.size());
    // The bytes a token reads (a MoE model: two experts per layer).
    const double model_bytes = dec::active_weight_bytes(c, a.type);

    for (size_t di = 0; di < ds.size(); ++di) {
      dec::Decoder& d = *ds[di];
      const std::string lb = label(di);
      if (di > 0) std::printf("\n");
      const double graph_us = graph_step_us(d);

      // The prefill graph alone, and a generation as the experiment measures
      // it (the prefill + 199 steps, after one warm-up).
      double prefill_ms = 0, gen_ms = 0;
      float ms = 0;
      for (int rep = 0; rep < 2; ++rep) {
        prefill_ms = prefill_us(d) * 1e-3;
        KB_CUDA_CHECK(cudaEventRecord(e0, s));
        d.prefill(s);
        for (int i = 1; i < 200; ++i) d.replay(s);
        KB_CUDA_CHECK(cudaEventRecord(e1, s));
        KB_CUDA_CHECK(cudaEventSynchronize(e1));
        KB_CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
        gen_ms = ms;
      }
      std::printf("%sgraph step at pos %d: %.1f us (%.0f GB/s of weights)\n", lb.c_str(), a.pos,
                  graph_us, model_bytes / (graph_us * 1e-6) / 1e9);
      std::printf("%sprefill of %d tokens: %.1f us (%zu graph nodes) = %.2f steps at pos %d\n",
                  lb.c_str(), P, prefill_ms * 1e3, d.prefill_graph_nodes(),
                  prefill_ms * 1e3 / graph_us, a.pos);
      std::printf(
          "%sgeneration (prefill + 199 steps): %.1f ms = %.1f tok/s, %.0f GB/s (seed count)\n",
          lb.c_str(), gen_ms, 200 / (gen_ms * 1e-3), model_bytes * 200 / (gen_ms * 1e-3) / 1e9);

      // Eager breakdown, mean of `reps` steps all at `pos`.
      std::map<std::string, std::pair<int, double>> per;  // name -> (calls per step, total us)
      std::vector<std::string> order;
      double eager_total = 0;
      for (int rep = 0; rep < a.reps; ++rep) {
        advance_to(d, a.pos);
        const auto t = d.profile_step(s);
        for (const auto& k : t) {
          if (!per.count(k.name)) order.push_back(k.name);
          auto& p = per[k.name];
          if (rep == 0) ++p.first;
          p.second += k.us / a.reps;
          eager_total += k.us / a.reps;
        }
      }
      std::printf("\n%seager step at pos %d, mean of %d (an event between kernels):\n", lb.c_str(),
                  a.pos, a.reps);
      std::printf("%-28s %6s %11s %10s %7s %10s %8s\n", "kernel", "calls", "total(us)", "each(us)",
                  "share", "MB each", "GB/s");
      for (const auto& name : order) {
        const auto& p = per[name];
        const double each = p.second / p.first;
        const double bytes = kernel_bytes(name, c, a.type, a.pos + 1);
        std::printf("%-28s %6d %11.1f %10.2f %6.1f%% %10.2f %8.0f\n", name.c_str(), p.first,
                    p.second, each, 100 * p.second / eager_total, bytes / 1e6,
                    bytes / (each * 1e-6) / 1e9);
      }
      std::printf("%-28s %6s %11.1f   (graph step: %.1f us; the difference is launch gaps)\n",
                  "sum", "", eager_total, graph_us);
      if (c.moe()) {
        // Where a Mixtral step goes: attention (qkv, attention, o), routing,
        // the experts (both gathers), the LM head (with embed and sampler).
        auto group = [](const std::string& n) {
          if (n == "gemv_qkv" || n == "attention" || n == "gemv_o_residual") return 0;
          if (n.rfind("moe_route", 0) == 0) return 1;
          if (n.rfind("gather_", 0) == 0) return 2;
          return 3;
        };
        // With the router beside the o projection the choice is made in the o
        // projection's grid (counted with it) and route_finish runs beside
        // the chain (its eager time here is only the gap it leaves on it).
        const char* names[] = {d.route_parallel() ? "attention (qkv, attention, o+router)"
                                                  : "attention (qkv, attention, o)",
                               d.route_parallel() ? "routing (route_finish, beside)" : "routing",
                               "experts", "LM head, embed, sample"};
        double g[4] = {0, 0, 0, 0};
        for (const auto& [name, p] : per) g[group(name)] += p.second;
        std::printf("\n%ssplit of the eager step:\n", lb.c_str());
        for (int i = 0; i < 4; ++i)
          std::printf("  %-32s %9.1f us %6.1f%%\n", names[i], g[i], 100 * g[i] / eager_total);
      }
    }

    if (ds.size() > 1) {
      // The A/B: both decoders' graph steps in turn, the order alternating
      // from round to round so that a drift (clocks, heat) falls on both.
      std::vector<std::vector<double>> us(ds.size());
      for (int round = 0; round < a.ab_rounds; ++round)
        for (size_t k = 0; k < ds.size(); ++k) {
          const size_t di = round % 2 == 0 ? k : ds.size() - 1 - k;
          us[di].push_back(graph_step_us(*ds[di]));
        }
      // The prefill graphs likewise, one prefill each a round.
      std::vector<std::vector<double>> pf(ds.size());
      for (int round = 0; round < a.ab_rounds; ++round)
        for (size_t k = 0; k < ds.size(); ++k) {
          const size_t di = round % 2 == 0 ? k : ds.size() - 1 - k;
          pf[di].push_back(prefill_us(*ds[di]));
        }
      std::printf(
          "\nprefill A/B (%zu tokens), %d rounds, interleaved; a generation as the prefill "
          "+ 199 steps of the median step at pos %d:\n",
          o.prompt.size(), a.ab_rounds, a.pos);
      for (size_t di = 0; di < ds.size(); ++di) {
        const double p50 = kb::quantile(pf[di], 0.5), gen = p50 + 199 * kb::quantile(us[di], 0.5);
        std::printf(
            "  %s: prefill median %.1f us (min %.1f, max %.1f); generation %.1f ms = %.1f "
            "tok/s\n",
            name(di).c_str(), p50, kb::quantile(pf[di], 0), kb::quantile(pf[di], 1), gen * 1e-3,
            200 / (gen * 1e-6));
      }
      std::printf("\ngraph step A/B at pos %d, %d rounds of %d replays, interleaved:\n", a.pos,
                  a.ab_rounds, a.reps);
      for (size_t di = 0; di < ds.size(); ++di)
        std::printf("  %s: median %.1f us (min %.1f, max %.1f) = %.1f tok/s\n", name(di).c_str(),
                    kb::quantile(us[di], 0.5), kb::quantile(us[di], 0), kb::quantile(us[di], 1),
                    1e6 / kb::quantile(us[di], 0.5));
      const double m0 = kb::quantile(us[0], 0.5);
      for (size_t di = 1; di < ds.size(); ++di) {
        const double m1 = kb::quantile(us[di], 0.5);
        std::printf("  median difference (%s - %s): %+.1f us (%+.2f%%)\n", name(di).c_str(),
                    name(0).c_str(), m1 - m0, 100 * (m1 - m0) / m0);
      }
    }
    // Step graphs of decoder d timed against its own step, interleaved:
    // --ab-rounds rounds of the whole step (into `full`), then each graph.
    auto against_the_step = [&](dec::Decoder& d, const std::vector<dec::Decoder::GraphExec>& graphs,
                                std::vector<double>& full) {
      std::vector<std::vector<double>> us(graphs.size());
      for (int round = 0; round < a.ab_rounds; ++round) {
        full.push_back(graph_step_us(d));
        for (size_t i = 0; i < graphs.size(); ++i)
          us[i].push_back(graph_step_us(d, graphs[i].get()));
      }
      return us;
    };
    if (a.timeline) {
      dec::Decoder& d = *ds[0];
      const size_t per = dec::Decoder::kTimelineBlocks;
      const size_t lines = per * size_t(8 * c.n_layers + 8);
      kb::DeviceBuffer<unsigned long long> buf(4 * lines);
      std::vector<dec::Decoder::TimelineSpan> spans;
      const auto traced = d.capture_step_timeline(buf.get(), lines, &spans);
      // Plain and traced steps interleaved: what the stamps cost.
      std::vector<double> plain_us, traced_us;
      for (int round = 0; round < a.ab_rounds; ++round) {
        plain_us.push_back(graph_step_us(d));
        traced_us.push_back(graph_step_us(d, traced.get()));
      }
      // Per replay, per span: the stamps of the blocks that ran (start != 0).
      struct Stat {
        double start_min, start_max, wait_min, wait_max, main_p50, main_p90, main_max, end_p50,
            end_max;
      };
      std::vector<std::vector<Stat>> runs;  // [replay][span]
      advance_to(d, a.pos);
      std::vector<unsigned long long> h(4 * lines);
      for (int r = 0; r < a.reps; ++r) {
        KB_CUDA_CHECK(cudaMemsetAsync(buf.get(), 0, 4 * lines * sizeof(unsigned long long), s));
        KB_CUDA_CHECK(cudaGraphLaunch(traced.get(), s));
        KB_CUDA_CHECK(cudaMemcpyAsync(h.data(), buf.get(), h.size() * sizeof(h[0]),
                                      cudaMemcpyDeviceToHost, s));
        KB_CUDA_CHECK(cudaStreamSynchronize(s));
        unsigned long long t0 = ~0ull;
        for (size_t i = 0; i < spans.size() * per; ++i)
          if (h[4 * i]) t0 = std::min(t0, h[4 * i]);
        std::vector<Stat> st;
        for (const auto& sp : spans) {
          std::vector<double> start, wait, main, end;
          for (size_t b = sp.first_line; b < sp.first_line + per; ++b) {
            const unsigned long long* l = &h[4 * b];
            if (!l[0]) continue;
            auto us = [&](unsigned long long t) { return (double(t) - double(t0)) * 1e-3; };
            start.push_back(us(l[0]));
            if (l[1]) wait.push_back(us(l[1]));
            if (l[2]) main.push_back(us(l[2]));
            if (l[3]) end.push_back(us(l[3]));
          }
          auto q = [](const std::vector<double>& v, double f) {
            return v.empty() ? NAN : kb::quantile(v, f);
          };
          st.push_back({q(start, 0), q(start, 1), q(wait, 0), q(wait, 1), q(main, 0.5),
                        q(main, 0.9), q(main, 1), q(end, 0.5), q(end, 1)});
        }
        runs.push_back(std::move(st));
      }
      std::printf(
          "\ntimeline (%d replays from pos %d; the middle layers' medians, us from the "
          "end of the kernel before on the chain):\n",
          a.reps, a.pos);
      std::printf("  step: plain %.1f us, traced %.1f us (medians of %d interleaved rounds)\n",
                  kb::quantile(plain_us, 0.5), kb::quantile(traced_us, 0.5), a.ab_rounds);
      // end1, the kernel's last end after its predecessor's, is the chain
      // time it adds.
      std::printf("  %-30s %7s %7s %7s %7s %7s %7s %7s %7s %11s\n", "kernel", "start0", "start1",
                  "wait0", "wait1", "main50", "main90", "main1", "end50", "end1=chain");
      // Kernels in launch order; the chain predecessor of span i is span i-1.
      std::vector<std::string> order;
      std::vector<bool> in_layers;  // of order's kernels
      std::map<std::string, std::vector<std::array<double, 9>>> rel;
      const int lo = c.n_layers > 2 ? 1 : 0, hi = c.n_layers > 2 ? c.n_layers - 2 : c.n_layers - 1;
      for (const auto& st : runs)
        for (size_t i = 1; i < spans.size(); ++i) {
          const auto& sp = spans[i];
          const std::string key = sp.layer < 0 ? sp.name + " (outside the layers)" : sp.name;
          if (sp.layer >= 0 && (sp.layer < lo || sp.layer > hi)) continue;
          if (!rel.count(key)) {
            order.push_back(key);
            in_layers.push_back(sp.layer >= 0);
          }
          const double base = st[i - 1].end_max;
          const Stat& x = st[i];
          rel[key].push_back({x.start_min - base, x.start_max - base, x.wait_min - base,
                              x.wait_max - base, x.main_p50 - base, x.main_p90 - base,
                              x.main_max - base, x.end_p50 - base, x.end_max - base});
        }
      double chain_sum = 0;
      for (size_t k = 0; k < order.size(); ++k) {
        const auto& v = rel[order[k]];
        std::printf("  %-30s", order[k].c_str());
        for (int j = 0; j < 9; ++j) {
          std::vector<double> col;
          for (const auto& row : v)
            if (!std::isnan(row[j])) col.push_back(row[j]);
          const double m = col.empty() ? NAN : kb::quantile(col, 0.5);
          if (j == 8 && in_layers[k]) chain_sum += m;
          std::printf(j == 8 ? " %11.2f" : " %7.2f", m);
        }
        std::printf("\n");
      }
      std::printf("  a middle layer on the chain: %.2f us (the sum of its kernels' end1)\n",
                  chain_sum);
    }
    if (a.ideal_chain) {
      // The step's chain of dependent kernels (the eager step's order, the
      // kernels beside the chain left out) as pure reads of each kernel's
      // bytes (kernel_bytes) from a region of its own, or, under 1 MB (the
      // attention, embed, sampler), as empty kernels that only wait: a graph
      // of programmatic dependents as the step's. What this GPU allows a
      // chain of that many dependent kernels and bytes without arithmetic,
      // timed interleaved with the step; and the same chain all empty.
      dec::Decoder& d = *ds[0];
      advance_to(d, a.pos);
      std::vector<size_t> vecs, first;  // each chain kernel's 16-byte vectors and first one
      size_t total = 0, reading = 0;
      for (const auto& k : d.profile_step(s)) {
        if (k.name == "moe_route_finish") continue;
        const double b = kernel_bytes(k.name, c, a.type, a.pos + 1);
        const size_t v = b < (1 << 20) ? 0 : size_t(b / 16);
        first.push_back(total);
        vecs.push_back(v);
        total += v;
        reading += v > 0;
      }
      kb::DeviceBuffer<int4> buf(std::max<size_t>(total, 1));
      KB_CUDA_CHECK(cudaMemset(buf.get(), 0, std::max<size_t>(total, 1) * 16));
      kb::DeviceBuffer<int> sink(1);
      int sms = 0;
      KB_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
      int per_sm = 0;  // one wave of the grid-stride blocks
      KB_CUDA_CHECK(
          cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, ideal_read_kernel, 512, 0));
      auto capture = [&](bool empty) {
        cudaGraph_t g;
        KB_CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
        for (size_t i = 0; i < vecs.size(); ++i)
          kb::launch_maybe_pdl(i > 0, ideal_read_kernel, dim3(per_sm * sms), dim3(512), s,
                               buf.get() + first[i], empty ? size_t(0) : vecs[i], sink.get());
        KB_CUDA_CHECK(cudaStreamEndCapture(s, &g));
        cudaGraphExec_t e;
        KB_CUDA_CHECK(cudaGraphInstantiate(&e, g, 0));
        KB_CUDA_CHECK(cudaGraphDestroy(g));
        return dec::Decoder::GraphExec(e, cudaGraphExecDestroy);
      };
      std::vector<dec::Decoder::GraphExec> graphs;
      graphs.push_back(capture(false));
      graphs.push_back(capture(true));
      std::vector<double> full;
      const auto us = against_the_step(d, graphs, full);
      const double step = kb::quantile(full, 0.5), ideal = kb::quantile(us[0], 0.5),
                   empty = kb::quantile(us[1], 0.5);
      std::printf(
          "\nideal chain at pos %d (medians of %d rounds of %d replays, interleaved with the "
          "step):\n  %zu dependent kernels, %zu of them reading %.3f GB (the rest empty)\n"
          "  step %.1f us; ideal chain %.1f us (%.0f GB/s; the step at %.3f of it); "
          "all empty %.1f us (%.2f us a kernel)\n",
          a.pos, a.ab_rounds, a.reps, vecs.size(), reading, total * 16e-9, step, ideal,
          total * 16 / (ideal * 1e-6) / 1e9, ideal / step, empty, empty / vecs.size());
    }
    if (a.omit_each) {
      // What each kernel costs inside the graph: steps without it, timed
      // interleaved with the whole step (the full graph advances the cache
      // to --pos before each timing, so every variant runs at the same length).
      dec::Decoder& d = *ds[0];
      std::vector<std::pair<std::string, std::vector<std::string>>> variants;
      std::vector<std::string> kinds;  // in launch order
      std::map<std::string, int> calls;
      for (const auto& k : d.profile_step(s)) {
        if (k.name != "sample_greedy" &&  // it advances the position
            calls[k.name] == 0)
          kinds.push_back(k.name);
        ++calls[k.name];
      }
      for (const auto& k : kinds) variants.push_back({k, {k}});
      variants.push_back({"qkv+attention+o", {"gemv_qkv", "attention", "gemv_o_residual"}});
      if (c.moe()) {
        if (std::find(kinds.begin(), kinds.end(), "moe_route") != kinds.end())
          variants.push_back(
              {"route+qkv+attention+o", {"moe_route", "gemv_qkv", "attention", "gemv_o_residual"}});
        else
          variants.push_back({"qkv+attention+o(+router)",
                              {"gemv_qkv", "attention", "gemv_o_residual", "moe_route_finish"}});
        variants.push_back(
            {"both gathers", {"gather_gate_up_swiglu", "gather_down_combine_residual"}});
      }
      std::vector<dec::Decoder::GraphExec> graphs;
      for (const auto& v : variants) graphs.push_back(d.capture_step_without(v.second));
      std::vector<double> full;
      const auto us = against_the_step(d, graphs, full);
      const double f = kb::quantile(full, 0.5);
      std::printf(
          "\nin-graph cost at pos %d (step without the kernel vs the whole step, medians of %d "
          "rounds of %d replays, interleaved): whole step %.1f us (%.1f-%.1f)\n",
          a.pos, a.ab_rounds, a.reps, f, kb::quantile(full, 0), kb::quantile(full, 1));
      std::printf("%-28s %6s %12s %12s %10s %8s\n", "left out", "calls", "step(us)", "saves(us)",
                  "each(us)", "GB/s");
      for (size_t i = 0; i < variants.size(); ++i) {
        int n = 0;
        double bytes = 0;
        for (const auto& k : variants[i].second) {
          n += calls[k];
          bytes += calls[k] * kernel_bytes(k, c, a.type, a.pos + 1);
        }
        const double m = kb::quantile(us[i], 0.5), saved = f - m;
        std::printf("%-28s %6d %12.1f %12.1f %10.2f %8.0f\n", variants[i].first.c_str(), n, m,
                    saved, n ? saved / n : 0.0, saved > 0 ? bytes / (saved * 1e-6) / 1e9 : 0.0);
      }
    }
    // Step graphs, one per named configuration, timed against the decoder's
    // own step (interleaved) and printed under `title`.
    auto by_configuration = [&](const std::string& title, const std::vector<std::string>& names,
                                const std::vector<dec::Decoder::GraphExec>& graphs) {
      std::vector<double> full;
      const auto us = against_the_step(*ds[0], graphs, full);
      const double f = kb::quantile(full, 0.5);
      std::printf("\n%s, step medians of %d rounds of %d replays, interleaved: %.1f us\n",
                  title.c_str(), a.ab_rounds, a.reps, f);
      for (size_t i = 0; i < graphs.size(); ++i) {
        const double m = kb::quantile(us[i], 0.5);
        std::printf("  %-14s %8.1f us (%+.1f us, %+.2f%%)\n", names[i].c_str(), m, m - f,
                    100 * (m - f) / f);
      }
    };
    // A projection run by each named configuration: a decode-table entry
    // for its shape alone while the step is captured again.
    auto by_kernel = [&](const char* what, int64_t rows, int64_t cols,
                         const std::vector<std::string>& names) {
      namespace gemv = kb::gemv;
      dec::Decoder& d = *ds[0];
      const bool i8 = a.type == dec::WeightType::int8;
      const std::vector<gemv::TableEntry> saved = gemv::installed_table();
      const gemv::Choice base = gemv::choose(i8, rows, cols, 1, gemv::Use::decode);
      std::vector<dec::Decoder::GraphExec> graphs;
      for (const auto& name : names) {
        gemv::TableEntry e;
        e.bucket.int8 = i8;
        e.bucket.use = gemv::Use::decode;
        e.bucket.rows_min = e.bucket.rows_max = rows;
        e.bucket.row_bytes_min = e.bucket.row_bytes_max = cols * (i8 ? 1 : 2);
        e.kernel = *gemv::parse_kernel(name);
        e.origin = "--qkv-kernels / --o-kernels";
        std::vector<gemv::TableEntry> t = saved;
        t.insert(t.begin(), e);
        gemv::set_table(t, e.origin);
        graphs.push_back(d.capture_step_without({}));
      }
      gemv::set_table(saved, a.tuning);
      by_configuration(std::string(what) + " projection (" + std::to_string(rows) + "x" +
                           std::to_string(cols) + ") by configuration; the decoder's own (" +
                           gemv::kernel_name(base.config.kernel) + ")",
                       names, graphs);
    };
    if (!a.qkv_kernels.empty()) by_kernel("qkv", c.qkv_rows(), c.dim, a.qkv_kernels);
    if (!a.o_kernels.empty()) by_kernel("o", c.dim, c.q_size(), a.o_kernels);
    // A MoE gather run by each named general-kernel configuration.
    auto by_moe_kernel = [&](bool gate, const std::vector<std::string>& names) {
      namespace gemv = kb::gemv;
      if (!c.moe()) usage("--gate-kernels / --down-kernels: a MoE model only");
      std::vector<dec::Decoder::GraphExec> graphs;
      for (const auto& name : names) {
        const gemv::Config k(*gemv::parse_kernel(name));
        graphs.push_back(gate ? ds[0]->capture_step_with_moe(k, std::nullopt)
                              : ds[0]->capture_step_with_moe(std::nullopt, k));
      }
      const auto& own = gate ? o.moe_swiglu_config : o.moe_down_config;
      by_configuration(std::string(gate ? "gate/up gather" : "combine") +
                           " by configuration; the decoder's own (" +
                           (own ? kb::gemv::kernel_name(own->kernel) : std::string("default")) +
                           ")",
                       names, graphs);
    };
    if (!a.gate_kernels.empty()) by_moe_kernel(true, a.gate_kernels);
    if (!a.down_kernels.empty()) by_moe_kernel(false, a.down_kernels);
    if (c.moe()) {
      KB_CUDA_CHECK(cudaEventDestroy(e0));
      KB_CUDA_CHECK(cudaEventDestroy(e1));
      KB_CUDA_CHECK(cudaStreamDestroy(s));
      return 0;  // the multi-token gemv table is the dense prefill's
    }

    // The prefill's gemv at `P` tokens by configuration (4 weight copies in
    // turn, so that no shape is served from L2).
    namespace gemv = kb::gemv;
    const bool int8 = a.type == dec::WeightType::int8;
    float ms = 0;
    std::printf(
        "\nmulti-token gemv, %d tokens, us (GB/s of weights), mean of %d; RxUy: rows per "
        "warp, unroll; ks1: no K split (else the one-token default's):\n",
        P, a.reps);
    const char* variants[] = {"1 token", "R1U2",    "R1U4",    "R2U2",    "R2U4",
                              "R1U2ks1", "R1U4ks1", "R2U2ks1", "R2U4ks1", "swiglu"};
    std::printf("%-12s", "N x K");
    for (const char* v : variants) std::printf(" %13s", v);
    std::printf("\n");
    const int64_t shapes[4][2] = {
        {c.qkv_rows(), c.dim}, {c.dim, c.q_size()}, {2LL * c.ffn, c.dim}, {c.dim, c.ffn}};
    for (const auto& sh : shapes) {
      const int64_t N = sh[0], K = sh[1];
      const size_t wbytes = size_t(N) * K * (int8 ? 1 : 2);
      kb::DeviceBuffer<uint8_t> w(4 * wbytes);
      kb::DeviceBuffer<gemv::bf16> sc{size_t(N)}, x{size_t(P) * K}, y{size_t(P) * N};
      kb::fill_int8(reinterpret_cast<int8_t*>(w.get()), 4 * wbytes, 3, s);
      kb::fill_bf16(sc.get(), size_t(N), 4, s);
      kb::fill_bf16(x.get(), size_t(P) * K, 5, s);
      std::printf("%5lldx%-6lld", (long long)N, (long long)K);
      for (const std::string v : variants) {
        gemv::Config cfg = gemv::default_config(int8, N, K);
        const int tokens = v == "1 token" ? 1 : P;
        if (v[0] == 'R') {  // the general kernel (several tokens: pipelined)
          gemv::General g = gemv::general_kernel(int8, N, K);
          g.pipeline = true;
          g.rows_per_warp = v[1] - '0';
          g.unroll = v[3] - '0';
          if (v.size() > 4) g.k_split = 1;
          cfg = gemv::Config(g);
        }
        const bool swiglu = v == "swiglu";
        if (swiglu && N != 2LL * c.ffn) {
          std::printf(" %13s", "-");
          continue;
        }
        auto once = [&](int i) {
          const uint8_t* wi = w.get() + (i % 4) * wbytes;
          if (swiglu)
            gemv::gemv_swiglu(int8, wi, int8 ? sc.get() : nullptr, x.get(), y.get(), tokens, N / 2,
                              K, 1e-5f, s);
          else {
            gemv::Operands op;
            op.int8 = int8;
            op.W = wi;
            op.scale = int8 ? sc.get() : nullptr;
            op.x = x.get();
            op.y = y.get();
            op.N = N;
            op.K = K;
            op.tokens = tokens;
            gemv::launch(op, cfg, s);
          }
        };
        for (int i = 0; i < 4; ++i) once(i);
        KB_CUDA_CHECK(cudaEventRecord(e0, s));
        for (int i = 0; i < a.reps; ++i) once(i);
        KB_CUDA_CHECK(cudaEventRecord(e1, s));
        KB_CUDA_CHECK(cudaEventSynchronize(e1));
        KB_CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
        const double us = ms * 1e3 / a.reps;
        std::printf(" %6.1f (%4.0f)", us, wbytes / (us * 1e-6) / 1e9);
      }
      std::printf("\n");
    }
    KB_CUDA_CHECK(cudaEventDestroy(e0));
    KB_CUDA_CHECK(cudaEventDestroy(e1));
    KB_CUDA_CHECK(cudaStreamDestroy(s));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kbench_decode_profile: %s\n", e.what());
    return 1;
  }
  return 0;
}
