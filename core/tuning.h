// The GPU's tuning table: targets/tuning/<target file's name>, beside the
// target file of the same GPU model: the measured choices (the cuBLASLt
// algorithm of each GEMM, the GEMV kernel of each bucket of shapes), written
// by `kbench tune` and reviewed as a commit; runs only read it, so every
// night runs the same kernels. The format: docs/targets.md. CUDA-free.
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

// A tuning file that cannot be read or is malformed; what() names the file,
// the line and the entry ("targets/tuning/x.json:14: cublaslt[2].algo.tile:
// expected ...").
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

// The whole tuning file at `path` for rewriting (kbench tune, kbench tune
// gemv): an empty document when it does not exist; throws TuningError when
// it is malformed, so nothing is overwritten.
nlohmann::ordered_json read_tuning_doc(const std::string& path);
// Writes `doc` to `path` (its folder created) through a temporary file and a
// rename, so a failed write never leaves half a table. Throws std::runtime_error.
void write_tuning_doc(const nlohmann::ordered_json& doc, const std::string& path);

// The tuning file of a GPU: <targets_dir>/tuning/<the matched target file's
// name>, or <gpu slug>.json when no target file matches.
std::string tuning_path(const std::string& targets_dir, const TargetFile* target,
                        const std::string& gpu_name);

// The pins for this GPU: none when the file does not exist. A file written
// for another GPU gives none and sets `warning` to one line naming it (the
// run goes on with the heuristic). A file that cannot be read or is
// malformed (anywhere, the gemv section too) throws TuningError: the run
// stops before measuring (exit 2).
std::vector<gemm::PinnedAlgo> load_pins(const std::string& path, const std::string& gpu_name,
                                        std::string* warning);

// The gemv section of a parsed tuning file (empty when it has none).
// Throws TuningError naming the file, the line where `lines` knows it, and
// the entry ("...:31: gemv[2].kernel: unknown kernel 'X9'").
std::vector<gemv::TableEntry> parse_gemv_table(const nlohmann::ordered_json& doc,
                                               const std::string& path,
                                               const JsonLines* lines = nullptr);

// The GEMV table for this GPU: none when the file or its section does not
// exist. A file written for another GPU gives none and sets `warning` (the
// run goes on with the generic rule, and the rows say `generic`); one that
// cannot be read or is malformed throws TuningError, as load_pins.
std::vector<gemv::TableEntry> load_gemv_table(const std::string& path, const std::string& gpu_name,
                                              std::string* warning);

// The entries of doc's gemv section that `kbench tune gemv`'s first stage
// does not measure (the decode step's: `use` other than standalone), as
// they are: its decode stage replaces those of the buckets it measures.
nlohmann::ordered_json untuned_gemv_entries(const nlohmann::ordered_json& doc);

// One entry of the gemv section.
nlohmann::ordered_json gemv_entry_json(const gemv::TableEntry& e,
                                       const nlohmann::ordered_json& measured);

// One entry of the cublaslt section.
nlohmann::ordered_json pin_json(const gemm::PinnedAlgo& pin,
                                const nlohmann::ordered_json& measured);

}  // namespace kb
