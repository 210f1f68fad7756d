// The bring-up report of a new GPU (docs/bringup.md). tools/kgate/bringup.cpp
// fills it from results CSVs; bringup_writers.cpp formats it.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace kb {

// One ceiling: measured, datasheet and share, here and on the reference GPU.
struct BringupCeiling {
  std::string name;  // "read bandwidth (GB/s)"
  std::optional<double> measured, datasheet, share;
  std::optional<double> ref_measured, ref_datasheet, ref_share;
  std::string note;
};

// One point of this GPU's run beside the reference's (roofline fractions).
struct BringupRow {
  std::string name, metric, dtype, shape;
  std::optional<double> actual, here;       // this GPU: value, roofline fraction
  std::optional<double> ref_actual, there;  // the reference's
  std::optional<double> ratio;              // here / there
  bool candidate = false;                   // ratio <= 1 - threshold
  std::string tuning;                       // where its tuning lives (candidates)
  std::string note;                         // why a side is missing
};

// One of the seed's rows against its A100 target.
struct BringupA100Row {
  std::string name, metric, dtype, shape;
  std::optional<double> actual, roofline, fraction;  // this GPU
  std::optional<double> a100_target, a100_roofline, a100_fraction;
  std::optional<double> spec_ratio, measured_ratio;
  std::string bound;  // the limiter the spec ratio is taken for
  std::string note;
};

struct BringupReport {
  std::string gpu, run_id, git_sha, driver, timestamp;
  std::string datasheet_gpu, datasheet_source;  // "" when the GPU is not in the table
  std::string datasheet_path;
  std::string target_file;  // the GPU's target file, "" when none
  std::string reference_gpu, reference_run, reference_from;
  double threshold = 0.10;  // a row this much behind the reference is a candidate

  // Problems of the input (the report is still written where it can be);
  // notes explain the report (no target file, unknown GPU).
  std::vector<std::string> problems, notes;

  std::vector<BringupCeiling> ceilings;
  std::vector<BringupRow> rows;  // candidates first (furthest behind first), then run order
  size_t candidates = 0;
  std::vector<std::string> tuning;  // the tuning tables' state and what to run

  std::string a100_file, a100_datasheet;
  std::vector<BringupA100Row> a100;
  std::vector<std::string> a100_notes;

  std::string draft_name;  // the drafted target file's name under --out, drafted or not
  std::string draft_path;  // where the drafted target file was written ("" = not written)
  std::string draft_json;
};

std::string bringup_markdown(const BringupReport& r);
// One HTML page with its style inline: no script, no external resource.
std::string bringup_html(const BringupReport& r);

}  // namespace kb
