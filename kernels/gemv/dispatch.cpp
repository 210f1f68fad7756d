// dispatch.h; the measurements behind each bucket: docs/notes/gemv.md.
#include "kernels/gemv/dispatch.h"

#include <algorithm>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>

namespace kb::gemv {

namespace {

// The general kernel's knobs by shape, timed on an H100 (records 0025 and
// 0036 hold the figures): pipelined batches of 2 loads, 4 warps; K split
// over warps once rows are long (and for bf16 at many rows); int8 one load
// a batch and 2 rows a warp at K >= 4096.
General general_kernel(bool int8, int64_t N, int64_t K, int n_sel) {
  General c;
  c.warps = 4;
  c.unroll = 2;
  c.pipeline = true;
  c.rows_per_warp = 1;
  if (int8 && K >= 12288 && n_sel == 1) {
    // Long int8 rows: batches of 2 loads, not pipelined, K over 4 warps.
    c.rows_per_warp = 2;
    c.pipeline = false;
    c.k_split = 4;
  } else if (int8 && K >= 4096 && N <= 16384) {
    c.unroll = 1;
    c.rows_per_warp = 2;
    c.k_split = 2;
  } else if (int8 && K <= 2048 && N <= 2048) {
    c.unroll = 1;
    c.k_split = 2;
  } else if (K >= 12288) {
    c.k_split = 4;
  } else if (!int8 && N >= 12288 && K >= 4096) {
    c.k_split = 4;
  } else if (!int8 && (K >= 8192 || N <= 2048)) {
    c.k_split = 2;
  }
  return c;
}

TableEntry entry(bool int8, bool gather, int64_t rows_min, int64_t rows_max, int64_t rb_min,
                 int64_t rb_max, int64_t max_bytes, Kernel k, const char* why) {
  const Bucket b{int8, gather, Use::standalone, rows_min, rows_max, rb_min, rb_max, max_bytes};
  return {b, k, std::string("generic rule: ") + why};
}

constexpr int64_t kAny = std::numeric_limits<int64_t>::max();
constexpr int64_t kMB = int64_t(1) << 20;

struct Installed {
  std::mutex mutex;
  std::vector<TableEntry> entries;
};
Installed& installed() {
  static Installed t;
  return t;
}

}  // namespace

Config general_config(bool int8, int64_t N, int64_t K, int n_sel) {
  // Up to 4 MB in all with rows of 32, 64 or 128 vectors: the one-load
  // kernel in blocks of 8 warps (0026).
  const int64_t vecs = K / vec_elems(int8);
  if ((vecs == 32 || vecs == 64 || vecs == 128) &&
      n_sel * N * K * item_bytes(int8) <= (int64_t(4) << 20))
    return Config(OneLoad{8});
  return Config(general_kernel(int8, N, K, n_sel));
}

// Several tokens are bound by their x reads and FMAs, not by HBM (0025):
// batches of two loads; int8 two rows a warp (x serves both), K split only
// at K >= 12288; bf16 no K split below K = 8192. The SwiGLU pairs gate and
// up rows in one warp.
Config tokens_config(bool int8, int64_t N, int64_t K, int tokens, bool swiglu) {
  General c = general_kernel(int8, N, K, 1);  // not the one-load kernel: one token, no SwiGLU only
  c.pipeline = true;                          // several tokens and SwiGLU: pipelined only
  if (swiglu) {                               // two rows (gate and up), batches of two loads
    c.rows_per_warp = 2;
    c.unroll = 2;
    if (int8) c.k_split = K >= 12288 ? 4 : 1;
  }
  if (tokens <= 1) return Config(c);
  c.unroll = 2;
  if (int8) {
    c.rows_per_warp = 2;
    c.k_split = K >= 12288 ? 4 : 1;
  } else if (K < 8192) {
    c.k_split = 1;
  }
  return Config(c);
}

int64_t swiglu_rows(int64_t F) {
  if (F < 1 || F > std::numeric_limits<int64_t>::max() / 2)
    throw std::invalid_argument("SwiGLU: F = " + std::to_string(F) + ": out of range");
  return 2 * F;
}

// int8: compiled for 7 blocks an SM, 72 registers without a spill (0037).
Config gather_swiglu_config(bool int8, int64_t F, int64_t K) {
  Config c = tokens_config(int8, swiglu_rows(F), K, 1, true);
  if (int8) std::get<General>(c.kernel).min_blocks = 7;
  return c;
}

Config combine_config(bool int8, int64_t N, int64_t K) {
  // The general kernel's one-matrix choice, at most 2 rows a warp and
  // batches of 2. int8 (Mixtral's down, two experts): 2 rows, unroll 2, not
  // pipelined, K over 2 warps, compiled for 8 blocks an SM so that the grid
  // fits one wave (0037).
  General c = general_kernel(int8, N, K, 1);
  if (c.unroll > 2) c.unroll = 2;
  if (c.rows_per_warp > 2) c.rows_per_warp = 2;
  if (int8) {
    c.rows_per_warp = 2;
    c.unroll = 2;
    c.pipeline = false;
    c.k_split = 2;
    c.warps = 4;
    c.min_blocks = 8;
  }
  return Config(c);
}

// Where a family measured faster than the general kernel (H100 80GB HBM3,
// docs/decisions/0028 and its neighbours).
const std::vector<TableEntry>& generic_table() {
  static const std::vector<TableEntry> t = {
      // Up to 4 MB with rows of 32, 64 or 128 vectors (the seed's D = 1024):
      // the launch and the first HBM round trip are most of the time.
      entry(false, false, 1, kAny, 512, 2048, 4 * kMB, OneLoad{8}, "one-load, small"),
      entry(false, true, 1, kAny, 512, 2048, 4 * kMB, OneLoad{8}, "one-load, small"),
      entry(true, false, 1, kAny, 512, 2048, 4 * kMB, OneLoad{8}, "one-load, small"),
      entry(true, true, 1, kAny, 512, 2048, 4 * kMB, OneLoad{8}, "one-load, small"),
      // bf16 rows of 8 KB up to 4096 rows: the bulk-copy kernel (4096²:
      // 2543 against 2128 GB/s; not at 12288 rows or more, nor gathers).
      entry(false, false, 1024, 4096, 8192, 8192, 0, Bulk{3, 8, 3, 2, 0, false},
            "bulk, bf16 rows of 8 KB"),
      // int8 rows of 16 KB, 14336 rows or more: bulk with tensor-core
      // consumers (16384²: 2963-2975 against 2920-2926).
      entry(true, false, 14336, kAny, 16384, 16384, 0, Bulk{3, 8, 2, 2, 2, true},
            "bulk-mma, int8 rows of 16 KB"),
      // int8 rows of 1-4 KB up to 32 MB: the whole-tile kernel (4096²:
      // 1923-1927 against 1601-1611).
      entry(true, false, 1, kAny, 1024, 4096, 32 * kMB, Tile{4}, "tile, int8 rows of 1-4 KB"),
      // larger, 8192 rows or more: the mma kernel's diagonal variant
      // (12288x4096: 2436 against 2205 for the general kernel).
      entry(true, false, 8192, kAny, 1024, 4096, 0, Mma{4, 4, 1, 2, true},
            "mma-diag, int8 rows of 1-4 KB"),
      // gathers of int8 rows of 2-4 KB (D = 4096, 2 experts: 2087 against 2019-2023).
      entry(true, true, 1, kAny, 2048, 4096, 0, Mma{4, 8, 1, 2, true},
            "mma-diag, int8 gathers of 2-4 KB rows"),
  };
  return t;
}

void set_table(std::vector<TableEntry> entries) {
  Installed& t = installed();
  std::lock_guard<std::mutex> lock(t.mutex);
  t.entries = std::move(entries);
}

const std::vector<TableEntry>& installed_table() { return installed().entries; }

Choice choose_in(const std::vector<TableEntry>& table, bool int8, int64_t N, int64_t K, int n_sel,
                 Use use) {
  for (const TableEntry& e : table)
    if (e.bucket.holds(int8, N, K, n_sel, use) && refusal(e.kernel, int8, N, K, n_sel).empty())
      return {Config(e.kernel), e.origin};
  if (use == Use::standalone)
    for (const TableEntry& e : generic_table())
      if (e.bucket.holds(int8, N, K, n_sel, use) && refusal(e.kernel, int8, N, K, n_sel).empty())
        return {Config(e.kernel), "generic"};
  return {general_config(int8, N, K, n_sel), "generic"};
}

Config swiglu_config_in(const std::vector<TableEntry>& table, bool int8, int64_t F, int64_t K,
                        int n_sel) {
  const int64_t rows = swiglu_rows(F);
  for (const TableEntry& e : table)
    if (e.bucket.holds(int8, rows, K, n_sel, Use::swiglu) &&
        swiglu_refusal(e.kernel, int8, K).empty())
      return Config(e.kernel);
  return n_sel > 1 ? gather_swiglu_config(int8, F, K) : tokens_config(int8, rows, K, 1, true);
}

Config combine_config_in(const std::vector<TableEntry>& table, bool int8, int64_t N, int64_t K,
                         int n_sel) {
  for (const TableEntry& e : table)
    if (e.bucket.holds(int8, N, K, n_sel, Use::combine) && combine_refusal(e.kernel, int8).empty())
      return Config(e.kernel);
  return combine_config(int8, N, K);
}

Config decode_swiglu_config(bool int8, int64_t F, int64_t K, int n_sel) {
  Installed& t = installed();
  std::lock_guard<std::mutex> lock(t.mutex);
  return swiglu_config_in(t.entries, int8, F, K, n_sel);
}

Config decode_combine_config(bool int8, int64_t N, int64_t K, int n_sel) {
  Installed& t = installed();
  std::lock_guard<std::mutex> lock(t.mutex);
  return combine_config_in(t.entries, int8, N, K, n_sel);
}

Choice choose(bool int8, int64_t N, int64_t K, int n_sel, Use use) {
  Installed& t = installed();
  std::lock_guard<std::mutex> lock(t.mutex);
  return choose_in(t.entries, int8, N, K, n_sel, use);
}

Config default_config(bool int8, int64_t N, int64_t K, int n_sel) {
  return choose(int8, N, K, n_sel).config;
}

}  // namespace kb::gemv
