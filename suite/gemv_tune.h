// `kbench tune gemv` (docs/targets.md): every candidate of every one-token
// GEMV shape the suite runs screened, the finalists timed as rows are, the
// winners the tuning file's `gemv` section. CUDA-free; the timing is
// suite/gemv_tune_run.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/decode/model_config.h"
#include "kernels/gemv/dispatch.h"

namespace kb {

struct GemvShape {
  bool int8 = false;
  int64_t N = 0, K = 0;
  int n_sel = 1;     // 2: a gather (the suite's top-2 of 8)
  std::string from;  // which experiment runs it
};

// The one-token GEMV shapes of the suite and the decoders, both dtypes.
std::vector<GemvShape> gemv_tuning_shapes();

// The candidates that serve this shape (refusal() empty), the generic
// rule's choice first (the declared search space: docs/decisions/0050).
std::vector<gemv::Kernel> gemv_candidates(const GemvShape& s);

// One candidate's time at a shape: the median of its samples (a screen),
// or the mean of worker processes' medians (timed as rows are).
struct CandidateTime {
  gemv::Kernel kernel;
  double seconds = 0;
  double noise_rel = 0;
};

// One shape's measurement.
struct GemvTuned {
  GemvShape shape;
  gemv::Kernel best;
  double best_us = 0;
  std::string runner_up;  // "" with one candidate
  double runner_up_us = 0;
  std::string generic;  // the generic rule's choice
  double generic_us = 0;
  double noise_rel = 0;
  int candidates = 0, samples = 0;
  std::vector<CandidateTime> screen;  // every candidate's screen time, the generic choice first
};

constexpr double kGemvTuneMinGain = 0.02;

// The kept choice among `times` (not empty; times[0]: the choice in place):
// the fastest unless times[0] is within kGemvTuneMinGain of it, the next
// fastest the runner-up; `generic`: the generic rule's (else times[0]).
GemvTuned pick_candidate(const GemvShape& s, const std::vector<CandidateTime>& times);

// What a screen hands on to be timed as rows: `keep` first (the table's
// present choice, else the generic rule's), the generic choice, then the
// `n` fastest others, fastest first; no name twice.
std::vector<gemv::Kernel> finalists(const gemv::Kernel& keep,
                                    const std::vector<CandidateTime>& screen, int n);

// The table the measurements make: per (dtype, one or gather, row bytes),
// each winner's bucket runs from the previous shape's rows + 1 to its own
// (the last without bound); neighbours with the same kernel merge.
std::vector<gemv::TableEntry> tune_buckets(const std::vector<GemvTuned>& tuned);

// A GEMV of the decode step (the table's `decode`, `swiglu` or `combine`
// entries), tuned in the step's graph (docs/decisions/0053).
struct DecodeProjection {
  std::string what;  // "qkv", "o", "down", "gate/up", "lm head", "experts down"
  bool int8 = false;
  gemv::Use use = gemv::Use::decode;
  int64_t rows = 0, cols = 0;  // the bucket's: the SwiGLU's 2F rows
  int n_sel = 1;               // the MoE's experts a token reads
};

// The step's projections of model c. A MoE's o projection is left out: it
// carries the router's blocks, decided when the decoder is built.
std::vector<DecodeProjection> decode_projections(const decode::ModelConfig& c, bool int8);

// The configurations the projection's launch serves, each name once: the
// general kernel's and, for rows they can take, the row-block kernel's
// (bf16) and the dp4a kernel's (int8; all stream weights before the
// dependency wait, docs/decisions/0064, 0065); not the tensor-core
// families, which stage x after it (0031).
std::vector<gemv::Kernel> decode_candidates(const DecodeProjection& p);

// The table entry that gives the projection kernel k (and no other shape).
gemv::TableEntry decode_entry(const DecodeProjection& p, const gemv::Kernel& k);

// The configuration the projection's launch takes from `table` (the
// installed one: the decoder's own; {}: the generic rule's).
gemv::Config decode_choice_in(const std::vector<gemv::TableEntry>& table,
                              const DecodeProjection& p);

// The kept choice in the step: the fastest unless the present one is
// within this of it (step time; the step's samples vary by about 0.1%).
constexpr double kDecodeTuneMinGain = 0.01;

}  // namespace kb
