// _copy_wave (lab): the ideal copy_wave kernel (suite/ideal_kernels.h)
// in each of its configurations, timed as every experiment is, to choose
// the rule copy_wave launches by (blocks of 128 threads, the fewest
// vectors a thread that keep the grid within 4 blocks per SM, streaming
// stores: chosen so with this sweep, suite/ideal_kernels.cu) from
// measurements: blocks of 64-512 threads x 1-8 vectors a
// thread (each thread loads all of its vectors before it stores them), at
// the small and mid-size copies where cudaMemcpy set the ladder and our
// copies stayed behind it; st.global.cs stores against default ones at 128
// threads. The roofline_fraction column reads each against the copy
// ladder, as roofline_ideal's rows are read (>= 0.97 attains it).
// Counted: bytes moved (read + written, half each); dtype int8 (raw bytes).
// Run with `kbench_lab run --filter '^(roofline_ideal|_copy_wave)$'` (a
// -DKBENCH_LAB=ON build).
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "kernels/common/cuda_check.h"
#include "kernels/common/device_buffer.h"
#include "suite/experiment.h"
#include "suite/ideal_kernels.h"

namespace {

class CopyWaveCase : public kb::Case {
 public:
  explicit CopyWaveCase(const kb::Point& p)
      : bytes_(static_cast<size_t>(p["bytes"])),
        threads_(static_cast<int>(p["threads"])),
        vectors_(static_cast<int>(p["vectors"])),
        streaming_(p.variant == "st_cs"),
        buf_(bytes_) {}

  void run(cudaStream_t s) override {
    kb::launch_copy_wave(buf_.get(), buf_.get() + bytes_ / 2, bytes_ / 2, threads_, vectors_,
                         streaming_, s);
  }

  void prepare(cudaStream_t s, uint64_t seed) override {
    KB_CUDA_CHECK(cudaMemsetAsync(buf_.get(), static_cast<int>(seed % 251) + 1, bytes_, s));
  }

  // The whole copy equals its source, a pattern that differs from byte to
  // byte (a copy from the wrong offset fails too).
  kb::Check check(cudaStream_t s, uint64_t seed) override {
    const size_t half = bytes_ / 2;
    std::vector<char> src(half), out(half);
    for (size_t i = 0; i < half; ++i) src[i] = static_cast<char>(i * 131 + i / 4093 + seed);
    KB_CUDA_CHECK(cudaStreamSynchronize(s));
    KB_CUDA_CHECK(cudaMemcpy(buf_.get(), src.data(), half, cudaMemcpyHostToDevice));
    KB_CUDA_CHECK(cudaMemset(buf_.get() + half, 0xff, half));
    KB_CUDA_CHECK(cudaDeviceSynchronize());
    run(s);
    KB_CUDA_CHECK(cudaStreamSynchronize(s));
    KB_CUDA_CHECK(cudaMemcpy(out.data(), buf_.get() + half, half, cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < half; ++i)
      if (out[i] != src[i])
        return kb::Check::fail("copy differs from its source at byte " + std::to_string(i) +
                               " of " + std::to_string(half));
    return kb::Check::pass("all " + std::to_string(half) + " bytes of the copy equal the source");
  }

 private:
  size_t bytes_;
  int threads_, vectors_;
  bool streaming_;
  kb::DeviceBuffer<char> buf_;
};

}  // namespace

KB_EXPERIMENT(copy_wave_sweep) {
  return kb::Experiment("_copy_wave")
      .doc(
          "copy_wave's configurations (threads a block, vectors a thread, store policy) at 64 KB "
          "to 4 MB, against the copy ladder")
      .axis("bytes", {int64_t(64) << 10, int64_t(256) << 10, int64_t(1) << 20, int64_t(4) << 20})
      .axis("threads", {64, 128, 256, 512})
      .axis("vectors", {1, 2, 4, 8})
      .dtypes({kb::DType::i8})
      .variants({"st", "st_cs"})
      // The store policy at one block size: its effect is not the grid's.
      .applies([](const kb::Point& p) { return p.variant == "st" || p["threads"] == 128; })
      // Both policies at threads=128: two keys (`...;vectors=4;store=st_cs`).
      .variant_in_shape("store")
      .metrics({kb::Metric::memory_bandwidth})
      .work([](const kb::Point& p) {
        kb::Work w;
        w.bytes = static_cast<double>(p["bytes"]);
        w.write_bytes = w.bytes / 2;
        w.bound = kb::Bound::copy;
        return w;
      })
      .make([](const kb::Point& p) { return std::make_unique<CopyWaveCase>(p); });
}
