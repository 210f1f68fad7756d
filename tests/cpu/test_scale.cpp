// Issue 25 on the CPU: `--shard i/n` (every point in exactly one shard),
// the CSV schema v2 beside v1 histories (appended in the file's own schema,
// read alone and concatenated), the GPUs of one run as attempts of one key
// in the gate, the sibling check on synthetic multi-GPU histories, and
// `kbench list --points --shard` end to end.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "core/csv_reader.h"
#include "core/metrics.h"
#include "kgate_test_util.h"
#include "reports/gate_result.h"
#include "suite/shard.h"
#include "tools/kgate/gate.h"
#include "tools/kgate/siblings.h"

namespace {

using namespace kgt;

// ---- shards ----

TEST(Shard, ParseTakesIOfNFromOne) {
  auto s = kb::parse_shard("2/3");
  EXPECT_EQ(s.index, 2);
  EXPECT_EQ(s.count, 3);
  EXPECT_TRUE(kb::parse_shard("1/1").whole());
  for (const char* bad : {"0/3", "4/3", "1/0", "0/0", "3", "a/3", "1/b", "-1/3", "1/-3", "/3", "1/",
                          "1//3", " 1/3", "1/3 ", "1.0/3", "123456/123456"})
    EXPECT_THROW(kb::parse_shard(bad), kb::ShardError) << bad;
  try {
    kb::parse_shard("0/3");
  } catch (const kb::ShardError& e) {
    EXPECT_TRUE(contains(e.what(), "from 1 to 3")) << e.what();
  }
}

// A suite-like list: two experiments with seed-mean groups, extra points,
// and one of plain points.
std::vector<kb::ShardItem> suite_items() {
  std::vector<kb::ShardItem> items;
  for (const char* dtype : {"bfloat16", "int8"})
    for (int d = 0; d < 5; ++d) items.push_back({"gemv", true, std::string(dtype) + ";"});
  items.push_back({"gemv", false, "bfloat16;"});  // a model shape, not in the mean
  for (int i = 0; i < 4; ++i) items.push_back({"layer_norm", true, "bfloat16;"});
  for (int i = 0; i < 7; ++i) items.push_back({"decode", false, "int8;"});
  items.push_back({"nccl_all_reduce", false, ""});
  return items;
}

TEST(Shard, EveryPointInExactlyOneShardAndSeedGroupsWhole) {
  const auto items = suite_items();
  for (int n = 1; n <= 12; ++n) {
    const auto dealt = kb::deal_shards(items, n);
    ASSERT_EQ(dealt.size(), items.size());
    std::map<int, size_t> per_shard;
    std::map<std::string, std::set<int>> group_shards;
    for (size_t i = 0; i < items.size(); ++i) {
      ASSERT_GE(dealt[i], 1) << "n=" << n;
      ASSERT_LE(dealt[i], n) << "n=" << n;
      ++per_shard[dealt[i]];
      if (items[i].in_seed_mean)
        group_shards[items[i].experiment + "|" + items[i].group].insert(dealt[i]);
    }
    // The union of the shards is the list (each index dealt once, by
    // construction of a function) and no shard is left with everything.
    size_t total = 0;
    for (const auto& [s, c] : per_shard) total += c;
    EXPECT_EQ(total, items.size());
    for (const auto& [g, shards] : group_shards)
      EXPECT_EQ(shards.size(), 1u) << g << " split over shards with n=" << n;
    // Deterministic: the same list deals the same way.
    EXPECT_EQ(kb::deal_shards(items, n), dealt);
  }
  // Units round-robin: with as many shards as units, each has one unit.
  // Units here: 2 gemv groups + 1 extra + 1 layer_norm group + 7 decode + 1 nccl = 12.
  const auto d12 = kb::deal_shards(items, 12);
  EXPECT_EQ(std::set<int>(d12.begin(), d12.end()).size(), 12u);
  // The 7 decode points spread over 3 shards 3/2/2, not all on one.
  const auto d3 = kb::deal_shards(items, 3);
  std::map<int, int> decode;
  for (size_t i = 0; i < items.size(); ++i)
    if (items[i].experiment == "decode") ++decode[d3[i]];
  EXPECT_EQ(decode.size(), 3u);
}

// ---- CSV schema v2 and v1 histories ----

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t e = text.find('\n', start);
    if (e == std::string::npos) e = text.size();
    out.push_back(text.substr(start, e - start));
    start = e + 1;
  }
  return out;
}

kb::Record gpu_row(const std::string& name, double v, const std::string& run, int gpu) {
  kb::Record r = row(name, v, run);
  r.device = "cuda:" + std::to_string(gpu);
  r.gpu_index = std::to_string(gpu);
  r.gpu_uuid = "GPU-0000000" + std::to_string(gpu) + "-aaaa-bbbb-cccc-dddddddddddd";
  r.gpu_bus_id = "00000000:1" + std::to_string(gpu) + ":00.0";
  r.host = "node07";
  return r;
}

