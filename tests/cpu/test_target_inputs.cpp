// The files people edit by hand (target files, the datasheet table, tuning
// files) and GPU names: every parse error names the file, the line and the
// field; two target files for one GPU are an error naming both; a GPU name
// is one GPU model whatever its case, in kbench and in kgate alike.
#include <gtest/gtest.h>

#include "core/datasheets.h"
#include "core/targets.h"
#include "core/tuning.h"
#include "kgate_test_util.h"

namespace {

using namespace kgt;

const char* kH200File = R"J({"gpu": "NVIDIA H200", "match": ["H200"],
  "peaks": {"hbm_gbps": 4800},
  "targets": [{"name": "gemv", "metric": "memory_bandwidth(GB/s)", "dtype": "bfloat16",
               "shape": "*", "target": 100}]}
)J";

std::string target_error(const std::string& text) {
  try {
    kb::parse_target_file(text, "t.json");
  } catch (const kb::TargetError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(TargetFiles, TwoFilesForOneGpuAreAnErrorNamingBoth) {
  const fs::path d = temp_dir("two_files");
  write(d / "h200-sxm-141gb.json", kH200File);
  std::string copy = kH200File;
  copy.replace(copy.find("\"target\": 100"), 13, "\"target\": 1");
  write(d / "a-copy.json", copy);  // sorts first
  const auto files = kb::load_target_dir(d.string());
  try {
    kb::match_gpu(files, "NVIDIA H200");
    ADD_FAILURE() << "the first file was used silently";
  } catch (const kb::TargetError& e) {
    const std::string m = e.what();
    EXPECT_TRUE(contains(m, (d / "a-copy.json").string())) << m;
    EXPECT_TRUE(contains(m, (d / "h200-sxm-141gb.json").string())) << m;
  }
  // Another GPU still finds no file, without an error.
  EXPECT_EQ(kb::match_gpu(files, "NVIDIA B200"), nullptr);
}

TEST(TargetFiles, NumberOutOfRangeNamesFileLineAndField) {
  std::string text = kH200File;
  text.replace(text.find("\"target\": 100"), 13, "\"target\": 1e400");
  const std::string e = target_error(text);
  EXPECT_TRUE(contains(e, "t.json:4:")) << e;
  EXPECT_TRUE(contains(e, "targets[0].target: number out of range (1e400)")) << e;
  EXPECT_FALSE(contains(e, "json.exception")) << e;
}

TEST(TargetFiles, DuplicateKeyNamesBothLines) {
  const std::string e = target_error(R"J({"gpu": "NVIDIA H200",
  "peaks": {"hbm_gbps": 4800},
  "targets": [],
  "gpu": "NVIDIA H100 80GB HBM3"})J");
  EXPECT_EQ(e, "t.json:4: gpu: given twice in one object (the other at line 1): keep one");
  const std::string nested = target_error(R"J({"gpu": "x", "peaks": {"hbm_gbps": 4800,
  "hbm_gbps": 1}, "targets": []})J");
  EXPECT_TRUE(contains(nested, "t.json:2: peaks.hbm_gbps: given twice")) << nested;
}

// Two entries for the same rows: the first would hold and the other never
// be checked, so the verdict would hang on their order in the file.
TEST(TargetFiles, TwoEntriesForTheSameRowsNameBothLines) {
  const std::string e = target_error(R"J({"gpu": "NVIDIA H200", "peaks": {"hbm_gbps": 4800},
  "targets": [
    {"name": "gemv", "metric": "memory_bandwidth(GB/s)", "dtype": "int8", "shape": "D=4096",
     "variant": "gemv;bound=memory", "target": 100},
    {"name": "gemv", "metric": "memory_bandwidth(GB/s)", "dtype": "int8", "shape": "D=4096",
     "variant": "bound=memory;gemv", "target": 5000}]})J");
  EXPECT_EQ(e,
            "t.json:5: targets[1]: the same rows as targets[0] (line 3): name, metric, dtype, "
            "shape and variant; which one holds would depend on their order: keep one");
  // "" and "*" are one shape; a shape of its own, or another variant, is not the same.
  const std::string any = target_error(R"J({"gpu": "x", "peaks": {"hbm_gbps": 1}, "targets": [
    {"name": "a", "metric": "m", "dtype": "d", "target": 1},
    {"name": "a", "metric": "m", "dtype": "d", "shape": "*", "target": 2}]})J");
  EXPECT_TRUE(contains(any, "targets[1]: the same rows as targets[0]")) << any;
  EXPECT_EQ(target_error(R"J({"gpu": "x", "peaks": {"hbm_gbps": 1}, "targets": [
    {"name": "a", "metric": "m", "dtype": "d", "shape": "*", "target": 1},
    {"name": "a", "metric": "m", "dtype": "d", "shape": "D=1", "target": 2},
    {"name": "a", "metric": "m", "dtype": "d", "shape": "D=1", "variant": "v", "target": 3}]})J"),
            "(no error)");
}

