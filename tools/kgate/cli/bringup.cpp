// kgate bringup (docs/bringup.md): problems of the input are lines of the
// report and of stderr; the report is still written, and the exit code is 2.
#include "tools/kgate/bringup.h"

#include <cstdio>
#include <filesystem>

#include "core/result_reader.h"
#include "tools/kgate/cli/commands.h"

namespace kb::kgate_cli {

namespace {

struct BringupPlan {
  BringupInputs in;
  std::vector<std::string> results;
  std::string out, datasheets;
  bool targets_given = false;
};

BringupPlan parse_bringup(const Args& args) {
  BringupPlan p;
  BringupInputs& in = p.in;
  in.reference = "H100";
  const Reader targets = [&](const Args& a, size_t& i) {
    in.targets_dir = value_of(a, i);
    p.targets_given = true;
  };
  parse_options(args,
                {{"--results", files(p.results)},
                 {"--out", text(p.out)},
                 {"--reference", text(in.reference)},
                 {"--reference-gpu", text(in.reference_gpu)},
                 {"--gpu", text(in.gpu)},
                 {"--targets", targets},
                 {"--datasheets", text(p.datasheets)},
                 {"--probe", text(in.probe_path)},
                 flag("--all-runs", in.all_runs),
                 {"--threshold", number(in.threshold, 0.01, 0.9)}},
                "--results");
  if (p.results.empty()) throw UsageError("bringup needs --results FILE...");
  if (p.out.empty()) throw UsageError("bringup needs --out DIR");
  if (in.reference.empty()) throw UsageError("--reference needs a GPU name or a file");
  return p;
}

// The target files, the datasheet table and the probe: what is missing
// becomes a problem of the report, what is malformed an error (exit 2).
void load_bringup_inputs(BringupPlan& p) {
  BringupInputs& in = p.in;
  std::error_code ec;
  if (!p.targets_given && std::filesystem::is_directory("targets", ec)) in.targets_dir = "targets";
  if (!in.targets_dir.empty()) {
    in.targets = load_target_dir(in.targets_dir);  // a malformed file is an error, as elsewhere
    in.tuning_dir = in.targets_dir + "/tuning";
  }
  in.datasheets_path = !p.datasheets.empty()     ? p.datasheets
                       : !in.targets_dir.empty() ? datasheets_path(in.targets_dir)
                                                 : "";
  if (in.datasheets_path.empty()) {
    in.datasheets_problem =
        "no datasheet table: give --targets DIR (its datasheets/nvidia.json) "
        "or --datasheets FILE";
  } else if (std::filesystem::exists(in.datasheets_path, ec)) {
    in.datasheets = load_datasheets(in.datasheets_path);  // malformed: exit 2, as target files
  } else {
    in.datasheets_problem = in.datasheets_path + ": cannot read the datasheet table";
  }
  for (const auto& r : p.results) in.results_names += (in.results_names.empty() ? "" : ", ") + r;
  if (!in.probe_path.empty()) {
    if (auto text = read_whole_file(in.probe_path))
      in.probe_text = *text;
    else
      in.probe_problem = "cannot read it";
  }
}

// --reference: a results file when it names or looks like one (returns
// true; one that cannot be read is a problem of the report), else a GPU name.
bool read_reference(BringupInputs& in, History& ref) {
  std::error_code ec;
  bool ref_is_file = std::filesystem::exists(in.reference, ec) ||
                     in.reference.find(".csv") != std::string::npos ||
                     in.reference.find('/') != std::string::npos;
  if (ref_is_file) {
    try {
      ref.add_file(in.reference);
      ref.finish();
    } catch (const ResultFileError& e) {
      in.reference_problem = std::string("--reference ") + in.reference + ": " + e.what() +
                             ": the comparison with a reference is left out";
    }
  }
  return ref_is_file;
}

// An earlier run's draft where this run drafts none: left in --out, it
// would pass for this run's. True when there was one.
bool remove_earlier_draft(const std::string& path) {
  std::error_code ec;
  const bool removed = std::filesystem::remove(path, ec);
  if (ec) throw OutputError("cannot remove the earlier draft " + path + ": " + ec.message());
  return removed;
}

// The report, and the drafted target file where there is one (none: the
// report's problems say why, no file is named as drafted, and an earlier
// draft at its path is removed).
void write_bringup(BringupReport& rep, const BringupPlan& p, bool ref_is_file) {
  const BringupInputs& in = p.in;
  const bool drafted = !rep.draft_json.empty();
  const std::string draft = (std::filesystem::path(p.out) / rep.draft_name).string();
  const std::string md = (std::filesystem::path(p.out) / "bringup.md").string();
  const std::string html = (std::filesystem::path(p.out) / "bringup.html").string();
  std::vector<NamedPath> inputs = inputs_of(p.results, in.targets);
  if (ref_is_file) inputs.push_back({"--reference", in.reference});
  inputs.push_back({"--datasheets", in.datasheets_path});
  // The draft's path is written or removed: never an input's.
  inputs.push_back({"the tuning table", (in.tuning_dir.empty() ? "targets/tuning" : in.tuning_dir) +
                                            "/" + rep.draft_name});
  refuse_clashes(inputs, {{"--out", md}, {"--out", html}, {"--out", draft}});
  make_folder(p.out);
  const bool removed = !drafted && remove_earlier_draft(draft);
  if (drafted) {
    rep.draft_path = draft;
    atomic_write(draft, rep.draft_json);
  }
  atomic_write(md, bringup_markdown(rep));
  atomic_write(html, bringup_html(rep));
  std::printf(
      "kgate bringup: %s, run %s%s: %zu of %zu points %.0f%% or more behind the reference\n",
      rep.gpu.c_str(), rep.run_id.c_str(),
      rep.reference_gpu.empty() ? " (no reference)" : (" against " + rep.reference_gpu).c_str(),
      rep.candidates, rep.rows.size(), rep.threshold * 100);
  std::printf("  report: %s, %s\n  drafted target file: %s%s\n", md.c_str(), html.c_str(),
              drafted ? draft.c_str() : "none written (the report's problems say why)",
              removed ? ("; the earlier draft " + draft + " was removed").c_str() : "");
}

}  // namespace

int cmd_bringup(const Args& args) {
  BringupPlan p = parse_bringup(args);
  load_bringup_inputs(p);

  History h;
  read_history(h, p.results, true);
  History ref;
  const bool ref_is_file = read_reference(p.in, ref);
  BringupReport rep =
      build_bringup(h, ref_is_file && p.in.reference_problem.empty() ? &ref : nullptr, p.in);

  write_bringup(rep, p, ref_is_file);
  for (const auto& n : rep.notes) std::printf("  note: %s\n", n.c_str());
  for (const auto& pr : rep.problems) std::fprintf(stderr, "kgate: bringup: %s\n", pr.c_str());
  return rep.problems.empty() ? 0 : 2;
}

}  // namespace kb::kgate_cli