TEST(CsvSchemaV2, AV1HistoryGetsV1RowsAndStaysReadable) {
  fs::path d = temp_dir("v1_append");
  fs::path p = d / "history.csv";
  // A history begun before v2: its header and two nights.
  std::string v1 = kb::csv_header_v1() + "\n";
  for (const char* run : {"n1", "n2"})
    v1 += kb::csv_line(kb::record_fields(row("gemv", 1000, run), kb::csv_columns_v1())) + "\n";
  write(p, v1);
  // Tonight, with the GPU identity: appended as v1 rows, header untouched.
  EXPECT_EQ(kb::append_csv(p.string(), {gpu_row("gemv", 1001, "n3", 0)}), kb::csv_columns_v1());
  EXPECT_EQ(kb::append_csv(p.string(), {gpu_row("gemv", 1002, "n4", 1)}), kb::csv_columns_v1());
  const std::string text = slurp(p);
  EXPECT_EQ(text.rfind(v1, 0), 0u) << "the old rows changed";
  const auto lines = lines_of(text);
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_EQ(lines[0], kb::csv_header_v1());
  for (size_t i = 1; i < lines.size(); ++i) {
    kb::CsvReader rd(lines[i]);
    std::vector<std::string_view> f;
    ASSERT_TRUE(rd.next(f));
    EXPECT_EQ(f.size(), kb::csv_columns_v1()) << lines[i];
  }
  EXPECT_TRUE(contains(lines[4], "cuda:1"));  // the device label still names the GPU
  kb::History h;
  h.add_file(p.string());
  h.finish();
  EXPECT_TRUE(h.warnings().empty()) << h.warnings()[0].text();
  EXPECT_EQ(h.rows(), 4u);
}

TEST(CsvSchemaV2, AfterAConcatenatedV2FileRowsTakeTheLastHeadersColumns) {
  fs::path d = temp_dir("v1_then_v2");
  fs::path p = d / "history.csv";
  std::string v1 = kb::csv_header_v1() + "\n" +
                   kb::csv_line(kb::record_fields(row("gemv", 1000, "n1"), kb::csv_columns_v1())) +
                   "\n";
  // tools/merge-shards.sh appends a v2 shard file with its header.
  std::string shard = kb::csv_header() + "\n" +
                      kb::csv_line(kb::record_fields(gpu_row("gemv", 1001, "n2", 0))) + "\n";
  write(p, v1 + shard);
  EXPECT_EQ(kb::append_csv(p.string(), {gpu_row("gemv", 1002, "n3", 1)}), kb::csv_columns().size());
  kb::History h;
  h.add_file(p.string());
  h.finish();
  EXPECT_TRUE(h.warnings().empty()) << h.warnings()[0].text();
  EXPECT_EQ(h.rows(), 3u);
  // And a v1 header appended after v2 rows (an old shard) switches back.
  write(p, shard + v1);
  EXPECT_EQ(kb::append_csv(p.string(), {gpu_row("gemv", 1002, "n3", 1)}), kb::csv_columns_v1());
}

TEST(CsvSchemaV2, ANewFileIsV2AndAForeignHeaderIsStillRefused) {
  fs::path d = temp_dir("v2_new");
  fs::path p = d / "new.csv";
  EXPECT_EQ(kb::append_csv(p.string(), {gpu_row("gemv", 1000, "n1", 3)}), kb::csv_columns().size());
  const auto lines = lines_of(slurp(p));
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], kb::csv_header());
  EXPECT_TRUE(contains(lines[0], ",message,gpu_index,gpu_uuid,gpu_bus_id,host"));
  EXPECT_TRUE(
      contains(lines[1], ",3,GPU-00000003-aaaa-bbbb-cccc-dddddddddddd,00000000:13:00.0,node07"))
      << lines[1];
  fs::path foreign = write(d / "foreign.csv", "a,b,c\n1,2,3\n");
  EXPECT_THROW(kb::append_csv(foreign.string(), {row("gemv", 1, "n1")}), kb::CsvError);
  EXPECT_EQ(slurp(foreign), "a,b,c\n1,2,3\n");
  // A v1 header with a column more or less is neither schema.
  fs::path near = write(d / "near.csv", kb::csv_header_v1() + ",extra\n");
  EXPECT_THROW(kb::append_csv(near.string(), {row("gemv", 1, "n1")}), kb::CsvError);
}

