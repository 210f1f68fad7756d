#include "core/tuning.h"

#include <filesystem>
#include <limits>
#include <optional>

#include "core/atomic_write.h"
#include "core/gemv_refusal.h"
#include "core/gpu_name.h"

namespace kb {

using nlohmann::ordered_json;

namespace {

using Src = JsonFields<TuningError>;  // the file being read

int64_t get_int(const ordered_json& obj, const char* key, const Src& path, const std::string& where,
                int64_t lo, int64_t hi) {
  auto it = obj.find(key);
  if (it == obj.end()) path.fail(where + key, "missing (expected a whole number)");
  if (!it->is_number_integer()) path.fail(where + key, "expected a whole number");
  const int64_t v = it->get<int64_t>();
  if (v < lo || v > hi)
    path.fail(where + key, "expected a whole number from " + std::to_string(lo) + " to " +
                               std::to_string(hi) + ", got " + std::to_string(v));
  return v;
}

// [min, max] of a bucket: two whole numbers >= 1, max null for no bound.
void get_range(const ordered_json& e, const char* key, const Src& path, const std::string& where,
               int64_t& lo, int64_t& hi) {
  const std::string w = where + "." + key;
  auto it = e.find(key);
  if (it == e.end()) return;  // the whole range
  if (!it->is_array() || it->size() != 2)
    path.fail(w, "expected [min, max] (max null for no bound)");
  const auto& a = *it;
  if (!a[0].is_number_integer() || a[0].get<int64_t>() < 1)
    path.fail(w, "expected a whole number >= 1 as min");
  lo = a[0].get<int64_t>();
  if (a[1].is_null()) {
    hi = std::numeric_limits<int64_t>::max();
  } else {
    if (!a[1].is_number_integer()) path.fail(w, "expected a whole number or null as max");
    hi = a[1].get<int64_t>();
    if (hi < lo) path.fail(w, "max below min: the bucket holds no shape");
  }
}

// The tuning file at `path`, its gemv section checked too; none where it
// does not exist. One that cannot be read or is malformed throws TuningError.
std::optional<TuningFile> read_table(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::nullopt;
  const auto text = read_whole_file(path);
  if (!text) throw TuningError(path + ": cannot read the tuning file");
  TuningFile f = parse_tuning_file(*text, path);
  parse_gemv_table(f.doc, path, &f.lines);  // the gemv section must parse for the pins too
  return f;
}

// The tuning file at `path` when it exists and is for this GPU; none (with
// `*warning` naming the file's GPU) when it is another GPU's. A file that
// cannot be read or is malformed throws TuningError: a night on other kernels
// than the table says must not pass as one on the table's.
std::optional<TuningFile> read_for_gpu(const std::string& path, const std::string& gpu_name,
                                       std::string* warning) {
  std::optional<TuningFile> f = read_table(path);
  if (f && !same_gpu_name(f->gpu, gpu_name)) {
    if (warning)
      *warning = path + ": written for '" + f->gpu + "', not this GPU ('" + gpu_name +
                 "'): not used; cuBLASLt's heuristic and the generic GEMV rule choose";
    return std::nullopt;
  }
  return f;
}

}  // namespace

TuningFile parse_tuning_file(const std::string& text, const std::string& path) {
  TuningFile f;
  f.path = path;
  JsonDoc d;
  if (std::string error; !parse_json_file(text, path, &d, &error)) throw TuningError(error);
  f.doc = std::move(d.value);
  f.lines = std::move(d.lines);
  const Src src{path, &f.lines};
  if (!f.doc.is_object()) src.fail("", "expected an object at the top level");
  // Every object names its fields: a misspelt one (a gemv entry's "usage")
  // would be ignored, and its entry hold other shapes than it says.
  src.only(f.doc, "", {"gpu", "note", "cublaslt", "gemv"});
  if (!f.doc.contains("gpu") || !f.doc["gpu"].is_string())
    src.fail("gpu", "missing (expected the GPU's name as the driver reports it)");
  f.gpu = f.doc["gpu"].get<std::string>();
  if (!f.doc.contains("cublaslt")) return f;
  const auto& list = f.doc["cublaslt"];
  if (!list.is_array()) src.fail("cublaslt", "expected a list of entries");
  const int64_t big = int64_t(1) << 40, u32 = 0xffffffffll;
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string where = "cublaslt[" + std::to_string(i) + "]";
    const auto& e = list[i];
    if (!e.is_object()) src.fail(where, "expected an object");
    src.only(e, where + ".", {"M", "N", "K", "input", "epilogue", "algo", "measured"});
    gemm::PinnedAlgo p;
    p.origin = path + " " + where;
    p.key.M = get_int(e, "M", src, where + ".", 1, big);
    p.key.N = get_int(e, "N", src, where + ".", 1, big);
    p.key.K = get_int(e, "K", src, where + ".", 1, big);
    const std::string input = src.string(e, "input", where + ".", "bf16");
    if (input == "bf16")
      p.key.input = gemm::Input::bf16;
    else if (input == "fp8_e4m3")
      p.key.input = gemm::Input::fp8_e4m3;
    else
      src.fail(where + ".input", "expected \"bf16\" or \"fp8_e4m3\", got \"" + input + "\"");
    const std::string epi = src.string(e, "epilogue", where + ".", "none");
    bool known = false;
    for (auto ep : {gemm::Epilogue::none, gemm::Epilogue::bias, gemm::Epilogue::gelu,
                    gemm::Epilogue::gelu_bias})
      if (epi == gemm::epilogue_name(ep)) {
        p.key.epilogue = ep;
        known = true;
      }
    if (!known) src.fail(where + ".epilogue", "unknown epilogue \"" + epi + "\"");
    if (!e.contains("algo") || !e["algo"].is_object()) src.fail(where + ".algo", "missing");
    const auto& a = e["algo"];
    const std::string aw = where + ".algo.";
    src.only(
        a, aw,
        {"id", "tile", "stages", "splitk", "reduction", "swizzle", "custom", "cluster", "inner"});
    gemm::AlgoConfig& c = p.config;
    c.id = static_cast<int32_t>(get_int(a, "id", src, aw, 0, 0x7fffffff));
    c.tile = static_cast<uint32_t>(get_int(a, "tile", src, aw, 0, u32));
    c.stages = static_cast<uint32_t>(get_int(a, "stages", src, aw, 0, u32));
    c.splitk = static_cast<int32_t>(get_int(a, "splitk", src, aw, 1, 0x7fffffff));
    c.reduction = static_cast<uint32_t>(get_int(a, "reduction", src, aw, 0, u32));
    c.swizzle = static_cast<uint32_t>(get_int(a, "swizzle", src, aw, 0, u32));
    c.custom = static_cast<uint32_t>(get_int(a, "custom", src, aw, 0, u32));
    c.cluster = static_cast<uint16_t>(get_int(a, "cluster", src, aw, 0, 0xffff));
    c.inner =
        static_cast<uint16_t>(a.contains("inner") ? get_int(a, "inner", src, aw, 0, 0xffff) : 0);
    for (const auto& q : f.cublaslt)
      if (q.key == p.key) src.fail(where, "a second entry for the same GEMM (" + q.origin + ")");
    f.cublaslt.push_back(p);
  }
  return f;
}

