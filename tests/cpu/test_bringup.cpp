// The bring-up report (kgate bringup, docs/bringup.md) and the datasheet
// table behind it, on the project's recorded H100 and H200 runs
// (tests/data/h100-2026-11-24.csv, h200-2026-11-24.csv: the landed build).
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "core/datasheets.h"
#include "core/targets.h"
#include "reports/bringup_report.h"
#include "tests/cpu/kgate_test_util.h"
#include "tools/kgate/bringup.h"

namespace {

using namespace kgt;

const std::string kSrc = KBENCH_SOURCE_DIR;
const std::string kTargets = kSrc + "/targets";
const std::string kTable = kSrc + "/targets/datasheets/nvidia.json";
const std::string kH100Csv = kSrc + "/tests/data/h100-2026-11-24.csv";
const std::string kH200Csv = kSrc + "/tests/data/h200-2026-11-24.csv";

kb::BringupInputs inputs(const std::string& reference = "H100") {
  kb::BringupInputs in;
  in.reference = reference;
  in.targets_dir = kTargets;
  in.targets = kb::load_target_dir(kTargets);
  in.tuning_dir = kTargets + "/tuning";
  in.datasheets_path = kTable;
  in.datasheets = kb::load_datasheets(kTable);
  in.results_names = "h200.csv";
  return in;
}

struct Loaded {
  kb::History h, ref;
};

// The H200 run in `h`, the H100 run in `ref`.
void load(Loaded& l) {
  l.h.add_file(kH200Csv);
  l.h.finish();
  l.ref.add_file(kH100Csv);
  l.ref.finish();
}

bool any_contains(const std::vector<std::string>& v, const std::string& what) {
  for (const auto& s : v)
    if (contains(s, what)) return true;
  return false;
}

const kb::BringupCeiling& ceiling(const kb::BringupReport& r, const std::string& name) {
  for (const auto& c : r.ceilings)
    if (c.name == name) return c;
  throw std::runtime_error("no ceiling " + name);
}

const kb::BringupRow* point(const kb::BringupReport& r, const std::string& name,
                            const std::string& dtype, const std::string& shape) {
  for (const auto& x : r.rows)
    if (x.name == name && x.dtype == dtype && x.shape == shape) return &x;
  return nullptr;
}

// --- the datasheet table -------------------------------------------------

TEST(Datasheets, TableFindsEachGpuByItsDriverName) {
  const auto t = kb::load_datasheets(kTable);
  struct Case {
    const char* driver_name;
    const char* entry;
    double hbm;
  };
  for (const Case& c : {Case{"NVIDIA A100-SXM4-40GB", "NVIDIA A100 SXM4 40GB", 1555},
                        Case{"NVIDIA A100-SXM4-80GB", "NVIDIA A100 SXM4 80GB", 2039},
                        Case{"NVIDIA A100 80GB PCIe", "NVIDIA A100 PCIe 80GB", 1935},
                        Case{"NVIDIA H100 80GB HBM3", "NVIDIA H100 SXM5 80GB", 3352},
                        Case{"NVIDIA H100 PCIe", "NVIDIA H100 PCIe 80GB", 2000},
                        Case{"NVIDIA H200", "NVIDIA H200 SXM 141GB", 4800},
                        Case{"NVIDIA B200", "NVIDIA B200", 8000}}) {
    const kb::Datasheet* d = kb::find_datasheet(t, c.driver_name);
    ASSERT_NE(d, nullptr) << c.driver_name;
    EXPECT_EQ(d->gpu, c.entry) << c.driver_name;
    EXPECT_EQ(d->hbm_gbps.value.value_or(0), c.hbm) << c.driver_name;
    EXPECT_FALSE(d->source.empty());
    EXPECT_TRUE(kb::missing_figures(*d, kTable).empty()) << c.driver_name;
  }
  // Models the table does not hold are unknown, not given a sibling's figures.
  EXPECT_EQ(kb::find_datasheet(t, "NVIDIA H200 NVL"), nullptr);
  EXPECT_EQ(kb::find_datasheet(t, "NVIDIA H100 NVL"), nullptr);
  EXPECT_EQ(kb::find_datasheet(t, "NVIDIA RTX 6000 Ada Generation"), nullptr);
}

TEST(Datasheets, DenseFiguresAndWhatIsNotPublished) {
  const auto t = kb::load_datasheets(kTable);
  const kb::Datasheet* h200 = kb::find_datasheet(t, "NVIDIA H200");
  ASSERT_NE(h200, nullptr);
  EXPECT_EQ(*h200->bf16_tflops.value, 989.5);  // the datasheet's 1,979 with sparsity, halved
  EXPECT_EQ(*h200->fp8_tflops.value, 1979);
  EXPECT_EQ(*h200->int8_tops.value, 1979);
  EXPECT_EQ(*h200->sm_count.value, 132);
  const kb::Datasheet* a100 = kb::find_datasheet(t, "NVIDIA A100-SXM4-40GB");
  ASSERT_NE(a100, nullptr);
  EXPECT_TRUE(a100->fp8_tflops.present);  // null: no FP8 tensor cores, said in its note
  EXPECT_FALSE(a100->fp8_tflops.value);
  EXPECT_TRUE(contains(a100->note, "FP8"));
  const kb::Datasheet* b200 = kb::find_datasheet(t, "NVIDIA B200");
  ASSERT_NE(b200, nullptr);
  EXPECT_FALSE(b200->sm_count.value);
  EXPECT_TRUE(contains(b200->note, "sm_count"));
}

// The target files' datasheet peaks and the table say the same.
TEST(Datasheets, AgreeWithTheTargetFilesPeaks) {
  const auto t = kb::load_datasheets(kTable);
  for (const auto& f : kb::load_target_dir(kTargets)) {
    const kb::Datasheet* d = kb::find_datasheet(t, f.gpu);
    ASSERT_NE(d, nullptr) << f.path;
    EXPECT_EQ(*d->hbm_gbps.value, f.peaks.read_gbps) << f.path;
    EXPECT_NEAR(*d->bf16_tflops.value, f.peaks.bf16_tflops, 1) << f.path;
    EXPECT_NEAR(*d->int8_tops.value, f.peaks.int8_tops, 1) << f.path;
  }
}

TEST(Datasheets, MalformedTableNamesTheField) {
  auto err = [](const std::string& text) {
    try {
      kb::parse_datasheets(text, "t.json");
    } catch (const kb::DatasheetError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_TRUE(contains(err("{"), "t.json:1:2: not valid JSON"));
  EXPECT_TRUE(contains(err("{\"gpus\": 3}"), "t.json:1: gpus: missing"));
  EXPECT_TRUE(contains(err(R"({"gpus":[{"gpu":"X","match":["X"],"hbm_gbps":1}]})"),
                       "t.json:1: gpus[0].source: missing"));
  EXPECT_TRUE(contains(err(R"({"gpus":[{"gpu":"X","match":["X"],"hbm_gbps":-1,"source":"s"}]})"),
                       "t.json:1: gpus[0].hbm_gbps: expected a number > 0"));
  EXPECT_TRUE(contains(err(R"({"gpus":[{"gpu":"X","hbm_gbps":1,"source":"s"}]})"),
                       "t.json:1: gpus[0].match: give driver_names or match"));
}

TEST(Datasheets, AnAbsentFigureIsAskedFor) {
  auto t = kb::parse_datasheets(
      R"({"gpus":[{"gpu":"NVIDIA X1","driver_names":["NVIDIA X1"],"hbm_gbps":1000,
          "bf16_tflops":null,"source":"X1 datasheet"}]})",
      "t.json");
  const auto missing = kb::missing_figures(t.gpus[0], "t.json");
  EXPECT_TRUE(any_contains(missing, "t.json: NVIDIA X1 has no int8_tops: add it"));
  EXPECT_FALSE(any_contains(missing, "bf16_tflops"));  // null is an answer, absent is not
  std::string message;
  auto peaks = kb::draft_peaks(&t.gpus[0], "t.json", "NVIDIA X1", 900, &message);
  EXPECT_EQ(peaks["hbm_gbps"].get<double>(), 1000);
  EXPECT_FALSE(peaks.contains("bf16_tflops"));
  EXPECT_TRUE(contains(message,
                       "t.json: NVIDIA X1 has no f16_tflops, f32_tflops, tf32_tflops, "
                       "int8_tops, fp8_tflops"))
      << message;
}

