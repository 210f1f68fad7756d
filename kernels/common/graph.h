// An owned stream, and CUDA graphs captured from one: capture_graph(enqueue)
// runs enqueue(stream) under capture, instantiates the graph and uploads it,
// every call checked (kb::CudaError). The graph and its exec live as long as
// the CudaGraph.
#pragma once

#include <cuda_runtime.h>

#include <memory>
#include <type_traits>

#include "kernels/common/cuda_check.h"

namespace kb {

// A non-blocking stream; destroyed once its work is done.
struct Stream {
  cudaStream_t s = nullptr;
  Stream() { KB_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)); }
  ~Stream() {
    cudaStreamSynchronize(s);
    cudaStreamDestroy(s);
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
};

struct GraphDeleter {
  void operator()(cudaGraph_t g) const { cudaGraphDestroy(g); }
  void operator()(cudaGraphExec_t e) const { cudaGraphExecDestroy(e); }
};

struct CudaGraph {
  std::unique_ptr<std::remove_pointer_t<cudaGraph_t>, GraphDeleter> graph;
  std::unique_ptr<std::remove_pointer_t<cudaGraphExec_t>, GraphDeleter> exec;

  void launch(cudaStream_t s) const { KB_CUDA_CHECK(cudaGraphLaunch(exec.get(), s)); }
  size_t nodes() const {  // 0 before a capture
    size_t n = 0;
    if (graph) KB_CUDA_CHECK(cudaGraphGetNodes(graph.get(), nullptr, &n));
    return n;
  }
};

// On a stream of its own (non-blocking, thread-local capture). If enqueue
// throws, the capture ends and its error is cleared before the rethrow. The
// upload makes the first launch as fast as the others.
template <typename Enqueue>
CudaGraph capture_graph(Enqueue&& enqueue) {
  const Stream own;
  cudaStream_t s = own.s;
  KB_CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  CudaGraph r;
  cudaGraph_t g = nullptr;
  try {
    enqueue(s);
  } catch (...) {
    cudaStreamEndCapture(s, &g);
    if (g) cudaGraphDestroy(g);
    cudaGetLastError();
    throw;
  }
  KB_CUDA_CHECK(cudaStreamEndCapture(s, &g));
  r.graph.reset(g);
  cudaGraphExec_t e = nullptr;
  KB_CUDA_CHECK(cudaGraphInstantiate(&e, g, 0));
  r.exec.reset(e);
  KB_CUDA_CHECK(cudaGraphUpload(e, s));
  KB_CUDA_CHECK(cudaStreamSynchronize(s));
  return r;
}

}  // namespace kb
