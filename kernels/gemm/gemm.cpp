// The cuBLASLt plan behind kb::gemm::Gemm (see gemm.h for the layout).
#include "kernels/gemm/gemm.h"

#include <cublasLt.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <stdexcept>

#include "kernels/common/cuda_check.h"
#include "kernels/common/device_buffer.h"

namespace kb::gemm {

namespace {

// One cuBLASLt handle per device for the process (one costs milliseconds),
// never destroyed: a static destructor would run after the CUDA runtime's.
cublasLtHandle_t handle_for_current_device() {
  static std::mutex mu;
  static std::map<int, cublasLtHandle_t> handles;
  int dev = 0;
  KB_CUDA_CHECK(cudaGetDevice(&dev));
  std::lock_guard<std::mutex> lock(mu);
  auto it = handles.find(dev);
  if (it != handles.end()) return it->second;
  cublasLtHandle_t h = nullptr;
  KB_CUBLAS_CHECK(cublasLtCreate(&h));
  handles.emplace(dev, h);
  return h;
}

cublasLtEpilogue_t lt_epilogue(Epilogue e) {
  switch (e) {
    case Epilogue::none:
      return CUBLASLT_EPILOGUE_DEFAULT;
    case Epilogue::bias:
      return CUBLASLT_EPILOGUE_BIAS;
    case Epilogue::gelu:
      return CUBLASLT_EPILOGUE_GELU;
    case Epilogue::gelu_bias:
      return CUBLASLT_EPILOGUE_GELU_BIAS;
  }
  throw std::invalid_argument("gemm: unknown epilogue");
}

bool aligned(const void* p, uint32_t alignment) {
  return reinterpret_cast<uintptr_t>(p) % alignment == 0;
}

// f(attribute, field) for each configuration attribute an AlgoConfig holds past its id.
template <typename Config, typename F>
void for_each_attribute(Config& c, F&& f) {
  f(CUBLASLT_ALGO_CONFIG_TILE_ID, c.tile);
  f(CUBLASLT_ALGO_CONFIG_STAGES_ID, c.stages);
  f(CUBLASLT_ALGO_CONFIG_SPLITK_NUM, c.splitk);
  f(CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, c.reduction);
  f(CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, c.swizzle);
  f(CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, c.custom);
  f(CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, c.cluster);
  f(CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, c.inner);
}

// The configuration of `algo` as cuBLASLt reports it.
AlgoConfig read_config(const cublasLtMatmulAlgo_t& algo, size_t workspace) {
  AlgoConfig c;
  c.workspace = workspace;
  auto get = [&](cublasLtMatmulAlgoConfigAttributes_t attr, auto& out) {
    size_t written = 0;
    KB_CUBLAS_CHECK(cublasLtMatmulAlgoConfigGetAttribute(&algo, attr, &out, sizeof(out), &written));
  };
  get(CUBLASLT_ALGO_CONFIG_ID, c.id);
  for_each_attribute(c, get);
  return c;
}

std::vector<PinnedAlgo>& pins() {
  static std::vector<PinnedAlgo> p;
  return p;
}

std::vector<AlgoKey>& planned() {
  static std::vector<AlgoKey> k;
  return k;
}

const PinnedAlgo* find_pinned(const AlgoKey& key) {
  for (const auto& p : pins())
    if (p.key == key) return &p;
  return nullptr;
}

}  // namespace

void set_pinned_algos(std::vector<PinnedAlgo> p) { pins() = std::move(p); }

std::vector<AlgoKey> planned_keys() { return planned(); }
void clear_planned_keys() { planned().clear(); }

const char* algo_source_name(AlgoSource s) {
  static const char* const names[] = {"table", "heuristic", "refused", "candidate"};
  return names[static_cast<int>(s)];
}

struct Gemm::Impl {
  int64_t M = 0, N = 0, K = 0;
  Options opts;
  cublasLtHandle_t handle = nullptr;
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t w_layout = nullptr, a_layout = nullptr, d_layout = nullptr;
  cublasLtMatmulAlgo_t algo{};
  AlgoConfig config;
  std::string id;
  // The heuristic's usable candidates, in its order (kbench tune times them).
  std::vector<cublasLtMatmulHeuristicResult_t> usable;
  AlgoSource source = AlgoSource::heuristic;
  std::string note;
  cudaDataType_t in_type = CUDA_R_16BF;
  DeviceBuffer<unsigned char> workspace;
  const void* bias_set = nullptr;  // the bias pointer the descriptor holds now