TEST(TargetFiles, SyntaxErrorNamesLineAndColumn) {
  const std::string e = target_error(
      "{\"gpu\": \"x\",\n  \"peaks\": {\"hbm_gbps\": 4800},\n"
      "  \"targets\": [,]\n}");
  EXPECT_EQ(e.rfind("t.json:3:15: targets[0]: not valid JSON: syntax error", 0), 0u) << e;
}

TEST(TargetFiles, WrongTypeNamesFileLineAndField) {
  std::string text = kH200File;
  text.replace(text.find("\"target\": 100"), 13, "\"target\": \"fast\"");
  EXPECT_EQ(target_error(text), "t.json:4: targets[0].target: expected a number");
  EXPECT_EQ(target_error("{\"gpu\": \"x\",\n \"peaks\": [1]}"),
            "t.json:2: peaks: expected an object");
  // Missing: the line of the object that lacks it.
  EXPECT_EQ(target_error("{\"gpu\": \"x\", \"peaks\": {\"hbm_gbps\": 1},\n \"targets\": [\n"
                         "  {\"metric\": \"m\"}]}"),
            "t.json:3: targets[0].name: missing (expected a string)");
}

// A misspelt field is an error naming it and the field meant: ignored, a
// per-entry "tolerence": 0.01 left the default 0.05 and passed a 4% miss.
TEST(TargetFiles, UnknownFieldNamesTheFieldMeant) {
  std::string text = kH200File;
  text.replace(text.find("\"target\": 100"), 13, "\"target\": 100, \"tolerence\": 0.01");
  EXPECT_EQ(target_error(text),
            "t.json:4: targets[0].tolerence: unknown field: did you mean \"tolerance\"?");
  text = kH200File;
  text.replace(text.find("\"peaks\""), 7, "\"peak\": {\"hbm_gbps\": 1}, \"peaks\"");
  EXPECT_EQ(target_error(text), "t.json:2: peak: unknown field: did you mean \"peaks\"?");
  // Each object of the file; far from any field: the fields it takes.
  const std::string file = R"J({"gpu": "x", "peaks": {"hbm_gbps": 1, "bf16_tflop": 9},
  "targets": []})J";
  EXPECT_EQ(target_error(file),
            "t.json:1: peaks.bf16_tflop: unknown field: did you mean \"bf16_tflops\"?");
  const std::string measured = R"J({"gpu": "x", "peaks": {"hbm_gbps": 1},
  "measured": {"read_gbps": 2, "remark": "r"}, "targets": []})J";
  const std::string e = target_error(measured);
  EXPECT_TRUE(contains(e, "t.json:2: measured.remark: unknown field (the fields here: date, "))
      << e;
  EXPECT_TRUE(contains(e, "note")) << e;
  const std::string ladder = R"J({"gpu": "x", "peaks": {"hbm_gbps": 1},
  "measured": {"ladder": {"reads": []}}, "targets": []})J";
  EXPECT_EQ(target_error(ladder),
            "t.json:2: measured.ladder.reads: unknown field: did you mean \"read\"?");
}

