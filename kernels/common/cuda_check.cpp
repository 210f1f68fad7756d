#include "kernels/common/cuda_check.h"

#include <cublasLt.h>

namespace kb {

void throw_cuda_error(cudaError_t err, const char* call, const char* file, int line) {
  std::string msg = std::string(cudaGetErrorName(err)) + " (" + cudaGetErrorString(err) + ") in " +
                    call + " at " + file + ":" + std::to_string(line);
  if (err == cudaErrorMemoryAllocation) msg = "out of GPU memory: " + msg;
  throw CudaError(msg, err);
}

void throw_cublas_error(int status, const char* call, const char* file, int line) {
  throw CudaError(std::string(cublasLtGetStatusName(static_cast<cublasStatus_t>(status))) + " in " +
                      call + " at " + file + ":" + std::to_string(line),
                  cudaSuccess);
}

}  // namespace kb
