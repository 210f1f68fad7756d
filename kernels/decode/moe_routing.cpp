#include "kernels/decode/moe_routing.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace kb::decode {

Route route_ref(const std::vector<float>& logits, int k) {
  const int E = static_cast<int>(logits.size());
  if (k < 1 || k > E) throw std::invalid_argument("route_ref: k must be in [1, experts]");
  std::vector<int> order(E);
  for (int e = 0; e < E; ++e) order[e] = e;
  // Larger logit first, the lower id on a tie.
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return logits[a] > logits[b]; });
  order.resize(k);
  return route_with(logits, order);
}

Route route_with(const std::vector<float>& logits, const std::vector<int>& ids) {
  Route r;
  r.ids = ids;
  if (ids.empty()) return r;
  double m = -INFINITY;
  for (int id : ids) m = std::max(m, double(logits.at(id)));
  double sum = 0;
  std::vector<double> p;
  for (int id : ids) {
    p.push_back(std::exp(double(logits.at(id)) - m));
    sum += p.back();
  }
  for (double v : p) r.weights.push_back(static_cast<float>(v / sum));
  return r;
}

std::string routing_mismatch(const std::vector<float>& cpu_logits, const std::vector<int>& ids,
                             int k, double tol) {
  const int E = static_cast<int>(cpu_logits.size());
  if (static_cast<int>(ids.size()) != k)
    return std::to_string(ids.size()) + " experts chosen, expected " + std::to_string(k);
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0 || ids[i] >= E)
      return "expert id " + std::to_string(ids[i]) + " outside [0, " + std::to_string(E) + ")";
    for (size_t j = 0; j < i; ++j)
      if (ids[j] == ids[i]) return "expert " + std::to_string(ids[i]) + " chosen twice";
  }
  const Route cpu = route_ref(cpu_logits, k);
  const double kth = cpu_logits[cpu.ids.back()];
  for (int id : ids) {
    if (std::find(cpu.ids.begin(), cpu.ids.end(), id) != cpu.ids.end()) continue;
    const double gap = kth - cpu_logits[id];
    if (gap > tol) {
      std::string cpu_text;
      for (int c : cpu.ids) cpu_text += (cpu_text.empty() ? "" : ",") + std::to_string(c);
      return "expert " + std::to_string(id) + " chosen, the CPU chose {" + cpu_text +
             "}; its logit is " + std::to_string(gap) + " below the CPU's k-th best (tolerance " +
             std::to_string(tol) + ")";
    }
  }
  return "";
}

std::string router_logits_mismatch(const std::vector<float>& gpu, const std::vector<float>& cpu,
                                   double tol) {
  if (gpu.size() != cpu.size() || cpu.empty())
    return std::to_string(gpu.size()) + " GPU logits against " + std::to_string(cpu.size());
  double err = 0, ref = 0, max_abs = 0;
  size_t worst = 0;
  for (size_t i = 0; i < cpu.size(); ++i) {
    if (!std::isfinite(gpu[i])) return "logit " + std::to_string(i) + " is not finite";
    const double d = double(gpu[i]) - cpu[i];
    err += d * d;
    ref += double(cpu[i]) * cpu[i];
    if (std::fabs(d) > max_abs) max_abs = std::fabs(d), worst = i;
  }
  const double scale = std::max(std::sqrt(ref), std::sqrt(double(cpu.size())));
  if (std::sqrt(err) <= tol * scale) return "";
  char buf[192];
  std::snprintf(buf, sizeof buf,
                "L2 error %.3g of a scale %.3g (the logits' norm, at least sqrt(E)): %.2f%%, "
                "tolerance %.2f%%; max abs error %.3g at [%zu]",
                std::sqrt(err), scale, 100 * std::sqrt(err) / scale, 100 * tol, max_abs, worst);
  return buf;
}

}  // namespace kb::decode
