// The MoE router on the host (Mixtral's, as gpt-fast computes it), and when
// a check accepts the GPU's choice: the same experts, or a near tie.
#pragma once

#include <string>
#include <vector>

namespace kb::decode {

struct Route {
  std::vector<int> ids;        // best first; on a tie the lower id (as the GPU's router)
  std::vector<float> weights;  // softmax over all logits, renormalized over `ids`
};

// The top `k` of `logits` (1 <= k <= logits.size()).
Route route_ref(const std::vector<float>& logits, int k);
// The weights of a given choice of ids (softmax over those logits).
Route route_with(const std::vector<float>& logits, const std::vector<int>& ids);
// "" when `ids` (the GPU's choice) is acceptable against the CPU's logits:
// k distinct ids in range, and each chosen id that the CPU did not choose
// has a CPU logit within `tol` of the CPU's k-th best (a near tie).
// Otherwise why not.
std::string routing_mismatch(const std::vector<float>& cpu_logits, const std::vector<int>& ids,
                             int k, double tol);

// "" when the GPU's router logits of one layer and position agree with the
// CPU's: all finite and ||gpu - cpu|| <= tol · max(||cpu||, sqrt(E)) (the
// floor: small logits nearly cancel). Otherwise why not.
std::string router_logits_mismatch(const std::vector<float>& gpu, const std::vector<float>& cpu,
                                   double tol);

}  // namespace kb::decode
