#include "suite/rows.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <stdexcept>
#include <tuple>

#include "suite/sampling.h"

namespace kb {

std::string join_variant(const std::string& a, const std::string& b) {
  if (a.empty()) return b;
  if (b.empty()) return a;
  return a + ";" + b;
}

namespace {
std::string join_message(const std::string& a, const std::string& b) {
  if (a.empty()) return b;
  if (b.empty()) return a;
  return a + "; " + b;
}
}  // namespace

void stamp_run(Record& r, const RunInfo& info, const GpuIdentity& gpu) {
  r.arch = gpu.name;
  r.driver = gpu.driver;
  r.cuda = gpu.cuda;
  r.suite_version = info.suite_version;
  r.git_sha = info.git_sha;
  r.run_id = info.run_id;
  r.timestamp = info.timestamp;
}

Record make_record(const RowSource& e, const Point& p, Metric m, const RunInfo& info,
                   const GpuIdentity& gpu) {
  Record r;
  r.name = e.name;
  r.metric = metric_csv_name(m);
  r.dtype = dtype_name(p.dtype);
  r.device = info.device_label;
  r.is_model = e.is_model;
  r.shape = p.shape.str();
  r.variant = p.variant;
  stamp_run(r, info, gpu);
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

std::vector<Record> status_rows(const RowSource& e, const Point& p, const std::string& st,
                                const std::string& message, const std::string& detail,
                                const RunInfo& info, const GpuIdentity& gpu,
                                const TargetFile* targets) {
  std::vector<Record> rows;
  for (Metric m : e.metrics) {
    Record r = make_record(e, p, m, info, gpu);
    r.variant = join_variant(r.variant, detail);
    r.status = st;
    r.message = message;
    apply_target(r, m, targets);
    rows.push_back(r);
  }
  return rows;
}

std::vector<Record> measured_rows(const RowSource& e, const Point& p, const std::string& detail,
                                  const Work& w, const Measurement& t, const Ceilings& ceilings,
                                  const RunInfo& info, const GpuIdentity& gpu,
                                  const TargetFile* targets) {
  const bool throttled = point_throttled(t.throttled, t.total);
  std::vector<Record> rows;
  for (Metric m : e.metrics) {
    Record r = make_record(e, p, m, info, gpu);
    r.variant = join_variant(r.variant, detail);
    r.samples = static_cast<int64_t>(t.summary.n);
    r.median_us = t.summary.median * 1e6;
    r.min_us = t.summary.min * 1e6;
    r.max_us = t.summary.max * 1e6;
    r.noise_rel = t.summary.noise_rel;
    r.sm_clock_mhz = t.sm_clock_mhz;
    r.mem_clock_mhz = t.mem_clock_mhz;
    r.actual = m == Metric::gemm_share ? t.companion_ratio
                                       : metric_value(m, w, t.value_s, t.setup_s, ceilings);
    r.status = status::ok;
    const bool has_roofline = m != Metric::compilation_time && m != Metric::gemm_share;
    if (has_roofline) {
      try {
        r.roofline = roofline_value(m, w, ceilings);
        const Roofline roof = roofline(w, ceilings);
        r.variant = join_variant(r.variant, std::string("bound=") + limiter_name(roof.limiter));
        // Which roofline: the rows of a target file without a ladder say so.
        if (roof.version == 1)
          r.message = std::string(kRooflineModelNote) + " (no measured.ladder in " +
                      (targets ? targets->path : std::string("a target file")) + ")";
      } catch (const std::invalid_argument& ex) {
        r.message = std::string("no roofline: ") + ex.what();
      }
    }
    if (r.actual && r.roofline) r.roofline_fraction = roofline_fraction(m, *r.actual, *r.roofline);
    if (r.roofline_fraction && *r.roofline_fraction > kRooflineNoise)
      r.message = join_message(
          r.message,
          "above the roofline by more than its noise (1.02): check the declared bytes/flops or "
          "the ceilings");
    if (!r.actual) {
      r.status = status::failed;
      r.message = m == Metric::gemm_share
                      ? "metric undefined: no companion was timed"
                      : "metric undefined for this GPU (no peak for the dtype in the datasheet)";
    }
    if (throttled && r.status == status::ok) {
      r.status = status::throttled;
      r.message = join_message(
          std::to_string(t.throttled) + " of " + std::to_string(t.total) + " samples under " +
              std::to_string(int(kThrottleClockFraction * 100)) + "% of the max SM clock",
          r.message);
    }
    // Last: the mark of a validation run, on the rows it slowed (the setup
    // time is not in the timed window).
    if (m != Metric::compilation_time) r.variant = join_variant(r.variant, t.inject);
    r.message = join_message(r.message, t.note);
    apply_target(r, m, targets);
    rows.push_back(r);
  }
  return rows;
}

std::vector<Record> seed_mean_rows(const RowSource& e, const std::vector<Point>& points,
                                   const std::vector<std::vector<Record>>& rows,
                                   const TargetFile* targets) {
  std::vector<Record> out;
  if (!e.seed_mean) return out;
  struct Acc {
    const Record* first = nullptr;
    std::vector<double> actual, roof;
    size_t missing = 0, throttled = 0;
  };
  std::map<std::tuple<DType, std::string, size_t>, Acc> means;
  for (size_t i = 0; i < points.size() && i < rows.size(); ++i) {
    if (!points[i].in_seed_mean) continue;
    for (size_t k = 0; k < rows[i].size(); ++k) {
      const Record& r = rows[i][k];
      Acc& a = means[{points[i].dtype, points[i].variant, k}];
      if (!a.first) a.first = &r;
      const bool measured =
          r.actual && (r.status == status::ok || r.status == status::below_target ||
                       r.status == status::throttled);
      if (measured) {
        a.actual.push_back(*r.actual);
        a.roof.push_back(r.roofline.value_or(NAN));
        if (r.status == status::throttled) ++a.throttled;
      } else {
        ++a.missing;
      }
    }
  }
  for (auto& [key, a] : means) {
    const Metric m = e.metrics.at(std::get<2>(key));
    Record r = *a.first;
    r.shape = "mean";
    // The point's own variant, and the mark of an injected slowdown if any.
    const auto inject = a.first->variant.find("inject=");
    r.variant =
        join_variant(std::get<1>(key),
                     inject == std::string::npos ? std::string() : a.first->variant.substr(inject));
    r.samples = 0;
    r.median_us = r.min_us = r.max_us = r.noise_rel = r.sm_clock_mhz = r.mem_clock_mhz =
        std::nullopt;
    r.target = r.roofline = r.roofline_fraction = r.actual = std::nullopt;
    r.message.clear();
    const std::string of_n = " of " + std::to_string(a.missing + a.actual.size()) + " seed shapes";
    if (a.missing > 0) {
      r.status = status::failed;
      r.message = std::to_string(a.missing) + of_n + " have no value";
    } else {
      double sum = 0, roof = 0;
      bool have_roof = true;
      for (size_t i = 0; i < a.actual.size(); ++i) {
        sum += a.actual[i];
        if (std::isnan(a.roof[i])) have_roof = false;
        roof += a.roof[i];
      }
      r.actual = sum / static_cast<double>(a.actual.size());
      if (have_roof) {
        r.roofline = roof / static_cast<double>(a.actual.size());
        r.roofline_fraction = roofline_fraction(m, *r.actual, *r.roofline);
      }
      // A mean over throttled points says more about the machine than the
      // code: it is throttled too, so the gate keeps it out of baselines.
      r.status = a.throttled > 0 ? status::throttled : status::ok;
      if (a.throttled > 0) r.message = std::to_string(a.throttled) + of_n + " were throttled";
      // The version of the rooflines averaged (kgate reads it from here).
      const auto model = a.first->message.find(kRooflineModelNote);
      if (have_roof && model != std::string::npos)
        r.message = join_message(r.message, kRooflineModelNote);
    }
    apply_target(r, m, targets);
    out.push_back(r);
  }
  return out;
}

}  // namespace kb

namespace kb {

bool point_measured(const std::vector<Record>& rows) {
  if (rows.empty()) return false;
  for (const Record& r : rows)
    if (r.status == status::failed || r.status == status::incorrect ||
        r.status == status::skipped || !r.median_us)
      return false;
  return true;
}

std::vector<Record> median_process_rows(const std::vector<std::vector<Record>>& passes) {
  std::vector<const std::vector<Record>*> have;
  for (const auto& p : passes)
    if (!p.empty()) have.push_back(&p);
  if (have.empty()) return {};
  for (const auto* p : have)
    if (!point_measured(*p)) return *p;
  if (have.size() == 1) return *have.front();
  std::vector<size_t> order(have.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  auto time = [&](size_t k) { return *have[k]->front().median_us; };
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return time(a) < time(b); });
  const size_t mid = order[(order.size() - 1) / 2];
  std::vector<Record> out = *have[mid];
  const double lo = time(order.front()), hi = time(order.back()), med = time(mid);
  if (med > 0 && (hi - lo) / med > 0.01) {
    std::string times;
    for (size_t k = 0; k < have.size(); ++k) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%s%.2f", k ? ", " : "", time(k));
      times += buf;
    }
    char spread[64];
    std::snprintf(spread, sizeof spread, " us, spread %.1f%%: the median process's row",
                  100 * (hi - lo) / med);
    const std::string note =
        std::to_string(have.size()) + " worker processes' medians " + times + spread;
    for (Record& r : out) r.message = join_message(r.message, note);
  }
  return out;
}

}  // namespace kb
