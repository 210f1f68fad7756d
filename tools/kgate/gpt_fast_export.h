// `kgate gpt-fast`: the newest run of each GPU model as PyTorch
// benchmarks/gpt_fast writes it: exactly its rows (the seed-mean rows of the
// micro-benchmarks and the model rows, one per name, metric, dtype and
// device), every target filled (docs/csv-schema.md "Reading it as gpt_fast").
#pragma once

#include <string>
#include <vector>

#include "core/targets.h"
#include "tools/kgate/history.h"

namespace kb {

struct GptFastRow {
  std::string name, metric, target, actual, dtype, device, arch;
  bool is_model = false;
};

struct GptFastExport {
  std::vector<GptFastRow> rows;    // in gpt_fast's order (models, then micro-benchmarks)
  std::vector<std::string> notes;  // rows left out or targets missing, one line each
};

// The rows of the newest run of each arch. A target comes from the arch's
// target file, else the row's own column, else "0" (gpt_fast's "none").
GptFastExport gpt_fast_rows(const History& history, const std::vector<TargetFile>& targets);

// gpt_fast_benchmark.csv: its header, then the rows (csv.writer quoting).
std::string gpt_fast_csv(const std::vector<GptFastRow>& rows);
// One JSON record per line, as gpt_fast's output_json writes them.
std::string gpt_fast_json(const std::vector<GptFastRow>& rows);

}  // namespace kb