ordered_json read_tuning_doc(const std::string& path, const std::string& gpu_name) {
  const std::optional<TuningFile> f = read_table(path);
  if (!f) return ordered_json();
  if (!same_gpu_name(f->gpu, gpu_name))
    throw TuningError(path + ": the tuning table of '" + f->gpu + "', not of this GPU ('" +
                      gpu_name +
                      "'): tuning into it would keep that GPU's entries under this GPU's "
                      "name. Give --write this GPU's table or a new file");
  return f->doc;
}

void write_tuning_doc(const ordered_json& doc, const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  atomic_write(path, doc.dump(2) + "\n");
}

std::string tuning_path(const std::string& dir, const TargetFile* target,
                        const std::string& gpu_name) {
  const std::string name = target ? std::filesystem::path(target->path).filename().string()
                                  : gpu_slug(gpu_name) + ".json";
  return dir + "/tuning/" + name;
}

std::vector<gemv::TableEntry> parse_gemv_table(const ordered_json& doc, const std::string& path,
                                               const JsonLines* lines) {
  const Src src{path, lines};
  std::vector<gemv::TableEntry> out;
  if (!doc.is_object() || !doc.contains("gemv")) return out;
  const auto& list = doc["gemv"];
  if (!list.is_array()) src.fail("gemv", "expected a list of entries");
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string where = "gemv[" + std::to_string(i) + "]";
    const auto& e = list[i];
    if (!e.is_object()) src.fail(where, "expected an object");
    src.only(e, where + ".",
             {"dtype", "experts", "use", "rows", "row_bytes", "max_bytes", "kernel", "measured"});
    gemv::TableEntry t;
    t.origin = path + " " + where;
    const std::string dtype = src.string(e, "dtype", where + ".", nullptr);
    if (dtype == "int8")
      t.bucket.int8 = true;
    else if (dtype == "bfloat16" || dtype == "bf16")
      t.bucket.int8 = false;
    else
      src.fail(where + ".dtype", "expected \"int8\" or \"bfloat16\", got \"" + dtype + "\"");
    const std::string experts = src.string(e, "experts", where + ".", "one");
    if (experts != "one" && experts != "gather")
      src.fail(where + ".experts", "expected \"one\" or \"gather\", got \"" + experts + "\"");
    t.bucket.gather = experts == "gather";
    const std::string use = src.string(e, "use", where + ".", "standalone");
    const auto u = gemv::parse_use(use);
    if (!u)
      src.fail(
          where + ".use",
          "expected \"standalone\", \"decode\", \"swiglu\" or \"combine\", got \"" + use + "\"");
    t.bucket.use = *u;
    get_range(e, "rows", src, where, t.bucket.rows_min, t.bucket.rows_max);
    get_range(e, "row_bytes", src, where, t.bucket.row_bytes_min, t.bucket.row_bytes_max);
    if (e.contains("max_bytes"))
      t.bucket.max_bytes = get_int(e, "max_bytes", src, where + ".", 1, int64_t(1) << 50);
    const std::string name = src.string(e, "kernel", where + ".", nullptr);
    const auto k = gemv::parse_kernel(name);
    if (!k)
      src.fail(where + ".kernel",
               "unknown kernel '" + name +
                   "' (names: R2U1W4P1K2, one8, T4, GM4W4K1, M4W8K2D3, B3W8S3O2R0, BM3W8S2O2R2; "
                   "core/gemv_config.h)");
    t.kernel = *k;
    // One the dispatch would pass over at every shape: the generic rule
    // would run them while the table says otherwise.
    if (const std::string why = gemv::entry_refusal(t); !why.empty())
      src.fail(where + ".kernel", "'" + name + "' can run none of this entry's shapes: " + why);
    out.push_back(t);
  }
  return out;
}

