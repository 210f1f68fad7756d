// The GPU's tuning table, targets/tuning/<target file's name>: the cuBLASLt
// algorithm of each GEMM and the GEMV kernel of each bucket of shapes,
// written by `kbench tune`, only read by runs (docs/targets.md). CUDA-free.
#pragma once

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/gemm_algo.h"
#include "core/gemv_table.h"
#include "core/json_file.h"
#include "core/targets.h"

namespace kb {

// A tuning file that cannot be read or is malformed ("x.json:14: cublaslt[2].algo.tile: ...").
struct TuningError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct TuningFile {
  std::string path;
  std::string gpu;
  std::vector<gemm::PinnedAlgo> cublaslt;  // origin: "<path> cublaslt[i]"
  nlohmann::ordered_json doc;              // the whole file, for rewriting
  JsonLines lines;                         // where doc's fields are, for messages
};

TuningFile parse_tuning_file(const std::string& text, const std::string& path);

// The tuning file at `path` for rewriting by `kbench tune` on the GPU the
// driver calls `gpu_name` (empty when it does not exist); TuningError when
// it cannot be read, is malformed (the gemv section too) or is another GPU's
// (same_gpu_name): its entries would be kept and relabelled as this GPU's.
// Read before anything is timed, so nothing is measured or overwritten.
nlohmann::ordered_json read_tuning_doc(const std::string& path, const std::string& gpu_name);
// Writes `doc` to `path` (its folder created) through a temporary file and a
// rename, so a failed write never leaves half a table. Throws std::runtime_error.
void write_tuning_doc(const nlohmann::ordered_json& doc, const std::string& path);

// The tuning file of a GPU: <targets_dir>/tuning/<the matched target file's
// name>, or <gpu slug>.json when no target file matches.
std::string tuning_path(const std::string& targets_dir, const TargetFile* target,
                        const std::string& gpu_name);

// The pins for this GPU: none without the file; none and a `warning` for
// another GPU's. TuningError for a malformed file (the gemv section too): the
// run stops before measuring.
std::vector<gemm::PinnedAlgo> load_pins(const std::string& path, const std::string& gpu_name,
                                        std::string* warning);

// The gemv section of a parsed tuning file (empty when it has none); TuningError
// ("...:31: gemv[2].kernel: unknown kernel 'X9'").
std::vector<gemv::TableEntry> parse_gemv_table(const nlohmann::ordered_json& doc,
                                               const std::string& path,
                                               const JsonLines* lines = nullptr);

// The GEMV table for this GPU, as load_pins (without one, the generic rule).
std::vector<gemv::TableEntry> load_gemv_table(const std::string& path, const std::string& gpu_name,
                                              std::string* warning);

// The gemv entries `kbench tune gemv`'s first stage does not measure (`use`
// other than standalone), as they are.
nlohmann::ordered_json untuned_gemv_entries(const nlohmann::ordered_json& doc);

// One entry of the gemv section.
nlohmann::ordered_json gemv_entry_json(const gemv::TableEntry& e,
                                       const nlohmann::ordered_json& measured);

// One entry of the cublaslt section.
nlohmann::ordered_json pin_json(const gemm::PinnedAlgo& pin,
                                const nlohmann::ordered_json& measured);

}  // namespace kb