TEST(CsvSchemaV2, OldAndNewFilesReadAloneTogetherAndConcatenated) {
  std::string v1 = kb::csv_header_v1() + "\n";
  for (int i = 0; i < 12; ++i)
    v1 += kb::csv_line(kb::record_fields(row("gemv", 1000 + i % 3, "n" + std::to_string(10 + i)),
                                         kb::csv_columns_v1())) +
          "\n";
  std::string v2 = kb::csv_header() + "\n";
  for (int g = 0; g < 4; ++g)
    v2 += kb::csv_line(kb::record_fields(gpu_row("gemv", 1001, "n30", g))) + "\n";
  // Two files.
  kb::History two;
  two.add_text(v1, "old.csv");
  two.add_text(v2, "new.csv");
  two.finish();
  // One history: the v2 file appended to the v1 file with `cat`.
  kb::History cat;
  cat.add_text(v1 + v2, "cat.csv");
  cat.finish();
  for (const kb::History* h : {&two, &cat}) {
    EXPECT_TRUE(h->warnings().empty()) << h->warnings()[0].text();
    EXPECT_EQ(h->rows(), 16u);
    EXPECT_EQ(h->runs().size(), 13u);
    kb::GateReport rep = kb::run_gate(*h, {});
    ASSERT_EQ(rep.keys.size(), 1u);  // cuda (v1) and cuda:0..3 (v2): one gate key
    EXPECT_EQ(rep.keys[0].device, "cuda");
    EXPECT_EQ(rep.keys[0].attempts, 4);
    EXPECT_EQ(rep.keys[0].history_runs, 12u);
    EXPECT_EQ(rep.keys[0].status, kb::GateStatus::pass) << rep.keys[0].why;
  }
  // v2 then v1 concatenated reads too (the rows below a header take its columns).
  kb::History back;
  back.add_text(v2 + v1, "back.csv");
  back.finish();
  EXPECT_EQ(back.rows(), 16u);
  // A gpt_fast header inside ours is still an error: other columns entirely.
  kb::History mixed;
  EXPECT_THROW(
      mixed.add_text(v1 + "name,metric,target,actual,dtype,device,arch,is_model\n", "m.csv"),
      kb::ResultFileError);
}

// ---- the GPUs of one run in the gate, and the sibling check ----

// `nights` nights of 4 GPUs; `value(night, gpu, key)` gives each row.
template <class F>
std::string four_gpu_history(int nights, const std::vector<std::string>& names, F value) {
  std::string s = kb::csv_header() + "\n";
  for (int n = 0; n < nights; ++n) {
    char ts[32];
    std::snprintf(ts, sizeof ts, "2026-01-%02dT03:00:00Z", n + 1);
    for (int g = 0; g < 4; ++g)
      for (size_t k = 0; k < names.size(); ++k) {
        kb::Record r = gpu_row(names[k], value(n, g, k), "night" + std::to_string(n), g);
        r.timestamp = ts;
        if (names[k] == "roofline_probe") {
          r.metric = "read_bandwidth(GB/s)";
          r.dtype = "int8";
          r.shape = "bytes=1073741824";
        }
        s += kb::csv_line(kb::record_fields(r)) + "\n";
      }
  }
  return s;
}

double wobble(int n, int g, size_t k) { return 1 + 0.002 * (((n * 7 + g * 3 + int(k)) % 5) - 2); }

const std::vector<std::string> kNames = {"roofline_probe", "gemv", "gather_gemv",
                                         "layer_norm",     "mlp",  "decode"};

kb::GateReport gate_text(const std::string& text) {
  kb::History h;
  h.add_text(text, "h.csv");
  h.finish();
  return kb::run_gate(h, {});
}

TEST(Siblings, OneSlowGpuIsAFindingAboutItNotARegression) {
  // 20 quiet nights; tonight GPU 2 is 8% slow on every row (not its ceiling).
  const auto text = four_gpu_history(21, kNames, [](int n, int g, size_t k) {
    double v = 1000 * wobble(n, g, k);
    return n == 20 && g == 2 && k > 0 ? v * 0.92 : v;
  });
  auto rep = gate_text(text);
  EXPECT_EQ(rep.exit_code(), 0) << kb::gate_console(rep, true);
  for (const auto& k : rep.keys) {
    EXPECT_EQ(k.attempts, 4) << k.name;
    EXPECT_EQ(k.device, "cuda");
  }
  ASSERT_EQ(rep.gpu_findings.size(), 1u) << kb::gate_console(rep, true);
  EXPECT_TRUE(contains(rep.gpu_findings[0].gpu, "cuda:2")) << rep.gpu_findings[0].gpu;
  EXPECT_TRUE(contains(rep.gpu_findings[0].gpu, "GPU-00000002")) << rep.gpu_findings[0].gpu;
  // Five measured points; the probe's read bandwidth is a ceiling, counted apart.
  EXPECT_TRUE(contains(rep.gpu_findings[0].why, "5 of 5 measured points"))
      << rep.gpu_findings[0].why;
  EXPECT_TRUE(contains(kb::gate_console(rep, false), "slow GPU cuda:2"));
  EXPECT_TRUE(contains(kb::gate_markdown(rep), "GPU findings"));
}

