// The GPU a run measures: its properties, and its clocks read through NVML
// (loaded with dlopen, so the binary starts on machines without a driver and
// the CPU tests can run it).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <optional>
#include <string>

#include "suite/rows.h"

namespace kb {

struct DeviceInfo {
  int index = 0;
  std::string name;  // as the driver reports it: "NVIDIA H100 80GB HBM3"
  int sm_count = 0;
  size_t l2_bytes = 0;
  size_t mem_bytes = 0;
  std::string driver;  // "580.159.04" from NVML, else the CUDA driver API version
  std::string cuda;    // runtime version "13.0"
  std::string pci_bus_id;
  std::string uuid;  // "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", as nvidia-smi -L prints it
  cudaDeviceProp prop{};
};

// The GPU as rows name it.
inline GpuIdentity gpu_identity(const DeviceInfo& d) { return {d.name, d.driver, d.cuda}; }

// Number of usable CUDA devices; 0 with `why` set when there are none.
int cuda_device_count(std::string* why);
// Throws kb::CudaError.
DeviceInfo query_device(int index);

// Why the driver cannot serve this build's CUDA runtime, as one sentence
// with the fix, or "" when it can.
std::string driver_problem();

// The clocks and slowdown reasons through NVML; nullopt without NVML.
class ClockMonitor {
 public:
  explicit ClockMonitor(const std::string& pci_bus_id);
  bool available() const { return dev_ != nullptr; }
  std::optional<unsigned> sm_clock_mhz() const;
  std::optional<unsigned> mem_clock_mhz() const;
  std::optional<unsigned> max_sm_clock_mhz() const;
  // NVML's clock event reasons that slow the GPU (idle excluded).
  std::optional<uint64_t> slowdown_reasons() const;
  std::optional<std::string> driver_version() const;

 private:
  void* dev_ = nullptr;
};

}  // namespace kb
