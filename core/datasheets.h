// The datasheet table (targets/datasheets/nvidia.json): each GPU model's
// published figures and their source, for a drafted target file's `peaks`
// and the bring-up report; it names GPUs before any target file exists.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace kb {

// A table that cannot be read; what() names the file, line and field.
struct DatasheetError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// One figure: a number, `null` (no such unit, or unpublished: the note says
// which), or absent (incomplete: a message asks for it).
struct DatasheetFigure {
  std::optional<double> value;
  bool present = false;  // the key is in the entry (with a number or null)
};

struct Datasheet {
  std::string gpu;                        // "NVIDIA H200 SXM 141GB"
  std::vector<std::string> driver_names;  // exact driver names (case-insensitive)
  std::vector<std::string> match;         // substrings of the driver name
  DatasheetFigure hbm_gbps, bf16_tflops, f16_tflops, tf32_tflops, fp32_tflops, fp8_tflops,
      int8_tops, sm_count, l2_mb;
  std::string source, note;
};

struct DatasheetTable {
  std::string path;
  std::vector<Datasheet> gpus;
};

DatasheetTable parse_datasheets(const std::string& json_text, const std::string& path);
DatasheetTable load_datasheets(const std::string& path);
// targets/datasheets/nvidia.json under a targets folder.
std::string datasheets_path(const std::string& targets_dir);

// The entry for a driver's GPU name: an exact driver name, else the longest
// matching substring; nullptr when none.
const Datasheet* find_datasheet(const DatasheetTable& t, const std::string& gpu_name);

// A message for each key absent from the entry (null is not absent).
std::vector<std::string> missing_figures(const Datasheet& d, const std::string& path);

// A drafted target file's `peaks`: the datasheet's figures, or for a GPU
// not in the table `measured_read_gbps` as a placeholder (`*message` asks
// for the figures).
nlohmann::ordered_json draft_peaks(const Datasheet* d, const std::string& table_path,
                                   const std::string& gpu_name, double measured_read_gbps,
                                   std::string* message);

}  // namespace kb
