#include "tools/kgate/bringup.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <tuple>

#include "core/gpu_name.h"
#include "core/record.h"
#include "core/tuning.h"
#include "suite/rows.h"
#include "tools/kgate/bringup_draft.h"
#include "tools/kgate/bringup_run.h"

namespace kb {

namespace {

std::string join(const std::set<std::string>& s) {
  std::string out;
  for (const auto& x : s) out += (out.empty() ? "" : ", ") + x;
  return out.empty() ? "none" : out;
}

std::set<std::string> archs_of(const History& h) {
  std::set<std::string> s;
  for (const auto& o : h.observations()) s.insert(h.keys()[o.key].arch);
  return s;
}

// The newest run of the GPU `arch` ("" = of any GPU).
std::optional<RunView> newest_run(const History& h, const std::string& arch) {
  int64_t best = -1;
  std::string best_arch;
  for (const auto& o : h.observations()) {
    if (o.attempt != 1) continue;
    const std::string& a = h.keys()[o.key].arch;
    if (!arch.empty() && !same_gpu_name(a, arch)) continue;
    if (static_cast<int64_t>(o.run) > best) {
      best = o.run;
      best_arch = a;
    }
  }
  if (best < 0) return std::nullopt;
  RunView v;
  v.h = &h;
  v.run = static_cast<uint32_t>(best);
  v.arch = best_arch;
  for (const auto& o : h.observations())
    if (o.attempt == 1 && o.run == v.run && h.keys()[o.key].arch == v.arch) v.obs.push_back(&o);
  return v;
}

std::optional<double> fig(const Datasheet* d, DatasheetFigure Datasheet::*f) {
  return d ? (d->*f).value : std::nullopt;
}

std::optional<double> share(std::optional<double> a, std::optional<double> b) {
  if (a && b && *b > 0) return *a / *b;
  return std::nullopt;
}

std::string bound_of(const std::string& variant) {
  const auto p = variant.find("bound=");
  if (p == std::string::npos) return "";
  auto e = variant.find(';', p);
  return variant.substr(p + 6, e == std::string::npos ? std::string::npos : e - p - 6);
}

// The peak of a row's dtype in a datasheet entry.
std::optional<double> dtype_peak(const Datasheet* d, const std::string& dtype) {
  if (!d) return std::nullopt;
  if (dtype == "bfloat16") return d->bf16_tflops.value;
  if (dtype == "float16") return d->f16_tflops.value;
  if (dtype == "int8") return d->int8_tops.value;
  if (dtype == "fp8_e4m3") return d->fp8_tflops.value;
  if (dtype == "float32") return d->tf32_tflops.value;
  return std::nullopt;
}

// The metrics of one point share a time, so their roofline fractions are
// one number: each point is shown once, by the first of these it has.
int metric_rank(const std::string& m) {
  static const char* order[] = {"memory_bandwidth(GB/s)", "tflops",
                                "token_per_sec",          "memory_bandwidth_kv(GB/s)",
                                "flops_utilization",      "latency(us)"};
  for (int i = 0; i < 6; ++i)
    if (m == order[i]) return i;
  return 6;
}

}  // namespace

std::string tuning_pointer(const std::string& e, const std::string& variant) {
  // The MLP runs the GEMV kernel at one token, cuBLASLt above (its variant says which).
  if (e == "mlp_layer_norm_gelu" && variant_matches("gemv", variant)) return tuning_pointer("gemv");
  return tuning_pointer(e);
}

std::string tuning_pointer(const std::string& e) {
  if (e == "gemv" || e == "gather_gemv" || e == "Llama-2-7b-chat-hf" || e == "Mixtral-8x7B-v0.1")
    return "GEMV configuration: the tuning table's `gemv` section (per-GPU GEMV kernel choices, "
           "beside `cublaslt`); "
           "`kbench tune gemv` times the configurations and writes it";
  if (e == "gemm" || e == "mlp_layer_norm_gelu")
    return "cuBLASLt algorithms: `kbench tune` writes the tuning table's `cublaslt` section";
  if (e == "layer_norm") return "the kernel itself (kernels/layer_norm): no per-GPU table";
  return "";
}

BringupReport build_bringup(const History& results, const History* reference_file,
                            const BringupInputs& in) {
  BringupReport r;
  r.threshold = in.threshold;
  std::optional<RunView> here = newest_run(results, in.gpu);
  if (!here)
    throw BringupError("no run of " +
                       (in.gpu.empty() ? std::string("any GPU") : "'" + in.gpu + "'") + " in " +
                       in.results_names + " (GPUs there: " + join(archs_of(results)) + ")");
  const Run& run = results.runs()[here->run];
  r.gpu = here->arch;
  r.run_id = run.label;
  r.git_sha = run.git_sha;
  r.driver = run.driver;
  r.timestamp = run.timestamp;

  // The datasheet table.
  r.datasheet_path = in.datasheets_path;
  const Datasheet* ds = nullptr;
  if (!in.datasheets)
    r.problems.push_back(in.datasheets_problem.empty()
                             ? "no datasheet table: every datasheet column is empty"
                             : in.datasheets_problem + ": every datasheet column is empty");
  else {
    ds = find_datasheet(*in.datasheets, r.gpu);
    if (ds) {
      r.datasheet_gpu = ds->gpu;
      r.datasheet_source = ds->source;
      for (const auto& m : missing_figures(*ds, in.datasheets_path)) r.problems.push_back(m);
    } else {
      r.notes.push_back("GPU '" + r.gpu + "' is not in the datasheet table " + in.datasheets_path +
                        ": its datasheet figures are unknown, so the shares of the datasheet "
                        "and the spec ratios are left empty. Add an entry from NVIDIA's "
                        "datasheet (hbm_gbps, bf16_tflops, f16_tflops, tf32_tflops, "
                        "fp32_tflops, fp8_tflops, int8_tops, sm_count, l2_mb, source) and "
                        "run kgate bringup again");
    }
  }

  // The target file.
  const TargetFile* tf = match_gpu(in.targets, r.gpu);
  const std::string slug =
      tf ? std::filesystem::path(tf->path).filename().string() : gpu_slug(r.gpu) + ".json";
  if (tf) {
    r.target_file = tf->path;
  } else {
    r.notes.push_back(
        "no target file for '" + r.gpu + "' in " +
        (in.targets_dir.empty() ? std::string("(no --targets given)") : in.targets_dir) +
        ": the run's targets were " + std::to_string(kFallbackRooflineFraction).substr(0, 3) +
        " x each row's roofline, with the ceilings probed at the start of the run (kbench's "
        "fallback), so `status` says little yet. The drafted target file below is the "
        "starting point: review it and commit it as targets/" +
        slug);
  }

  // The reference run.
  std::optional<RunView> ref;
  const History* ref_hist = reference_file ? reference_file : &results;
  if (!in.reference_problem.empty()) {
    r.problems.push_back(in.reference_problem);
  } else if (reference_file) {
    std::set<std::string> others;
    for (const auto& a : archs_of(*reference_file))
      if (!same_gpu_name(a, r.gpu) &&
          (in.reference_gpu.empty() || gpu_name_contains(a, in.reference_gpu)))
        others.insert(a);
    if (others.empty()) {
      r.problems.push_back(in.reference + " has no rows of " +
                           (in.reference_gpu.empty() ? std::string("a reference GPU")
                                                     : "reference GPU '" + in.reference_gpu + "'") +
                           " (GPUs there: " + join(archs_of(*reference_file)) +
                           "; the GPU brought up is '" + r.gpu +
                           "'): the comparison with a reference is left out");
    } else {
      std::string pick = *others.begin();
      for (const auto& a : others)
        if (gpu_name_contains(a, "H100")) pick = a;
      if (others.size() > 1)
        r.notes.push_back(in.reference + " holds runs of " + join(others) + ": '" + pick +
                          "' is the reference (--reference-gpu NAME picks another)");
      ref = newest_run(*reference_file, pick);
      r.reference_from = in.reference;
    }
  } else if (!in.reference.empty()) {
    std::set<std::string> found;
    for (const auto& a : archs_of(results))
      if (!same_gpu_name(a, r.gpu) && gpu_name_contains(a, in.reference)) found.insert(a);
    if (!found.empty()) {
      ref = newest_run(results, *found.begin());
      r.reference_from = in.results_names;
    } else {
      bool known = false;
      if (in.datasheets)
        for (const auto& d : in.datasheets->gpus) {
          known = known || gpu_name_contains(d.gpu, in.reference);
          for (const auto& m : d.driver_names) known = known || gpu_name_contains(m, in.reference);
          for (const auto& m : d.match) known = known || gpu_name_contains(m, in.reference);
        }
      for (const auto& t : in.targets) {
        known = known || gpu_name_contains(t.gpu, in.reference);
        for (const auto& m : t.match) known = known || gpu_name_contains(m, in.reference);
      }
      if (gpu_name_contains(r.gpu, in.reference))
        r.problems.push_back("the reference '" + in.reference + "' is the GPU brought up ('" +
                             r.gpu + "'): give --reference another GPU or its results file");
      else if (known)
        r.problems.push_back("no run of reference GPU '" + in.reference + "' in " +
                             in.results_names + " (GPUs there: " + join(archs_of(results)) +
                             "): give --reference FILE.csv with a run of it (the project's "
                             "H100 run: tests/data/h100-2026-11-24.csv); the comparison with "
                             "a reference is left out");
      else
        r.problems.push_back("unknown reference '" + in.reference +
                             "': not a results file, and no GPU of that name in the results "
                             "(GPUs there: " +
                             join(archs_of(results)) +
                             "), the datasheet table or the target files; the comparison with "
                             "a reference is left out");
    }
  }
  const Datasheet* ref_ds = nullptr;
  if (ref) {
    r.reference_gpu = ref->arch;
    r.reference_run = ref_hist->runs()[ref->run].label;
    if (in.datasheets) ref_ds = find_datasheet(*in.datasheets, ref->arch);
    if (ref_ds) r.ref_datasheet_gpu = ref_ds->gpu;
  }

  // Ceilings against the datasheet.
  {
    auto add = [&](const std::string& name, std::optional<double> m, std::optional<double> d,
                   std::optional<double> rm, std::optional<double> rd, const std::string& note) {
      BringupCeiling c;
      c.name = name;
      c.measured = m;
      c.datasheet = d;
      c.share = share(m, d);
      c.ref_measured = rm;
      c.ref_datasheet = rd;
      c.ref_share = share(rm, rd);
      c.note = note;
      r.ceilings.push_back(c);
    };
    auto rp = [&](const char* metric) {
      return ref ? ref->probe(metric) : std::optional<double>();
    };
    auto rg = [&](const char* dtype) {
      return ref ? ref->best_gemm(dtype) : std::optional<double>();
    };
    const char* hbm_missing =
        ds && !ds->hbm_gbps.value ? "the datasheet entry has no hbm_gbps" : "";
    add("read bandwidth (GB/s)", here->probe("read_bandwidth(GB/s)"), fig(ds, &Datasheet::hbm_gbps),
        rp("read_bandwidth(GB/s)"), fig(ref_ds, &Datasheet::hbm_gbps),
        std::string("probe: the faster of two streaming read kernels, 2 GiB") +
            (*hbm_missing ? std::string("; ") + hbm_missing : ""));
    add("copy bandwidth (GB/s)", here->probe("copy_bandwidth(GB/s)"), fig(ds, &Datasheet::hbm_gbps),
        rp("copy_bandwidth(GB/s)"), fig(ref_ds, &Datasheet::hbm_gbps),
        "bytes read + written: the faster of the copy kernel and cudaMemcpy");
    add("launch (us)", here->probe("launch(us)"), std::nullopt, rp("launch(us)"), std::nullopt,
        "empty kernel, 4 blocks of 128 threads per SM, event-timed behind a busy GPU; no "
        "datasheet figure");
    add("graph node (us)", here->probe("graph_node(us)"), std::nullopt, rp("graph_node(us)"),
        std::nullopt, "per node of a captured graph of 100 empty kernels; no datasheet figure");
    add("HBM round trip (us)", here->probe("mem_latency(us)"), std::nullopt, rp("mem_latency(us)"),
        std::nullopt, "one 16-byte read on a cold L2 minus an empty kernel; no datasheet figure");
    add("bf16 GEMM (TFLOP/s)", here->best_gemm("bfloat16"), fig(ds, &Datasheet::bf16_tflops),
        rg("bfloat16"), fig(ref_ds, &Datasheet::bf16_tflops),
        "the fastest of the run's cuBLASLt GEMMs (gemm); datasheet: dense");
    add("fp8 GEMM (TFLOP/s)", here->best_gemm("fp8_e4m3"), fig(ds, &Datasheet::fp8_tflops),
        rg("fp8_e4m3"), fig(ref_ds, &Datasheet::fp8_tflops),
        "the fastest of the run's cuBLASLt GEMMs (gemm, e4m3); datasheet: dense");
    std::optional<double> int8 = tf && tf->measured.int8_tops > 0
                                     ? std::optional<double>(tf->measured.int8_tops)
                                     : std::nullopt;
    add("int8 GEMM (TOP/s)", int8, fig(ds, &Datasheet::int8_tops), std::nullopt,
        fig(ref_ds, &Datasheet::int8_tops),
        int8 ? "not measured by the suite: the target file's measured.int8_tops"
             : "not measured: the suite has no int8 GEMM (its int8 work is GEMV, memory-bound)");
    for (const auto& c : r.ceilings)
      if (!c.measured && c.name.find("int8") == std::string::npos)
        r.notes.push_back("the run has no figure for " + c.name +
                          " (a --filter run, or a failed probe): that ceiling is left empty");
  }

  // Every point against the reference.
  {
    std::map<std::tuple<std::string, std::string, std::string>, const Observation*> pick;
    std::vector<std::tuple<std::string, std::string, std::string>> order;
    for (const auto* o : here->obs) {
      const Key& k = here->key(o);
      if (k.name == "roofline_probe" || k.metric == "compilation_time(s)") continue;
      auto t = std::make_tuple(k.name, k.dtype, k.shape);
      auto it = pick.find(t);
      if (it == pick.end()) {
        pick[t] = o;
        order.push_back(t);
      } else if (metric_rank(k.metric) < metric_rank(here->key(it->second).metric)) {
        it->second = o;
      }
    }
    std::vector<BringupRow> rows;
    for (const auto& t : order) {
      const Observation* o = pick[t];
      const Key& k = here->key(o);
      BringupRow row;
      row.name = k.name;
      row.metric = k.metric;
      row.dtype = k.dtype;
      row.shape = k.shape;
      if (o->measured()) {
        row.actual = o->actual;
        row.here = o->roofline_fraction();
      } else {
        row.note = "here: " + std::string(o->status == RowStatus::failed      ? "failed"
                                          : o->status == RowStatus::incorrect ? "incorrect"
                                                                              : "skipped");
      }
      if (ref) {
        const Observation* p = ref->find(k.name, k.metric, k.dtype, k.shape);
        if (!p)
          row.note += (row.note.empty() ? "" : "; ") + std::string("not in the reference run");
        else if (!p->measured())
          row.note += (row.note.empty() ? "" : "; ") + std::string("reference: not measured");
        else {
          row.ref_actual = p->actual;
          row.there = p->roofline_fraction();
        }
      }
      // A compute-bound point's roofline uses the peak the run had: a
      // measured cuBLASLt figure where the GPU's target file has one (the
      // H100's 822 TFLOP/s bf16), else the datasheet's. Two GPUs' fractions
      // are then of different things; both are taken of the datasheet peak.
      if (bound_of(std::string(o->variant)) == "compute") {
        const Observation* t = here->find(k.name, "tflops", k.dtype, k.shape);
        const Observation* u = ref ? ref->find(k.name, "tflops", k.dtype, k.shape) : nullptr;
        const auto peak = dtype_peak(ds, k.dtype);
        const auto ref_peak = dtype_peak(ref_ds, k.dtype);
        if (t && t->measured() && peak) {
          row.metric = "tflops (of the datasheet peak)";
          row.actual = t->actual;
          row.here = t->actual / *peak;
          row.ref_actual.reset();
          row.there.reset();
          if (u && u->measured() && ref_peak) {
            row.ref_actual = u->actual;
            row.there = u->actual / *ref_peak;
          } else if (ref) {
            row.note += (row.note.empty() ? "" : "; ") +
                        std::string("compute-bound: no reference TFLOP/s or datasheet peak");
          }
        } else {
          row.note += (row.note.empty() ? "" : "; ") +
                      std::string("compute-bound: the two rooflines may use different peaks");
        }
      }
      if (row.there && *row.there > 1.02)
        row.note += (row.note.empty() ? "" : "; ") +
                    std::string(
                        "the reference is above its roofline (output in L2, "
                        "docs/metrics.md): the ratio understates this GPU");
      if (row.here && row.there && *row.there > 0) {
        row.ratio = *row.here / *row.there;
        row.candidate = *row.ratio <= 1 - in.threshold + 1e-12;
        if (row.candidate) row.tuning = tuning_pointer(row.name, std::string(o->variant));
      }
      rows.push_back(row);
    }
    std::stable_sort(rows.begin(), rows.end(), [](const BringupRow& a, const BringupRow& b) {
      if (a.candidate != b.candidate) return a.candidate;
      if (a.candidate) return *a.ratio < *b.ratio;
      return false;
    });
    for (const auto& row : rows) r.candidates += row.candidate ? 1 : 0;
    r.rows = std::move(rows);
  }

  // The tuning tables: which exist for this GPU, and what each candidate needs.
  {
    const std::string path =
        (in.tuning_dir.empty() ? std::string("targets/tuning") : in.tuning_dir) + "/" + slug;
    std::ifstream f(path, std::ios::binary);
    std::string state;
    if (!f) {
      state = path +
              ": absent (the heuristic's first cuBLASLt choice and the GEMV's built-in "
              "configuration run)";
    } else {
      std::stringstream ss;
      ss << f.rdbuf();
      // Read as kbench reads it: a table that does not parse stops kbench
      // (exit 2), and so it stops the report (TuningError: file, line, entry).
      const TuningFile t = parse_tuning_file(ss.str(), path);
      parse_gemv_table(t.doc, path, &t.lines);
      const auto& j = t.doc;
      std::string sections;
      for (const char* s : {"cublaslt", "gemv"})
        sections += std::string(sections.empty() ? "" : ", ") + s + ": " +
                    (j.contains(s) && j[s].is_array() ? std::to_string(j[s].size()) + " entries"
                                                      : std::string("absent"));
      state = path + ": " + sections;
    }
    r.tuning.push_back("tuning table: " + state);
    std::set<std::string> seen;
    for (const auto& row : r.rows)
      if (row.candidate && !row.tuning.empty() && seen.insert(row.tuning).second)
        r.tuning.push_back(row.tuning);
  }

  // The seed's rows against the seed's A100 targets.
  {
    const TargetFile* a100 = match_gpu(in.targets, "NVIDIA A100-SXM4-40GB");
    if (!a100) {
      r.problems.push_back(
          "no A100 target file (a100-sxm4-40gb.json, the seed's targets) in " +
          (in.targets_dir.empty() ? std::string("(no --targets given)") : in.targets_dir) +
          ": the comparison with the A100 is left out");
    } else {
      r.a100_file = a100->path;
      const Datasheet* a100_ds =
          in.datasheets ? find_datasheet(*in.datasheets, a100->gpu) : nullptr;
      r.a100_datasheet = a100_ds ? a100_ds->gpu : a100->path + " peaks";
      auto a100_hbm = a100_ds && a100_ds->hbm_gbps.value
                          ? a100_ds->hbm_gbps.value
                          : std::optional<double>(a100->peaks.read_gbps);
      auto a100_peak = [&](const std::string& dtype) -> std::optional<double> {
        if (a100_ds) return dtype_peak(a100_ds, dtype);
        const double v = dtype == "bfloat16" ? a100->peaks.bf16_tflops
                         : dtype == "int8"   ? a100->peaks.int8_tops
                                             : 0;
        return v > 0 ? std::optional<double>(v) : std::nullopt;
      };
      if (!ds)
        r.a100_notes.push_back("'" + r.gpu +
                               "' is not in the datasheet table: no spec ratio, no A100 roofline");
      r.a100_notes.push_back(
          "A100 roofline: this row's roofline divided by the spec ratio of its limiter "
          "(memory: datasheet HBM; compute: the dtype's dense peak), i.e. the same work on an "
          "A100 that reaches the same share of its datasheet as this GPU does. kbench has not "
          "measured an A100 (its target file has no `measured`): a model, not a measurement. "
          "Launch-bound rows have no spec ratio (datasheets give no launch time)");
      for (const auto& e : a100->targets) {
        if (!e.target) continue;
        BringupA100Row row;
        row.name = e.name;
        row.metric = e.metric;
        row.dtype = e.dtype;
        row.shape = e.shape.empty() ? "*" : e.shape;
        row.a100_target = e.target;
        const Observation* o = nullptr;
        for (const auto* x : here->obs) {
          const Key& k = here->key(x);
          if (k.name == e.name && k.metric == e.metric && k.dtype == e.dtype &&
              a100->find(k.name, k.metric, k.dtype, k.shape, std::string(x->variant)) == &e) {
            o = x;
            break;
          }
        }
        if (!o) {
          row.note = "not in this run";
          r.a100.push_back(row);
          continue;
        }
        const Key& k = here->key(o);
        row.shape = k.shape;
        if (!o->measured()) {
          row.note = "not measured here (" + std::string(o->message) + ")";
          r.a100.push_back(row);
          continue;
        }
        row.actual = o->actual;
        row.roofline = o->roofline();
        row.fraction = o->roofline_fraction();
        const bool lower = k.lower_is_better;
        row.measured_ratio = lower ? *e.target / o->actual : o->actual / *e.target;
        if (k.metric == "compilation_time(s)") {
          row.note = "setup time (the seed's is torch.compile's): no roofline, no spec ratio";
        } else if (k.metric == "flops_utilization") {
          row.measured_ratio.reset();
          row.note =
              "the seed's flops_utilization multiplies by time (docs/metrics.md): its 0.8 is "
              "not comparable with ours";
        } else {
          // The limiter: the row's own, or (a seed-mean row) the most common
          // among the run's rows of the same experiment, metric and dtype.
          std::string b = bound_of(std::string(o->variant));
          if (b.empty()) {
            std::map<std::string, int> n;
            for (const auto* x : here->obs) {
              const Key& kx = here->key(x);
              if (kx.name == k.name && kx.metric == k.metric && kx.dtype == k.dtype)
                ++n[bound_of(std::string(x->variant))];
            }
            int best = 0;
            for (const auto& [name, c] : n)
              if (!name.empty() && name != "launch" && c > best) {
                b = name;
                best = c;
              }
          }
          row.bound = b;
          if (b == "memory" && ds && ds->hbm_gbps.value && a100_hbm)
            row.spec_ratio = *ds->hbm_gbps.value / *a100_hbm;
          else if (b == "compute" && dtype_peak(ds, k.dtype) && a100_peak(k.dtype))
            row.spec_ratio = *dtype_peak(ds, k.dtype) / *a100_peak(k.dtype);
          if (row.spec_ratio && row.roofline) {
            row.a100_roofline =
                lower ? *row.roofline * *row.spec_ratio : *row.roofline / *row.spec_ratio;
            row.a100_fraction =
                lower ? *row.a100_roofline / *e.target : *e.target / *row.a100_roofline;
          } else if (b == "launch") {
            row.note = "launch-bound: the datasheets give no launch time";
          } else if (!row.spec_ratio && ds) {
            row.note = "no datasheet figure for its limiter";
          }
        }
        r.a100.push_back(row);
      }
    }
  }

  // The drafted target file (bringup_draft.h).
  {
    DraftInputs d;
    d.run = &*here;
    d.gpu = r.gpu;
    d.run_id = r.run_id;
    d.git_sha = r.git_sha;
    d.driver = r.driver;
    d.timestamp = r.timestamp;
    d.datasheet = ds;
    d.datasheets_path = in.datasheets_path;
    d.run_targets = tf;
    d.probe_path = in.probe_path;
    d.probe_text = in.probe_text;
    d.probe_problem = in.probe_problem;
    DraftedTargetFile f = draft_target_file(d);
    r.draft_json = std::move(f.json);
    r.draft_path = slug;  // the file name; kgate bringup writes it under --out
    r.notes.insert(r.notes.end(), f.notes.begin(), f.notes.end());
    r.problems.insert(r.problems.end(), f.problems.begin(), f.problems.end());
  }
  return r;
}

}  // namespace kb
