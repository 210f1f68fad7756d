#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <regex>
#include <stdexcept>
#include <thread>

#include "core/metrics.h"
#include "kernels/common/cuda_check.h"
#include "suite/device.h"
#include "suite/nccl_bench.h"
#include "suite/stats.h"

#ifdef KBENCH_HAVE_NCCL
#include <nccl.h>
#endif

namespace kb {

namespace {

constexpr const char* kAllReduce = "nccl_all_reduce";
constexpr const char* kAllGather = "nccl_all_gather";

// Decode's hidden size (Llama-2-7B, Mixtral-8x7B) in bf16, times 1..16 tokens.
constexpr size_t kHiddenBytes = 4096 * 2;
constexpr int kTokens[] = {1, 2, 4, 8, 16};
constexpr size_t kLarge[] = {size_t(256) << 20, size_t(1) << 30};

// busbw / algbw (nccl-tests' factors).
double bus_factor(const std::string& name, int n) {
  if (n < 2) return 1;
  return name == kAllReduce ? 2.0 * (n - 1) / n : double(n - 1) / n;
}

Record base_row(const std::string& name, const CollectivePoint& p, const char* metric, int ranks,
                const RunInfo& info, const GpuIdentity& gpu) {
  Record r;
  r.name = name;
  r.metric = metric;
  r.dtype = "bfloat16";
  r.device = "cuda";  // the host's GPUs together, not one of them
  r.shape = p.shape + ";ranks=" + std::to_string(ranks);
  stamp_run(r, info, gpu);
  return r;
}

std::vector<const char*> metrics_of(const CollectivePoint& p) {
  if (p.small) return {metric_name::latency_us};
  return {metric_name::algorithm_bandwidth, metric_name::bus_bandwidth};
}

__global__ void fill_bf16(__nv_bfloat16* p, size_t n, float v) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x)
    p[i] = __float2bfloat16(v);
}

void launch_fill_bf16(__nv_bfloat16* p, size_t n, float v, cudaStream_t s) {
  fill_bf16<<<1024, 256, 0, s>>>(p, n, v);
}

// The ring's link: each GPU writes its buffer into the next GPU's memory
// with all its SMs (as NCCL's kernels do), all GPUs at once.
__global__ void peer_write(const int4* __restrict__ src, int4* __restrict__ dst, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x)
    dst[i] = src[i];
}

void launch_peer_write(const int4* src, int4* dst, size_t n, int blocks, cudaStream_t s) {
  peer_write<<<blocks, 512, 0, s>>>(src, dst, n);
}

}  // namespace

std::vector<std::string> collective_names() { return {kAllGather, kAllReduce}; }

std::vector<std::string> collectives_matching(const std::string& filter) {
  std::vector<std::string> out;
  std::regex re;
  try {
    re = std::regex(filter.empty() ? ".*" : filter, std::regex::ECMAScript);
  } catch (const std::regex_error&) {
    return out;  // select() names the bad regex
  }
  for (const auto& n : collective_names())
    if (std::regex_search(n, re)) out.push_back(n);
  return out;
}

std::string collective_axes_text() {
  return "bytes=8192..131072 (hidden 4096 bf16 x 1..16 tokens; latency), 268435456, 1073741824 "
         "(algbw, busbw); ranks = the run's GPUs (2 or more)";
}

std::vector<CollectivePoint> collective_points(const std::string&) {
  std::vector<CollectivePoint> out;
  for (int t : kTokens) {
    const size_t b = kHiddenBytes * t;
    out.push_back({"bytes=" + std::to_string(b), b, true});
  }
  for (size_t b : kLarge) out.push_back({"bytes=" + std::to_string(b), b, false});
  return out;
}

bool nccl_built(std::string* why) {
#ifdef KBENCH_HAVE_NCCL
  (void)why;
  return true;
#else
  if (why)
    *why =
        "this kbench was built without NCCL (CMake found no nccl.h and libnccl in the CUDA "
        "toolkit or the system: install NCCL, e.g. apt-get install libnccl-dev, and rebuild)";
  return false;
#endif
}

