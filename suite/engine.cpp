#include "suite/engine.h"

#include <nvtx3/nvToolsExt.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <thread>

#include "core/metrics.h"
#include "kernels/common/cuda_check.h"
#include "suite/point_wire.h"
#include "suite/stats.h"

namespace kb {

namespace {

using Clock = std::chrono::steady_clock;

struct NvtxRange {
  explicit NvtxRange(const std::string& name) { nvtxRangePushA(name.c_str()); }
  ~NvtxRange() { nvtxRangePop(); }
};

// The rows' note where the buffer sets' medians spread by more than 1.5%
// (always with --detail): "32 buffer sets' medians 35.46-38.94 us, spread 2.6%".
std::string set_spread_note(const std::vector<std::vector<double>>& per_set, bool detail) {
  if (per_set.size() < 2) return "";
  std::vector<double> med;
  for (const auto& v : per_set) {
    if (v.empty()) return "";  // the budget ended the point mid-round
    med.push_back(median(v));
  }
  const Summary m = summarize(med);
  if (!(m.min > 0) || (!detail && m.noise_rel <= 0.015)) return "";
  char buf[96];
  std::snprintf(buf, sizeof buf, "%zu buffer sets' medians %.2f-%.2f us, spread %.1f%%", med.size(),
                m.min * 1e6, m.max * 1e6, m.noise_rel * 100);
  std::string s = buf;
  if (detail) {
    s += " (";
    for (size_t i = 0; i < med.size(); ++i) {
      std::snprintf(buf, sizeof buf, "%s%.2f", i ? "/" : "", med[i] * 1e6);
      s += buf;
    }
    s += ")";
  }
  return s;
}

}  // namespace

std::string new_run_id() {
  std::random_device rd;
  char suffix[16];
  std::snprintf(suffix, sizeof suffix, "-%06x", rd() & 0xffffffu);
  return utc_now("%Y%m%dT%H%M%SZ") + suffix;
}

Engine::Engine(const DeviceInfo& dev, const TargetFile* targets, EngineOptions opts, RunInfo info)
    : dev_(dev), targets_(targets), opts_(effective_options(opts)), info_(std::move(info)) {
  seed_ = opts_.seed ? opts_.seed
                     : static_cast<uint64_t>(Clock::now().time_since_epoch().count()) * 2654435761u;
  if (targets_) ceilings_ = targets_->ceilings();
  clocks_ = std::make_unique<ClockMonitor>(dev_.pci_bus_id);
  KB_CUDA_CHECK(cudaSetDevice(dev_.index));
  KB_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  KB_CUDA_CHECK(cudaEventCreate(&start_));
  KB_CUDA_CHECK(cudaEventCreate(&stop_));
  // Twice the L2, so that reading it evicts everything the last sample left.
  flush_bytes_ = std::max<size_t>(dev_.l2_bytes * 2, size_t(8) << 20);
  flush_bytes_ = (flush_bytes_ + 4095) / 4096 * 4096;
  KB_CUDA_CHECK(cudaMalloc(&flush_buf_, flush_bytes_));
  KB_CUDA_CHECK(cudaMemsetAsync(flush_buf_, 0, flush_bytes_, stream_));
  KB_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

Engine::~Engine() {
  if (flush_buf_) cudaFree(flush_buf_);
  if (start_) cudaEventDestroy(start_);
  if (stop_) cudaEventDestroy(stop_);
  if (stream_) cudaStreamDestroy(stream_);
}

void Engine::after_error(const std::string& what) {
  cudaGetLastError();
  cudaError_t err = cudaDeviceSynchronize();
  if (err == cudaSuccess) err = cudaGetLastError();
  if (err != cudaSuccess) {
    std::fprintf(stderr, "kbench: CUDA context lost on device %d (%s) after: %s\n", dev_.index,
                 cudaGetErrorName(err), what.c_str());
    context_lost_ = true;
  }
}

Ceilings merge_ceilings(const TargetFile* targets, const ProbeResult& p) {
  Ceilings c = targets ? targets->ceilings() : Ceilings{};
  auto take = [&](double& dst, double file_measured, double probed) {
    if (!targets || file_measured <= 0) dst = probed;
  };
  const Ceilings none;
  const Ceilings& m = targets ? targets->measured : none;
  take(c.read_gbps, m.read_gbps, p.read_gbps);
  take(c.copy_gbps, m.copy_gbps, std::max(p.copy_gbps, p.memcpy_gbps));
  take(c.launch_us, m.launch_us, p.launch_us);
  take(c.graph_node_us, m.graph_node_us, p.graph_node_us);
  take(c.mem_latency_us, m.mem_latency_us, p.mem_latency_us);
  c.probe_launch_us = p.launch_us;
  return c;
}

std::vector<Record> Engine::probe(ProbeResult* result) {
  NvtxRange range("roofline_probe");
  ProbeResult p = probe_ceilings(stream_, dev_.mem_bytes, opts_.quick);
  if (result) *result = p;
  ceilings_ = merge_ceilings(targets_, p);
  std::vector<Record> rows;
  auto row = [&](const char* metric, const char* variant, double v) {
    Record r;
    r.name = "roofline_probe";
    r.metric = metric;
    r.actual = v;
    r.dtype = "int8";  // raw bytes
    r.device = info_.device_label;
    r.shape = "bytes=" + std::to_string(static_cast<long long>(p.bytes));
    r.variant = variant;
    r.status = status::ok;
    stamp_run(r, info_, gpu_identity(dev_));
    rows.push_back(r);
  };
  row(metric_name::read_bandwidth, "read_kernel", p.read_gbps);
  row(metric_name::copy_bandwidth, "copy_kernel", p.copy_gbps);
  row(metric_name::copy_bandwidth, "cudaMemcpy", p.memcpy_gbps);
  row(metric_name::launch_us, "empty_kernel", p.launch_us);
  row(metric_name::graph_node_us, "empty_graph_node", p.graph_node_us);
  row(metric_name::mem_latency_us, "cold_read_minus_empty_kernel", p.mem_latency_us);
  const std::string why = unresolved_latency(p.cold_read_us, p.one_block_us);
  if (!why.empty()) {  // no number rather than a round trip of 0 us
    rows.back().status = status::skipped;
    rows.back().actual.reset();
    rows.back().message = why;
  }
  // The two copy rows share (name, metric, dtype, shape): give them distinct shapes.
  rows[2].shape += ";memcpy=1";
  return rows;
}

double Engine::time_window(bool flush, const std::function<void(cudaStream_t)>& f) {
  if (flush) read_buffer(flush_buf_, flush_bytes_, stream_);  // reads twice the L2
  KB_CUDA_CHECK(cudaEventRecord(start_, stream_));
  f(stream_);
  KB_CHECK_LAUNCH();
  KB_CUDA_CHECK(cudaEventRecord(stop_, stream_));
  KB_CUDA_CHECK(cudaEventSynchronize(stop_));
  float ms = 0;
  KB_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
  return ms * 1e-3;
}

double Engine::time_cold(const std::function<void(cudaStream_t)>& f) {
  return time_window(true, f);
}

double Engine::time_as_sample(const std::function<void(cudaStream_t)>& f) {
  const double t = time_window(true, f);
  (void)clocks_->sm_clock_mhz();
  return t;
}

void Engine::warm_up(const std::vector<Case*>& cases, bool decode) {
  NvtxRange r("warmup");
  const auto t0 = Clock::now();
  int runs = 0;
  do {
    cases[runs % cases.size()]->run(stream_);
    KB_CHECK_LAUNCH();
    ++runs;
    KB_CUDA_CHECK(cudaStreamSynchronize(stream_));
  } while (runs < static_cast<int>(cases.size()) || !warmup_done(runs, seconds_since(t0), decode));
}

Measurement Engine::sample(const Experiment& e, const std::vector<Case*>& cases) {
  const bool decode = e.sampling() == Protocol::decode;
  const size_t sets = cases.size();
  Measurement t;
  warm_up(cases, decode);
  // An injected slowdown scales each sample's time: exact, with the sample
  // noise kept (docs/decisions/0010-injected-slowdown-scales-samples.md).
  const double scale = 1 + opts_.inject_slowdown;
  if (opts_.inject_slowdown > 0) t.inject = inject_field(opts_.inject_slowdown);
  std::optional<double> max_clock;
  if (auto m = clocks_->max_sm_clock_mhz()) max_clock = *m;
  std::vector<double> all, good, sm;
  std::vector<double> companion_ratio;  // Case::companion's time / the sample's, per pair
  std::vector<std::vector<double>> per_set(sets);
  std::optional<unsigned> mem_clock;
  const bool detail = opts_.detail;
  size_t capped = 0;  // with --detail: samples after which NVML named a slowdown reason
  uint64_t reasons = 0;
  const int target_runs = decode ? (opts_.quick ? 2 : e.decode_runs()) : opts_.max_samples;
  // The idle gap after a long sample, the companion's too (cool_gap_seconds).
  auto cool = [&](double sample_s) {
    if (const double gap = decode ? 0 : cool_gap_seconds(sample_s); gap > 0)
      std::this_thread::sleep_for(std::chrono::duration<double>(gap));
  };
  NvtxRange r("samples");
  const auto t0 = Clock::now();
  while (static_cast<int>(all.size()) < target_runs) {
    const size_t set = all.size() % sets;
    const double s = time_window(!decode, [&](cudaStream_t st) { cases[set]->run(st); }) * scale;
    all.push_back(s);
    per_set[set].push_back(s);
    cool(s);
    if (cases[set]->has_companion()) {
      const double c = time_window(!decode, [&](cudaStream_t st) { cases[set]->companion(st); });
      companion_ratio.push_back(c / s);
      cool(c);
    }
    std::optional<double> clk;
    if (auto c = clocks_->sm_clock_mhz()) {
      clk = *c;
      sm.push_back(*c);
    }
    if (!mem_clock) mem_clock = clocks_->mem_clock_mhz();
    if (detail)
      if (auto r = clocks_->slowdown_reasons(); r && *r) {
        ++capped;
        reasons |= *r;
      }
    if (sample_throttled(clk, max_clock))
      ++t.throttled;
    else
      good.push_back(s);
    if (!decode && stop_sampling(opts_, all.size(), good, seconds_since(t0), sets)) break;
  }
  t.total = all.size();
  t.summary = summarize(samples_to_use(good, all));
  t.value_s = decode ? t.summary.mean : t.summary.median;
  if (!sm.empty()) t.sm_clock_mhz = median(sm);
  if (mem_clock) t.mem_clock_mhz = *mem_clock;
  t.note = set_spread_note(per_set, detail);
  if (capped) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "%sslowdown reasons 0x%llx after %zu of %zu samples",
                  t.note.empty() ? "" : "; ", static_cast<unsigned long long>(reasons), capped,
                  all.size());
    t.note += buf;
  }
  if (!companion_ratio.empty()) t.companion_ratio = median(companion_ratio);
  t.buffer_sets = sets;
  return t;
}