TEST(Datasheets, OutOfRangeDuplicateAndSyntaxNameFileAndLine) {
  auto err = [](const std::string& text) {
    try {
      kb::parse_datasheets(text, "d.json");
    } catch (const kb::DatasheetError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_TRUE(contains(err("{\"gpus\": [{\"gpu\": \"X\", \"match\": [\"X\"],\n"
                           " \"hbm_gbps\": -1e999, \"source\": \"s\"}]}"),
                       "d.json:2:"));
  EXPECT_TRUE(contains(err("{\"gpus\": [{\"gpu\": \"X\", \"match\": [\"X\"],\n"
                           " \"hbm_gbps\": 1e999, \"source\": \"s\"}]}"),
                       "gpus[0].hbm_gbps: number out of range"));
  EXPECT_TRUE(contains(err("{\"gpus\": [], \"gpus\": []}"), "d.json:1: gpus: given twice"));
  EXPECT_TRUE(contains(err("{\"gpus\": [{\"gpu\": \"X\", \"match\": [\"X\"], \"source\": 7}]}"),
                       "d.json:1: gpus[0].source: missing"));
}

std::string tuning_error(const std::string& text) {
  try {
    kb::parse_tuning_file(text, "u.json");
  } catch (const kb::TuningError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Tuning, WrongTypesOutOfRangeAndDuplicatesNameFileLineAndField) {
  const std::string entry = R"J({"M": 1, "N": 2, "K": 3, "input": 5, "epilogue": "none",
   "algo": {"id": 1, "tile": 1, "stages": 1, "splitk": 1, "reduction": 0, "swizzle": 0,
            "custom": 0, "cluster": 0}})J";
  EXPECT_EQ(tuning_error("{\"gpu\": \"G\",\n\"cublaslt\": [" + entry + "]}"),
            "u.json:2: cublaslt[0].input: expected a string");
  EXPECT_TRUE(contains(tuning_error("{\"gpu\": \"G\", \"gemv\": [{\"max_bytes\": 1e400}]}"),
                       "u.json:1:37: gemv[0].max_bytes: number out of range"));
  EXPECT_EQ(tuning_error("{\"gpu\": \"G\",\n\"gpu\": \"H\"}"),
            "u.json:2: gpu: given twice in one object (the other at line 1): keep one");
}

// A misspelt field of a tuning table is an error naming it: a decode
// entry's "usage" made it a standalone entry that took the standalone
// GEMV's shapes from their tuned kernel, without a word.
TEST(Tuning, UnknownFieldNamesTheFieldMeant) {
  auto gemv_error = [](const std::string& text) {
    try {
      kb::TuningFile f = kb::parse_tuning_file(text, "u.json");
      kb::parse_gemv_table(f.doc, "u.json", &f.lines);
    } catch (const kb::TuningError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(gemv_error("{\"gpu\": \"G\", \"gemv\": [\n {\"dtype\": \"int8\", \"usage\": "
                       "\"decode\", \"kernel\": \"T4\"}]}"),
            "u.json:2: gemv[0].usage: unknown field: did you mean \"use\"?");
  EXPECT_EQ(gemv_error("{\"gpu\": \"G\", \"gemv\": [{\"dtype\": \"int8\", \"row\": [1, 8],\n"
                       " \"kernel\": \"T4\"}]}"),
            "u.json:1: gemv[0].row: unknown field: did you mean \"rows\"?");
  EXPECT_EQ(gemv_error("{\"gpu\": \"G\",\n \"gemvs\": []}"),
            "u.json:2: gemvs: unknown field: did you mean \"gemv\"?");
  const std::string entry = R"J({"M": 1, "N": 2, "K": 3, "epilogue": "none",
   "algo": {"id": 1, "tile": 1, "stage": 1, "splitk": 1, "reduction": 0, "swizzle": 0,
            "custom": 0, "cluster": 0}})J";
  EXPECT_EQ(tuning_error("{\"gpu\": \"G\",\n\"cublaslt\": [" + entry + "]}"),
            "u.json:3: cublaslt[0].algo.stage: unknown field: did you mean \"stages\"?");
  // What kbench tune writes reads back.
  const std::string src = KBENCH_SOURCE_DIR;
  for (const char* t :
       {"/targets/tuning/h100-sxm5-80gb.json", "/targets/tuning/h200-sxm-141gb.json"})
    EXPECT_EQ(gemv_error(slurp(src + t)), "(no error)") << t;
}

#ifdef KBENCH_KGATE_EXE

TEST(KgateTargets, TwoFilesForOneGpuExitTwoNamingBoth) {
  const fs::path d = temp_dir("kgate_two_files");
  fs::create_directories(d / "targets");
  write(d / "targets" / "h200-sxm-141gb.json", kH200File);
  write(d / "targets" / "a-copy.json", kH200File);
  const fs::path h = write(d / "h.csv", csv(series("gemv", steady(20, 1000, 1000), "NVIDIA H200")));
  Result r = kgate("check --results " + h.string() + " --targets " + (d / "targets").string());
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, "a-copy.json")) << r.out;
  EXPECT_TRUE(contains(r.out, "h200-sxm-141gb.json")) << r.out;
}

