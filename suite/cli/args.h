// The kbench command line, parsed: every command's options in one `Args`,
// checked for form and for combinations before anything runs.
#pragma once

#include <regex>
#include <stdexcept>
#include <string>
#include <vector>

#include "suite/sampling.h"
#include "suite/shard.h"

namespace kb::cli {

// A bad command line: printed with the command's usage line, exit 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Args {
  std::string command;
  bool replace = false;  // probe --write: the new ladder alone, not the faster of both
  std::string filter;
  std::string device = "0";
  bool quick = false;
  std::string csv = "reports/results.csv";
  bool csv_given = false;  // --csv was on the command line
  bool no_csv = false;
  std::string json;
  std::string targets;
  std::string write;
  double timeout_s = 1800;
  EngineOptions engine;
  std::string rerun;        // suspects file to re-measure
  int repeat = 0;           // attempts per suspect (--repeat; 0 = not given)
  int processes = 0;        // worker processes per kernel point (--processes; 0 = the default)
  int short_processes = 0;  // ... per point under 20 us (--short-processes; 0 = the default)
  std::string inject;       // --inject-slowdown REGEX=PCT
  bool allow_inject = false;
  int reps = 20;           // kbench tune: samples per candidate
  int candidates = 16;     // kbench tune: algorithms asked of the heuristic
  ShardSpec shard;         // --shard i/n (1/1: the whole suite)
  std::string run_id;      // --run-id: one id shared by the shards of a job array
  bool points = false;     // kbench list --points
  bool tune_gemv = false;  // kbench tune gemv: the GEMV table instead of cuBLASLt's
};

// The command line (argv[1] is the command); throws UsageError.
Args parse(int argc, char** argv);

// Each command's usage line, printed under a usage error.
std::string usage_line(const std::string& command);

// --inject-slowdown REGEX=PCT: the experiments it applies to and the fraction.
struct Injection {
  std::regex re;
  double fraction = 0;
};
Injection parse_injection(const std::string& spec);

// `--device N`, `N,M,...` or `all` (empty): the indices, checked for form.
std::vector<int> parse_device_spec(const std::string& spec);

}  // namespace kb::cli
