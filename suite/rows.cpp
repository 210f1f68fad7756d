#include "suite/rows.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <stdexcept>
#include <tuple>

#include "reports/gate_result.h"
#include "suite/sampling.h"

namespace kb {

namespace {
std::string join(const std::string& a, const std::string& b, const char* sep) {
  return a.empty() ? b : b.empty() ? a : a + sep + b;
}
std::string join_message(const std::string& a, const std::string& b) { return join(a, b, "; "); }
}  // namespace

std::string join_variant(const std::string& a, const std::string& b) { return join(a, b, ";"); }

void stamp_run(Record& r, const RunInfo& info, const GpuIdentity& gpu) {
  r.arch = gpu.name;
  r.driver = gpu.driver;
  r.cuda = gpu.cuda;
  r.suite_version = info.suite_version;
  r.git_sha = info.git_sha;
  r.run_id = info.run_id;
  r.timestamp = info.timestamp;
}

Record make_record(const RowSource& e, const Point& p, const Metric& m, const RunInfo& info,
                   const GpuIdentity& gpu, const std::string& detail) {
  Record r;
  r.name = e.name;
  r.metric = m.name;
  r.dtype = dtype_name(p.dtype);
  r.device = info.device_label;
  r.is_model = e.is_model;
  r.shape = p.shape.str();
  r.variant = join_variant(p.variant, detail);
  stamp_run(r, info, gpu);
  return r;
}

void apply_target(Record& r, const TargetFile* targets, double probe_launch_us) {
  const bool lower = lower_is_better(r.metric);
  TargetEntry fallback;
  fallback.roofline_fraction = kFallbackRooflineFraction;
  const TargetEntry* t =
      targets ? targets->find(r.name, r.metric, r.dtype, r.shape, r.variant) : &fallback;
  if (!t) return;
  r.target = resolve_target(*t, r.roofline, lower);
  if (!r.target || !r.actual || r.status != status::ok ||
      !below_target(*r.actual, *r.target, t->tolerance, lower))
    return;
  const double file_launch = targets ? targets->measured.launch_us : 0;
  const auto on_host = file_launch > 0
                           ? target_on_host(*r.target, *r.actual, r.median_us.value_or(0),
                                            probe_launch_us - file_launch, lower)
                           : std::nullopt;
  if (on_host && !below_target(*r.actual, *on_host, t->tolerance, lower)) {
    r.message =
        join_message(r.message, "below target " + show_value(*r.target) + ", but " +
                                    host_target_met(probe_launch_us, file_launch, *on_host));
    return;
  }
  r.status = status::below_target;
}

std::vector<Record> status_rows(const RowSource& e, const Point& p, const std::string& st,
                                const std::string& message, const std::string& detail,
                                const RunInfo& info, const GpuIdentity& gpu,
                                const TargetFile* targets) {
  std::vector<Record> rows;
  for (const Metric& m : e.metrics) {
    Record r = make_record(e, p, m, info, gpu, detail);
    r.status = st;
    r.message = message;
    apply_target(r, targets);
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
  for (const Metric& m : e.metrics) {
    Record r = make_record(e, p, m, info, gpu, detail);
    r.samples = static_cast<int64_t>(t.summary.n);
    r.median_us = t.summary.median * 1e6;
    r.min_us = t.summary.min * 1e6;
    r.max_us = t.summary.max * 1e6;
    r.noise_rel = t.summary.noise_rel;
    r.sm_clock_mhz = t.sm_clock_mhz;
    r.mem_clock_mhz = t.mem_clock_mhz;
    r.actual = metric_value(m, {w, t.value_s, ceilings, t.setup_s, t.companion_ratio});
    r.status = status::ok;
    if (m.has_roofline) {
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
    if (r.actual && r.roofline)
      r.roofline_fraction = roofline_fraction(r.metric, *r.actual, *r.roofline);
    if (r.roofline_fraction && *r.roofline_fraction > kRooflineNoise)
      r.message = join_message(
          r.message,
          "above the roofline by more than its noise (1.02): check the declared bytes/flops or "
          "the ceilings");
    if (!r.actual) {
      r.status = status::failed;
      r.message = m.undefined;
    }
    if (throttled && r.status == status::ok) {
      r.status = status::throttled;
      r.message = join_message(
          std::to_string(t.throttled) + " of " + std::to_string(t.total) + " samples under " +
              std::to_string(int(kThrottleClockFraction * 100)) + "% of the max SM clock",
          r.message);
    }
    // Last: the mark of a validation run, on the rows it slowed.
    if (m.timed) r.variant = join_variant(r.variant, t.inject);
    r.message = join_message(r.message, t.note);
    apply_target(r, targets, ceilings.probe_launch_us);
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
    size_t missing = 0, throttled = 0, below = 0, on_host = 0;
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
        if (r.status == status::below_target) ++a.below;
        if (r.message.find(kHostLaunchesSlower) != std::string::npos) ++a.on_host;
      } else {
        ++a.missing;
      }
    }
  }
  for (auto& [key, a] : means) {
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
        r.roofline_fraction = roofline_fraction(r.metric, *r.actual, *r.roofline);
      }
      // Throttled too, so that the gate keeps it out of baselines.
      r.status = a.throttled > 0 ? status::throttled : status::ok;
      if (a.throttled > 0) r.message = std::to_string(a.throttled) + of_n + " were throttled";
      // The version of the rooflines averaged (kgate reads it from here).
      const auto model = a.first->message.find(kRooflineModelNote);
      if (have_roof && model != std::string::npos)
        r.message = join_message(r.message, kRooflineModelNote);
    }
    apply_target(r, targets);
    // A mean that misses its target only through shapes on their host's
    // targets follows them, as kgate's rule 2 does.
    if (r.status == status::below_target && a.below == 0 && a.on_host > 0) {
      r.status = status::ok;
      r.message = join_message(
          r.message, "below target " + show_value(*r.target) + ", but each of its " +
                         std::to_string(a.actual.size()) + " shapes in this run met its target (" +
                         std::to_string(a.on_host) + " of them on this host's): so does the mean");
    }
    out.push_back(r);
  }
  return out;
}

