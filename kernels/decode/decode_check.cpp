#include "kernels/decode/decode_check.h"

#include <algorithm>
#include <cmath>

#include "core/record.h"
#include "kernels/common/cuda_check.h"
#include "kernels/common/host_math.h"
#include "kernels/decode/moe_routing.h"

namespace kb::decode {

namespace {

DecodeCheck fail(DecodeCheck c, const std::string& why) {
  c.ok = false;
  c.detail = why;
  return c;
}

// Layer l's slice [l · n, (l + 1) · n) of a layer-major vector.
template <typename T>
std::vector<T> layer_slice(const std::vector<T>& v, int l, size_t n) {
  return std::vector<T>(v.begin() + l * n, v.begin() + (l + 1) * n);
}

DecoderOptions decoder_options(const ModelConfig& c, const ReferenceCheckOptions& o) {
  DecoderOptions d = o.decoder;
  for (int32_t& id : d.prompt) id = ((id % c.vocab) + c.vocab) % c.vocab;
  return d;
}

// The CPU step at `pos` with `token`; MoE: following the GPU's routing at a
// near tie (RefDecoder::prefer_routing), and *why (if still empty) says
// where router logits disagree or a choice is refused.
std::vector<float> cpu_step(const Decoder& d, RefDecoder& ref, const ReferenceCheckOptions& o,
                            int pos, int token, std::string* why, DecodeCheck& r) {
  const ModelConfig& c = d.config();
  if (!c.moe()) return ref.step(token);
  const std::vector<int32_t> ids = d.routed_experts(pos);
  std::vector<std::vector<int>> per_layer(c.n_layers);
  for (int l = 0; l < c.n_layers; ++l) per_layer[l] = layer_slice(ids, l, size_t(c.top_experts));
  // The tie tolerance scales with the GPU's router logits (at least 1).
  const std::vector<float> gpu = d.router_logits(pos);
  ref.prefer_routing(per_layer, o.route_tie_tol * std::max(1.0, rms(gpu)));
  std::vector<float> logits = ref.step(token);
  if (!ref.route_error().empty() && why->empty()) {
    *why = "routing differs from the CPU's beyond a near tie: " + ref.route_error();
    return logits;
  }
  for (int l = 0; l < c.n_layers; ++l) {
    const std::vector<float>& cpu = ref.router_logits(l);
    const std::string off =
        router_logits_mismatch(layer_slice(gpu, l, size_t(c.n_experts)), cpu, o.logits_tol);
    ++r.routings;
    const Route own = route_ref(cpu, c.top_experts);
    for (int j = 0; j < c.top_experts; ++j)
      if (std::find(own.ids.begin(), own.ids.end(), per_layer[l][j]) == own.ids.end()) {
        ++r.routing_ties_taken;
        break;
      }
    if (!off.empty() && why->empty())
      *why = "router logits of layer " + std::to_string(l) + " at position " + std::to_string(pos) +
             " differ from the CPU's: " + off;
  }
  return logits;
}

// "" when the greedy token `next` is the GPU logits' argmax and the CPU's
// best or within the logits' error of it; else why not.
std::string check_greedy(int32_t next, const std::vector<float>& gpu, const std::vector<float>& cpu,
                         const Compare& cmp, DecodeCheck& r) {
  const int gpu_best = argmax_ref(gpu);
  if (next != gpu_best)
    return "greedy token " + std::to_string(next) + " is not the argmax " +
           std::to_string(gpu_best) + " of the GPU logits";
  // If the GPU picks `next` over the CPU's best, the CPU margin between
  // them is at most the two logits' errors together: 2 x the largest
  // error (a multiple of the rms error fails on near ties).
  const int cpu_best = argmax_ref(cpu);
  const double tol_abs = 2 * cmp.max_abs + 1e-4 * rms(cpu);
  std::vector<float> sorted = cpu;
  std::partial_sort(sorted.begin(), sorted.begin() + std::min<size_t>(2, sorted.size()),
                    sorted.end(), std::greater<float>());
  if (sorted.size() >= 2 && sorted[0] - sorted[1] <= tol_abs) ++r.near_ties;
  if (next == cpu_best) return "";
  ++r.token_mismatches;
  const double margin = double(cpu[cpu_best]) - cpu[next];
  if (margin <= tol_abs) return "";
  return "greedy token " + std::to_string(next) + " but the CPU's is " + std::to_string(cpu_best) +
         " by a margin of " + format_double("%.3g", margin) + " (tolerance " +
         format_double("%.3g", tol_abs) + ")";
}

// The KV cache rows every layer appended (K after RoPE), at a few
// positions, and the final residual: "" or why not.
std::string check_state(const Decoder& d, const RefDecoder& ref, int steps, double tol) {
  const ModelConfig& c = d.config();
  const int positions[] = {0, steps / 2, steps - 1};
  for (int l = 0; l < c.n_layers; ++l)
    for (int h = 0; h < c.n_kv_heads; ++h)
      for (int p : positions)
        for (bool v : {false, true}) {
          const std::vector<float> gpu = d.cache_row(v, l, h, p);
          const float* row = v ? ref.v_row(l, h, p) : ref.k_row(l, h, p);
          const Compare cmp = compare(gpu, std::vector<float>(row, row + c.head_dim), 2e-2);
          if (!cmp.ok)
            return std::string(v ? "V" : "K") + " cache row (layer " + std::to_string(l) +
                   ", kv head " + std::to_string(h) + ", pos " + std::to_string(p) +
                   ") differs: " + cmp.text();
        }
  const Compare res = compare(d.residual(), ref.residual(), tol);
  if (!res.ok) return "final residual differs: " + res.text();
  return "";
}

// LM-head rows recomputed on the CPU from the final residual x: r · W[row]
// · x with the final norm's r, for the best row, the first and last and a
// few hashed ones. "" or why not; *checked: the rows compared.
std::string check_lm_head_rows(const Decoder& d, const std::vector<float>& logits,
                               const std::vector<float>& x, int best, size_t* checked) {
  const ModelConfig& c = d.config();
  const double x_rms = rms(x);
  const double rn = 1.0 / std::sqrt(x_rms * x_rms + c.norm_eps);
  std::vector<int64_t> rows = {best, 0, c.vocab - 1};
  for (int i = 1; i <= 13; ++i) rows.push_back((int64_t(i) * 2654435761u) % c.vocab);
  *checked = rows.size();
  const double scale = rms(logits);
  for (int64_t row : rows) {
    const std::vector<float> w = d.linear_rows(Linear::output, -1, row, 1);
    double acc = 0;
    for (int k = 0; k < c.dim; ++k) acc += double(w[k]) * x[k];
    const double want = rn * acc;
    if (std::fabs(logits[row] - want) > 1e-2 * std::fabs(want) + 2e-3 * scale)
      return "logit " + std::to_string(row) + " is " + format_double("%.6g", logits[row]) +
             ", the CPU gives " + format_double("%.6g", want) + " from the final residual";
  }
  return "";
}

// What `steps` graph replays from the reset leave: "" or why it is wrong.
std::string check_graph_steps(Decoder& d, int steps, cudaStream_t s, std::vector<int32_t>* tok,
                              std::vector<float>* logits, size_t* rows) {
  const ModelConfig& c = d.config();
  const std::vector<int32_t>& prompt = d.prompt();
  d.reset(s);
  for (int i = 0; i < steps; ++i) d.replay(s);
  KB_CUDA_CHECK(cudaStreamSynchronize(s));
  *tok = d.tokens();
  *logits = d.logits();
  const std::vector<float> x = d.residual();
  if (d.position() != steps)
    return "position " + std::to_string(d.position()) + " after " + std::to_string(steps) +
           " steps";
  for (size_t i = 0; i < prompt.size(); ++i)
    if ((*tok)[i] != prompt[i]) return "prompt token " + std::to_string(i) + " changed";
  for (int i = 0; i <= steps; ++i)
    if ((*tok)[i] < 0 || (*tok)[i] >= c.vocab)
      return "token " + std::to_string(i) + " = " + std::to_string((*tok)[i]) +
             " is outside the vocabulary";
  size_t nonfinite = 0;
  for (float v : *logits) nonfinite += !std::isfinite(v);
  if (nonfinite) return std::to_string(nonfinite) + " non-finite logits";
  const auto [lo, hi] = std::minmax_element(logits->begin(), logits->end());
  if (!(*hi > *lo)) return "every logit is the same";
  const int best = argmax_ref(*logits);
  if ((*tok)[steps] != best)
    return "greedy token " + std::to_string((*tok)[steps]) + " is not the argmax " +
           std::to_string(best) + " of the logits";
  return check_lm_head_rows(d, *logits, x, best, rows);
}

// The same steps as eager launches must give the same tokens and logits.
std::string check_eager_steps(Decoder& d, int steps, cudaStream_t s,
                              const std::vector<int32_t>& tok, const std::vector<float>& logits) {
  d.reset(s);
  for (int i = 0; i < steps; ++i) d.step(s);
  KB_CUDA_CHECK(cudaStreamSynchronize(s));
  const std::vector<int32_t> tok_eager = d.tokens();
  const Compare eq = compare(d.logits(), logits, 1e-3);
  d.reset(s);
  KB_CUDA_CHECK(cudaStreamSynchronize(s));
  if (!std::equal(tok.begin(), tok.begin() + steps + 1, tok_eager.begin()))
    return "graph replay and eager launches chose different tokens";
  if (!eq.ok) return "graph replay and eager logits differ: " + eq.text();
  return "";
}

// A MoE prefill's routing of the prompt against the prompt steps' (ids and
// router logits per position): the same choices, or others only at a near
// tie (the sums run in another order): within twice the runs' largest
// router-logit difference, or 2e-2 of their rms. Such a choice changes all
// after it: *tie_at says where, and the comparison stops there. "" or why not.
std::string compare_prefill_routing(const Decoder& d,
                                    const std::vector<std::vector<float>>& steps_logits,
                                    const std::vector<std::vector<int32_t>>& steps_ids,
                                    std::string* tie_at) {
  const ModelConfig& c = d.config();
  const size_t k = size_t(c.top_experts), E = size_t(c.n_experts);
  for (size_t p = 0; p < steps_ids.size(); ++p) {
    const std::vector<int32_t> ids = d.routed_experts(int(p));
    const std::vector<float> rl = d.router_logits(int(p));
    for (int l = 0; l < c.n_layers; ++l) {
      std::vector<int32_t> mine = layer_slice(ids, l, k), theirs = layer_slice(steps_ids[p], l, k);
      const std::vector<float> steps_l = layer_slice(steps_logits[p], l, E),
                               mine_l = layer_slice(rl, l, E);
      std::sort(mine.begin(), mine.end());
      std::sort(theirs.begin(), theirs.end());
      const std::string at =
          "the prefill's routing of layer " + std::to_string(l) + ", position " + std::to_string(p);
      const std::string logits_why = router_logits_mismatch(mine_l, steps_l, 3e-2);
      if (!logits_why.empty())
        return at + ": router logits differ from the prompt steps': " + logits_why;
      if (mine == theirs) continue;
      double diff = 0;
      for (size_t e = 0; e < E; ++e)
        diff = std::max(diff, std::fabs(double(mine_l[e]) - steps_l[e]));
      const double tol = std::max(2e-2 * std::max(1.0, rms(steps_l)), 2 * diff);
      const std::string why = routing_mismatch(steps_l, mine, c.top_experts, tol);
      if (!why.empty()) return at + " differs from the prompt steps' beyond a near tie: " + why;
      *tie_at = "layer " + std::to_string(l) + ", position " + std::to_string(p);
      return "";
    }
  }
  return "";
}

// The prompt as one prefill against the prompt as steps: the same next
// token (unless within the logits' difference), logits within 2e-2 (the
// multi-token gemv sums in another order), routing as
// compare_prefill_routing. "" or why not.
std::string check_prefill(Decoder& d, cudaStream_t s, std::string* tie_at) {
  const ModelConfig& c = d.config();
  const int P = static_cast<int>(d.prompt().size());
  d.reset(s);
  for (int i = 0; i < P; ++i) d.replay(s);
  KB_CUDA_CHECK(cudaStreamSynchronize(s));
  const int32_t next_steps = d.tokens()[P];
  const std::vector<float> logits_steps = d.logits();
  std::vector<std::vector<float>> route_logits_steps;
  std::vector<std::vector<int32_t>> route_ids_steps;
  for (int p = 0; c.moe() && p < P; ++p) {
    route_logits_steps.push_back(d.router_logits(p));
    route_ids_steps.push_back(d.routed_experts(p));
  }
  d.prefill(s);
  KB_CUDA_CHECK(cudaStreamSynchronize(s));
  const int32_t next_prefill = d.tokens()[P];
  const int pos_prefill = d.position();
  const Compare eq = compare(d.logits(), logits_steps, 2e-2);
  const std::string route_why =
      compare_prefill_routing(d, route_logits_steps, route_ids_steps, tie_at);
  d.reset(s);
  KB_CUDA_CHECK(cudaStreamSynchronize(s));
  if (pos_prefill != P)
    return "position " + std::to_string(pos_prefill) + " after the prefill of " +
           std::to_string(P) + " tokens";
  if (!route_why.empty() || !tie_at->empty()) return route_why;
  if (!eq.ok) return "logits after the prefill differ from the prompt steps': " + eq.text();
  if (next_prefill != next_steps) {
    const double margin = double(logits_steps[next_steps]) - logits_steps[next_prefill];
    if (margin > 2 * eq.max_abs)
      return "the prefill chose token " + std::to_string(next_prefill) + ", the prompt steps " +
             std::to_string(next_steps) + " by a margin of " + format_double("%.3g", margin);
  }
  return "";
}

}  // namespace

DecodeCheck check_against_reference(const ModelConfig& c, WeightType t,
                                    const ReferenceCheckOptions& o) {
  DecodeCheck r;
  const DecoderOptions dopt = decoder_options(c, o);
  const int prompt_len = static_cast<int>(dopt.prompt.size());
  const bool graph = dopt.capture;
  if (o.steps < 1 || o.steps > dopt.max_seq)
    throw std::invalid_argument("check_against_reference: steps must be in [1, max_seq]");
  if (o.prefill && o.steps < prompt_len)
    throw std::invalid_argument("check_against_reference: a prefill needs steps >= prompt length");

  Decoder d(c, t, dopt);
  const HostWeights hw = d.host_weights();
  RefDecoder ref(hw, dopt.max_seq);
  Stream st;
  d.reset(st.s);
  const std::string where = c.name + " " + weight_type_name(t) + (graph ? " graph" : " eager") +
                            (o.prefill ? " prefill" : "") +
                            (c.moe() && !dopt.moe_route_parallel ? " router-in-chain" : "") +
                            (dopt.attn_whole ? " attn-whole" : "");
  if (o.prefill) {  // the GPU's prompt first: the CPU's prompt steps follow its routing
    d.prefill(st.s, !graph);
    KB_CUDA_CHECK(cudaStreamSynchronize(st.s));
  }
  for (int step = 0; step < o.steps; ++step) {
    std::string why;
    if (o.prefill && step < prompt_len - 1) {  // inside the prefill: the CPU only
      cpu_step(d, ref, o, step, dopt.prompt[step], &why, r);
      if (!why.empty())
        return fail(r, where + ", prompt step " + std::to_string(step) + ": " + why);
      continue;
    }
    if (!(o.prefill && step == prompt_len - 1))  // the prefill's last token: done above
      graph ? d.replay(st.s) : d.step(st.s);
    KB_CUDA_CHECK(cudaStreamSynchronize(st.s));
    const std::vector<int32_t> tok = d.tokens();
    const int32_t pos = d.position();
    const std::string at = where + ", step " + std::to_string(step) + ": ";
    if (pos != step + 1)
      return fail(
          r, at + "position " + std::to_string(pos) + ", expected " + std::to_string(step + 1));
    const std::vector<float> cpu = cpu_step(d, ref, o, step, tok[step], &why, r);
    if (!why.empty()) return fail(r, at + why);
    const std::vector<float> gpu = d.logits();
    const Compare cmp = compare(gpu, cpu, o.logits_tol);
    r.worst_logits_rel = std::max(r.worst_logits_rel, cmp.rel_l2);
    if (!cmp.ok) return fail(r, at + "logits differ from the CPU reference: " + cmp.text());
    const int32_t next = tok[step + 1];
    if (step + 1 < prompt_len) {
      if (next != dopt.prompt[step + 1])
        return fail(r, at + "the prompt token at " + std::to_string(step + 1) + " was overwritten");
      continue;
    }
    why = check_greedy(next, gpu, cpu, cmp, r);
    if (!why.empty()) return fail(r, at + why);
  }
  const std::string state = check_state(d, ref, o.steps, o.logits_tol);
  if (!state.empty()) return fail(r, where + ": " + state);

  r.ok = true;
  r.detail = where + ": " + std::to_string(o.steps) + " steps vs CPU fp32, worst logits rel L2 " +
             format_double("%.3g", r.worst_logits_rel) + ", " + std::to_string(r.token_mismatches) +
             " greedy mismatches (all near ties; " + std::to_string(r.near_ties) +
             " near ties), KV rows and residual agree";
  if (c.moe())
    r.detail += ", " + std::to_string(r.routings) + " routings agree (" +
                std::to_string(r.routing_ties_taken) + " near ties taken the GPU's way)";
  return r;
}

DecodeCheck check_full_model(Decoder& d, int steps, cudaStream_t s) {
  DecodeCheck r;
  const ModelConfig& c = d.config();
  const int P = static_cast<int>(d.prompt().size());
  if (steps < P || steps > d.max_seq())
    throw std::invalid_argument("check_full_model: steps must be in [prompt length, max_seq]");
  if (!d.captured()) throw std::invalid_argument("check_full_model: the graph is not captured");
  const std::string where = c.name + " " + weight_type_name(d.weight_type()) + ": ";
  std::vector<int32_t> tok;
  std::vector<float> logits;
  size_t rows = 0;
  std::string why = check_graph_steps(d, steps, s, &tok, &logits, &rows);
  if (why.empty()) why = check_eager_steps(d, steps, s, tok, logits);
  std::string tie_at;
  if (why.empty()) why = check_prefill(d, s, &tie_at);
  if (!why.empty()) return fail(r, where + why);
  r.ok = true;
  r.detail = where + std::to_string(steps) + " graph steps: logits finite, greedy = argmax, " +
             std::to_string(rows) + " LM-head rows match the CPU, graph = eager, prefill = " +
             (tie_at.empty() ? "prompt steps"
                             : "prompt steps up to a near tie decided otherwise (" + tie_at +
                                   "; logits then not compared)");
  return r;
}

}  // namespace kb::decode
