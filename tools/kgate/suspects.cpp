#include "tools/kgate/suspects.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/csv_writer.h"

namespace kb {

std::string suspects_csv(const GateReport& rep, size_t* capped, double max_share) {
  std::vector<const GateKeyResult*> s;
  size_t gated = 0;
  for (const auto& k : rep.keys) {
    if (k.status == GateStatus::skipped || k.rule == "missing") continue;
    ++gated;
    if (k.suspect && k.run_has_id) s.push_back(&k);
  }
  std::stable_sort(s.begin(), s.end(), [](const GateKeyResult* a, const GateKeyResult* b) {
    return a->suspect_score > b->suspect_score;
  });
  size_t cap = std::max<size_t>(1, static_cast<size_t>(std::floor(max_share * gated + 1e-9)));
  if (capped) *capped = s.size() > cap ? s.size() - cap : 0;
  if (s.size() > cap) s.resize(cap);
  std::string out = "run_id,name,dtype,shape,variant,metric,arch,reason\n";
  for (const GateKeyResult* k : s) {
    std::string reason = k->status == GateStatus::fail ? "fails: " : "drop: ";
    reason += k->change ? show_change(*k->change) + " against the baseline" : k->rule;
    if (k->status == GateStatus::fail) reason += " (" + k->rule + ")";
    out += csv_line({k->run, k->name, k->dtype, k->shape, k->variant, k->metric, k->arch, reason}) +
           "\n";
  }
  return out;
}

}  // namespace kb
