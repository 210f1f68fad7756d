// nccl_all_reduce and nccl_all_gather across a run's GPUs, a rank each in
// one worker (Experiment::across_devices): latency at decode's sizes, algbw
// and busbw (as nccl-tests) at 256 MiB and 1 GiB against a ring of peer
// writes. Never a hang: nonblocking communicators, every wait a deadline
// that aborts them. NVLS stays off (kbench sets NCCL_NVLS_ENABLE=0).
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <thread>

#include "core/metrics.h"
#include "kernels/common/cuda_check.h"
#include "kernels/common/device_random.h"
#include "suite/device.h"
#include "suite/experiment.h"
#include "suite/sampling.h"
#include "suite/stats.h"

#ifdef KBENCH_HAVE_NCCL
#include <nccl.h>
#endif

namespace kb {

namespace {

// nccl-tests' busbw (algorithm_bandwidth: its algbw, bytes / time).
constexpr const char* kBusBandwidth = "bus_bandwidth(GB/s)";

// Decode's hidden size (Llama-2-7B, Mixtral-8x7B) in bf16 times 1..16
// tokens (latency rows, small), then the bus ceiling's sizes.
const std::vector<int64_t> kSizes = {8192 * 1,  8192 * 2,           8192 * 4,        8192 * 8,
                                     8192 * 16, int64_t(256) << 20, int64_t(1) << 30};
bool small(size_t bytes) { return bytes <= 8192 * 16; }

Record base_row(const std::string& name, size_t bytes, const char* metric, int ranks,
                const RunInfo& info, const GpuIdentity& gpu) {
  Record r;
  r.name = name;
  r.metric = metric;
  r.dtype = "bfloat16";
  r.device = "cuda";  // the host's GPUs together, not one of them
  r.shape = "bytes=" + std::to_string(bytes) + ";ranks=" + std::to_string(ranks);
  stamp_run(r, info, gpu);
  return r;
}

std::vector<const char*> metrics_of(size_t bytes) {
  if (small(bytes)) return {metric_name::latency_us};
  return {"algorithm_bandwidth(GB/s)", kBusBandwidth};
}

// The rows of one size with a status and message instead of figures.
void add_status_rows(std::vector<Record>& rows, const std::string& name, size_t bytes, int ranks,
                     const std::string& st, const std::string& message, const RunInfo& info,
                     const GpuIdentity& gpu) {
  for (const char* m : metrics_of(bytes)) {
    Record r = base_row(name, bytes, m, ranks, info, gpu);
    r.status = st;
    r.message = message;
    rows.push_back(r);
  }
}

std::string unavailable(int ranks) {
  if (ranks < 2)
    return "a collective needs 2 or more GPUs; this run has 1 (--device all on a host with "
           "several, or --device 0,1,...)";
#ifndef KBENCH_HAVE_NCCL
  return "this kbench was built without NCCL (CMake found no nccl.h and libnccl in the CUDA "
         "toolkit or the system: install NCCL, e.g. apt-get install libnccl-dev, and rebuild)";
#endif
  return "";
}

#ifdef KBENCH_HAVE_NCCL

constexpr const char* kAllReduce = "nccl_all_reduce";

// Each wait (init, one operation, finalize) gives up after this long and
// aborts the communicators; the parent's --timeout bounds the whole worker.
constexpr double kWaitS = 120;

// busbw / algbw (nccl-tests' factors).
double bus_factor(const std::string& name, int n) {
  return name == kAllReduce ? 2.0 * (n - 1) / n : double(n - 1) / n;
}

// The ring's link: each GPU writes its buffer into the next GPU's memory
// with all its SMs (as NCCL's kernels do), all GPUs at once.
__global__ void peer_write(const int4* __restrict__ src, int4* __restrict__ dst, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x)
    dst[i] = src[i];
}

struct NcclError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Every rank's communicator, aborted (not finalized) on any error or
// timeout: an abort never waits for peers that may be stuck.
class Comms {
 public:
  explicit Comms(const std::vector<int>& devices)
      : devices_(devices), comms_(devices.size(), nullptr) {
    ncclUniqueId id;
    if (ncclResult_t res = ncclGetUniqueId(&id)) fail(res, "ncclGetUniqueId");
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;  // nonblocking: every wait below has a deadline
    if (ncclResult_t res = ncclGroupStart()) fail(res, "ncclGroupStart");
    for (size_t r = 0; r < devices.size(); ++r) {
      KB_CUDA_CHECK(cudaSetDevice(devices[r]));
      ncclResult_t res = ncclCommInitRankConfig(&comms_[r], static_cast<int>(devices.size()), id,
                                                static_cast<int>(r), &config);
      if (res != ncclSuccess && res != ncclInProgress) {
        ncclGroupEnd();
        fail(res, "ncclCommInitRankConfig");
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
      if (c) aborted_ ? ncclCommAbort(c) : ncclCommDestroy(c);
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
      busy(what);
      if (done) return;
      expire(t0, what);
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }

 private:
  // Whether a communicator is still taking work; throws on its error.
  bool busy(const char* what) {
    bool busy = false;
    for (auto c : comms_) {
      ncclResult_t async = ncclSuccess;
      ncclResult_t res = ncclCommGetAsyncError(c, &async);
      if (res != ncclSuccess) fail(res, what);
      if (async == ncclInProgress)
        busy = true;
      else if (async != ncclSuccess)
        fail(async, what);
    }
    return busy;
  }
  void wait_ready(const char* what) {
    const auto t0 = std::chrono::steady_clock::now();
    while (busy(what)) {
      expire(t0, what);
      std::this_thread::yield();
    }
  }
  void expire(std::chrono::steady_clock::time_point t0, const char* what) {
    const double s = seconds_since(t0);
    if (s > kWaitS) {
      aborted_ = true;
      throw NcclError(std::string(what) + ": no progress in " + std::to_string(int(kWaitS)) +
                      " s: NCCL communicators aborted");
    }
  }
  [[noreturn]] void fail(ncclResult_t res, const char* what) {
    aborted_ = true;
    throw NcclError(std::string(what) + ": " + ncclGetErrorString(res) +
                    " (NCCL_DEBUG=WARN tells more)");
  }

  std::vector<int> devices_;
  std::vector<ncclComm_t> comms_;
  bool aborted_ = false;
};

// Every rank's collectives of one size captured once into a CUDA graph of
// its stream, so that the times are the GPUs', not the host's enqueue rate
// (docs/decisions/0024-nccl-collectives-as-graphs.md). Throws NcclError,
// every capture ended, where `enqueue` or CUDA fails.
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

// Every rank's send and receive buffers of `max_bytes`, stream and events.
struct Buffers {
  Buffers(const std::vector<int>& devs, size_t max_bytes)
      : devices(devs),
        send(devs.size()),
        recv(devs.size()),
        streams(devs.size()),
        start(devs.size()),
        stop(devs.size()) {
    for (size_t r = 0; r < devices.size(); ++r) {
      KB_CUDA_CHECK(cudaSetDevice(devices[r]));
      KB_CUDA_CHECK(cudaMalloc(&send[r], max_bytes));
      KB_CUDA_CHECK(cudaMalloc(&recv[r], max_bytes));
      KB_CUDA_CHECK(cudaStreamCreateWithFlags(&streams[r], cudaStreamNonBlocking));
      KB_CUDA_CHECK(cudaEventCreate(&start[r]));
      KB_CUDA_CHECK(cudaEventCreate(&stop[r]));
    }
  }
  ~Buffers() {
    for (size_t r = 0; r < devices.size(); ++r) {
      cudaSetDevice(devices[r]);
      if (send[r]) cudaFree(send[r]);
      if (recv[r]) cudaFree(recv[r]);
      if (streams[r]) cudaStreamDestroy(streams[r]);
      if (start[r]) cudaEventDestroy(start[r]);
      if (stop[r]) cudaEventDestroy(stop[r]);
    }
  }
  Buffers(const Buffers&) = delete;
  Buffers& operator=(const Buffers&) = delete;

  std::vector<int> devices;
  std::vector<void*> send, recv;
  std::vector<cudaStream_t> streams;
  std::vector<cudaEvent_t> start, stop;
};

// The slowest rank's time from its start event to its stop event, in ms.
double slowest_ms(const Buffers& b) {
  double worst = 0;
  for (size_t r = 0; r < b.devices.size(); ++r) {
    float ms = 0;
    KB_CUDA_CHECK(cudaEventElapsedTime(&ms, b.start[r], b.stop[r]));
    worst = std::max(worst, double(ms));
  }
  return worst;
}

// The ring's bandwidth per GPU in GB/s, or 0 when some neighbours have no
// peer access (`why` says which).
double ring_link_gbps(Buffers& b, size_t bytes, std::string* why) {
  const std::vector<int>& dev = b.devices;
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
      int sms = 0;
      KB_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev[r]));
      KB_CUDA_CHECK(cudaEventRecord(b.start[r], b.streams[r]));
      peer_write<<<sms * 2, 512, 0, b.streams[r]>>>(static_cast<const int4*>(b.send[r]),
                                                    static_cast<int4*>(b.recv[(r + 1) % n]), words);
      KB_CUDA_CHECK(cudaGetLastError());
      KB_CUDA_CHECK(cudaEventRecord(b.stop[r], b.streams[r]));
    }
    for (size_t r = 0; r < n; ++r) {
      KB_CUDA_CHECK(cudaSetDevice(dev[r]));
      KB_CUDA_CHECK(cudaEventSynchronize(b.stop[r]));
    }
    if (rep > 0) best = std::min(best, slowest_ms(b));  // the first is the warm-up
  }
  return double(words * sizeof(int4)) / (best * 1e-3) / 1e9;
}

