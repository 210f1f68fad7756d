// kbench_decode_profile (lab): where the time of one decode step goes.
//
//   kbench_decode_profile [--model NAME] [--layers N] [--dtype bfloat16|int8] [--pos N]
//                         [--reps R] [--rounds N] [--tuning targets/tuning/GPU.json] [--blank all]
//                         [--qkv-kernels NAME,...] [--o-kernels NAME,...] [--down-kernels ...]
//                         [--swiglu-kernels NAME,...] [--combine-kernels NAME,...]
//
// Builds the model as the decode experiment does (suite/experiments/
// llama_decode.cu: its prompt, max_seq 256), advances the cache to position
// N (default 105, the middle of a generation) and prints
//   - the graph step (R replays from N), the prefill graph, and a generation
//     (the prefill + 199 step replays), event-timed;
//   - an eager step at N kernel by kernel: the step captured as the
//     decoder captures it, each kernel node launched alone between two
//     events, mean of R, summed by kernel (the sum exceeds the graph step
//     by the launch gaps the graph removes);
//   - with --qkv-kernels (--o-kernels): the step captured again with the
//     qkv (o) projection run by each named gemv configuration (a decode
//     table entry for its shape), timed interleaved with the decoder's own
//     over --rounds rounds (docs/decisions/0036-qkv-gemv-without-k-split.md);
//     each graph's logits after the prompt's steps checked against the
//     decoder's own (relative L2 <= 3e-2; exit status 1 otherwise).
//   - with --blank all: per kernel of the step, the step with that kernel's
//     nodes running an empty kernel instead, timed interleaved with the
//     whole step: what those nodes cost in the graph beyond an empty node.
// --tuning installs a tuning file's gemv table first, as `kbench run` does.
// Rows are the product's measurement (kbench run); this is a development aid.
#include <cuda_runtime.h>
#include <cxxabi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/tuning.h"
#include "kernels/common/cuda_check.h"
#include "kernels/common/graph.h"
#include "kernels/decode/decoder.h"
#include "kernels/gemv/gemv.h"
#include "lab/decode_profile/options.h"
#include "suite/gemv_tune.h"

