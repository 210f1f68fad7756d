// Target files: parsing, validation messages, GPU matching, lookup.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/atomic_write.h"
#include "core/datasheets.h"
#include "core/targets.h"

namespace {

const char* kGood = R"J({
  "gpu": "NVIDIA A100-SXM4-40GB",
  "match": ["A100-SXM4-40GB", "A100 40GB"],
  "peaks": {"hbm_gbps": 1555, "bf16_tflops": 312, "int8_tops": 624, "source": "datasheet"},
  "measured": {"read_gbps": 1400, "launch_us": 3.5, "mem_latency_us": 0.8, "date": "2026-11-22", "driver": "580"},
  "tolerance": 0.1,
  "targets": [
    {"name": "layer_norm", "metric": "memory_bandwidth(GB/s)", "dtype": "bfloat16", "shape": "mean", "target": 950},
    {"name": "gemv", "metric": "memory_bandwidth(GB/s)", "dtype": "int8", "shape": "*", "roofline_fraction": 0.8},
    {"name": "gemv", "metric": "memory_bandwidth(GB/s)", "dtype": "int8", "shape": "D=1024", "target": 100, "tolerance": 0.02, "board_spread": 0.012},
    {"name": "m", "metric": "latency(us)", "dtype": "bfloat16", "roofline_fraction": 0.5}
  ]})J";

std::string error_of(const std::string& json) {
  try {
    kb::parse_target_file(json, "t.json");
  } catch (const kb::TargetError& e) {
    return e.what();
  }
  return "";
}

TEST(Targets, ParsesAndPrefersMeasuredCeilings) {
  auto f = kb::parse_target_file(kGood, "t.json");
  EXPECT_EQ(f.gpu, "NVIDIA A100-SXM4-40GB");
  EXPECT_EQ(f.targets.size(), 4u);
  auto c = f.ceilings();
  EXPECT_EQ(c.read_gbps, 1400);  // measured
  EXPECT_EQ(c.copy_gbps, 1555);  // datasheet hbm where nothing measured
  EXPECT_EQ(c.bf16_tflops, 312);
  EXPECT_EQ(c.launch_us, 3.5);
  EXPECT_EQ(c.mem_latency_us, 0.8);
  EXPECT_EQ(f.measured_date, "2026-11-22");
  EXPECT_DOUBLE_EQ(f.targets[0].tolerance, 0.1);  // the file's default
  EXPECT_DOUBLE_EQ(f.targets[2].tolerance, 0.02);
  EXPECT_DOUBLE_EQ(*f.targets[2].board_spread, 0.012);
  EXPECT_FALSE(f.targets[1].board_spread.has_value());
}

TEST(Targets, FindPrefersExactShapeAndKeepsMeanSeparate) {
  auto f = kb::parse_target_file(kGood, "t.json");
  const auto* e = f.find("gemv", "memory_bandwidth(GB/s)", "int8", "D=1024");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(*e->target, 100);
  e = f.find("gemv", "memory_bandwidth(GB/s)", "int8", "D=4096");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(*e->roofline_fraction, 0.8);
  EXPECT_EQ(f.find("gemv", "memory_bandwidth(GB/s)", "int8", "mean"), nullptr);  // wildcard != mean
  EXPECT_EQ(f.find("gemv", "memory_bandwidth(GB/s)", "bfloat16", "D=1024"), nullptr);
  EXPECT_NE(f.find("layer_norm", "memory_bandwidth(GB/s)", "bfloat16", "mean"), nullptr);
}

