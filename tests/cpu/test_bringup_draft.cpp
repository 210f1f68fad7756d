// The target file `kgate bringup` drafts (tools/kgate/bringup.h,
// docs/bringup.md) from a tuned H200 run (tests/data/h200-tuned-trimmed.csv:
// a trimmed copy of a whole run) and the probe's draft target file of that
// GPU (tests/data/h200-probe-target.json, with its measured ladder).
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <regex>
#include <sstream>

#include "core/datasheets.h"
#include "core/targets.h"
#include "tests/cpu/kgate_test_util.h"
#include "tools/kgate/bringup.h"
#include "tools/kgate/gate.h"

namespace {

using namespace kgt;

const std::string kSrc = KBENCH_SOURCE_DIR;
const std::string kTargets = kSrc + "/targets";
const std::string kRunCsv = kSrc + "/tests/data/h200-tuned-trimmed.csv";
const std::string kProbe = kSrc + "/tests/data/h200-probe-target.json";
const std::string kRunId = "20261128T090232Z-e1ca01";
const std::string kH100Csv = kSrc + "/tests/data/h100-2026-11-24.csv";

// The repo's targets without the H200's file: the GPU brought up has none.
fs::path targets_without_h200(const std::string& name) {
  auto dir = temp_dir(name);
  fs::copy(kTargets + "/datasheets", dir / "datasheets");
  fs::copy_file(kTargets + "/a100-sxm4-40gb.json", dir / "a100-sxm4-40gb.json");
  fs::copy_file(kTargets + "/h100-sxm5-80gb.json", dir / "h100-sxm5-80gb.json");
  return dir;
}

kb::BringupInputs inputs(const fs::path& targets, bool with_probe = true) {
  kb::BringupInputs in;
  in.reference = kH100Csv;
  in.targets_dir = targets.string();
  in.targets = kb::load_target_dir(targets.string());
  in.tuning_dir = (targets / "tuning").string();
  in.datasheets_path = (targets / "datasheets" / "nvidia.json").string();
  in.datasheets = kb::load_datasheets(in.datasheets_path);
  in.results_names = "run.csv";
  if (with_probe) {
    in.probe_path = kProbe;
    in.probe_text = slurp(kProbe);
  }
  return in;
}

kb::BringupReport draft_of(const std::string& csv_text, const kb::BringupInputs& in) {
  kb::History h, ref;
  h.add_text(csv_text, "run.csv");
  h.finish();
  ref.add_file(kH100Csv);
  ref.finish();
  return kb::build_bringup(h, &ref, in);
}

// The gate on `csv_text` with `draft` as the only target file.
kb::GateReport check(const std::string& csv_text, const std::string& draft) {
  kb::History h;
  h.add_text(csv_text, "run.csv");
  h.finish();
  kb::GateOptions opt;
  opt.targets.push_back(kb::parse_target_file(draft, "nvidia-h200.json"));
  return kb::run_gate(h, opt);
}

size_t target_failures(const kb::GateReport& rep, std::string* which = nullptr) {
  size_t n = 0;
  for (const auto& k : rep.keys)
    if (k.status == kb::GateStatus::fail && k.rule == "target") {
      ++n;
      if (which) *which += k.name + " " + k.dtype + " " + k.shape + " " + k.metric + "; ";
    }
  return n;
}

// The CSV's line of one point, with `edit` applied to its fields.
std::string edit_row(const std::string& text, const std::string& starts, const std::string& has,
                     const std::function<void(std::vector<std::string>&)>& edit,
                     std::string* line_out = nullptr) {
  std::stringstream in(text);
  std::string out, line;
  while (std::getline(in, line)) {
    if (line.rfind(starts, 0) == 0 && contains(line, has)) {
      std::vector<std::string> f;
      std::stringstream ls(line);
      for (std::string x; std::getline(ls, x, ',');) f.push_back(x);
      edit(f);
      line.clear();
      for (size_t i = 0; i < f.size(); ++i) line += (i ? "," : "") + f[i];
      if (line_out) *line_out = line;
    }
    out += line + "\n";
  }
  return out;
}

const char* kGemvInt8 = "gemv,memory_bandwidth(GB/s),";
constexpr size_t kActual = 3, kStatus = 10, kRunIdColumn = 24;

TEST(BringupDraft, FractionsRoundDownToAHundredthWithinBounds) {
  EXPECT_EQ(kb::drafted_fraction(0.857), 0.85);
  EXPECT_EQ(kb::drafted_fraction(0.57), 0.57);  // stored as 0.5699999...
  EXPECT_EQ(kb::drafted_fraction(0.679), 0.67);
  EXPECT_EQ(kb::drafted_fraction(1.042), 1.0);
  EXPECT_EQ(kb::drafted_fraction(0.004), 0.01);
}

TEST(BringupDraft, TunedRunGivesPerShapeTargetsAndTheProbesLadder) {
  const auto dir = targets_without_h200("draft_tuned");
  const std::string csv = slurp(kRunCsv);
  const kb::BringupReport r = draft_of(csv, inputs(dir));
  EXPECT_TRUE(r.problems.empty()) << r.problems.front();
  EXPECT_EQ(r.draft_path, "nvidia-h200.json");
  const kb::TargetFile f = kb::parse_target_file(r.draft_json, "nvidia-h200.json");
  EXPECT_EQ(f.gpu, "NVIDIA H200");
  // The GPU by its exact name: no substring of it that a sibling model's holds.
  EXPECT_NE(kb::match_gpu({f}, "NVIDIA H200"), nullptr);
  EXPECT_EQ(kb::match_gpu({f}, "NVIDIA H200 NVL"), nullptr);
  // `measured` is the probe's, whole: its scalars and its ladder.
  EXPECT_TRUE(f.measured.ladder.present());
  EXPECT_EQ(f.measured.read_gbps, 4596);
  EXPECT_TRUE(contains(r.draft_json, "\"launch_extra_by_link\""));

  // Each rate row of the run: its own target at its fraction rounded down.
  kb::History h;
  h.add_text(csv, "run.csv");
  h.finish();
  size_t drafted = 0;
  for (const auto& o : h.observations()) {
    const kb::Key& k = h.keys()[o.key];
    const kb::TargetEntry* e = f.find(k.name, k.metric, k.dtype, k.shape);
    if (k.name == "roofline_probe" || k.metric == "compilation_time(s)" || !o.roofline()) {
      EXPECT_TRUE(!e || e->shape == "*") << k.name << " " << k.metric << " " << k.shape;
      continue;
    }
    ASSERT_NE(e, nullptr) << k.name << " " << k.metric << " " << k.shape;
    EXPECT_EQ(e->shape, k.shape);
    EXPECT_EQ(*e->roofline_fraction, kb::drafted_fraction(*o.roofline_fraction()))
        << k.name << " " << k.metric << " " << k.shape;
    EXPECT_TRUE(contains(e->note, "run " + kRunId + ": ")) << e->note;
    ++drafted;
  }
  EXPECT_GT(drafted, 40u);

  const auto* d4096 = f.find("gemv", "memory_bandwidth(GB/s)", "int8", "D=4096");
  EXPECT_EQ(*d4096->roofline_fraction, 0.67);
  EXPECT_EQ(d4096->note, "run " + kRunId + ": 1527 GB/s, 0.679 of the roofline");
  // A time: the fraction is roofline / time.
  const auto* latency = f.find("Mixtral-8x7B-v0.1", "latency(us)", "int8", "layers=16");
  EXPECT_EQ(*latency->roofline_fraction, 0.76);
  EXPECT_TRUE(contains(latency->note, "1971 us, 0.767 of the roofline")) << latency->note;
  // Above the roofline: capped at 1.
  const auto* wave =
      f.find("roofline_ideal", "memory_bandwidth(GB/s)", "int8", "bytes=5242880;kernel=copy_wave");
  EXPECT_EQ(*wave->roofline_fraction, 1.0);
  // A shape not in the run: the family's lowest.
  const auto* later = f.find("gemv", "memory_bandwidth(GB/s)", "int8", "D=2048");
  ASSERT_NE(later, nullptr);
  EXPECT_EQ(later->shape, "*");
  EXPECT_EQ(*later->roofline_fraction, 0.67);
  // No target for what has no roofline (gemm_share), nor for setup time.
  EXPECT_EQ(f.find("mlp_layer_norm_gelu", "gemm_share", "bfloat16", "tokens=1;D=4096"), nullptr);
  EXPECT_EQ(f.find("Mixtral-8x7B-v0.1", "compilation_time(s)", "int8", "layers=16"), nullptr);
  EXPECT_EQ(f.find("roofline_probe", "launch(us)", "int8", "bytes=2147483648"), nullptr);
}

TEST(BringupDraft, CheckOfTheSameRunPassesAndARowTenPercentSlowerFails) {
  const auto dir = targets_without_h200("draft_check");
  const std::string csv = slurp(kRunCsv);
  const std::string draft = draft_of(csv, inputs(dir)).draft_json;
  std::string which;
  const kb::GateReport same = check(csv, draft);
  EXPECT_EQ(target_failures(same, &which), 0u) << which;

  std::string edited;
  const std::string slower = edit_row(
      csv, kGemvInt8, ",int8,cuda,NVIDIA H200,False,N=22016;K=4096,",
      [](std::vector<std::string>& f) { f[kActual] = std::to_string(std::stod(f[kActual]) * 0.9); },
      &edited);
  ASSERT_FALSE(edited.empty());
  which.clear();
  EXPECT_EQ(target_failures(check(slower, draft), &which), 1u) << which;
  EXPECT_TRUE(contains(which, "gemv int8 N=22016;K=4096 memory_bandwidth(GB/s)")) << which;
}

TEST(BringupDraft, ReMeasuredKeyIsDraftedAsTheGateJudgesIt) {
  // Two re-measurements of gemv int8 D=4096 (attempts 2 and 3 of the run),
  // 10% and 20% faster: the gate takes their median, and so does the draft.
  const auto dir = targets_without_h200("draft_remeasured");
  std::string csv = slurp(kRunCsv);
  std::string line;
  edit_row(
      csv, kGemvInt8, ",int8,cuda,NVIDIA H200,False,D=4096,", [](std::vector<std::string>&) {},
      &line);
  ASSERT_FALSE(line.empty());
  for (double scale : {1.1, 1.2})
    csv += edit_row(line + "\n", kGemvInt8, "", [&](std::vector<std::string>& f) {
      f[kActual] = std::to_string(std::stod(f[kActual]) * scale);
      f[kRunIdColumn] = kRunId + "/" + (scale < 1.15 ? "2" : "3");
    });
  const kb::BringupReport r = draft_of(csv, inputs(dir));
  const kb::TargetFile f = kb::parse_target_file(r.draft_json, "d.json");
  const auto* e = f.find("gemv", "memory_bandwidth(GB/s)", "int8", "D=4096");
  EXPECT_EQ(*e->roofline_fraction, 0.78) << e->note;  // 0.679 x 1.15 = 0.781
  EXPECT_TRUE(contains(e->note, "(the median of its 2 re-measurements)")) << e->note;
  std::string which;
  EXPECT_EQ(target_failures(check(csv, r.draft_json), &which), 0u) << which;
}

TEST(BringupDraft, FailedOrThrottledKeysHaveNoTargetOfTheirOwn) {
  const auto dir = targets_without_h200("draft_failed");
  std::string csv = slurp(kRunCsv);
  csv = edit_row(csv, kGemvInt8, ",int8,cuda,NVIDIA H200,False,D=8192,",
                 [](std::vector<std::string>& f) { f[kStatus] = "failed"; });
  csv = edit_row(csv, kGemvInt8, ",int8,cuda,NVIDIA H200,False,D=16384,",
                 [](std::vector<std::string>& f) { f[kStatus] = "throttled"; });
  const kb::BringupReport r = draft_of(csv, inputs(dir));
  const kb::TargetFile f = kb::parse_target_file(r.draft_json, "d.json");
  EXPECT_EQ(f.find("gemv", "memory_bandwidth(GB/s)", "int8", "D=8192")->shape, "*");
  EXPECT_EQ(f.find("gemv", "memory_bandwidth(GB/s)", "int8", "D=16384")->shape, "*");
  bool said = false;
  for (const auto& n : r.notes)
    said = said || contains(n, "2 key(s) of the run have no target of their own");
  EXPECT_TRUE(said);
}

// The run's rows as run `id` on `board`, every rate `scale` times (a time
// divided by it).
std::string copy_of_run(const std::string& csv, const std::string& id, const std::string& board,
                        double scale) {
  // Without the header, and without the quoted messages (their commas).
  std::string out =
      std::regex_replace(csv.substr(csv.find('\n') + 1), std::regex("\"[^\"]*\""), "");
  return edit_row(out, "", "", [&](std::vector<std::string>& f) {
    const bool time = contains(f[1], "(us)") || contains(f[1], "(s)");
    if (!f[kActual].empty())
      f[kActual] = std::to_string(std::stod(f[kActual]) * (time ? 1 / scale : scale));
    f[kRunIdColumn] = id;
    f[kRunIdColumn + 1] = "2026-11-27T0" + id.substr(id.size() - 1) + ":00:00Z";
    f[kRunIdColumn + 4] = board;
  });
}

TEST(BringupDraft, AllRunsDraftsTheSlowestBoardAndTheBoardsSpread) {
  // Three earlier runs on board B, 3% slower than the newest run's board,
  // two more on the newest run's board A: --all-runs drafts each target
  // from the slowest run and writes the boards' spread.
  const auto dir = targets_without_h200("draft_all_runs");
  const std::string run = slurp(kRunCsv);
  const std::string a = "GPU-d2ca3da5-2227-8ca3-2c98-e3826c69d1a8";
  const std::string b = "GPU-bbbbbbbb-1111-2222-3333-444444444444";
  std::string csv = run.substr(0, run.find('\n') + 1);
  for (int i = 1; i <= 3; ++i) csv += copy_of_run(run, "r" + std::to_string(i), b, 0.97);
  for (int i = 4; i <= 5; ++i) csv += copy_of_run(run, "r" + std::to_string(i), a, 1.0);
  csv += run.substr(run.find('\n') + 1);
  kb::BringupInputs in = inputs(dir);
  const auto newest_only = kb::parse_target_file(draft_of(csv, in).draft_json, "d.json");
  const auto* e = newest_only.find("gemv", "memory_bandwidth(GB/s)", "int8", "D=4096");
  EXPECT_EQ(*e->roofline_fraction, 0.67) << e->note;  // the newest run's 0.679
  EXPECT_FALSE(e->board_spread.has_value());

  in.all_runs = true;
  const kb::BringupReport r = draft_of(csv, in);
  const auto f = kb::parse_target_file(r.draft_json, "d.json");
  e = f.find("gemv", "memory_bandwidth(GB/s)", "int8", "D=4096");
  EXPECT_EQ(*e->roofline_fraction, 0.65) << e->note;  // 0.679 x 0.97 = 0.659
  EXPECT_DOUBLE_EQ(*e->board_spread, 0.03) << e->note;
  EXPECT_TRUE(contains(e->note, "the slowest of 6 runs on 2 board(s), run r1 on GPU-bbbbbbbb"))
      << e->note;
  EXPECT_TRUE(contains(e->note, "the medians of its 2 boards with 3+ runs differ by up to 3.0%"))
      << e->note;
  // A time is drafted from its slowest run too: the roofline over the time.
  const auto* t =
      f.find("Llama-2-7b-chat-hf", "latency(us)", "bfloat16", "BS=1;prompt=6;new_tokens=200");
  ASSERT_NE(t, nullptr);
  const auto* t_now = newest_only.find("Llama-2-7b-chat-hf", "latency(us)", "bfloat16",
                                       "BS=1;prompt=6;new_tokens=200");
  EXPECT_LT(*t->roofline_fraction, *t_now->roofline_fraction) << t->note;
  EXPECT_TRUE(contains(t->note, "run r1 on GPU-bbbbbbbb")) << t->note;
  // Each board's runs pass the drafted targets: the slower board's too.
  std::string which;
  const std::string slow = run.substr(0, run.find('\n') + 1) + copy_of_run(run, "r9", b, 0.97);
  EXPECT_EQ(target_failures(check(slow, r.draft_json), &which), 0u) << which;
  EXPECT_EQ(target_failures(check(run, r.draft_json), &which), 0u) << which;
}

TEST(BringupDraft, WithoutAProbeTheRunsProbeRows) {
  const auto dir = targets_without_h200("draft_no_probe");
  const kb::BringupReport r = draft_of(slurp(kRunCsv), inputs(dir, false));
  const kb::TargetFile f = kb::parse_target_file(r.draft_json, "d.json");
  EXPECT_FALSE(f.measured.ladder.present());
  EXPECT_EQ(f.measured.read_gbps, 4683);  // the run's read_bandwidth row
  EXPECT_TRUE(contains(r.draft_json, "measured from the run's probe rows"));
}

TEST(BringupDraft, AProbeThatIsNotATargetFileIsAProblem) {
  const auto dir = targets_without_h200("draft_bad_probe");
  auto in = inputs(dir);
  in.probe_text = "{ \"gpu\": ";
  kb::BringupReport r = draft_of(slurp(kRunCsv), in);
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_TRUE(contains(r.problems[0], "--probe " + kProbe + ": "));
  EXPECT_TRUE(contains(r.problems[0], "the drafted `measured` is the run's probe rows instead"));
  in.probe_text.clear();
  in.probe_problem = "cannot read it";
  r = draft_of(slurp(kRunCsv), in);
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_TRUE(contains(r.problems[0], "--probe " + kProbe + ": cannot read it")) << r.problems[0];
}

// The probe's draft of another GPU (given by hand; kbench probe refuses to
// write into one): its ceilings are not this GPU's.
TEST(BringupDraft, AProbeOfAnotherGpuIsAProblem) {
  const auto dir = targets_without_h200("draft_other_probe");
  auto in = inputs(dir);
  in.probe_path = kTargets + "/h100-sxm5-80gb.json";
  in.probe_text = slurp(in.probe_path);
  const kb::BringupReport r = draft_of(slurp(kRunCsv), in);
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_EQ(r.problems[0], "--probe " + in.probe_path +
                               ": a target file of 'NVIDIA H100 80GB HBM3', not of the GPU "
                               "brought up ('NVIDIA H200'): the drafted `measured` is the run's "
                               "probe rows instead");
  const kb::TargetFile f = kb::parse_target_file(r.draft_json, "d.json");
  EXPECT_EQ(f.measured.read_gbps, 4683);  // the run's read_bandwidth row, not the H100's 3151
  EXPECT_FALSE(f.measured.ladder.present());
}

TEST(BringupDraft, TheProbesDraftInstalledIsToBeReplaced) {
  // tools/bringup.sh's folder: the probe's draft installed as the GPU's file.
  const auto dir = targets_without_h200("draft_installed");
  fs::copy_file(kProbe, dir / "nvidia-h200.json");
  const kb::BringupReport r = draft_of(slurp(kRunCsv), inputs(dir));
  EXPECT_EQ(r.draft_path, "nvidia-h200.json");
  std::string notes;
  for (const auto& n : r.notes) notes += n + "\n";
  EXPECT_TRUE(contains(
      notes, (dir / "nvidia-h200.json").string() + " is the probe's draft, which the run used"))
      << notes;
  EXPECT_FALSE(contains(notes, "not a replacement")) << notes;
  EXPECT_FALSE(contains(notes, "differ")) << notes;
}

TEST(BringupDraft, SaysWhenTheRunsCeilingsWereNotTheProbes) {
  // The GPU's file in the run's folder has ceilings of its own (another
  // read_gbps): they gave the run its rooflines, not the probe's.
  const auto dir = targets_without_h200("ceilings_differ");
  std::string other = slurp(kProbe);
  const std::string from = "\"read_gbps\": 4596", to = "\"read_gbps\": 4500";
  ASSERT_NE(other.find(from), std::string::npos);
  other.replace(other.find(from), from.size(), to);
  { std::ofstream(dir / "h200-sxm-141gb.json") << other; }
  const kb::BringupReport r = draft_of(slurp(kRunCsv), inputs(dir));
  bool said = false;
  for (const auto& n : r.notes)
    said = said ||
           contains(n, "the run's rooflines came from " + (dir / "h200-sxm-141gb.json").string() +
                           "'s measured ceilings, which differ");
  EXPECT_TRUE(said);
  EXPECT_EQ(r.draft_path, "h200-sxm-141gb.json");
}

// The run's CSV without its roofline_probe rows (a run with --filter).
std::string without_probe_rows(const std::string& csv) {
  std::stringstream in(csv);
  std::string out;
  for (std::string line; std::getline(in, line);)
    if (line.rfind("roofline_probe,", 0) != 0) out += line + "\n";
  return out;
}

// A datasheet table that does not have the H200.
const char* kTableWithoutH200 =
    R"({"gpus":[{"gpu":"only","driver_names":["NVIDIA Z9"],"hbm_gbps":1,"source":"s"}]})";

// No HBM bandwidth to draft peaks.hbm_gbps from (not in the datasheet table,
// or no figure there, and no probe rows): a problem, no draft; a draft of
// `hbm_gbps: 0` would not read back as a target file.
TEST(BringupDraft, NoHbmBandwidthAnywhereIsAProblemAndNoDraft) {
  const auto dir = targets_without_h200("draft_no_hbm");
  auto in = inputs(dir, /*with_probe=*/false);
  in.datasheets = kb::parse_datasheets(kTableWithoutH200, "z.json");
  in.datasheets_path = "z.json";
  const std::string csv = without_probe_rows(slurp(kRunCsv));
  kb::BringupReport r = draft_of(csv, in);
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_EQ(r.problems[0],
            "GPU 'NVIDIA H200' is not in z.json, and the run has no roofline_probe "
            "read_bandwidth(GB/s) row to stand in for it: no target file drafted "
            "(peaks.hbm_gbps is required). Add the GPU's figures to z.json, or run the suite "
            "with roofline_probe");
  EXPECT_EQ(r.draft_json, "");
  EXPECT_EQ(r.draft_path, "");
  // In the table without the figure: the same.
  in.datasheets = kb::parse_datasheets(
      R"({"gpus":[{"gpu":"H200 sheet","driver_names":["NVIDIA H200"],"source":"s"}]})", "z.json");
  r = draft_of(csv, in);
  EXPECT_TRUE(contains(r.problems.back(),
                       "z.json: H200 sheet has no hbm_gbps, and the run has no "
                       "roofline_probe read_bandwidth(GB/s) row"))
      << r.problems.back();
  EXPECT_EQ(r.draft_json, "");
  // With the probe rows the measured read stands in, as a placeholder that says so.
  in.datasheets = kb::parse_datasheets(kTableWithoutH200, "z.json");
  r = draft_of(slurp(kRunCsv), in);
  EXPECT_TRUE(r.problems.empty()) << r.problems.front();
  EXPECT_EQ(kb::parse_target_file(r.draft_json, "d.json").peaks.read_gbps, 4683);
}

// Every draft is read back with the target file parser before it is kept:
// a row whose shape is `*` drafts an entry of the same rows as its `*` floor.
TEST(BringupDraft, ADraftThatDoesNotReadBackIsNotWritten) {
  const auto dir = targets_without_h200("draft_reads_back");
  const std::string csv = edit_row(slurp(kRunCsv), "layer_norm,", "bfloat16",
                                   [](std::vector<std::string>& f) { f[8] = "*"; });
  const kb::BringupReport r = draft_of(csv, inputs(dir));
  ASSERT_FALSE(r.problems.empty());
  EXPECT_TRUE(contains(r.problems.back(),
                       "internal error: the drafted target file does not read back as a target "
                       "file, so it is not written: (drafted target file)"))
      << r.problems.back();
  EXPECT_EQ(r.draft_json, "");
  EXPECT_EQ(r.draft_path, "");
}

#ifdef KBENCH_KGATE_EXE
TEST(BringupDraftCli, ProbeOptionAndACheckAgainstTheDraft) {
  const auto dir = targets_without_h200("draft_cli");
  const auto out = dir / "out";
  const std::string common = "bringup --results " + kRunCsv + " --reference " + kH100Csv +
                             " --targets " + dir.string() + " --out " + out.string();
  auto res = kgate(common + " --probe " + kProbe);
  EXPECT_EQ(res.code, 0) << res.out;
  ASSERT_TRUE(fs::exists(out / "nvidia-h200.json"));
  EXPECT_TRUE(kb::load_target_file((out / "nvidia-h200.json").string()).measured.ladder.present());
  fs::create_directories(dir / "draft");
  fs::copy_file(out / "nvidia-h200.json", dir / "draft" / "nvidia-h200.json");
  res = kgate("check --results " + kRunCsv + " --targets " + (dir / "draft").string());
  EXPECT_EQ(res.code, 0) << res.out;

  res = kgate(common + " --probe " + (dir / "nope.json").string());
  EXPECT_EQ(res.code, 2) << res.out;
  EXPECT_TRUE(contains(res.out, "--probe " + (dir / "nope.json").string() + ": cannot read it"))
      << res.out;
}

// No draft: exit 2, the report says why, no file named or written.
TEST(BringupDraftCli, NoHbmBandwidthExits2WithoutADraft) {
  const auto dir = targets_without_h200("draft_cli_no_hbm");
  const auto out = dir / "out";
  const auto csv = write(dir / "run.csv", without_probe_rows(slurp(kRunCsv)));
  fs::create_directories(dir / "sheets");  // not a target file of --targets
  const auto table = write(dir / "sheets" / "z.json", kTableWithoutH200);
  const auto res =
      kgate("bringup --results " + csv.string() + " --reference " + kH100Csv + " --targets " +
            dir.string() + " --datasheets " + table.string() + " --out " + out.string());
  EXPECT_EQ(res.code, 2) << res.out;
  EXPECT_TRUE(
      contains(res.out, "drafted target file: none written (the report's problems say why)"))
      << res.out;
  EXPECT_TRUE(contains(res.out, "no target file drafted (peaks.hbm_gbps is required)")) << res.out;
  EXPECT_FALSE(fs::exists(out / "nvidia-h200.json"));
  const std::string md = slurp(out / "bringup.md");
  EXPECT_TRUE(contains(md, "no target file drafted")) << md;
  EXPECT_TRUE(contains(md, "Not written.")) << md;
}

// A run that drafts nothing removes an earlier run's draft at the path it
// would write: left in --out, it would pass for this run's.
TEST(BringupDraftCli, NoDraftRemovesAnEarlierDraft) {
  const auto dir = targets_without_h200("draft_cli_stale");
  const auto out = dir / "out";
  const auto csv = write(dir / "run.csv", without_probe_rows(slurp(kRunCsv)));
  fs::create_directories(dir / "sheets");
  const auto table = write(dir / "sheets" / "z.json", kTableWithoutH200);
  fs::create_directories(out);
  const auto stale = write(out / "nvidia-h200.json", "{\"gpu\": \"an earlier draft\"}\n");
  const auto res =
      kgate("bringup --results " + csv.string() + " --reference " + kH100Csv + " --targets " +
            dir.string() + " --datasheets " + table.string() + " --out " + out.string());
  EXPECT_EQ(res.code, 2) << res.out;
  EXPECT_FALSE(fs::exists(stale)) << "an earlier draft was left in --out";
  EXPECT_TRUE(contains(res.out,
                       "drafted target file: none written (the report's problems say "
                       "why); the earlier draft " +
                           stale.string() + " was removed"))
      << res.out;
  EXPECT_TRUE(contains(slurp(out / "bringup.md"), "Not written."));
}
#endif

}  // namespace
