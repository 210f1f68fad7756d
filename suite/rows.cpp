#include "suite/rows.h"

#include <cmath>
#include <map>
#include <tuple>

namespace kb {

Record make_record(const Experiment& e, const Point& p, Metric m, const RunInfo& info,
                   const DeviceInfo& dev) {
  Record r;
  r.name = e.name();
  r.metric = metric_csv_name(m);
  r.dtype = dtype_name(p.dtype);
  r.device = info.device_label;
  r.arch = dev.name;
  r.is_model = e.is_model();
  r.shape = p.shape.str();
  r.variant = p.variant;
  r.driver = dev.driver;
  r.cuda = dev.cuda;
  r.suite_version = info.suite_version;
  r.git_sha = info.git_sha;
  r.run_id = info.run_id;
  r.timestamp = info.timestamp;
  return r;
}

void apply_target(Record& r, Metric m, const TargetFile* targets) {
  const bool lower = lower_is_better(m);
  TargetEntry fallback;
  const TargetEntry* t = nullptr;
  if (targets) {
    t = targets->find(r.name, r.metric, r.dtype, r.shape, r.variant);
  } else if (m != Metric::compilation_time) {
    fallback.roofline_fraction = kFallbackRooflineFraction;
    t = &fallback;
  }
  if (!t) return;
  r.target = resolve_target(*t, r.roofline, lower);
  if (r.target && r.actual && r.status == status::ok &&
      below_target(*r.actual, *r.target, t->tolerance, lower))
    r.status = status::below_target;
}

std::vector<Record> status_rows(const Experiment& e, const Point& p, const std::string& st,
                                const std::string& message, const RunInfo& info,
                                const DeviceInfo& dev, const TargetFile* targets) {
  std::vector<Record> rows;
  for (Metric m : e.metric_list()) {
    Record r = make_record(e, p, m, info, dev);
    r.status = st;
    r.message = message;
    apply_target(r, m, targets);
    rows.push_back(r);
  }
  return rows;
}

std::vector<Record> seed_mean_rows(const Experiment& e, const std::vector<Point>& points,
                                   const std::vector<std::vector<Record>>& rows,
                                   const TargetFile* targets) {
  std::vector<Record> out;
  if (!e.has_seed_mean()) return out;
  struct Acc {
    const Record* first = nullptr;
    std::vector<double> actual, roof;
    size_t missing = 0;
  };
  std::map<std::tuple<DType, std::string, size_t>, Acc> means;
  for (size_t i = 0; i < points.size() && i < rows.size(); ++i) {
    if (!points[i].in_seed_mean) continue;
    for (size_t k = 0; k < rows[i].size(); ++k) {
      const Record& r = rows[i][k];
      Acc& a = means[{points[i].dtype, points[i].variant, k}];
      if (!a.first) a.first = &r;
      const bool measured = r.actual && (r.status == status::ok ||
                                         r.status == status::below_target ||
                                         r.status == status::throttled);
      if (measured) {
        a.actual.push_back(*r.actual);
        a.roof.push_back(r.roofline.value_or(NAN));
      } else {
        ++a.missing;
      }
    }
  }
  for (auto& [key, a] : means) {
    const Metric m = e.metric_list().at(std::get<2>(key));
    Record r = *a.first;
    r.shape = "mean";
    r.variant = std::get<1>(key);
    r.samples = 0;
    r.median_us = r.min_us = r.max_us = r.noise_rel = r.sm_clock_mhz = r.mem_clock_mhz = std::nullopt;
    r.target = r.roofline = r.roofline_fraction = r.actual = std::nullopt;
    r.message.clear();
    if (a.missing > 0) {
      r.status = status::failed;
      r.message = std::to_string(a.missing) + " of " +
                  std::to_string(a.missing + a.actual.size()) + " seed shapes have no value";
    } else {
      double sum = 0, roof = 0;
      bool have_roof = true;
      for (size_t i = 0; i < a.actual.size(); ++i) {
        sum += a.actual[i];
        if (std::isnan(a.roof[i])) have_roof = false;
        roof += a.roof[i];
      }
      r.actual = sum / static_cast<double>(a.actual.size());
      r.status = status::ok;
      if (have_roof) {
        r.roofline = roof / static_cast<double>(a.actual.size());
        r.roofline_fraction = roofline_fraction(m, *r.actual, *r.roofline);
      }
    }
    apply_target(r, m, targets);
    out.push_back(r);
  }
  return out;
}

}  // namespace kb