TEST(Targets, ResolveAndBelowTarget) {
  auto f = kb::parse_target_file(kGood, "t.json");
  EXPECT_EQ(*kb::resolve_target(f.targets[0], std::nullopt), 950);
  EXPECT_NEAR(*kb::resolve_target(f.targets[1], 2000.0), 1600, 1e-9);
  EXPECT_FALSE(kb::resolve_target(f.targets[1], std::nullopt).has_value());
  // Times: the target is the roofline divided by the fraction.
  EXPECT_NEAR(*kb::resolve_target(f.targets[3], 10.0, true), 20, 1e-9);
  EXPECT_FALSE(kb::below_target(96, 100, 0.05, false));
  EXPECT_TRUE(kb::below_target(94, 100, 0.05, false));
  EXPECT_FALSE(kb::below_target(104, 100, 0.05, true));
  EXPECT_TRUE(kb::below_target(106, 100, 0.05, true));
  // A time misses by what its rate misses: 105 us against 100 is 4.8% of
  // the rate, inside 5%, as the same run's 1/105 against 1/100 is.
  EXPECT_NEAR(kb::target_miss(105, 100, true), 1 - 100.0 / 105, 1e-12);
  EXPECT_FALSE(kb::below_target(105, 100, 0.05, true));
  EXPECT_FALSE(kb::below_target(1 / 105.0, 1 / 100.0, 0.05, false));
  EXPECT_TRUE(kb::below_target(105.3, 100, 0.05, true));
  EXPECT_TRUE(kb::below_target(1 / 105.3, 1 / 100.0, 0.05, false));
  // Every pair of a time and its rate gets one verdict.
  for (double t = 90; t < 110; t += 0.01)
    EXPECT_EQ(kb::below_target(t, 100, 0.05, true), kb::below_target(1 / t, 0.01, 0.05, false))
        << t;
}

TEST(Targets, MalformedFilesNameFileAndField) {
  EXPECT_NE(error_of("{").find("t.json:1:2: not valid JSON"), std::string::npos) << error_of("{");
  EXPECT_NE(error_of("[]").find("t.json"), std::string::npos);
  EXPECT_NE(error_of(R"J({"peaks": {"hbm_gbps": 1}, "targets": []})J").find("gpu"),
            std::string::npos);
  EXPECT_NE(error_of(R"J({"gpu": "x", "targets": []})J").find("peaks"), std::string::npos);
  EXPECT_NE(error_of(R"J({"gpu": "x", "peaks": {"hbm_gbps": "fast"}, "targets": []})J")
                .find("peaks.hbm_gbps: expected a number"),
            std::string::npos);
  EXPECT_NE(error_of(R"J({"gpu": "x", "peaks": {"hbm_gbps": -1}, "targets": []})J").find("> 0"),
            std::string::npos);
  EXPECT_NE(error_of(R"J({"gpu": "x", "peaks": {"hbm_gbps": 1}})J").find("targets"),
            std::string::npos);
  const std::string both = R"J({"gpu": "x", "peaks": {"hbm_gbps": 1}, "targets": [
      {"name": "a", "metric": "m", "dtype": "d", "target": 1, "roofline_fraction": 0.5}]})J";
  EXPECT_NE(error_of(both).find("targets[0].target"), std::string::npos) << error_of(both);
  const std::string none = R"J({"gpu": "x", "peaks": {"hbm_gbps": 1}, "targets": [
      {"name": "a", "metric": "m", "dtype": "d"}]})J";
  EXPECT_NE(error_of(none).find("exactly one"), std::string::npos);
  const std::string noname =
      R"J({"gpu": "x", "peaks": {"hbm_gbps": 1}, "targets": [{"metric": "m"}]})J";
  EXPECT_NE(error_of(noname).find("targets[0].name"), std::string::npos);
  const std::string frac = R"J({"gpu": "x", "peaks": {"hbm_gbps": 1}, "targets": [
      {"name": "a", "metric": "m", "dtype": "d", "roofline_fraction": 1.5}]})J";
  EXPECT_NE(error_of(frac).find("roofline_fraction"), std::string::npos);
  for (const char* spread : {"0", "-0.01", "1", "\"2%\""}) {
    const std::string bad = std::string(R"J({"gpu": "x", "peaks": {"hbm_gbps": 1}, "targets": [
      {"name": "a", "metric": "m", "dtype": "d", "target": 1, "board_spread": )J") +
                            spread + "}]}";
    EXPECT_NE(error_of(bad).find("targets[0].board_spread"), std::string::npos)
        << spread << ": " << error_of(bad);
  }
}