std::vector<Record> collective_status_rows(const std::string& name, int ranks,
                                           const std::string& st, const std::string& message,
                                           const RunInfo& info, const GpuIdentity& gpu) {
  std::vector<Record> rows;
  for (const auto& p : collective_points(name))
    for (const char* m : metrics_of(p)) {
      Record r = base_row(name, p, m, ranks, info, gpu);
      r.status = st;
      r.message = message;
      rows.push_back(r);
    }
  return rows;
}

#ifndef KBENCH_HAVE_NCCL

std::vector<Record> measure_collective(const std::string&, const std::vector<int>&, const RunInfo&,
                                       double, bool) {
  std::string why;
  nccl_built(&why);
  throw std::runtime_error(why);
}

#else

namespace {

struct NcclError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Every rank's communicator, aborted (not finalized) on any error or
// timeout: an abort never waits for peers that may be stuck.
class Comms {
 public:
  Comms(const std::vector<int>& devices, double timeout_s)
      : devices_(devices), timeout_s_(timeout_s), comms_(devices.size(), nullptr) {
    ncclUniqueId id;
    check(ncclGetUniqueId(&id), "ncclGetUniqueId");
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;  // nonblocking: every wait below has a deadline
    check(ncclGroupStart(), "ncclGroupStart");
    for (size_t r = 0; r < devices.size(); ++r) {
      KB_CUDA_CHECK(cudaSetDevice(devices[r]));
      ncclResult_t res = ncclCommInitRankConfig(&comms_[r], static_cast<int>(devices.size()), id,
                                                static_cast<int>(r), &config);
      if (res != ncclSuccess && res != ncclInProgress) {
        ncclGroupEnd();
        check(res, "ncclCommInitRankConfig");
      }
    }
    group_end("communicator init");
  }
  ~Comms() {
    if (!aborted_) {
      try {  // finalize flushes; it too may hang on a stuck peer: a deadline
        for (auto c : comms_)
          if (c) {
            ncclResult_t res = ncclCommFinalize(c);
            if (res != ncclSuccess && res != ncclInProgress) aborted_ = true;
          }
        if (!aborted_) wait_ready("ncclCommFinalize");
      } catch (const std::exception&) {
        aborted_ = true;
      }
    }
    for (auto c : comms_)
      if (c) {
        if (aborted_)
          ncclCommAbort(c);
        else
          ncclCommDestroy(c);
      }
  }
  ncclComm_t operator[](size_t r) const { return comms_[r]; }

  // After ncclGroupEnd: until every communicator has taken the work, or the
  // deadline (abort, throw).
  void group_end(const char* what) {
    ncclResult_t res = ncclGroupEnd();
    if (res != ncclSuccess && res != ncclInProgress) fail(res, what);
    wait_ready(what);
  }

