// `kbench tune gemv`, its second stage: each decode projection's candidates
// put in the table in turn, the step captured as a graph with each, and the
// graphs timed by the engine interleaved: a screen, then the finalists.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/tuning.h"
#include "kernels/common/cuda_check.h"
#include "kernels/common/graph.h"
#include "kernels/decode/decoder.h"
#include "suite/gemv_tune_run.h"
#include "suite/stats.h"

namespace kb {

namespace {

namespace dec = decode;

constexpr int kSteps = 4;  // replays a sample
constexpr int kScreenRounds = 3;

// Each graph's seconds a step: `rounds` rounds from a reset decoder, the
// graphs in turn (the first one rotating).
std::vector<std::vector<double>> time_graphs(Engine& engine, dec::Decoder& d, cudaStream_t s,
                                             const std::vector<CudaGraph>& graphs, int rounds) {
  const size_t n = graphs.size();
  std::vector<std::vector<double>> t(n);
  for (int r = 0; r < rounds; ++r) {
    d.reset(s);
    KB_CUDA_CHECK(cudaStreamSynchronize(s));
    for (size_t j = 0; j < n; ++j) {
      const size_t i = (j + static_cast<size_t>(r)) % n;
      t[i].push_back(engine.time_cold([&](cudaStream_t st) {
        for (int k = 0; k < kSteps; ++k) graphs[i].launch(st);
      }) / kSteps);
    }
  }
  return t;
}

// One projection's finalists (the present choice first) and the kept one:
// the fastest unless the present choice is within kDecodeTuneMinGain.
struct Tuned {
  std::vector<CandidateTime> final;
  size_t keep = 0;
};

Tuned tune_projection(Engine& engine, dec::Decoder& d, cudaStream_t s, const DecodeProjection& p,
                      int reps) {
  const std::vector<gemv::TableEntry> saved = gemv::installed_table();
  std::vector<gemv::Kernel> cands = {decode_choice_in(saved, p).kernel,
                                     decode_choice_in({}, p).kernel};
  for (const auto& k : decode_candidates(p)) cands.push_back(k);
  std::vector<std::string> names;
  std::vector<gemv::Kernel> kept;
  std::vector<CudaGraph> graphs;
  for (const auto& k : cands) {
    const std::string name = gemv::kernel_name(k);
    if (std::find(names.begin(), names.end(), name) != names.end()) continue;
    std::vector<gemv::TableEntry> table = saved;
    table.insert(table.begin(), decode_entry(p, k));
    gemv::set_table(table);
    graphs.push_back(capture_graph([&](cudaStream_t c) { d.step(c); }));  // under that table
    names.push_back(name);
    kept.push_back(k);
  }
  gemv::set_table(saved);
  const auto screen_t = time_graphs(engine, d, s, graphs, kScreenRounds);
  std::vector<CandidateTime> screen;
  for (size_t i = 0; i < names.size(); ++i) screen.push_back({kept[i], median(screen_t[i]), 0});
  // The present choice, the generic one and the screen's fastest, timed again.
  const auto fin = finalists(screen[0].kernel, screen, kGemvFinalists);
  std::vector<CudaGraph> fin_graphs;
  for (const auto& k : fin) {
    const size_t i = std::find(names.begin(), names.end(), gemv::kernel_name(k)) - names.begin();
    fin_graphs.push_back(std::move(graphs[i]));
  }
  const auto t = time_graphs(engine, d, s, fin_graphs, reps);
  Tuned r;
  size_t best = 0;
  for (size_t i = 0; i < fin.size(); ++i) {
    r.final.push_back({fin[i], median(t[i]), summarize(t[i]).noise_rel});
    if (r.final[i].seconds < r.final[best].seconds) best = i;
  }
  if (r.final[0].seconds / r.final[best].seconds - 1 >= kDecodeTuneMinGain) r.keep = best;
  std::printf(
      "  decode %s %s %lldx%lld: %s %.1f us a step (present %s %.1f us; %zu candidates)\n",
      p.int8 ? "int8" : "bf16", p.what.c_str(), (long long)p.rows, (long long)p.cols,
      names[0] == gemv::kernel_name(fin[r.keep]) ? "kept" : gemv::kernel_name(fin[r.keep]).c_str(),
      r.final[r.keep].seconds * 1e6, names[0].c_str(), r.final[0].seconds * 1e6, names.size());
  std::fflush(stdout);
  return r;
}

}  // namespace

DecodeTuning tune_decode_step(Engine& engine, const DeviceInfo& dev, int reps) {
  DecodeTuning out;
  const std::pair<const char*, dec::WeightType> models[] = {
      {"Llama-2-7b-chat-hf", dec::WeightType::bf16},
      {"Llama-2-7b-chat-hf", dec::WeightType::int8},
      {"Mixtral-8x7B-v0.1", dec::WeightType::int8}};
  cudaStream_t s = nullptr;
  KB_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  for (const auto& [name, wt] : models) {
    dec::ModelConfig c = dec::find_config(name);
    if (c.moe()) c.n_layers = 16;  // the suite's shorter Mixtral: the same projections
    const bool int8 = wt == dec::WeightType::int8;
    dec::DecoderOptions o;
    o.max_seq = 1024;
    try {
      dec::Decoder d(c, wt, o);
      for (const auto& p : decode_projections(c, int8)) {
        const Tuned t = tune_projection(engine, d, s, p, reps);
        out.tuned.push_back(p);
        const gemv::Kernel& best = t.final[t.keep].kernel;
        if (gemv::kernel_name(best) == gemv::kernel_name(decode_choice_in({}, p).kernel)) continue;
        nlohmann::ordered_json m;
        m["model"] = c.name + (c.moe() ? " (16 layers)" : "");
        m["projection"] = p.what;
        m["step_us"] = std::round(t.final[t.keep].seconds * 1e7) / 10;
        m["present"] = gemv::kernel_name(t.final[0].kernel);
        m["present_step_us"] = std::round(t.final[0].seconds * 1e7) / 10;
        m["samples"] = reps;
        m["date"] = utc_now();
        m["driver"] = dev.driver;
        out.entries.push_back(gemv_entry_json(decode_entry(p, best), m));
      }
    } catch (const std::exception& e) {
      cudaGetLastError();
      std::fprintf(stderr, "kbench tune gemv: %s %s: decode step not tuned: %s\n", name,
                   dec::weight_type_name(wt), e.what());
    }
  }
  cudaStreamDestroy(s);
  return out;
}

}  // namespace kb