TEST(Siblings, EveryGpuSlowIsARegressionOfTheCode) {
  const auto text = four_gpu_history(21, kNames, [](int n, int g, size_t k) {
    double v = 1000 * wobble(n, g, k);
    return n == 20 && k == 1 ? v * 0.92 : v;  // gemv, on all four
  });
  auto rep = gate_text(text);
  EXPECT_EQ(rep.exit_code(), 1);
  EXPECT_TRUE(rep.gpu_findings.empty());
  bool gemv_failed = false;
  for (const auto& k : rep.keys)
    if (k.name == "gemv") gemv_failed = k.status == kb::GateStatus::fail;
  EXPECT_TRUE(gemv_failed) << kb::gate_console(rep, true);
}

TEST(Siblings, ACeilingNamesAGpuTwoPointsDoNotThreeDo) {
  auto check = [](auto value) {
    kb::History h;
    h.add_text(four_gpu_history(1, kNames, value), "h.csv");
    h.finish();
    auto reps = kb::sibling_check(h);
    EXPECT_EQ(reps.size(), 1u);
    std::vector<std::string> named;
    for (const auto& r : reps)
      for (const auto& g : r.gpus)
        if (g.named) named.push_back(g.gpu);
    return named;
  };
  // GPU 1's read bandwidth 6% behind: named on the ceiling alone.
  auto c = check([](int, int g, size_t k) { return g == 1 && k == 0 ? 940.0 : 1000.0; });
  ASSERT_EQ(c.size(), 1u);
  EXPECT_TRUE(contains(c[0], "cuda:1"));
  // 4.9% behind on the ceiling: not.
  EXPECT_TRUE(
      check([](int, int g, size_t k) { return g == 1 && k == 0 ? 951.0 : 1000.0; }).empty());
  // Two points (a row each) 10% behind: not named; three: named.
  EXPECT_TRUE(check([](int, int g, size_t k) {
                return g == 3 && (k == 1 || k == 2) ? 900.0 : 1000.0;
              }).empty());
  auto three =
      check([](int, int g, size_t k) { return g == 3 && k >= 1 && k <= 3 ? 900.0 : 1000.0; });
  ASSERT_EQ(three.size(), 1u);
  EXPECT_TRUE(contains(three[0], "cuda:3"));
  // A faster GPU is never "behind".
  EXPECT_TRUE(check([](int, int g, size_t) { return g == 0 ? 1100.0 : 1000.0; }).empty());
}

// One run of a 4-GPU host as `kbench run --device all` writes it: the
// probe (ceilings and times), GEMMs with three metrics of one timing, a
// decode point with its GPU-measured latency and its compilation time.
struct RunRow {
  std::string name, metric, shape, dtype;
};
const std::vector<RunRow> kRun = {
    {"roofline_probe", kb::metric_name::read_bandwidth, "bytes=2147483648", "int8"},
    {"roofline_probe", kb::metric_name::copy_bandwidth, "bytes=2147483648", "int8"},
    {"roofline_probe", kb::metric_name::launch_us, "bytes=2147483648", "int8"},
    {"roofline_probe", kb::metric_name::graph_node_us, "bytes=2147483648", "int8"},
    {"roofline_probe", kb::metric_name::mem_latency_us, "bytes=2147483648", "int8"},
    {"gemm", kb::metric_name::tflops, "M=4096;N=4096;K=14336", "bfloat16"},  // 5: one point
    {"gemm", kb::metric_name::flops_utilization, "M=4096;N=4096;K=14336", "bfloat16"},
    {"gemm", kb::metric_name::memory_bandwidth, "M=4096;N=4096;K=14336", "bfloat16"},
    {"gemm", kb::metric_name::tflops, "M=4096;N=14336;K=16384", "bfloat16"},  // 8: another
    {"gemm", kb::metric_name::flops_utilization, "M=4096;N=14336;K=16384", "bfloat16"},
    {"gemm", kb::metric_name::memory_bandwidth, "M=4096;N=14336;K=16384", "bfloat16"},
    {"gemv", kb::metric_name::memory_bandwidth, "N=4096;K=4096", "int8"},  // 11
    {"layer_norm", kb::metric_name::memory_bandwidth, "BS=4096;D=8192", "bfloat16"},
    {"Llama-2-7b-chat-hf", kb::metric_name::latency_us, "BS=1;prompt=6;new_tokens=200", "int8"},
    {"Llama-2-7b-chat-hf", "token_per_sec", "BS=1;prompt=6;new_tokens=200", "int8"},
    {"Llama-2-7b-chat-hf", kb::metric_name::compilation_time, "BS=1;prompt=6;new_tokens=200",
     "int8"},                                                                       // 15
    {"Mixtral-8x7B-v0.1", kb::metric_name::compilation_time, "layers=16", "int8"},  // 16
};
constexpr double kBase = 1000;