// The ring's roofline_probe row; `*link` its GB/s (0: none).
Record link_row(const std::string& name, Buffers& b, const RunInfo& info, const GpuIdentity& gpu,
                double* link) {
  std::string why;
  const size_t bytes = size_t(256) << 20;
  *link = ring_link_gbps(b, bytes, &why);
  // The GPU ring per GPU: busbw's ceiling.
  Record r = base_row("roofline_probe", bytes, "link_bandwidth(GB/s)",
                      static_cast<int>(b.devices.size()), info, gpu);
  r.dtype = "int8";
  r.shape += ";for=" + name;
  r.variant = "ring_peer_write";
  if (*link > 0) {
    r.actual = *link;
  } else {
    r.status = status::skipped;
    r.message = why;
  }
  return r;
}

// The collective's calls on every rank.
struct Calls {
  bool reduce;
  Buffers& b;
  Comms& comms;
  const char* what() const { return reduce ? "ncclAllReduce" : "ncclAllGather"; }
  // `iters` collectives of `bytes` (all-gather: the gathered whole) on every rank.
  void enqueue(size_t bytes, int iters) const {
    const int n = static_cast<int>(b.devices.size());
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
          throw NcclError(std::string(what()) + ": " + ncclGetErrorString(res));
        }
      }
      comms.group_end(what());
    }
  }
};

