// The GEMV entry points (gemv.h): each checks its arguments, takes the
// configuration that dispatch.h chooses (or the caller's), and launches it
// through its family's launcher (families.h). The kernels: general.cu,
// one_load.cu, mma.cu, tile.cu, bulk.cu; which one runs a shape, and why:
// dispatch.h and docs/notes/gemv.md.
#include <algorithm>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>

#include "kernels/common/cuda_check.h"
#include "kernels/gemv/families.h"
#include "kernels/gemv/gemv.h"
#include "kernels/gemv/mma.cuh"

namespace kb::gemv {

using detail::KernelArgs;
using detail::kMaxCombine;
using detail::Traits;

namespace detail {

// Lets `kernel` use `smem` bytes of dynamic shared memory: one
// cudaFuncSetAttribute per kernel, device and larger size (not one per
// launch). The attribute lives as long as the device's context.
void allow_smem(void (*kernel)(KernelArgs), size_t smem) {
  static std::mutex mutex;
  static std::map<std::pair<const void*, int>, size_t> allowed;
  int dev = 0;
  KB_CUDA_CHECK(cudaGetDevice(&dev));
  std::lock_guard<std::mutex> lock(mutex);
  size_t& have = allowed[{reinterpret_cast<const void*>(kernel), dev}];
  if (smem <= have) return;  // (static shared memory counts too: set it for any size)
  KB_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     static_cast<int>(smem)));
  have = smem;
}

}  // namespace detail

