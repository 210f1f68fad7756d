// The GEMV entry points (gemv.h): each checks its arguments, takes the
// configuration that dispatch.h chooses (or the caller's), and launches it
// through its family's launcher (families.h). Which kernel runs a shape,
// and why: dispatch.h and docs/notes/gemv.md.
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

// One cudaFuncSetAttribute per kernel, device and larger size (not one per
// launch); the attribute lives as long as the device's context.
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

[[noreturn]] void refuse(const std::string& what, const std::string& why) {
  throw std::invalid_argument(what + ": " + why);
}

// grid.x of a launch of c per selected expert, for every kernel but the
// bulk one (bulk_blocks): the one-load kernel's rows per block follow from
// K, the tensor-core kernels' from their 16-row tiles (2 rows: diagonal).
int64_t grid_x(bool int8, int64_t N, int64_t K, const Config& c, bool swiglu) {
  if (c.is<Tile>()) return ceil_div(N, 16);
  if (c.is<RowBlock>()) return swiglu ? N / 2 : N;
  if (const Dp4a* d = c.get<Dp4a>())
    return ceil_div(swiglu ? N / 2 : N, int64_t(d->rows_per_warp) * (d->warps / d->k_split));
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

int64_t bulk_blocks(bool int8, int64_t N, int64_t K, const Bulk& b, int n_sel, bool gather) {
  const int rs = bulk_rows_per_buffer(b, int8, N, K, gather);
  const int64_t units = (n_sel * N + rs - 1) / rs;
  return std::min<int64_t>(int64_t(device_sm_count()) * b.blocks_per_sm, units);
}

// What launch() takes, plus the modes of the other entry points: the
// SwiGLU (gemv_swiglu), the combine's slot weights and experts_ready
// (gather_gemv_combine), a gather over tokens' ids (token_ids, top).
struct Request {
  Operands op;
  bool swiglu = false;
  float eps = 0.f;
  const float* weights = nullptr;
  bool experts_ready = false;
  const int32_t* token_ids = nullptr;
  int top = 0;

  const char* what() const {
    return weights                ? "gather_gemv_combine"
           : token_ids && swiglu  ? "gather_tokens_swiglu"
           : token_ids            ? "gather_tokens_gemv"
           : op.experts && swiglu ? "gather_gemv_swiglu"
           : op.experts           ? "gather_gemv"
           : swiglu               ? "gemv_swiglu"
                                  : "gemv";
  }
};

// The combine, a gather over tokens and experts_ready: their own limits.
void check_modes(const Request& r, const Config& cfg) {
  const Operands& op = r.op;
  const std::string what = r.what();
  if (r.weights) {
    if (!op.experts || r.swiglu || op.tokens != 1)
      refuse(what, "needs expert ids, one token, no SwiGLU");
    if (op.n_sel < 1 || op.n_sel > kMaxCombine)
      refuse(what, "n_sel must be in [1, " + std::to_string(kMaxCombine) + "], got " +
                       std::to_string(op.n_sel));
    if (!cfg.is<General>()) refuse(what, "the general kernel only");
  }
  if (r.token_ids) {
    if (op.experts || r.weights || op.route || op.residual)
      refuse(what, "token ids only (no slot ids, weights, router or residual)");
    if (op.E < 1 || op.E > 64 || r.top < 1 || r.top > op.E)
      refuse(what, "needs 1 <= top <= E <= 64, got top " + std::to_string(r.top) + ", E " +
                       std::to_string(op.E));
    if (!cfg.is<General>()) refuse(what, "the general kernel only");
  }
  if (r.experts_ready && !r.weights) refuse(what, "experts_ready is the combine's only");
}

void check_route(const Request& rq, const Config& cfg) {
  const Operands& op = rq.op;
  const RouteBlocks& r = *op.route;
  const char* what = "gemv with router blocks";
  if (op.experts || rq.swiglu || rq.weights || op.tokens != 1)
    refuse(what, "a dense one-token gemv only");
  if (!carries_route_blocks(cfg))
    refuse(what, "the general kernel with 1 or 2 rows per warp and batches of 1 or 2 only");
  if (!r.w || !r.x || !r.fold || !r.ids || !r.logits || !r.partial || !r.counter || !r.pos ||
      (op.int8 && !r.scale))
    refuse(what, "null pointer");
  if (r.E < 1 || r.E > 64 || r.top < 1 || r.top > 2 || r.top > r.E || r.dim <= 0 ||
      r.dim % 8 != 0 || r.q != op.K || (r.hist_ids && r.hist_stride < r.E))
    refuse(what, "1..64 experts, top 1 or 2, dim a multiple of 8, q = K, hist_stride >= E");
  if (!aligned16(r.x) || !aligned16(r.fold) || !aligned16(r.w) || !aligned16(op.x))
    refuse(what, "x, a, F and W 16-byte aligned");
  if (r.x == op.y)  // the router blocks read x while the gemv's blocks write y
    refuse(what, "y must not be the router's x");
  if (32 * cfg.get<General>()->warps < r.E)  // the last block adds expert e's parts in thread e
    refuse(what, "a block needs a thread per expert");
}

// Token count, shape, pointers and expert ids, whatever the kernel.
void check_operands(const Request& r) {
  const Operands& op = r.op;
  const std::string what = r.what();
  if (op.tokens < 1 || op.tokens > kMaxTokens)
    refuse(what, "tokens must be in [1, " + std::to_string(kMaxTokens) + "], got " +
                     std::to_string(op.tokens));
  if (op.experts && op.tokens != 1) refuse(what, "one token");
  const int vec = op.int8 ? k_multiple_int8() : k_multiple_bf16();
  if (op.N <= 0 || op.K <= 0) refuse(what, "N and K must be > 0 (" + shape_text(op.N, op.K) + ")");
  if (op.K % vec != 0)
    refuse(what, "K must be a multiple of " + std::to_string(vec) + " for " +
                     (op.int8 ? "int8" : "bf16") + " weights (16-byte vectors), got " +
                     shape_text(op.N, op.K));
  if (op.N > 0x7fffffffLL || op.K > 0x7fffffffLL)
    refuse(what, "N and K must be < 2^31 (" + shape_text(op.N, op.K) + ")");
  if (!op.W || !op.x || !op.y) refuse(what, "null W, x or y");
  if (!aligned16(op.W) || !aligned16(op.x)) refuse(what, "W and x must be 16-byte aligned");
  if (op.int8 && !op.scale) refuse(what, "int8 weights need a scale");
  if (op.experts) {
    if (op.E <= 0) refuse("gather_gemv", "E must be > 0, got " + std::to_string(op.E));
    if (op.n_sel <= 0 || op.n_sel > 65535)
      refuse("gather_gemv", "n_sel must be in [1, 65535], got " + std::to_string(op.n_sel));
    if (op.residual && !r.weights) refuse(what, "no residual");
  }
}

void check_general(const General& g) {
  if (g.rows_per_warp != 1 && g.rows_per_warp != 2 && g.rows_per_warp != 4)
    refuse("gemv", "rows_per_warp must be 1, 2 or 4");
  if (g.unroll != 1 && g.unroll != 2 && g.unroll != 4 && g.unroll != 8)
    refuse("gemv", "unroll must be 1, 2, 4 or 8");
  if (g.warps < 1 || g.warps > 8) refuse("gemv", "warps_per_block must be in [1, 8]");
  if (g.k_split != 1 && g.k_split != 2 && g.k_split != 4 && g.k_split != 8)
    refuse("gemv", "k_split must be 1, 2, 4 or 8");
  if (g.warps % g.k_split != 0) refuse("gemv", "k_split must divide warps_per_block");
}

// The arguments every kernel takes; a.ks is the K split (the one-load
// kernel's follows from K, the bulk kernel's is 1).
KernelArgs kernel_args(const Request& r, const Config& cfg) {
  const Operands& op = r.op;
  const General* g = cfg.get<General>();
  const Mma* mma = cfg.get<Mma>();
  KernelArgs a{};
  a.W = op.W;
  a.scale = op.scale;
  a.experts = op.experts;
  a.E = op.E;
  a.x = op.x;
  a.y = op.y;
  a.residual = op.residual;
  a.N = static_cast<int>(op.N);
  a.K = static_cast<int>(op.K);
  a.ks = g ? g->k_split : mma ? mma->k_split : 1;
  a.tokens = op.tokens;
  a.eps = r.eps;
  a.n_sel = op.n_sel;
  a.rows_per_buffer = 1;
  a.weights = r.weights;
  a.experts_ready = r.experts_ready;
  a.route = op.route ? *op.route : RouteBlocks{};
  a.route_blocks = op.route ? route_blocks(op.route->dim, op.route->q) : 0;
  a.token_ids = r.token_ids;
  a.top = r.top;
  return a;
}

dim3 family_grid(const Request& r, const Config& cfg) {
  return dim3(static_cast<unsigned>(grid_x(r.op.int8, r.op.N, r.op.K, cfg, r.swiglu)),
              static_cast<unsigned>(r.op.n_sel));
}

// The family launches: false where the device lacks the kernel (bulk and
// tile: compute capability 9.0, mma: 8.0), after the configuration's checks.
bool launch_bulk(const Request& r, const Bulk& b, const Config& cfg, cudaStream_t stream) {
  const Operands& op = r.op;
  const int64_t vecs = op.K / (op.int8 ? k_multiple_int8() : k_multiple_bf16());
  const int64_t J = vecs / (32 * int64_t(b.warps));
  const int rs = bulk_rows_per_buffer(b, op.int8, op.N, op.K, op.experts != nullptr);
  const size_t smem = static_cast<size_t>(b.stages) * rs * op.K * (op.int8 ? 1 : 2);
  if (!device_has_pdl()) return false;
  KernelArgs a = kernel_args(r, cfg);
  a.stages = b.stages;
  a.bulk_rows = b.rows;
  a.rows_per_buffer = rs;
  a.counter = b.rows == 2 ? detail::next_bulk_counter() : nullptr;
  const int64_t blocks = bulk_blocks(op.int8, op.N, op.K, b, op.n_sel, op.experts != nullptr);
  detail::launch_bulk(op.int8, b.mma, b.warps, int(J), cfg.pdl, dim3(static_cast<unsigned>(blocks)),
                      smem, stream, a);
  return true;
}

bool launch_tile(const Request& r, const Tile& t, const Config& cfg, cudaStream_t stream) {
  const Operands& op = r.op;
  const int units = detail::mma_units(op.K, 4);
  const size_t smem =
      static_cast<size_t>(16 * detail::tile_row_stride(units) + units * 128);  // rows, x
  if (!device_has_pdl()) return false;
  detail::launch_tile(t.warps, cfg.pdl, family_grid(r, cfg), smem, stream, kernel_args(r, cfg));
  return true;
}

bool launch_mma(const Request& r, const Mma& m, const Config& cfg, cudaStream_t stream) {
  const Operands& op = r.op;
  const int unit_vec = m.diag ? 32 : 4;  // 16-byte vectors per unit of a row
  const size_t smem =
      static_cast<size_t>(detail::mma_units(op.K, unit_vec)) * unit_vec * 16 * 2;  // x in f16
  if (device_attribute<cudaDevAttrComputeCapabilityMajor>() < 8) return false;     // no mma.sync
  detail::launch_mma(m.unroll, m.depth, m.diag, cfg.pdl, family_grid(r, cfg), dim3(32 * m.warps),
                     smem, stream, kernel_args(r, cfg));
  return true;
}

bool launch_dp4a(const Request& r, const Dp4a& d, const Config& cfg, cudaStream_t stream) {
  const int cc = 10 * device_attribute<cudaDevAttrComputeCapabilityMajor>() +
                 device_attribute<cudaDevAttrComputeCapabilityMinor>();
  if (cc < 61) return false;  // no dp4a
  detail::launch_dp4a(d, r.swiglu, cfg.pdl, family_grid(r, cfg), stream, kernel_args(r, cfg));
  return true;
}

void launch_one_load(const Request& r, const OneLoad& o, const Config& cfg, cudaStream_t stream) {
  const Operands& op = r.op;
  const int64_t vecs = op.K / (op.int8 ? k_multiple_int8() : k_multiple_bf16());
  KernelArgs a = kernel_args(r, cfg);
  a.ks = static_cast<int>(vecs / 32);  // warps per row, from K alone
  detail::launch_one_load(op.int8, o.warps == 8 ? 8 : 4, a.ks, cfg.pdl, family_grid(r, cfg), stream,
                          a);
}

// Checks the request and launches cfg's kernel; where the device lacks it,
// general_config's choice with cfg's pdl.
void launch_impl(Request r, Config cfg, cudaStream_t stream) {
  check_modes(r, cfg);
  if (r.op.route) check_route(r, cfg);
  check_operands(r);
  Operands& op = r.op;
  if (!op.experts) op.n_sel = 1;
  if (!cfg.is<General>()) {  // the specialised families: one token, their limits (refusal)
    const std::string family = family_name(cfg.kernel);
    if (op.tokens != 1 || (r.swiglu && !cfg.is<RowBlock>() && !cfg.is<Dp4a>()))
      refuse(r.what(), family + " needs one token, no SwiGLU");
    const std::string why =
        refusal(cfg.kernel, op.int8, op.N, op.K, op.n_sel, op.experts != nullptr);
    if (!why.empty()) refuse(r.what(), family + ": " + why + ", got " + shape_text(op.N, op.K));
  }
  bool launched = true;
  if (const Bulk* b = cfg.get<Bulk>()) {  // run on 9.0+ only
    launched = launch_bulk(r, *b, cfg, stream);
  } else {
    if (const General* g = cfg.get<General>()) check_general(*g);
    if (r.swiglu && (op.N % 2 != 0 || op.residual))
      refuse(r.what(), "2·F rows (gate | up), no residual");
    if (cfg.pdl && !device_has_pdl()) cfg.pdl = false;
    if (const Tile* t = cfg.get<Tile>())
      launched = launch_tile(r, *t, cfg, stream);
    else if (const Mma* m = cfg.get<Mma>())
      launched = launch_mma(r, *m, cfg, stream);
    else if (const Dp4a* d = cfg.get<Dp4a>())
      launched = launch_dp4a(r, *d, cfg, stream);
    else if (const OneLoad* o = cfg.get<OneLoad>())
      launch_one_load(r, *o, cfg, stream);
    else if (const RowBlock* b = cfg.get<RowBlock>())
      detail::launch_row_block(b->loads, r.swiglu, cfg.pdl, family_grid(r, cfg),
                               dim3(static_cast<unsigned>(op.K / (4 * b->loads))), stream,
                               kernel_args(r, cfg));
    else  // combine: one grid row sums every slot; router blocks come first
      detail::launch_general(
          op.int8, *cfg.get<General>(), cfg.pdl, r.swiglu,
          dim3(static_cast<unsigned>(grid_x(op.int8, op.N, op.K, cfg, r.swiglu) +
                                     (op.route ? route_blocks(op.route->dim, op.route->q) : 0)),
               static_cast<unsigned>(r.weights     ? 1
                                     : r.token_ids ? op.E
                                                   : op.n_sel)),
          stream, kernel_args(r, cfg));
  }
  if (launched) return;
  Config g = general_config(op.int8, op.N, op.K, op.n_sel);
  g.pdl = cfg.pdl;
  launch_impl(r, g, stream);
}

Request request(bool int8, const void* W, const bf16* scale, const int32_t* experts, int n_sel,
                int E, const bf16* x, bf16* y, int64_t N, int64_t K, const bf16* residual,
                int tokens) {
  Request r;
  r.op = Operands{int8, W, scale, experts, n_sel, E, x, y, N, K, residual, tokens};
  return r;
}

Config with_pdl(Config c, bool pdl) {
  c.pdl = pdl;
  return c;
}

}  // namespace

