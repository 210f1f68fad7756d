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
  const auto tuned = kb::tune_gemv_table(dev, nullptr, out, 2, shapes);
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

}  // namespace