// The check: rank r sends r+1 everywhere; all-reduce gives n(n+1)/2 (exact
// in bf16 for n <= 16), all-gather chunk r holds r+1. "" or what is wrong.
std::string check_point(const Calls& c, size_t per_rank, size_t bytes) {
  const auto& dev = c.b.devices;
  const int n = static_cast<int>(dev.size());
  for (int r = 0; r < n; ++r) {
    KB_CUDA_CHECK(cudaSetDevice(dev[r]));
    const float v = float(r + 1);  // a uniform fill over [v, v]: exactly v
    fill_uniform_bf16(static_cast<__nv_bfloat16*>(c.b.send[r]), per_rank, 0, v, v, c.b.streams[r]);
    KB_CUDA_CHECK(cudaMemsetAsync(c.b.recv[r], 0, bytes, c.b.streams[r]));
  }
  c.enqueue(bytes, 1);
  c.comms.wait_streams(c.b.streams, "the check's collective");
  for (int r = 0; r < n; ++r) {
    KB_CUDA_CHECK(cudaSetDevice(dev[r]));
    const size_t total = bytes / 2;
    for (size_t at : {size_t(0), total / 2, total - 1}) {
      __nv_bfloat16 h;
      KB_CUDA_CHECK(
          cudaMemcpy(&h, static_cast<__nv_bfloat16*>(c.b.recv[r]) + at, 2, cudaMemcpyDeviceToHost));
      const float want = c.reduce ? float(n * (n + 1) / 2) : float(at / per_rank + 1);
      if (__bfloat162float(h) != want)
        return "rank " + std::to_string(r) + " element " + std::to_string(at) + " is " +
               std::to_string(__bfloat162float(h)) + ", expected " + std::to_string(want);
    }
  }
  return "";
}

