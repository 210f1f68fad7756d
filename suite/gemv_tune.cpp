#include "suite/gemv_tune.h"

#include <algorithm>
#include <limits>
#include <map>
#include <tuple>

namespace kb {

std::vector<GemvShape> gemv_tuning_shapes() {
  std::vector<GemvShape> out;
  for (bool int8 : {true, false}) {
    for (int64_t D : {1024, 4096, 8192, 16384}) out.push_back({int8, D, D, 1, "gemv"});
    for (auto [N, K] :
         {std::pair<int64_t, int64_t>{12288, 4096}, {22016, 4096}, {4096, 11008}, {32000, 4096}})
      out.push_back({int8, N, K, 1, "gemv (Llama-2-7B)"});
    for (int64_t D : {1024, 4096, 8192, 16384}) out.push_back({int8, D, D, 2, "gather_gemv"});
    out.push_back({int8, 6144, 4096, 1, "Mixtral attention (decode shape)"});
  }
  for (int64_t D : {1024, 4096, 8192, 16384}) {  // the MLP at one token: bf16, F = 14336
    out.push_back({false, 14336, D, 1, "mlp_layer_norm_gelu tokens=1"});
    out.push_back({false, D, 14336, 1, "mlp_layer_norm_gelu tokens=1"});
  }
  for (bool int8 : {true, false}) {  // the int8 MLP shapes of the earlier tunes
    out.push_back({int8, 1024, 14336, 1, "MLP down at D=1024"});
    out.push_back({int8, 14336, 1024, 1, "MLP up at D=1024"});
    out.push_back({int8, 14336, 16384, 1, "MLP up at D=16384"});
  }
  // One entry per shape (the MLP's bf16 ones repeat above).
  std::vector<GemvShape> unique;
  for (const auto& s : out) {
    bool seen = false;
    for (const auto& u : unique)
      seen = seen || (u.int8 == s.int8 && u.N == s.N && u.K == s.K && u.n_sel == s.n_sel);
    if (!seen) unique.push_back(s);
  }
  return unique;
}

std::vector<gemv::Kernel> gemv_candidates(const GemvShape& s) {
  // The configurations of the earlier tunes (docs/decisions/0025 to 0028).
  static const char* names[] = {
      "R1U8W4P0K1",  "R1U8W8P0K1",  "R1U4W4P0K2",   "R1U4W8P0K2",   "R1U2W8P0K4",   "R2U4W4P0K2",
      "R2U2W4P0K4",  "R1U4W4P1K2",  "R2U2W4P1K2",   "R2U1W8P1K2",   "R2U2W8P0K4",   "R2U2W8P0K8",
      "R4U2W4P0K4",  "R2U4W4P0K4",  "R2U1W4P0K4",   "R4U1W4P0K4",   "R2U2W4P1K4",   "R4U2W8P0K8",
      "R2U4W8P0K8",  "R1U2W4P0K4",  "R1U4W4P0K4",   "R4U4W4P0K4",   "R2U2W8P1K8",   "R2U1W8P1K8",
      "R1U2W4P1K1",  "R1U2W4P1K2",  "R1U2W4P1K4",   "R2U1W4P1K2",   "R1U1W4P1K2",   "one4",
      "one8",        "T4",          "T8",           "M4W4K1",       "M4W8K2",       "M8W8K2",
      "M2W8K4",      "M4W8K4",      "M2W8K8",       "M4W8K8",       "M8W8K8",       "M8W8K4",
      "M8W4K4",      "M4W4K4",      "M2W8K8D3",     "M4W8K8D3",     "M2W8K4D3",     "M4W8K4D3",
      "M4W4K4D3",    "M2W4K2D3",    "M4W8K2D3",     "GM1W8K1",      "GM2W8K1",      "GM4W8K1",
      "GM2W8K2",     "GM2W4K1",     "GM2W4K2",      "GM2W8K4",      "GM1W8K4",      "GM2W8K1D3",
      "GM4W4K1",     "B3W8S2O2R2",  "B3W8S2O1R2",   "B4W16S1O2R2",  "B4W16S1O2R1",  "B6W16S1O2R1",
      "B6W16S1O2R2", "B4W8S2O2R2",  "B4W8S2O2R1",   "B3W16S2O2R2",  "B4W16S1O1R2",  "B3W8S3O2R0",
      "BM3W8S2O2R2", "BM4W8S1O2R2", "BM3W16S2O2R2", "BM4W16S1O2R2", "BM3W16S1O2R2", "BM3W8S2O1R2",
      "BM3W8S2O0R2"};
  std::vector<gemv::Kernel> out;
  std::vector<std::string> seen;
  auto add = [&](const gemv::Kernel& k) {
    const std::string n = gemv::kernel_name(k);
    if (std::find(seen.begin(), seen.end(), n) != seen.end()) return;
    if (!gemv::refusal(k, s.int8, s.N, s.K, s.n_sel).empty()) return;
    seen.push_back(n);
    out.push_back(k);
  };
  add(gemv::choose_in({}, s.int8, s.N, s.K, s.n_sel).config.kernel);  // the generic choice first
  for (const char* n : names) add(*gemv::parse_kernel(n));
  return out;
}

std::vector<gemv::TableEntry> tune_buckets(const std::vector<GemvTuned>& tuned) {
  using Key = std::tuple<bool, bool, int64_t>;  // int8, gather, row bytes
  std::map<Key, std::vector<const GemvTuned*>> groups;
  for (const auto& t : tuned)
    groups[{t.shape.int8, t.shape.n_sel > 1, t.shape.K * (t.shape.int8 ? 1 : 2)}].push_back(&t);
  std::vector<gemv::TableEntry> out;
  for (auto& [key, list] : groups) {
    std::sort(list.begin(), list.end(),
              [](const GemvTuned* a, const GemvTuned* b) { return a->shape.N < b->shape.N; });
    std::vector<gemv::TableEntry> group;
    int64_t next_min = 1;
    for (size_t i = 0; i < list.size(); ++i) {
      gemv::TableEntry e;
      e.bucket.int8 = std::get<0>(key);
      e.bucket.gather = std::get<1>(key);
      e.bucket.row_bytes_min = e.bucket.row_bytes_max = std::get<2>(key);
      e.bucket.rows_min = next_min;
      e.bucket.rows_max =
          i + 1 == list.size() ? std::numeric_limits<int64_t>::max() : list[i]->shape.N;
      next_min = list[i]->shape.N + 1;
      e.kernel = list[i]->best;
      e.origin = "kbench tune gemv";
      if (!group.empty() && gemv::kernel_name(group.back().kernel) == gemv::kernel_name(e.kernel))
        group.back().bucket.rows_max = e.bucket.rows_max;  // neighbours with one kernel merge
      else
        group.push_back(e);
    }
    out.insert(out.end(), group.begin(), group.end());
  }
  return out;
}

}  // namespace kb
