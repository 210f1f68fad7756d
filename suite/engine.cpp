#include "suite/engine.h"

#include <nvtx3/nvToolsExt.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <map>
#include <random>

#include "kernels/common/cuda_check.h"
#include "reports/metrics.h"
#include "suite/stats.h"

namespace kb {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

struct NvtxRange {
  explicit NvtxRange(const std::string& name) { nvtxRangePushA(name.c_str()); }
  ~NvtxRange() { nvtxRangePop(); }
};

// A sample is throttled when the SM clock read right after it is under this
// fraction of the GPU's maximum SM clock (nvbench uses the same idea).
constexpr double kThrottleClockFraction = 0.75;

}  // namespace

std::string utc_timestamp() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string new_run_id() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
  std::random_device rd;
  char suffix[16];
  std::snprintf(suffix, sizeof suffix, "-%06x", rd() & 0xffffffu);
  return std::string(buf) + suffix;
}

struct Engine::Timing {
  Summary summary;          // over the non-throttled samples (all, if most were throttled)
  double value_s = 0;       // the statistic the metrics use: median (kernel) or mean (decode)
  size_t throttled = 0, total = 0;
  std::optional<double> sm_clock_mhz, mem_clock_mhz;
};

Engine::Engine(const DeviceInfo& dev, const TargetFile* targets, EngineOptions opts, RunInfo info)
    : dev_(dev), targets_(targets), opts_(opts), info_(std::move(info)) {
  if (opts_.quick) {
    opts_.min_samples = std::min(opts_.min_samples, 5);
    opts_.max_time_s = std::min(opts_.max_time_s, 0.15);
    opts_.max_noise = std::max(opts_.max_noise, 0.02);
  }
  seed_ = opts_.seed ? opts_.seed
                     : static_cast<uint64_t>(Clock::now().time_since_epoch().count()) * 2654435761u;
  if (targets_) ceilings_ = targets_->ceilings();
  clocks_ = std::make_unique<ClockMonitor>(dev_.pci_bus_id);
  KB_CUDA_CHECK(cudaSetDevice(dev_.index));
  create_resources();
}

Engine::~Engine() { destroy_resources(); }