int k_multiple_bf16() { return Traits<false>::kVec; }
int k_multiple_int8() { return Traits<true>::kVec; }

int64_t grid_blocks(bool int8, int64_t N, int64_t K, const Config& cfg, int n_sel, bool gather) {
  if (const Bulk* b = cfg.get<Bulk>()) return bulk_blocks(int8, N, K, *b, n_sel, gather);
  return grid_x(int8, N, K, cfg, false) * n_sel;
}

void launch(const Operands& op, const Config& cfg, cudaStream_t stream) {
  Request r;
  r.op = op;
  launch_impl(r, cfg, stream);
}

bool carries_route_blocks(const Config& cfg) {
  const General* g = cfg.get<General>();
  return g && (g->rows_per_warp == 1 || g->rows_per_warp == 2) &&
         (g->unroll == 1 || g->unroll == 2);
}

void gemv_swiglu(bool int8, const void* W, const bf16* scale, const bf16* X, bf16* H, int tokens,
                 int64_t F, int64_t K, float eps, cudaStream_t stream, bool pdl) {
  Request r = request(int8, W, scale, nullptr, 1, 0, X, H, swiglu_rows(F), K, nullptr, tokens);
  r.swiglu = true;
  r.eps = eps;
  launch_impl(r,
              with_pdl(tokens == 1 ? decode_swiglu_config(int8, F, K)
                                   : tokens_config(int8, r.op.N, K, tokens, true),
                       pdl),
              stream);
}