std::optional<Measurement> Engine::measure(const Experiment& e, const Point& p,
                                           const std::string& label, std::string& detail,
                                           Check& chk) {
  std::vector<std::unique_ptr<Case>> cases;
  double setup_s = 0;
  size_t free0 = 0, total = 0;
  KB_CUDA_CHECK(cudaMemGetInfo(&free0, &total));
  {
    NvtxRange r("setup");
    const auto t0 = Clock::now();
    cases.push_back(e.make_case(p));
    KB_CUDA_CHECK(cudaDeviceSynchronize());
    setup_s = seconds_since(t0);
  }
  detail = cases[0]->variant();
  const uint64_t seed = seed_ ^ std::hash<std::string>{}(label);
  if (opts_.check) {
    NvtxRange r("check");
    chk = cases[0]->check(stream_, seed);
    KB_CUDA_CHECK(cudaStreamSynchronize(stream_));
  } else {
    // A further worker process of a checked point: inputs as a further set's.
    NvtxRange r("prepare");
    cases[0]->prepare(stream_, seed);
    KB_CUDA_CHECK(cudaStreamSynchronize(stream_));
    chk.ok = true;
  }
  detail = cases[0]->variant();  // again: a check may settle it
  const std::string note = cases[0]->note();
  if (!chk.ok) return std::nullopt;
  if (e.sampling() == Protocol::kernel) add_buffer_sets(e, p, free0, seed, cases);
  std::vector<Case*> use;
  for (auto& c : cases) use.push_back(c.get());
  Measurement t = sample(e, use);
  t.setup_s = setup_s;
  if (!note.empty()) t.note = t.note.empty() ? note : note + "; " + t.note;
  return t;
}

