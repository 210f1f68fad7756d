// What `kgate compare BASE NEW` found (tools/kgate/compare.h) and its formats.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace kb {

enum class CompareVerdict { same, faster, slower, unsure, not_compared };

const char* compare_verdict_name(CompareVerdict v);  // "SAME", "FASTER", ..., "-"

struct CompareRow {
  std::string name, metric, dtype, shape, arch;  // arch empty across GPU models
  bool lower_is_better = false;
  std::optional<double> base, next;  // each side's median over its runs
  int base_runs = 0, next_runs = 0;
  double change = 0;  // (next - base) / base, as the value moves
  double ratio = 1;   // > 1 = better (times inverted)
  double noise = 0;   // relative uncertainty of the change: both sides' noise combined
  CompareVerdict verdict = CompareVerdict::not_compared;
  std::string note;  // why not compared, or where the noise came from
};

struct CompareReport {
  std::string base_path, next_path;
  std::vector<std::string> base_archs, next_archs;
  bool cross_arch = false;  // values are roofline_fraction, not raw
  double min_change = 0;
  std::vector<CompareRow> rows;
  std::vector<std::string> warnings;
  double geomean = 1;  // of `ratio` over the compared keys
  size_t compared = 0;

  size_t count(CompareVerdict v) const;
  // "geomean NEW/BASE 0.968 (3.2% slower) over 40 keys: 2 FASTER, 5 SLOWER, 30 SAME, 3 UNSURE"
  std::string summary() const;
};

std::string compare_console(const CompareReport& r);
std::string compare_markdown(const CompareReport& r);

}  // namespace kb
