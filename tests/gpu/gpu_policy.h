// What a GPU test does where it cannot run, decided without CUDA so that
// the CPU tests check the decisions (tests/cpu/test_gpu_policy.cpp);
// tests/gpu/gpu_test_util.h applies them.
#pragma once

#include <cstdlib>
#include <string>

namespace kb::test {

// Whether a test that finds no usable CUDA device must fail rather than
// skip: KBENCH_REQUIRE_GPU set to anything but "" or "0" (tools/gpu-call.sh
// sets 1). On a GPU machine whose driver is broken, every GPU test would
// otherwise skip and the run would be green. `env_value`: the variable's
// value, nullptr when unset.
inline bool gpu_required(const char* env_value) {
  return env_value != nullptr && *env_value != '\0' && std::string(env_value) != "0";
}
inline bool gpu_required() { return gpu_required(std::getenv("KBENCH_REQUIRE_GPU")); }

// Whether compute capability major.minor is at least need_major.need_minor.
inline bool has_capability(int major, int minor, int need_major, int need_minor) {
  return major != need_major ? major > need_major : minor >= need_minor;
}

}  // namespace kb::test
