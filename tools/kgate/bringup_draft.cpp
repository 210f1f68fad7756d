#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <tuple>

#include "core/atomic_write.h"
#include "reports/format.h"
#include "tools/kgate/boards.h"
#include "tools/kgate/bringup.h"
#include "tools/kgate/gate.h"

namespace kb {

namespace {

using ordered_json = nlohmann::ordered_json;

double round_to(double v, double step) { return std::round(v / step) * step; }

// `measured` without a probe file: the run's probe rows and fastest GEMMs.
ordered_json measured_from_run(const DraftInputs& d) {
  const RunView& here = d.run;
  ordered_json m;
  auto put = [&](const char* key, std::optional<double> v, double step) {
    if (v) m[key] = round_to(*v, step);
  };
  for (double step : {1.0, 0.01})  // the rates, then the times, as kbench probe writes them
    for (const CeilingSpec& s : kCeilings)
      if (s.step == step) put(s.measured, s.of(here), step);
  m["date"] = d.report.timestamp.substr(0, 10);
  m["driver"] = d.report.driver;
  m["source"] = "run " + d.report.run_id +
                ": read/copy/launch/graph node/HBM round trip from its "
                "roofline_probe rows (copy: the faster of the copy kernel and cudaMemcpy), "
                "bf16/fp8 from its fastest gemm row";
  return m;
}

// The `measured` object of a target file's text; nullopt (and `*why`) when
// the text is not a target file, has none, or is not the file of `gpu`
// (where given): another GPU's ceilings would be drafted as this one's.
std::optional<ordered_json> measured_of(const std::string& text, const std::string& path,
                                        std::string* why, const std::string& gpu = "") {
  try {
    const TargetFile f = parse_target_file(text, path);
    if (!gpu.empty() && !match_gpu({f}, gpu)) {
      *why = "a target file of '" + f.gpu + "', not of the GPU brought up ('" + gpu + "')";
      return std::nullopt;
    }
    ordered_json doc = ordered_json::parse(text);
    if (doc.contains("measured") && doc["measured"].is_object()) return doc["measured"];
    *why = path + ": no `measured` object";
  } catch (const std::exception& e) {
    *why = e.what();
  }
  return std::nullopt;
}

std::string unit_of(const std::string& metric) {
  const auto open = metric.find('(');
  if (open != std::string::npos && metric.back() == ')')
    return metric.substr(open + 1, metric.size() - open - 2);
  if (metric == "tflops") return "TFLOP/s";
  if (metric == "token_per_sec") return "tokens/s";
  return metric;
}

// One key of the run (its GPUs merged, as the gate's) and its rows.
struct RunKey {
  std::string name, metric, dtype, shape;
  bool lower_is_better = false;
  uint32_t first = 0;          // the newest run's first row of the key (its lowest attempt)
  std::vector<uint32_t> rows;  // indices into History::observations()
};

// The newest run's keys, each with its rows of that run or, with
// `all_runs`, of every run of the GPU (run by run, attempts in order).
std::vector<RunKey> keys_of_run(const RunView& here, bool all_runs) {
  const auto& obs = here.h->observations();
  const auto before = [&](uint32_t a, uint32_t b) { return obs[a].before(obs[b]); };
  std::vector<RunKey> keys;
  std::map<std::tuple<std::string, std::string, std::string, std::string>, size_t> at;
  for (uint32_t i = 0; i < obs.size(); ++i) {
    const Key& k = here.h->keys()[obs[i].key];
    if (obs[i].run != here.run || k.arch != here.arch) continue;
    auto [it, fresh] = at.try_emplace({k.name, k.metric, k.dtype, k.shape}, keys.size());
    if (fresh) keys.push_back({k.name, k.metric, k.dtype, k.shape, k.lower_is_better, i, {}});
    RunKey& key = keys[it->second];
    if (before(i, key.first)) key.first = i;
  }
  for (uint32_t i = 0; i < obs.size(); ++i) {
    const Key& k = here.h->keys()[obs[i].key];
    if ((!all_runs && obs[i].run != here.run) || k.arch != here.arch) continue;
    if (auto it = at.find({k.name, k.metric, k.dtype, k.shape}); it != at.end())
      keys[it->second].rows.push_back(i);
  }
  for (auto& k : keys) std::stable_sort(k.rows.begin(), k.rows.end(), before);
  // In the order the run wrote them (its first row of each).
  std::stable_sort(keys.begin(), keys.end(), [&](const RunKey& a, const RunKey& b) {
    return obs[a.first].seq < obs[b.first].seq;
  });
  return keys;
}

// A run's value of a key as a fraction of its roofline (a time: the
// roofline over it); none where it failed, was throttled or has none.
std::optional<double> fraction_of(const std::vector<Observation>& obs, const RunKey& k,
                                  const RunValue& rv) {
  const std::optional<double> roofline = obs[k.rows[rv.first]].roofline();
  if (rv.bad != SIZE_MAX || !roofline || *roofline <= 0) return std::nullopt;
  if (!rv.measured || rv.throttled || rv.value <= 0) return std::nullopt;
  return k.lower_is_better ? *roofline / rv.value : rv.value / *roofline;
}

// A key's per-shape target; none without a roofline, nor (the reason in
// `*skip`) where the newest run has no value to draft from. With
// `all_runs`, from the slowest of the key's runs, with its boards' spread.
struct Drafted {
  double fraction = 0;
  ordered_json entry;
};
std::optional<Drafted> draft_key(const RunView& here, const RunKey& k, bool all_runs,
                                 std::string* skip) {
  const auto& obs = here.h->observations();
  std::vector<RunValue> runs;
  group_runs(obs, k.rows, runs);  // one value a run, as the gate judges it
  const auto now = std::find_if(runs.begin(), runs.end(), [&](const RunValue& rv) {
    return obs[k.rows[rv.first]].run == here.run;
  });
  const std::optional<double> roofline = obs[k.rows[now->first]].roofline();
  if (now->bad != SIZE_MAX) {  // a failed row may carry no roofline: said all the same
    *skip = "failed";
    return std::nullopt;
  }
  if (!roofline || *roofline <= 0) return std::nullopt;  // not a rate of a roofline
  if (!now->measured || now->throttled || now->value <= 0) {
    *skip = now->throttled ? "throttled" : "not measured";
    return std::nullopt;
  }
  const RunValue* from = &*now;
  double measured = *fraction_of(obs, k, *now);
  std::map<int64_t, std::vector<double>> by_board;
  int counted = 0;
  for (const RunValue& rv : runs) {  // every run gathered: the newest alone without all_runs
    const std::optional<double> f = fraction_of(obs, k, rv);
    if (!f) continue;
    ++counted;
    by_board[board_of_rows(*here.h, &k.rows[rv.first], rv.attempts)].push_back(*f);
    if (*f < measured) measured = *f, from = &rv;
  }
  Drafted d;
  d.fraction = drafted_fraction(measured);
  const Observation& o = obs[k.rows[from->first]];
  std::string note = "run " + here.h->runs()[o.run].label;
  if (all_runs) {
    note = "the slowest of " + std::to_string(counted) + " runs on " +
           std::to_string(by_board.size()) + " board(s), " + note;
    if (o.gpu < here.h->gpus().size() && !here.h->gpus()[o.gpu].uuid.empty())
      note += " on " + short_board(here.h->gpus()[o.gpu].uuid);
  }
  note += ": " + format_double(from->value >= 1000 ? "%.0f" : "%.4g", from->value) + " " +
          unit_of(k.metric) + ", " + format_double("%.3f", measured) + " of the roofline";
  if (from->remeasured > 0)
    note += " (the median of its " + std::to_string(from->remeasured) + " re-measurements)";
  d.entry = {{"name", k.name},
             {"metric", k.metric},
             {"dtype", k.dtype},
             {"shape", k.shape},
             {"roofline_fraction", d.fraction}};
  int boards = 0;
  if (const auto spread = spread_of_boards(by_board, /*lower_is_better=*/false, &boards)) {
    d.entry["board_spread"] = std::max(0.001, std::ceil(*spread * 1000 - 0.01) / 1000);
    note += "; the medians of its " + std::to_string(boards) + " boards with " +
            std::to_string(kMinRunsPerBoard) + "+ runs differ by up to " +
            format_double("%.1f%%", 100 * *spread);
  }
  d.entry["note"] = note;
  return d;
}

// The per-shape targets of the run's rate keys, each family (experiment,
// metric, dtype) led by its `*` entry at the lowest of its shapes.
ordered_json drafted_targets(const RunView& here, bool all_runs, std::vector<std::string>& notes) {
  using Family = std::tuple<std::string, std::string, std::string>;
  std::vector<Family> order;
  std::map<Family, std::vector<Drafted>> families;
  std::vector<std::string> skipped;
  for (const RunKey& k : keys_of_run(here, all_runs)) {
    if (k.name == "roofline_probe" || k.metric == "compilation_time(s)") continue;
    std::string skip;
    std::optional<Drafted> d = draft_key(here, k, all_runs, &skip);
    if (!skip.empty())
      skipped.push_back(k.name + " " + k.metric + " " + k.dtype + " " + k.shape + " (" + skip +
                        ")");
    if (!d) continue;
    const Family f{k.name, k.metric, k.dtype};
    if (!families.count(f)) order.push_back(f);
    families[f].push_back(std::move(*d));
  }
  ordered_json targets = ordered_json::array();
  for (const Family& f : order) {
    const auto& shapes = families[f];
    double lowest = 1;
    for (const auto& d : shapes) lowest = std::min(lowest, d.fraction);
    targets.push_back({{"name", std::get<0>(f)},
                       {"metric", std::get<1>(f)},
                       {"dtype", std::get<2>(f)},
                       {"shape", "*"},
                       {"roofline_fraction", lowest},
                       {"note", "the lowest of the " + std::to_string(shapes.size()) +
                                    " shape(s) below: a floor for a shape added later"}});
    for (const auto& d : shapes) targets.push_back(d.entry);
  }
  if (!skipped.empty())
    notes.push_back("drafted target file: " + std::to_string(skipped.size()) +
                    " key(s) of the run have no target of their own (the `*` entry of their "
                    "experiment, metric and dtype covers them), the first: " +
                    skipped.front());
  return targets;
}

// Where the run's target file's `measured` differs from the probe's, the
// drafted fractions are of the former.
void say_if_ceilings_differ(const DraftInputs& d, const ordered_json& probe_measured,
                            std::vector<std::string>& notes) {
  if (!d.run_targets) return;
  std::string why;
  const auto used =
      measured_of(read_whole_file(d.run_targets->path).value_or(""), d.run_targets->path, &why);
  if (used && *used == probe_measured) return;
  notes.push_back("the run's rooflines came from " + d.run_targets->path +
                  "'s measured ceilings, which differ from " + d.in.probe_path +
                  "'s: the drafted fractions are of the run's rooflines. To draft them against "
                  "the probe's, bring up with a targets folder without that file "
                  "(tools/bringup.sh then runs against the probe's draft)");
}

// The drafted file succeeds the run's target file where that was the
// probe's draft (tools/bringup.sh), else it is to compare with it.
void say_what_it_is_for(const DraftInputs& d, std::vector<std::string>& notes) {
  if (!d.run_targets) return;
  const std::string& path = d.run_targets->path;
  if (!d.in.probe_text.empty() && read_whole_file(path) == d.in.probe_text)
    notes.push_back(path + " is the probe's draft, which the run used: the drafted file, " +
                    "with the targets of this run, is to take its place");
  else
    notes.push_back(path +
                    " exists: the drafted file is for comparison with it, not a replacement");
}

// Why no file can be drafted without a `peaks.hbm_gbps` (a target file
// requires one): the GPU is not in the datasheet table (or its entry lacks
// the figure) and the run measured no read bandwidth to stand in for it.
std::string no_hbm_problem(const DraftInputs& d) {
  const std::string table =
      d.in.datasheets_path.empty() ? std::string("the datasheet table") : d.in.datasheets_path;
  return (d.datasheet ? table + ": " + d.datasheet->gpu + " has no hbm_gbps"
                      : "GPU '" + d.report.gpu + "' is not in " + table) +
         ", and the run has no roofline_probe read_bandwidth(GB/s) row to stand in for it: no "
         "target file drafted (peaks.hbm_gbps is required). Add the GPU's figures to " +
         table + ", or run the suite with roofline_probe";
}

// The guard before a draft is written: it must read back as a target file
// (core/targets.h, the parser runs and the gate use); one that does not is
// kgate's own error, said as such, and the draft is dropped.
void drop_unless_it_reads_back(DraftedTargetFile& out) {
  try {
    parse_target_file(out.json, "(drafted target file)");
  } catch (const TargetError& e) {
    out.problems.push_back(
        std::string("internal error: the drafted target file does not read back as a target "
                    "file, so it is not written: ") +
        e.what());
    out.json.clear();
  }
}

}  // namespace

double drafted_fraction(double fraction) {
  // The epsilon keeps a fraction such as 0.57, stored as 0.56999..., at 0.57.
  return std::clamp(std::floor(fraction * 100 + 1e-9) / 100, 0.01, 1.0);
}

DraftedTargetFile draft_target_file(const DraftInputs& d) {
  DraftedTargetFile out;
  std::optional<ordered_json> probe;
  if (!d.in.probe_path.empty()) {
    std::string why = d.in.probe_problem;
    if (why.empty()) probe = measured_of(d.in.probe_text, d.in.probe_path, &why, d.report.gpu);
    if (!probe)
      out.problems.push_back("--probe " + d.in.probe_path + ": " + why +
                             ": the drafted `measured` is the run's probe rows instead");
  }
  ordered_json doc;
  doc["gpu"] = d.report.gpu;
  // `gpu` takes the GPU by its exact name; a `match` of that name would also
  // take a sibling model whose name extends it (the H200 NVL).
  doc["match"] = ordered_json::array();
  doc["note"] =
      "Drafted by kgate bringup from run " + d.report.run_id + " (" + d.report.git_sha +
      ", driver " + d.report.driver + "): peaks from the datasheet table, measured " +
      (probe ? "from the probe's draft " + d.in.probe_path + " (its ladder included)"
             : std::string("from the run's probe rows and its fastest GEMMs")) +
      "; each target the roofline fraction its row reached" +
      (d.in.all_runs ? std::string(" in the slowest of the GPU's runs (--all-runs)") : "") +
      ", rounded down to 0.01 (its note gives the measurement), and a `*` entry per experiment, "
      "metric and dtype at the lowest of them. Review (docs/bringup.md) and commit.";
  std::string message;
  doc["peaks"] = draft_peaks(d.datasheet, d.in.datasheets_path, d.report.gpu,
                             d.run.probe("read_bandwidth(GB/s)").value_or(0), &message);
  if (!(doc["peaks"].value("hbm_gbps", 0.0) > 0)) {
    out.problems.push_back(no_hbm_problem(d));
    return out;  // no text: nothing to write
  }
  if (!message.empty() && d.datasheet) out.problems.push_back(message);
  doc["measured"] = probe ? *probe : measured_from_run(d);
  if (probe) say_if_ceilings_differ(d, *probe, out.notes);
  doc["tolerance"] = 0.05;
  doc["targets"] = drafted_targets(d.run, d.in.all_runs, out.notes);
  say_what_it_is_for(d, out.notes);
  out.json = layout_target_file(doc.dump(), "(drafted target file)");
  drop_unless_it_reads_back(out);
  return out;
}

}  // namespace kb
