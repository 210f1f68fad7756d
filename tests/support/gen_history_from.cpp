// `gen_history --from FILE...` (tests/support): a long synthetic history shaped like a
// real one, for the dashboard's screenshots and its 100 000-row timing.
// Each file's newest run gives the keys, GPU, driver and values; the nights
// before it are replayed with noise and a few events a year of nightlies
// has: a kernel improvement landing, a regression fixed a few nights later,
// throttled rows, a failed row. Every run id starts with "synthetic-" and
// every git_sha with "synth", so nobody takes them for measurements.
#include <algorithm>
#include <cmath>
#include <ctime>
#include <map>
#include <string>
#include <vector>

#include "core/csv_writer.h"
#include "core/record.h"
#include "core/targets.h"
#include "tests/support/gen_history.h"
#include "tests/support/simulate.h"
#include "tools/kgate/dashboard.h"
#include "tools/kgate/history.h"

namespace kb {

namespace {

struct Source {
  std::vector<Record> rows;  // the newest run's measured rows
  int64_t time = 0;          // that run's time
};

std::string iso(int64_t t) {
  std::time_t tt = static_cast<std::time_t>(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

Source read_source(const std::string& path) {
  History h;
  h.add_file(path);
  h.finish();
  Source s;
  const auto& obs = h.observations();
  uint32_t newest = 0;
  for (const auto& o : obs) newest = std::max(newest, o.run);
  const Run& run = h.runs()[newest];
  // Without a readable timestamp: a fixed time (mid November 2026), so
  // that a generated history is the same on every machine.
  if (!parse_iso_time(run.timestamp, s.time)) s.time = 1795000000;
  for (uint32_t k = 0; k < h.keys().size(); ++k) {
    if (h.series(k).empty()) continue;
    const Observation& o = obs[h.series(k).back()];
    if (o.run != newest || !o.measured()) continue;
    const Key& key = h.keys()[k];
    Record r;
    r.name = key.name;
    r.metric = key.metric;
    r.dtype = key.dtype;
    r.device = key.device;
    r.arch = key.arch;
    r.shape = key.shape;
    r.is_model = o.is_model;
    r.variant = std::string(o.variant);
    r.actual = o.actual;
    r.target = o.target();
    r.roofline = o.roofline();
    r.noise_rel = o.noise_rel();
    r.samples = o.samples;
    r.driver = run.driver;
    r.cuda = run.cuda;
    r.suite_version = "synthetic";
    s.rows.push_back(std::move(r));
  }
  return s;
}

std::string slug_of(const std::string& arch) {
  std::string s = gpu_slug(arch.empty() ? "gpu" : arch);
  return s.rfind("nvidia-", 0) == 0 ? s.substr(7) : s;
}

}  // namespace

bool write_history_from(std::FILE* out, const GenOptions& opt) {
  std::vector<Source> sources;
  for (const auto& f : opt.from) sources.push_back(read_source(f));
  SimRng rng(opt.seed);
  const int nights = opt.runs;
  // One commit per night for every GPU; a new one on most nights.
  std::vector<std::string> sha(static_cast<size_t>(nights));
  char hex[16];
  for (int n = 0; n < nights; ++n) {
    if (n == 0 || rng.uniform() < 0.6) {
      std::snprintf(hex, sizeof hex, "%07llx",
                    static_cast<unsigned long long>(rng.next_u64() & 0xfffffff));
      sha[static_cast<size_t>(n)] = std::string("synth") + hex;
    } else {
      sha[static_cast<size_t>(n)] = sha[static_cast<size_t>(n - 1)];
    }
  }
  // The events: `gemv` got 6% faster at 40% of the history; `layer_norm`
  // lost 9% at 70% for five nights, then the fix landed.
  const int improve_at = nights * 4 / 10, regress_at = nights * 7 / 10;
  std::string header = csv_header() + "\n";
  std::string buf = header;
  for (int n = 0; n < nights; ++n) {
    for (const Source& src : sources) {
      if (src.rows.empty()) continue;
      const int64_t t = src.time - static_cast<int64_t>(nights - n) * 86400;
      const std::string run_id =
          "synthetic-" + slug_of(src.rows[0].arch) + "-" + std::to_string(n + 1);
      for (const Record& base : src.rows) {
        Record r = base;
        r.run_id = run_id;
        r.timestamp = iso(t);
        r.git_sha = sha[static_cast<size_t>(n)];
        const bool lower =
            r.metric.find("(us)") != std::string::npos || r.metric.find("(s)") != std::string::npos;
        double factor = 1;  // > 1: better
        if (r.name == "gemv" && n < improve_at) factor /= 1.06;
        const bool regressed = r.name == "layer_norm" && n >= regress_at && n < regress_at + 5;
        if (regressed) factor *= 0.91;
        double noise = std::max(opt.noise, r.noise_rel.value_or(0));
        const double z = rng.normal();
        factor *= 1 + noise * z;
        r.status = status::ok;
        double u = rng.uniform();
        if (u < 0.004) {
          r.status = status::throttled;
          factor *= 0.85;
        }
        auto value_of = [&](double f) { return lower ? *base.actual / f : *base.actual * f; };
        r.actual = value_of(factor);
        if (u > 0.9996) {
          r.status = status::failed;
          r.actual.reset();
          r.message = "synthetic: a failed row";
        }
        if (r.actual && r.roofline)
          r.roofline_fraction = lower ? *r.roofline / *r.actual : *r.actual / *r.roofline;
        else
          r.roofline_fraction.reset();
        buf += csv_line(record_fields(r)) + "\n";
        // A suspect night (far below the noise, or the regression) is measured
        // again, as kbench does: the attempt confirms a real drop, not a blip.
        if (opt.attempts && r.actual && (z < -2.5 || regressed) && r.status == status::ok) {
          double again = factor / (1 + noise * rng.normal()) * (1 + noise * rng.normal());
          r.actual = value_of(again);
          if (r.roofline)
            r.roofline_fraction = lower ? *r.roofline / *r.actual : *r.actual / *r.roofline;
          r.run_id = run_id + "/2";
          buf += csv_line(record_fields(r)) + "\n";
        }
      }
      if (buf.size() > (1 << 20)) {
        if (std::fwrite(buf.data(), 1, buf.size(), out) != buf.size()) return false;
        buf.clear();
      }
    }
  }
  if (std::fwrite(buf.data(), 1, buf.size(), out) != buf.size()) return false;
  return std::fflush(out) == 0;
}

}  // namespace kb
