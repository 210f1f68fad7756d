// The bulk-copy GEMV kernel (compute capability 9.0): a ring of rows in
// shared memory, filled by the TMA engine, keeps HBM busy with fewer warps
// than the register kernels need; float consumers (bf16 rows of 8 KB) or
// tensor-core ones (int8 rows of 16 KB). docs/notes/gemv.md,
// docs/decisions/0027-gemv-bulk-kernel.md.
#include <atomic>
#include <cmath>
#include <stdexcept>

#include "kernels/common/cuda_check.h"
#include "kernels/common/tma.cuh"
#include "kernels/gemv/families.h"
#include "kernels/gemv/mma.cuh"

namespace kb::gemv::detail {

namespace {

// A producer warp streams rows (of all selected experts: row g = s·N + n)
// into a ring of `stages` buffers with cp.async.bulk, completing on each
// buffer's `full` mbarrier, so the bytes in flight cost no registers. Rows
// come from a contiguous share, every gridDim-th row, or (dynamic) a
// counter shared by the grid, so that faster SMs take more (Bulk::rows).
// WARPS consumer warps hold x in registers, dot each buffer and arrive on
// its `empty` mbarrier; the producer then adds the warps' sums, writes y
// (scale and residual copied to shared memory with cp.async when the
// buffer was requested) and refills it. An id outside [0, E): rows never
// copied, written as NaN. The end: a buffer whose phase has `last` set.
// MMA (int8, 2 rows per buffer): consumers multiply as the mma kernel's
// diagonal variant, x in registers as f16 scaled by 2^e.
constexpr int kBulkSlots = 1024;  // dynamic row counters, one per launch in flight (round robin)
__device__ unsigned int g_bulk_counters[kBulkSlots]
                                       [2];  // next unit, tickets; zero between launches

// A consumer warp's walk round the ring: per buffer in order, wait for it
// to fill; stop at the end, else consume(s, the buffer), which arrives on
// empty[s] when done with it.
template <int STAGES, class F>
__device__ __forceinline__ void for_each_buffer(const uint64_t (&full)[STAGES],
                                                const int (&last)[STAGES],
                                                const unsigned char* ring, uint32_t buf_bytes,
                                                F&& consume) {
  for (int base = 0;; base += STAGES) {
    bool end = false;
#pragma unroll
    for (int s = 0; s < STAGES; ++s) {
      if (!end) {
        mbar_wait(smem_u32(&full[s]), (base / STAGES) & 1);
        end = last[s];
        if (!end)
          consume(s, reinterpret_cast<const int4*>(ring + static_cast<size_t>(s) * buf_bytes));
      }
    }
    if (end) break;
  }
}

// Row r's scale and residual (lane r·WARPS writes the row), each as the
// aligned bf16 pair holding it, copied to shared memory with cp.async
// (waited for at finish(s)): loads into registers stalled the int8 ring.
__device__ __forceinline__ void epilogue_pair(uint32_t* dst, const bf16* base, int64_t idx,
                                              int64_t count) {
  const int64_t even = idx & ~int64_t(1);
  if (even + 1 < count) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(smem_u32(dst)), "l"(base + even)
                 : "memory");
  } else {  // the last element of an odd count: one plain load (once per kernel at most)
    const uint32_t v = reinterpret_cast<const unsigned short*>(base)[idx];
    *dst = v | (v << 16);
  }
}

// The tensor-core consumers (int8, 2 rows per buffer): the mma kernel's
// diagonal variant, x in registers as f16 scaled by 2^e.
template <int WARPS, int J, int STAGES, int kMaxRs>
__device__ __forceinline__ void mma_consumers(const KernelArgs& a, const uint64_t (&full)[STAGES],
                                              uint64_t (&empty)[STAGES], const int (&last)[STAGES],
                                              float (&red)[STAGES][kMaxRs][WARPS],
                                              const unsigned char* ring, uint32_t buf_bytes,
                                              uint32_t row_bytes, int tid) {
  constexpr int kConsumers = 32 * WARPS;
  const int lane = tid & 31, warp = tid >> 5;
  __shared__ float x_max[WARPS];
  wait_for_previous_grid();  // x may be the previous grid's output
  int4 xr[J][2];             // x at the lane's vectors: 16 bf16 each
  float m = 0.f;
#pragma unroll
  for (int j = 0; j < J; ++j)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      xr[j][h] =
          load16<kCoherent>(reinterpret_cast<const int4*>(a.x) + 2 * (tid + j * kConsumers) + h);
      m = max_abs_bf16x8(xr[j][h], m);
    }
  m = warp_max(m);
  if (lane == 0) x_max[warp] = m;
  asm volatile("bar.sync 1, %0;" ::"n"(kConsumers) : "memory");  // the consumer warps only
