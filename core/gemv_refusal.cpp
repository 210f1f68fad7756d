// gemv_refusal.h; the kernels behind each rule: kernels/gemv/*.cu.
#include "core/gemv_refusal.h"

#include <algorithm>
#include <initializer_list>
#include <variant>
#include <vector>

namespace kb::gemv {

namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Past rows this much longer than a bucket's shortest, refusal() decides
// alike: no kernel but the general one takes rows of more than 48 KB.
constexpr int64_t kScanRowBytes = int64_t(64) << 10;

// More bytes than any GEMV reads (the tuning table's max_bytes has this
// cap too): the scan's products stay within int64_t.
constexpr int64_t kMaxGemvBytes = int64_t(1) << 50;

// The distinct reasons, "; "-joined.
std::string joined(const std::vector<std::string>& why) {
  std::string out;
  for (const auto& w : why) out += (out.empty() ? "" : "; ") + w;
  return out;
}

// The general kernel's warps and K split as its launch takes them
// (kernels/gemv/gemv.cu, check_general): 1 to 8 warps, a K split of 1, 2, 4
// or 8 that divides them. The SwiGLU and the combine are general kernels too.
bool warps_and_split_ok(const General& g) {
  const bool split = g.k_split == 1 || g.k_split == 2 || g.k_split == 4 || g.k_split == 8;
  return g.warps >= 1 && g.warps <= 8 && split && g.warps % g.k_split == 0;
}
constexpr const char* kWarpsAndSplit = "warps 1..8, a K split of 1, 2, 4 or 8 that divides them";

}  // namespace

int bulk_rows_per_buffer(const Bulk& k, bool int8, int64_t N, int64_t K, bool gather) {
  if (k.rows_per_buffer != 0) return k.rows_per_buffer;
  return K * item_bytes(int8) <= (16 << 10) && (!gather || N % 2 == 0) ? 2 : 1;
}

std::string refusal(const Kernel& kernel, bool int8, int64_t N, int64_t K, int n_sel) {
  return refusal(kernel, int8, N, K, n_sel, n_sel > 1);
}

std::string shape_refusal(bool int8, int64_t N, int64_t K, int n_sel) {
  if (N <= 0 || K <= 0 || n_sel <= 0) return "empty shape";
  if (K % vec_elems(int8) != 0) return "K not a multiple of the 16-byte vector";
  return "";
}

std::string refusal(const Kernel& kernel, bool int8, int64_t N, int64_t K, int n_sel, bool gather) {
  if (std::string why = shape_refusal(int8, N, K, n_sel); !why.empty()) return why;
  const int64_t vecs = K / vec_elems(int8);
  return std::visit(
      overloaded{
          [&](const General& c) -> std::string {
            const auto in = [](int v, std::initializer_list<int> ok) {
              return std::find(ok.begin(), ok.end(), v) != ok.end();
            };
            if (!in(c.rows_per_warp, {1, 2, 4}) || !in(c.unroll, {1, 2}) || !warps_and_split_ok(c))
              return "not a configuration of the general kernel";
            return "";
          },
          [&](const OneLoad& c) -> std::string {
            if (c.warps != 4 && c.warps != 8)
              return "the one-load kernel has blocks of 4 or 8 warps";
            if (vecs != 32 && vecs != 64 && vecs != 128)
              return "the one-load kernel needs rows of 32, 64 or 128 16-byte vectors";
            return "";
          },
          [&](const Tile& c) -> std::string {
            if (!int8 || K > 8192) return "the tile kernel needs int8 rows of at most 8 KB";
            if (c.warps != 4 && c.warps != 8) return "the tile kernel has blocks of 4 or 8 warps";
            return "";
          },
          [&](const Mma& c) -> std::string {
            const int64_t unit_vec = c.diag ? 32 : 4;
            const int64_t smem = ceil_div(K / 16, unit_vec) * unit_vec * 16 * 2;
            if (!int8 || smem > (96 << 10)) return "the mma kernel needs int8 and K <= 49152";
            const bool ok = c.diag ? (c.unroll == 1 || c.unroll == 2 || c.unroll == 4) &&
                                         (c.depth == 2 || (c.depth == 3 && c.unroll == 2))
                                   : (c.unroll == 2 || c.unroll == 4 || c.unroll == 8) &&
                                         (c.depth == 2 || (c.depth == 3 && c.unroll != 8));
            if (!ok || c.warps < 1 || c.warps > 8 || c.k_split < 1 || c.warps % c.k_split != 0)
              return "not a configuration of the mma kernel";
            return "";
          },
          [&](const Bulk& c) -> std::string {
            if (c.warps != 8 && c.warps != 16)  // before dividing by the threads
              return "the bulk kernel has 8 or 16 consumer warps";
            const int64_t threads = 32 * int64_t(c.warps);
            const int64_t J = vecs % threads == 0 ? vecs / threads : 0;
            const int rs = bulk_rows_per_buffer(c, int8, N, K, gather);
            const int64_t smem = int64_t(c.stages) * rs * K * item_bytes(int8);
            if (c.mma && (!int8 || rs != 2))
              return "bulk_mma needs int8 weights and 2 rows per buffer";
            if (rs < 1 || rs > 2 || (rs == 2 && gather && N % 2 != 0) ||
                (J != 1 && J != 2 && J != 4) || c.stages != 3 || c.blocks_per_sm < 1 ||
                c.blocks_per_sm > 4 || smem > (160 << 10) || c.rows < 0 || c.rows > 2)
              return "the bulk kernel cannot serve this row length so configured";
            return "";
          },
          [&](const Dp4a& c) -> std::string {
            if (std::find(std::begin(kDp4aCompiled), std::end(kDp4aCompiled), c) ==
                std::end(kDp4aCompiled))
              return "not a compiled configuration of the dp4a kernel";
            if (!int8 || K % 16 != 0 || K > 16384)
              return "the dp4a kernel needs int8 rows of a multiple of 16 bytes, at most 16384";
            return "";
          },
          [&](const RowBlock& c) -> std::string {
            // K / (4·loads) threads a block: a whole number of warps, K ≤ 16384.
            const int64_t per_warp = 32 * 4 * int64_t(c.loads);
            if (int8 || (c.loads != 4 && c.loads != 8) || K < per_warp || K % per_warp != 0 ||
                K > 16384)
              return "the row-block kernel needs bf16 rows of at most 16384 weights, a multiple "
                     "of 128 · loads (4 or 8)";
            return "";
          }},
      kernel);
}

