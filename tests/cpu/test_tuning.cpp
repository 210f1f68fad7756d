// The tuning table (suite/tuning.h): what kbench tune writes, the runner
// reads it back; a malformed file or one of another GPU is named and not used.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/tuning.h"

namespace {

namespace fs = std::filesystem;

kb::gemm::PinnedAlgo sample_pin() {
  kb::gemm::PinnedAlgo p;
  p.key = {4096, 14336, 1024, kb::gemm::Input::bf16, kb::gemm::Epilogue::none};
  p.config.id = 66;
  p.config.tile = 201;
  p.config.stages = 35;
  p.config.splitk = 1;
  p.config.custom = 2;
  p.config.cluster = 5;
  return p;
}

std::string table_text(const std::vector<nlohmann::ordered_json>& entries, const std::string& gpu) {
  nlohmann::ordered_json doc;
  doc["gpu"] = gpu;
  doc["cublaslt"] = nlohmann::ordered_json::array();
  for (const auto& e : entries) doc["cublaslt"].push_back(e);
  doc["gemv"] = nlohmann::ordered_json::array();  // another section: kept, not read here
  return doc.dump(2);
}

TEST(Tuning, WhatTuneWritesReadsBack) {
  auto pin = sample_pin();
  auto text = table_text({kb::pin_json(pin, {{"median_us", 1234.5}})}, "NVIDIA H100 80GB HBM3");
  auto f = kb::parse_tuning_file(text, "t.json");
  ASSERT_EQ(f.cublaslt.size(), 1u);
  const auto& p = f.cublaslt[0];
  EXPECT_TRUE(p.key == pin.key);
  EXPECT_EQ(kb::gemm::algo_id(p.config), kb::gemm::algo_id(pin.config));
  EXPECT_EQ(p.origin, "t.json cublaslt[0]");
  EXPECT_TRUE(f.doc.contains("gemv"));
}

TEST(Tuning, MalformedEntriesNameFileAndEntry) {
  auto msg = [](const std::string& text) {
    try {
      kb::parse_tuning_file(text, "t.json");
    } catch (const kb::TuningError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(msg("{").find("t.json:1:2: not valid JSON"), std::string::npos);
  EXPECT_NE(msg("{\"cublaslt\": []}").find("t.json:1: gpu: missing"), std::string::npos);
  auto e = kb::pin_json(sample_pin(), {});
  auto bad = e;
  bad["algo"]["tile"] = "x";
  EXPECT_NE(msg(table_text({e, bad}, "G")).find("cublaslt[1].algo.tile: expected a whole number"),
            std::string::npos);
  bad = e;
  bad["M"] = 0;
  EXPECT_NE(msg(table_text({bad}, "G")).find("cublaslt[0].M: expected a whole number from 1"),
            std::string::npos);
  bad = e;
  bad["input"] = "int4";
  EXPECT_NE(msg(table_text({bad}, "G")).find("cublaslt[0].input"), std::string::npos);
  EXPECT_NE(msg(table_text({e, e}, "G")).find("cublaslt[1]: a second entry for the same GEMM"),
            std::string::npos);
}

// Another GPU's table: a warning, the heuristic chooses. A malformed table:
// an error (kbench exits 2 before measuring), not a night on other kernels.
TEST(Tuning, LoadPinsWarnsOnAnotherGpuAndRefusesAMalformedTable) {
  const fs::path dir = fs::temp_directory_path() / ("kb_tuning_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string good = (dir / "good.json").string(), bad = (dir / "bad.json").string();
  std::ofstream(good) << table_text({kb::pin_json(sample_pin(), {})}, "NVIDIA H100 80GB HBM3");
  std::ofstream(bad) << "{\"gpu\": \"NVIDIA H100 80GB HBM3\", \"cublaslt\": [{\"M\": 1}]}";
  std::string w;
  EXPECT_EQ(kb::load_pins(good, "NVIDIA H100 80GB HBM3", &w).size(), 1u);
  EXPECT_TRUE(w.empty()) << w;
  EXPECT_TRUE(kb::load_pins(good, "NVIDIA H200", &w).empty());  // another GPU's table
  EXPECT_NE(w.find("written for 'NVIDIA H100 80GB HBM3', not this GPU"), std::string::npos) << w;
  w.clear();
  try {
    kb::load_pins(bad, "NVIDIA H100 80GB HBM3", &w);
    ADD_FAILURE() << "a malformed table was used";
  } catch (const kb::TuningError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.json:1: cublaslt[0].N: missing"), std::string::npos)
        << e.what();
  }
  w.clear();
  EXPECT_TRUE(kb::load_pins((dir / "none.json").string(), "x", &w).empty());  // no table: fine
  EXPECT_TRUE(w.empty());
  fs::remove_all(dir);
}

TEST(Tuning, TheTableLivesBesideTheTargetFile) {
  kb::TargetFile tf;
  tf.path = "/src/targets/h100-sxm5-80gb.json";
  EXPECT_EQ(kb::tuning_path("/src/targets", &tf, "NVIDIA H100 80GB HBM3"),
            "/src/targets/tuning/h100-sxm5-80gb.json");
  EXPECT_EQ(kb::tuning_path("t", nullptr, "NVIDIA B200"), "t/tuning/nvidia-b200.json");
}

}  // namespace

namespace {

// kbench tune (both) reads the table it rewrites before it times anything:
// another GPU's would keep that GPU's entries relabelled as this one's.
TEST(Tuning, TuneRefusesAnotherGpusTable) {
  const fs::path dir = fs::temp_directory_path() / ("kb_tune_doc_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string path = (dir / "t.json").string();
  std::ofstream(path) << table_text({kb::pin_json(sample_pin(), {})}, "NVIDIA H100 80GB HBM3");
  try {
    kb::read_tuning_doc(path, "NVIDIA H200");
    ADD_FAILURE() << "another GPU's table was taken for rewriting";
  } catch (const kb::TuningError& e) {
    EXPECT_EQ(std::string(e.what()),
              path +
                  ": the tuning table of 'NVIDIA H100 80GB HBM3', not of this GPU ('NVIDIA "
                  "H200'): tuning into it would keep that GPU's entries under this GPU's name. "
                  "Give --write this GPU's table or a new file");
  }
  // This GPU's (compared as everywhere: ASCII case ignored), and none at all.
  EXPECT_EQ(kb::read_tuning_doc(path, "nvidia h100 80gb hbm3")["cublaslt"].size(), 1u);
  EXPECT_TRUE(kb::read_tuning_doc((dir / "none.json").string(), "NVIDIA H200").is_null());
  // Its gemv section is read up front too.
  std::ofstream(path) << R"J({"gpu": "G", "gemv": [{"dtype": "int8", "kernel": "X9"}]})J";
  EXPECT_THROW(kb::read_tuning_doc(path, "G"), kb::TuningError);
  fs::remove_all(dir);
}

}  // namespace