namespace {

namespace dec = kb::decode;
namespace gemv = kb::gemv;

struct Args {
  std::string model = "Llama-2-7b-chat-hf";
  dec::WeightType type = dec::WeightType::bf16;
  int layers = 0;  // 0: the model's
  int pos = 105;
  int reps = 20;
  int rounds = 7;
  std::string tuning;
  bool blank = false;
  std::vector<std::string> qkv_kernels, o_kernels, down_kernels, swiglu_kernels, combine_kernels;
};

[[noreturn]] void usage(const std::string& why) {
  kb::tools::exit_with_usage(
      why,
      "kbench_decode_profile [--model NAME] [--layers N] [--dtype bfloat16|int8] [--pos N] "
      "[--reps R] [--rounds N] [--tuning FILE] [--blank all] [--qkv-kernels NAME,...] [--o-kernels "
      "NAME,...] "
      "[--down-kernels NAME,...] [--swiglu-kernels NAME,...] [--combine-kernels "
      "NAME,...]");
}

int positive(const std::string& k, const std::string& v) {
  const int n = std::atoi(v.c_str());
  if (n < 1) usage(k + " must be a positive number");
  return n;
}

Args parse(int argc, char** argv) {
  Args a;
  kb::tools::for_each_option(
      argc, argv,
      [&](const std::string& k, const std::string& v) {
        if (k == "--model") {
          a.model = v;
        } else if (k == "--dtype") {
          if (v != "int8" && v != "bfloat16" && v != "bf16") usage("--dtype: bfloat16 or int8");
          a.type = v == "int8" ? dec::WeightType::int8 : dec::WeightType::bf16;
        } else if (k == "--layers") {
          a.layers = positive(k, v);
        } else if (k == "--pos") {
          a.pos = std::atoi(v.c_str());
        } else if (k == "--reps") {
          a.reps = positive(k, v);
        } else if (k == "--rounds") {
          a.rounds = positive(k, v);
        } else if (k == "--blank") {
          if (v != "all") usage("--blank: all");
          a.blank = true;
        } else if (k == "--tuning") {
          a.tuning = v;
        } else if (k == "--qkv-kernels" || k == "--o-kernels" || k == "--down-kernels" ||
                   k == "--swiglu-kernels" || k == "--combine-kernels") {
          auto& list = k == "--qkv-kernels"      ? a.qkv_kernels
                       : k == "--o-kernels"      ? a.o_kernels
                       : k == "--down-kernels"   ? a.down_kernels
                       : k == "--swiglu-kernels" ? a.swiglu_kernels
                                                 : a.combine_kernels;
          for (const std::string& name : kb::tools::comma_items(v)) {
            if (!gemv::parse_kernel(name)) usage(k + ": no kernel named " + name);
            list.push_back(name);
          }
        } else {
          usage("unknown option " + k);
        }
      },
      usage);
  if (a.pos < 0 || a.pos + a.reps > 256) usage("--pos + --reps must stay within 256");
  return a;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty()      ? 0
         : v.size() % 2 ? v[v.size() / 2]
                        : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

// Events on one stream: the time of what enqueue() launches, in us.
struct Timer {
  cudaStream_t s = nullptr;
  cudaEvent_t e0 = nullptr, e1 = nullptr;
  Timer() {
    KB_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    KB_CUDA_CHECK(cudaEventCreate(&e0));
    KB_CUDA_CHECK(cudaEventCreate(&e1));
  }
  ~Timer() {
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    cudaStreamDestroy(s);
  }
  template <typename Enqueue>
  double us(Enqueue&& enqueue) {
    KB_CUDA_CHECK(cudaEventRecord(e0, s));
    enqueue();
    KB_CUDA_CHECK(cudaEventRecord(e1, s));
    KB_CUDA_CHECK(cudaEventSynchronize(e1));
    float ms = 0;
    KB_CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
    return ms * 1e3;
  }
};

// The graph's kernel nodes in an order that respects its edges (the
// capture's launch order where it is a chain).
std::vector<cudaGraphNode_t> kernels_in_order(cudaGraph_t g) {
  size_t n = 0, m = 0;
  KB_CUDA_CHECK(cudaGraphGetNodes(g, nullptr, &n));
  std::vector<cudaGraphNode_t> nodes(n);
  KB_CUDA_CHECK(cudaGraphGetNodes(g, nodes.data(), &n));
  // CUDA 13 added the edges' data to cudaGraphGetEdges; programmatic
  // (PDL) edges carry data, so it must be asked for.
#if CUDART_VERSION >= 13000
  std::vector<cudaGraphEdgeData> data;
  auto edges = [&](cudaGraphNode_t* f, cudaGraphNode_t* t) {
    data.resize(m);
    return cudaGraphGetEdges(g, f, t, f ? data.data() : nullptr, &m);
  };
#else
  auto edges = [&](cudaGraphNode_t* f, cudaGraphNode_t* t) {
    return cudaGraphGetEdges(g, f, t, &m);
  };
#endif
  KB_CUDA_CHECK(edges(nullptr, nullptr));
  std::vector<cudaGraphNode_t> from(m), to(m);
  KB_CUDA_CHECK(edges(from.data(), to.data()));
  std::map<cudaGraphNode_t, int> waiting;
  for (size_t i = 0; i < m; ++i) ++waiting[to[i]];
  std::vector<cudaGraphNode_t> order, ready;
  for (cudaGraphNode_t x : nodes)
    if (!waiting[x]) ready.push_back(x);
  while (!ready.empty()) {
    cudaGraphNode_t x = ready.front();
    ready.erase(ready.begin());
    cudaGraphNodeType t;
    KB_CUDA_CHECK(cudaGraphNodeGetType(x, &t));
    if (t == cudaGraphNodeTypeKernel) order.push_back(x);
    for (size_t i = 0; i < m; ++i)
      if (from[i] == x && --waiting[to[i]] == 0) ready.push_back(to[i]);
  }
  return order;
}

// A kernel's name, demangled, without its parameter list.
std::string kernel_name(const void* func) {
  const char* mangled = nullptr;
  if (cudaFuncGetName(&mangled, func) != cudaSuccess || !mangled) return "?";
  int status = 0;
  char* plain = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  std::string name = status == 0 && plain ? plain : mangled;
  std::free(plain);
  // The namespaces first: "(anonymous namespace)" would end the name at its '('.
  for (const char* drop : {"void ", "(anonymous namespace)::", "kb::"})
    for (size_t at; (at = name.find(drop)) != std::string::npos;) name.erase(at, std::strlen(drop));
  return name.substr(0, name.find('('));
}

// An eager step at the decoder's position, kernel by kernel: each kernel
// node of `g` launched alone between two events. Returns (name, us) in order.
std::vector<std::pair<std::string, double>> eager_kernels(cudaGraph_t g, Timer& t) {
  std::vector<std::pair<std::string, double>> out;
  for (cudaGraphNode_t node : kernels_in_order(g)) {
    cudaKernelNodeParams p{};
    KB_CUDA_CHECK(cudaGraphKernelNodeGetParams(node, &p));
    const double us = t.us([&] {
      KB_CUDA_CHECK(
          cudaLaunchKernel(p.func, p.gridDim, p.blockDim, p.kernelParams, p.sharedMemBytes, t.s));
    });
    out.push_back({kernel_name(p.func), us});
  }
  return out;
}

void print_breakdown(dec::Decoder& d, const Args& a, Timer& t, double graph_us) {
  const kb::CudaGraph g = kb::capture_graph([&](cudaStream_t s) { d.step(s); });
  std::map<std::string, std::pair<int, double>> per;  // name -> (calls a step, us a step)
  std::vector<std::string> order;
  double total = 0;
  for (int rep = 0; rep < a.reps; ++rep) {
    d.reset(t.s);
    for (int i = 0; i < a.pos; ++i) d.replay(t.s);
    for (const auto& [name, us] : eager_kernels(g.graph.get(), t)) {
      if (!per.count(name)) order.push_back(name);
      per[name].first += rep == 0;
      per[name].second += us / a.reps;
      total += us / a.reps;
    }
  }
  std::printf("\neager step at pos %d, kernel by kernel, mean of %d:\n", a.pos, a.reps);
  std::printf("%-64s %6s %11s %10s %7s\n", "kernel", "calls", "total(us)", "each(us)", "share");
  for (const auto& name : order) {
    const auto& [calls, us] = per[name];
    std::printf("%-64.64s %6d %11.1f %10.2f %6.1f%%\n", name.c_str(), calls, us, us / calls,
                100 * us / total);
  }
  std::printf("%-64s %6s %11.1f   (graph step: %.1f us; the difference is launch gaps)\n", "sum",
              "", total, graph_us);
}

// A step graph `g` (null: the decoder's own) from the decoder's position
// a.pos: the mean of a.reps replays, in us.
double step_us(dec::Decoder& d, const Args& a, Timer& t, cudaGraphExec_t g) {
  d.reset(t.s);
  for (int i = 0; i < a.pos; ++i) d.replay(t.s);
  return t.us([&] {
    for (int i = 0; i < a.reps; ++i) {
      if (g)
        KB_CUDA_CHECK(cudaGraphLaunch(g, t.s));
      else
        d.replay(t.s);
    }
  }) / a.reps;
}

// Over a.rounds rounds, `first` (nullptr: the decoder's own step) and then
// each of `graphs`, interleaved: the medians, first's at the front.
std::vector<double> interleaved_medians(dec::Decoder& d, const Args& a, Timer& t,
                                        cudaGraphExec_t first,
                                        const std::vector<kb::CudaGraph>& graphs) {
  std::vector<std::vector<double>> us(graphs.size() + 1);
  for (int round = 0; round < a.rounds; ++round) {
    us[0].push_back(step_us(d, a, t, first));
    for (size_t i = 0; i < graphs.size(); ++i)
      us[i + 1].push_back(step_us(d, a, t, graphs[i].exec.get()));
  }
  std::vector<double> m;
  for (const auto& u : us) m.push_back(median(u));
  return m;
}

// The step captured with k running the projection (a table entry for its
// shape first).
kb::CudaGraph step_with(dec::Decoder& d, const kb::DecodeProjection& p, const gemv::Kernel& k) {
  gemv::TableEntry e = kb::decode_entry(p, k);
  e.origin = "kbench_decode_profile --*-kernels";
  const std::vector<gemv::TableEntry> saved = gemv::installed_table();
  std::vector<gemv::TableEntry> table = saved;
  table.insert(table.begin(), e);
  gemv::set_table(table);
  kb::CudaGraph g;
  try {
    g = kb::capture_graph([&](cudaStream_t c) { d.step(c); });
  } catch (...) {
    gemv::set_table(saved);
    throw;
  }
  gemv::set_table(saved);
  return g;
}

// The logits after the prompt's steps from a reset, each step by `g`
// (null: the decoder's own): they depend on no generated token.
std::vector<float> prompt_logits(dec::Decoder& d, cudaStream_t s, cudaGraphExec_t g) {
  d.reset(s);
  for (size_t i = 0; i < d.prompt().size(); ++i) {
    if (g)
      KB_CUDA_CHECK(cudaGraphLaunch(g, s));
    else
      d.replay(s);
  }
  KB_CUDA_CHECK(cudaStreamSynchronize(s));
  return d.logits();
}

// got against the decoder's own logits: "same bits", else their relative
// L2 distance; `ok` cleared above kLogitsTol (the decode checks' own).
constexpr double kLogitsTol = 3e-2;
std::string logits_check(const std::vector<float>& own, const std::vector<float>& got, bool& ok) {
  if (got == own) return "logits: same bits";
  double num = 0, den = 0;
  for (size_t i = 0; i < own.size() && i < got.size(); ++i) {
    num += (double(got[i]) - own[i]) * (double(got[i]) - own[i]);
    den += double(own[i]) * own[i];
  }
  const double rel = got.size() == own.size() ? std::sqrt(num / std::max(den, 1e-30)) : INFINITY;
  const bool pass = rel <= kLogitsTol;
  ok = ok && pass;
  char b[96];
  std::snprintf(b, sizeof b, "logits: rel L2 %.2e%s", rel, pass ? "" : " FAILED");
  return b;
}

// The step with a projection run by each named configuration, timed
// against the decoder's own step over the rounds, interleaved, and checked
// against it. False when a check failed.
bool by_kernel(dec::Decoder& d, const Args& a, Timer& t, const kb::DecodeProjection& p,
               const std::vector<std::string>& names) {
  const gemv::Config base = kb::decode_choice_in(gemv::installed_table(), p);
  std::vector<kb::CudaGraph> graphs;
  for (const auto& name : names) graphs.push_back(step_with(d, p, *gemv::parse_kernel(name)));
  const std::vector<double> m = interleaved_medians(d, a, t, nullptr, graphs);
  const double f = m[0];
  std::printf(
      "\n%s projection (%lldx%lld) by configuration, medians of %d rounds of %d replays, "
      "interleaved; the decoder's own (%s): %.1f us\n",
      p.what.c_str(), (long long)p.rows, (long long)p.cols, a.rounds, a.reps,
      gemv::kernel_name(base.kernel).c_str(), f);
  const std::vector<float> own = prompt_logits(d, t.s, nullptr);
  bool ok = true;
  for (size_t i = 0; i < graphs.size(); ++i) {
    const std::string check = logits_check(own, prompt_logits(d, t.s, graphs[i].exec.get()), ok);
    std::printf("  %-14s %8.1f us (%+.1f us, %+.2f%%)  %s\n", names[i].c_str(), m[i + 1],
                m[i + 1] - f, 100 * (m[i + 1] - f) / f, check.c_str());
  }
  return ok;
}

__global__ void blank_kernel() {}

// `step` with each kernel node named `name` running blank_kernel instead.
kb::CudaGraph blanked(cudaGraph_t step, const std::string& name, int* nodes) {
  cudaGraph_t g = nullptr;
  KB_CUDA_CHECK(cudaGraphClone(&g, step));
  kb::CudaGraph r;
  r.graph.reset(g);
  *nodes = 0;
  for (cudaGraphNode_t node : kernels_in_order(g)) {
    cudaKernelNodeParams p{};
    KB_CUDA_CHECK(cudaGraphKernelNodeGetParams(node, &p));
    if (kernel_name(p.func) != name) continue;
    cudaKernelNodeParams e{};
    e.func = reinterpret_cast<void*>(blank_kernel);
    e.gridDim = dim3(1);
    e.blockDim = dim3(32);
    KB_CUDA_CHECK(cudaGraphKernelNodeSetParams(node, &e));
    ++*nodes;
  }
  cudaGraphExec_t x = nullptr;
  KB_CUDA_CHECK(cudaGraphInstantiate(&x, g, 0));
  r.exec.reset(x);
  return r;
}

// Per kernel of the step: the step with its nodes blanked, timed against the
// whole step over the rounds, interleaved.
void by_blanking(dec::Decoder& d, const Args& a, Timer& t) {
  const kb::CudaGraph step = kb::capture_graph([&](cudaStream_t s) { d.step(s); });
  std::vector<std::string> names;
  for (cudaGraphNode_t node : kernels_in_order(step.graph.get())) {
    cudaKernelNodeParams p{};
    KB_CUDA_CHECK(cudaGraphKernelNodeGetParams(node, &p));
    const std::string n = kernel_name(p.func);
    if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
  }
  std::vector<kb::CudaGraph> graphs;
  std::vector<int> nodes(names.size());
  for (size_t i = 0; i < names.size(); ++i)
    graphs.push_back(blanked(step.graph.get(), names[i], &nodes[i]));
  const std::vector<double> m = interleaved_medians(d, a, t, step.exec.get(), graphs);
  const double w = m[0];
  std::printf(
      "\nthe step with each kernel's nodes blanked, medians of %d rounds of %d replays, "
      "interleaved; the whole step %.1f us:\n%-64s %6s %10s %10s\n",
      a.rounds, a.reps, w, "kernel", "nodes", "saved(us)", "each(us)");
  for (size_t i = 0; i < graphs.size(); ++i) {
    const double saved = w - m[i + 1];
    std::printf("%-64.64s %6d %10.1f %10.2f\n", names[i].c_str(), nodes[i], saved,
                saved / nodes[i]);
  }
}

// The projections by the named configurations; false when a check failed.
bool by_kernels(dec::Decoder& d, const Args& a, Timer& t, const dec::ModelConfig& c) {
  const bool i8 = a.type == dec::WeightType::int8;
  const int n_sel = c.moe() ? c.top_experts : 1;
  using gemv::Use;
  const kb::DecodeProjection qkv{"qkv", i8, Use::decode, c.qkv_rows(), c.dim},
      o{"o", i8, Use::decode, c.dim, c.q_size()}, down{"down", i8, Use::decode, c.dim, c.ffn},
      swiglu{"swiglu", i8, Use::swiglu, 2 * int64_t(c.ffn), c.dim, n_sel},
      combine{"combine", i8, Use::combine, c.dim, c.ffn, n_sel};
  bool ok = true;
  if (!a.qkv_kernels.empty()) ok &= by_kernel(d, a, t, qkv, a.qkv_kernels);
  if (!a.o_kernels.empty()) ok &= by_kernel(d, a, t, o, a.o_kernels);
  if (!a.down_kernels.empty()) ok &= by_kernel(d, a, t, down, a.down_kernels);
  if (!a.swiglu_kernels.empty()) ok &= by_kernel(d, a, t, swiglu, a.swiglu_kernels);
  if (!a.combine_kernels.empty()) ok &= by_kernel(d, a, t, combine, a.combine_kernels);
  return ok;
}

// The profile; 1 where a configuration's step failed its check.
int profile(const Args& a) {
  dec::ModelConfig c = dec::find_config(a.model);
  if (a.layers > 0) c.n_layers = a.layers;
  cudaDeviceProp prop{};
  int dev = 0;
  KB_CUDA_CHECK(cudaGetDevice(&dev));
  KB_CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
  std::printf("%s %s on %s\n", c.name.c_str(), dec::weight_type_name(a.type), prop.name);
  if (!a.tuning.empty()) {
    std::string warning;
    auto table = kb::load_gemv_table(a.tuning, prop.name, &warning);
    if (!warning.empty()) std::printf("--tuning: %s\n", warning.c_str());
    std::printf("gemv table: %zu entries from %s\n", table.size(), a.tuning.c_str());
    gemv::set_table(std::move(table));
  }
  dec::DecoderOptions o;  // as the decode experiment's
  o.prompt.clear();
  for (int id : {1, 15043, 29892, 590, 1024, 338}) o.prompt.push_back(id % c.vocab);
  dec::Decoder d(c, a.type, o);
  Timer t;
  d.reset(t.s);
  for (int i = 0; i < a.pos; ++i) d.replay(t.s);
  const double graph_us = t.us([&] {
    for (int i = 0; i < a.reps; ++i) d.replay(t.s);
  }) / a.reps;
  double prefill_us = 0, gen_us = 0;
  for (int rep = 0; rep < 2; ++rep) {  // the first a warm-up
    prefill_us = t.us([&] { d.prefill(t.s); });
    gen_us = t.us([&] {
      d.prefill(t.s);
      for (int i = 1; i < 200; ++i) d.replay(t.s);
    });
  }
  const double bytes = dec::active_weight_bytes(c, a.type);
  std::printf("graph: %zu nodes a step; attention %s\n", d.graph_nodes(),
              d.attention_whole() ? "whole-cache" : "split");
  std::printf("graph step at pos %d: %.1f us (%.0f GB/s of weights)\n", a.pos, graph_us,
              bytes / (graph_us * 1e-6) / 1e9);
  std::printf("prefill of %zu tokens: %.1f us = %.2f steps\n", o.prompt.size(), prefill_us,
              prefill_us / graph_us);
  std::printf("generation (prefill + 199 steps): %.1f ms = %.1f tok/s\n", gen_us * 1e-3,
              200 / (gen_us * 1e-6));
  print_breakdown(d, a, t, graph_us);
  if (a.blank) by_blanking(d, a, t);
  return by_kernels(d, a, t, c) ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const Args a = parse(argc, argv);
  try {
    return profile(a);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kbench_decode_profile: %s\n", e.what());
    return 1;
  }
  return 0;
}