// `worse(gpu, row)`: how much worse than its siblings' value the row is on
// that GPU (0.2 = 20%), in the metric's own direction.
template <class F>
kb::History four_gpu_run(F worse) {
  std::string s = kb::csv_header() + "\n";
  for (int g = 0; g < 4; ++g)
    for (size_t k = 0; k < kRun.size(); ++k) {
      const bool lower = kb::metric_direction(kRun[k].metric) == kb::Direction::lower_is_better;
      const double w = worse(g, k);
      kb::Record r = gpu_row(kRun[k].name, lower ? kBase * (1 + w) : kBase * (1 - w), "night0", g);
      r.metric = kRun[k].metric;
      r.shape = kRun[k].shape;
      r.dtype = kRun[k].dtype;
      r.timestamp = "2026-01-01T03:00:00Z";
      s += kb::csv_line(kb::record_fields(r)) + "\n";
    }
  kb::History h;
  h.add_text(s, "run.csv");
  h.finish();
  EXPECT_TRUE(h.warnings().empty()) << h.warnings()[0].text();
  return h;
}

const kb::SiblingGpu& sibling(const std::vector<kb::SiblingReport>& reps, int gpu) {
  EXPECT_EQ(reps.size(), 1u);
  EXPECT_EQ(reps.at(0).gpus.size(), 4u);
  return reps.at(0).gpus.at(static_cast<size_t>(gpu));
}

size_t named(const std::vector<kb::SiblingReport>& reps) {
  size_t n = 0;
  for (const auto& r : reps)
    for (const auto& g : r.gpus) n += g.named;
  return n;
}

// On a real 4x H100 run a healthy GPU was named on compilation_time (the
// host's CPU, contended by four chains) and the probe's memory latency.
TEST(Siblings, CompilationTimeAndTheProbesTimesAreNotTheBoards) {
  const kb::History h = four_gpu_run([](int g, size_t k) {
    const std::string& m = kRun[k].metric;
    const bool host = m == kb::metric_name::compilation_time || m == kb::metric_name::launch_us ||
                      m == kb::metric_name::graph_node_us || m == kb::metric_name::mem_latency_us;
    return g == 1 && host ? 0.2 : 0.0;
  });
  const auto reps = kb::sibling_check(h);
  EXPECT_EQ(named(reps), 0u) << kb::sibling_text(reps, false);
  const kb::SiblingGpu& g1 = sibling(reps, 1);
  EXPECT_TRUE(g1.points_behind.empty());
  EXPECT_TRUE(g1.ceilings_behind.empty());
  // gemm x2, gemv, layer_norm, Llama (latency and tokens/s; not its compilation).
  EXPECT_EQ(g1.points_compared, 5u);
  EXPECT_EQ(g1.ceilings_compared, 2u);
  // 2 compilation_time and 3 probe-time rows on each of 4 GPUs.
  EXPECT_EQ(reps[0].rows_not_compared, 20u);
  const std::string text = kb::sibling_text(reps, false);
  EXPECT_TRUE(contains(text, "not compared: 20 rows of compilation_time(s)")) << text;
  EXPECT_FALSE(contains(text, "NAMED")) << text;
  // `kgate check` reports no GPU finding either (the same function).
  EXPECT_TRUE(kb::run_gate(h, {}).gpu_findings.empty());
  for (const auto& r : kRun) {
    const kb::Key k{r.name,
                    r.metric,
                    r.dtype,
                    r.shape,
                    kH100,
                    "cuda",
                    kb::metric_direction(r.metric) == kb::Direction::lower_is_better};
    const bool host = r.metric == kb::metric_name::compilation_time ||
                      (r.name == "roofline_probe" && k.lower_is_better);
    EXPECT_EQ(kb::sibling_role(k) == kb::SiblingRole::not_the_board, host) << r.metric;
  }
  // A decode step's latency is timed on the GPU: a row of its point.
  EXPECT_EQ(kb::sibling_role(
                {"Llama-2-7b-chat-hf", kb::metric_name::latency_us, "int8", "", "", "", true}),
            kb::SiblingRole::point_metric);
}

TEST(Siblings, OnePointsMetricsAreOnePieceOfEvidence) {
  // GPU 3's one GEMM shape 8% slow: its tflops, flops_utilization and
  // memory_bandwidth are one timing, one point, not three rows.
  const kb::History h =
      four_gpu_run([](int g, size_t k) { return g == 3 && k >= 5 && k <= 7 ? 0.08 : 0.0; });
  const auto reps = kb::sibling_check(h);
  EXPECT_EQ(named(reps), 0u) << kb::sibling_text(reps, false);
  const kb::SiblingGpu& g3 = sibling(reps, 3);
  ASSERT_EQ(g3.points_behind.size(), 1u);
  EXPECT_EQ(g3.points_behind[0].point, "gemm [M=4096;N=4096;K=14336] bfloat16");
  EXPECT_EQ(g3.points_behind[0].rows.size(), 3u);
  EXPECT_NEAR(g3.points_behind[0].behind, 0.08, 1e-9);
  EXPECT_TRUE(kb::run_gate(h, {}).gpu_findings.empty());
  // With --min-points 1 that point names it.
  kb::SiblingOptions one;
  one.min_points = 1;
  EXPECT_EQ(named(kb::sibling_check(h, one)), 1u);
}