std::vector<gemv::TableEntry> load_gemv_table(const std::string& path, const std::string& gpu_name,
                                              std::string* warning) {
  std::optional<TuningFile> f = read_for_gpu(path, gpu_name, warning);
  if (!f) return {};
  return parse_gemv_table(f->doc, path, &f->lines);
}

ordered_json untuned_gemv_entries(const ordered_json& doc) {
  ordered_json kept = ordered_json::array();
  if (!doc.is_object() || !doc.contains("gemv") || !doc["gemv"].is_array()) return kept;
  for (const auto& e : doc["gemv"])
    if (e.is_object() && e.contains("use") && e["use"] != "standalone") kept.push_back(e);
  return kept;
}

ordered_json gemv_entry_json(const gemv::TableEntry& t, const ordered_json& measured) {
  const auto bound = [](int64_t v) {
    return v == std::numeric_limits<int64_t>::max() ? ordered_json(nullptr) : ordered_json(v);
  };
  ordered_json e;
  e["dtype"] = t.bucket.int8 ? "int8" : "bfloat16";
  e["experts"] = t.bucket.gather ? "gather" : "one";
  if (t.bucket.use != gemv::Use::standalone) e["use"] = gemv::use_name(t.bucket.use);
  e["rows"] = {t.bucket.rows_min, bound(t.bucket.rows_max)};
  e["row_bytes"] = {t.bucket.row_bytes_min, bound(t.bucket.row_bytes_max)};
  if (t.bucket.max_bytes > 0) e["max_bytes"] = t.bucket.max_bytes;
  e["kernel"] = gemv::kernel_name(t.kernel);
  if (!measured.is_null()) e["measured"] = measured;
  return e;
}

std::vector<gemm::PinnedAlgo> load_pins(const std::string& path, const std::string& gpu_name,
                                        std::string* warning) {
  std::optional<TuningFile> f = read_for_gpu(path, gpu_name, warning);
  if (!f) return {};
  return f->cublaslt;
}

ordered_json pin_json(const gemm::PinnedAlgo& p, const ordered_json& measured) {
  const gemm::AlgoConfig& c = p.config;
  ordered_json e;
  e["M"] = p.key.M;
  e["N"] = p.key.N;
  e["K"] = p.key.K;
  e["input"] = gemm::input_name(p.key.input);
  e["epilogue"] = gemm::epilogue_name(p.key.epilogue);
  e["algo"] = {{"id", c.id},         {"tile", c.tile},           {"stages", c.stages},
               {"splitk", c.splitk}, {"reduction", c.reduction}, {"swizzle", c.swizzle},
               {"custom", c.custom}, {"cluster", c.cluster},     {"inner", c.inner}};
  e["measured"] = measured;
  return e;
}

}  // namespace kb