  // Until the streams have finished, polling NCCL's errors meanwhile.
  void wait_streams(const std::vector<cudaStream_t>& streams, const char* what) {
    const auto t0 = std::chrono::steady_clock::now();
    for (;;) {
      bool done = true;
      for (size_t r = 0; r < streams.size(); ++r) {
        KB_CUDA_CHECK(cudaSetDevice(devices_[r]));
        cudaError_t e = cudaStreamQuery(streams[r]);
        if (e == cudaErrorNotReady) {
          done = false;
          continue;
        }
        KB_CUDA_CHECK(e);
      }
      poll_errors(what);
      if (done) return;
      expire(t0, what);
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }

 private:
  void wait_ready(const char* what) {
    const auto t0 = std::chrono::steady_clock::now();
    for (;;) {
      bool ready = true;
      for (auto c : comms_) {
        ncclResult_t async = ncclSuccess;
        ncclResult_t res = ncclCommGetAsyncError(c, &async);
        if (res != ncclSuccess) fail(res, what);
        if (async == ncclInProgress)
          ready = false;
        else if (async != ncclSuccess)
          fail(async, what);
      }
      if (ready) return;
      expire(t0, what);
      std::this_thread::yield();
    }
  }
  void poll_errors(const char* what) {
    for (auto c : comms_) {
      ncclResult_t async = ncclSuccess;
      if (ncclCommGetAsyncError(c, &async) != ncclSuccess) fail(ncclInternalError, what);
      if (async != ncclSuccess && async != ncclInProgress) fail(async, what);
    }
  }
  void expire(std::chrono::steady_clock::time_point t0, const char* what) {
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (s > timeout_s_) {
      aborted_ = true;
      throw NcclError(std::string(what) + ": no progress in " + std::to_string(int(timeout_s_)) +
                      " s: NCCL communicators aborted");
    }
  }
  [[noreturn]] void fail(ncclResult_t res, const char* what) {
    aborted_ = true;
    throw NcclError(std::string(what) + ": " + ncclGetErrorString(res) +
                    " (NCCL_DEBUG=WARN tells more)");
  }
  void check(ncclResult_t res, const char* what) {
    if (res != ncclSuccess) fail(res, what);
  }

  std::vector<int> devices_;
  double timeout_s_;
  std::vector<ncclComm_t> comms_;
  bool aborted_ = false;
};

// The timed loop of one size: every rank's `iters` collectives captured
// once into a CUDA graph of that rank's stream, each sample a launch of
// every rank's graph. So the times are the GPUs' (as a decode step replays
// its graph; nccl-tests -G), not the host's enqueue rate: a nonblocking
// communicator's ncclGroupEnd hands each launch to a thread of NCCL's,
// which made eager back-to-back calls measure 122-170 us at 8-128 KiB on
// 4x H100 against PyTorch's 40-50 us (docs/decisions/0024-nccl-collectives-as-graphs.md).
// Throws NcclError, every capture ended, where `enqueue` or CUDA fails.
struct Graphs {
  template <typename Enqueue>
  Graphs(const std::vector<int>& devs, const std::vector<cudaStream_t>& streams, Enqueue enqueue)
      : devices(devs), exec(devs.size(), nullptr) {
    std::string error;
    auto check = [&](cudaError_t e, const char* what) {
      if (e != cudaSuccess && error.empty())
        error = std::string(what) + ": " + cudaGetErrorString(e);
      return error.empty();
    };
    size_t begun = 0;  // captures begun: each is ended below, whatever fails
    for (; begun < devices.size(); ++begun) {
      // Relaxed: NCCL may enqueue from a thread of its own (nonblocking group end).
      if (!check(cudaSetDevice(devices[begun]), "cudaSetDevice") ||
          !check(cudaStreamBeginCapture(streams[begun], cudaStreamCaptureModeRelaxed),
                 "cudaStreamBeginCapture"))
        break;
    }
    if (error.empty()) {
      try {
        enqueue();
      } catch (const std::exception& ex) {
        error = ex.what();
      }
    }
    for (size_t r = 0; r < begun; ++r) {
      cudaSetDevice(devices[r]);
      cudaGraph_t graph = nullptr;
      check(cudaStreamEndCapture(streams[r], &graph), "cudaStreamEndCapture");
      if (graph) {
        if (error.empty()) check(cudaGraphInstantiate(&exec[r], graph, 0), "cudaGraphInstantiate");
        cudaGraphDestroy(graph);
      }
    }
    if (!error.empty()) {
      cudaGetLastError();
      release();
      throw NcclError("capturing the timed collectives into CUDA graphs: " + error);
    }
  }
  ~Graphs() { release(); }
  Graphs(const Graphs&) = delete;
  Graphs& operator=(const Graphs&) = delete;

  std::vector<int> devices;
  std::vector<cudaGraphExec_t> exec;

