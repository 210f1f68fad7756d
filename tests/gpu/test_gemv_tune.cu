// `kbench tune gemv` on the GPU (suite/gemv_tune_run.h): it times the
// candidates of a few shapes, writes a gemv section that reads back, keeps
// the file's other sections, and every kernel it chose serves its bucket.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/tuning.h"
#include "kernels/gemv/dispatch.h"
#include "suite/device.h"
#include "suite/experiments/gemv_case.h"
#include "suite/gemv_tune_run.h"
#include "tests/gpu/gpu_test_util.h"

namespace {

namespace gemv = kb::gemv;

TEST(GemvTune, WritesATableThatReadsBackAndServesItsShapes) {
  KB_REQUIRE_GPU();
  const kb::DeviceInfo dev = kb::query_device(0);
  const std::string out = (std::filesystem::temp_directory_path() /
                           ("kbench_gemv_tune_" + std::to_string(getpid()) + ".json"))
                              .string();
  {  // an existing table: its cublaslt section must survive
    nlohmann::ordered_json doc;
    doc["gpu"] = dev.name;
    doc["cublaslt"] = nlohmann::ordered_json::array();
    std::ofstream(out) << doc.dump(2);
  }
  const std::vector<kb::GemvShape> shapes = {
      {true, 1024, 1024, 1, "test"}, {true, 4096, 4096, 1, "test"}, {false, 4096, 4096, 2, "test"}};
  // The screen alone: the finalists' worker processes are kbench's own
  // (`kbench tune gemv` on a GPU runs both stages).
  const auto tuned = kb::tune_gemv_table(dev, nullptr, out, 2, shapes, nullptr);
  ASSERT_EQ(tuned.size(), shapes.size());
  for (const auto& r : tuned) {
    EXPECT_GT(r.best_us, 0);
    EXPECT_GT(r.candidates, 1);
    EXPECT_LE(r.best_us, r.generic_us);  // the kept choice is never slower than the generic one
  }
  std::ifstream in(out);
  std::ostringstream ss;
  ss << in.rdbuf();
  const auto f = kb::parse_tuning_file(ss.str(), out);
  EXPECT_TRUE(f.doc.contains("cublaslt"));
  const auto t = kb::parse_gemv_table(f.doc, out);
  ASSERT_FALSE(t.empty());
  for (const auto& s : shapes) {
    const gemv::Choice c = gemv::choose_in(t, s.int8, s.N, s.K, s.n_sel);
    EXPECT_TRUE(c.from_table()) << s.N << "x" << s.K;
    EXPECT_EQ(gemv::refusal(c.config.kernel, s.int8, s.N, s.K, s.n_sel), "");
  }
  EXPECT_TRUE(f.doc["gemv"][0].contains("measured"));
  std::filesystem::remove(out);
}

// A point that names its kernel (`config=...`, the tuner's finalists) runs
// that kernel, checked against the reference; a name that is no kernel is
// refused before anything runs.
TEST(GemvTune, APointLabelledWithAConfigRunsThatKernel) {
  KB_REQUIRE_GPU();
  kb::Point p;
  p.shape.set("N", 4096);
  p.shape.set("K", 4096);
  p.shape.set_label("config", "R2U1W8P1K2");
  p.dtype = kb::DType::i8;
  kb::gemv_experiment::GemvCase c(p, 1, 1, {});
  EXPECT_EQ(c.variant(), "R2U1W8P1K2");
  const kb::Check chk = c.check(nullptr, 7);
  EXPECT_TRUE(chk.ok) << chk.detail;
  p.shape.set_label("config", "R2U1W8");
  EXPECT_THROW(kb::gemv_experiment::GemvCase(p, 1, 1, {}), std::invalid_argument);
}

}  // namespace