TEST(Datasheets, DraftPeaksFromTheTableOrAPlaceholderThatSaysSo) {
  const auto t = kb::load_datasheets(kTable);
  std::string message = "x";
  auto known =
      kb::draft_peaks(kb::find_datasheet(t, "NVIDIA H200"), kTable, "NVIDIA H200", 4675, &message);
  EXPECT_EQ(message, "");
  EXPECT_EQ(known["hbm_gbps"].get<double>(), 4800);  // the datasheet's, not the measured 4675
  EXPECT_EQ(known["bf16_tflops"].get<double>(), 989.5);
  EXPECT_EQ(known["f32_tflops"].get<double>(), 67);  // the target file's name for FP32
  EXPECT_TRUE(contains(known["source"].get<std::string>(), "H200 Tensor Core GPU datasheet"));
  // The draft is a valid target file's peaks.
  nlohmann::json doc = {
      {"gpu", "NVIDIA H200"}, {"peaks", known}, {"targets", nlohmann::json::array()}};
  EXPECT_EQ(kb::parse_target_file(doc.dump(), "d.json").peaks.bf16_tflops, 989.5);

  auto unknown = kb::draft_peaks(nullptr, kTable, "NVIDIA H200 NVL", 4321.4, &message);
  EXPECT_EQ(unknown["hbm_gbps"].get<double>(), 4321);
  EXPECT_TRUE(contains(unknown["source"].get<std::string>(), "NOT A DATASHEET FIGURE"));
  EXPECT_TRUE(contains(message, "GPU 'NVIDIA H200 NVL' is not in the datasheet table")) << message;
  EXPECT_TRUE(contains(message, "Add an entry")) << message;
}