// A tolerance has one range, [0, 1), at the top level as in an entry; 0 is
// no tolerance (any miss fails), not the default.
TEST(Targets, ToleranceIsZeroToOneAtTheTopAsInAnEntry) {
  const auto file = [](const std::string& top, const std::string& entry) {
    return R"J({"gpu": "x", "peaks": {"hbm_gbps": 1},)J" + top +
           R"J( "targets": [{"name": "a", "metric": "m", "dtype": "d", "target": 100)J" + entry +
           "}]}";
  };
  const kb::TargetFile zero = kb::parse_target_file(file(R"J("tolerance": 0,)J", ""), "t.json");
  EXPECT_EQ(zero.targets[0].tolerance, 0);
  EXPECT_TRUE(kb::below_target(99.9, 100, zero.targets[0].tolerance, false));  // any miss
  EXPECT_EQ(kb::parse_target_file(file("", R"J(, "tolerance": 0)J"), "t.json").targets[0].tolerance,
            0);
  EXPECT_EQ(kb::parse_target_file(file("", ""), "t.json").targets[0].tolerance, 0.05);
  for (const char* bad : {"-0.01", "1", "1.5", "\"5%\"", "null", "true"}) {
    const std::string t = std::string("\"tolerance\": ") + bad;
    EXPECT_EQ(error_of(file(t + ",", "")),
              "t.json:1: tolerance: expected a number in [0, 1) (0: any miss fails)")
        << bad;
    EXPECT_EQ(error_of(file("", ", " + t)),
              "t.json:1: targets[0].tolerance: expected a number in [0, 1) (0: any miss fails)")
        << bad;
  }
}

TEST(Targets, MatchGpuByNameCaseInsensitive) {
  std::vector<kb::TargetFile> files = {kb::parse_target_file(kGood, "a100.json")};
  EXPECT_NE(kb::match_gpu(files, "NVIDIA A100-SXM4-40GB"), nullptr);
  EXPECT_NE(kb::match_gpu(files, "nvidia a100 40gb pcie"), nullptr);
  EXPECT_EQ(kb::match_gpu(files, "NVIDIA H100 80GB HBM3"), nullptr);
  EXPECT_EQ(kb::gpu_slug("NVIDIA H100 80GB HBM3"), "nvidia-h100-80gb-hbm3");
  EXPECT_EQ(kb::gpu_slug("  "), "unknown-gpu");
}

// The line `kbench probe` prints for tools/bringup.sh: the GPU's file, or
// the name a new one gets.
TEST(Targets, TargetFileLineNamesTheMatchOrTheNewFile) {
  std::vector<kb::TargetFile> files = {kb::parse_target_file(kGood, "targets/a100.json")};
  EXPECT_EQ(kb::target_file_line(files, "NVIDIA A100-SXM4-40GB"), "target file: targets/a100.json");
  EXPECT_EQ(kb::target_file_line(files, "NVIDIA H200"),
            "target file: none (new: nvidia-h200.json)");
  EXPECT_EQ(kb::target_file_line({}, "NVIDIA H100 80GB HBM3"),
            "target file: none (new: nvidia-h100-80gb-hbm3.json)");
}

TEST(Targets, LayoutPutsOneTargetEntryALine) {
  const std::string text = kb::layout_target_file(kGood, "a.json");
  EXPECT_EQ(kb::parse_target_file(text, "a.json").targets.size(),
            kb::parse_target_file(kGood, "a.json").targets.size());
  EXPECT_NE(text.find("\n    {\"name\":"), std::string::npos) << text;
  EXPECT_THROW(kb::layout_target_file("[1]", "a.json"), kb::TargetError);
  EXPECT_THROW(kb::layout_target_file("{", "a.json"), kb::TargetError);
}

TEST(Targets, LoadDirAndMissingFiles) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("kb_targets_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "a.json") << kGood;
  EXPECT_EQ(kb::load_target_dir(dir.string()).size(), 1u);
  std::ofstream(dir / "b.json") << "{ broken";
  try {
    kb::load_target_dir(dir.string());
    FAIL() << "a broken file was accepted";
  } catch (const kb::TargetError& e) {
    EXPECT_NE(std::string(e.what()).find("b.json"), std::string::npos);
  }
  EXPECT_THROW(kb::load_target_file((dir / "missing.json").string()), kb::TargetError);
  EXPECT_THROW(kb::load_target_dir((dir / "nope").string()), kb::TargetError);
  fs::remove_all(dir);
}

