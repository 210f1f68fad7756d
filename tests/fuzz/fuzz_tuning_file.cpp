// The tuning-file parser (suite/tuning.h; CUDA-free): any bytes either give
// the cuBLASLt pins and the GEMV table or TuningError, which kbench turns
// into a warning and the heuristic. Nothing else may escape: an exception
// of the JSON library would end a nightly run.
#include <cstdint>
#include <string>

#include "core/tuning.h"
#include "kernels/gemv/dispatch.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text = kb::fuzz::text_of(data, size);
  uint64_t h = 0;
  try {
    const kb::TuningFile f = kb::parse_tuning_file(text, "fuzz-tuning.json");
    h = kb::fuzz::touch(f.gpu, h) + f.cublaslt.size();
    for (const auto& p : f.cublaslt) h += static_cast<uint64_t>(p.key.M + p.config.id);
    // The table as kbench installs it: the first entry that holds a shape wins.
    const std::vector<kb::gemv::TableEntry> table = kb::parse_gemv_table(f.doc, f.path);
    for (const auto& t : table) h += static_cast<uint64_t>(t.bucket.rows_min) + t.bucket.gather;
    for (bool int8 : {false, true}) {
      const kb::gemv::Choice c = kb::gemv::choose_in(table, int8, 4096, 14336, 2);
      h = kb::fuzz::touch(c.source, h);
    }
  } catch (const kb::TuningError& e) {
    h = kb::fuzz::touch(e.what(), h);
  }
  kb::fuzz::keep(h);
  return 0;
}
