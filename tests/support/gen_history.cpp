#include "tests/support/gen_history.h"

#include <ctime>
#include <string>
#include <vector>

#include "core/csv_writer.h"
#include "core/metrics.h"
#include "core/record.h"
#include "tests/support/simulate.h"

namespace kb {

namespace {

struct GenKey {
  std::string name, metric, dtype, shape;
  double level, roofline;
  bool lower;
};

std::vector<GenKey> make_keys(int n, SimRng& rng) {
  static const char* names[] = {"layer_norm", "gemv", "gather_gemv", "mlp_layer_norm_gelu"};
  static const char* dtypes[] = {"bfloat16", "int8"};
  std::vector<GenKey> keys;
  for (int i = 0; i < n; ++i) {
    GenKey k;
    k.name = names[i % 4];
    k.dtype = dtypes[(i / 4) % 2];
    // Every eighth key is a latency: the gate must get the direction right.
    k.lower = i % 8 == 7;
    k.metric = k.lower ? metric_name::latency_us : metric_name::memory_bandwidth;
    k.shape = "BS=" + std::to_string(1 << (i % 5 + 8)) + ";D=" + std::to_string(1024 + i);
    k.roofline = k.lower ? 5.0 : 3107;
    k.level = k.lower ? 8 + 4 * rng.uniform() : 1500 + 1200 * rng.uniform();
    keys.push_back(std::move(k));
  }
  return keys;
}

std::string iso_day(int day) {
  // The first run at 03:00 UTC on the first of January 2026, then one a day.
  std::time_t t = 1767225600 + 3 * 3600 + static_cast<std::time_t>(day) * 86400;
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

bool write_history(std::FILE* out, const GenOptions& opt) {
  SimRng rng(opt.seed);
  std::vector<GenKey> keys = make_keys(opt.keys, rng);
  std::string buf =
      opt.gpt_fast ? "name,metric,target,actual,dtype,device,arch,is_model\n" : csv_header() + "\n";
  Record r;
  r.arch = opt.arch;
  r.driver = "580.159.04";
  r.cuda = "13.0";
  r.suite_version = "0.1.0";
  r.variant = "bound=memory";
  r.samples = 100;
  r.sm_clock_mhz = 1980;
  r.mem_clock_mhz = 2619;
  char num[64];
  for (int run = 0; run < opt.runs; ++run) {
    r.run_id = "run-" + std::to_string(run + 1);
    r.timestamp = iso_day(run);
    r.git_sha = "c0ffee" + std::to_string(100000 + run);
    const bool last = run == opt.runs - 1;
    for (int i = 0; i < opt.keys; ++i) {
      const GenKey& k = keys[static_cast<size_t>(i)];
      double v = k.level * (1 + opt.noise * rng.normal());
      if (last && i < opt.dropped_keys)
        v = k.lower ? v * (1 + opt.last_drop) : v * (1 - opt.last_drop);
      if (opt.gpt_fast) {
        std::snprintf(num, sizeof num, "%.6f", v);
        buf +=
            k.name + "," + k.metric + ",," + num + "," + k.dtype + ",cuda," + opt.arch + ",False\n";
      } else {
        r.name = k.name;
        r.metric = k.metric;
        r.dtype = k.dtype;
        r.shape = k.shape;
        r.actual = v;
        r.target.reset();
        r.median_us = k.lower ? v : 1e3 * 64 / v;
        r.min_us = *r.median_us * 0.98;
        r.max_us = *r.median_us * 1.05;
        r.noise_rel = 0.004;
        r.roofline = k.roofline;
        r.roofline_fraction = k.lower ? k.roofline / v : v / k.roofline;
        buf += csv_line(record_fields(r));
        buf += '\n';
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

bool write_history_file(const std::string& path, const GenOptions& opt) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return false;
  const bool ok = opt.from.empty() ? write_history(f, opt) : write_history_from(f, opt);
  return std::fclose(f) == 0 && ok;
}

}  // namespace kb