std::vector<std::unique_ptr<Case>> Engine::build_sets(const Experiment& e, const Point& p,
                                                      uint64_t seed) {
  size_t free0 = 0, total = 0;
  KB_CUDA_CHECK(cudaMemGetInfo(&free0, &total));
  std::vector<std::unique_ptr<Case>> cases;
  cases.push_back(e.make_case(p));
  cases[0]->prepare(stream_, seed);
  KB_CUDA_CHECK(cudaDeviceSynchronize());
  add_buffer_sets(e, p, free0, seed, cases);
  return cases;
}

// A set that does not fit is simply not built.
void Engine::add_buffer_sets(const Experiment& e, const Point& p, size_t free0, uint64_t seed,
                             std::vector<std::unique_ptr<Case>>& cases) {
  size_t free1 = 0, total = 0;
  KB_CUDA_CHECK(cudaMemGetInfo(&free1, &total));
  const int n = buffer_sets(free0 > free1 ? free0 - free1 : 0, free1, total, opts_.max_buffer_sets,
                            opts_.sampled_bytes_goal);
  const std::string detail = cases[0]->variant();
  NvtxRange r("buffer sets");
  for (int k = 1; k < n; ++k) {
    std::unique_ptr<Case> c;
    try {
      c = e.make_case(p);
    } catch (const CudaError& ex) {
      if (ex.code != cudaErrorMemoryAllocation) throw;
      cudaGetLastError();
      break;
    }
    c->prepare(stream_, seed + 0x9e3779b97f4a7c15ull * static_cast<uint64_t>(k));
    KB_CUDA_CHECK(cudaDeviceSynchronize());
    if (c->variant() != detail)
      throw std::runtime_error("buffer set " + std::to_string(k + 1) + " runs '" + c->variant() +
                               "', the first '" + detail +
                               "': the choice of kernel must not depend on the buffers");
    cases.push_back(std::move(c));
  }
}

