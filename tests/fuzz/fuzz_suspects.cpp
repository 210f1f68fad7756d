// The suspects reader (suite/suspects.h) that `kbench run --rerun` trusts:
// any bytes either give suspects or SuspectsError. The same bytes, read as
// a results file, go through next_attempt (the attempt numbering).
#include <cstdint>
#include <string>

#include "core/suspects.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text = kb::fuzz::text_of(data, size);
  uint64_t h = 0;
  try {
    for (const kb::Suspect& s : kb::parse_suspects(text, "fuzz-suspects.csv")) {
      for (const std::string* v :
           {&s.run_id, &s.name, &s.dtype, &s.shape, &s.variant, &s.metric, &s.arch, &s.reason})
        h = kb::fuzz::touch(*v, h);
      h += s.line;
    }
  } catch (const kb::SuspectsError& e) {
    h = kb::fuzz::touch(e.what(), h);
  }
  // The run ids a suspects file names are the bases of the next attempt.
  h += static_cast<uint64_t>(kb::next_attempt(text, "run"));
  h += static_cast<uint64_t>(kb::next_attempt(text, ""));
  kb::fuzz::keep(h);
  return 0;
}
