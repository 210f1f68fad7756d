// The gate on a recorded real A/A of the whole nightly: every night, gated
// against the nights before it, passes.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <sstream>

#include "kgate_test_util.h"
#include "reports/gate_result.h"
#include "tools/kgate/gate.h"

namespace {

using namespace kgt;

#ifdef KBENCH_SOURCE_DIR
// The file's lines after its header, grouped by night (the run_id column, a
// run's re-measurements "RUN/2".. with it), in the order they were appended.
std::vector<std::vector<std::string>> runs_of(const std::string& text, std::string* header) {
  auto fields = [](const std::string& line) {
    std::vector<std::string> out;
    std::istringstream in(line);
    for (std::string f; std::getline(in, f, ',');) out.push_back(f);
    return out;
  };
  std::istringstream in(text);
  std::getline(in, *header);
  const auto names = fields(*header);
  const size_t col = std::find(names.begin(), names.end(), "run_id") - names.begin();
  std::vector<std::vector<std::string>> runs;
  std::map<std::string, size_t> index;
  for (std::string line; std::getline(in, line);) {
    const auto f = fields(line);
    const std::string run = col < f.size() ? f[col].substr(0, f[col].find('/')) : "";
    auto [it, fresh] = index.emplace(run, runs.size());
    if (fresh) runs.emplace_back();
    runs[it->second].push_back(line);
  }
  return runs;
}

// 29 nights of the whole nightly (gemm, MLP, decode, NCCL, probes: one
// metric of each timing, `roofline_ideal` left out) on five one-GPU H200
// boards with the repo's target files: two builds of the same kernels, 3 and
// 4 nights of c6dc07d on two boards, then 10 of 4793953 on a third, 8 of it
// on a fourth and 4 on a fifth, as tools/nightly.sh gated them (the
// re-measurements of the suspects with their night). Each night passes; the
// last 19 are gated on 10+ earlier runs.
TEST(KgateRecordedAA, EveryNightOfTheWholeNightlyOnFiveH200BoardsPasses) {
  std::string header;
  const std::string data = std::string(KBENCH_SOURCE_DIR) + "/tests/data/";
  auto runs = runs_of(slurp(data + "h200-aa-full-c6dc07d-2026-11-29.csv"), &header);
  for (const char* file :
       {"h200-aa-full-4793953-2026-11-29.csv", "h200-aa-full-4793953-e97bc479-2026-11-29.csv",
        "h200-aa-full-4793953-b5cd4bb6-2026-11-29.csv"}) {
    std::string header2;
    const auto later = runs_of(slurp(data + file), &header2);
    ASSERT_EQ(header2, header) << file;
    runs.insert(runs.end(), later.begin(), later.end());
  }
  ASSERT_EQ(runs.size(), 29u);
  kb::GateOptions opt;
  opt.targets = kb::load_target_dir(std::string(KBENCH_SOURCE_DIR) + "/targets");
  const fs::path dir = temp_dir("recorded_aa");
  std::string text = header + "\n";
  size_t history_gated = 0;
  for (size_t night = 0; night < runs.size(); ++night) {
    for (const auto& line : runs[night]) text += line + "\n";
    kb::History h;
    h.add_file(write(dir / "history.csv", text).string());
    h.finish();
    const kb::GateReport rep = kb::run_gate(h, opt);
    size_t gated = 0, on_history = 0;
    for (const auto& k : rep.keys) {
      EXPECT_NE(k.status, kb::GateStatus::fail)
          << "night " << night + 1 << ": " << kb::key_label(k) << ": " << k.why;
      gated += k.status != kb::GateStatus::skipped;
      on_history += k.status != kb::GateStatus::skipped && k.rule != "too little history";
    }
    EXPECT_GE(gated, 100u) << "night " << night + 1;
    history_gated += on_history >= 100;
    EXPECT_EQ(rep.exit_code(), 0) << "night " << night + 1 << "\n" << kb::gate_console(rep);
  }
  EXPECT_EQ(history_gated, 19u);
}

// Five keys of 22 whole-nightly runs of one frozen build on five H200
// boards; the last on a sixth board whose cuBLASLt GEMMs run up to 5.6%
// below the others, beyond twice the target file's board_spread. The key's
// last good run is of the same commit, driver and CUDA: the board's, not
// a failure. Tagged with another commit, that night fails on that key.
TEST(KgateRecordedAA, ASlowSixthBoardFailsOnlyWhereTheBuildChanged) {
  const std::string text =
      slurp(std::string(KBENCH_SOURCE_DIR) + "/tests/data/h200-new-board-7cb7c3b-2026-11-29.csv");
  kb::GateOptions opt;
  opt.targets = kb::load_target_dir(std::string(KBENCH_SOURCE_DIR) + "/targets");
  const fs::path dir = temp_dir("recorded_new_board");
  auto gate = [&](const std::string& csv_text) {
    kb::History h;
    h.add_file(write(dir / "history.csv", csv_text).string());
    h.finish();
    return kb::run_gate(h, opt);
  };
  const std::string key = "gemm [M=1;N=4096;K=14336] fp8_e4m3 tflops";
  auto find = [&](const kb::GateReport& rep) {
    for (const auto& k : rep.keys)
      if (kb::key_label(k).rfind(key, 0) == 0) return k;
    ADD_FAILURE() << "no key " << key;
    return kb::GateKeyResult{};
  };
  const kb::GateReport same = gate(text);
  EXPECT_EQ(same.exit_code(), 0) << kb::gate_console(same);
  const auto k = find(same);
  EXPECT_EQ(k.status, kb::GateStatus::inconclusive) << k.why;
  EXPECT_EQ(k.rule, "new board");
  EXPECT_TRUE(contains(k.note, "this drop (5.6%) is beyond it, but the key's last good run"))
      << k.note;

  // The sixth board's run, tagged with another commit.
  std::string other = text;
  const std::string night = "20261129T062803Z-50d62f";
  size_t n = 0;
  for (size_t at = other.find(night); at != std::string::npos; at = other.find(night, at + 1)) {
    const size_t sha = other.rfind(",7cb7c3b20062,", at);
    ASSERT_NE(sha, std::string::npos);
    other.replace(sha + 1, 12, "0123456789ab");
    ++n;
  }
  ASSERT_GT(n, 5u);
  const kb::GateReport changed = gate(other);
  EXPECT_EQ(changed.exit_code(), 1);
  EXPECT_EQ(find(changed).status, kb::GateStatus::fail) << find(changed).why;
}
#endif

}  // namespace