void gather_gemv_swiglu(bool int8, const void* W, const bf16* scale, const int32_t* experts,
                        int n_sel, int E, const bf16* x, bf16* H, int64_t F, int64_t K, float eps,
                        cudaStream_t stream, bool pdl, const Config* cfg) {
  if (!experts) throw std::invalid_argument("gather_gemv_swiglu: null experts");
  Request r = request(int8, W, scale, experts, n_sel, E, x, H, swiglu_rows(F), K, nullptr, 1);
  r.swiglu = true;
  r.eps = eps;
  launch_impl(r, with_pdl(cfg ? *cfg : decode_swiglu_config(int8, F, K, n_sel), pdl), stream);
}

void gather_gemv_combine(bool int8, const void* W, const bf16* scale, const int32_t* experts,
                         const float* weights, int n_sel, int E, const bf16* X, bf16* y, int64_t N,
                         int64_t K, const bf16* residual, cudaStream_t stream, bool pdl,
                         const Config* cfg, bool experts_ready) {
  if (!experts || !weights)
    throw std::invalid_argument("gather_gemv_combine: null experts or weights");
  Request r = request(int8, W, scale, experts, n_sel, E, X, y, N, K, residual, 1);
  r.weights = weights;
  r.experts_ready = experts_ready;
  launch_impl(r, with_pdl(cfg ? *cfg : decode_combine_config(int8, N, K, n_sel), pdl), stream);
}

