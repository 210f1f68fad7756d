#include "suite/gemv_tune_run.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/tuning.h"
#include "kernels/common/cuda_check.h"
#include "kernels/common/device_buffer.h"
#include "kernels/common/fill.h"
#include "kernels/gemv/gemv.h"
#include "suite/stats.h"

namespace kb {

namespace {

double round_to(double v, double unit) { return std::round(v / unit) * unit; }

GemvTuned measure_shape(Engine& engine, const GemvShape& s, int reps) {
  const std::vector<gemv::Kernel> cands = gemv_candidates(s);
  const size_t wbytes = size_t(s.n_sel) * s.N * s.K * (s.int8 ? 1 : 2);
  DeviceBuffer<uint8_t> w(wbytes);
  DeviceBuffer<gemv::bf16> scale(size_t(s.n_sel) * s.N), x(size_t(s.K)), y(size_t(s.n_sel) * s.N);
  DeviceBuffer<int32_t> ids(size_t(s.n_sel));
  cudaStream_t s0 = nullptr;
  if (s.int8)
    fill_int8(reinterpret_cast<int8_t*>(w.get()), wbytes, 11, s0);
  else
    fill_bf16(reinterpret_cast<gemv::bf16*>(w.get()), wbytes / 2, 11, s0);
  fill_bf16(scale.get(), scale.size(), 12, s0);
  fill_bf16(x.get(), x.size(), 13, s0);
  std::vector<int32_t> id(size_t(s.n_sel));
  for (int i = 0; i < s.n_sel; ++i) id[size_t(i)] = i;
  ids.upload(id);
  KB_CUDA_CHECK(cudaDeviceSynchronize());
  gemv::Operands op;
  op.int8 = s.int8;
  op.W = w.get();
  op.scale = s.int8 ? scale.get() : nullptr;
  op.experts = s.n_sel > 1 ? ids.get() : nullptr;
  op.n_sel = s.n_sel;
  op.E = s.n_sel;
  op.x = x.get();
  op.y = y.get();
  op.N = s.N;
  op.K = s.K;
  const size_t n = cands.size();
  std::vector<std::vector<double>> t(n);
  for (size_t i = 0; i < n; ++i)  // warm-up (and each kernel's one-time attributes)
    engine.time_cold([&](cudaStream_t st) { gemv::launch(op, gemv::Config(cands[i]), st); });
  for (int r = 0; r < reps; ++r)
    for (size_t i = 0; i < n; ++i)
      t[i].push_back(
          engine.time_cold([&](cudaStream_t st) { gemv::launch(op, gemv::Config(cands[i]), st); }));
  std::vector<double> med(n);
  size_t best = 0;  // candidate 0 is the generic rule's choice
  for (size_t i = 0; i < n; ++i) {
    med[i] = median(t[i]);
    if (med[i] < med[best]) best = i;
  }
  if (best != 0 && med[0] / med[best] - 1 < kGemvTuneMinGain) best = 0;
  GemvTuned r;
  r.shape = s;
  r.best = cands[best];
  r.best_us = med[best] * 1e6;
  r.generic = gemv::kernel_name(cands[0]);
  r.generic_us = med[0] * 1e6;
  r.noise_rel = summarize(t[best]).noise_rel;
  r.candidates = static_cast<int>(n);
  r.samples = reps;
  size_t second = n;
  for (size_t i = 0; i < n; ++i)
    if (i != best && (second == n || med[i] < med[second])) second = i;
  if (second < n) {
    r.runner_up = gemv::kernel_name(cands[second]);
    r.runner_up_us = med[second] * 1e6;
  }
  return r;
}

}  // namespace

std::vector<GemvTuned> measure_gemv(Engine& engine, const std::vector<GemvShape>& shapes, int reps,
                                    const std::function<void(const GemvTuned&)>& progress) {
  std::vector<GemvTuned> out;
  for (const auto& s : shapes) {
    out.push_back(measure_shape(engine, s, reps));
    if (progress) progress(out.back());
  }
  return out;
}

std::vector<GemvTuned> tune_gemv_table(const DeviceInfo& dev, const TargetFile* tf,
                                       const std::string& out, int reps,
                                       const std::vector<GemvShape>& shapes) {
  // Read first: a broken file is refused before anything is timed.
  nlohmann::ordered_json doc = read_tuning_doc(out);
  RunInfo info;
  EngineOptions eo;
  Engine engine(dev, tf, eo, info);
  const auto tuned = measure_gemv(engine, shapes, reps, [](const GemvTuned& r) {
    std::printf("  %s %lldx%lld%s: %s %.2f us (generic %s %.2f us%s%s)\n",
                r.shape.int8 ? "int8" : "bf16", (long long)r.shape.N, (long long)r.shape.K,
                r.shape.n_sel > 1 ? ", 2 experts" : "", gemv::kernel_name(r.best).c_str(),
                r.best_us, r.generic.c_str(), r.generic_us,
                r.runner_up.empty() ? "" : ", runner-up ", r.runner_up.c_str());
    std::fflush(stdout);
  });
  // Each bucket's measurement: the shape that decided it (its largest N).
  const auto entries = tune_buckets(tuned);
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  const std::string date = utc_timestamp();
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
  doc["gpu"] = dev.name;
  doc["gemv"] = list;
  write_tuning_doc(doc, out);
  std::printf("GEMV table written to %s (%zu buckets from %zu shapes): review and commit it\n",
              out.c_str(), entries.size(), tuned.size());
  return tuned;
}

}  // namespace kb