// --- the report on the recorded runs -------------------------------------

TEST(Bringup, CeilingsAgainstTheDatasheet) {
  Loaded l;
  load(l);
  auto in = inputs(kH100Csv);
  const kb::BringupReport r = kb::build_bringup(l.h, &l.ref, in);
  EXPECT_EQ(r.gpu, "NVIDIA H200");
  EXPECT_EQ(r.datasheet_gpu, "NVIDIA H200 SXM 141GB");
  EXPECT_EQ(r.reference_gpu, "NVIDIA H100 80GB HBM3");
  EXPECT_TRUE(r.problems.empty()) << r.problems.front();
  const auto& read = ceiling(r, "read bandwidth (GB/s)");
  EXPECT_NEAR(*read.measured, 4675.27, 0.01);
  EXPECT_EQ(*read.datasheet, 4800);
  EXPECT_NEAR(*read.share, 4675.27 / 4800, 1e-4);
  EXPECT_NEAR(*read.ref_share, 3152.95 / 3352, 1e-4);
  const auto& copy = ceiling(r, "copy bandwidth (GB/s)");
  EXPECT_NEAR(*copy.measured, 4249.62, 0.01);  // cudaMemcpy beat the copy kernel (3937)
  EXPECT_NEAR(*ceiling(r, "launch (us)").measured, 3.04, 0.001);
  EXPECT_FALSE(ceiling(r, "launch (us)").datasheet);
  EXPECT_NEAR(*ceiling(r, "graph node (us)").ref_measured, 0.985, 0.001);
  EXPECT_NEAR(*ceiling(r, "HBM round trip (us)").measured, 0.512, 0.001);
  const auto& bf16 = ceiling(r, "bf16 GEMM (TFLOP/s)");
  EXPECT_NEAR(*bf16.share, *bf16.measured / 989.5, 1e-9);
  EXPECT_GT(*bf16.measured, 800);
  const auto& fp8 = ceiling(r, "fp8 GEMM (TFLOP/s)");
  EXPECT_NEAR(*fp8.share, *fp8.measured / 1979, 1e-9);
  const auto& int8 = ceiling(r, "int8 GEMM (TOP/s)");
  EXPECT_FALSE(int8.measured);  // the suite has no int8 GEMM: said, not invented
  EXPECT_EQ(*int8.datasheet, 1979);
  EXPECT_TRUE(contains(int8.note, "no int8 GEMM"));
}