// The samples of one size, nccl-tests' way: `iters` back to back a sample,
// the slowest rank's time / iters.
std::vector<double> time_point(const Calls& c, size_t bytes, bool latency, bool quick) {
  const auto& dev = c.b.devices;
  const int n = static_cast<int>(dev.size());
  const int iters = latency ? 50 : 20;
  const int samples = quick ? 5 : latency ? 20 : 10;
  Graphs g(dev, c.b.streams, [&] { c.enqueue(bytes, iters); });
  auto launch = [&](bool timed) {  // every rank's graph, between its events when timed
    for (int r = 0; r < n; ++r) {
      KB_CUDA_CHECK(cudaSetDevice(dev[r]));
      if (timed) KB_CUDA_CHECK(cudaEventRecord(c.b.start[r], c.b.streams[r]));
      KB_CUDA_CHECK(cudaGraphLaunch(g.exec[r], c.b.streams[r]));
      if (timed) KB_CUDA_CHECK(cudaEventRecord(c.b.stop[r], c.b.streams[r]));
    }
  };
  // Warm-up: 5 launches and at least 100 ms of them (the clocks up and
  // NCCL's connections made before the first sample).
  const auto warm0 = std::chrono::steady_clock::now();
  for (int w = 0;
       w < 5 || std::chrono::steady_clock::now() - warm0 < std::chrono::milliseconds(100); ++w) {
    launch(false);
    c.comms.wait_streams(c.b.streams, "the warm-up");
  }
  std::vector<double> t;
  for (int s = 0; s < samples; ++s) {
    launch(true);
    c.comms.wait_streams(c.b.streams, "a timed collective");
    t.push_back(slowest_ms(c.b) * 1e-3 / iters);
  }
  return t;
}

// The rows of one size (`shape_bytes` as declared; `bytes` as moved).
void add_rows(std::vector<Record>& rows, const std::string& name, size_t shape_bytes, size_t bytes,
              int n, const std::vector<double>& t, double link, const RunInfo& info,
              const GpuIdentity& gpu) {
  const Summary sum = summarize(t);
  const double algbw = double(bytes) / sum.median / 1e9;
  const double factor = bus_factor(name, n);
  for (const char* m : metrics_of(shape_bytes)) {
    Record r = base_row(name, shape_bytes, m, n, info, gpu);
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
      const bool bus = metric == kBusBandwidth;
      r.actual = bus ? algbw * factor : algbw;
      if (link > 0) {
        r.roofline = bus ? link : link / factor;
        r.roofline_fraction = *r.actual / *r.roofline;
      }
    }
    rows.push_back(r);
  }
}

std::vector<Record> measure(const std::string& name, const std::vector<int>& devices,
                            const RunInfo& info, bool quick) {
  const int n = static_cast<int>(devices.size());
  const GpuIdentity gpu = gpu_identity(query_device(devices[0]));
  Buffers b(devices, size_t(kSizes.back()));
  double link = 0;
  std::vector<Record> rows = {link_row(name, b, info, gpu, &link)};
  Comms comms(devices);
  const Calls calls{name == kAllReduce, b, comms};
  for (const int64_t p : kSizes) {
    const size_t per_rank = calls.reduce ? p / 2 : p / 2 / n;
    const size_t bytes = calls.reduce ? p : per_rank * 2 * n;  // all-gather: n equal chunks
    const std::string bad = check_point(calls, per_rank, bytes);
    if (bad.empty())
      add_rows(rows, name, p, bytes, n, time_point(calls, bytes, small(p), quick), link, info, gpu);
    else
      add_status_rows(rows, name, p, n, status::incorrect, bad, info, gpu);
  }
  return rows;
}

#endif  // KBENCH_HAVE_NCCL

Experiment collective(const std::string& name, const std::string& doc) {
  AcrossDevices a;
  a.unavailable = unavailable;
  a.status_rows = [name](int ranks, const std::string& st, const std::string& message,
                         const RunInfo& info, const GpuIdentity& gpu) {
    std::vector<Record> rows;
    for (int64_t b : kSizes) add_status_rows(rows, name, b, ranks, st, message, info, gpu);
    return rows;
  };
  a.measure = [name](const std::vector<int>& devices, const RunInfo& info,
                     bool quick) -> std::vector<Record> {
#ifdef KBENCH_HAVE_NCCL
    return measure(name, devices, info, quick);
#else
    (void)devices, (void)info, (void)quick;
    throw std::runtime_error(unavailable(2));
#endif
  };
  return Experiment(name)
      .doc(doc +
           " across the run's GPUs (2 or more), bf16: latency (us) at 8-128 KiB (hidden "
           "4096 x 1..16 tokens), algbw and busbw at 256 MiB and 1 GiB")
      .axis("bytes", kSizes)
      .across_devices(std::move(a));
}

}  // namespace

}  // namespace kb

KB_EXPERIMENT(nccl_all_gather) { return kb::collective("nccl_all_gather", "NCCL all-gather"); }
KB_EXPERIMENT(nccl_all_reduce) { return kb::collective("nccl_all_reduce", "NCCL all-reduce"); }
