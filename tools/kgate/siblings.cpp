#include "tools/kgate/siblings.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "reports/metrics.h"
#include "tools/kgate/percent.h"

namespace kb {

namespace {

double median_of_copy(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// A ceiling a slow board shows: the probe's bandwidths and throughputs.
// Its times (launch, graph node, memory latency) are the host's as much as
// the board's, and a few percent noisy: counted as rows.
bool is_ceiling(const Key& k) { return k.name == "roofline_probe" && !k.lower_is_better; }

std::string num(double v) {
  char b[32];
  std::snprintf(b, sizeof b, v >= 100 ? "%.0f" : "%.3g", v);
  return b;
}

}  // namespace

std::vector<SiblingReport> sibling_check(const History& h, const SiblingOptions& opt) {
  const auto& keys = h.keys();
  const auto& obs = h.observations();
  std::map<std::string, uint32_t> newest;  // arch -> newest run
  for (const auto& o : obs) {
    auto [it, fresh] = newest.try_emplace(keys[o.key].arch, o.run);
    if (!fresh && o.run > it->second) it->second = o.run;
  }
  std::vector<SiblingReport> out;
  for (const auto& [arch, run] : newest) {
    // Per key of the gate (devices merged): each GPU's value in the run's
    // own measurement (attempt 1; re-measurements are of one GPU).
    struct Cell {
      const Key* key;
      std::map<uint32_t, double> by_gpu;
    };
    std::map<std::string, Cell> cells;
    std::map<uint32_t, size_t> gpus;  // gpu -> rows with siblings
    for (uint32_t k = 0; k < keys.size(); ++k) {
      const Key& key = keys[k];
      if (key.arch != arch) continue;
      for (uint32_t i : h.series(k)) {
        const Observation& o = obs[i];
        if (o.run != run || o.attempt != 1 || !o.measured()) continue;
        const std::string id = key.name + " [" + key.shape + "] " + key.dtype + " " + key.metric;
        Cell& c = cells.try_emplace(id, Cell{&key, {}}).first->second;
        c.by_gpu.emplace(o.gpu, o.actual);
      }
    }
    // The GPUs that have siblings on some row (a collective's rows, of the
    // host's GPUs together, have none).
    for (const auto& [id, c] : cells)
      if (c.by_gpu.size() >= 2)
        for (const auto& [g, v] : c.by_gpu) ++gpus[g];
    if (gpus.size() < 2) continue;
    SiblingReport rep;
    rep.arch = arch;
    rep.run = h.runs()[run].label;
    rep.siblings = gpus.size();
    std::map<uint32_t, SiblingGpu> per;
    std::map<uint32_t, std::vector<double>> standing;
    for (const auto& [g, n] : gpus) per[g].gpu = h.gpus()[g].label();
    for (const auto& [id, c] : cells) {
      if (c.by_gpu.size() < 2) continue;
      for (const auto& [g, v] : c.by_gpu) {
        std::vector<double> others;
        for (const auto& [g2, v2] : c.by_gpu)
          if (g2 != g) others.push_back(v2);
        const double med = median_of_copy(others);
        if (!(med > 0)) continue;
        const double behind = c.key->lower_is_better ? v / med - 1 : 1 - v / med;
        SiblingGpu& s = per[g];
        ++s.compared;
        standing[g].push_back(behind);
        if (behind < opt.threshold) continue;
        const bool ceiling = is_ceiling(*c.key);
        s.behind.push_back({id, v, med, behind, ceiling});
        if (!ceiling) ++s.rows_behind;
      }
    }
    for (auto& [g, s] : per) {
      std::sort(s.behind.begin(), s.behind.end(),
                [](const SiblingRow& a, const SiblingRow& b) { return a.behind > b.behind; });
      if (!standing[g].empty()) s.median_behind = median_of_copy(standing[g]);
      size_t ceilings = 0;
      std::string which;
      for (const auto& b : s.behind)
        if (b.ceiling) {
          ++ceilings;
          which += (which.empty() ? "" : ", ") + b.key + " " + num(b.value) + " vs " +
                   num(b.siblings_median) + " (" + percent(b.behind) + ")";
        }
      s.named = ceilings > 0 || s.rows_behind >= opt.min_rows;
      if (s.named) {
        s.why = "behind its " + std::to_string(rep.siblings - 1) + " sibling(s) in run " + rep.run +
                " by " + percent(opt.threshold) + " or more on";
        if (ceilings) s.why += " " + std::to_string(ceilings) + " ceiling(s) (" + which + ")";
        if (ceilings && s.rows_behind) s.why += " and";
        if (s.rows_behind) {
          s.why += " " + std::to_string(s.rows_behind) + " of " + std::to_string(s.compared) +
                   " rows (worst: ";
          size_t shown = 0;
          for (const auto& b : s.behind)
            if (!b.ceiling && shown++ < 3)
              s.why += (shown > 1 ? ", " : "") + b.key + " " + percent(b.behind);
          s.why += ")";
        }
        s.why +=
            ": check this GPU (nvidia-smi -q: clocks, power, retired pages; dcgmi diag), "
            "not the code";
      }
      rep.gpus.push_back(std::move(s));
    }
    out.push_back(std::move(rep));
  }
  return out;
}

std::string sibling_text(const std::vector<SiblingReport>& reps, bool markdown) {
  std::string s;
  if (reps.empty()) return "no run with two or more GPUs of one model: nothing to compare\n";
  for (const auto& r : reps) {
    s += (markdown ? "### " : "") + r.arch + ", run " + r.run + ": " + std::to_string(r.siblings) +
         " GPUs\n\n";
    if (markdown)
      s += "| GPU | rows compared | rows >= threshold behind | median standing | verdict "
           "|\n|---|---|---|---|---|\n";
    for (const auto& g : r.gpus) {
      char line[512];
      std::snprintf(
          line, sizeof line,
          markdown ? "| %s | %zu | %zu | %s | %s |\n"
                   : "  %-44s %5zu rows, %3zu behind, median %7s  %s\n",
          g.gpu.c_str(), g.compared, g.rows_behind,
          (g.median_behind > 0 ? "-" + percent(g.median_behind) : "+" + percent(-g.median_behind))
              .c_str(),
          g.named ? "NAMED" : "ok");
      s += line;
    }
    s += "\n";
    for (const auto& g : r.gpus)
      if (g.named) s += (markdown ? "- **" + g.gpu + "**: " : "  " + g.gpu + ": ") + g.why + "\n";
  }
  return s;
}

}  // namespace kb