 private:
  void release() {
    for (size_t r = 0; r < exec.size(); ++r)
      if (exec[r]) {
        cudaSetDevice(devices[r]);
        cudaGraphExecDestroy(exec[r]);
        exec[r] = nullptr;
      }
  }
};

struct Buffers {
  std::vector<void*> send, recv;
  std::vector<cudaStream_t> streams;
  std::vector<cudaEvent_t> start, stop;
  std::vector<int> devices;
  ~Buffers() {
    for (size_t r = 0; r < devices.size(); ++r) {
      cudaSetDevice(devices[r]);
      if (r < send.size() && send[r]) cudaFree(send[r]);
      if (r < recv.size() && recv[r]) cudaFree(recv[r]);
      if (r < streams.size() && streams[r]) cudaStreamDestroy(streams[r]);
      if (r < start.size() && start[r]) cudaEventDestroy(start[r]);
      if (r < stop.size() && stop[r]) cudaEventDestroy(stop[r]);
    }
  }
};

// The ring's bandwidth per GPU in GB/s, or 0 when some neighbours have no
// peer access (`why` says which).
double ring_link_gbps(const std::vector<int>& dev, Buffers& b, size_t bytes, std::string* why) {
  const size_t n = dev.size();
  for (size_t r = 0; r < n; ++r) {
    int ok = 0;
    KB_CUDA_CHECK(cudaDeviceCanAccessPeer(&ok, dev[r], dev[(r + 1) % n]));
    if (!ok) {
      *why = "no peer access from GPU " + std::to_string(dev[r]) + " to GPU " +
             std::to_string(dev[(r + 1) % n]) + ": no link roofline";
      return 0;
    }
    KB_CUDA_CHECK(cudaSetDevice(dev[r]));
    cudaError_t e = cudaDeviceEnablePeerAccess(dev[(r + 1) % n], 0);
    if (e == cudaErrorPeerAccessAlreadyEnabled)
      cudaGetLastError();
    else
      KB_CUDA_CHECK(e);
  }
  const size_t words = bytes / sizeof(int4);
  double best = 1e30;
  for (int rep = 0; rep < 6; ++rep) {
    for (size_t r = 0; r < n; ++r) {
      KB_CUDA_CHECK(cudaSetDevice(dev[r]));
      cudaDeviceProp prop{};
      KB_CUDA_CHECK(cudaGetDeviceProperties(&prop, dev[r]));
      KB_CUDA_CHECK(cudaEventRecord(b.start[r], b.streams[r]));
      launch_peer_write(static_cast<const int4*>(b.send[r]),
                        static_cast<int4*>(b.recv[(r + 1) % n]), words,
                        prop.multiProcessorCount * 2, b.streams[r]);
      KB_CUDA_CHECK(cudaGetLastError());
      KB_CUDA_CHECK(cudaEventRecord(b.stop[r], b.streams[r]));
    }
    double worst = 0;
    for (size_t r = 0; r < n; ++r) {
      KB_CUDA_CHECK(cudaSetDevice(dev[r]));
      KB_CUDA_CHECK(cudaEventSynchronize(b.stop[r]));
      float ms = 0;
      KB_CUDA_CHECK(cudaEventElapsedTime(&ms, b.start[r], b.stop[r]));
      worst = std::max(worst, double(ms));
    }
    if (rep > 0) best = std::min(best, worst);  // the first is the warm-up
  }
  return double(words * sizeof(int4)) / (best * 1e-3) / 1e9;
}

}  // namespace

std::vector<Record> measure_collective(const std::string& name, const std::vector<int>& devices,
                                       const RunInfo& info, double timeout_s, bool quick) {
  if (name != kAllReduce && name != kAllGather)
    throw std::invalid_argument("no collective '" + name + "'");
  const int n = static_cast<int>(devices.size());
  const DeviceInfo d0 = query_device(devices[0]);
  const GpuIdentity gpu = gpu_identity(d0);
  const auto points = collective_points(name);
  size_t max_bytes = 0;
  for (const auto& p : points) max_bytes = std::max(max_bytes, p.bytes);

  Buffers b;
  b.devices = devices;
  b.send.assign(n, nullptr);
  b.recv.assign(n, nullptr);
  b.streams.assign(n, nullptr);
  b.start.assign(n, nullptr);
  b.stop.assign(n, nullptr);
  for (int r = 0; r < n; ++r) {
    KB_CUDA_CHECK(cudaSetDevice(devices[r]));
    // all-reduce: each rank sends and receives `bytes`; all-gather: each
    // sends bytes/n and receives the whole.
    KB_CUDA_CHECK(cudaMalloc(&b.send[r], max_bytes));
    KB_CUDA_CHECK(cudaMalloc(&b.recv[r], max_bytes));
    KB_CUDA_CHECK(cudaStreamCreateWithFlags(&b.streams[r], cudaStreamNonBlocking));
    KB_CUDA_CHECK(cudaEventCreate(&b.start[r]));
    KB_CUDA_CHECK(cudaEventCreate(&b.stop[r]));
  }

  std::vector<Record> rows;
  std::string link_why;
  const size_t link_bytes = size_t(256) << 20;
  const double link = ring_link_gbps(devices, b, link_bytes, &link_why);
  {
    Record r;
    r.name = "roofline_probe";
    r.metric = metric_name::link_bandwidth;
    r.dtype = "int8";
    r.device = "cuda";
    r.shape =
        "bytes=" + std::to_string(link_bytes) + ";ranks=" + std::to_string(n) + ";for=" + name;
    r.variant = "ring_peer_write";
    stamp_run(r, info, gpu);
    if (link > 0) {
      r.actual = link;
    } else {
      r.status = status::skipped;
      r.message = link_why;
    }
    rows.push_back(r);
  }

  Comms comms(devices, timeout_s);
  const bool reduce = name == kAllReduce;
  auto enqueue = [&](size_t bytes, int iters) {
    const size_t elems = reduce ? bytes / 2 : bytes / 2 / n;  // all-gather: per rank
    for (int it = 0; it < iters; ++it) {
      if (ncclGroupStart() != ncclSuccess) throw NcclError("ncclGroupStart failed");
      for (int r = 0; r < n; ++r) {
        ncclResult_t res = reduce ? ncclAllReduce(b.send[r], b.recv[r], elems, ncclBfloat16,
                                                  ncclSum, comms[r], b.streams[r])
                                  : ncclAllGather(b.send[r], b.recv[r], elems, ncclBfloat16,
                                                  comms[r], b.streams[r]);
        if (res != ncclSuccess && res != ncclInProgress) {
          ncclGroupEnd();
          throw NcclError(std::string(reduce ? "ncclAllReduce" : "ncclAllGather") + ": " +
                          ncclGetErrorString(res));
        }
      }
      comms.group_end(reduce ? "ncclAllReduce" : "ncclAllGather");
    }
  };

  for (const auto& p : points) {
    // The check: rank r sends r+1 everywhere; all-reduce gives n(n+1)/2
    // (exact in bf16 for n <= 16), all-gather chunk r holds r+1.
    const size_t per_rank = reduce ? p.bytes / 2 : p.bytes / 2 / n;
    const size_t bytes = reduce ? p.bytes : per_rank * 2 * n;  // all-gather: n equal chunks
    for (int r = 0; r < n; ++r) {
      KB_CUDA_CHECK(cudaSetDevice(devices[r]));
      launch_fill_bf16(static_cast<__nv_bfloat16*>(b.send[r]), per_rank, float(r + 1),
                       b.streams[r]);
      KB_CUDA_CHECK(cudaGetLastError());
      KB_CUDA_CHECK(cudaMemsetAsync(b.recv[r], 0, bytes, b.streams[r]));
    }
    enqueue(bytes, 1);
    comms.wait_streams(b.streams, "the check's collective");
    std::string bad;
    for (int r = 0; r < n && bad.empty(); ++r) {
      KB_CUDA_CHECK(cudaSetDevice(devices[r]));
      const size_t total = bytes / 2;
      for (size_t at : {size_t(0), total / 2, total - 1}) {
        __nv_bfloat16 h;
        KB_CUDA_CHECK(
            cudaMemcpy(&h, static_cast<__nv_bfloat16*>(b.recv[r]) + at, 2, cudaMemcpyDeviceToHost));
        const float want = reduce ? float(n * (n + 1) / 2) : float(at / per_rank + 1);
        if (__bfloat162float(h) != want) {
          bad = "rank " + std::to_string(r) + " element " + std::to_string(at) + " is " +
                std::to_string(__bfloat162float(h)) + ", expected " + std::to_string(want);
          break;
        }
      }
    }
    const auto metrics = metrics_of(p);
    if (!bad.empty()) {
      for (const char* m : metrics) {
        Record r = base_row(name, p, m, n, info, gpu);
        r.status = status::incorrect;
        r.message = bad;
        rows.push_back(r);
      }
      continue;
    }
    // nccl-tests' way: `iters` back to back per sample, time / iters; the
    // `iters` are one graph a rank (Graphs), launched on every rank per
    // sample (the ranks' launches, one thread after another, start a few
    // us apart: amortized over the iters).
    const int iters = p.small ? 50 : 20;
    const int samples = quick ? 5 : p.small ? 20 : 10;
    Graphs g(devices, b.streams, [&] { enqueue(bytes, iters); });
    auto launch_all = [&] {
      for (int r = 0; r < n; ++r) {
        KB_CUDA_CHECK(cudaSetDevice(devices[r]));
        KB_CUDA_CHECK(cudaGraphLaunch(g.exec[r], b.streams[r]));
      }
    };
    // Warm-up: 5 launches and at least 100 ms of them (the clocks up and
    // NCCL's connections made before the first sample: 8 KiB all-reduce,
    // the first size timed, read 25.8 us in one run on 4x H100 and 14.5 us
    // in another after 5 launches).
    const auto warm0 = std::chrono::steady_clock::now();
    for (int w = 0;
         w < 5 || std::chrono::steady_clock::now() - warm0 < std::chrono::milliseconds(100); ++w) {
      launch_all();
      comms.wait_streams(b.streams, "the warm-up");
    }
    std::vector<double> t;
    for (int s = 0; s < samples; ++s) {
      for (int r = 0; r < n; ++r) {
        KB_CUDA_CHECK(cudaSetDevice(devices[r]));
        KB_CUDA_CHECK(cudaEventRecord(b.start[r], b.streams[r]));
        KB_CUDA_CHECK(cudaGraphLaunch(g.exec[r], b.streams[r]));
        KB_CUDA_CHECK(cudaEventRecord(b.stop[r], b.streams[r]));
      }
      comms.wait_streams(b.streams, "a timed collective");
      double worst = 0;  // the slowest rank's time is the collective's
      for (int r = 0; r < n; ++r) {
        float ms = 0;
        KB_CUDA_CHECK(cudaEventElapsedTime(&ms, b.start[r], b.stop[r]));
        worst = std::max(worst, double(ms) * 1e-3 / iters);
      }
      t.push_back(worst);
    }
    const Summary sum = summarize(t);
    const double algbw = double(bytes) / sum.median / 1e9;
    const double factor = bus_factor(name, n);
    for (const char* m : metrics) {
      Record r = base_row(name, p, m, n, info, gpu);
      r.variant = "nccl=" + std::to_string(NCCL_MAJOR) + "." + std::to_string(NCCL_MINOR) + "." +
                  std::to_string(NCCL_PATCH) + ";nvls=0;graph";
      r.samples = static_cast<int64_t>(t.size());
      r.median_us = sum.median * 1e6;
      r.min_us = sum.min * 1e6;
      r.max_us = sum.max * 1e6;
      r.noise_rel = sum.noise_rel;
      const std::string metric = m;
      if (metric == metric_name::latency_us) {
        r.actual = sum.median * 1e6;
        r.message = "busbw " + format_number(algbw * factor) + " GB/s";
      } else {
        const double v = metric == metric_name::bus_bandwidth ? algbw * factor : algbw;
        r.actual = v;
        if (link > 0) {
          r.roofline = metric == metric_name::bus_bandwidth ? link : link / factor;
          r.roofline_fraction = v / *r.roofline;
        }
      }
      rows.push_back(r);
    }
  }
  return rows;
}

#endif  // KBENCH_HAVE_NCCL

}  // namespace kb