// A gather over tokens: int8 weights with K a multiple of 64 on the tensor
// cores (tokens_mma.cu), K split over 2 warps from K = 8192 (the down
// projection: a warp's rows are then 128 an expert, too few warps
// otherwise); anything else on the general kernel, a block row an expert
// with all its tokens (2 rows a warp, batches of 2, pipelined).
static void gather_tokens(bool int8, const void* W, const bf16* scale, const int32_t* ids, int top,
                          int E, const bf16* X, bf16* Y, int tokens, int64_t N, int64_t K,
                          bool swiglu, float eps, cudaStream_t stream, bool pdl) {
  const std::string what = swiglu ? "gather_tokens_swiglu" : "gather_tokens_gemv";
  if (!ids) refuse(what, "null ids");
  Request r = request(int8, W, scale, nullptr, 1, E, X, Y, N, K, nullptr, tokens);
  r.swiglu = swiglu;
  r.eps = eps;
  r.token_ids = ids;
  r.top = top;
  check_modes(r, General{});  // before any CUDA call, whichever kernel runs
  check_operands(r);
  if (int8 && K % 64 == 0) {
    if (swiglu && N % 2 != 0) refuse(what, "2·F rows (gate | up)");
    if (device_attribute<cudaDevAttrComputeCapabilityMajor>() >= 8) {
      KernelArgs a = kernel_args(r, Config());
      a.ks = 0;
      a.n_sel = 0;
      a.rows_per_buffer = 0;
      return detail::launch_tokens_mma(swiglu, K >= 8192 ? 2 : 1, pdl && device_has_pdl(), stream,
                                       a);
    }
  }
  Config c = tokens_config(int8, N, K, kMaxTokens, swiglu);
  General& g = std::get<General>(c.kernel);
  g.rows_per_warp = 2;
  g.unroll = 2;
  g.pipeline = true;
  launch_impl(r, with_pdl(c, pdl), stream);
}