  ~Impl() {
    // No throwing from a destructor: statuses here cannot be acted upon.
    if (d_layout) cublasLtMatrixLayoutDestroy(d_layout);
    if (a_layout) cublasLtMatrixLayoutDestroy(a_layout);
    if (w_layout) cublasLtMatrixLayoutDestroy(w_layout);
    if (op) cublasLtMatmulDescDestroy(op);
  }
};

Gemm::Gemm(int64_t M, int64_t N, int64_t K, Options opts) : impl_(std::make_unique<Impl>()) {
  Impl& g = *impl_;
  g.M = M;
  g.N = N;
  g.K = K;
  g.opts = opts;
  if (M <= 0 || N <= 0 || K <= 0)
    throw std::invalid_argument("gemm: M, N, K must be > 0 (got " + describe() + ")");
  if (opts.candidates <= 0) throw std::invalid_argument("gemm: candidates must be > 0");
  if (opts.min_alignment == 0 || (opts.min_alignment & (opts.min_alignment - 1)) != 0)
    throw std::invalid_argument("gemm: min_alignment must be a power of two");

  g.handle = handle_for_current_device();
  g.in_type = opts.input == Input::bf16 ? CUDA_R_16BF : CUDA_R_8F_E4M3;

  KB_CUBLAS_CHECK(cublasLtMatmulDescCreate(&g.op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const cublasOperation_t op_w = CUBLAS_OP_T, op_a = CUBLAS_OP_N;
  KB_CUBLAS_CHECK(
      cublasLtMatmulDescSetAttribute(g.op, CUBLASLT_MATMUL_DESC_TRANSA, &op_w, sizeof(op_w)));
  KB_CUBLAS_CHECK(
      cublasLtMatmulDescSetAttribute(g.op, CUBLASLT_MATMUL_DESC_TRANSB, &op_a, sizeof(op_a)));
  const cublasLtEpilogue_t epi = lt_epilogue(opts.epilogue);
  KB_CUBLAS_CHECK(
      cublasLtMatmulDescSetAttribute(g.op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof(epi)));
  if (has_bias(opts.epilogue)) {
    const int32_t bias_type = CUDA_R_16BF;
    KB_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(g.op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE,
                                                   &bias_type, sizeof(bias_type)));
    // The heuristic never dereferences the bias pointer but reads its
    // alignment from it: stand in an address with exactly the alignment
    // run() will insist on. run() sets the real pointer.
    const void* stand_in = reinterpret_cast<const void*>(uintptr_t(opts.min_alignment));
    KB_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(g.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                                   &stand_in, sizeof(stand_in)));
  }
  const auto u64 = [](int64_t v) { return static_cast<uint64_t>(v); };
  KB_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&g.w_layout, g.in_type, u64(K), u64(N), K));
  KB_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&g.a_layout, g.in_type, u64(K), u64(M), K));
  KB_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&g.d_layout, CUDA_R_16BF, u64(N), u64(M), N));

  cublasLtMatmulPreference_t pref = nullptr;
  KB_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  std::vector<cublasLtMatmulHeuristicResult_t> results(static_cast<size_t>(opts.candidates));
  int returned = 0;
  try {
    const uint64_t max_ws = opts.max_workspace;
    KB_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(
        pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &max_ws, sizeof(max_ws)));
    for (auto attr :
         {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
          CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES})
      KB_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, attr, &opts.min_alignment,
                                                           sizeof(opts.min_alignment)));
    KB_CUBLAS_CHECK(cublasLtMatmulAlgoGetHeuristic(g.handle, g.op, g.w_layout, g.a_layout,
                                                   g.d_layout, g.d_layout, pref, opts.candidates,
                                                   results.data(), &returned));
  } catch (const CudaError& e) {
    cublasLtMatmulPreferenceDestroy(pref);
    throw CudaError("cuBLASLt refuses " + describe() + ": " + e.what(), e.code);
  }
  KB_CUBLAS_CHECK(cublasLtMatmulPreferenceDestroy(pref));

  // By estimated time: the first usable within our workspace (tune may pick another).
  for (int i = 0; i < returned; ++i)
    if (results[i].state == CUBLAS_STATUS_SUCCESS && results[i].workspaceSize <= opts.max_workspace)
      g.usable.push_back(results[i]);
  if (std::find(planned().begin(), planned().end(), key()) == planned().end())
    planned().push_back(key());
  const PinnedAlgo* pin = opts.use_pins ? find_pinned(key()) : nullptr;
  if (pin && try_pinned(*pin)) return;
  if (g.usable.empty()) {
    const cublasStatus_t st = returned > 0 ? results[0].state : CUBLAS_STATUS_NOT_SUPPORTED;
    throw CudaError("cuBLASLt refuses " + describe() + ": " + cublasLtGetStatusName(st) + " (" +
                        std::to_string(returned) + " of " + std::to_string(opts.candidates) +
                        " algorithms returned, none usable within " +
                        std::to_string(opts.max_workspace) + " bytes of workspace)",
                    cudaSuccess);
  }
  choose(0);
  g.source = pin ? AlgoSource::refused : AlgoSource::heuristic;
}