// The repository's own target files parse, and hold the seed's targets.
TEST(Targets, RepositoryFilesAreValid) {
  auto files = kb::load_target_dir(std::string(KBENCH_SOURCE_DIR) + "/targets");
  ASSERT_GE(files.size(), 2u);
  const auto* a100 = kb::match_gpu(files, "NVIDIA A100-SXM4-40GB");
  ASSERT_NE(a100, nullptr);
  auto seed = [&](const char* name, const char* metric, const char* dtype, const char* shape) {
    const auto* e = a100->find(name, metric, dtype, shape);
    return e && e->target ? *e->target : -1.0;
  };
  EXPECT_EQ(seed("layer_norm", "memory_bandwidth(GB/s)", "bfloat16", "mean"), 950);
  EXPECT_EQ(seed("gemv", "memory_bandwidth(GB/s)", "int8", "mean"), 870);
  EXPECT_EQ(seed("gemv", "memory_bandwidth(GB/s)", "bfloat16", "mean"), 990);
  EXPECT_EQ(seed("gather_gemv", "memory_bandwidth(GB/s)", "int8", "mean"), 990);
  EXPECT_EQ(seed("gather_gemv", "memory_bandwidth(GB/s)", "bfloat16", "mean"), 1060);
  EXPECT_EQ(seed("mlp_layer_norm_gelu", "flops_utilization", "bfloat16", "mean"), 0.8);
  EXPECT_EQ(seed("Llama-2-7b-chat-hf", "token_per_sec", "bfloat16", ""), 94);
  EXPECT_EQ(seed("Llama-2-7b-chat-hf", "memory_bandwidth(GB/s)", "int8", ""), 957);
  EXPECT_EQ(seed("Mixtral-8x7B-v0.1", "compilation_time(s)", "int8", "layers=16"), 133);
  EXPECT_EQ(seed("Mixtral-8x7B-v0.1", "token_per_sec", "int8", "layers=16"), 175);
  EXPECT_EQ(seed("Mixtral-8x7B-v0.1", "memory_bandwidth(GB/s)", "int8", "layers=16"), 1130);
  EXPECT_EQ(a100->peaks.bf16_tflops, 312);
  EXPECT_NE(kb::match_gpu(files, "NVIDIA H100 80GB HBM3"), nullptr);
}

// A file takes only the GPUs the datasheet table counts as its model: the
// H200's match "NVIDIA H200" took the H200 NVL (a model of its own, lower
// clocks) and gave it the SXM's ceilings and targets.
TEST(Targets, RepositoryFilesTakeNoOtherModel) {
  const std::string dir = std::string(KBENCH_SOURCE_DIR) + "/targets";
  const auto files = kb::load_target_dir(dir);
  const auto table = kb::load_datasheets(kb::datasheets_path(dir));
  std::vector<std::string> names = {"NVIDIA H200 NVL", "NVIDIA H100 NVL", "NVIDIA A100-PCIE-40GB"};
  for (const auto& d : table.gpus)
    names.insert(names.end(), d.driver_names.begin(), d.driver_names.end());
  for (const auto& n : names)
    if (const kb::TargetFile* f = kb::match_gpu(files, n))
      EXPECT_EQ(kb::find_datasheet(table, f->gpu), kb::find_datasheet(table, n))
          << n << " takes " << f->path;
  EXPECT_NE(kb::match_gpu(files, "NVIDIA H200"), nullptr);
}

}  // namespace