TEST(Siblings, ThreeSlowPointsNameTheGpu) {
  // Three different points 8% slow on GPU 2: a GEMM shape (its three
  // metrics), gemv, and the decode step's latency alone.
  const kb::History h = four_gpu_run([](int g, size_t k) {
    return g == 2 && ((k >= 8 && k <= 10) || k == 11 || k == 13) ? 0.08 : 0.0;
  });
  const auto reps = kb::sibling_check(h);
  ASSERT_EQ(named(reps), 1u) << kb::sibling_text(reps, false);
  const kb::SiblingGpu& g2 = sibling(reps, 2);
  EXPECT_TRUE(g2.named);
  EXPECT_TRUE(contains(g2.gpu, "cuda:2")) << g2.gpu;
  EXPECT_EQ(g2.points_behind.size(), 3u);
  EXPECT_TRUE(contains(g2.why, "3 of 5 measured points")) << g2.why;
  EXPECT_TRUE(contains(g2.why, "gemm [M=4096;N=14336;K=16384] bfloat16 8.0% (")) << g2.why;
  EXPECT_TRUE(contains(g2.why, "latency(us)")) << g2.why;
  const auto gate = kb::run_gate(h, {});
  ASSERT_EQ(gate.gpu_findings.size(), 1u);
  EXPECT_EQ(gate.gpu_findings[0].why, g2.why);
}

TEST(Siblings, AReadBandwidthCeilingSixPercentLowStillNamesTheGpu) {
  const kb::History h = four_gpu_run([](int g, size_t k) { return g == 0 && k == 0 ? 0.06 : 0.0; });
  const auto reps = kb::sibling_check(h);
  ASSERT_EQ(named(reps), 1u) << kb::sibling_text(reps, false);
  const kb::SiblingGpu& g0 = sibling(reps, 0);
  EXPECT_TRUE(g0.named);
  EXPECT_TRUE(g0.points_behind.empty());
  ASSERT_EQ(g0.ceilings_behind.size(), 1u);
  EXPECT_TRUE(contains(g0.why,
                       "1 ceiling(s) (roofline_probe [bytes=2147483648] int8 "
                       "read_bandwidth(GB/s) 940 vs 1000 (6.0%))"))
      << g0.why;
  EXPECT_TRUE(contains(kb::sibling_text(reps, false), "ceilings   1/2 behind"));
  EXPECT_EQ(kb::run_gate(h, {}).gpu_findings.size(), 1u);
}

TEST(Siblings, AFailedRowOnOneGpuFailsTheKeyNamingTheGpu) {
  std::string text =
      four_gpu_history(21, {"gemv"}, [](int n, int g, size_t k) { return 1000 * wobble(n, g, k); });
  kb::Record bad = gpu_row("gemv", 0, "night20", 3);
  bad.actual.reset();
  bad.status = "failed";
  bad.message = "worker died of signal 11";
  bad.timestamp = "2026-01-21T03:00:00Z";
  // GPU 3's row of tonight replaced by a crash.
  const auto lines = lines_of(text);
  std::string out;
  for (size_t i = 0; i + 1 < lines.size(); ++i) out += lines[i] + "\n";
  out += kb::csv_line(kb::record_fields(bad)) + "\n";
  auto rep = gate_text(out);
  ASSERT_EQ(rep.keys.size(), 1u);
  EXPECT_EQ(rep.keys[0].status, kb::GateStatus::fail);
  EXPECT_TRUE(contains(rep.keys[0].why, "on cuda:3")) << rep.keys[0].why;
  EXPECT_TRUE(contains(rep.keys[0].why, "signal 11")) << rep.keys[0].why;
}

TEST(Siblings, ACollectivesRowIsNotASibling) {
  std::string text = four_gpu_history(1, kNames, [](int, int, size_t) { return 1000.0; });
  kb::Record c = row("nccl_all_reduce", 350, "night0");
  c.metric = "bus_bandwidth(GB/s)";
  c.shape = "bytes=1073741824;ranks=4";
  c.gpu_index = "0,1,2,3";  // the host's GPUs together: no UUID
  c.host = "node07";
  c.timestamp = "2026-01-01T03:00:00Z";
  kb::History h;
  h.add_text(text + kb::csv_line(kb::record_fields(c)) + "\n", "h.csv");
  h.finish();
  auto reps = kb::sibling_check(h);
  ASSERT_EQ(reps.size(), 1u);
  EXPECT_EQ(reps[0].siblings, 4u);
  EXPECT_EQ(reps[0].gpus.size(), 4u);
}

TEST(Siblings, OneGpuRunsHaveNoSiblingTable) {
  kb::History h;
  h.add_text(csv(series("gemv", steady(5, 1000, 1000))), "h.csv");
  h.finish();
  EXPECT_TRUE(kb::sibling_check(h).empty());
  EXPECT_TRUE(contains(kb::sibling_text({}, false), "nothing to compare"));
}

