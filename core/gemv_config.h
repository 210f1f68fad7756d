// A GEMV kernel configuration: which kernel family runs, with only that
// family's parameters (a sum type, so that an impossible combination
// cannot be written), plus the launch options every family takes. No CUDA
// here: the dispatch table, the tuning file's reader and the CPU tests use it.
//
// Names (the tuning table's `kernel`, the rows' variant, the tuner's
// candidates; parse_kernel reads them back):
//   general  "R2U1W4P1K2": 2 rows per warp, 1 16-byte load per row and
//            batch, 4 warps per block, pipelined (P0: not), K over 2 warps
//   one-load "one8": one 16-byte load per lane, blocks of 8 warps ("one4")
//   tile     "T4": the whole-tile int8 kernel in blocks of 4 warps
//   mma      "M4W8K2": the 16-row tensor-core int8 kernel, 4 units per
//            batch, 8 warps, K over 2 warps ("…D3": 3 batches in flight);
//            "GM4W4K1": its diagonal variant (2 rows per warp group)
//   bulk     "B3W8S3O2R0": the bulk-copy kernel, a ring of 3 buffers, 8
//            consumer warps, 3 blocks per SM, rows from the shared counter
//            (O: Bulk::rows), R rows per buffer (0: by row size);
//            "BM…": with tensor-core consumers (int8)
//   row-block "RB4": one bf16 row a block, 4 8-byte loads a thread ("RB8": 8)
//   dp4a     "DP2U2K1W8": int8 on dp4a, x in 16-bit fixed point in shared
//            memory; R rows a warp, U vectors a lane per batch, K split
//            over K warps, W warps a block
#pragma once

#include <optional>
#include <string>
#include <variant>

namespace kb::gemv {

// The general kernel (general.cu): any shape, several tokens, SwiGLU, gathers, combine.
struct General {
  int rows_per_warp = 1;  // 1, 2 or 4: rows a warp reduces together (x loaded once for all)
  int unroll = 2;         // 16-byte weight loads per row per thread and batch: one token 1
                          // or 2, several tokens and SwiGLU 2 or 4 (the compiled ones)
  int warps = 4;          // 1..8 warps per block
  bool pipeline = true;   // load the next batch while using this one
  int k_split = 1;        // 1, 2, 4 or 8 warps share rows and split K (divides warps)
  // 0: the compiler's register choice; else blocks of 128 threads an SM the
  // kernel is compiled for (__launch_bounds__(128, min_blocks): at most
  // 65536 / (128 · min_blocks) registers a thread). int8 one-token gathers
  // only (the SwiGLU at 7 or 8, the combine at 8), blocks of at most 4 warps.
  int min_blocks = 0;
};

// The one-load kernel (one_load.cu): rows of 32, 64 or 128 16-byte vectors, one token.
struct OneLoad {
  int warps = 8;  // 4 or 8 warps per block
};

// The whole-tile int8 kernel (tile.cu, compute capability 9.0): rows of at most 8 KB.
struct Tile {
  int warps = 4;  // 4 or 8 warps per block (per 16-row tile)
};

// The tensor-core int8 kernel (mma.cu, compute capability 8.0).
struct Mma {
  int unroll = 4;     // units per row per batch: 2, 4 or 8 (diag: 1, 2 or 4)
  int warps = 4;      // warps per block
  int k_split = 1;    // warps sharing a tile (diag: a row pair) and splitting K
  int depth = 2;      // batches in flight: 2 or 3 (3: not at unroll 8; diag: unroll 2 only)
  bool diag = false;  // the diagonal variant: 2 rows per warp group, 512-byte loads
};

// The bulk-copy kernel (bulk.cu, compute capability 9.0).
struct Bulk {
  int stages = 3;           // ring buffers: 3 (the compiled ring; the name keeps the field)
  int warps = 8;            // consumer warps per block: 8 or 16
  int blocks_per_sm = 1;    // 1..4
  int rows = 2;             // which rows a block takes: 0 contiguous, 1 strided, 2 a shared counter
  int rows_per_buffer = 0;  // 1 or 2; 0: 2 for rows of at most 16 KB, else 1
  bool mma = false;         // tensor-core consumers (int8, 2 rows per buffer)
};

// The row-block kernel (row_block.cu): one bf16 row a block of K / (4 · loads)
// threads, each issuing its `loads` 8-byte loads first; rows of at most 16384
// weights, a multiple of 128 · loads.
struct RowBlock {
  int loads = 4;  // 8-byte loads a thread: 4 or 8 (the compiled ones)
};

// The dp4a int8 kernel (dp4a.cu, compute capability 6.1): the block converts
// x once into shared memory as 16-bit fixed point (a power of two for each
// 16 values), a weight vector's dot product is 8 dp4a; rows of a multiple
// of 16 bytes, at most 16 KB. The compiled configurations: kDp4aCompiled.
struct Dp4a {
  int rows_per_warp = 2;
  int unroll = 2;   // 16-byte vectors a lane per batch
  int k_split = 1;  // warps of a group splitting K
  int warps = 8;    // a block's
  constexpr bool operator==(const Dp4a& o) const {
    return rows_per_warp == o.rows_per_warp && unroll == o.unroll && k_split == o.k_split &&
           warps == o.warps;
  }
};
inline constexpr Dp4a kDp4aCompiled[] = {{1, 4, 1, 8}, {2, 1, 1, 8}, {2, 2, 1, 8},
                                         {2, 2, 2, 8}, {4, 1, 2, 8}, {4, 2, 1, 8}};

using Kernel = std::variant<General, OneLoad, Tile, Mma, Bulk, RowBlock, Dp4a>;

// std::visit over a Kernel with one lambda per family.
template <class... Fs>
struct overloaded : Fs... {
  using Fs::operator()...;
};
template <class... Fs>
overloaded(Fs...) -> overloaded<Fs...>;

struct Config {
  Kernel kernel = General{};
  // Programmatic dependent launch (gemv.h's gemv_bf16 says what it needs).
  bool pdl = false;

  Config() = default;
  // A kernel (or one family's parameters) is a configuration with the default launch options.
  Config(Kernel k) : kernel(k) {}    // NOLINT(google-explicit-constructor)
  Config(General k) : kernel(k) {}   // NOLINT(google-explicit-constructor)
  Config(OneLoad k) : kernel(k) {}   // NOLINT(google-explicit-constructor)
  Config(Tile k) : kernel(k) {}      // NOLINT(google-explicit-constructor)
  Config(Mma k) : kernel(k) {}       // NOLINT(google-explicit-constructor)
  Config(Bulk k) : kernel(k) {}      // NOLINT(google-explicit-constructor)
  Config(RowBlock k) : kernel(k) {}  // NOLINT(google-explicit-constructor)
  Config(Dp4a k) : kernel(k) {}      // NOLINT(google-explicit-constructor)
  template <typename F>
  bool is() const {
    return std::holds_alternative<F>(kernel);
  }
  template <typename F>
  const F* get() const {
    return std::get_if<F>(&kernel);
  }
  template <typename F>
  F* get() {
    return std::get_if<F>(&kernel);
  }
};

// "general", "one_load", "tile", "mma", "bulk", "row_block" or "dp4a".
const char* family_name(const Kernel& k);
// The kernel's name (above).
std::string kernel_name(const Kernel& k);
// The kernel a name denotes; nullopt for a malformed or unknown name.
std::optional<Kernel> parse_kernel(const std::string& name);

}  // namespace kb::gemv