namespace {
std::string file_with_ladder(const std::string& ladder) {
  return R"J({"gpu": "Toy GPU", "peaks": {"hbm_gbps": 3000, "bf16_tflops": 989},
    "measured": {"read_gbps": 2900, "bf16_tflops": 800, "ladder": )J" +
         ladder + R"J(}, "targets": []})J";
}
const char* kGoodLadder =
    R"J({"read": [[4096, 4.0], [1048576, 4.5]], "copy": [[4096, 4.1], [2097152, 5.5]],
         "launch_extra_us": 1.5, "graph_node_extra_us": 0.7})J";
}  // namespace

TEST(TargetsLadder, ParsedIntoTheCeilingsWithTheDatasheetPeaks) {
  auto f = kb::parse_target_file(file_with_ladder(kGoodLadder), "targets/toy.json");
  const kb::Ceilings c = f.ceilings();
  ASSERT_TRUE(c.ladder.present());
  EXPECT_DOUBLE_EQ(c.ladder.read.rungs[1].second, 4.5e-6);  // us in the file, s inside
  EXPECT_DOUBLE_EQ(c.ladder.copy.rungs[1].first, 2097152);
  EXPECT_DOUBLE_EQ(c.ladder.launch_extra_us, 1.5);
  EXPECT_DOUBLE_EQ(c.ladder.graph_node_extra_us, 0.7);
  EXPECT_DOUBLE_EQ(c.bf16_tflops, 800);            // the roofline: measured
  EXPECT_DOUBLE_EQ(c.datasheet.bf16_tflops, 989);  // flops_utilization: datasheet
  // No ladder: version 1 (today's model).
  auto old = kb::parse_target_file(
      R"J({"gpu": "Toy GPU", "peaks": {"hbm_gbps": 3000}, "measured": {"read_gbps": 2900},
          "targets": []})J",
      "targets/old.json");
  EXPECT_FALSE(old.ceilings().ladder.present());
}

TEST(TargetsLadder, MalformedLaddersAreOneMessageNamingFileAndField) {
  auto err = [](const std::string& ladder) {
    try {
      kb::parse_target_file(file_with_ladder(ladder), "targets/toy.json");
    } catch (const kb::TargetError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(err(R"J({"copy": [[4096, 4.1], [8192, 5]], "launch_extra_us": 1,
                     "graph_node_extra_us": 1})J"),
            "targets/toy.json:2: measured.ladder.read: missing (expected an array of [bytes, us] "
            "rungs)");
  EXPECT_EQ(err(R"J({"read": [[4096, 4.0], [8192]], "copy": [[4096, 4.1], [8192, 5]],
                     "launch_extra_us": 1, "graph_node_extra_us": 1})J"),
            "targets/toy.json:2: measured.ladder.read[1]: expected [bytes, us], two numbers");
  EXPECT_EQ(err(R"J({"read": [[4096, 4.0], [8192, 3.9]], "copy": [[4096, 4.1], [8192, 5]],
                     "launch_extra_us": 1, "graph_node_extra_us": 1})J"),
            "targets/toy.json:2: measured.ladder.read: rung 1: faster than the previous, smaller "
            "rung (more bytes never take less time)");
  EXPECT_EQ(err(R"J({"read": [[4096, 4.0], [8192, 5]], "copy": [[4096, 4.1]],
                     "launch_extra_us": 1, "graph_node_extra_us": 1})J"),
            "targets/toy.json:2: measured.ladder.copy: expected at least 2 rungs, got 1");
  EXPECT_EQ(err(R"J({"read": [[4096, 4.0], [8192, 5]], "copy": [[4096, 4.1], [8192, 5]],
                     "launch_extra_us": -1, "graph_node_extra_us": 1})J"),
            "targets/toy.json:3: measured.ladder.launch_extra_us: expected a finite number >= 0 "
            "(us)");
  EXPECT_EQ(err(R"J([1, 2])J"), "targets/toy.json:2: measured.ladder: expected an object");
  EXPECT_EQ(err(R"J({"read": [[4096, 4.0], [8192, 5]], "copy": [[4096, 4.1], [8192, 5]],
                     "launch_extra_us": 1, "graph_node_extra_us": 1,
                     "launch_extra_by_link": [[2097152, 3], [1048576, 3]]})J"),
            "targets/toy.json:4: measured.ladder.launch_extra_by_link[1]: link bytes must be > 0 "
            "and increasing");
  EXPECT_EQ(err(R"J({"read": [[4096, 4.0], [8192, 5]], "copy": [[4096, 4.1], [8192, 5]],
                     "launch_extra_us": 1, "graph_node_extra_us": 1,
                     "graph_node_extra_by_link": [[1048576, -1]]})J"),
            "targets/toy.json:4: measured.ladder.graph_node_extra_by_link[0]: expected us >= 0");
  EXPECT_EQ(err(R"J({"read": [[4096, 4.0], [8192, 5]], "copy": [[4096, 4.1], [8192, 5]],
                     "launch_extra_us": 1, "graph_node_extra_us": 1,
                     "launch_extra_by_link": 3})J"),
            "targets/toy.json:4: measured.ladder.launch_extra_by_link: expected an array of [link "
            "bytes, us]");
}

