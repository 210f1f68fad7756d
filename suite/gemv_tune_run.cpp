#include "suite/gemv_tune_run.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "core/tuning.h"
#include "kernels/common/cuda_check.h"
#include "kernels/gemv/gemv.h"
#include "suite/experiments/gemv_case.h"
#include "suite/rows.h"
#include "suite/runner.h"
#include "suite/stats.h"

namespace kb {

namespace {

double round_to(double v, double unit) { return std::round(v / unit) * unit; }

// Whether two gemv entries (JSON) are for the same bucket.
bool same_bucket(const nlohmann::ordered_json& a, const nlohmann::ordered_json& b) {
  for (const char* k : {"dtype", "experts", "use", "rows", "row_bytes", "max_bytes"})
    if (a.value(k, nlohmann::ordered_json()) != b.value(k, nlohmann::ordered_json())) return false;
  return true;
}

// The experiment whose rows run the shape, and the shape as its point
// naming kernel `k` (`config=...`).
const Experiment& experiment_of(const GemvShape& s) {
  const Experiment* e = Registry::instance().find(s.n_sel > 1 ? "gather_gemv" : "gemv");
  if (!e) throw std::runtime_error("kbench tune gemv: no gemv/gather_gemv experiment linked");
  return *e;
}

Point shape_point(const GemvShape& s, const gemv::Kernel& k) {
  Point p;
  if (s.n_sel > 1) {
    p.shape.set("D", s.N);  // gather_gemv's rows are square
  } else {
    p.shape.set("N", s.N);
    p.shape.set("K", s.K);
  }
  p.shape.set_label("config", gemv::kernel_name(k));
  p.dtype = s.int8 ? DType::i8 : DType::bf16;
  return p;
}

// Every candidate on the engine's device: warm-up, then `reps` interleaved
// cold rounds.
GemvTuned measure_shape(Engine& engine, const GemvShape& s, int reps) {
  const std::vector<gemv::Kernel> cands = gemv_candidates(s);
  // Round-robin over the row's buffer sets, so that a candidate pays what a
  // row pays for where its buffers landed (one warm buffer ranked them 2-3 us
  // faster than the rows then measured them).
  const auto cases = engine.build_sets(experiment_of(s), shape_point(s, cands[0]), 11);
  std::vector<gemv_experiment::GemvCase*> sets;
  for (const auto& c : cases) sets.push_back(&dynamic_cast<gemv_experiment::GemvCase&>(*c));
  const size_t n = cands.size(), n_sets = sets.size();
  const std::vector<gemv::Config> cfgs(cands.begin(), cands.end());
  std::vector<std::vector<double>> t(n);
  auto time = [&](size_t i, size_t k) {
    return engine.time_cold([&](cudaStream_t st) { sets[k % n_sets]->run_config(cfgs[i], st); });
  };
  for (size_t i = 0; i < n; ++i) time(i, i);  // warm-up (and each kernel's one-time attributes)
  // Every candidate over every set at the least; candidate i's r-th sample
  // on set r + i, so that a round times each set once.
  const int rounds = std::max<int>(reps, static_cast<int>(n_sets));
  for (int r = 0; r < rounds; ++r)
    for (size_t i = 0; i < n; ++i) t[i].push_back(time(i, static_cast<size_t>(r) + i));
  std::vector<CandidateTime> times;
  for (size_t i = 0; i < n; ++i)
    times.push_back({cands[i], median(t[i]), summarize(t[i]).noise_rel});
  GemvTuned r = pick_candidate(s, times);
  r.samples = rounds;
  r.screen = std::move(times);
  return r;
}

void print_tuned(const char* stage, const GemvTuned& r) {
  std::printf("  %s %s %lldx%lld%s: %s %.2f us (generic %s %.2f us%s%s)\n", stage,
              r.shape.int8 ? "int8" : "bf16", (long long)r.shape.N, (long long)r.shape.K,
              r.shape.n_sel > 1 ? ", 2 experts" : "", gemv::kernel_name(r.best).c_str(), r.best_us,
              r.generic.c_str(), r.generic_us, r.runner_up.empty() ? "" : ", runner-up ",
              r.runner_up.c_str());
  std::fflush(stdout);
}

// Each shape's finalists timed as rows are (points of gemv or gather_gemv
// naming their kernel, in as many worker processes as such a row gets), and
// its choice made again from those times.
void confirm_as_rows(const WorkerConfig& cfg, const DeviceInfo& dev, std::vector<GemvTuned>& tuned,
                     const std::vector<gemv::TableEntry>& table, int n_finalists) {
  for (const bool gather : {false, true}) {
    std::vector<Point> points;
    std::vector<std::pair<size_t, gemv::Kernel>> at;  // (shape, kernel) of each point
    for (size_t i = 0; i < tuned.size(); ++i) {
      if ((tuned[i].shape.n_sel > 1) != gather) continue;
      const GemvShape& sh = tuned[i].shape;
      const gemv::Kernel keep = gemv::choose_in(table, sh.int8, sh.N, sh.K, sh.n_sel).config.kernel;
      for (const auto& k : finalists(keep, tuned[i].screen, n_finalists)) {
        points.push_back(shape_point(tuned[i].shape, k));
        at.push_back({i, k});
      }
    }
    if (points.empty()) continue;
    const Experiment& e = experiment_of(tuned[at[0].first].shape);
    // Each point's time: the mean of its processes' medians (short ones get more).
    std::vector<double> sum(points.size(), 0), noise(points.size(), 0);
    std::vector<int> runs(points.size(), 0);
    for (int p = 0; p < kDefaultShortProcesses; ++p) {
      std::vector<size_t> at_p;
      std::vector<Point> pts;
      for (size_t j = 0; j < points.size(); ++j)
        if (p < kDefaultProcesses || (runs[j] > 0 && sum[j] / runs[j] < kShortPointUs * 1e-6)) {
          at_p.push_back(j);
          pts.push_back(points[j]);
        }
      if (pts.empty()) break;
      const std::vector<PointTime> t = measure_points_isolated(cfg, e, pts, dev);
      for (size_t q = 0; q < t.size(); ++q) {
        sum[at_p[q]] += t[q].value_s;
        ++runs[at_p[q]];
        noise[at_p[q]] = std::max(noise[at_p[q]], t[q].noise_rel);
      }
    }
    std::vector<double> mean(points.size());
    for (size_t j = 0; j < points.size(); ++j) mean[j] = sum[j] / std::max(runs[j], 1);
    for (size_t i = 0; i < tuned.size(); ++i) {
      std::vector<CandidateTime> times;
      for (size_t j = 0; j < points.size(); ++j)
        if (at[j].first == i) times.push_back({at[j].second, mean[j], noise[j]});
      if (times.empty()) continue;
      GemvTuned r = pick_candidate(tuned[i].shape, times);
      r.candidates = tuned[i].candidates;
      r.samples = tuned[i].samples;
      r.screen = std::move(tuned[i].screen);
      tuned[i] = std::move(r);
      print_tuned("rows  ", tuned[i]);
    }
  }
}

}  // namespace

std::vector<GemvTuned> tune_gemv_table(const DeviceInfo& dev, const TargetFile* tf,
                                       const std::string& out, int reps,
                                       const std::vector<GemvShape>& shapes,
                                       const WorkerConfig* rows) {
  // Read first: a broken file, or another GPU's, is refused before anything is timed.
  nlohmann::ordered_json doc = read_tuning_doc(out, dev.name);
  std::vector<GemvTuned> tuned;
  {
    Engine engine(dev, tf, EngineOptions{}, RunInfo{});
    for (const auto& s : shapes) {
      tuned.push_back(measure_shape(engine, s, reps));
      print_tuned("screen", tuned.back());
    }
  }
  if (rows) {
    // The workers alone on the GPU, as a run's are (its parent never makes a context).
    KB_CUDA_CHECK(cudaDeviceReset());
    // The table in place (the file being rewritten) keeps its choice unless beaten.
    confirm_as_rows(*rows, dev, tuned, parse_gemv_table(doc, out), kGemvFinalists);
  }
  // Each bucket's measurement: the shape that decided it (its largest N).
  const auto entries = tune_buckets(tuned);
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  const std::string date = utc_now();
  for (const auto& e : entries) {
    const GemvTuned* m = nullptr;
    for (const auto& r : tuned)
      if (e.bucket.holds(r.shape.int8, r.shape.N, r.shape.K, r.shape.n_sel, gemv::Use::standalone))
        m = &r;
    nlohmann::ordered_json j;
    if (m) {
      j["shape"] = std::to_string(m->shape.N) + "x" + std::to_string(m->shape.K) +
                   (m->shape.n_sel > 1 ? ", " + std::to_string(m->shape.n_sel) + " experts" : "");
      j["median_us"] = round_to(m->best_us, 0.01);
      j["noise_rel"] = round_to(m->noise_rel, 1e-5);
      j["generic"] = m->generic;
      j["generic_us"] = round_to(m->generic_us, 0.01);
      if (!m->runner_up.empty()) {
        j["runner_up"] = m->runner_up;
        j["runner_up_us"] = round_to(m->runner_up_us, 0.01);
      }
      j["candidates"] = m->candidates;
      j["samples"] = m->samples;
    }
    j["date"] = date;
    j["driver"] = dev.driver;
    list.push_back(gemv_entry_json(e, j));
  }
  // The decode step, tuned under the table just measured and the file's
  // decode entries; those of the buckets it measured are replaced.
  nlohmann::ordered_json kept = untuned_gemv_entries(doc);
  nlohmann::ordered_json installed = {{"gemv", list}};
  for (const auto& e : kept) installed["gemv"].push_back(e);
  gemv::set_table(parse_gemv_table(installed, out));
  DecodeTuning decode;
  {
    Engine engine(dev, tf, EngineOptions{}, RunInfo{});
    decode = tune_decode_step(engine, dev, reps);
  }
  for (const auto& e : kept)
    if (std::none_of(decode.tuned.begin(), decode.tuned.end(), [&](const DecodeProjection& p) {
          return same_bucket(e, gemv_entry_json(decode_entry(p, gemv::General{}), nullptr));
        }))
      list.push_back(e);
  for (const auto& e : decode.entries) list.push_back(e);
  doc["gpu"] = dev.name;
  doc["gemv"] = list;
  write_tuning_doc(doc, out);
  std::printf(
      "GEMV table written to %s (%zu buckets from %zu shapes, %zu decode step entries): review "
      "and commit it\n",
      out.c_str(), entries.size(), tuned.size(), decode.entries.size());
  return tuned;
}

}  // namespace kb