TEST(Bringup, EveryPointAgainstTheReferenceCandidatesFirst) {
  Loaded l;
  load(l);
  const kb::BringupReport r = kb::build_bringup(l.h, &l.ref, inputs(kH100Csv));
  ASSERT_GT(r.candidates, 0u);
  ASSERT_LT(r.candidates, r.rows.size());
  for (size_t i = 0; i < r.rows.size(); ++i) {
    const auto& x = r.rows[i];
    EXPECT_EQ(x.candidate, i < r.candidates) << x.name << " " << x.shape;
    if (x.candidate) {
      EXPECT_LE(*x.ratio, 0.9 + 1e-9);
      EXPECT_FALSE(x.tuning.empty());
      if (i > 0) EXPECT_LE(*r.rows[i - 1].ratio, *x.ratio);  // furthest behind first
    } else if (x.ratio) {
      EXPECT_GT(*x.ratio, 0.9);
    }
  }
  // The issue's figures: decode int8 at 0.71 of the H200's roofline, 0.84 on the H100.
  const auto* llama = point(r, "Llama-2-7b-chat-hf", "int8", "BS=1;prompt=6;new_tokens=200");
  ASSERT_NE(llama, nullptr);
  EXPECT_NEAR(*llama->here, 0.707, 0.001);
  EXPECT_NEAR(*llama->there, 0.84, 0.005);
  EXPECT_TRUE(llama->candidate);
  EXPECT_TRUE(contains(llama->tuning, "`gemv` section"));
  // A point is shown once, by its first metric.
  size_t n = 0;
  for (const auto& x : r.rows) n += x.name == "Llama-2-7b-chat-hf" && x.dtype == "int8";
  EXPECT_EQ(n, 1u);
  // Compute-bound: both sides as a share of their datasheet peak (the H100's
  // roofline used its measured 822, the H200's the datasheet's 989.5).
  const auto* g = point(r, "gemm", "bfloat16", "M=8192;N=8192;K=8192");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->metric, "tflops (of the datasheet peak)");
  EXPECT_NEAR(*g->here, *g->actual / 989.5, 1e-9);
  EXPECT_NEAR(*g->there, *g->ref_actual / 989.4, 1e-9);
  EXPECT_FALSE(g->candidate);
  // The MLP's one-token rows run the GEMV kernel: its tuning, not cuBLASLt's.
  EXPECT_TRUE(contains(kb::tuning_pointer("mlp_layer_norm_gelu", "gemv;bound=memory"), "gemv"));
  // The command it names exists (the gemv_tune experiment it once named is gone).
  EXPECT_TRUE(contains(kb::tuning_pointer("gemv"), "`kbench tune gemv`"));
  EXPECT_FALSE(contains(kb::tuning_pointer("gemv"), "--filter gemv_tune"));
  EXPECT_TRUE(contains(kb::tuning_pointer("mlp_layer_norm_gelu", "cublaslt;up=a;bound=compute"),
                       "kbench tune"));
  // The repo's H200 tuning table, read as kbench reads it: both sections.
  EXPECT_TRUE(any_contains(r.tuning, "h200-sxm-141gb.json: cublaslt: 50 entries, gemv: "));
}

TEST(Bringup, TheReferenceByNameInTheResults) {
  kb::History h;
  h.add_file(kH100Csv);
  h.add_file(kH200Csv);
  h.finish();
  auto in = inputs("H100");
  in.gpu = "NVIDIA H200";
  const kb::BringupReport r = kb::build_bringup(h, nullptr, in);
  EXPECT_EQ(r.reference_gpu, "NVIDIA H100 80GB HBM3");
  EXPECT_TRUE(r.problems.empty());
  EXPECT_GT(r.candidates, 0u);
}

