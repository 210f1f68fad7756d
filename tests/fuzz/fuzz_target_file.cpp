// The target-file parser (suite/targets.h), which kbench and kgate both
// read: any bytes either give a TargetFile or TargetError. A parsed file is
// then used as the gate uses it (GPU matching, entry lookup, ceilings).
#include <cstdint>
#include <string>

#include "core/targets.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text = kb::fuzz::text_of(data, size);
  uint64_t h = 0;
  try {
    const kb::TargetFile f = kb::parse_target_file(text, "fuzz.json");
    const std::vector<kb::TargetFile> files = {f};
    h += kb::match_gpu(files, "NVIDIA H100 80GB HBM3") != nullptr;
    h = kb::fuzz::touch(kb::gpu_slug(f.gpu), h);
    const kb::Ceilings c = f.ceilings();
    h += c.read_gbps > 0;
    for (const kb::TargetEntry& e : f.targets) {
      const kb::TargetEntry* found = f.find(e.name, e.metric, e.dtype, e.shape, e.variant);
      h += found != nullptr;
      h += kb::variant_matches(e.variant, "gemv;bound=memory");
      if (auto t = kb::resolve_target(e, 1000.0))
        h += kb::below_target(1.0, *t, e.tolerance, false);
    }
  } catch (const kb::TargetError& e) {
    h = kb::fuzz::touch(e.what(), h);
  }
  kb::fuzz::keep(h);
  return 0;
}
