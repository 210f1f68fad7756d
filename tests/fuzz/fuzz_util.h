// Shared by the libFuzzer harnesses (tests/fuzz/run.sh builds and runs them):
// every byte a parser hands back is read, so that AddressSanitizer sees a
// view that points outside its buffer even where the caller would not look.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace kb::fuzz {

inline uint64_t touch(std::string_view s, uint64_t h = 1469598103934665603ull) {
  for (char c : s) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return h;
}

inline std::string text_of(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// Keeps a value alive past the optimizer.
inline void keep(uint64_t v) {
  static volatile uint64_t sink;
  sink = sink + v;
}

}  // namespace kb::fuzz
