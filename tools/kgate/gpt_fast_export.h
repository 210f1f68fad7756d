// `kgate gpt-fast`: the newest run of each GPU model as PyTorch
// benchmarks/gpt_fast writes it, for consumers of gpt_fast_benchmark.csv and
// of PyTorch's OSS benchmark database.
//
// Our full CSV keeps gpt_fast's eight columns first, but it is not a
// gpt_fast file: one run has a row per shape (up to 25 per name, metric and
// dtype), extra metrics, and targets only where a target file has one. This
// export writes exactly gpt_fast's rows: its names, metrics and dtypes, one
// row per (name, metric, dtype, device) — the seed-mean rows (`shape=mean`)
// of the micro-benchmarks and the model rows — with every target filled.
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

// The rows of the newest run of each arch in `history`. A target comes from
// the target file matching the arch (absolute, or roofline fraction x the
// row's roofline), else the row's own target column, else "0" (what gpt_fast
// writes for a value it does not have; kgate reads 0 as "no target").
GptFastExport gpt_fast_rows(const History& history, const std::vector<TargetFile>& targets);

// gpt_fast_benchmark.csv: its header, then the rows (csv.writer quoting).
std::string gpt_fast_csv(const std::vector<GptFastRow>& rows);
// One JSON record per line, as gpt_fast's output_json writes for PyTorch's
// OSS benchmark database (benchmark.name "PyTorch gpt-fast benchmark").
std::string gpt_fast_json(const std::vector<GptFastRow>& rows);

}  // namespace kb
