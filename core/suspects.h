// The suspects file `kgate check --suspects` writes and `kbench run
// --rerun` reads (CSV, suspects_columns()): the keys to measure again, as
// attempts of the same run, before the gate may fail them.
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

// Throws SuspectsError naming the file and line for a missing header or
// column, a row with another field count than the header's, an empty
// run_id, name, dtype or shape, or a last line without a line end (a file
// cut off mid-write).
std::vector<Suspect> parse_suspects(const std::string& text, const std::string& path);
// Reads and parses the file; a file that cannot be read throws SuspectsError.
std::vector<Suspect> read_suspects(const std::string& path);

// The first attempt number free for run `base` in the results text (2 when
// it has no `<base>/N` rows yet).
int next_attempt(const std::string& results_text, const std::string& base);

// "<base>/<attempt>".
std::string attempt_run_id(const std::string& base, int attempt);

}  // namespace kb