namespace {

bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

// An attribute of the current device, asked once per device (0 for a
// device index past the cache).
template <cudaDeviceAttr A>
int device_attribute() {
  static int value[64];
  static bool asked[64];
  int dev = 0;
  KB_CUDA_CHECK(cudaGetDevice(&dev));
  if (dev < 0 || dev >= 64) return 0;
  if (!asked[dev]) {
    KB_CUDA_CHECK(cudaDeviceGetAttribute(&value[dev], A, dev));
    asked[dev] = true;
  }
  return value[dev];
}

// Programmatic dependent launch (and the bulk kernel) need compute capability 9.0.
bool device_has_pdl() { return device_attribute<cudaDevAttrComputeCapabilityMajor>() >= 9; }

int device_sm_count() { return std::max(1, device_attribute<cudaDevAttrMultiProcessorCount>()); }

std::string shape_text(int64_t N, int64_t K) {
  return "N=" + std::to_string(N) + ", K=" + std::to_string(K);
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// What runs where the device lacks the kernel cfg names (bulk and tile:
// compute capability 9.0, mma: 8.0): general_config's choice, with cfg's
// pdl.
Config general_fallback(const Config& cfg, bool int8, int64_t N, int64_t K, int n_sel) {
  Config g = general_config(int8, N, K, n_sel);
  g.pdl = cfg.pdl;
  return g;
}

// grid.x of a launch of c per selected expert, for every kernel but the
// bulk one (bulk_blocks): the one-load kernel's rows per block follow from
// K, the tensor-core kernels' from their 16-row tiles (2 rows: diagonal).
int64_t grid_x(bool int8, int64_t N, int64_t K, const Config& c, bool swiglu) {
  if (c.is<Tile>()) return ceil_div(N, 16);
  if (const Mma* m = c.get<Mma>())
    return ceil_div(ceil_div(N, m->diag ? 2 : 16), m->warps / m->k_split);
  if (const OneLoad* o = c.get<OneLoad>()) {
    const int64_t ks =
        std::max<int64_t>(1, K / (int8 ? k_multiple_int8() : k_multiple_bf16()) / 32);
    return ceil_div(N, (o->warps == 8 ? 8 : 4) / ks);
  }
  const General& g = *c.get<General>();
  const int64_t groups = swiglu ? N / 2 : ceil_div(N, g.rows_per_warp);
  return ceil_div(groups, g.warps / g.k_split);
}

// What launch() checks and launches, plus the SwiGLU mode (gemv_swiglu).
// `weights` (gather_gemv_combine): the slots' weights; the general kernel
// only; `experts_ready`: its KernelArgs::experts_ready.
void launch_impl(bool int8, const void* W, const bf16* scale, const int32_t* experts, int n_sel,
                 int E, const bf16* x, bf16* y, int64_t N, int64_t K, const bf16* residual,
                 Config cfg, cudaStream_t stream, int tokens, bool swiglu, float eps,
                 const float* weights = nullptr, bool experts_ready = false,
                 const RouteBlocks* route = nullptr, const int32_t* token_ids = nullptr,
                 int top = 0) {
  const char* what = weights               ? "gather_gemv_combine"
                     : token_ids && swiglu ? "gather_tokens_swiglu"
                     : token_ids           ? "gather_tokens_gemv"
                     : experts && swiglu   ? "gather_gemv_swiglu"
                     : experts             ? "gather_gemv"
                     : swiglu              ? "gemv_swiglu"
                                           : "gemv";
  if (weights) {
    if (!experts || swiglu || tokens != 1)
      throw std::invalid_argument("gather_gemv_combine: needs expert ids, one token, no SwiGLU");
    if (n_sel < 1 || n_sel > kMaxCombine)
      throw std::invalid_argument("gather_gemv_combine: n_sel must be in [1, " +
                                  std::to_string(kMaxCombine) + "], got " + std::to_string(n_sel));
    if (!cfg.is<General>())
      throw std::invalid_argument("gather_gemv_combine: the general kernel only");
  }
  if (token_ids) {
    if (experts || weights || route || residual)
      throw std::invalid_argument(std::string(what) +
                                  ": token ids only (no slot ids, weights, router or residual)");
    if (E < 1 || E > 64 || top < 1 || top > E)
      throw std::invalid_argument(std::string(what) + ": needs 1 <= top <= E <= 64, got top " +
                                  std::to_string(top) + ", E " + std::to_string(E));
    if (!cfg.is<General>())
      throw std::invalid_argument(std::string(what) + ": the general kernel only");
  }
  if (experts_ready && !weights)
    throw std::invalid_argument(std::string(what) + ": experts_ready is the combine's only");
  if (route) {
    const RouteBlocks& r = *route;
    if (experts || swiglu || weights || tokens != 1)
      throw std::invalid_argument("gemv with router blocks: a dense one-token gemv only");
    if (!carries_route_blocks(cfg))
      throw std::invalid_argument(
          "gemv with router blocks: the general kernel with 1 or 2 rows per warp and batches of "
          "1 or 2 only");
    if (!r.w || !r.x || !r.fold || !r.ids || !r.logits || !r.partial || !r.counter || !r.pos ||
        (int8 && !r.scale))
      throw std::invalid_argument("gemv with router blocks: null pointer");
    if (r.E < 1 || r.E > 64 || r.top < 1 || r.top > 2 || r.top > r.E || r.dim <= 0 ||
        r.dim % 8 != 0 || r.q != K || (r.hist_ids && r.hist_stride < r.E))
      throw std::invalid_argument(
          "gemv with router blocks: 1..64 experts, top 1 or 2, dim a multiple of 8, q = K, "
          "hist_stride >= E");
    if (!aligned16(r.x) || !aligned16(r.fold) || !aligned16(r.w) || !aligned16(x))
      throw std::invalid_argument("gemv with router blocks: x, a, F and W 16-byte aligned");
    if (r.x == y)  // the router blocks read x while the gemv's blocks write y
      throw std::invalid_argument("gemv with router blocks: y must not be the router's x");
    if (32 * cfg.get<General>()->warps < r.E)  // the last block adds expert e's parts in thread e
      throw std::invalid_argument("gemv with router blocks: a block needs a thread per expert");
  }
  if (tokens < 1 || tokens > kMaxTokens)
    throw std::invalid_argument(std::string(what) + ": tokens must be in [1, " +
                                std::to_string(kMaxTokens) + "], got " + std::to_string(tokens));
  if (experts && tokens != 1) throw std::invalid_argument(std::string(what) + ": one token");
  const int vec = int8 ? k_multiple_int8() : k_multiple_bf16();
  if (N <= 0 || K <= 0)
    throw std::invalid_argument(std::string(what) + ": N and K must be > 0 (" + shape_text(N, K) +
                                ")");
  if (K % vec != 0)
    throw std::invalid_argument(std::string(what) + ": K must be a multiple of " +
                                std::to_string(vec) + " for " + (int8 ? "int8" : "bf16") +
                                " weights (16-byte vectors), got " + shape_text(N, K));
  if (N > 0x7fffffffLL || K > 0x7fffffffLL)
    throw std::invalid_argument(std::string(what) + ": N and K must be < 2^31 (" +
                                shape_text(N, K) + ")");
  if (!W || !x || !y) throw std::invalid_argument(std::string(what) + ": null W, x or y");
  if (!aligned16(W) || !aligned16(x))
    throw std::invalid_argument(std::string(what) + ": W and x must be 16-byte aligned");
  if (int8 && !scale)
    throw std::invalid_argument(std::string(what) + ": int8 weights need a scale");
  if (experts) {
    if (E <= 0) throw std::invalid_argument("gather_gemv: E must be > 0, got " + std::to_string(E));
    if (n_sel <= 0 || n_sel > 65535)
      throw std::invalid_argument("gather_gemv: n_sel must be in [1, 65535], got " +
                                  std::to_string(n_sel));
    if (residual && !weights) throw std::invalid_argument(std::string(what) + ": no residual");
  } else {
    n_sel = 1;
  }
  if (const Bulk* b = cfg.get<Bulk>()) {  // checked first (no CUDA call), then run on 9.0+ only
    const int64_t vecs = K / vec, threads = 32 * int64_t(b->warps);
    const int64_t J = vecs % threads == 0 ? vecs / threads : 0;
    const int64_t row_bytes = K * (int8 ? 1 : 2);
    const int rs = bulk_rows_per_buffer(*b, int8, N, K, experts != nullptr);
    const size_t smem = static_cast<size_t>(b->stages) * rs * row_bytes;
    if (b->mma && (!int8 || rs != 2))
      throw std::invalid_argument(
          std::string(what) + ": bulk_mma needs int8 weights and 2 rows per buffer, got " +
          shape_text(N, K) + (int8 ? "" : " bf16") + ", " + std::to_string(rs) + " per buffer");
    if (tokens != 1 || swiglu || (b->warps != 8 && b->warps != 16) || rs < 1 || rs > 2 ||
        (rs == 2 && experts && N % 2 != 0) || (J != 1 && J != 2 && J != 4) || b->stages != 3 ||
        b->blocks_per_sm < 1 || b->blocks_per_sm > 4 || smem > (160u << 10) || b->rows < 0 ||
        b->rows > 2)
      throw std::invalid_argument(
          std::string(what) +
          ": bulk needs one token, no SwiGLU, 8 or 16 warps, K of 1, 2 or 4 "
          "vectors per thread, 3 stages of at most 160 KB in all, 1 or 2 rows per buffer "
          "(a gather's N even for 2), 1-4 blocks per SM and rows 0-2, got " +
          shape_text(N, K) + ", " + std::to_string(b->warps) + " warps, " +
          std::to_string(b->stages) + " stages");
    if (!device_has_pdl())  // compute capability < 9.0
      return launch_impl(int8, W, scale, experts, n_sel, E, x, y, N, K, residual,
                         general_fallback(cfg, int8, N, K, n_sel), stream, tokens, swiglu, eps);
    const int64_t blocks = bulk_blocks(int8, N, K, cfg, n_sel, experts != nullptr);
    unsigned int* counter = b->rows == 2 ? detail::next_bulk_counter() : nullptr;
    KernelArgs a{W,
                 scale,
                 experts,
                 E,
                 x,
                 y,
                 residual,
                 static_cast<int>(N),
                 static_cast<int>(K),
                 1,
                 1,
                 eps,
                 n_sel,
                 b->stages,
                 b->rows,
                 rs,
                 counter};
    const dim3 grid(static_cast<unsigned>(blocks));
    return detail::launch_bulk(int8, b->mma, b->warps, int(J), cfg.pdl, grid, smem, stream, a);
  }
  if (const General* g = cfg.get<General>()) {
    if (g->rows_per_warp != 1 && g->rows_per_warp != 2 && g->rows_per_warp != 4)
      throw std::invalid_argument("gemv: rows_per_warp must be 1, 2 or 4");
    if (g->unroll != 1 && g->unroll != 2 && g->unroll != 4 && g->unroll != 8)
      throw std::invalid_argument("gemv: unroll must be 1, 2, 4 or 8");
    if (g->warps < 1 || g->warps > 8)
      throw std::invalid_argument("gemv: warps_per_block must be in [1, 8]");
    if (g->k_split != 1 && g->k_split != 2 && g->k_split != 4 && g->k_split != 8)
      throw std::invalid_argument("gemv: k_split must be 1, 2, 4 or 8");
    if (g->warps % g->k_split != 0)
      throw std::invalid_argument("gemv: k_split must divide warps_per_block");
  }
  if (swiglu && (N % 2 != 0 || residual))
    throw std::invalid_argument(std::string(what) + ": 2·F rows (gate | up), no residual");
  if (cfg.pdl && !device_has_pdl()) cfg.pdl = false;
  // What every kernel but the bulk one takes; a.ks is the K split (the
  // one-load kernel's follows from K, below).
  const General* g = cfg.get<General>();
  const Mma* mma = cfg.get<Mma>();
  KernelArgs a{W,
               scale,
               experts,
               E,
               x,
               y,
               residual,
               static_cast<int>(N),
               static_cast<int>(K),
               g     ? g->k_split
               : mma ? mma->k_split
                     : 1,
               tokens,
               eps,
               n_sel,
               0,
               0,
               1,
               nullptr,
               weights,
               experts_ready,
               route ? *route : RouteBlocks{},
               route ? route_blocks(route->dim, route->q) : 0,
               token_ids,
               top};
  if (const Tile* t = cfg.get<Tile>()) {
    const int units = detail::mma_units(K, 4);
    const size_t smem =
        static_cast<size_t>(16 * detail::tile_row_stride(units) + units * 128);  // rows, x
    if (!int8 || tokens != 1 || swiglu || K > 8192 || (t->warps != 4 && t->warps != 8))
      throw std::invalid_argument(std::string(what) +
                                  ": tile needs int8 weights, one token, no SwiGLU, K <= 8192 and "
                                  "blocks of 4 or 8 warps, got " +
                                  shape_text(N, K) + (int8 ? "" : " bf16") + ", " +
                                  std::to_string(t->warps) + " warps");
    if (!device_has_pdl())  // compute capability < 9.0
      return launch_impl(int8, W, scale, experts, n_sel, E, x, y, N, K, residual,
                         general_fallback(cfg, int8, N, K, n_sel), stream, tokens, swiglu, eps);
    const dim3 grid(static_cast<unsigned>(grid_x(int8, N, K, cfg, swiglu)),
                    static_cast<unsigned>(n_sel));
    return detail::launch_tile(t->warps, cfg.pdl, grid, smem, stream, a);
  }
  if (mma) {
    const int unit_vec = mma->diag ? 32 : 4;  // 16-byte vectors per unit of a row
    const size_t smem =
        static_cast<size_t>(detail::mma_units(K, unit_vec)) * unit_vec * 16 * 2;  // x in f16
    const bool built_unroll = mma->diag ? mma->unroll == 1 || mma->unroll == 2 || mma->unroll == 4
                                        : mma->unroll == 2 || mma->unroll == 4 || mma->unroll == 8;
    if (!int8 || tokens != 1 || swiglu || smem > (96u << 10) || !built_unroll || mma->depth < 2 ||
        mma->depth > 3 || (mma->depth == 3 && mma->unroll == 8) ||
        (mma->diag && (mma->unroll == 8 || (mma->depth == 3 && mma->unroll != 2))) ||
        mma->warps < 1 || mma->warps > 8 || mma->k_split < 1 || mma->warps % mma->k_split != 0)
      throw std::invalid_argument(
          std::string(what) +
          ": mma needs int8 weights, one token, no SwiGLU, K <= 49152, unroll 2, 4 or 8, "
          "2 or 3 batches in flight (2 at unroll 8; diag: unroll 1, 2 or 4, "
          "3 batches at unroll 2 only) and k_split dividing 1-8 warps, got " +
          shape_text(N, K) + (int8 ? "" : " bf16"));
    if (device_attribute<cudaDevAttrComputeCapabilityMajor>() < 8)  // no mma.sync
      return launch_impl(int8, W, scale, experts, n_sel, E, x, y, N, K, residual,
                         general_fallback(cfg, int8, N, K, n_sel), stream, tokens, swiglu, eps);
    const dim3 grid(static_cast<unsigned>(grid_x(int8, N, K, cfg, swiglu)),
                    static_cast<unsigned>(n_sel));
    return detail::launch_mma(mma->unroll, mma->depth, mma->diag, cfg.pdl, grid,
                              dim3(32 * mma->warps), smem, stream, a);
  }
  if (const OneLoad* o = cfg.get<OneLoad>()) {
    const int64_t vecs = K / vec;
    if (tokens != 1 || swiglu || (vecs != 32 && vecs != 64 && vecs != 128))
      throw std::invalid_argument(std::string(what) +
                                  ": one_load needs one token, no SwiGLU and K of 32, 64 or 128 "
                                  "16-byte vectors, got " +
                                  shape_text(N, K));
    a.ks = static_cast<int>(vecs / 32);  // warps per row, from K alone
    const int warps = o->warps == 8 ? 8 : 4;
    const dim3 grid(static_cast<unsigned>(grid_x(int8, N, K, cfg, swiglu)),
                    static_cast<unsigned>(n_sel));
    return detail::launch_one_load(int8, warps, a.ks, cfg.pdl, grid, stream, a);
  }
  // combine: one grid row sums every slot; router blocks come first.
  const dim3 grid(static_cast<unsigned>(grid_x(int8, N, K, cfg, swiglu) + a.route_blocks),
                  static_cast<unsigned>(weights     ? 1
                                        : token_ids ? E
                                                    : n_sel));
  detail::launch_general(int8, *g, cfg.pdl, swiglu, grid, stream, a);
}

}  // namespace

int k_multiple_bf16() { return Traits<false>::kVec; }
int k_multiple_int8() { return Traits<true>::kVec; }

int64_t bulk_blocks(bool int8, int64_t N, int64_t K, const Config& cfg, int n_sel, bool gather) {
  const Bulk* b = cfg.get<Bulk>();
  if (!b) throw std::invalid_argument("gemv::bulk_blocks: not a bulk configuration");
  const int rs = bulk_rows_per_buffer(*b, int8, N, K, gather);
  const int64_t units = (n_sel * N + rs - 1) / rs;
  return std::min<int64_t>(int64_t(device_sm_count()) * b->blocks_per_sm, units);
}

int64_t grid_blocks(bool int8, int64_t N, int64_t K, const Config& cfg, int n_sel, bool gather) {
  if (cfg.is<Bulk>()) return bulk_blocks(int8, N, K, cfg, n_sel, gather);
  return grid_x(int8, N, K, cfg, false) * n_sel;
}

void launch(const Operands& op, const Config& cfg, cudaStream_t stream) {
  launch_impl(op.int8, op.W, op.scale, op.experts, op.n_sel, op.E, op.x, op.y, op.N, op.K,
              op.residual, cfg, stream, op.tokens, false, 0.f, nullptr, false, op.route);
}

bool carries_route_blocks(const Config& cfg) {
  const General* g = cfg.get<General>();
  return g && (g->rows_per_warp == 1 || g->rows_per_warp == 2) &&
         (g->unroll == 1 || g->unroll == 2);
}

void gemv_swiglu(bool int8, const void* W, const bf16* scale, const bf16* X, bf16* H, int tokens,
                 int64_t F, int64_t K, float eps, cudaStream_t stream, bool pdl) {
  Config c = tokens_config(int8, 2 * F, K, tokens, true);
  c.pdl = pdl;
  launch_impl(int8, W, scale, nullptr, 1, 0, X, H, 2 * F, K, nullptr, c, stream, tokens, true, eps);
}

void gather_gemv_swiglu(bool int8, const void* W, const bf16* scale, const int32_t* experts,
                        int n_sel, int E, const bf16* x, bf16* H, int64_t F, int64_t K, float eps,
                        cudaStream_t stream, bool pdl, const Config* cfg) {
  if (!experts) throw std::invalid_argument("gather_gemv_swiglu: null experts");
  Config c = cfg ? *cfg : gather_swiglu_config(int8, F, K);
  c.pdl = pdl;
  launch_impl(int8, W, scale, experts, n_sel, E, x, H, 2 * F, K, nullptr, c, stream, 1, true, eps);
}

void gather_gemv_combine(bool int8, const void* W, const bf16* scale, const int32_t* experts,
                         const float* weights, int n_sel, int E, const bf16* X, bf16* y, int64_t N,
                         int64_t K, const bf16* residual, cudaStream_t stream, bool pdl,
                         const Config* cfg, bool experts_ready) {
  if (!experts || !weights)
    throw std::invalid_argument("gather_gemv_combine: null experts or weights");
  Config c = cfg ? *cfg : combine_config(int8, N, K);
  c.pdl = pdl;
  launch_impl(int8, W, scale, experts, n_sel, E, X, y, N, K, residual, c, stream, 1, false, 0.f,
              weights, experts_ready);
}

// A gather over tokens: int8 weights with K a multiple of 64 on the tensor
// cores (tokens_mma.cu: the 8 tokens are an mma's columns), K split over 2
// warps from K = 8192 (the down projection, 14336: a warp's rows are then
// 128 a expert, too few warps for the GPU otherwise); anything else on
// the general kernel, a block row an expert with all its tokens (its several-token
// configuration's K split, 2 rows a warp, batches of 2).
static void gather_tokens(bool int8, const void* W, const bf16* scale, const int32_t* ids, int top,
                          int E, const bf16* X, bf16* Y, int tokens, int64_t N, int64_t K,
                          bool swiglu, float eps, cudaStream_t stream, bool pdl) {
  const char* what = swiglu ? "gather_tokens_swiglu" : "gather_tokens_gemv";
  if (!ids) throw std::invalid_argument(std::string(what) + ": null ids");
  // Refused before any CUDA call (the general kernel's launch checks the rest).
  if (E < 1 || E > 64 || top < 1 || top > E)
    throw std::invalid_argument(std::string(what) + ": needs 1 <= top <= E <= 64, got top " +
                                std::to_string(top) + ", E " + std::to_string(E));
  if (tokens < 1 || tokens > kMaxTokens)
    throw std::invalid_argument(std::string(what) + ": tokens must be in [1, " +
                                std::to_string(kMaxTokens) + "], got " + std::to_string(tokens));
  if (int8 && K > 0 && K % 64 == 0) {
    if (N <= 0 || N > 0x7fffffffLL || K > 0x7fffffffLL || (swiglu && N % 2 != 0))
      throw std::invalid_argument(std::string(what) + ": bad shape " + shape_text(N, K));
    if (!W || !X || !Y || !scale || !aligned16(W) || !aligned16(X))
      throw std::invalid_argument(std::string(what) +
                                  ": null W, scale, x or y, or W or x not 16-byte aligned");
  }
  if (int8 && K > 0 && K % 64 == 0 && device_attribute<cudaDevAttrComputeCapabilityMajor>() >= 8) {
    KernelArgs a{};
    a.W = W;
    a.scale = scale;
    a.E = E;
    a.x = X;
    a.y = Y;
    a.N = static_cast<int>(N);
    a.K = static_cast<int>(K);
    a.tokens = tokens;
    a.eps = eps;
    a.token_ids = ids;
    a.top = top;
    return detail::launch_tokens_mma(swiglu, K >= 8192 ? 2 : 1, pdl && device_has_pdl(), stream, a);
  }
  Config c = tokens_config(int8, N, K, kMaxTokens, swiglu);
  General& g = std::get<General>(c.kernel);
  g.rows_per_warp = 2;
  g.unroll = 2;
  g.pipeline = true;
  c.pdl = pdl;
  launch_impl(int8, W, scale, nullptr, 1, E, X, Y, N, K, nullptr, c, stream, tokens, swiglu, eps,
              nullptr, false, nullptr, ids, top);
}

void gather_tokens_swiglu(bool int8, const void* W, const bf16* scale, const int32_t* ids, int top,
                          int E, const bf16* X, bf16* H, int tokens, int64_t F, int64_t K,
                          float eps, cudaStream_t stream, bool pdl) {
  gather_tokens(int8, W, scale, ids, top, E, X, H, tokens, 2 * F, K, true, eps, stream, pdl);
}

void gather_tokens_gemv(bool int8, const void* W, const bf16* scale, const int32_t* ids, int top,
                        int E, const bf16* X, bf16* Y, int tokens, int64_t N, int64_t K,
                        cudaStream_t stream, bool pdl) {
  gather_tokens(int8, W, scale, ids, top, E, X, Y, tokens, N, K, false, 0.f, stream, pdl);
}

void gemv_bf16(const bf16* W, const bf16* x, bf16* y, int64_t N, int64_t K, cudaStream_t stream,
               const bf16* residual, bool pdl) {
  Config c = default_config(false, N, K);
  c.pdl = pdl;
  launch_impl(false, W, nullptr, nullptr, 1, 0, x, y, N, K, residual, c, stream, 1, false, 0.f);
}

void gemv_int8(const int8_t* W, const bf16* scale, const bf16* x, bf16* y, int64_t N, int64_t K,
               cudaStream_t stream, const bf16* residual, bool pdl) {
  Config c = default_config(true, N, K);
  c.pdl = pdl;
  launch_impl(true, W, scale, nullptr, 1, 0, x, y, N, K, residual, c, stream, 1, false, 0.f);
}

void gemv_tokens(bool int8, const void* W, const bf16* scale, const bf16* X, bf16* Y, int tokens,
                 int64_t N, int64_t K, cudaStream_t stream, const bf16* residual, bool pdl) {
  Config c = tokens_config(int8, N, K, tokens, false);
  c.pdl = pdl;
  launch_impl(int8, W, scale, nullptr, 1, 0, X, Y, N, K, residual, c, stream, tokens, false, 0.f);
}

void gather_gemv_bf16(const bf16* W, const int32_t* experts, int n_sel, int E, const bf16* x,
                      bf16* y, int64_t N, int64_t K, cudaStream_t stream) {
  if (!experts) throw std::invalid_argument("gather_gemv: null experts");
  launch_impl(false, W, nullptr, experts, n_sel, E, x, y, N, K, nullptr,
              default_config(false, N, K, n_sel), stream, 1, false, 0.f);
}

void gather_gemv_int8(const int8_t* W, const bf16* scale, const int32_t* experts, int n_sel, int E,
                      const bf16* x, bf16* y, int64_t N, int64_t K, cudaStream_t stream) {
  if (!experts) throw std::invalid_argument("gather_gemv: null experts");
  launch_impl(true, W, scale, experts, n_sel, E, x, y, N, K, nullptr,
              default_config(true, N, K, n_sel), stream, 1, false, 0.f);
}

}  // namespace kb::gemv