TEST(Bringup, SeedRowsAgainstTheA100) {
  Loaded l;
  load(l);
  const kb::BringupReport r = kb::build_bringup(l.h, &l.ref, inputs(kH100Csv));
  EXPECT_TRUE(contains(r.a100_file, "a100-sxm4-40gb.json"));
  const kb::BringupA100Row* gemv = nullptr;
  const kb::BringupA100Row* mixtral = nullptr;
  const kb::BringupA100Row* mlp = nullptr;
  const kb::BringupA100Row* compile = nullptr;
  for (const auto& a : r.a100) {
    if (a.name == "gemv" && a.dtype == "int8") gemv = &a;
    if (a.name == "Mixtral-8x7B-v0.1" && a.metric == "token_per_sec") mixtral = &a;
    if (a.name == "mlp_layer_norm_gelu") mlp = &a;
    if (a.name == "Llama-2-7b-chat-hf" && a.dtype == "int8" && a.metric == "compilation_time(s)")
      compile = &a;
  }
  ASSERT_TRUE(gemv && mixtral && mlp && compile);
  EXPECT_EQ(gemv->shape, "mean");
  EXPECT_EQ(*gemv->a100_target, 870);
  EXPECT_NEAR(*gemv->measured_ratio, 2328.386 / 870, 1e-4);
  EXPECT_EQ(gemv->bound, "memory");
  EXPECT_NEAR(*gemv->spec_ratio, 4800.0 / 1555, 1e-9);
  EXPECT_NEAR(*gemv->a100_roofline, *gemv->roofline / (4800.0 / 1555), 1e-6);
  EXPECT_NEAR(*gemv->a100_fraction, 870 / *gemv->a100_roofline, 1e-9);
  EXPECT_EQ(mixtral->note, "not in this run");
  EXPECT_FALSE(mlp->measured_ratio);  // the seed's inverted metric is not compared
  EXPECT_TRUE(contains(mlp->note, "not comparable"));
  EXPECT_NEAR(*compile->measured_ratio, 136 / 0.024626674, 1e-3);  // a time: target / here
  EXPECT_FALSE(compile->spec_ratio);
}

TEST(Bringup, DraftedTargetFileHasDatasheetPeaksAndMeasuredCeilings) {
  Loaded l;
  load(l);
  const kb::BringupReport r = kb::build_bringup(l.h, &l.ref, inputs(kH100Csv));
  EXPECT_EQ(r.draft_path, "h200-sxm-141gb.json");  // beside the existing file's name
  const kb::TargetFile f = kb::parse_target_file(r.draft_json, "draft.json");
  EXPECT_EQ(f.gpu, "NVIDIA H200");
  EXPECT_EQ(f.peaks.read_gbps, 4800);
  EXPECT_EQ(f.peaks.fp8_tflops, 1979);
  EXPECT_EQ(f.measured.read_gbps, 4675);
  EXPECT_EQ(f.measured.copy_gbps, 4250);
  EXPECT_NEAR(f.measured.launch_us, 3.04, 1e-9);
  EXPECT_GT(f.measured.bf16_tflops, 800);
  ASSERT_NE(f.find("gemv", "memory_bandwidth(GB/s)", "int8", "mean"), nullptr);
  ASSERT_NE(f.find("gemv", "memory_bandwidth(GB/s)", "int8", "D=4096"), nullptr);
  // Its own target: the row's fraction (0.867) rounded down (test_bringup_draft.cpp).
  EXPECT_EQ(*f.find("gemv", "memory_bandwidth(GB/s)", "int8", "D=4096")->roofline_fraction, 0.86);
  EXPECT_EQ(f.find("Llama-2-7b-chat-hf", "compilation_time(s)", "int8", "BS=1"), nullptr);
  EXPECT_EQ(f.find("roofline_probe", "launch(us)", "int8", "bytes=2147483648"), nullptr);
}

// --- bad input: one clear line each, the rest still reported ---------------

TEST(Bringup, ReferenceFileWithoutTheReferenceGpu) {
  Loaded l;
  load(l);
  kb::History same;
  same.add_file(kH200Csv);
  same.finish();
  auto in = inputs("h200-again.csv");
  kb::BringupReport r = kb::build_bringup(l.h, &same, in);
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_TRUE(contains(r.problems[0],
                       "h200-again.csv has no rows of a reference GPU (GPUs there: "
                       "NVIDIA H200; the GPU brought up is 'NVIDIA H200')"))
      << r.problems[0];
  EXPECT_TRUE(r.reference_gpu.empty());
  EXPECT_FALSE(r.ceilings.empty());
  EXPECT_FALSE(r.a100.empty());
  EXPECT_FALSE(r.rows.empty());
  EXPECT_EQ(r.candidates, 0u);

  in = inputs("h100.csv");
  in.reference_gpu = "A100";
  r = kb::build_bringup(l.h, &l.ref, in);
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_TRUE(contains(r.problems[0],
                       "h100.csv has no rows of reference GPU 'A100' (GPUs there: "
                       "NVIDIA H100 80GB HBM3"))
      << r.problems[0];
}

