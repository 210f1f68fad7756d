// A relative value as a percentage for kgate's messages: 0.034 -> "3.4%"
// (`decimals` after the point).
#pragma once

#include <cstdio>
#include <string>

namespace kb {

inline std::string percent(double rel, int decimals = 1) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f%%", decimals, rel * 100);
  return buf;
}

}  // namespace kb
