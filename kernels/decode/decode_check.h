// Decoder checks the tests and the experiment's check() share: a small model
// step by step against the CPU fp32 reference, a large one for what is cheap.
#pragma once

#include <string>

#include "kernels/decode/decoder.h"

namespace kb::decode {

struct DecodeCheck {
  bool ok = false;
  std::string detail;
  double worst_logits_rel = 0;  // largest per-step ||gpu - cpu|| / ||cpu|| of the logits
  int token_mismatches = 0;     // steps where the greedy tokens differ (each must be a near tie)
  int near_ties = 0;            // steps whose CPU top two logits are within the tolerance
  int routings = 0;             // MoE: (layer, position) decisions checked
  int routing_ties_taken = 0;   // of those, GPU choices unlike the CPU's own (near ties)
};

struct ReferenceCheckOptions {
  // The decoder's: max_seq 64, seed 1, prompt {1, 2, 3} (taken modulo the
  // vocabulary); `capture`: replay the captured graph, else eager launches.
  DecoderOptions decoder = {64, 1, {1, 2, 3}};
  int steps = 12;            // decode steps in all (prompt included)
  bool prefill = false;      // the prompt as one prefill (then only its last logits are compared)
  double logits_tol = 3e-2;  // relative L2 of the logits per step
  // MoE: a GPU expert choice the CPU did not make passes if its CPU router
  // logit is within route_tie_tol × max(1, rms of the router logits) of the
  // CPU's k-th best (a near tie); the CPU then follows the GPU's choice.
  double route_tie_tol = 2e-2;
};

DecodeCheck check_against_reference(const ModelConfig& c, WeightType t,
                                    const ReferenceCheckOptions& o);

// `d` is used as is (its graph must be captured) and left reset.
// `steps` >= prompt length.
DecodeCheck check_full_model(Decoder& d, int steps, cudaStream_t s);

}  // namespace kb::decode