TEST(Bringup, UnknownOrAbsentReferenceName) {
  Loaded l;
  load(l);
  kb::BringupReport r = kb::build_bringup(l.h, nullptr, inputs("X100"));
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_TRUE(contains(r.problems[0],
                       "unknown reference 'X100': not a results file, and no GPU "
                       "of that name in the results (GPUs there: NVIDIA H200)"))
      << r.problems[0];
  r = kb::build_bringup(l.h, nullptr, inputs("H100"));
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_TRUE(contains(r.problems[0],
                       "no run of reference GPU 'H100' in h200.csv (GPUs there: "
                       "NVIDIA H200): give --reference FILE.csv"))
      << r.problems[0];
  r = kb::build_bringup(l.h, nullptr, inputs("H200"));
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_TRUE(contains(r.problems[0], "the reference 'H200' is the GPU brought up"));
  EXPECT_FALSE(r.a100.empty());
}

TEST(Bringup, DatasheetEntryMissingOrTableAbsent) {
  Loaded l;
  load(l);
  auto in = inputs(kH100Csv);
  in.datasheets = kb::parse_datasheets(
      R"({"gpus":[{"gpu":"NVIDIA H200 SXM 141GB","driver_names":["NVIDIA H200"],
          "hbm_gbps":4800,"bf16_tflops":989.5,"source":"H200 datasheet"}]})",
      "short.json");
  in.datasheets_path = "short.json";
  kb::BringupReport r = kb::build_bringup(l.h, &l.ref, in);
  EXPECT_TRUE(any_contains(r.problems,
                           "short.json: NVIDIA H200 SXM 141GB has no fp8_tflops: add "
                           "it from the datasheet"));
  EXPECT_FALSE(ceiling(r, "fp8 GEMM (TFLOP/s)").datasheet);
  EXPECT_TRUE(ceiling(r, "read bandwidth (GB/s)").share);           // the rest is still there
  EXPECT_FALSE(ceiling(r, "read bandwidth (GB/s)").ref_datasheet);  // the H100 is not in it
  EXPECT_FALSE(r.rows.empty());

  in.datasheets.reset();
  in.datasheets_problem = "nope.json: cannot read the datasheet table";
  r = kb::build_bringup(l.h, &l.ref, in);
  EXPECT_TRUE(any_contains(r.problems,
                           "nope.json: cannot read the datasheet table: every "
                           "datasheet column is empty"));
  // Without a table the draft's hbm_gbps is the measured read, and says so.
  EXPECT_EQ(kb::parse_target_file(r.draft_json, "d").peaks.read_gbps, 4675);
  EXPECT_TRUE(contains(r.draft_json, "NOT A DATASHEET FIGURE"));
}

TEST(Bringup, UnknownGpuSaysSoAndAsksForTheFigures) {
  Loaded l;
  load(l);
  auto in = inputs(kH100Csv);
  in.datasheets = kb::parse_datasheets(
      R"({"gpus":[{"gpu":"only","driver_names":["NVIDIA Z9"],"source":"s"}]})", "z.json");
  in.datasheets_path = "z.json";
  const kb::BringupReport r = kb::build_bringup(l.h, &l.ref, in);
  EXPECT_TRUE(r.problems.empty());
  EXPECT_TRUE(any_contains(r.notes, "GPU 'NVIDIA H200' is not in the datasheet table z.json"));
  EXPECT_TRUE(any_contains(r.notes, "Add an entry from NVIDIA's datasheet"));
  EXPECT_TRUE(contains(r.draft_json, "NOT A DATASHEET FIGURE"));
  EXPECT_TRUE(any_contains(r.a100_notes, "not in the datasheet table: no spec ratio"));
}

