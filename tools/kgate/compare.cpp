#include "tools/kgate/compare.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>

#include "core/gpu_name.h"
#include "core/metrics.h"
#include "reports/format.h"
#include "tools/kgate/history_rule.h"

namespace kb {

namespace {

using CompareKey = std::tuple<std::string, std::string, std::string, std::string, std::string>;

struct Side {
  std::vector<double> values, noise_rel, samples;
  bool lower_is_better = false;
  std::string problem = "absent";   // why there are no values: "failed", "no roofline_fraction"
  std::set<int> roofline_versions;  // of the values, when they are roofline fractions
};

struct SideValue {
  double value = 0, noise = 0;
  int runs = 0;
  std::string source;
};

std::set<std::string> archs_of(const History& h) {
  std::vector<bool> measured(h.keys().size(), false);
  for (const auto& o : h.observations())
    if (o.measured()) measured[o.key] = true;
  std::set<std::string> a;
  for (uint32_t k = 0; k < measured.size(); ++k)
    if (measured[k]) a.insert(h.keys()[k].arch);
  return a;
}

std::map<CompareKey, Side> collect(const History& h, bool cross_arch) {
  std::map<CompareKey, Side> out;
  // Each history key's side, looked up once a key (not once a row); keys that
  // differ only in device (or arch, across GPU models) share one side.
  std::vector<Side*> side_of(h.keys().size(), nullptr);
  for (const auto& o : h.observations()) {
    if (!side_of[o.key]) {
      const Key& k = h.keys()[o.key];
      // The two files may spell one GPU model differently (core/gpu_name.h).
      side_of[o.key] = &out[{k.name, k.metric, k.dtype, k.shape,
                             cross_arch ? std::string() : gpu_name_key(k.arch)}];
      side_of[o.key]->lower_is_better = k.lower_is_better;
    }
    Side& s = *side_of[o.key];
    if (!o.measured() || o.status == RowStatus::throttled) {
      if (s.problem == "absent") s.problem = status_name(o.status);
      continue;
    }
    double v = o.actual;
    if (cross_arch) {
      if (!o.roofline_fraction() || *o.roofline_fraction() <= 0) {
        s.problem = "no roofline_fraction";
        continue;
      }
      v = *o.roofline_fraction();
      s.roofline_versions.insert(roofline_version(h.runs()[o.run].suite_version, o.message));
    }
    s.values.push_back(v);
    if (o.noise_rel() && o.samples > 0) {
      s.noise_rel.push_back(*o.noise_rel());
      s.samples.push_back(static_cast<double>(o.samples));
    }
  }
  return out;
}

SideValue summarize(const Side& s, const CompareOptions& opt) {
  SideValue r;
  r.runs = static_cast<int>(s.values.size());
  r.value = median_of(s.values);
  double m = r.runs;
  if (r.runs >= 3 && r.value > 0) {
    r.noise = 1.2533 * noise_scale(s.values) / r.value / std::sqrt(m);
    r.source = "runs";
  } else if (s.noise_rel.size() == s.values.size() && !s.noise_rel.empty()) {
    r.noise = 1.2533 * median_of(s.noise_rel) / std::sqrt(median_of(s.samples)) / std::sqrt(m);
    r.source = "noise_rel";
  } else {
    r.noise = opt.default_noise / std::sqrt(m);
    r.source = "default";
  }
  return r;
}

}  // namespace

CompareReport compare_runs(const History& base, const History& next, const CompareOptions& opt) {
  CompareReport rep;
  rep.base_path = base.files().empty() ? "" : base.files().front();
  rep.next_path = next.files().empty() ? "" : next.files().front();
  rep.min_change = opt.min_change;
  auto ba = archs_of(base), na = archs_of(next);
  rep.base_archs.assign(ba.begin(), ba.end());
  rep.next_archs.assign(na.begin(), na.end());
  auto models = [](const std::set<std::string>& archs) {
    std::set<std::string> m;
    for (const auto& a : archs) m.insert(gpu_name_key(a));
    return m;
  };
  const auto base_models = models(ba), next_models = models(na);
  rep.cross_arch = base_models != next_models;
  // Keys are then matched without the arch: a side of two models would give
  // each key the median of two GPUs' fractions.
  const size_t nb = base_models.size(), nn = next_models.size();
  if (rep.cross_arch && (nb > 1 || nn > 1))
    throw std::invalid_argument(
        rep.base_path + " holds " + std::to_string(nb) +
        (nb == 1 ? " GPU model (" : " GPU models (") + join(rep.base_archs, ", ") + ") and " +
        rep.next_path + " " + std::to_string(nn) + " (" + join(rep.next_archs, ", ") +
        "): across GPU models each file must hold one; give the rows of one model a file");
  for (const History* h : {&base, &next}) {
    for (const auto& w : h->warnings()) rep.warnings.push_back(w.text());
    for (const auto& w : h->untrusted()) rep.warnings.push_back(w.text() + "; row skipped");
  }

  auto bs = collect(base, rep.cross_arch), ns = collect(next, rep.cross_arch);
  std::set<CompareKey> all;
  for (const auto& [k, v] : bs) all.insert(k);
  for (const auto& [k, v] : ns) all.insert(k);

  const Side absent;
  double log_sum = 0;
  for (const auto& k : all) {
    const auto side = [&](const std::map<CompareKey, Side>& m) -> const Side& {
      auto it = m.find(k);
      return it == m.end() ? absent : it->second;
    };
    const Side &b = side(bs), &n = side(ns);
    CompareRow row;
    std::tie(row.name, row.metric, row.dtype, row.shape, row.arch) = k;
    // A roofline fraction is higher-is-better for every metric.
    row.lower_is_better = !rep.cross_arch && (b.lower_is_better || n.lower_is_better);
    if (b.values.empty()) row.note = "BASE: " + b.problem;
    if (n.values.empty()) row.note += (row.note.empty() ? "NEW: " : ", NEW: ") + n.problem;
    // Fractions of two rooflines (suite 0.1's model, the 0.2 ladder) are
    // different quantities: not compared (docs/gate.md).
    const auto &vb = b.roofline_versions, &vn = n.roofline_versions;
    if (row.note.empty() && rep.cross_arch && (vb != vn || vb.size() > 1)) {
      auto names = [](const std::set<int>& v) {
        std::string s;
        for (int x : v) s += (s.empty() ? "v" : "+v") + std::to_string(x);
        return s;
      };
      row.note = "roofline versions differ (BASE " + names(vb) + ", NEW " + names(vn) +
                 "): fractions not compared";
    }
    if (!row.note.empty()) {
      if (!b.values.empty()) row.base = median_of(b.values);
      if (!n.values.empty()) row.next = median_of(n.values);
      rep.rows.push_back(std::move(row));
      continue;
    }
    SideValue sb = summarize(b, opt), sn = summarize(n, opt);
    row.base = sb.value;
    row.next = sn.value;
    row.base_runs = sb.runs;
    row.next_runs = sn.runs;
    row.change = (sn.value - sb.value) / sb.value;
    row.ratio = row.lower_is_better ? sb.value / sn.value : sn.value / sb.value;
    row.noise = std::sqrt(sb.noise * sb.noise + sn.noise * sn.noise);
    double better = row.ratio - 1;
    double needed = std::max(opt.min_change, opt.z * row.noise);
    if (better > needed)
      row.verdict = CompareVerdict::faster;
    else if (better < -needed)
      row.verdict = CompareVerdict::slower;
    else if (std::fabs(better) <= opt.min_change && opt.z * row.noise <= opt.min_change)
      row.verdict = CompareVerdict::same;
    else
      row.verdict = CompareVerdict::unsure;
    row.note = "noise from " + (sb.source == sn.source ? sb.source : sb.source + "/" + sn.source) +
               ", runs " + std::to_string(sb.runs) + "/" + std::to_string(sn.runs);
    log_sum += std::log(row.ratio);
    ++rep.compared;
    rep.rows.push_back(std::move(row));
  }
  if (rep.compared) rep.geomean = std::exp(log_sum / static_cast<double>(rep.compared));
  return rep;
}

}  // namespace kb
