// Helpers of the kgate tests: result files built from records, temporary
// folders, and the kgate binary run as a process.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/csv_writer.h"
#include "core/record.h"
#include "tests/cpu/run_command.h"
#include "tests/cpu/temp_root.h"

namespace kgt {

namespace fs = std::filesystem;

inline const char* kH100 = "NVIDIA H100 80GB HBM3";
inline const char* kA100 = "NVIDIA A100-SXM4-40GB";

// A fresh folder for one test.
inline fs::path temp_dir(const std::string& name) {
  fs::path d = kb::test::process_temp_root("kgate_test_") / name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

inline fs::path write(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary);
  out << text;
  return p;
}

inline std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A measured row of schema v1.
inline kb::Record row(const std::string& name, double actual, const std::string& run,
                      const std::string& arch = kH100) {
  kb::Record r;
  r.name = name;
  r.metric = "memory_bandwidth(GB/s)";
  r.actual = actual;
  r.dtype = "bfloat16";
  r.arch = arch;
  r.shape = "BS=4096;D=8192";
  r.variant = "bound=memory";
  r.samples = 50;
  r.noise_rel = 0.005;
  r.run_id = run;
  return r;
}

inline std::string csv(const std::vector<kb::Record>& rows) {
  std::string s = kb::csv_header() + "\n";
  for (const auto& r : rows) s += kb::csv_line(kb::record_fields(r)) + "\n";
  return s;
}

// Run i's timestamp: one a minute, so that they sort as the runs go.
inline std::string minute_stamp(size_t i) {
  char ts[32];
  std::snprintf(ts, sizeof ts, "2026-01-01T%02zu:%02zu:00Z", i / 60, i % 60);
  return ts;
}

// Runs r0..r{n-1} of one key with the given values, timestamps in order.
inline std::vector<kb::Record> series(const std::string& name, const std::vector<double>& values,
                                      const std::string& arch = kH100) {
  std::vector<kb::Record> out;
  for (size_t i = 0; i < values.size(); ++i) {
    kb::Record r = row(name, values[i], "r" + std::to_string(i), arch);
    r.timestamp = minute_stamp(i);
    out.push_back(r);
  }
  return out;
}

// n nights around `level` within +-0.3% (a compute-bound row on one
// board); for n = 4, 12, 20 their median is `level` exactly.
inline std::vector<double> nights(size_t n, double level) {
  const double wobble[] = {0.003, -0.003, 0.0015, -0.0015, 0};
  std::vector<double> v;
  for (size_t i = 0; i < n; ++i) v.push_back(level * (1 + wobble[i % 5]));
  return v;
}

// The same rows as a schema v1 history: no board named.
inline std::vector<kb::Record> without_boards(std::vector<kb::Record> rows) {
  for (auto& r : rows) {
    r.gpu_uuid.clear();
    r.gpu_index.clear();
    r.host.clear();
  }
  return rows;
}

// The MLP's tflops key (tokens=4096;D=16384, a compute-bound row whose level
// differs by board), one row per value, each on the board beside it ("" =
// no UUID, a schema v1 row).
inline std::vector<kb::Record> mlp_rows_on_boards(const std::vector<double>& values,
                                                  const std::vector<const char*>& boards) {
  std::vector<kb::Record> rows = series("mlp_layer_norm_gelu", values);
  for (size_t i = 0; i < rows.size(); ++i) {
    rows[i].metric = "tflops";
    rows[i].shape = "tokens=4096;D=16384";
    rows[i].variant = "";
    rows[i].gpu_uuid = boards[i];
    if (*boards[i]) {
      rows[i].gpu_index = "0";
      rows[i].host = "runner";
    }
  }
  return rows;
}

// A history of n nights around `level` with a small deterministic wobble
// (±0.5%), then `last` as the newest run.
inline std::vector<double> steady(size_t n, double level, double last) {
  std::vector<double> v;
  for (size_t i = 0; i < n; ++i)
    v.push_back(level * (1 + 0.005 * (static_cast<int>((i * 7) % 5) - 2) / 2.0));
  v.push_back(last);
  return v;
}

using Result = kb::test::CommandResult;

#ifdef KBENCH_KGATE_EXE
inline Result kgate(const std::string& args) {
  return kb::test::run_command(KBENCH_KGATE_EXE, args);
}
#endif

inline bool contains(const std::string& s, const std::string& what) {
  return s.find(what) != std::string::npos;
}

}  // namespace kgt