void gather_tokens_swiglu(bool int8, const void* W, const bf16* scale, const int32_t* ids, int top,
                          int E, const bf16* X, bf16* H, int tokens, int64_t F, int64_t K,
                          float eps, cudaStream_t stream, bool pdl) {
  gather_tokens(int8, W, scale, ids, top, E, X, H, tokens, swiglu_rows(F), K, true, eps, stream,
                pdl);
}

void gather_tokens_gemv(bool int8, const void* W, const bf16* scale, const int32_t* ids, int top,
                        int E, const bf16* X, bf16* Y, int tokens, int64_t N, int64_t K,
                        cudaStream_t stream, bool pdl) {
  gather_tokens(int8, W, scale, ids, top, E, X, Y, tokens, N, K, false, 0.f, stream, pdl);
}

void gemv_bf16(const bf16* W, const bf16* x, bf16* y, int64_t N, int64_t K, cudaStream_t stream,
               const bf16* residual, bool pdl) {
  launch_impl(request(false, W, nullptr, nullptr, 1, 0, x, y, N, K, residual, 1),
              with_pdl(default_config(false, N, K), pdl), stream);
}

void gemv_int8(const int8_t* W, const bf16* scale, const bf16* x, bf16* y, int64_t N, int64_t K,
               cudaStream_t stream, const bf16* residual, bool pdl) {
  launch_impl(request(true, W, scale, nullptr, 1, 0, x, y, N, K, residual, 1),
              with_pdl(default_config(true, N, K), pdl), stream);
}

