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

namespace {

// The declared search space: every compiled instantiation of each family
// (the switches of kernels/gemv/*.cu; refusal() mirrors them) with every
// value of the knobs that cost no instantiation (block shape, K split, row
// order, blocks per SM). docs/decisions/0050 says what is compiled and why.
void general_candidates(std::vector<gemv::Kernel>& out) {
  for (int r : {1, 2, 4})
    for (int u : {1, 2})
      for (bool p : {false, true})
        for (int w : {4, 8})
          for (int k : {1, 2, 4, 8})
            if (k <= w) out.push_back(gemv::General{r, u, w, p, k});
}

void mma_candidates(std::vector<gemv::Kernel>& out) {
  for (bool diag : {false, true})
    for (int u : {1, 2, 4, 8})
      for (int depth : {2, 3})
        for (int w : {4, 8})
          for (int k : {1, 2, 4, 8})
            if (k <= w) out.push_back(gemv::Mma{u, w, k, depth, diag});
}

void bulk_candidates(std::vector<gemv::Kernel>& out) {
  for (bool mma : {false, true})
    for (int w : {8, 16})
      for (int blocks : {1, 2, 3})
        for (int rows : {0, 1, 2})
          for (int per_buffer : {0, 1, 2})
            out.push_back(gemv::Bulk{3, w, blocks, rows, per_buffer, mma});
}

}  // namespace

std::vector<gemv::Kernel> gemv_candidates(const GemvShape& s) {
  std::vector<gemv::Kernel> all = {gemv::OneLoad{4}, gemv::OneLoad{8},  gemv::Tile{4},
                                   gemv::Tile{8},    gemv::RowBlock{4}, gemv::RowBlock{8}};
  for (const gemv::Dp4a& d : gemv::kDp4aCompiled) all.push_back(d);
  general_candidates(all);
  mma_candidates(all);
  bulk_candidates(all);
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
  for (const auto& k : all) add(k);
  return out;
}

GemvTuned pick_candidate(const GemvShape& s, const std::vector<CandidateTime>& times) {
  const size_t n = times.size();
  size_t best = 0;
  for (size_t i = 1; i < n; ++i)
    if (times[i].seconds < times[best].seconds) best = i;
  if (best != 0 && times[0].seconds / times[best].seconds - 1 < kGemvTuneMinGain) best = 0;
  GemvTuned r;
  r.shape = s;
  r.best = times[best].kernel;
  r.best_us = times[best].seconds * 1e6;
  const std::string generic =
      gemv::kernel_name(gemv::choose_in({}, s.int8, s.N, s.K, s.n_sel).config.kernel);
  size_t g = 0;
  for (size_t i = 0; i < n; ++i)
    if (gemv::kernel_name(times[i].kernel) == generic) g = i;
  r.generic = gemv::kernel_name(times[g].kernel);
  r.generic_us = times[g].seconds * 1e6;
  r.noise_rel = times[best].noise_rel;
  r.candidates = static_cast<int>(n);
  size_t second = n;
  for (size_t i = 0; i < n; ++i)
    if (i != best && (second == n || times[i].seconds < times[second].seconds)) second = i;
  if (second < n) {
    r.runner_up = gemv::kernel_name(times[second].kernel);
    r.runner_up_us = times[second].seconds * 1e6;
  }
  return r;
}

std::vector<gemv::Kernel> finalists(const gemv::Kernel& keep,
                                    const std::vector<CandidateTime>& screen, int n) {
  std::vector<gemv::Kernel> out;
  std::vector<std::string> names;
  auto add = [&](const gemv::Kernel& k) {
    const std::string name = gemv::kernel_name(k);
    if (std::find(names.begin(), names.end(), name) != names.end()) return false;
    names.push_back(name);
    out.push_back(k);
    return true;
  };
  add(keep);
  if (screen.empty()) return out;
  add(screen[0].kernel);
  std::vector<size_t> order;
  for (size_t i = 1; i < screen.size(); ++i) order.push_back(i);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return screen[a].seconds < screen[b].seconds; });
  int taken = 0;
  for (size_t i = 0; i < order.size() && taken < n; ++i) taken += add(screen[order[i]].kernel);
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

std::vector<DecodeProjection> decode_projections(const decode::ModelConfig& c, bool int8) {
  using gemv::Use;
  std::vector<DecodeProjection> out = {{"qkv", int8, Use::decode, c.qkv_rows(), c.dim}};
  if (c.moe()) {
    out.push_back({"experts gate/up", int8, Use::swiglu, 2 * int64_t(c.ffn), c.dim, c.top_experts});
    out.push_back({"experts down", int8, Use::combine, c.dim, c.ffn, c.top_experts});
  } else {
    out.push_back({"o", int8, Use::decode, c.dim, c.q_size()});
    out.push_back({"gate/up", int8, Use::swiglu, 2 * int64_t(c.ffn), c.dim});
    out.push_back({"down", int8, Use::decode, c.dim, c.ffn});
  }
  out.push_back({"lm head", int8, Use::decode, c.vocab, c.dim});
  return out;
}

std::vector<gemv::Kernel> decode_candidates(const DecodeProjection& p) {
  const bool gather = p.n_sel > 1;
  // What the projection's launch takes; the SwiGLU and the int8 combine are
  // also compiled with register caps (General::min_blocks 7, 8).
  auto serves = [&](const gemv::Kernel& k) {
    if (p.use == gemv::Use::swiglu) return gemv::swiglu_refusal(k, p.int8, p.cols).empty();
    if (p.use == gemv::Use::combine) return gemv::combine_refusal(k, p.int8).empty();
    const gemv::General* g = std::get_if<gemv::General>(&k);
    return !gather && (!g || g->min_blocks == 0);
  };
  std::vector<gemv::Kernel> out;
  for (const auto& k : gemv_candidates({p.int8, p.rows, p.cols, gather ? p.n_sel : 1, ""})) {
    const bool direct =  // these stream their weights before the wait too
        std::holds_alternative<gemv::RowBlock>(k) || std::holds_alternative<gemv::Dp4a>(k);
    if (direct && serves(k)) out.push_back(k);
    if (!std::holds_alternative<gemv::General>(k)) continue;
    for (int mb : {0, 7, 8}) {
      gemv::General g = std::get<gemv::General>(k);
      g.min_blocks = mb;
      if (serves(g)) out.push_back(g);
    }
  }
  return out;
}

gemv::TableEntry decode_entry(const DecodeProjection& p, const gemv::Kernel& k) {
  gemv::TableEntry e;
  e.bucket.int8 = p.int8;
  e.bucket.gather = p.n_sel > 1;
  e.bucket.use = p.use;
  e.bucket.rows_min = e.bucket.rows_max = p.rows;
  e.bucket.row_bytes_min = e.bucket.row_bytes_max = p.cols * (p.int8 ? 1 : 2);
  e.kernel = k;
  e.origin = "kbench tune gemv (decode step)";
  return e;
}

gemv::Config decode_choice_in(const std::vector<gemv::TableEntry>& table,
                              const DecodeProjection& p) {
  if (p.use == gemv::Use::swiglu)
    return gemv::swiglu_config_in(table, p.int8, p.rows / 2, p.cols, p.n_sel);
  if (p.use == gemv::Use::combine)
    return gemv::combine_config_in(table, p.int8, p.rows, p.cols, p.n_sel);
  return gemv::choose_in(table, p.int8, p.rows, p.cols, 1, gemv::Use::decode).config;
}

}  // namespace kb
