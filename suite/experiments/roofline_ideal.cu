// roofline_ideal: the probe's ideal kernels (suite/ideal_kernels.h), timed
// in every run as the other experiments are, against the roofline their own
// ladder defines: each kind of traffic the roofline assumes has a point here,
// and the best variant of each must read >= 0.97 (docs/metrics.md "The
// roofline" lists the kernels and the off-rung sizes that check the
// interpolation). Counted: bytes moved (copy: read + written); dtype int8.
#include <cstring>
#include <memory>
#include <vector>

#include "kernels/common/device_buffer.h"
#include "kernels/common/graph.h"
#include "suite/chain_probe.h"
#include "suite/experiment.h"
#include "suite/ideal_kernels.h"

namespace {

constexpr int kLinks = 8;

bool is_chain(const std::string& v) { return v.find("_x8_") != std::string::npos; }

// The ideal kernel a variant names (the probe's lists: a kernel added there
// is known here); the chains are read_chunks.
kb::Ideal kernel_of(const std::string& v) {
  for (kb::Ideal k : kb::kIdealReads)
    if (v == kb::ideal_name(k)) return k;
  for (kb::Ideal k : kb::kIdealCopies)
    if (v == kb::ideal_name(k)) return k;
  return kb::Ideal::read_chunks;  // the chains
}

class IdealCase : public kb::Case {
 public:
  explicit IdealCase(const kb::Point& p)
      : variant_(p.variant),
        kernel_(kernel_of(p.variant)),
        bytes_(static_cast<size_t>(p["bytes"])),
        buf_(bytes_),
        sink_(1) {
    int dev = 0;
    KB_CUDA_CHECK(cudaGetDevice(&dev));
    KB_CUDA_CHECK(cudaDeviceGetAttribute(&sms_, cudaDevAttrMultiProcessorCount, dev));
    if (variant_ == "read_chunks_x8_graph")
      graph_ = kb::capture_graph([&](cudaStream_t s) {
        kb::launch_ideal_chain(buf_.get(), bytes_, kLinks, sms_, sink_.get(), s);
      });
  }

  void run(cudaStream_t s) override {
    if (graph_.exec)
      graph_.launch(s);
    else if (is_chain(variant_))
      kb::launch_ideal_chain(buf_.get(), bytes_, kLinks, sms_, sink_.get(), s);
    else
      kb::launch_ideal(kernel_, buf_.get(), buf_.get() + bytes_ / 2, bytes_, sms_, sink_.get(), s);
  }

  void prepare(cudaStream_t s, uint64_t seed) override { fill(s, seed); }

  // A read has nothing to compare; a copy must have copied: its first, middle
  // and last 4 KB (or all of it) equal the source's.
  kb::Check check(cudaStream_t s, uint64_t seed) override {
    fill(s, seed);
    if (!kb::ideal_writes(kernel_)) {
      run(s);
      KB_CUDA_CHECK(cudaStreamSynchronize(s));
      return kb::Check::pass("reads only: nothing to compare");
    }
    const size_t half = bytes_ / 2;
    KB_CUDA_CHECK(cudaMemsetAsync(buf_.get() + half, 0xff, half, s));
    run(s);
    KB_CUDA_CHECK(cudaStreamSynchronize(s));
    const size_t n = std::min<size_t>(4096, half);
    for (size_t off : {size_t(0), (half - n) / 2 / 16 * 16, half - n}) {
      std::vector<char> a(n), b(n);
      KB_CUDA_CHECK(cudaMemcpy(a.data(), buf_.get() + off, n, cudaMemcpyDeviceToHost));
      KB_CUDA_CHECK(cudaMemcpy(b.data(), buf_.get() + half + off, n, cudaMemcpyDeviceToHost));
      if (std::memcmp(a.data(), b.data(), n) != 0)
        return kb::Check::fail("copy differs from its source in the " + std::to_string(n) +
                               " bytes at offset " + std::to_string(off));
    }
    return kb::Check::pass("3 x " + std::to_string(n) + " bytes of the copy equal the source");
  }

 private:
  void fill(cudaStream_t s, uint64_t seed) {
    KB_CUDA_CHECK(cudaMemsetAsync(buf_.get(), static_cast<int>(seed % 251) + 1, bytes_, s));
  }

  std::string variant_;
  kb::Ideal kernel_;
  size_t bytes_;
  kb::DeviceBuffer<char> buf_;
  kb::DeviceBuffer<int> sink_;
  int sms_ = 0;
  kb::CudaGraph graph_;  // read_chunks_x8_graph
};

}  // namespace

KB_EXPERIMENT(roofline_ideal) {
  return kb::Experiment("roofline_ideal")
      .doc(
          "the probe's ideal read/copy kernels (one launch, and chains of 8 launches or graph "
          "nodes) against the roofline of their own ladder: each kind of traffic must reach "
          ">= 0.97")
      .axis("bytes", {int64_t(64) << 10, int64_t(1) << 20, int64_t(5) << 20, int64_t(16) << 20,
                      int64_t(40) << 20, int64_t(64) << 20, int64_t(112) << 20, int64_t(512) << 20,
                      int64_t(1280) << 20})
      .dtypes({kb::DType::i8})
      .variants({"read_sweep", "read_chunks", "copy_sweep", "copy_chunks", "copy_wave",
                 "copy_memcpy", "read_chunks_x8_stream", "read_chunks_x8_graph"})
      // Each ideal kernel is a point of its own at every size, and a key of
      // its own to the gate: `bytes=65536;kernel=read_sweep`.
      .variant_in_shape(kb::kIdealShapeLabel)
      // The chains at three sizes: 8 launches of 64 KB / 8 say nothing new.
      .applies([](const kb::Point& p) {
        const int64_t b = p["bytes"];
        return !is_chain(p.variant) || b == (int64_t(16) << 20) || b == (int64_t(64) << 20) ||
               b == (int64_t(512) << 20);
      })
      .metrics({kb::Metric::memory_bandwidth})
      .work([](const kb::Point& p) {
        kb::Work w;
        w.bytes = static_cast<double>(p["bytes"]);
        const bool copy = kb::ideal_writes(kernel_of(p.variant)) && !is_chain(p.variant);
        w.write_bytes = copy ? w.bytes / 2 : 0;
        w.bound = copy ? kb::Bound::copy : kb::Bound::read;
        w.launches = is_chain(p.variant) ? kLinks : 1;
        w.graph = p.variant == "read_chunks_x8_graph";
        return w;
      })
      .make([](const kb::Point& p) { return std::make_unique<IdealCase>(p); });
}
