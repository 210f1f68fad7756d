// The results CSV reader (core/result_reader.h, core/csv_reader.h):
// any bytes either give rows and warnings or ResultFileError; nothing else
// may escape, and every view a row holds must lie inside the text or the
// reader's buffer.
#include <cstdint>
#include <string>

#include "core/csv_reader.h"
#include "core/result_reader.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text = kb::fuzz::text_of(data, size);
  uint64_t h = 0;

  // The record splitter alone, as the suspects reader also uses it.
  kb::CsvReader csv(text);
  std::vector<std::string_view> fields;
  while (csv.next(fields))
    for (auto f : fields) h = kb::fuzz::touch(f, h + csv.line());

  try {
    kb::parse_results(
        text, "fuzz.csv",
        [&](const kb::ResultRow& r) {
          for (std::string_view v :
               {r.name, r.metric, r.dtype, r.device, r.arch, r.shape, r.variant, r.status, r.run_id,
                r.timestamp, r.message, r.git_sha, r.driver, r.cuda, r.suite_version, r.gpu_index,
                r.gpu_uuid, r.gpu_bus_id, r.host})
            h = kb::fuzz::touch(v, h);
          h += r.line + static_cast<uint64_t>(r.samples) + r.is_model;
          for (const auto* d : {&r.target, &r.actual, &r.roofline, &r.roofline_fraction,
                                &r.noise_rel, &r.min_us, &r.max_us, &r.median_us})
            if (d->has_value()) h += static_cast<uint64_t>(**d != **d);  // a NaN must not pass
        },
        [&](size_t line, const std::string& what) { h = kb::fuzz::touch(what, h + line); });
  } catch (const kb::ResultFileError& e) {
    h = kb::fuzz::touch(e.what(), h);
  }
  kb::fuzz::keep(h);
  return 0;
}
