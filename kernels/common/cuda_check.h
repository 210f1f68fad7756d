// Checked CUDA and cuBLASLt calls. Every call in kbench goes through these:
// a failure throws kb::CudaError with the call, file and line, and the
// engine turns it into a `failed` row while the run goes on.
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace kb {

struct CudaError : std::runtime_error {
  CudaError(const std::string& what, cudaError_t code) : std::runtime_error(what), code(code) {}
  cudaError_t code;  // cudaSuccess for non-runtime errors (cuBLASLt)
};

[[noreturn]] void throw_cuda_error(cudaError_t err, const char* call, const char* file, int line);
// `status` is a cublasStatus_t passed as int so this header needs no cuBLAS.
[[noreturn]] void throw_cublas_error(int status, const char* call, const char* file, int line);

}  // namespace kb

#define KB_CUDA_CHECK(call)                                                                 \
  do {                                                                                      \
    cudaError_t kb_err_ = (call);                                                           \
    if (kb_err_ != cudaSuccess) ::kb::throw_cuda_error(kb_err_, #call, __FILE__, __LINE__); \
  } while (0)

// After a kernel launch: launch-configuration errors show here.
#define KB_CHECK_LAUNCH() KB_CUDA_CHECK(cudaGetLastError())

#define KB_CUBLAS_CHECK(call)                                                     \
  do {                                                                            \
    int kb_st_ = static_cast<int>(call);                                          \
    if (kb_st_ != 0) ::kb::throw_cublas_error(kb_st_, #call, __FILE__, __LINE__); \
  } while (0)