bool Gemm::try_pinned(const PinnedAlgo& pin) {
  Impl& g = *impl_;
  const AlgoConfig& c = pin.config;
  cublasLtMatmulAlgo_t algo{};
  cublasLtMatmulHeuristicResult_t check{};
  cublasStatus_t st = cublasLtMatmulAlgoInit(g.handle, CUBLAS_COMPUTE_32F, CUDA_R_32F, g.in_type,
                                             g.in_type, CUDA_R_16BF, CUDA_R_16BF, c.id, &algo);
  const char* step = "cublasLtMatmulAlgoInit";
  if (st == CUBLAS_STATUS_SUCCESS) {
    step = "setting its configuration";
    for_each_attribute(c, [&](cublasLtMatmulAlgoConfigAttributes_t attr, const auto& v) {
      const cublasStatus_t x = cublasLtMatmulAlgoConfigSetAttribute(&algo, attr, &v, sizeof(v));
      if (x != CUBLAS_STATUS_SUCCESS && st == CUBLAS_STATUS_SUCCESS) st = x;
    });
  }
  if (st == CUBLAS_STATUS_SUCCESS) {
    step = "cublasLtMatmulAlgoCheck";
    st = cublasLtMatmulAlgoCheck(g.handle, g.op, g.w_layout, g.a_layout, g.d_layout, g.d_layout,
                                 &algo, &check);
    if (st == CUBLAS_STATUS_SUCCESS && check.state != CUBLAS_STATUS_SUCCESS) st = check.state;
  }
  if (st == CUBLAS_STATUS_SUCCESS && check.workspaceSize > g.opts.max_workspace) {
    g.note = "the pinned cuBLASLt algorithm " + algo_id(c) + " (" + pin.origin + ") needs " +
             std::to_string(check.workspaceSize) + " bytes of workspace, more than the " +
             std::to_string(g.opts.max_workspace) + " allowed: the heuristic's first choice ran";
    return false;
  }
  if (st != CUBLAS_STATUS_SUCCESS) {
    g.note = "the pinned cuBLASLt algorithm " + algo_id(c) + " (" + pin.origin +
             ") was refused by this cuBLASLt (" + cublasLtGetStatusName(st) + " at " + step +
             "): the heuristic's first choice ran";
    return false;
  }
  g.algo = algo;
  g.config = read_config(g.algo, check.workspaceSize);
  g.id = algo_id(g.config);
  g.source = AlgoSource::table;
  g.workspace = DeviceBuffer<unsigned char>(g.config.workspace);
  return true;
}

