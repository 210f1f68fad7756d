// The SwiGLU variants (variants.h): the U1 twins of the product's one-token
// SwiGLU kernels, compiled from its body with the product's template
// arguments but U = 1, and what launches, swaps and describes them.
#include <stdexcept>

#include "kernels/common/cuda_check.h"
#include "kernels/common/device_buffer.h"
#include "kernels/common/graph.h"
#include "kernels/gemv/dispatch.h"
#include "kernels/gemv/gemv.h"
#include "kernels/gemv/general_body.cuh"
#include "lab/swiglu_ab/variants.h"

namespace kb::lab::swiglu {

namespace {

using gemv::detail::KernelArgs;

// general.cu's gemv_kernel<INT8, 2, 2, true, 1, true> with U = 1.
template <bool INT8>
__global__ void __launch_bounds__(256) swiglu_u1(const KernelArgs a) {
  gemv::detail::body::gemv_body<INT8, 2, 1, true, 1, true>(a);
}

// general.cu's gemv_kernel_capped<MB, INT8, 2, 2, true, 1, true, false> with U = 1.
template <int MB, bool INT8>
__global__ void __launch_bounds__(128, MB) swiglu_u1_capped(const KernelArgs a) {
  gemv::detail::body::gemv_body<INT8, 2, 1, true, 1, true, false, false>(a);
}

template <bool INT8>
const void* unroll1_for(int min_blocks) {
  if (min_blocks == 0) return reinterpret_cast<const void*>(swiglu_u1<INT8>);
  if (min_blocks == 7) return reinterpret_cast<const void*>(swiglu_u1_capped<7, INT8>);
  if (min_blocks == 8) return reinterpret_cast<const void*>(swiglu_u1_capped<8, INT8>);
  throw std::invalid_argument("SwiGLU variant: min_blocks 0, 7 or 8, got " +
                              std::to_string(min_blocks));
}

// The only kernel node of g.
cudaGraphNode_t only_kernel_node(cudaGraph_t g) {
  size_t n = 0;
  KB_CUDA_CHECK(cudaGraphGetNodes(g, nullptr, &n));
  std::vector<cudaGraphNode_t> nodes(n);
  KB_CUDA_CHECK(cudaGraphGetNodes(g, nodes.data(), &n));
  cudaGraphNode_t found = nullptr;
  int kernels = 0;
  for (cudaGraphNode_t x : nodes) {
    cudaGraphNodeType t;
    KB_CUDA_CHECK(cudaGraphNodeGetType(x, &t));
    if (t == cudaGraphNodeTypeKernel) found = x, ++kernels;
  }
  if (kernels != 1)
    throw std::runtime_error("SwiGLU variant: gemv_swiglu captured " + std::to_string(kernels) +
                             " kernels, not 1");
  return found;
}

// op's gemv_swiglu captured with `twin` chosen for its shape: the product's launch.
Launch product_launch(const Operands& op, const gemv::General& twin) {
  gemv::TableEntry e;
  e.bucket.int8 = op.int8;
  e.bucket.use = gemv::Use::swiglu;
  e.bucket.rows_min = e.bucket.rows_max = 2 * op.F;
  e.bucket.row_bytes_min = e.bucket.row_bytes_max = op.K * (op.int8 ? 1 : 2);
  e.kernel = twin;
  e.origin = "lab/swiglu_ab";
  const std::vector<gemv::TableEntry> saved = gemv::installed_table();
  std::vector<gemv::TableEntry> table = saved;
  table.insert(table.begin(), e);
  gemv::set_table(table);
  CudaGraph g;
  try {
    g = capture_graph([&](cudaStream_t s) {
      gemv::gemv_swiglu(op.int8, op.W, op.scale, op.x, op.h, 1, op.F, op.K, op.eps, s);
    });
  } catch (...) {
    gemv::set_table(saved);
    throw;
  }
  gemv::set_table(saved);
  cudaKernelNodeParams p{};
  KB_CUDA_CHECK(cudaGraphKernelNodeGetParams(only_kernel_node(g.graph.get()), &p));
  Launch l;
  l.func = p.func;
  l.grid = p.gridDim;
  l.block = p.blockDim;
  l.args = *static_cast<const KernelArgs*>(p.kernelParams[0]);
  return l;
}

}  // namespace

std::string refusal(const gemv::General& g) {
  if (g.unroll != 1 && g.unroll != 2) return "a SwiGLU variant has unroll 1 or 2";
  return gemv::swiglu_refusal(product_twin(g));
}

gemv::General product_twin(gemv::General g) {
  g.unroll = 2;
  return g;
}

std::vector<gemv::General> variants_of(const gemv::General& base) {
  std::vector<gemv::General> out;
  for (int unroll : {2, 1})
    for (int min_blocks : {0, 7, 8}) {
      gemv::General g = base;
      g.unroll = unroll;
      g.min_blocks = min_blocks;
      out.push_back(g);
    }
  return out;
}

void Launch::enqueue(cudaStream_t s) const {
  void* params[] = {const_cast<KernelArgs*>(&args)};
  KB_CUDA_CHECK(cudaLaunchKernel(func, grid, block, params, 0, s));
}

Launch launch_of(const Operands& op, const gemv::General& g) {
  const std::string why = refusal(g);
  if (!why.empty())
    throw std::invalid_argument("SwiGLU variant " + gemv::kernel_name(g) + ": " + why);
  Launch l = product_launch(op, product_twin(g));
  if (g.unroll == 1) l.func = unroll1_kernel(op.int8, g.min_blocks);
  return l;
}

const void* product_kernel(bool int8, int64_t F, int64_t K, const gemv::General& g) {
  // Captured, never run: any aligned pointers serve.
  DeviceBuffer<uint8_t> any(256);
  auto* b = reinterpret_cast<bf16*>(any.get());
  const Operands op{int8, any.get(), b, b, b, F, K, 1e-5f};
  const std::string why = refusal(g);
  if (!why.empty())
    throw std::invalid_argument("SwiGLU variant " + gemv::kernel_name(g) + ": " + why);
  return product_launch(op, product_twin(g)).func;
}

const void* unroll1_kernel(bool int8, int min_blocks) {
  return int8 ? unroll1_for<true>(min_blocks) : unroll1_for<false>(min_blocks);
}

int swap_kernel(cudaGraph_t g, const void* from, const void* to) {
  size_t n = 0;
  KB_CUDA_CHECK(cudaGraphGetNodes(g, nullptr, &n));
  std::vector<cudaGraphNode_t> nodes(n);
  KB_CUDA_CHECK(cudaGraphGetNodes(g, nodes.data(), &n));
  int swapped = 0;
  for (cudaGraphNode_t x : nodes) {
    cudaGraphNodeType t;
    KB_CUDA_CHECK(cudaGraphNodeGetType(x, &t));
    if (t != cudaGraphNodeTypeKernel) continue;
    cudaKernelNodeParams p{};
    KB_CUDA_CHECK(cudaGraphKernelNodeGetParams(x, &p));
    if (p.func != from) continue;
    KernelArgs a =
        *static_cast<const KernelArgs*>(p.kernelParams[0]);  // a copy: p's own is replaced
    void* params[] = {&a};
    p.func = const_cast<void*>(to);
    p.kernelParams = params;
    p.extra = nullptr;
    KB_CUDA_CHECK(cudaGraphKernelNodeSetParams(x, &p));
    ++swapped;
  }
  return swapped;
}

Resources resources(const void* func, int threads) {
  cudaFuncAttributes attr{};
  KB_CUDA_CHECK(cudaFuncGetAttributes(&attr, func));
  Resources r;
  r.regs = attr.numRegs;
  r.local_bytes = attr.localSizeBytes;
  KB_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&r.blocks_per_sm, func, threads, 0));
  return r;
}

std::string text(const Resources& r) {
  return "regs=" + std::to_string(r.regs) + ";local=" + std::to_string(r.local_bytes) +
         ";blocks_sm=" + std::to_string(r.blocks_per_sm);
}

}  // namespace kb::lab::swiglu