std::string swiglu_refusal(const Kernel& k, bool int8, int64_t K) {
  if (std::holds_alternative<RowBlock>(k)) return refusal(k, int8, 2, K, 1);  // its own limits
  if (const Dp4a* d = std::get_if<Dp4a>(&k))
    return d->rows_per_warp > 2 ? "the dp4a SwiGLU has 1 or 2 rows a warp"
                                : refusal(k, int8, 2, K, 1);
  const General* g = std::get_if<General>(&k);
  if (!g || g->rows_per_warp != 2 || !(g->unroll == 2 || (int8 && g->unroll == 1)) || !g->pipeline)
    return "the SwiGLU takes the row-block kernel or the general kernel with 2 rows a warp, "
           "unroll 2 (int8: 1 or 2), pipelined";
  if (!warps_and_split_ok(*g)) return kWarpsAndSplit;
  if (g->min_blocks != 0 && (g->warps > 4 || (g->min_blocks != 7 && g->min_blocks != 8)))
    return "min_blocks 7 or 8 only for a SwiGLU of at most 4 warps";
  return "";
}

std::string combine_refusal(const Kernel& k, bool int8) {
  const General* g = std::get_if<General>(&k);
  if (!g || (g->rows_per_warp != 1 && g->rows_per_warp != 2) || (g->unroll != 1 && g->unroll != 2))
    return "the combine takes the general kernel with 1 or 2 rows a warp, unroll 1 or 2";
  if (!warps_and_split_ok(*g)) return kWarpsAndSplit;
  if (g->min_blocks != 0 && (!int8 || g->rows_per_warp != 2 || g->warps > 4 || g->min_blocks != 8))
    return "min_blocks 8 only for int8, 2 rows a warp, at most 4 warps";
  return "";
}

std::string entry_refusal(const TableEntry& e) {
  const Bucket& b = e.bucket;
  // The row lengths scanned: whole 16-byte vectors (no kernel runs another, shape_refusal),
  // none past kMaxGemvBytes (lo keeps the sums below from overflowing).
  const int64_t item = item_bytes(b.int8), vec_bytes = vec_elems(b.int8) * item;
  const int64_t lo = std::min(b.row_bytes_min, kMaxGemvBytes + 1);
  const int64_t first = ceil_div(lo, vec_bytes) * vec_bytes;
  const int64_t last = std::min({b.row_bytes_max, lo + kScanRowBytes, kMaxGemvBytes});
  if (b.use == Use::swiglu) {  // the first row length of the bucket it serves, if any
    for (int64_t rb = first; rb <= last; rb += vec_bytes)
      if (swiglu_refusal(e.kernel, b.int8, rb / item).empty()) return "";
    return swiglu_refusal(e.kernel, b.int8, b.row_bytes_min / item);
  }
  if (b.use == Use::combine) return combine_refusal(e.kernel, b.int8);
  const int n_sel = b.gather ? 2 : 1;
  const std::string none = "its bucket holds no shape a GEMV can have (rows, row_bytes, max_bytes)";
  if (b.row_bytes_min > kMaxGemvBytes || b.rows_min > kMaxGemvBytes) return none;
  // Two row counts: the bulk kernel's gathers take 2 rows a buffer at even N only.
  const int64_t rows[] = {b.rows_min, b.rows_min < b.rows_max ? b.rows_min + 1 : b.rows_min};
  std::vector<std::string> why;
  for (int64_t rb = first; rb <= last; rb += vec_bytes)
    for (int64_t N : rows) {
      const int64_t K = rb / item;
      if (N > kMaxGemvBytes / (n_sel * rb) || !b.holds(b.int8, N, K, n_sel, b.use) ||
          !shape_refusal(b.int8, N, K, n_sel).empty())
        continue;
      const std::string r = refusal(e.kernel, b.int8, N, K, n_sel);
      if (r.empty()) return "";
      if (std::find(why.begin(), why.end(), r) == why.end()) why.push_back(r);
    }
  return why.empty() ? none : joined(why);
}

}  // namespace kb::gemv
