#include "core/gpu_name.h"

namespace kb {

std::string gpu_name_key(std::string_view name) {
  std::string s(name);
  // ASCII only: std::tolower depends on the locale, and a name must fold the
  // same on every machine that reads the history.
  for (char& ch : s)
    if (ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch - 'A' + 'a');
  return s;
}

bool same_gpu_name(std::string_view a, std::string_view b) {
  return a.size() == b.size() && gpu_name_key(a) == gpu_name_key(b);
}

bool gpu_name_contains(std::string_view name, std::string_view part) {
  return !part.empty() && gpu_name_key(name).find(gpu_name_key(part)) != std::string::npos;
}

}  // namespace kb
