// The results CSV writer: schema, quoting, number round trip, header
// mismatch, and several processes appending to one file at once.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "core/csv_writer.h"
#include "core/record.h"
#include "reports/json_writer.h"
#include "tests/cpu/file_size_limit.h"
#include "tests/cpu/temp_root.h"

namespace {

namespace fs = std::filesystem;

// A strict RFC 4180 line splitter for the tests (one physical line per record).
std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        cur += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cur += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

std::vector<std::string> lines_of(const fs::path& p) {
  std::ifstream in(p);
  std::vector<std::string> v;
  for (std::string l; std::getline(in, l);) v.push_back(l);
  return v;
}

fs::path temp_file(const std::string& name) {
  fs::path d = kb::test::process_temp_root("kb_csv_");
  fs::create_directories(d);
  fs::path p = d / name;
  fs::remove(p);
  return p;
}

kb::Record sample(int i) {
  kb::Record r;
  r.name = "layer_norm";
  r.metric = "memory_bandwidth(GB/s)";
  r.target = 950;
  r.actual = 1234.5678 + i;
  r.dtype = "bfloat16";
  r.arch = "NVIDIA H100 80GB HBM3";
  r.shape = "BS=4096;D=" + std::to_string(1024 * (i + 1));
  r.samples = 100 + i;
  r.median_us = 0.1 + 0.2;  // not exactly representable: must still round-trip
  r.run_id = "run-" + std::to_string(i);
  r.message = "a, \"quoted\"\nmessage";
  return r;
}

TEST(CsvWriter, GptFastColumnsComeFirst) {
  const auto& c = kb::csv_columns();
  const std::vector<std::string> seed = {"name",  "metric", "target", "actual",
                                         "dtype", "device", "arch",   "is_model"};
  ASSERT_GE(c.size(), seed.size());
  EXPECT_TRUE(std::equal(seed.begin(), seed.end(), c.begin()));
  EXPECT_EQ(c[8], "shape");
  EXPECT_EQ(c[25], "timestamp");
  EXPECT_EQ(kb::record_fields(sample(0)).size(), c.size());
}

TEST(CsvWriter, Quoting) {
  EXPECT_EQ(kb::csv_quote("plain"), "plain");
  EXPECT_EQ(kb::csv_quote("a,b"), "\"a,b\"");
  EXPECT_EQ(kb::csv_quote("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(kb::csv_quote("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(kb::csv_quote(""), "");
}

TEST(CsvWriter, NumbersRoundTrip) {
  for (double v : {0.1 + 0.2, 1e-300, 3.0, 1208.12, 123456789.123456789, 2.5e-7}) {
    std::string s = kb::format_number(v);
    EXPECT_EQ(std::stod(s), v) << s;
  }
  EXPECT_EQ(kb::format_number(3.0), "3");
  EXPECT_EQ(kb::format_number(std::nan("")), "nan");
}

TEST(CsvWriter, CreatesHeaderThenAppends) {
  auto p = temp_file("a.csv");
  kb::append_csv(p.string(), {sample(0)});
  kb::append_csv(p.string(), {sample(1), sample(2)});
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  EXPECT_EQ(text.rfind(kb::csv_header() + "\n", 0), 0u);
  // 3 records: the embedded newline in `message` is inside quotes.
  size_t records = 0;
  bool quoted = false;
  for (char c : text) {
    if (c == '"') quoted = !quoted;
    if (c == '\n' && !quoted) ++records;
  }
  EXPECT_EQ(records, 4u);  // header + 3
}

TEST(CsvWriter, RowRoundTripsThroughTheSplitter) {
  auto p = temp_file("rt.csv");
  kb::Record r = sample(3);
  r.message = "no newline, but a comma and \"quotes\"";
  kb::append_csv(p.string(), {r});
  auto lines = lines_of(p);
  ASSERT_EQ(lines.size(), 2u);
  auto f = split(lines[1]);
  ASSERT_EQ(f.size(), kb::csv_columns().size());
  EXPECT_EQ(f[0], "layer_norm");
  EXPECT_EQ(std::stod(f[3]), *r.actual);
  EXPECT_EQ(f[7], "False");
  EXPECT_EQ(f[8], r.shape);
  EXPECT_EQ(std::stod(f[12]), *r.median_us);
  EXPECT_EQ(f[13], "");         // min_us unset: empty field
  EXPECT_EQ(f[26], r.message);  // schema v1's last column; v2's GPU identity follows
  EXPECT_EQ(f.back(), r.host);
}

TEST(CsvWriter, ForeignHeaderIsLeftUntouched) {
  auto p = temp_file("foreign.csv");
  const std::string foreign =
      "name,metric,target,actual,dtype,device,arch,is_model\nx,y,1,2,bf16,cuda,A100,False\n";
  std::ofstream(p) << foreign;
  try {
    kb::append_csv(p.string(), {sample(0)});
    FAIL() << "appended under a foreign header";
  } catch (const kb::CsvError& e) {
    EXPECT_NE(std::string(e.what()).find("header"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find(p.string()), std::string::npos);
  }
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_EQ(ss.str(), foreign);
}

TEST(CsvWriter, TruncatedLastLineIsNotGluedTo) {
  auto p = temp_file("trunc.csv");
  std::ofstream(p) << kb::csv_header() << "\nlayer_norm,memory_bandw";  // a crash mid-row
  kb::append_csv(p.string(), {sample(0)});
  auto lines = lines_of(p);
  ASSERT_GE(lines.size(), 3u);
  EXPECT_EQ(lines[1], "layer_norm,memory_bandw");
  EXPECT_EQ(lines[2].rfind("layer_norm,memory_bandwidth(GB/s),950,", 0), 0u);
}

TEST(CsvWriter, UnwritablePathThrows) {
  EXPECT_THROW(kb::append_csv("/proc/kb_no_such_dir/x.csv", {sample(0)}), kb::CsvError);
  auto d = temp_file("dir.csv");
  fs::create_directories(d);
  EXPECT_THROW(kb::append_csv(d.string(), {sample(0)}), kb::CsvError);
}

// An append cut short (here by a file size limit: EFBIG, as a full disk
// gives ENOSPC) is undone: the history ends where it did, never mid-row.
TEST(CsvWriter, FailedAppendLeavesTheFileAsItWas) {
  auto p = temp_file("full.csv");
  kb::append_csv(p.string(), {sample(0)});
  std::ifstream in0(p, std::ios::binary);
  std::stringstream before;
  before << in0.rdbuf();
  std::vector<kb::Record> many;
  for (int i = 0; i < 200; ++i) many.push_back(sample(i));
  const int status = kb::test::in_child_with_file_limit(8192, [&] {
    try {
      kb::append_csv(p.string(), many);
    } catch (const kb::CsvError& e) {
      return std::string(e.what()).find("the file is as it was") != std::string::npos ? 0 : 3;
    }
    return 4;
  });
  EXPECT_EQ(status, 0);
  std::ifstream in1(p, std::ios::binary);
  std::stringstream after;
  after << in1.rdbuf();
  EXPECT_TRUE(after.str() == before.str())
      << after.str().size() << " bytes, was " << before.str().size();
}

// N processes append M batches each to one file at once: every row arrives
// whole, none twice, none lost, and there is exactly one header.
TEST(CsvWriter, ConcurrentProcessesLoseNoRow) {
  auto p = temp_file("concurrent.csv");
  constexpr int kProcs = 8, kBatches = 25, kRowsPerBatch = 4;
  std::vector<pid_t> kids;
  for (int proc = 0; proc < kProcs; ++proc) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int rc = 0;
      try {
        for (int b = 0; b < kBatches; ++b) {
          std::vector<kb::Record> rows;
          for (int i = 0; i < kRowsPerBatch; ++i) {
            kb::Record r = sample(i);
            r.message.clear();
            r.run_id =
                "p" + std::to_string(proc) + "-b" + std::to_string(b) + "-r" + std::to_string(i);
            r.variant = std::string(200, 'x');  // long rows make torn writes likelier
            rows.push_back(r);
          }
          kb::append_csv(p.string(), rows);
        }
      } catch (...) {
        rc = 1;
      }
      ::_exit(rc);
    }
    kids.push_back(pid);
  }
  for (pid_t k : kids) {
    int st = 0;
    ::waitpid(k, &st, 0);
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  }
  auto lines = lines_of(p);
  ASSERT_EQ(lines.size(), 1u + kProcs * kBatches * kRowsPerBatch);
  EXPECT_EQ(lines[0], kb::csv_header());
  std::set<std::string> ids;
  for (size_t i = 1; i < lines.size(); ++i) {
    auto f = split(lines[i]);
    ASSERT_EQ(f.size(), kb::csv_columns().size()) << "torn row: " << lines[i];
    EXPECT_NE(f[0], "name") << "a second header";
    ids.insert(f[24]);
  }
  EXPECT_EQ(ids.size(), size_t(kProcs * kBatches * kRowsPerBatch));
}

TEST(JsonWriter, SameRecordsAsJson) {
  auto p = temp_file("rows.json");
  kb::Record r = sample(0);
  r.min_us = std::nan("");
  kb::write_json(p.string(), {r});
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string j = ss.str();
  EXPECT_NE(j.find("\"name\": \"layer_norm\""), std::string::npos);
  EXPECT_NE(j.find("\"min_us\": null"), std::string::npos);
  EXPECT_NE(j.find("\"is_model\": false"), std::string::npos);
  EXPECT_NE(j.find("\"target\": 950"), std::string::npos);
}

}  // namespace
