// What identifies a cuBLASLt GEMM plan and its algorithm, as plain data (no
// CUDA header): the tuning table (suite/tuning.h) reads and writes it, the
// Gemm wrapper (gemm.h) runs it. Field values are cublasLt.h's enum values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace kb::gemm {

enum class Epilogue { none, bias, gelu, gelu_bias };
enum class Input { bf16, fp8_e4m3 };

// An algorithm's configuration.
struct AlgoConfig {
  int32_t id = -1;
  uint32_t tile = 0, stages = 0, reduction = 0, swizzle = 0, custom = 0;
  int32_t splitk = 1;
  uint16_t cluster = 0, inner = 0;
  size_t workspace = 0;  // bytes the algorithm needs
};

// "algo66_tile24_stages35_splitk1_swizzle0_custom0_cluster3" ("_red<n>"
// follows splitk when K is split): the rows' variant.
inline std::string algo_id(const AlgoConfig& c) {
  return "algo" + std::to_string(c.id) + "_tile" + std::to_string(c.tile) + "_stages" +
         std::to_string(c.stages) + "_splitk" + std::to_string(c.splitk) +
         (c.splitk > 1 ? "_red" + std::to_string(c.reduction) : std::string()) + "_swizzle" +
         std::to_string(c.swizzle) + "_custom" + std::to_string(c.custom) + "_cluster" +
         std::to_string(c.cluster);
}

// One GEMM plan's identity: shape, input type, epilogue.
struct AlgoKey {
  int64_t M = 0, N = 0, K = 0;
  Input input = Input::bf16;
  Epilogue epilogue = Epilogue::none;
  bool operator==(const AlgoKey& o) const {
    return M == o.M && N == o.N && K == o.K && input == o.input && epilogue == o.epilogue;
  }
};

// A pinned choice: the algorithm a plan with this key runs on this GPU,
// and where the choice came from ("targets/tuning/h100-sxm5-80gb.json
// cublaslt[3]"), for messages.
struct PinnedAlgo {
  AlgoKey key;
  AlgoConfig config;
  std::string origin;
};

inline const char* input_name(Input i) { return i == Input::bf16 ? "bf16" : "fp8_e4m3"; }
inline const char* epilogue_name(Epilogue e) {
  static const char* const names[] = {"none", "bias", "gelu", "gelu_bias"};
  return names[static_cast<int>(e)];
}

}  // namespace kb::gemm