TEST(Bringup, NoTargetFileStillCompletes) {
  // The H200's target file hidden: a folder with the A100's and the H100's.
  auto dir = temp_dir("bringup_no_target");
  fs::copy_file(kTargets + "/a100-sxm4-40gb.json", dir / "a100-sxm4-40gb.json");
  fs::copy_file(kTargets + "/h100-sxm5-80gb.json", dir / "h100-sxm5-80gb.json");
  Loaded l;
  load(l);
  auto in = inputs(kH100Csv);
  in.targets_dir = dir.string();
  in.targets = kb::load_target_dir(dir.string());
  in.tuning_dir = (dir / "tuning").string();
  const kb::BringupReport r = kb::build_bringup(l.h, &l.ref, in);
  EXPECT_TRUE(r.problems.empty());
  EXPECT_TRUE(r.target_file.empty());
  EXPECT_TRUE(any_contains(r.notes, "no target file for 'NVIDIA H200' in " + dir.string() +
                                        ": the run's targets were 0.7 x each row's roofline"));
  EXPECT_EQ(r.draft_path, "nvidia-h200.json");
  EXPECT_FALSE(r.a100.empty());
  EXPECT_GT(r.candidates, 0u);

  // Without the A100's file the A100 section is left out, with one line.
  fs::remove(dir / "a100-sxm4-40gb.json");
  in.targets = kb::load_target_dir(dir.string());
  const kb::BringupReport r2 = kb::build_bringup(l.h, &l.ref, in);
  ASSERT_EQ(r2.problems.size(), 1u);
  EXPECT_TRUE(contains(r2.problems[0], "no A100 target file (a100-sxm4-40gb.json"));
  EXPECT_TRUE(r2.a100.empty());
}

TEST(Bringup, NoRunOfTheGpuIsAnError) {
  Loaded l;
  load(l);
  auto in = inputs(kH100Csv);
  in.gpu = "NVIDIA B200";
  try {
    kb::build_bringup(l.h, &l.ref, in);
    FAIL() << "no error";
  } catch (const kb::BringupError& e) {
    EXPECT_TRUE(contains(e.what(), "no run of 'NVIDIA B200' in h200.csv (GPUs there: NVIDIA H200)"))
        << e.what();
  }
}

// --- the writers ----------------------------------------------------------

TEST(BringupWriters, HtmlIsSelfContainedAndEscaped) {
  kb::BringupReport r;
  r.gpu = "NVIDIA <script>alert(1)</script> & \"X\"";
  r.problems.push_back("a <b>problem</b>");
  kb::BringupRow row;
  row.name = "gemv";
  row.shape = "D=<1>";
  row.here = 0.5;
  row.there = 0.8;
  row.ratio = 0.625;
  row.candidate = true;
  row.tuning = "tune | it";
  r.rows.push_back(row);
  r.candidates = 1;
  r.draft_json = "{ \"gpu\": \"</pre><script>\" }\n";
  const std::string html = kb::bringup_html(r);
  EXPECT_FALSE(contains(html, "<script")) << "escaped everywhere";
  EXPECT_TRUE(contains(html, "NVIDIA &lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;X&quot;"));
  EXPECT_TRUE(contains(html, "a &lt;b&gt;problem&lt;/b&gt;"));
  EXPECT_TRUE(contains(html, "&lt;/pre&gt;"));
  EXPECT_TRUE(contains(html, "<tr><td><b>"));
  for (const char* external : {"http://", "https://", "src=", "<link", "@import", "url("})
    EXPECT_FALSE(contains(html, external)) << external;
  const std::string md = kb::bringup_markdown(r);
  EXPECT_TRUE(contains(md, "tune \\| it")) << "a | in a cell would split the row";
  EXPECT_TRUE(contains(md, "**gemv**"));
  EXPECT_TRUE(contains(md, "## Problems with the input\n\n- a &lt;b&gt;problem&lt;/b&gt;"))
      << "the input's text is data, never markup";
}

