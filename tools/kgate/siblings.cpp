#include "tools/kgate/siblings.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "core/metrics.h"
#include "reports/format.h"
#include "tools/kgate/history_rule.h"

namespace kb {

SiblingRole sibling_role(const Key& k) {
  // Setup time on the host's contended CPU; the probe's times are the
  // host's and the driver's as much as the board's.
  if (k.metric == metric_name::compilation_time) return SiblingRole::not_the_board;
  if (k.name == "roofline_probe")
    return k.lower_is_better ? SiblingRole::not_the_board : SiblingRole::ceiling;
  return SiblingRole::point_metric;
}

namespace {

std::string num(double v) { return format_double(v >= 100 ? "%.0f" : "%.3g", v); }

constexpr auto worse_first = [](const auto& a, const auto& b) { return a.behind > b.behind; };

// One key of the gate (devices merged) in one run: each GPU's attempt-1 value.
struct Cell {
  const Key* key;
  std::string point;  // name [shape] dtype: the rows of one timing
  SiblingRole role;
  std::map<uint32_t, double> by_gpu;
};

// Per GPU, per point: the standing of each of its rows, and its rows behind.
struct PointStanding {
  std::vector<double> standing;
  std::vector<SiblingRow> behind;
};
using Standings = std::map<uint32_t, std::map<std::string, PointStanding>>;

std::map<std::string, Cell> cells_of_run(const History& h, const std::string& arch, uint32_t run) {
  const auto& keys = h.keys();
  std::map<std::string, Cell> cells;
  for (uint32_t k = 0; k < keys.size(); ++k) {
    const Key& key = keys[k];
    if (key.arch != arch) continue;
    for (uint32_t i : h.series(k)) {
      const Observation& o = h.observations()[i];
      if (o.run != run || o.attempt != 1 || !o.measured()) continue;
      const std::string point = key.name + " [" + key.shape + "] " + key.dtype;
      Cell& c =
          cells.try_emplace(point + " " + key.metric, Cell{&key, point, sibling_role(key), {}})
              .first->second;
      c.by_gpu.emplace(o.gpu, o.actual);
    }
  }
  return cells;
}

// Each GPU's row of each cell against the median of its siblings' rows.
void compare_cells(const std::map<std::string, Cell>& cells, const SiblingOptions& opt,
                   SiblingReport& rep, std::map<uint32_t, SiblingGpu>& per, Standings& points) {
  for (const auto& [id, c] : cells) {
    if (c.by_gpu.size() < 2) continue;
    if (c.role == SiblingRole::not_the_board) {
      rep.rows_not_compared += c.by_gpu.size();
      continue;
    }
    for (const auto& [g, v] : c.by_gpu) {
      std::vector<double> others;
      for (const auto& [g2, v2] : c.by_gpu)
        if (g2 != g) others.push_back(v2);
      const double med = median_of(others);
      if (!(med > 0)) continue;
      const double behind = c.key->lower_is_better ? v / med - 1 : 1 - v / med;
      const SiblingRow row{id, v, med, behind};
      SiblingGpu& s = per[g];
      if (c.role == SiblingRole::ceiling) {
        ++s.ceilings_compared;
        if (behind >= opt.threshold) s.ceilings_behind.push_back(row);
        continue;
      }
      PointStanding& p = points[g][c.point];
      p.standing.push_back(behind);
      if (behind >= opt.threshold) p.behind.push_back(row);
    }
  }
}

// Why a GPU is named: its ceilings and worst points behind.
std::string why_named(const SiblingGpu& s, const SiblingReport& rep, const SiblingOptions& opt) {
  const size_t ceilings = s.ceilings_behind.size(), behind = s.points_behind.size();
  std::string why = "behind its " + std::to_string(rep.siblings - 1) + " sibling(s) in run " +
                    rep.run + " by " + percent(opt.threshold) + " or more on";
  if (ceilings) {
    std::string which;
    for (const auto& b : s.ceilings_behind)
      which += (which.empty() ? "" : ", ") + b.key + " " + num(b.value) + " vs " +
               num(b.siblings_median) + " (" + percent(b.behind) + ")";
    why += " " + std::to_string(ceilings) + " ceiling(s) (" + which + ")";
  }
  if (ceilings && behind) why += " and";
  if (behind) {
    why += " " + std::to_string(behind) + " of " + std::to_string(s.points_compared) +
           " measured points (worst: ";
    for (size_t i = 0; i < behind && i < 3; ++i) {
      const SiblingPoint& p = s.points_behind[i];
      why += (i ? ", " : "") + p.point + " " + percent(p.behind) + " (";
      for (size_t j = 0; j < p.rows.size(); ++j)
        why += (j ? ", " : "") + p.rows[j].key.substr(p.point.size() + 1);
      why += ")";
    }
    why += ")";
  }
  return why +
         ": check this GPU (nvidia-smi -q: clocks, power, retired pages; dcgmi diag), "
         "not the code";
}

// A GPU's standing over its points, its points behind, and whether it is named.
void conclude(SiblingGpu& s, std::map<std::string, PointStanding>& points, const SiblingReport& rep,
              const SiblingOptions& opt) {
  std::vector<double> standing;
  for (auto& [point, p] : points) {
    ++s.points_compared;
    standing.push_back(median_of(p.standing));
    if (p.behind.empty()) continue;
    std::stable_sort(p.behind.begin(), p.behind.end(), worse_first);
    const double worst = p.behind.front().behind;
    s.points_behind.push_back({point, worst, std::move(p.behind)});
  }
  std::stable_sort(s.points_behind.begin(), s.points_behind.end(), worse_first);
  std::stable_sort(s.ceilings_behind.begin(), s.ceilings_behind.end(), worse_first);
  if (!standing.empty()) s.median_behind = median_of(standing);
  s.named = !s.ceilings_behind.empty() || s.points_behind.size() >= opt.min_points;
  if (s.named) s.why = why_named(s, rep, opt);
}

}  // namespace

std::vector<SiblingReport> sibling_check(const History& h, const SiblingOptions& opt) {
  std::vector<SiblingReport> out;
  for (const auto& [arch, runs] : h.arch_runs()) {
    const uint32_t run = runs.newest;
    const std::map<std::string, Cell> cells = cells_of_run(h, arch, run);
    // The GPUs that have siblings on some row.
    std::map<uint32_t, SiblingGpu> per;
    for (const auto& [id, c] : cells)
      if (c.by_gpu.size() >= 2)
        for (const auto& [g, v] : c.by_gpu) per[g].gpu = h.gpus()[g].label();
    if (per.size() < 2) continue;
    SiblingReport rep;
    rep.arch = arch;
    rep.run = h.runs()[run].label;
    rep.siblings = per.size();
    Standings points;
    compare_cells(cells, opt, rep, per, points);
    for (auto& [g, s] : per) {
      conclude(s, points[g], rep, opt);
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
    const auto text = [&](const std::string& t) { return markdown ? markdown_text(t) : t; };
    s += (markdown ? "### " : "") + text(r.arch) + ", run " + text(r.run) + ": " +
         std::to_string(r.siblings) + " GPUs\n\n";
    if (markdown)
      s += "| GPU | points compared | points >= threshold behind | ceilings behind | median "
           "standing | verdict |\n|---|---|---|---|---|---|\n";
    for (const auto& g : r.gpus) {
      // Behind is "-", ahead "+"; under 0.05% either way it is even.
      const std::string standing = g.median_behind >= 0.0005    ? "-" + percent(g.median_behind)
                                   : g.median_behind <= -0.0005 ? "+" + percent(-g.median_behind)
                                                                : percent(0);
      const std::string ceilings =
          std::to_string(g.ceilings_behind.size()) + "/" + std::to_string(g.ceilings_compared);
      char line[512];
      std::snprintf(line, sizeof line,
                    markdown ? "| %s | %zu | %zu | %s | %s | %s |\n"
                             : "  %-44s %5zu points, %3zu behind, ceilings %5s behind, median "
                               "%7s  %s\n",
                    text(g.gpu).c_str(), g.points_compared, g.points_behind.size(),
                    ceilings.c_str(), standing.c_str(), g.named ? "NAMED" : "ok");
      s += line;
    }
    // What the columns count and leave out.
    std::vector<std::string> legend = {
        "points: the rows of one name, shape and dtype (one timing, whatever its metrics), "
        "behind when any of its rows is",
        "ceilings: the roofline_probe's bandwidths and throughputs; one behind names the GPU"};
    if (r.rows_not_compared)
      legend.push_back("not compared: " + std::to_string(r.rows_not_compared) + " rows of " +
                       metric_name::compilation_time +
                       " (host setup time) and of the probe's times (launch, graph node, memory "
                       "latency): the host's and the driver's as much as the board's");
    if (markdown) s += "\n";
    for (size_t i = 0; i < legend.size(); ++i)
      s += markdown ? legend[i] + (i + 1 < legend.size() ? ";\n" : ".\n") : "  " + legend[i] + "\n";
    s += "\n";
    for (const auto& g : r.gpus)
      if (g.named)
        s += (markdown ? "- **" : "  ") + text(g.gpu) + (markdown ? "**: " : ": ") + text(g.why) +
             "\n";
  }
  return s;
}

}  // namespace kb