void gemv_tokens(bool int8, const void* W, const bf16* scale, const bf16* X, bf16* Y, int tokens,
                 int64_t N, int64_t K, cudaStream_t stream, const bf16* residual, bool pdl) {
  launch_impl(request(int8, W, scale, nullptr, 1, 0, X, Y, N, K, residual, tokens),
              with_pdl(tokens_config(int8, N, K, tokens, false), pdl), stream);
}

void gather_gemv_bf16(const bf16* W, const int32_t* experts, int n_sel, int E, const bf16* x,
                      bf16* y, int64_t N, int64_t K, cudaStream_t stream) {
  if (!experts) throw std::invalid_argument("gather_gemv: null experts");
  launch_impl(request(false, W, nullptr, experts, n_sel, E, x, y, N, K, nullptr, 1),
              default_config(false, N, K, n_sel), stream);
}

void gather_gemv_int8(const int8_t* W, const bf16* scale, const int32_t* experts, int n_sel, int E,
                      const bf16* x, bf16* y, int64_t N, int64_t K, cudaStream_t stream) {
  if (!experts) throw std::invalid_argument("gather_gemv: null experts");
  launch_impl(request(true, W, scale, experts, n_sel, E, x, y, N, K, nullptr, 1),
              default_config(true, N, K, n_sel), stream);
}

}  // namespace kb::gemv