// probe --write into a file with a ladder: per rung the faster of both
// probes (same byte counts); the further-launch scalars and per-link costs
// the new probe's alone (medians over processes, not minima); a ladder of
// other byte counts is not mixed in.
TEST(TargetsLadder, TheFasterOfTwoProbesPerRung) {
  kb::SpeedOfLight before, now;
  before.read.rungs = {{4096, 3.6e-6}, {8192, 3.7e-6}, {1e9, 330e-6}};
  now.read.rungs = {{4096, 3.8e-6}, {8192, 3.65e-6}, {1e9, 331e-6}};
  before.copy.rungs = {{4096, 3.3e-6}, {8192, 3.4e-6}};
  now.copy.rungs = {{4096, 3.2e-6}, {16384, 3.5e-6}};  // another grid: now's alone
  before.launch_extra_us = 2.8;
  now.launch_extra_us = 2.9;
  before.graph_node_extra_us = 1.95;
  now.graph_node_extra_us = 1.9;
  before.launch_extra_by_link = {{1 << 20, 3.5}, {8 << 20, 3.0}};
  now.launch_extra_by_link = {{1 << 20, 3.6}, {2 << 20, 3.4}, {8 << 20, 2.9}};
  int kept = -1;
  const kb::SpeedOfLight m = kb::faster_of(before, now, &kept);
  EXPECT_DOUBLE_EQ(m.read.rungs[0].second, 3.6e-6);   // before's
  EXPECT_DOUBLE_EQ(m.read.rungs[1].second, 3.65e-6);  // now's
  EXPECT_DOUBLE_EQ(m.read.rungs[2].second, 330e-6);
  EXPECT_EQ(m.copy.rungs, now.copy.rungs);
  EXPECT_DOUBLE_EQ(m.launch_extra_us, 2.9);                     // now's, though before's is smaller
  EXPECT_DOUBLE_EQ(m.graph_node_extra_us, 1.9);                 // now's
  EXPECT_EQ(m.launch_extra_by_link, now.launch_extra_by_link);  // 3.6 at 1 MB, not before's 3.5
  EXPECT_EQ(kept, 2);                                           // two read rungs from before
  EXPECT_EQ(kb::ladder_problem(m.read), "");
  // No earlier ladder: now's, unchanged.
  const kb::SpeedOfLight alone = kb::faster_of(kb::SpeedOfLight{}, now, &kept);
  EXPECT_EQ(alone.read.rungs, now.read.rungs);
  EXPECT_DOUBLE_EQ(alone.launch_extra_us, 2.9);
  EXPECT_EQ(kept, 0);
}