TEST(KgateTargets, OutOfRangeTargetExitTwoNamingFileAndLine) {
  const fs::path d = temp_dir("kgate_1e400");
  fs::create_directories(d / "targets");
  std::string text = kH200File;
  text.replace(text.find("\"target\": 100"), 13, "\"target\": 1e400");
  const fs::path t = write(d / "targets" / "h200.json", text);
  const fs::path h = write(d / "h.csv", csv(series("gemv", steady(20, 1000, 1000), "NVIDIA H200")));
  Result r = kgate("check --results " + h.string() + " --targets " + (d / "targets").string());
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, t.string() + ":4:")) << r.out;
  EXPECT_TRUE(contains(r.out, "targets[0].target: number out of range")) << r.out;
}

// The gate on a misspelt tolerance: exit 2 naming it, not a pass under the
// default tolerance.
TEST(KgateTargets, MisspeltToleranceExitTwoNotAPass) {
  const fs::path d = temp_dir("kgate_tolerence");
  fs::create_directories(d / "targets");
  std::string text = kH200File;
  text.replace(text.find("\"target\": 100"), 13, "\"target\": 1000, \"tolerence\": 0.01");
  const fs::path t = write(d / "targets" / "h200.json", text);
  // 4% under the target: within the default 0.05, not within 0.01.
  const fs::path h = write(d / "h.csv", csv(series("gemv", steady(20, 960, 960), "NVIDIA H200")));
  Result r = kgate("check --results " + h.string() + " --targets " + (d / "targets").string());
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, t.string() + ":4: targets[0].tolerence: unknown field")) << r.out;
}

// kgate bringup reads the tuning table and the datasheet table as kbench
// does: one that does not parse is exit 2 naming the file and the line (it
// used to say "not valid JSON (kbench does not use it)" and go on).
TEST(KgateTargets, BringupRefusesAMalformedTuningOrDatasheetTable) {
  const std::string src = KBENCH_SOURCE_DIR;
  const fs::path d = temp_dir("kgate_bringup_tables");
  fs::copy(src + "/targets", d / "targets", fs::copy_options::recursive);
  const fs::path tuning =
      write(d / "targets" / "tuning" / "h200-sxm-141gb.json",
            "{\"gpu\": \"NVIDIA H200\",\n \"gemv\": [{\"dtype\": \"int8\", \"kernel\": \"Q\"}]}");
  const std::string args = "bringup --results " + src + "/tests/data/h200-2026-11-24.csv" +
                           " --reference " + src + "/tests/data/h100-2026-11-24.csv" +
                           " --targets " + (d / "targets").string() + " --out " +
                           (d / "out").string();
  Result r = kgate(args);
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, tuning.string() + ":2: gemv[0].kernel: unknown kernel 'Q'")) << r.out;
  fs::remove(tuning);
  const fs::path table = d / "targets" / "datasheets" / "nvidia.json";
  std::string text = slurp(table);
  text.insert(text.find('{') + 1, "\"gpus\": [],");
  write(table, text);
  r = kgate(args);
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, table.string() + ":")) << r.out;
  EXPECT_TRUE(contains(r.out, "gpus: given twice in one object (the other at line 1)")) << r.out;
}

// A night whose rows spell the GPU in another case is the same GPU model: a
// 20% drop fails, it does not start a new series that passes.
TEST(KgateHistory, ArchInAnotherCaseIsTheSameGpuModel) {
  const fs::path d = temp_dir("kgate_arch_case");
  auto rows = series("gemv", steady(20, 1000, 800));
  rows.back().arch = "nvidia h100 80gb hbm3";
  const fs::path h = write(d / "h.csv", csv(rows));
  Result r = kgate("check --results " + h.string());
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_TRUE(contains(r.out, "1 regression")) << r.out;
}

#endif

}  // namespace