#ifdef KBENCH_KGATE_EXE
TEST(Siblings, KgateSiblingsPrintsTheTableAndExits1OnANamedGpu) {
  fs::path d = temp_dir("siblings_bin");
  fs::path slow = write(d / "slow.csv", four_gpu_history(1, kNames, [](int, int g, size_t k) {
                          return g == 1 && k == 0 ? 900.0 : 1000.0;
                        }));
  Result r = kgate("siblings --results " + slow.string() + " --markdown " + (d / "s.md").string());
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_TRUE(contains(r.out, "4 GPUs")) << r.out;
  EXPECT_TRUE(contains(r.out, "NAMED")) << r.out;
  EXPECT_TRUE(contains(slurp(d / "s.md"), "| GPU |"));
  fs::path even =
      write(d / "even.csv", four_gpu_history(1, kNames, [](int, int, size_t) { return 1000.0; }));
  Result ok = kgate("siblings --results " + even.string());
  EXPECT_EQ(ok.code, 0) << ok.out;
  Result bad = kgate("siblings --results " + even.string() + " --threshold 2");
  EXPECT_EQ(bad.code, 2) << bad.out;
  // Two points 10% behind: named with --min-points 2, not with the default 3.
  fs::path two = write(d / "two.csv", four_gpu_history(1, kNames, [](int, int g, size_t k) {
                         return g == 3 && (k == 1 || k == 2) ? 900.0 : 1000.0;
                       }));
  EXPECT_EQ(kgate("siblings --results " + two.string()).code, 0);
  Result two_named = kgate("siblings --results " + two.string() + " --min-points 2");
  EXPECT_EQ(two_named.code, 1) << two_named.out;
  EXPECT_TRUE(contains(two_named.out, "2 of 5 measured points")) << two_named.out;
}
#endif

// ---- the scheduler manifests (ci/): they parse, and each task's command
// line, expanded as the scheduler and the shell would, asks for shard
// 1/N .. N/N with N the task count, one run id, every GPU ----

const fs::path kSource = KBENCH_SOURCE_DIR;

// Runs `script` with bash in a folder where build/suite/kbench is a stub that
// prints its arguments; returns them.
std::string stub_run(const std::string& script, const std::string& env) {
  fs::path d = temp_dir("stub_" + std::to_string(std::hash<std::string>()(script + env)));
  fs::create_directories(d / "build/suite");
  write(d / "build/suite/kbench", "#!/bin/sh\necho \"$@\"\n");
  fs::permissions(d / "build/suite/kbench", fs::perms::owner_all);
  write(d / "task.sh", script);
  auto r = kb::test::run_command("cd " + d.string() + " && env " + env, "bash task.sh");
  EXPECT_EQ(r.code, 0) << r.out;
  return r.out;
}

TEST(ScaleManifests, SlurmArrayTasksAskForEveryShardOnce) {
  const std::string text = slurp(kSource / "ci/slurm-kbench.sbatch");
  auto syntax =
      kb::test::run_command("bash", "-n " + (kSource / "ci/slurm-kbench.sbatch").string());
  EXPECT_EQ(syntax.code, 0) << syntax.out;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(text, m, std::regex(R"(#SBATCH --array=1-(\d+)\n)"))) << text;
  const int n = std::stoi(m[1]);
  ASSERT_TRUE(std::regex_search(text, m, std::regex(R"(\nKBENCH_SHARDS=(\d+)\n)")));
  EXPECT_EQ(std::stoi(m[1]), n) << "the array's size and KBENCH_SHARDS differ";
  EXPECT_TRUE(contains(text, "export NCCL_NVLS_ENABLE=0"));
  for (int i = 1; i <= n; ++i) {
    const std::string out = stub_run(
        text, "SLURM_ARRAY_TASK_ID=" + std::to_string(i) + " SLURM_ARRAY_JOB_ID=777 KBENCH_OUT=o");
    EXPECT_TRUE(contains(
        out, "run --device all --shard " + std::to_string(i) + "/" + std::to_string(n) +
                 " --run-id nightly-777 --csv o/nightly-777/shard-" + std::to_string(i) + ".csv"))
        << out;
  }
}