bool point_measured(const std::vector<Record>& rows) {
  if (rows.empty()) return false;
  for (const Record& r : rows)
    if (!r.median_us || r.status == status::incorrect || r.status == status::skipped) return false;
  return true;
}

Measurement combine_process_measurements(const std::vector<Measurement>& all, bool list_always) {
  if (all.empty()) throw std::invalid_argument("no worker process measured the point");
  // A mostly throttled process stays out where another was not.
  std::vector<Measurement> each;
  std::string left_out;
  for (size_t k = 0; k < all.size(); ++k) {
    if (!point_throttled(all[k].throttled, all[k].total)) {
      each.push_back(all[k]);
      continue;
    }
    left_out += (left_out.empty() ? "" : ", ") + std::to_string(k + 1) + " (" +
                std::to_string(all[k].throttled) + " of " + std::to_string(all[k].total) + ")";
  }
  if (each.empty()) {
    each = all;  // all throttled: the row is, with all of them
    left_out.clear();
  }
  const double n = static_cast<double>(each.size());
  Measurement t = each.front();
  t.note = all.front().note;
  t.setup_s = all.front().setup_s;
  if (!left_out.empty())
    t.note = join_message(t.note, "left out of the mean: worker process " + left_out +
                                      " samples under the throttle clock");
  if (each.size() == 1) return t;
  t.value_s = t.summary.median = t.summary.mean = 0;
  t.summary.noise_rel = t.summary.median_rel_err = t.summary.mad = 0;
  t.summary.n = t.throttled = t.total = t.buffer_sets = 0;
  double clock = 0, ratio = 0, err2 = 0;
  size_t clocks = 0, ratios = 0;
  std::vector<double> times_s;
  for (const Measurement& m : each) {
    t.value_s += m.value_s / n;
    t.summary.mean += m.summary.mean / n;
    t.summary.noise_rel += m.summary.noise_rel / n;
    t.summary.mad += m.summary.mad / n;
    err2 += m.summary.median_rel_err * m.summary.median_rel_err;
    t.summary.min = std::min(t.summary.min, m.summary.min);
    t.summary.max = std::max(t.summary.max, m.summary.max);
    t.summary.n += m.summary.n;
    t.throttled += m.throttled;
    t.total += m.total;
    t.buffer_sets += m.buffer_sets;
    if (m.sm_clock_mhz) clock += *m.sm_clock_mhz, ++clocks;
    if (m.companion_ratio) ratio += *m.companion_ratio, ++ratios;
    times_s.push_back(m.value_s);
  }
  t.summary.median = t.value_s;
  t.summary.median_rel_err = std::sqrt(err2) / n;
  t.sm_clock_mhz = clocks ? std::optional<double>(clock / clocks) : std::nullopt;
  t.companion_ratio = ratios ? std::optional<double>(ratio / ratios) : std::nullopt;
  const double spread = relative_spread(times_s);
  if (t.value_s > 0 && (list_always || spread > 0.01)) {
    std::string times;
    for (size_t k = 0; k < each.size(); ++k) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%s%.2f", k ? ", " : "", each[k].value_s * 1e6);
      times += buf;
    }
    char spread_text[32];
    std::snprintf(spread_text, sizeof spread_text, " us (spread %.1f%%)", 100 * spread);
    t.note = join_message(t.note, "the mean of " + std::to_string(each.size()) +
                                      " worker processes' medians " + times + spread_text);
  }
  return t;
}

std::vector<Record> point_rows_of_processes(
    const MeasuredPoint& first, const std::vector<ProcessResult>& further,
    const std::function<std::vector<Record>(const Measurement&)>& rows_of,
    const std::function<std::vector<Record>(const std::string& why)>& failed_rows,
    bool list_always) {
  std::vector<Measurement> ms = {first.m};
  const std::string of = " of " + std::to_string(further.size() + 1) + " of this point: ";
  for (size_t k = 0; k < further.size(); ++k) {
    const ProcessResult& p = further[k];
    const std::string in = "in worker process " + std::to_string(k + 2) + of;
    if (!point_measured(p.rows)) {
      if (p.rows.empty()) return failed_rows(in + "no rows");
      std::vector<Record> rows = p.rows;  // its failure is the point's
      for (Record& r : rows) r.message = in + r.message;
      return rows;
    }
    if (!p.measured) return failed_rows(in + "rows without their measurement");
    if (p.measured->detail != first.detail)
      return failed_rows("the worker processes of this point ran different kernels ('" +
                         first.detail + "', '" + p.measured->detail + "')");
    ms.push_back(p.measured->m);
  }
  return rows_of(combine_process_measurements(ms, list_always));
}

int processes_for(double first_median_s, int processes, int short_processes) {
  const bool short_point = first_median_s > 0 && first_median_s < kShortPointUs * 1e-6;
  return short_point ? std::max(processes, short_processes) : processes;
}

double relative_spread(const std::vector<double>& times_s) {
  if (times_s.size() < 2) return 0;
  const auto [lo, hi] = std::minmax_element(times_s.begin(), times_s.end());
  double sum = 0;
  for (double t : times_s) sum += t;
  const double mean = sum / static_cast<double>(times_s.size());
  return mean > 0 ? (*hi - *lo) / mean : 0;
}

}  // namespace kb
