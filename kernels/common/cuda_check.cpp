#include "kernels/common/cuda_check.h"

#include <cublasLt.h>

namespace kb {

void throw_cuda_error(cudaError_t err, const char* call, const char* file, int line) {
  std::string msg = std::string(cudaGetErrorName(err)) + " (" + cudaGetErrorString(err) + ") in " +
                    call + " at " + file + ":" + std::to_string(line);
  if (err == cudaErrorMemoryAllocation) msg = "out of GPU memory: " + msg;
  throw CudaError(msg, err);
}

const char* cublas_status_name(int status) {
  switch (static_cast<cublasStatus_t>(status)) {
    case CUBLAS_STATUS_SUCCESS:
      return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED:
      return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED:
      return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE:
      return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH:
      return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR:
      return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED:
      return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR:
      return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED:
      return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_LICENSE_ERROR:
      return "CUBLAS_STATUS_LICENSE_ERROR";
    default:
      return "CUBLAS_STATUS_UNKNOWN";
  }
}

void throw_cublas_error(int status, const char* call, const char* file, int line) {
  throw CudaError(std::string(cublas_status_name(status)) + " in " + call + " at " + file + ":" +
                      std::to_string(line),
                  cudaSuccess);
}

}  // namespace kb
