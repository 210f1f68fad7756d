// Target files: parsing, validation messages, GPU matching, lookup.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "suite/targets.h"

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
    {"name": "gemv", "metric": "memory_bandwidth(GB/s)", "dtype": "int8", "shape": "D=1024", "target": 100, "tolerance": 0.02},
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
}

TEST(Targets, MalformedFilesNameFileAndField) {
  EXPECT_NE(error_of("{").find("t.json: not valid JSON"), std::string::npos);
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
}

TEST(Targets, MatchGpuByNameCaseInsensitive) {
  std::vector<kb::TargetFile> files = {kb::parse_target_file(kGood, "a100.json")};
  EXPECT_NE(kb::match_gpu(files, "NVIDIA A100-SXM4-40GB"), nullptr);
  EXPECT_NE(kb::match_gpu(files, "nvidia a100 40gb pcie"), nullptr);
  EXPECT_EQ(kb::match_gpu(files, "NVIDIA H100 80GB HBM3"), nullptr);
  EXPECT_EQ(kb::gpu_slug("NVIDIA H100 80GB HBM3"), "nvidia-h100-80gb-hbm3");
  EXPECT_EQ(kb::gpu_slug("  "), "unknown-gpu");
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

}  // namespace