#pragma unroll
  for (int w = 0; w < WARPS; ++w) m = fmaxf(m, x_max[w]);
  const int e = x_exponent(m);
  const float up1 = pow2(e / 2), up2 = pow2(e - e / 2);
  uint32_t xh[J][8];
#pragma unroll
  for (int j = 0; j < J; ++j)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int4 f = bf16x8_to_f16x8(xr[j][h], up1, up2);
      xh[j][4 * h + 0] = uint32_t(f.x);
      xh[j][4 * h + 1] = uint32_t(f.y);
      xh[j][4 * h + 2] = uint32_t(f.z);
      xh[j][4 * h + 3] = uint32_t(f.w);
    }
  const int g = lane >> 2, t = lane & 3;
  const int row_vecs = static_cast<int>(row_bytes / 16);
  for_each_buffer<STAGES>(full, last, ring, buf_bytes, [&](int s, const int4* buf) {
    // Rows 0 and 1 of the buffer (a short last unit: row 1 is stale,
    // finite as any int8, and never written out).
    float c0[4] = {0.f, 0.f, 0.f, 0.f}, c1[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
    for (int j = 0; j < J; ++j)
      mma_unit(buf[tid + j * kConsumers], buf[row_vecs + tid + j * kConsumers], xh[j], c0, c1);
    float sumA, sumB;
    diag_sums(c0, c1, g, t, sumA, sumB);
    if (lane == 0) {
      red[s][0][warp] = times_pow2(sumA, -e);
      red[s][1][warp] = times_pow2(sumB, -e);
      mbar_arrive(smem_u32(&empty[s]));  // release: the sums and the reads of buffer s
    }
  });
}

// The float consumers: x in registers, a dot product per row of a buffer.
template <bool INT8, int WARPS, int J, int STAGES, int kMaxRs>
__device__ __forceinline__ void float_consumers(const KernelArgs& a, const uint64_t (&full)[STAGES],
                                                uint64_t (&empty)[STAGES],
                                                const int (&last)[STAGES],
                                                float (&red)[STAGES][kMaxRs][WARPS],
                                                const unsigned char* ring, uint32_t buf_bytes,
                                                uint32_t row_bytes, int rs, int tid) {
  constexpr int kVec = Traits<INT8>::kVec;
  constexpr int kConsumers = 32 * WARPS;
  const int lane = tid & 31, warp = tid >> 5;
  wait_for_previous_grid();  // x may be the previous grid's output
  float xf[J][kVec];
#pragma unroll
  for (int j = 0; j < J; ++j)
    load_x<INT8>(reinterpret_cast<const int4*>(a.x), tid + j * kConsumers, xf[j]);
  const int row_vecs = static_cast<int>(row_bytes / 16);
  for_each_buffer<STAGES>(full, last, ring, buf_bytes, [&](int s, const int4* buf) {
    // The rows of the buffer (a short last unit: the rest is stale
    // and never written out).
    float acc[kMaxRs][4];
#pragma unroll
    for (int r = 0; r < kMaxRs; ++r) {
      acc[r][0] = acc[r][1] = acc[r][2] = acc[r][3] = 0.f;
      if (r < rs) {
#pragma unroll
        for (int j = 0; j < J; ++j)
          dot<INT8>(buf[r * row_vecs + tid + j * kConsumers], xf[j], acc[r]);
      }
    }
    float sum[kMaxRs];
#pragma unroll
    for (int r = 0; r < kMaxRs; ++r) sum[r] = (acc[r][0] + acc[r][1]) + (acc[r][2] + acc[r][3]);
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
#pragma unroll
      for (int r = 0; r < kMaxRs; ++r) sum[r] += __shfl_xor_sync(0xffffffffu, sum[r], o);
    if (lane == 0) {
#pragma unroll
      for (int r = 0; r < kMaxRs; ++r) red[s][r][warp] = sum[r];
      mbar_arrive(smem_u32(&empty[s]));  // release: the sums and the reads of buffer s
    }
  });
}

