// The datasheet table's parser (suite/datasheets.h), which kbench probe and
// kgate bringup read: any bytes either give a table or DatasheetError.
#include <cstdint>
#include <string>

#include "core/datasheets.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text = kb::fuzz::text_of(data, size);
  uint64_t h = 0;
  try {
    const kb::DatasheetTable t = kb::parse_datasheets(text, "fuzz-datasheets.json");
    for (const auto& d : t.gpus) {
      h = kb::fuzz::touch(d.gpu, h);
      h += kb::missing_figures(d, t.path).size();
    }
    h += kb::find_datasheet(t, "NVIDIA H100 80GB HBM3") != nullptr;
  } catch (const kb::DatasheetError& e) {
    h = kb::fuzz::touch(e.what(), h);
  }
  kb::fuzz::keep(h);
  return 0;
}