void Gemm::choose(int index) {
  Impl& g = *impl_;
  const cublasLtMatmulHeuristicResult_t& chosen = g.usable.at(static_cast<size_t>(index));
  g.algo = chosen.algo;
  AlgoConfig& c = g.config;
  c = read_config(g.algo, chosen.workspaceSize);
  g.id = algo_id(c);
  // What the chosen algorithm needs (often nothing); kbench tune keeps the largest.
  if (g.workspace.bytes() < c.workspace) g.workspace = DeviceBuffer<unsigned char>(c.workspace);
}

int Gemm::candidates() const { return static_cast<int>(impl_->usable.size()); }

void Gemm::use_candidate(int index) {
  if (index < 0 || index >= candidates())
    throw std::out_of_range("gemm: no candidate " + std::to_string(index) + " of " +
                            std::to_string(candidates()) + " for " + describe());
  choose(index);
  impl_->source = AlgoSource::candidate;
  impl_->note.clear();
}

Gemm::~Gemm() = default;

const Options& Gemm::options() const { return impl_->opts; }
const AlgoConfig& Gemm::algo() const { return impl_->config; }
const std::string& Gemm::id() const { return impl_->id; }
AlgoSource Gemm::source() const { return impl_->source; }
const std::string& Gemm::note() const { return impl_->note; }
AlgoKey Gemm::key() const {
  return {impl_->M, impl_->N, impl_->K, impl_->opts.input, impl_->opts.epilogue};
}

std::string Gemm::describe() const {
  const Impl& g = *impl_;
  return std::string(g.opts.input == Input::bf16 ? "bf16" : "fp8_e4m3") +
         " GEMM M=" + std::to_string(g.M) + " N=" + std::to_string(g.N) +
         " K=" + std::to_string(g.K) + " epilogue=" + epilogue_name(g.opts.epilogue);
}

void Gemm::run(const bf16* A, const bf16* W, const bf16* bias, bf16* D, cudaStream_t stream) {
  if (impl_->opts.input != Input::bf16)
    throw std::invalid_argument("gemm: bf16 inputs given to a plan for " + describe());
  launch(A, W, bias, D, stream);
}

void Gemm::run(const fp8* A, const fp8* W, const bf16* bias, bf16* D, cudaStream_t stream) {
  if (impl_->opts.input != Input::fp8_e4m3)
    throw std::invalid_argument("gemm: fp8 inputs given to a plan for " + describe());
  launch(A, W, bias, D, stream);
}

void Gemm::launch(const void* A, const void* W, const void* bias, void* D, cudaStream_t stream) {
  Impl& g = *impl_;
  if (!A || !W || !D) throw std::invalid_argument("gemm: null A, W or D for " + describe());
  if (has_bias(g.opts.epilogue) != (bias != nullptr))
    throw std::invalid_argument(std::string("gemm: ") +
                                (bias ? "a bias given to " : "no bias given to ") + describe());
  const uint32_t al = g.opts.min_alignment;
  for (const void* p : {A, W, bias, static_cast<const void*>(D)})
    if (p && !aligned(p, al))
      throw std::invalid_argument("gemm: a pointer is not " + std::to_string(al) +
                                  "-byte aligned, as the algorithm chosen for " + describe() +
                                  " assumes (plan with a smaller Options::min_alignment)");
  if (bias && bias != g.bias_set) {
    KB_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(g.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias,
                                                   sizeof(bias)));
    g.bias_set = bias;
  }
  const float alpha = 1.f, beta = 0.f;
  // C = D with beta = 0: cuBLASLt reads nothing from it.
  KB_CUBLAS_CHECK(cublasLtMatmul(g.handle, g.op, &alpha, W, g.w_layout, A, g.a_layout, &beta, D,
                                 g.d_layout, D, g.d_layout, &g.algo, g.workspace.get(),
                                 g.workspace.bytes(), stream));
}

}  // namespace kb::gemm