void Engine::create_resources() {
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

void Engine::destroy_resources() {
  if (flush_buf_) cudaFree(flush_buf_);
  if (start_) cudaEventDestroy(start_);
  if (stop_) cudaEventDestroy(stop_);
  if (stream_) cudaStreamDestroy(stream_);
  flush_buf_ = nullptr;
  start_ = stop_ = nullptr;
  stream_ = nullptr;
}

void Engine::recover_after_error() {
  cudaGetLastError();
  cudaError_t err = cudaDeviceSynchronize();
  if (err == cudaSuccess) err = cudaGetLastError();
  if (err != cudaSuccess) {
    // A sticky error (illegal address, kernel fault) poisons the context:
    // start a fresh one so that the next experiments can run.
    std::fprintf(stderr, "kbench: CUDA context lost (%s); resetting device %d\n",
                 cudaGetErrorName(err), dev_.index);
    flush_buf_ = nullptr;
    start_ = stop_ = nullptr;
    stream_ = nullptr;
    cudaDeviceReset();
    cudaGetLastError();
    KB_CUDA_CHECK(cudaSetDevice(dev_.index));
    create_resources();
  }
}

void Engine::flush_l2() { read_buffer(flush_buf_, flush_bytes_, stream_); }

std::vector<Record> Engine::probe() {
  NvtxRange range("roofline_probe");
  ProbeResult p = probe_ceilings(stream_, dev_.mem_bytes, opts_.quick);
  const bool file = targets_ != nullptr;
  auto take = [&](double& dst, double file_measured, double probed) {
    if (!file || file_measured <= 0) dst = probed;
  };
  take(ceilings_.read_gbps, file ? targets_->measured.read_gbps : 0, p.read_gbps);
  take(ceilings_.copy_gbps, file ? targets_->measured.copy_gbps : 0,
       std::max(p.copy_gbps, p.memcpy_gbps));
  take(ceilings_.launch_us, file ? targets_->measured.launch_us : 0, p.launch_us);
  take(ceilings_.graph_node_us, file ? targets_->measured.graph_node_us : 0, p.graph_node_us);

  std::vector<Record> rows;
  auto row = [&](const char* metric, const char* variant, double v) {
    Record r;
    r.name = "roofline_probe";
    r.metric = metric;
    r.actual = v;
    r.dtype = "int8";  // raw bytes
    r.device = info_.device_label;
    r.arch = dev_.name;
    r.shape = "bytes=" + std::to_string(static_cast<long long>(p.bytes));
    r.variant = variant;
    r.status = status::ok;
    r.driver = dev_.driver;
    r.cuda = dev_.cuda;
    r.suite_version = info_.suite_version;
    r.git_sha = info_.git_sha;
    r.run_id = info_.run_id;
    r.timestamp = info_.timestamp;
    rows.push_back(r);
  };
  row(metric_name::read_bandwidth, "read_kernel", p.read_gbps);
  row(metric_name::copy_bandwidth, "copy_kernel", p.copy_gbps);
  row(metric_name::copy_bandwidth, "cudaMemcpy", p.memcpy_gbps);
  row(metric_name::launch_us, "empty_kernel", p.launch_us);
  row(metric_name::graph_node_us, "empty_graph_node", p.graph_node_us);
  // The two copy rows share (name, metric, dtype, shape): give them distinct shapes.
  rows[2].shape += ";memcpy=1";
  return rows;
}

Engine::Timing Engine::sample(const Experiment& e, Case& c) {
  const bool decode = e.sampling() == Protocol::decode;
  Timing t;
  {
    NvtxRange r("warmup");
    const auto t0 = Clock::now();
    int runs = 0;
    do {
      c.run(stream_);
      KB_CHECK_LAUNCH();
      ++runs;
      KB_CUDA_CHECK(cudaStreamSynchronize(stream_));
    } while (!decode && runs < 50 && (runs < 3 || seconds_since(t0) < 0.02));
  }
  const auto max_clock = clocks_->max_sm_clock_mhz();
  std::vector<double> all, good, sm;
  std::optional<unsigned> mem_clock;
  const int target_runs = decode ? (opts_.quick ? 2 : e.decode_runs()) : opts_.max_samples;
  NvtxRange r("samples");
  const auto t0 = Clock::now();
  while (static_cast<int>(all.size()) < target_runs) {
    if (!decode) flush_l2();
    KB_CUDA_CHECK(cudaEventRecord(start_, stream_));
    c.run(stream_);
    KB_CHECK_LAUNCH();
    KB_CUDA_CHECK(cudaEventRecord(stop_, stream_));
    KB_CUDA_CHECK(cudaEventSynchronize(stop_));
    float ms = 0;
    KB_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    const double s = ms * 1e-3;
    all.push_back(s);
    bool throttled = false;
    if (auto clk = clocks_->sm_clock_mhz()) {
      sm.push_back(*clk);
      if (max_clock && *clk < kThrottleClockFraction * *max_clock) throttled = true;
    }
    if (!mem_clock) mem_clock = clocks_->mem_clock_mhz();
    if (throttled)
      ++t.throttled;
    else
      good.push_back(s);
    if (decode) continue;
    const int n = static_cast<int>(good.size());
    const double elapsed = seconds_since(t0);
    if (elapsed > opts_.max_time_s && all.size() >= 3) break;
    if (n >= opts_.min_samples && n % 10 == 0 && summarize(good).median_rel_err <= opts_.max_noise)
      break;
  }
  t.total = all.size();
  const std::vector<double>& use = good.size() * 2 >= all.size() && !good.empty() ? good : all;
  t.summary = summarize(use);
  t.value_s = decode ? t.summary.mean : t.summary.median;
  if (!sm.empty()) t.sm_clock_mhz = median(sm);
  if (mem_clock) t.mem_clock_mhz = *mem_clock;
  return t;
}

Record Engine::base_record(const Experiment& e, const Point& p, Metric m) const {
  Record r;
  r.name = e.name();
  r.metric = metric_csv_name(m);
  r.dtype = dtype_name(p.dtype);
  r.device = info_.device_label;
  r.arch = dev_.name;
  r.is_model = e.is_model();
  r.shape = p.shape.str();
  r.variant = p.variant;
  r.driver = dev_.driver;
  r.cuda = dev_.cuda;
  r.suite_version = info_.suite_version;
  r.git_sha = info_.git_sha;
  r.run_id = info_.run_id;
  r.timestamp = info_.timestamp;
  return r;
}

void Engine::apply_target(Record& r, Metric m) const {
  const bool lower = lower_is_better(m);
  if (targets_) {
    if (const TargetEntry* t = targets_->find(r.name, r.metric, r.dtype, r.shape, r.variant)) {
      r.target = resolve_target(*t, r.roofline, lower);
      if (r.target && r.actual && r.status == status::ok &&
          below_target(*r.actual, *r.target, t->tolerance, lower))
        r.status = status::below_target;
    }
  } else if (r.roofline && m != Metric::compilation_time) {
    TargetEntry fallback;
    fallback.roofline_fraction = kFallbackRooflineFraction;
    r.target = resolve_target(fallback, r.roofline, lower);
    if (r.actual && r.status == status::ok &&
        below_target(*r.actual, *r.target, fallback.tolerance, lower))
      r.status = status::below_target;
  }
}

std::vector<Record> Engine::run_point(const Experiment& e, const Point& p,
                                      std::vector<double>* roofs) {
  const std::string label = e.name() + " " + p.shape.str() + " " + dtype_name(p.dtype) +
                            (p.variant.empty() ? "" : " " + p.variant);
  NvtxRange range(label);
  std::vector<Record> rows;
  auto all_rows = [&](const std::string& st, const std::string& msg) {
    rows.clear();
    for (Metric m : e.metric_list()) {
      Record r = base_record(e, p, m);
      r.status = st;
      r.message = msg;
      apply_target(r, m);
      rows.push_back(r);
    }
    roofs->assign(rows.size(), NAN);
    return rows;
  };

  if (std::string why = e.unsupported_reason(p, dev_.prop); !why.empty())
    return all_rows(status::skipped, why);

  Work w;
  Timing t;
  double setup_s = 0;
  try {
    w = e.work_for(p);
    std::unique_ptr<Case> c;
    {
      NvtxRange r("setup");
      const auto t0 = Clock::now();
      c = e.make_case(p);
      KB_CUDA_CHECK(cudaDeviceSynchronize());
      setup_s = seconds_since(t0);
    }
    Check chk;
    {
      NvtxRange r("check");
      chk = c->check(stream_, seed_ ^ std::hash<std::string>{}(label));
      KB_CUDA_CHECK(cudaStreamSynchronize(stream_));
    }
    if (!chk.ok) return all_rows(status::incorrect, "output check failed: " + chk.detail);
    t = sample(e, *c);
  } catch (const std::exception& ex) {
    all_rows(status::failed, ex.what());
    recover_after_error();
    return rows;
  }

  const bool throttled = t.throttled * 2 > t.total;
  roofs->clear();
  for (Metric m : e.metric_list()) {
    Record r = base_record(e, p, m);
    r.samples = static_cast<int64_t>(t.summary.n);
    r.median_us = t.summary.median * 1e6;
    r.min_us = t.summary.min * 1e6;
    r.max_us = t.summary.max * 1e6;
    r.noise_rel = t.summary.noise_rel;
    r.sm_clock_mhz = t.sm_clock_mhz;
    r.mem_clock_mhz = t.mem_clock_mhz;
    r.actual = metric_value(m, w, t.value_s, setup_s, ceilings_);
    r.status = status::ok;
    try {
      r.roofline = roofline_value(m, w, ceilings_);
      if (m != Metric::compilation_time) {
        Roofline rf = roofline(w, ceilings_);
        r.variant += std::string(r.variant.empty() ? "" : ";") + "bound=" + limiter_name(rf.limiter);
      }
    } catch (const std::invalid_argument& ex) {
      r.message = std::string("no roofline: ") + ex.what();
    }
    if (r.actual && r.roofline) r.roofline_fraction = roofline_fraction(m, *r.actual, *r.roofline);
    if (r.roofline_fraction && *r.roofline_fraction > 1.0)
      r.message = "above the roofline: check the declared bytes/flops or the ceilings";
    if (!r.actual) {
      r.status = status::failed;
      r.message = "metric undefined for this GPU (no peak for the dtype)";
    }
    if (throttled && r.status == status::ok) {
      r.status = status::throttled;
      r.message = std::to_string(t.throttled) + " of " + std::to_string(t.total) +
                  " samples under " + std::to_string(int(kThrottleClockFraction * 100)) +
                  "% of the max SM clock";
    }
    apply_target(r, m);
    roofs->push_back(r.roofline.value_or(NAN));
    rows.push_back(r);
  }
  return rows;
}

std::vector<Record> Engine::run(const Experiment& e) {
  std::vector<Record> out;
  NvtxRange range(e.name());
  // Seed-mean bookkeeping: per (dtype, variant, metric index), the seed points' values.
  struct Acc {
    Record first;
    std::vector<double> actual, roof;
    size_t missing = 0;
  };
  std::map<std::tuple<DType, std::string, size_t>, Acc> means;
  for (const Point& p : e.points()) {
    std::vector<double> roofs;
    std::vector<Record> rows = run_point(e, p, &roofs);
    if (e.has_seed_mean() && p.in_seed_mean) {
      for (size_t i = 0; i < rows.size(); ++i) {
        Acc& a = means[{p.dtype, p.variant, i}];
        if (a.actual.empty() && a.missing == 0) a.first = rows[i];
        if (rows[i].actual && (rows[i].status == status::ok || rows[i].status == status::below_target ||
                               rows[i].status == status::throttled)) {
          a.actual.push_back(*rows[i].actual);
          a.roof.push_back(roofs[i]);
        } else {
          ++a.missing;
        }
      }
    }
    out.insert(out.end(), rows.begin(), rows.end());
  }
  for (auto& [key, a] : means) {
    Record r = a.first;
    const Metric m = e.metric_list()[std::get<2>(key)];
    r.shape = "mean";
    r.variant = std::get<1>(key);
    r.samples = 0;
    r.median_us = r.min_us = r.max_us = r.noise_rel = r.sm_clock_mhz = std::nullopt;
    r.target = r.roofline = r.roofline_fraction = r.actual = std::nullopt;
    r.message.clear();
    if (a.missing > 0) {
      r.status = status::failed;
      r.message = std::to_string(a.missing) + " of " + std::to_string(a.missing + a.actual.size()) +
                  " seed shapes have no value";
    } else {
      // The arithmetic mean over the seed's shapes, as gpt_fast averages.
      double sum = 0, roof = 0;
      bool have_roof = true;
      for (size_t i = 0; i < a.actual.size(); ++i) {
        sum += a.actual[i];
        if (std::isnan(a.roof[i])) have_roof = false;
        roof += a.roof[i];
      }
      r.actual = sum / a.actual.size();
      r.status = status::ok;
      if (have_roof) {
        r.roofline = roof / a.actual.size();
        r.roofline_fraction = roofline_fraction(m, *r.actual, *r.roofline);
      }
    }
    apply_target(r, m);
    out.push_back(r);
  }
  return out;
}

}  // namespace kb