TEST(BringupWriters, RecordedReportNamesItsSections) {
  Loaded l;
  load(l);
  const kb::BringupReport r = kb::build_bringup(l.h, &l.ref, inputs(kH100Csv));
  const std::string md = kb::bringup_markdown(r);
  for (const char* s : {"# Bring-up report: NVIDIA H200", "## Ceilings against the datasheet",
                        "## Every row against the NVIDIA H100 80GB HBM3",
                        "## Against the A100 (the seed's targets)", "## Drafted target file",
                        "| read bandwidth (GB/s) | 4675 | 4800 | 0.97 | 3153 | 3352 | 0.94 |"})
    EXPECT_TRUE(contains(md, s)) << s;
  EXPECT_FALSE(contains(md, "## Problems"));
}

// --- the command ------------------------------------------------------------

#ifdef KBENCH_KGATE_EXE
TEST(BringupCli, WritesTheReportAndTheDraft) {
  auto dir = temp_dir("bringup_cli");
  auto res = kgate("bringup --results " + kH200Csv + " --reference " + kH100Csv + " --targets " +
                   kTargets + " --out " + (dir / "out").string());
  EXPECT_EQ(res.code, 0) << res.out;
  EXPECT_TRUE(contains(res.out,
                       "kgate bringup: NVIDIA H200, run 20261124T102453Z-52915c against "
                       "NVIDIA H100 80GB HBM3"))
      << res.out;
  EXPECT_TRUE(fs::exists(dir / "out" / "bringup.md"));
  EXPECT_TRUE(fs::exists(dir / "out" / "bringup.html"));
  EXPECT_NO_THROW(kb::load_target_file((dir / "out" / "h200-sxm-141gb.json").string()));
}

TEST(BringupCli, BadReferenceExits2AfterWritingTheRest) {
  auto dir = temp_dir("bringup_cli_bad");
  auto res = kgate("bringup --results " + kH200Csv + " --reference X100 --targets " + kTargets +
                   " --out " + dir.string());
  EXPECT_EQ(res.code, 2) << res.out;
  EXPECT_TRUE(contains(res.out, "kgate: bringup: unknown reference 'X100'")) << res.out;
  EXPECT_TRUE(contains(slurp(dir / "bringup.md"), "unknown reference 'X100'"));
  EXPECT_TRUE(contains(slurp(dir / "bringup.md"), "## Ceilings against the datasheet"));

  res = kgate("bringup --results " + kH200Csv + " --reference " + (dir / "nope.csv").string() +
              " --targets " + kTargets + " --out " + dir.string());
  EXPECT_EQ(res.code, 2) << res.out;
  EXPECT_TRUE(contains(res.out, "--reference " + (dir / "nope.csv").string() + ": ")) << res.out;
}

TEST(BringupCli, UsageAndNoRun) {
  auto res = kgate("bringup --results " + kH200Csv);
  EXPECT_EQ(res.code, 2);
  EXPECT_TRUE(contains(res.out, "bringup needs --out DIR")) << res.out;
  auto dir = temp_dir("bringup_cli_norun");
  res = kgate("bringup --results " + kH200Csv + " --gpu 'NVIDIA B200' --targets " + kTargets +
              " --out " + (dir / "o").string());
  EXPECT_EQ(res.code, 2) << res.out;
  EXPECT_TRUE(contains(res.out, "no run of 'NVIDIA B200'")) << res.out;
  EXPECT_TRUE(contains(res.out, "nothing was written")) << res.out;
  EXPECT_FALSE(fs::exists(dir / "o"));
}
#endif

}  // namespace

namespace {

// tools/bringup.sh refuses bad options before building or measuring anything.
TEST(BringupScript, RefusesBadOptionsBeforeBuilding) {
  const std::string sh = "bash " + kSrc + "/tools/bringup.sh";
  auto r = kb::test::run_command(sh, "--bogus");
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains(r.out, "unknown option '--bogus'")) << r.out;
  r = kb::test::run_command(sh, "--targets /nonexistent/targets");
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains(r.out, "--targets /nonexistent/targets: not a folder")) << r.out;
  r = kb::test::run_command(sh, "--help");
  EXPECT_EQ(r.code, 0);
  EXPECT_TRUE(contains(r.out, "--reference GPU|FILE.csv")) << r.out;
}

}  // namespace
