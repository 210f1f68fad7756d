// Synthetic result histories (tests/support's gen_history): a file of
// `runs` nightly runs of `keys` keys each, for the 1,000,000-row timing and
// for tests that need a long history. Values are a per-key level times
// (1 + noise * N(0,1)); the last run can be made worse on some keys.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace kb {

struct GenOptions {
  int runs = 100;
  int keys = 100;
  uint64_t seed = 1;
  double noise = 0.01;    // relative standard deviation of a run
  double last_drop = 0;   // the last run is this much worse ...
  int dropped_keys = 0;   // ... on this many keys (the first ones)
  bool gpt_fast = false;  // gpt_fast's 8 columns, no run ids, instead of schema v1
  std::string arch = "NVIDIA H100 80GB HBM3";
  // With files: their newest run's keys and values, replayed for `runs`
  // nights before it on each file's GPU (gen_history_from.cpp); `keys`,
  // `arch`, `gpt_fast` and the drop options are then unused.
  std::vector<std::string> from;
  bool attempts = false;  // low nights measured again (`<run>/2` rows)
};

// Writes the CSV (header first) to `out`. Returns false on a write error.
bool write_history(std::FILE* out, const GenOptions& opt);
bool write_history_from(std::FILE* out, const GenOptions& opt);
// Either of the above (by opt.from) into the file `path`; false when it
// cannot be written.
bool write_history_file(const std::string& path, const GenOptions& opt);

}  // namespace kb
