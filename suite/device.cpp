#include "suite/device.h"

#include <dlfcn.h>

#include <cstdio>
#include <mutex>

#include "kernels/common/cuda_check.h"

namespace kb {

namespace {

// "13.0" from CUDA's 13000.
std::string version_text(int v) {
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

// The board's UUID in nvidia-smi's spelling, from the 16 bytes CUDA gives.
std::string format_gpu_uuid(const unsigned char b[16]) {
  char s[64];
  std::snprintf(s, sizeof s,
                "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                b[14], b[15]);
  return s;
}

}  // namespace

int cuda_device_count(std::string* why) {
  int n = 0;
  cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess) {
    if (why) *why = std::string(cudaGetErrorName(err)) + ": " + cudaGetErrorString(err);
    cudaGetLastError();
    return 0;
  }
  if (n == 0 && why) *why = "the driver reports 0 devices";
  return n;
}

std::string driver_problem() {
  int rt = 0, drv = 0;
  if (cudaRuntimeGetVersion(&rt) != cudaSuccess) rt = CUDART_VERSION;
  if (cudaDriverGetVersion(&drv) != cudaSuccess) drv = 0;
  cudaGetLastError();
  // The oldest Linux driver of CUDA 11, 12 and 13.
  const char* const floors[] = {"450", "525", "580"};
  const std::string floor = rt >= 11000 && rt < 14000 ? floors[rt / 1000 - 11] : "";
  const std::string needs = "kbench was built with CUDA " + version_text(rt) +
                            (floor.empty() ? std::string(", which needs a newer driver")
                                           : ", which needs NVIDIA driver " + floor + " or newer");
  if (drv == 0) return "no NVIDIA driver is loaded (libcuda.so.1 not found); " + needs;
  if (drv / 1000 < rt / 1000) {
    std::string name = ClockMonitor("").driver_version().value_or("");
    return "the NVIDIA driver" + (name.empty() ? std::string() : " " + name) +
           " is too old: it supports CUDA " + version_text(drv) + "; " + needs;
  }
  return "";
}

DeviceInfo query_device(int index) {
  DeviceInfo d;
  d.index = index;
  KB_CUDA_CHECK(cudaGetDeviceProperties(&d.prop, index));
  d.name = d.prop.name;
  d.sm_count = d.prop.multiProcessorCount;
  d.l2_bytes = static_cast<size_t>(d.prop.l2CacheSize);
  d.mem_bytes = d.prop.totalGlobalMem;
  char bus[64] = {0};
  KB_CUDA_CHECK(cudaDeviceGetPCIBusId(bus, sizeof bus, index));
  d.pci_bus_id = bus;
  d.uuid = format_gpu_uuid(reinterpret_cast<const unsigned char*>(d.prop.uuid.bytes));
  int rt = 0, drv = 0;
  KB_CUDA_CHECK(cudaRuntimeGetVersion(&rt));
  KB_CUDA_CHECK(cudaDriverGetVersion(&drv));
  d.cuda = version_text(rt);
  d.driver =
      ClockMonitor(d.pci_bus_id).driver_version().value_or("cuda-driver-" + version_text(drv));
  return d;
}

// ---- NVML through dlopen: the few entry points we need, declared here ----
namespace {

using nvml_ret = int;  // nvmlReturn_t; 0 = NVML_SUCCESS
using nvml_dev = void*;
constexpr int kClockSm = 1, kClockMem = 2;  // nvmlClockType_t
// nvmlClocksEventReasons: SwPowerCap | HwSlowdown | SwThermal | HwThermal | HwPowerBrake.
constexpr uint64_t kSlowdownMask = 0x4 | 0x8 | 0x20 | 0x40 | 0x80;

struct Nvml {
  bool ok = false;
  nvml_ret (*init)() = nullptr;
  nvml_ret (*by_bus)(const char*, nvml_dev*) = nullptr;
  nvml_ret (*clock)(nvml_dev, int, unsigned*) = nullptr;
  nvml_ret (*max_clock)(nvml_dev, int, unsigned*) = nullptr;
  nvml_ret (*reasons)(nvml_dev, unsigned long long*) = nullptr;
  nvml_ret (*driver)(char*, unsigned) = nullptr;
};

const Nvml& nvml() {
  static Nvml n;
  static std::once_flag once;
  std::call_once(once, [] {
    void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return;
    auto sym = [&](const char* name) { return dlsym(lib, name); };
    n.init = reinterpret_cast<nvml_ret (*)()>(sym("nvmlInit_v2"));
    n.by_bus = reinterpret_cast<nvml_ret (*)(const char*, nvml_dev*)>(
        sym("nvmlDeviceGetHandleByPciBusId_v2"));
    n.clock =
        reinterpret_cast<nvml_ret (*)(nvml_dev, int, unsigned*)>(sym("nvmlDeviceGetClockInfo"));
    n.max_clock =
        reinterpret_cast<nvml_ret (*)(nvml_dev, int, unsigned*)>(sym("nvmlDeviceGetMaxClockInfo"));
    void* r = sym("nvmlDeviceGetCurrentClocksEventReasons");
    if (!r) r = sym("nvmlDeviceGetCurrentClocksThrottleReasons");
    n.reasons = reinterpret_cast<nvml_ret (*)(nvml_dev, unsigned long long*)>(r);
    n.driver = reinterpret_cast<nvml_ret (*)(char*, unsigned)>(sym("nvmlSystemGetDriverVersion"));
    n.ok = n.init && n.by_bus && n.clock && n.init() == 0;
  });
  return n;
}

std::optional<unsigned> read_clock(void* dev, decltype(Nvml::clock) f, int type) {
  unsigned v = 0;
  if (!dev || !f || f(dev, type, &v) != 0) return std::nullopt;
  return v;
}

}  // namespace

ClockMonitor::ClockMonitor(const std::string& pci_bus_id) {
  const Nvml& n = nvml();
  if (!n.ok) return;
  nvml_dev d = nullptr;
  if (n.by_bus(pci_bus_id.c_str(), &d) == 0) dev_ = d;
}

std::optional<unsigned> ClockMonitor::sm_clock_mhz() const {
  return read_clock(dev_, nvml().clock, kClockSm);
}
std::optional<unsigned> ClockMonitor::mem_clock_mhz() const {
  return read_clock(dev_, nvml().clock, kClockMem);
}
std::optional<unsigned> ClockMonitor::max_sm_clock_mhz() const {
  return read_clock(dev_, nvml().max_clock, kClockSm);
}

std::optional<uint64_t> ClockMonitor::slowdown_reasons() const {
  unsigned long long v = 0;
  if (!dev_ || !nvml().reasons || nvml().reasons(dev_, &v) != 0) return std::nullopt;
  return v & kSlowdownMask;
}

std::optional<std::string> ClockMonitor::driver_version() const {
  char buf[96] = {0};
  if (!nvml().ok || !nvml().driver || nvml().driver(buf, sizeof buf) != 0) return std::nullopt;
  return std::string(buf);
}

}  // namespace kb