template <bool INT8, int WARPS, int J, int STAGES, bool MMA = false>
__global__ void __launch_bounds__(32 * (WARPS + 1)) gemv_bulk_kernel(const KernelArgs a) {
  static_assert(!MMA || INT8, "the tensor-core consumers take int8 weights");
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  using Wt = typename Traits<INT8>::W;
  constexpr int kVec = Traits<INT8>::kVec;
  constexpr int kConsumers = 32 * WARPS;  // threads; warp WARPS is the producer
  constexpr int kMaxRs =
      32 / WARPS < 2 ? 32 / WARPS : 2;  // rows per buffer the producer warp reduces
  extern __shared__ __align__(128) unsigned char ring[];  // STAGES × rs × row bytes
  __shared__ __align__(8) uint64_t full[STAGES], empty[STAGES];
  __shared__ float red[STAGES][kMaxRs][WARPS];
  __shared__ int last[STAGES];                 // the buffer's phase carries no rows: the end
  __shared__ uint32_t epi[STAGES][kMaxRs][3];  // scale and residual pairs, their halves (producer)
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int64_t N = a.N, K = a.K, total = int64_t(a.n_sel) * N;
  const int rs = a.rows_per_buffer;  // 1 or 2 (<= kMaxRs); 2: N even in a gather
  const int64_t units = (total + rs - 1) / rs;
  const uint32_t row_bytes = static_cast<uint32_t>(K * sizeof(Wt));
  const uint32_t buf_bytes = row_bytes * rs;

  if (tid == 0) {
#pragma unroll
    for (int s = 0; s < STAGES; ++s) {
      mbar_init<1>(smem_u32(&full[s]));
      mbar_init<WARPS>(smem_u32(&empty[s]));
    }
    mbar_init_fence();
  }
  __syncthreads();

  if (warp == WARPS) {  // the producer
    // Nothing the producer reads from global memory is waited for when it
    // is requested: the counter's next unit is requested one trip round the
    // ring before it is used, in the buffer's own register (the stage loop
    // is unrolled); scales and residuals go to shared memory (operands).
    const Wt* W = static_cast<const Wt*>(a.W);
    unsigned int* counter = a.counter;
    const int64_t G = gridDim.x;
    const int64_t share_begin = units * blockIdx.x / G, share_end = units * (blockIdx.x + 1) / G;
    int64_t unit[STAGES];       // the unit in buffer s (rows unit·rs ..), -1: none
    int it[STAGES];             // its index among the block's units (the mbarrier phase)
    unsigned int next[STAGES];  // dynamic: the counter value for buffer s's next unit
#pragma unroll
    for (int s = 0; s < STAGES; ++s) {
      unit[s] = -1;
      it[s] = 0;
      next[s] = 0;
    }
    // Dynamic: the first STAGES units of each block are fixed (block b takes
    // units b·STAGES + s); counter value c is unit G·STAGES + c.
    auto unit_of = [&](int i, unsigned int c) -> int64_t {
      int64_t u;
      if (counter)
        u = i < STAGES ? blockIdx.x * int64_t(STAGES) + i : G * STAGES + c;
      else if (a.bulk_rows == 0)
        u = share_begin + i < share_end ? share_begin + i : units;
      else
        u = blockIdx.x + int64_t(i) * G;
      return u < units ? u : -1;
    };
    // The expert of unit u's rows (one read per unit, by lane 0, for the
    // whole warp; every row of a unit has the same one): 0 for a gemv, -1
    // past the end or for an id outside [0, E).
    auto unit_expert = [&](int64_t u) -> int64_t {
      if (u < 0) return -1;
      if (!a.experts) return 0;
      int e = lane == 0 ? a.experts[u * rs / N] : 0;
      e = __shfl_sync(0xffffffffu, e, 0);
      return e >= 0 && e < a.E ? e : -1;
    };
    // Lane 0: unit u into buffer s (u < 0: the end). A unit's rows are
    // consecutive rows of one expert (a gather's N is a multiple of rs).
    auto request = [&](int s, int64_t u, int64_t e) {  // e: unit_expert(u)
      if (lane != 0) return;
      const uint32_t bar = smem_u32(&full[s]);
      last[s] = u < 0;
      const int64_t g = u * rs;
      if (e < 0) {  // nothing to read: complete the buffer's phase without bytes
        mbar_arrive(bar);
        return;
      }
      const uint32_t bytes = row_bytes * static_cast<uint32_t>(g + rs <= total ? rs : total - g);
      const Wt* src = W + (a.experts ? e * N + g % N : g) * K;
      mbar_arrive_expect_tx(bar, bytes);
      bulk_copy_to_shared(smem_u32(ring + static_cast<size_t>(s) * buf_bytes), src, bytes, bar);
    };
    // Buffer s's scales and residuals, used at finish(s); e: unit_expert(u).
    auto operands = [&](int s, int64_t u, int64_t e) {
#pragma unroll
      for (int r = 0; r < kMaxRs; ++r) {
        const int64_t g = u * rs + r;
        if (r < rs && lane == r * WARPS && g < total) {
          const int64_t sidx = a.experts ? e * N + g % N : g;
          epi[s][r][2] = static_cast<uint32_t>((sidx & 1) | ((g & 1) << 1));  // which halves
          if (e < 0)
            epi[s][r][0] = 0x7fc07fc0u;  // NaN rows
          else if (a.scale)
            epilogue_pair(&epi[s][r][0], a.scale, sidx, a.experts ? a.E * N : N);
          else
            epi[s][r][0] = 0x3f803f80u;  // 1
          if (a.residual)
            epilogue_pair(&epi[s][r][1], a.residual, g, N);  // gemv only: g < N
          else
            epi[s][r][1] = 0u;
        }
      }
      asm volatile("cp.async.commit_group;" ::: "memory");
    };
    // Buffer s's rows, once every consumer is done: lane r·WARPS + w holds
    // warp w's sum of row r; segments of WARPS lanes add up.
    auto finish = [&](int s, bool drain) {
      mbar_wait(smem_u32(&empty[s]), (it[s] / STAGES) & 1);
      if (drain)
        asm volatile("cp.async.wait_group 0;" ::: "memory");
      else
        asm volatile("cp.async.wait_group %0;" ::"n"(STAGES - 1) : "memory");
      const int r_lane = lane / WARPS;
      float v = r_lane < rs ? red[s][r_lane][lane % WARPS] : 0.f;
#pragma unroll
      for (int o = WARPS / 2; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
#pragma unroll
      for (int r = 0; r < kMaxRs; ++r) {
        const int64_t g = unit[s] * rs + r;
        if (r < rs && lane == r * WARPS && g < total) {
          const uint32_t sp = epi[s][r][0], rp = epi[s][r][1], odd = epi[s][r][2];
          const float sc = __uint_as_float((odd & 1) ? sp & 0xffff0000u : sp << 16);
          const float rv = __uint_as_float((odd & 2) ? rp & 0xffff0000u : rp << 16);
          a.y[g] = __float2bfloat16_rn(v * sc + rv);
        }
      }
      unit[s] = -1;
    };
    // Weights never change: the first units are requested before waiting for
    // the previous grid, except in a gather, whose ids that grid may write.
    if (a.experts) wait_for_previous_grid();
    bool done = false;
    int64_t expert[STAGES];  // unit_expert(unit[s])
#pragma unroll
    for (int s = 0; s < STAGES; ++s) {
      expert[s] = -1;
      if (!done) {
        const int64_t u = unit_of(s, 0);
        if (counter && u >= 0 && lane == 0) next[s] = atomicAdd(counter, 1u);
        unit[s] = u;
        it[s] = s;
        expert[s] = unit_expert(u);
        request(s, u, expert[s]);
        done = u < 0;
      }
    }
    if (!a.experts) wait_for_previous_grid();
#pragma unroll
    for (int s = 0; s < STAGES; ++s)
      if (unit[s] >= 0) operands(s, unit[s], expert[s]);
    for (int base = STAGES; !done; base += STAGES) {
#pragma unroll
      for (int s = 0; s < STAGES; ++s) {
        if (!done) {
          finish(s, false);  // frees buffer s
          const int64_t u = unit_of(base + s, __shfl_sync(0xffffffffu, next[s], 0));
          if (counter && u >= 0 && lane == 0) next[s] = atomicAdd(counter, 1u);
          unit[s] = u;
          it[s] = base + s;
          const int64_t e = unit_expert(u);
          if (u >= 0) operands(s, u, e);
          request(s, u, e);
          done = u < 0;
        }
      }
    }
    // Once every counter value it asked for has come back (`and` reads
    // them all), the block takes a ticket; the last ticket's block resets
    // the counter for the next launch at its end.
    unsigned int ticket = 0;
    if (counter && lane == 0) {
      unsigned int all = 0, zero;
#pragma unroll
      for (int s = 0; s < STAGES; ++s) all |= next[s];
      asm volatile("and.b32 %0, %1, 0;" : "=r"(zero) : "r"(all));
      ticket = atomicAdd(counter + 1, 1u + zero);
    }
#pragma unroll
    for (int s = 0; s < STAGES; ++s)
      if (unit[s] >= 0) finish(s, true);
    if (counter && lane == 0 && ticket == gridDim.x - 1) {
      counter[0] = 0u;
      counter[1] = 0u;
    }
  } else if constexpr (MMA) {
    mma_consumers<WARPS, J, STAGES, kMaxRs>(a, full, empty, last, red, ring, buf_bytes, row_bytes,
                                            tid);
  } else {
    float_consumers<INT8, WARPS, J, STAGES, kMaxRs>(a, full, empty, last, red, ring, buf_bytes,
                                                    row_bytes, rs, tid);
  }
  let_next_grid_launch();
#else
  __trap();  // launched only on compute capability 9.0+ (launch_impl)
#endif
}

template <bool INT8, int WARPS, int J, bool MMA>
void launch_bulk_stages(int stages, bool pdl, dim3 grid, size_t smem, cudaStream_t s,
                        const KernelArgs& a) {
  auto go = [&](auto kernel) {
    allow_smem(kernel, smem);
    launch_maybe_pdl_smem(pdl, kernel, grid, dim3(32 * (WARPS + 1)), smem, s, a);
  };
  // Rings of 3 buffers, the compiled ones (docs/decisions/0050).
  if (stages == 3) return go(gemv_bulk_kernel<INT8, WARPS, J, 3, MMA>);
  throw std::invalid_argument("gemv: the bulk kernel has rings of 3 buffers");
}

template <bool INT8, int WARPS, bool MMA = false>
void launch_bulk_j(int J, bool pdl, dim3 grid, size_t smem, cudaStream_t s, const KernelArgs& a) {
  switch (J) {
    case 1:
      return launch_bulk_stages<INT8, WARPS, 1, MMA>(a.stages, pdl, grid, smem, s, a);
    case 2:
      return launch_bulk_stages<INT8, WARPS, 2, MMA>(a.stages, pdl, grid, smem, s, a);
    case 4:
      return launch_bulk_stages<INT8, WARPS, 4, MMA>(a.stages, pdl, grid, smem, s, a);
  }
  throw std::invalid_argument("gemv: the bulk kernel needs K of 1, 2 or 4 vectors per thread");
}

}  // namespace

void launch_bulk(bool int8, bool mma, int warps, int J, bool pdl, dim3 grid, size_t smem,
                 cudaStream_t s, const KernelArgs& a) {
  if (int8 && mma)
    return warps == 16 ? launch_bulk_j<true, 16, true>(J, pdl, grid, smem, s, a)
                       : launch_bulk_j<true, 8, true>(J, pdl, grid, smem, s, a);
  if (int8)
    return warps == 16 ? launch_bulk_j<true, 16>(J, pdl, grid, smem, s, a)
                       : launch_bulk_j<true, 8>(J, pdl, grid, smem, s, a);
  return warps == 16 ? launch_bulk_j<false, 16>(J, pdl, grid, smem, s, a)
                     : launch_bulk_j<false, 8>(J, pdl, grid, smem, s, a);
}

unsigned int* next_bulk_counter() {
  static std::atomic<unsigned> launches{0};
  unsigned int* counters = nullptr;
  KB_CUDA_CHECK(cudaGetSymbolAddress(reinterpret_cast<void**>(&counters), g_bulk_counters));
  return counters + 2 * (launches.fetch_add(1) % kBulkSlots);
}

}  // namespace kb::gemv::detail