TEST(TargetsLadder, ProbeWriteReplacesOnlyTheLadderAndReadsBack) {
  const std::string before = file_with_ladder(kGoodLadder);
  kb::SpeedOfLight sol;
  sol.read.rungs = {{4096, 3.5e-6}, {8192, 3.6e-6}};
  sol.copy.rungs = {{4096, 3.7e-6}, {8192, 3.9e-6}};
  sol.launch_extra_us = 1.25;
  sol.graph_node_extra_us = 0.5;
  sol.launch_extra_by_link = {{1048576, 3.7}, {8388608, 2.9}};
  sol.graph_node_extra_by_link = {{1048576, 2.7}, {8388608, 1.9}};
  const std::string text = kb::set_ladder(before, "targets/toy.json", sol, "2026-11-26", "580.1");
  {
    auto g = kb::parse_target_file(text, "targets/toy.json");
    EXPECT_EQ(g.measured.ladder.launch_extra_by_link, sol.launch_extra_by_link);
    EXPECT_EQ(g.measured.ladder.graph_node_extra_by_link, sol.graph_node_extra_by_link);
  }
  auto f = kb::parse_target_file(text, "targets/toy.json");
  EXPECT_EQ(f.gpu, "Toy GPU");
  EXPECT_DOUBLE_EQ(f.measured.read_gbps, 2900);  // kept
  EXPECT_DOUBLE_EQ(f.measured.ladder.read.rungs[0].second, 3.5e-6);
  EXPECT_DOUBLE_EQ(f.measured.ladder.launch_extra_us, 1.25);
  EXPECT_NE(text.find("\"date\": \"2026-11-26\""), std::string::npos);
  // A file without `measured` gets one; an unusable ladder is refused.
  const std::string bare = R"J({"gpu": "G", "peaks": {"hbm_gbps": 1}, "targets": []})J";
  EXPECT_TRUE(kb::parse_target_file(kb::set_ladder(bare, "x.json", sol, "d", "v"), "x.json")
                  .measured.ladder.present());
  sol.copy.rungs.pop_back();
  EXPECT_THROW(kb::set_ladder(bare, "x.json", sol, "d", "v"), kb::TargetError);
}

// probe --write into an existing file: only the file of the GPU probed, as
// target matching takes it (its `gpu`, or a `match` string, any case);
// another GPU's name, peaks and measured values would frame this GPU's ladder.
TEST(TargetsLadder, ProbeWriteRefusesAnotherGpusFile) {
  const std::string h100_path = std::string(KBENCH_SOURCE_DIR) + "/targets/h100-sxm5-80gb.json";
  const std::string h100 = kb::read_whole_file(h100_path).value();
  kb::SpeedOfLight sol;
  sol.read.rungs = {{4096, 3.5e-6}, {8192, 3.6e-6}};
  sol.copy.rungs = {{4096, 3.7e-6}, {8192, 3.9e-6}};
  const std::string why = kb::probe_write_refusal(h100, "probe.json", "NVIDIA H200");
  EXPECT_EQ(why,
            "probe.json is the target file of 'NVIDIA H100 80GB HBM3', not of this GPU ('NVIDIA "
            "H200'): its ladder would join that GPU's name, peaks and measured values. Give "
            "--write this GPU's file or a new one; nothing was measured or written");
  for (bool replace : {false, true})
    EXPECT_THROW(kb::merge_probed_ladder(h100, "probe.json", "NVIDIA H200", replace, sol, "d", "v"),
                 kb::TargetError);
  // The file's own GPU, by `gpu` in another case or by a `match` string.
  for (const char* gpu : {"nvidia h100 80gb hbm3", "NVIDIA H100-SXM5-80GB"}) {
    EXPECT_EQ(kb::probe_write_refusal(h100, "probe.json", gpu), "") << gpu;
    const kb::ProbedFile f = kb::merge_probed_ladder(h100, "probe.json", gpu, false, sol, "d", "v");
    const kb::TargetFile t = kb::parse_target_file(f.text, "probe.json");
    EXPECT_EQ(t.gpu, "NVIDIA H100 80GB HBM3");
    EXPECT_TRUE(f.merged);
  }
  // The toy file's ladder, merged with this probe's: the faster per rung.
  const kb::ProbedFile toy = kb::merge_probed_ladder(file_with_ladder(kGoodLadder), "toy.json",
                                                     "Toy GPU", false, sol, "d", "v");
  EXPECT_TRUE(toy.merged);
  EXPECT_EQ(toy.kept, 0);  // other byte counts: this probe's alone
  EXPECT_EQ(kb::parse_target_file(toy.text, "toy.json").measured.ladder.read.rungs, sol.read.rungs);
}
