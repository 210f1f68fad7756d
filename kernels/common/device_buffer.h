// An owning, typed device allocation (cudaMalloc, checked; freed on scope
// exit). Out of memory throws kb::CudaError saying how many bytes were asked.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "kernels/common/cuda_check.h"

namespace kb {

template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t count) : count_(count) {
    if (count == 0) return;
    // count · sizeof(T) past SIZE_MAX would wrap to a small allocation.
    if (count > SIZE_MAX / sizeof(T)) {
      count_ = 0;
      throw CudaError("out of GPU memory: needs " + std::to_string(count) + " elements of " +
                          std::to_string(sizeof(T)) + " bytes, more than the address space",
                      cudaErrorMemoryAllocation);
    }
    cudaError_t err = cudaMalloc(reinterpret_cast<void**>(&ptr_), count * sizeof(T));
    if (err != cudaSuccess) {
      cudaGetLastError();  // clear the (non-sticky) allocation error
      ptr_ = nullptr;
      if (err == cudaErrorMemoryAllocation) {
        size_t free_b = 0, total_b = 0;
        cudaMemGetInfo(&free_b, &total_b);
        throw CudaError("out of GPU memory: needs " + std::to_string(count * sizeof(T)) +
                            " bytes, " + std::to_string(free_b) + " of " + std::to_string(total_b) +
                            " free",
                        err);
      }
      throw_cuda_error(err, "cudaMalloc", __FILE__, __LINE__);
    }
  }
  ~DeviceBuffer() {
    if (ptr_) cudaFree(ptr_);  // no throw from a destructor
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept { swap(o); }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    swap(o);
    return *this;
  }

  T* get() const { return ptr_; }
  size_t size() const { return count_; }
  size_t bytes() const { return count_ * sizeof(T); }

  void upload(const std::vector<T>& host) {
    if (host.size() != count_) throw std::invalid_argument("upload: size mismatch");
    KB_CUDA_CHECK(cudaMemcpy(ptr_, host.data(), bytes(), cudaMemcpyHostToDevice));
    // A pageable H2D cudaMemcpy may return before its DMA lands, on the
    // legacy stream, which the engine's non-blocking stream does not wait for.
    KB_CUDA_CHECK(cudaDeviceSynchronize());
  }
  std::vector<T> download() const {
    std::vector<T> host(count_);
    KB_CUDA_CHECK(cudaMemcpy(host.data(), ptr_, bytes(), cudaMemcpyDeviceToHost));
    return host;
  }
  // Rows `rows` of a row-major buffer of rows of `row_len` elements, in order.
  std::vector<T> download_rows(const std::vector<int64_t>& rows, size_t row_len) const {
    std::vector<T> host(rows.size() * row_len);
    for (size_t i = 0; i < rows.size(); ++i) {
      if (rows[i] < 0 || (static_cast<size_t>(rows[i]) + 1) * row_len > count_)
        throw std::out_of_range("download_rows: row " + std::to_string(rows[i]) +
                                " is outside the buffer");
      KB_CUDA_CHECK(cudaMemcpy(host.data() + i * row_len, ptr_ + rows[i] * row_len,
                               row_len * sizeof(T), cudaMemcpyDeviceToHost));
    }
    return host;
  }
  // Poison every byte (0xFF is a NaN in bf16/f16/f32) so an unwritten output
  // shows; synchronizes, as upload().
  void poison() {
    KB_CUDA_CHECK(cudaMemset(ptr_, 0xFF, bytes()));
    KB_CUDA_CHECK(cudaDeviceSynchronize());
  }

 private:
  void swap(DeviceBuffer& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(count_, o.count_);
  }
  T* ptr_ = nullptr;
  size_t count_ = 0;
};

}  // namespace kb