Measurement Engine::measure_point(const Experiment& e, const Point& p) {
  const std::string label = point_text(e.name(), p);
  NvtxRange range(label);
  std::string detail;
  Check chk;
  std::optional<Measurement> t = measure(e, p, label, detail, chk);
  if (!t) throw std::runtime_error(label + ": output check failed: " + chk.detail);
  return *t;
}

std::vector<Record> Engine::run_point(const Experiment& e, const Point& p,
                                      MeasuredPoint* measured) {
  const std::string label = point_text(e.name(), p);
  NvtxRange range(label);
  const RowSource src = e.source();
  const GpuIdentity gpu = gpu_identity(dev_);
  std::string detail;  // the case's own variant text, once it is built
  // An `incorrect` row names the algorithm that computed the wrong output.
  auto all_rows = [&](const std::string& st, const std::string& msg) {
    return status_rows(src, p, st, msg, detail, info_, gpu, targets_);
  };
  if (context_lost_)
    return all_rows(status::failed, "not run: the CUDA context was lost at an earlier point");

  if (std::string why = e.unsupported_reason(p, dev_.prop); !why.empty())
    return all_rows(status::skipped, why);

  Work w;
  Measurement t;
  try {
    w = e.work_for(p);
    Check chk;
    std::optional<Measurement> m = measure(e, p, label, detail, chk);
    if (!m) return all_rows(status::incorrect, "output check failed: " + chk.detail);
    t = std::move(*m);
  } catch (const std::exception& ex) {
    after_error(ex.what());
    return all_rows(status::failed, ex.what());
  }
  if (measured) *measured = {detail, t};
  return measured_rows(src, p, detail, w, t, ceilings_, info_, gpu, targets_);
}

std::vector<Record> Engine::run(const Experiment& e) {
  NvtxRange range(e.name());
  const std::vector<Point> points = e.points();
  std::vector<std::vector<Record>> per_point;
  std::vector<Record> out;
  for (const Point& p : points) {
    per_point.push_back(run_point(e, p));
    out.insert(out.end(), per_point.back().begin(), per_point.back().end());
  }
  auto means = seed_mean_rows(e.source(), points, per_point, targets_);
  out.insert(out.end(), means.begin(), means.end());
  return out;
}

}  // namespace kb
