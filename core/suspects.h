// The suspects file kgate writes (`kgate check --suspects FILE`) and
// `kbench run --rerun FILE` reads: the keys of the newest run to measure
// again before the gate may fail them. CSV with the header
//   run_id,name,dtype,shape,variant,metric,arch,reason
// one line per suspect key (several metrics of one point may be listed).
// Re-measurements are appended as attempts of the same run: their rows'
// run_id is `<run_id>/<attempt>`, attempt >= 2 (docs/csv-schema.md).
// CUDA-free: the CPU tests check the parsing and the attempt numbering.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace kb {

struct SuspectsError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Suspect {
  std::string run_id, name, dtype, shape, variant, metric, arch, reason;
  size_t line = 0;  // in the file, for messages
};

// The columns, in order, of the header a suspects file has.
const std::vector<std::string>& suspects_columns();

// Parses a suspects file's text; `path` names it in messages. Throws
// SuspectsError naming the file and line for a missing header, a missing
// column or an empty run_id/name/dtype/shape.
std::vector<Suspect> parse_suspects(const std::string& text, const std::string& path);
// Reads and parses the file; a file that cannot be read throws SuspectsError.
std::vector<Suspect> read_suspects(const std::string& path);

// The first attempt number free for run `base` in the results text (2 when
// it has no `<base>/N` rows yet).
int next_attempt(const std::string& results_text, const std::string& base);

// "<base>/<attempt>".
std::string attempt_run_id(const std::string& base, int attempt);

}  // namespace kb
