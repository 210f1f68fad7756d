#include "tools/kgate/bringup.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "core/atomic_write.h"
#include "core/gpu_name.h"
#include "core/record.h"
#include "core/tuning.h"
#include "reports/format.h"
#include "suite/rows.h"

namespace kb {

namespace {

// "a, b", or "none".
std::string names(const std::set<std::string>& s) { return s.empty() ? "none" : join(s, ", "); }

std::set<std::string> archs_of(const History& h) {
  std::set<std::string> s;
  for (const auto& o : h.observations()) s.insert(h.keys()[o.key].arch);
  return s;
}

// The newest run of the GPU `arch` ("" = of any GPU).
std::optional<RunView> newest_run(const History& h, const std::string& arch) {
  std::optional<RunView> v;
  for (const auto& [a, runs] : h.arch_runs())
    if ((arch.empty() || same_gpu_name(a, arch)) && (!v || runs.newest > v->run))
      v = RunView{&h, runs.newest, a, {}};
  if (v)
    for (const auto& o : h.observations())
      if (o.attempt == 1 && o.run == v->run && h.keys()[o.key].arch == v->arch)
        v->obs.push_back(&o);
  return v;
}

std::optional<double> fig(const Datasheet* d, DatasheetFigure Datasheet::*f) {
  return d ? (d->*f).value : std::nullopt;
}

std::optional<double> share(std::optional<double> a, std::optional<double> b) {
  if (a && b && *b > 0) return *a / *b;
  return std::nullopt;
}

// A point's metrics share a time, hence a roofline fraction: each point is
// shown once, by the first of these it has.
int metric_rank(const std::string& m) {
  static const char* order[] = {"memory_bandwidth(GB/s)", "tflops",
                                "token_per_sec",          "memory_bandwidth_kv(GB/s)",
                                "flops_utilization",      "latency(us)"};
  for (int i = 0; i < 6; ++i)
    if (m == order[i]) return i;
  return 6;
}

// "a; b": a note with one more clause.
void add_note(std::string& note, const std::string& clause) {
  note += (note.empty() ? "" : "; ") + clause;
}

// What the report's sections share.
struct Ctx {
  const BringupInputs& in;
  const History& results;
  BringupReport& r;
  RunView here;
  std::optional<RunView> ref{};
  const History* ref_hist = nullptr;
  const Datasheet* ds = nullptr;
  const Datasheet* ref_ds = nullptr;
  const TargetFile* tf = nullptr;
  std::string slug{};  // the GPU's target and tuning file name
};

void find_datasheet_entry(Ctx& c) {
  BringupReport& r = c.r;
  r.datasheet_path = c.in.datasheets_path;
  if (!c.in.datasheets) {
    r.problems.push_back(c.in.datasheets_problem.empty()
                             ? "no datasheet table: every datasheet column is empty"
                             : c.in.datasheets_problem + ": every datasheet column is empty");
    return;
  }
  c.ds = find_datasheet(*c.in.datasheets, r.gpu);
  if (c.ds) {
    r.datasheet_gpu = c.ds->gpu;
    r.datasheet_source = c.ds->source;
    for (const auto& m : missing_figures(*c.ds, c.in.datasheets_path)) r.problems.push_back(m);
  } else {
    r.notes.push_back("GPU '" + r.gpu + "' is not in the datasheet table " + c.in.datasheets_path +
                      ": its datasheet figures are unknown, so the shares of the datasheet "
                      "and the spec ratios are left empty. Add an entry from NVIDIA's "
                      "datasheet (hbm_gbps, bf16_tflops, f16_tflops, tf32_tflops, "
                      "fp32_tflops, fp8_tflops, int8_tops, sm_count, l2_mb, source) and "
                      "run kgate bringup again");
  }
}

void find_target_file(Ctx& c) {
  c.tf = match_gpu(c.in.targets, c.r.gpu);
  c.slug =
      c.tf ? std::filesystem::path(c.tf->path).filename().string() : gpu_slug(c.r.gpu) + ".json";
  if (c.tf) {
    c.r.target_file = c.tf->path;
    return;
  }
  c.r.notes.push_back(
      "no target file for '" + c.r.gpu + "' in " + targets_dir_name(c.in) +
      ": the run's targets were " + std::to_string(kFallbackRooflineFraction).substr(0, 3) +
      " x each row's roofline, with the ceilings probed at the start of the run (kbench's "
      "fallback), so `status` says little yet. The drafted target file below is the "
      "starting point: review it and commit it as targets/" +
      c.slug);
}

// --reference FILE: its newest run of a GPU other than this one.
void reference_from_file(Ctx& c, const History& file) {
  const BringupInputs& in = c.in;
  std::set<std::string> others;
  for (const auto& a : archs_of(file))
    if (!same_gpu_name(a, c.r.gpu) &&
        (in.reference_gpu.empty() || gpu_name_contains(a, in.reference_gpu)))
      others.insert(a);
  if (others.empty()) {
    c.r.problems.push_back(in.reference + " has no rows of " +
                           (in.reference_gpu.empty() ? std::string("a reference GPU")
                                                     : "reference GPU '" + in.reference_gpu + "'") +
                           " (GPUs there: " + names(archs_of(file)) + "; the GPU brought up is '" +
                           c.r.gpu + "'): the comparison with a reference is left out");
    return;
  }
  std::string pick = *others.begin();
  for (const auto& a : others)
    if (gpu_name_contains(a, "H100")) pick = a;
  if (others.size() > 1)
    c.r.notes.push_back(in.reference + " holds runs of " + names(others) + ": '" + pick +
                        "' is the reference (--reference-gpu NAME picks another)");
  c.ref = newest_run(file, pick);
  c.r.reference_from = in.reference;
}

// Whether a datasheet entry or a target file knows a GPU of this name.
bool known_gpu(const BringupInputs& in, const std::string& name) {
  bool known = false;
  if (in.datasheets)
    for (const auto& d : in.datasheets->gpus) {
      known = known || gpu_name_contains(d.gpu, name);
      for (const auto& m : d.driver_names) known = known || gpu_name_contains(m, name);
      for (const auto& m : d.match) known = known || gpu_name_contains(m, name);
    }
  for (const auto& t : in.targets) {
    known = known || gpu_name_contains(t.gpu, name);
    for (const auto& m : t.match) known = known || gpu_name_contains(m, name);
  }
  return known;
}

// --reference NAME: the newest run of that GPU in the results.
void reference_by_name(Ctx& c) {
  const BringupInputs& in = c.in;
  std::set<std::string> found;
  for (const auto& a : archs_of(c.results))
    if (!same_gpu_name(a, c.r.gpu) && gpu_name_contains(a, in.reference)) found.insert(a);
  if (!found.empty()) {
    c.ref = newest_run(c.results, *found.begin());
    c.r.reference_from = in.results_names;
    return;
  }
  const std::string there = " (GPUs there: " + names(archs_of(c.results)) + ")";
  if (gpu_name_contains(c.r.gpu, in.reference))
    c.r.problems.push_back("the reference '" + in.reference + "' is the GPU brought up ('" +
                           c.r.gpu + "'): give --reference another GPU or its results file");
  else if (known_gpu(in, in.reference))
    c.r.problems.push_back("no run of reference GPU '" + in.reference + "' in " + in.results_names +
                           there +
                           ": give --reference FILE.csv with a run of it (the project's "
                           "H100 run: tests/data/h100-2026-11-24.csv); the comparison with "
                           "a reference is left out");
  else
    c.r.problems.push_back("unknown reference '" + in.reference +
                           "': not a results file, and no GPU of that name in the results" + there +
                           ", the datasheet table or the target files; the comparison with "
                           "a reference is left out");
}

void find_reference(Ctx& c, const History* reference_file) {
  c.ref_hist = reference_file ? reference_file : &c.results;
  if (!c.in.reference_problem.empty())
    c.r.problems.push_back(c.in.reference_problem);
  else if (reference_file)
    reference_from_file(c, *reference_file);
  else if (!c.in.reference.empty())
    reference_by_name(c);
  if (!c.ref) return;
  c.r.reference_gpu = c.ref->arch;
  c.r.reference_run = c.ref_hist->runs()[c.ref->run].label;
  if (c.in.datasheets) c.ref_ds = find_datasheet(*c.in.datasheets, c.ref->arch);
}

void add_ceilings(Ctx& c) {
  for (const CeilingSpec& s : kCeilings) {
    const auto m = s.of(c.here), d = s.figure ? fig(c.ds, s.figure) : std::nullopt;
    const auto rm = c.ref ? s.of(*c.ref) : std::nullopt;
    const auto rd = s.figure ? fig(c.ref_ds, s.figure) : std::nullopt;
    std::string note = s.note;
    if (s.metric == std::string("read_bandwidth(GB/s)") && c.ds && !d)
      note += "; the datasheet entry has no hbm_gbps";
    c.r.ceilings.push_back({s.name, m, d, share(m, d), rm, rd, share(rm, rd), note});
  }
  std::optional<double> int8 = c.tf && c.tf->measured.int8_tops > 0
                                   ? std::optional<double>(c.tf->measured.int8_tops)
                                   : std::nullopt;
  const auto d = fig(c.ds, &Datasheet::int8_tops), rd = fig(c.ref_ds, &Datasheet::int8_tops);
  c.r.ceilings.push_back(
      {"int8 GEMM (TOP/s)", int8, d, share(int8, d), std::nullopt, rd, std::nullopt,
       int8 ? "not measured by the suite: the target file's measured.int8_tops"
            : "not measured: the suite has no int8 GEMM (its int8 work is GEMV, memory-bound)"});
  for (const auto& x : c.r.ceilings)
    if (!x.measured && x.name.find("int8") == std::string::npos)
      c.r.notes.push_back("the run has no figure for " + x.name +
                          " (a --filter run, or a failed probe): that ceiling is left empty");
}

// A compute-bound point's roofline is of its run's peak (measured or the
// datasheet's): both GPUs' fractions are taken of the datasheet peak.
void of_datasheet_peak(const Ctx& c, const Key& k, BringupRow& row) {
  const Observation* t = c.here.find(k.name, "tflops", k.dtype, k.shape);
  const Observation* u = c.ref ? c.ref->find(k.name, "tflops", k.dtype, k.shape) : nullptr;
  const auto peak = dtype_peak(c.ds, k.dtype);
  const auto ref_peak = dtype_peak(c.ref_ds, k.dtype);
  if (!t || !t->measured() || !peak) {
    add_note(row.note, "compute-bound: the two rooflines may use different peaks");
    return;
  }
  row.metric = "tflops (of the datasheet peak)";
  row.actual = t->actual;
  row.here = t->actual / *peak;
  row.ref_actual.reset();
  row.there.reset();
  if (u && u->measured() && ref_peak) {
    row.ref_actual = u->actual;
    row.there = u->actual / *ref_peak;
  } else if (c.ref) {
    add_note(row.note, "compute-bound: no reference TFLOP/s or datasheet peak");
  }
}

BringupRow compare_row(const Ctx& c, const Observation* o) {
  const Key& k = c.here.key(o);
  BringupRow row;
  row.name = k.name;
  row.metric = k.metric;
  row.dtype = k.dtype;
  row.shape = k.shape;
  if (o->measured()) {
    row.actual = o->actual;
    row.here = o->roofline_fraction();
  } else {
    row.note = std::string("here: ") + status_name(o->status);
  }
  if (c.ref) {
    const Observation* p = c.ref->find(k.name, k.metric, k.dtype, k.shape);
    if (!p) {
      add_note(row.note, "not in the reference run");
    } else if (!p->measured()) {
      add_note(row.note, "reference: not measured");
    } else {
      row.ref_actual = p->actual;
      row.there = p->roofline_fraction();
    }
  }
  if (bound_of(std::string(o->variant)) == "compute") of_datasheet_peak(c, k, row);
  if (row.there && *row.there > 1.02)
    add_note(row.note,
             "the reference is above its roofline (output in L2, docs/metrics.md): the ratio "
             "understates this GPU");
  if (row.here && row.there && *row.there > 0) {
    row.ratio = *row.here / *row.there;
    row.candidate = *row.ratio <= 1 - c.in.threshold + 1e-12;
    if (row.candidate) row.tuning = tuning_pointer(row.name, std::string(o->variant));
  }
  return row;
}

// One row per point (metric_rank), candidates first, furthest behind first.
void add_rows(Ctx& c) {
  using Point = std::tuple<std::string, std::string, std::string>;
  std::map<Point, const Observation*> pick;
  std::vector<Point> order;
  for (const auto* o : c.here.obs) {
    const Key& k = c.here.key(o);
    if (k.name == "roofline_probe" || k.metric == "compilation_time(s)") continue;
    auto t = std::make_tuple(k.name, k.dtype, k.shape);
    auto it = pick.find(t);
    if (it == pick.end()) {
      pick[t] = o;
      order.push_back(t);
    } else if (metric_rank(k.metric) < metric_rank(c.here.key(it->second).metric)) {
      it->second = o;
    }
  }
  std::vector<BringupRow> rows;
  for (const auto& t : order) rows.push_back(compare_row(c, pick[t]));
  std::stable_sort(rows.begin(), rows.end(), [](const BringupRow& a, const BringupRow& b) {
    if (a.candidate != b.candidate) return a.candidate;
    if (a.candidate) return *a.ratio < *b.ratio;
    return false;
  });
  for (const auto& row : rows) c.r.candidates += row.candidate ? 1 : 0;
  c.r.rows = std::move(rows);
}

// The tuning tables: which exist for this GPU, and what each candidate needs.
void add_tuning(Ctx& c) {
  const std::string path =
      (c.in.tuning_dir.empty() ? std::string("targets/tuning") : c.in.tuning_dir) + "/" + c.slug;
  const auto text = read_whole_file(path);
  std::string state;
  if (!text) {
    state = path +
            ": absent (the heuristic's first cuBLASLt choice and the GEMV's built-in "
            "configuration run)";
  } else {
    // A table that does not parse stops kbench, and so the report (TuningError).
    const TuningFile t = parse_tuning_file(*text, path);
    parse_gemv_table(t.doc, path, &t.lines);
    const auto& j = t.doc;
    std::string sections;
    for (const char* s : {"cublaslt", "gemv"})
      sections += std::string(sections.empty() ? "" : ", ") + s + ": " +
                  (j.contains(s) && j[s].is_array() ? std::to_string(j[s].size()) + " entries"
                                                    : std::string("absent"));
    state = path + ": " + sections;
  }
  c.r.tuning.push_back("tuning table: " + state);
  std::set<std::string> seen;
  for (const auto& row : c.r.rows)
    if (row.candidate && !row.tuning.empty() && seen.insert(row.tuning).second)
      c.r.tuning.push_back(row.tuning);
}

void add_draft(Ctx& c) {
  BringupReport& r = c.r;
  DraftedTargetFile f = draft_target_file({c.here, r, c.in, c.ds, c.tf});
  r.draft_json = std::move(f.json);
  r.draft_name = c.slug;
  r.draft_path = r.draft_json.empty() ? "" : c.slug;  // written under --out
  r.notes.insert(r.notes.end(), f.notes.begin(), f.notes.end());
  r.problems.insert(r.problems.end(), f.problems.begin(), f.problems.end());
}

}  // namespace

std::string tuning_pointer(const std::string& e, const std::string& variant) {
  if (e == "mlp_layer_norm_gelu" && variant_matches("gemv", variant)) return tuning_pointer("gemv");
  return tuning_pointer(e);
}

std::string tuning_pointer(const std::string& e) {
  if (e == "gemv" || e == "gather_gemv" || e == "Llama-2-7b-chat-hf" || e == "Mixtral-8x7B-v0.1")
    return "GEMV configuration: the tuning table's `gemv` section (per-GPU GEMV kernel choices, "
           "beside `cublaslt`); `kbench tune gemv` times the configurations and writes it";
  if (e == "gemm" || e == "mlp_layer_norm_gelu")
    return "cuBLASLt algorithms: `kbench tune` writes the tuning table's `cublaslt` section";
  if (e == "layer_norm") return "the kernel itself (kernels/layer_norm): no per-GPU table";
  return "";
}

BringupReport build_bringup(const History& results, const History* reference_file,
                            const BringupInputs& in) {
  std::optional<RunView> here = newest_run(results, in.gpu);
  if (!here)
    throw BringupError("no run of " +
                       (in.gpu.empty() ? std::string("any GPU") : "'" + in.gpu + "'") + " in " +
                       in.results_names + " (GPUs there: " + names(archs_of(results)) + ")");
  BringupReport r;
  r.threshold = in.threshold;
  const Run& run = results.runs()[here->run];
  r.gpu = here->arch;
  r.run_id = run.label;
  r.git_sha = run.git_sha;
  r.driver = run.driver;
  r.timestamp = run.timestamp;
  Ctx c{in, results, r, *here};
  find_datasheet_entry(c);
  find_target_file(c);
  find_reference(c, reference_file);
  add_ceilings(c);
  add_rows(c);
  add_tuning(c);
  add_a100(r, in, c.here, c.ds);
  add_draft(c);
  return r;
}

}  // namespace kb