TEST(ScaleManifests, KubernetesIndexedJobPodsAskForEveryShardOnce) {
  auto r = kb::test::run_command(
      "python3",
      "-c 'import json, sys, yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1]))))' " +
          (kSource / "ci/k8s-kbench-indexed-job.yaml").string());
  if (r.code != 0 && (contains(r.out, "No module named") || r.code == 127))
    GTEST_SKIP() << "python3 with the yaml module is not installed";
  ASSERT_EQ(r.code, 0) << r.out;
  const auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["apiVersion"], "batch/v1");
  EXPECT_EQ(doc["kind"], "Job");
  const auto& spec = doc["spec"];
  EXPECT_EQ(spec["completionMode"], "Indexed");
  const int n = spec["completions"].get<int>();
  EXPECT_EQ(spec["parallelism"].get<int>(), n);
  const auto& c = spec["template"]["spec"]["containers"][0];
  std::map<std::string, std::string> env;
  for (const auto& e : c["env"]) env[e["name"].get<std::string>()] = e["value"].get<std::string>();
  EXPECT_EQ(env["KBENCH_SHARDS"], std::to_string(n)) << "completions and KBENCH_SHARDS differ";
  EXPECT_EQ(env["NCCL_NVLS_ENABLE"], "0");
  EXPECT_GT(c["resources"]["limits"]["nvidia.com/gpu"].get<int>(), 0);
  ASSERT_EQ(c["command"][0], "/bin/bash");
  // Kubernetes' expansion: $(VAR) of the container's env, $$ -> $.
  std::string cmd = c["args"][0].get<std::string>();
  std::string expanded;
  for (size_t i = 0; i < cmd.size(); ++i) {
    if (cmd.compare(i, 2, "$$") == 0) {
      expanded += '$';
      ++i;
      continue;
    }
    std::smatch m;
    std::string rest = cmd.substr(i);
    if (std::regex_search(rest, m, std::regex(R"(^\$\(([A-Za-z_][A-Za-z0-9_]*)\))")) &&
        env.count(m[1])) {
      expanded += env[m[1]];
      i += m[0].length() - 1;
      continue;
    }
    expanded += cmd[i];
  }
  std::set<std::string> shards;
  for (int k = 0; k < n; ++k) {
    const std::string out =
        stub_run("mkdir() { :; }\n" + expanded + "\n", "JOB_COMPLETION_INDEX=" + std::to_string(k));
    const std::string want = "--shard " + std::to_string(k + 1) + "/" + std::to_string(n);
    EXPECT_TRUE(contains(out, "run --device all " + want + " --run-id " + env["KBENCH_RUN_ID"]))
        << out;
    shards.insert(want);
  }
  EXPECT_EQ(shards.size(), static_cast<size_t>(n));
}

// ---- kbench list --points --shard, end to end (no GPU needed) ----

#ifdef KBENCH_EXE
Result kbench(const std::string& args) { return kb::test::run_command(KBENCH_EXE, args); }

TEST(ShardCli, TheShardsTogetherAreTheWholeSuiteEachPointOnce) {
  Result whole = kbench("list --points");
  ASSERT_EQ(whole.code, 0) << whole.out;
  const auto all = lines_of(whole.out);
  ASSERT_GT(all.size(), 50u);
  EXPECT_EQ(std::set<std::string>(all.begin(), all.end()).size(), all.size()) << "a point twice";
  EXPECT_TRUE(contains(whole.out, "nccl_all_reduce\tbytes=8192"));
  for (int n : {2, 3, 7}) {
    std::multiset<std::string> got;
    for (int i = 1; i <= n; ++i) {
      Result s = kbench("list --points --shard " + std::to_string(i) + "/" + std::to_string(n));
      ASSERT_EQ(s.code, 0) << s.out;
      const auto part = lines_of(s.out);
      EXPECT_FALSE(part.empty()) << i << "/" << n;
      got.insert(part.begin(), part.end());
    }
    EXPECT_EQ(got, std::multiset<std::string>(all.begin(), all.end())) << "n=" << n;
  }
  // With --filter, as `kbench run --filter` selects.
  Result f = kbench("list --points --filter ^layer_norm$ --shard 2/2");
  EXPECT_EQ(f.code, 0) << f.out;
  for (const auto& line : lines_of(f.out)) EXPECT_EQ(line.rfind("layer_norm\t", 0), 0u) << line;
}

TEST(ShardCli, BadShardsAndDevicesExit2WithOneMessage) {
  for (const char* bad : {"0/3", "4/3", "1/0", "x", "2"}) {
    Result r = kbench(std::string("run --no-csv --shard ") + bad);
    EXPECT_EQ(r.code, 2) << bad << ": " << r.out;
    EXPECT_TRUE(contains(r.out, "--shard")) << r.out;
  }
  Result l = kbench("list --points --shard 4/3");
  EXPECT_EQ(l.code, 2) << l.out;
  Result rr = kbench("run --rerun s.csv --shard 1/2");
  EXPECT_EQ(rr.code, 2) << rr.out;
  for (const char* bad : {"0,0", "0,,1", "-1", "gpu0", "all,0"}) {
    Result r = kbench(std::string("run --no-csv --device ") + bad);
    EXPECT_EQ(r.code, 2) << bad << ": " << r.out;
  }
  Result id = kbench("run --no-csv --run-id night/2");
  EXPECT_EQ(id.code, 2) << id.out;
  EXPECT_TRUE(contains(id.out, "--run-id")) << id.out;
}

TEST(ShardCli, ANonexistentGpuIsAUsageErrorWhereThereAreGpus) {
  Result r = kbench("run --no-csv --filter layer_norm --device 0,63");
  if (r.code == 3) GTEST_SKIP() << "no CUDA device: " << r.out;
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, "out of range")) << r.out;
}
#endif

}  // namespace
