// `kgate bringup`: the bring-up report of a new GPU from results CSVs
// (docs/bringup.md). Runs on recorded files, without a GPU;
// tools/bringup.sh chains it after kbench's probe and run.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/datasheets.h"
#include "core/targets.h"
#include "reports/bringup_report.h"
#include "tools/kgate/history.h"

namespace kb {

// Nothing to report on: the results hold no run of the GPU asked for.
struct BringupError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct BringupInputs {
  std::string gpu;        // the GPU brought up: "" = the GPU of the newest run
  std::string reference;  // a GPU name searched in the results, or the reference file's path
  std::string
      reference_gpu;  // with a reference file: which of its GPUs ("" = the one other than gpu)
  std::string results_names;      // the results files, for messages
  std::string reference_problem;  // the reference file could not be read (why)
  std::string targets_dir;        // "" = no target files
  std::vector<TargetFile> targets;
  std::optional<DatasheetTable> datasheets;
  std::string datasheets_path, datasheets_problem;  // why there is no table
  std::string tuning_dir;                           // targets_dir + "/tuning"
  // --probe FILE: the probe's draft target file, whose `measured` (ladder
  // included) the drafted file takes whole; its text, or why it could not be
  // read ("" = no --probe).
  std::string probe_path, probe_text, probe_problem;
  double threshold = 0.10;
};

// `reference_file`: the history of --reference FILE (nullptr when the
// reference is a name). Throws BringupError when `results` has no run of
// the GPU; every other problem is a line of BringupReport::problems.
BringupReport build_bringup(const History& results, const History* reference_file,
                            const BringupInputs& in);

// Where a row's kernel choices are tuned per GPU ("" for none).
std::string tuning_pointer(const std::string& experiment);
// The same for one row: the MLP's one-token rows run the GEMV kernel.
std::string tuning_pointer(const std::string& experiment, const std::string& variant);

}  // namespace kb
